"""A hand's review: each decision judged from the deciding seat's information only, the same
whatever the opponent hid, reproducible, and marked by the documented thresholds."""

from __future__ import annotations

from typing import Any

import pytest

from app.bots import get_bot
from app.bots.review import MARKS, ReviewBudget, mark_of, review_hand, summary
from app.engine import Action, Event, MatchState, apply, make_ruleset, new_match
from app.engine.cards import code, commitment, mask_codes
from app.engine.errors import RuleError
from app.engine.replay import replay, start_of_hand
from app.engine.views import seat_view

BUDGET = ReviewBudget(samples=24)


def _played(
    seed: str, levels: tuple[str, str] = ("medium", "easy")
) -> tuple[MatchState, list[Event]]:
    """A first hand played out by two bots: the match at the deal and the hand's events."""
    state, events = new_match(make_ruleset("standard"), seed)
    start, log = state.copy(), list(events)
    bots = [get_bot(level) for level in levels]
    while state.hand.phase != "over":
        seat = state.hand.turn
        move = bots[seat].choose(seat_view(state, seat), [e.for_recipient(seat) for e in log])
        state, events = apply(state, seat, Action.from_dict(move))
        log += events
    return start, log


def _replayed(start: MatchState, moves: list[tuple[int, Action]]) -> list[Event]:
    """The events of ``moves`` played from ``start`` (RuleError if one is refused there)."""
    state, log = start, _deal_event(start)
    for seat, action in moves:
        state, events = apply(state, seat, action)
        log += events
    return log


def _deal_event(start: MatchState) -> list[Event]:
    hand = start.hand
    return [
        Event(
            "hand_started",
            {
                "hand_number": hand.number,
                "dealer": hand.dealer,
                "upcard": code(hand.discard_pile[-1]),
                "stock_size": len(hand.stock),
                "knock_limit": hand.knock_limit,
                "multiplier": hand.multiplier,
                "commitment": commitment(hand.seed, hand.nonce),
                "phase": hand.phase,
                "turn": hand.turn,
            },
            {s: {"hand": mask_codes(hand.hands[s])} for s in (0, 1)},
        )
    ]


def _twin(start: MatchState, log: list[Event], seat: int) -> tuple[MatchState, list[Event]]:
    """The same hand but for one card of the opponent of ``seat`` that it kept all hand,
    swapped with one of the stock's cards nobody drew: the same play is legal in both, and
    ``seat`` sees exactly the same until the hand is over."""
    steps = replay(start, log)
    moves = [(s.seat, s.action) for s in steps]
    opp = 1 - seat
    end = steps[-1].after.hand
    kept = start.hand.hands[opp] & end.hands[opp] & ~end.taken_from_discard[opp]
    undrawn = start.hand.stock[: len(end.stock)]
    for x in [c for c in range(64) if kept >> c & 1]:
        for y in undrawn:
            twin = start.copy()
            twin.hand.hands[opp] = twin.hand.hands[opp] & ~(1 << x) | 1 << y
            twin.hand.stock = [x if c == y else c for c in twin.hand.stock]
            try:
                return twin, _replayed(twin, moves)
            except RuleError:
                continue
    raise AssertionError("no swap keeps this hand's play legal")


def _values(review: dict[str, Any], seat: int) -> list[Any]:
    return [
        (d["index"], d["chosen"], d["options"], d["best"], d["cost"], d["mark"])
        for d in review["decisions"]
        if d["seat"] == seat
    ]


@pytest.mark.parametrize("seed", ["twins", "second pair", "third pair"])
def test_the_opponents_hidden_cards_never_change_a_seats_review(seed: str) -> None:
    start, log = _played(seed)
    log = _replayed(start, [(s.seat, s.action) for s in replay(start, log)])
    twin_start, twin_log = _twin(start, log, seat=0)
    assert twin_start.hand.hands[1] != start.hand.hands[1]
    assert twin_start.hand.hands[0] == start.hand.hands[0]
    one = review_hand(replay(start, log), log, BUDGET)
    two = review_hand(replay(twin_start, twin_log), twin_log, BUDGET)
    mine = _values(one, 0)
    assert mine and any(len(d[2]) > 2 for d in mine)  # real choices were judged
    assert mine == _values(two, 0)
    # The opponent held other cards, so its own decisions are judged on other information.
    assert _values(one, 1) != _values(two, 1)


