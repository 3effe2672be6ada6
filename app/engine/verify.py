"""Verify a match record: re-deal every hand, check every commitment, replay every action.

    python -m app.engine.verify RECORD.json

A record (``docs/schemas/match-record.schema.json``, format ``ginrummy-match-record`` version 1)
holds the match's rules and secret seed and, per hand, its seed, nonce, commitment, deal, the
actions in order and the result. ``verify(record)`` is pure: it checks, in play order,

1. each hand's commitment is SHA-256 of its seed and nonce (``cards.commitment``);
2. the deal is the one the hand's seed shuffles (``game.deal_hand``), and the hand is the one
   the match seed derives for it (the engine deals it again from the match's start);
3. every action is accepted by the engine (``game.apply``) in that state;
4. every hand's result and the match's final scores and bonuses are the ones the engine gets.

The first difference raises ``RecordMismatchError`` naming where it is (``hand 3, action 12``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.engine.cards import codes, commitment, mask_codes
from app.engine.deal import deal_hand, new_match
from app.engine.errors import RuleError
from app.engine.game import FORFEIT, apply, forfeit
from app.engine.rules import Ruleset
from app.engine.state import NEXT_HAND, Action, Event, MatchState

FORMAT = "ginrummy-match-record"
VERSION = 1
MATCH_RESULT_FIELDS = ("winner", "reason", "scores", "bonuses", "final_scores")


class RecordMismatchError(Exception):
    """The record differs from what the engine gets; ``where`` names the first place."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


@dataclass(frozen=True, slots=True)
class Verified:
    """What a successful verification covered."""

    hands: int
    actions: int


def verify(record: Mapping[str, Any]) -> Verified:
    """Check ``record`` against the engine; RecordMismatchError at the first difference."""
    if not isinstance(record, Mapping):
        raise RecordMismatchError("format", "a record is a JSON object")
    if record.get("format") != FORMAT or record.get("version") != VERSION:
        raise RecordMismatchError(
            "format",
            f"not a {FORMAT} version {VERSION} document: {record.get('format')!r} "
            f"version {record.get('version')!r}",
        )
    try:
        rules = Ruleset.from_dict(record["rules"])
        state, _ = new_match(rules, str(record["match_seed"]))
    except (KeyError, TypeError, ValueError) as e:
        raise RecordMismatchError("rules", f"cannot start the match: {e}") from None
    hands = record.get("hands")
    if not isinstance(hands, list):
        raise RecordMismatchError("hands", "hands is a list")
    actions = 0
    for index, hand in enumerate(hands):
        number = index + 1
        _check_deal(rules, state, hand, number)
        if index > 0 and state.status != "playing":
            raise RecordMismatchError(f"hand {number}", "the match was already over")
        result: dict[str, Any] | None = None
        moves = hand.get("actions")
        if not isinstance(moves, list):
            raise RecordMismatchError(f"hand {number}", "actions is a list")
        for step, move in enumerate(moves, 1):
            where = f"hand {number}, action {step}"
            state, events = _play(state, move, where)
            actions += 1
            if move.get("kind") == NEXT_HAND:
                if step != len(moves) or number == len(hands):
                    raise RecordMismatchError(where, "next_hand must end a hand the record goes on")
                break
            over = _event(events, "hand_over")
            if over is not None:
                result = over
                _same(where, "result", hand.get("result"), over)
        if result is None and hand.get("result") is not None:
            raise RecordMismatchError(f"hand {number}", "the record has a result the play lacks")
    if not hands:
        raise RecordMismatchError("hands", "the record has no hands")
    if state.hand.number != len(hands):
        raise RecordMismatchError("hands", "the record's hands and its next_hand actions differ")
    if state.status != "finished":
        raise RecordMismatchError("result", "the actions do not finish the match")
    engine = {
        "winner": state.winner,
        "reason": state.finish_reason,
        "scores": state.scores,
        "bonuses": state.bonuses,
        "final_scores": state.final_scores,
    }
    given = record.get("result")
    if not isinstance(given, Mapping):
        raise RecordMismatchError("result", "result is an object")
    for name in MATCH_RESULT_FIELDS:
        _same("result", name, given.get(name), engine[name])
    return Verified(len(hands), actions)


