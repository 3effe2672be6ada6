"""Build exact engine positions for worked examples."""

from __future__ import annotations

from typing import Any

from app.engine import Action, MatchState, Ruleset, apply, make_ruleset, new_match, parse_card
from app.engine.cards import ALL_CARDS, to_mask
from app.engine.deal import hand_terms
from app.engine.state import DRAW, UPCARD_OFFER, HandState
from app.engine.views import seat_view


def ids(text: str) -> list[int]:
    return [int(parse_card(c)) for c in text.split()]


def position(
    hand0: str,
    hand1: str,
    upcard: str,
    *,
    stock_top: str = "",
    preset: str = "standard",
    rules: Ruleset | None = None,
    dealer: int = 1,
    stock_size: int | None = None,
    scores: tuple[int, int] = (0, 0),
) -> MatchState:
    """A fresh hand with the given hands and upcard; ``stock_top`` lists the next draws in order.

    The rest of the stock is the remaining cards; ``stock_size`` trims it to that many cards.
    """
    ruleset = rules or make_ruleset(preset)
    state, _ = new_match(ruleset, "builder")
    hands = [ids(hand0), ids(hand1)]
    up = ids(upcard)[0]
    top = ids(stock_top)
    used = set(hands[0]) | set(hands[1]) | {up} | set(top)
    assert len(used) == len(hands[0]) + len(hands[1]) + 1 + len(top), "a card is used twice"
    rest = [int(c) for c in ALL_CARDS if int(c) not in used]
    draws = top + rest
    if stock_size is not None:
        draws = draws[:stock_size]
    hand = state.hand
    knock_limit, multiplier = hand_terms(ruleset, up)
    state.hand = HandState(
        number=1,
        seed=hand.seed,
        nonce=hand.nonce,
        dealer=dealer,
        hands=[to_mask(hands[0]), to_mask(hands[1])],
        stock=draws[::-1],
        discard_pile=[up],
        phase=UPCARD_OFFER if ruleset.upcard_offer else DRAW,
        turn=1 - dealer,
        passes=0,
        drawn_from_discard=None,
        upcard_refused=False,
        taken_from_discard=[0, 0],
        first_upcard=up,
        knock_limit=knock_limit,
        multiplier=multiplier,
    )
    state.scores = list(scores)
    return state


def play(state: MatchState, *moves: tuple[int, str, str | None]) -> MatchState:
    """Apply (seat, kind, card) moves in order."""
    for seat, kind, code in moves:
        card = None if code is None else int(parse_card(code))
        state, _ = apply(state, seat, Action(kind, card))
    return state


def play_seen(
    state: MatchState, *moves: tuple[int, str, str | None], seat: int = 0
) -> tuple[MatchState, list[dict[str, Any]]]:
    """Apply (seat, kind, card) moves in order; the state and the events ``seat`` received."""
    seen: list[dict[str, Any]] = []
    for mover, kind, code in moves:
        state, events = apply(state, mover, Action.from_dict({"kind": kind, "card": code}))
        seen += [e.for_recipient(seat) for e in events]
    return state, seen


def legal_kinds(state: MatchState, seat: int) -> set[str]:
    return set(seat_view(state, seat)["legal"]["actions"])