def test_every_decision_lists_its_options_and_the_chosen_one() -> None:
    start, log = _played("listed", ("hard", "random"))
    steps = replay(start, log)
    review = review_hand(steps, log, BUDGET)
    assert [d["index"] for d in review["decisions"]] == [s.index for s in steps]
    for d, s in zip(review["decisions"], steps, strict=True):
        assert d["seat"] == s.seat and d["chosen"] == s.action.to_dict()
        if d["forced"]:
            continue
        kinds = [(o["kind"], o.get("card")) for o in d["options"]]
        assert (d["chosen"]["kind"], d["chosen"].get("card")) in kinds
        assert d["options"][0]["kind"] == d["best"]["kind"]
        points = [o["points"] for o in d["options"]]
        assert points == sorted(points, reverse=True)
        chosen = next(o for o in d["options"] if o["kind"] == d["chosen"]["kind"]
                      and o.get("card") == d["chosen"].get("card"))  # fmt: skip
        assert abs(d["cost"] - (points[0] - chosen["points"])) < 0.02
    seats = review["seats"]
    assert [s["seat"] for s in seats] == [0, 1]
    assert sum(s["decisions"] for s in seats) == sum(
        1 for d in review["decisions"] if not d["forced"]
    )


def test_a_review_is_the_same_each_time_and_follows_its_seed() -> None:
    start, log = _played("again")
    steps = replay(start, log)
    assert review_hand(steps, log, BUDGET) == review_hand(steps, log, BUDGET)
    other = review_hand(steps, log, ReviewBudget(BUDGET.samples, seed=1))
    assert other["decisions"] != review_hand(steps, log, BUDGET)["decisions"]


def test_marks_follow_the_thresholds_and_the_noise() -> None:
    assert [least for _, least in MARKS] == [10.0, 5.0, 2.0]
    assert mark_of(1.9, 0.0) is None
    assert mark_of(2.0, 0.0) == "inaccuracy"
    assert mark_of(7.0, 1.0) == "mistake"
    assert mark_of(12.0, 1.0) == "blunder"
    assert mark_of(12.0, 9.0) is None  # within the noise: unmarked
    decisions: list[dict[str, Any]] = [
        {"seat": 0, "forced": False, "cost": 0.0, "mark": None},
        {"seat": 0, "forced": False, "cost": 6.0, "mark": "mistake"},
        {"seat": 0, "forced": True, "cost": 0.0, "mark": None},
    ]
    mine, theirs = summary(decisions, hands=2)
    assert mine["decisions"] == 2 and mine["accuracy"] == 50.0 and mine["mistakes"] == 1
    assert mine["points_lost"] == 6.0 and mine["points_lost_per_hand"] == 3.0
    assert theirs["decisions"] == 0 and theirs["accuracy"] is None


def test_a_later_hand_starts_from_the_scores_before_it() -> None:
    rules = make_ruleset("standard")
    state, _ = new_match(rules, "later")
    history = [
        {"hand_number": 1, "outcome": "knock", "winner": 1, "points": 12},
        {"hand_number": 2, "outcome": "dead_hand", "winner": None, "points": 0},
    ]
    start = start_of_hand(rules, history, state.hand)
    assert start.scores == [0, 12] and start.hands_won == [0, 1]
    assert seat_view(start, 0)["match"]["history"] == history


def test_a_hand_cut_short_by_a_resignation_is_reviewed_up_to_it() -> None:
    state, events = new_match(make_ruleset("standard"), "cut short")
    start, log = state.copy(), list(events)
    bot = get_bot("medium")
    for _ in range(6):
        seat = state.hand.turn
        move = bot.choose(seat_view(state, seat), [e.for_recipient(seat) for e in log])
        state, events = apply(state, seat, Action.from_dict(move))
        log += events
    state, events = apply(state, 1, Action("resign"))
    log += events
    review = review_hand(replay(start, log), log, BUDGET)
    *played, last = review["decisions"]
    assert len(played) == 6 and last["chosen"] == {"kind": "resign"} and last["forced"]
    assert any(not d["forced"] for d in played)
