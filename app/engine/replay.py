"""A logged hand played again: the state before each move, and what each seat had seen then.

A hand's log holds its moves as events (``upcard_taken``, ``drew_stock``, ``discarded``...);
``replay`` deals the hand again and applies each move with ``game.apply``, so every state a
seat decided in is the engine's own, not a copy of its rules. The replay of a finished hand
and its review (``app.bots.review``) are both built on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.cards import parse_card
from app.engine.game import apply, forfeit
from app.engine.rules import Ruleset
from app.engine.state import (
    BIG_GIN,
    DISCARD_CARD,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK,
    PASS,
    RESIGN,
    TAKE_UPCARD,
    Action,
    Event,
    HandState,
    MatchState,
)

# The event each move writes first, and the move it stands for.
MOVE_OF_EVENT = {
    "upcard_taken": TAKE_UPCARD,
    "upcard_passed": PASS,
    "drew_stock": DRAW_STOCK,
    "drew_discard": DRAW_DISCARD,
    "discarded": DISCARD_CARD,
    "knocked": KNOCK,
    "big_gin": BIG_GIN,
    "resigned": RESIGN,
}


@dataclass(frozen=True, slots=True)
class Step:
    """One move of a hand: who made it, the state it was made in, and the hand's events up to
    it (``seen``: how many of ``replay``'s ``events`` came before it)."""

    index: int
    seat: int
    action: Action
    before: MatchState
    after: MatchState
    seen: int


def start_of_hand(
    rules: Ruleset, history: Sequence[Mapping[str, Any]], hand: HandState
) -> MatchState:
    """The match as it stood when ``hand`` was dealt, after the hands of ``history`` (each
    ``{"winner", "points", ...}`` as ``MatchState.history`` keeps them). The match's seed is
    left out: nothing of a hand's play depends on it."""
    scores, won = [0, 0], [0, 0]
    for past in history:
        winner = past.get("winner")
        if winner in (0, 1):
            scores[winner] += int(past.get("points", 0))
            won[winner] += 1
    return MatchState(rules, "", scores, won, hand.copy(), history=[dict(h) for h in history])


def replay(start: MatchState, events: Sequence[Event]) -> list[Step]:
    """Each move of the hand logged as ``events`` (from its ``hand_started`` on), applied from
    ``start``; RuleError if the log is not a hand the engine plays from there."""
    steps: list[Step] = []
    state = start
    for i, event in enumerate(events):
        if event.type == "timed_out":
            seat = int(event.public["seat"])
            after, _ = forfeit(state, seat, str(event.public["reason"]))
            steps.append(Step(len(steps), seat, Action(RESIGN), state, after, i))
            break
        kind = MOVE_OF_EVENT.get(event.type)
        if kind is None:
            continue
        seat = int(event.public["seat"])
        card = event.public.get("card") if kind in (DISCARD_CARD, KNOCK) else None
        action = Action(kind, None if card is None else int(parse_card(card)))
        after, _ = apply(state, seat, action)
        steps.append(Step(len(steps), seat, action, state, after, i))
        state = after
    return steps