def _check_deal(rules: Ruleset, state: MatchState, hand: Any, number: int) -> None:
    where = f"hand {number}"
    if not isinstance(hand, Mapping) or not isinstance(hand.get("deal"), Mapping):
        raise RecordMismatchError(where, "a hand is an object with a deal")
    if hand.get("number") != number:
        raise RecordMismatchError(where, f"numbered {hand.get('number')!r}")
    seed, nonce = str(hand.get("seed")), str(hand.get("nonce"))
    if commitment(seed, nonce) != hand.get("commitment"):
        raise RecordMismatchError(where, "the commitment is not SHA-256 of its seed and nonce")
    dealer = hand.get("dealer")
    if dealer not in (0, 1):
        raise RecordMismatchError(where, f"dealer {dealer!r} is no seat")
    dealt, _ = deal_hand(rules, seed, nonce, number, dealer)
    deal = hand["deal"]
    expected = {
        "hands": [mask_codes(m) for m in dealt.hands],
        "upcard": codes([dealt.first_upcard])[0],
        "stock": codes(dealt.stock[::-1]),
    }
    for name, value in expected.items():
        _same(where, f"deal {name} (re-dealt from the seed)", deal.get(name), value)
    if state.hand.to_dict() != dealt.to_dict():
        raise RecordMismatchError(
            where, "the seed, nonce or dealer is not the one the match seed gives this hand"
        )


def _play(state: MatchState, move: Any, where: str) -> tuple[MatchState, list[Event]]:
    if not isinstance(move, Mapping):
        raise RecordMismatchError(where, f"not an action: {move!r}")
    try:
        if move.get("kind") == FORFEIT:
            seat = move.get("seat")
            if not isinstance(seat, int) or isinstance(seat, bool):
                raise RuleError("not_a_seat", f"seat must be 0 or 1, not {seat!r}")
            return forfeit(state, seat, str(move.get("reason")))
        action = Action.from_dict(move)
        seat = 0 if action.kind == NEXT_HAND else move.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise RuleError("not_a_seat", f"seat must be 0 or 1, not {seat!r}")
        return apply(state, seat, action)
    except RuleError as e:
        raise RecordMismatchError(where, f"the engine refuses {dict(move)}: {e.code}") from None


def _event(events: list[Event], kind: str) -> dict[str, Any] | None:
    return next((e.public for e in events if e.type == kind), None)


def _same(where: str, name: str, given: Any, engine: Any) -> None:
    # JSON both sides, so a tuple and a list of the same values compare equal.
    if json.loads(json.dumps(given)) != json.loads(json.dumps(engine)):
        raise RecordMismatchError(
            where, f"{name} differs: the record has {given!r}, the engine gets {engine!r}"
        )


def main(argv: list[str]) -> int:
    """Verify each file named; 0 when all verify, 1 at the first difference, 2 on bad use."""
    parser = argparse.ArgumentParser(
        prog="python -m app.engine.verify",
        description="Verify match records: re-deal every hand, check every commitment, "
        "replay every action.",
    )
    parser.add_argument("records", nargs="+", metavar="RECORD.json", help="a match record")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    for name in args.records:
        try:
            record = json.loads(Path(name).read_text(encoding="utf-8"))
            done = verify(record)
        except (OSError, ValueError) as e:
            print(f"{name}: cannot read: {e}", file=sys.stderr)
            return 2
        except RecordMismatchError as e:
            print(f"{name}: MISMATCH at {e}", file=sys.stderr)
            return 1
        print(f"{name}: ok ({done.hands} hands, {done.actions} actions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
