"""LUNA's opponent model: its estimates from the match's events, the sampled hands that follow
them, the playouts' waiting opponent, and decisions that stay a function of view and events."""

from __future__ import annotations

import random
from typing import Any

from app.bots import get_bot
from app.bots.evaluate import meld_draws
from app.bots.knock import sample_opponent
from app.bots.knowledge import Knowledge, build
from app.bots.levels import HardBot
from app.bots.opponent import Habits, read
from app.bots.search import Budget, Hand
from app.engine import Action, apply, make_ruleset, new_match
from app.engine.melds import deadwood
from app.engine.state import OVER, PLAYING
from app.engine.views import seat_view
from tests.engine.builders import play_seen, position

SMALL = Budget(60, 10_000.0, seed=7)
MINE = "2C 5C 9C 3D 7D JD 4H 8H QS KS"
OPP = "AH 2H 3S 4S 5S 9S TS JS QD KD"


def _hand(
    opp_ends: bool, opp_cards: list[str], *, picked: str | None = None
) -> list[dict[str, Any]]:
    """One finished hand as seat 0 saw it: the opponent (seat 1) discarded, maybe took a card
    from the pile, and the hand ended with its ``opp_cards`` shown; it knocked if ``opp_ends``
    (with deadwood 5), else seat 0 did."""
    events: list[dict[str, Any]] = [
        {"type": "hand_started", "hand_number": 1, "knock_limit": 10, "upcard": "6S"},
        {"type": "upcard_passed", "seat": 0},
    ]
    if picked:
        events.append({"type": "drew_discard", "seat": 1, "card": picked})
    else:
        events.append({"type": "drew_stock", "seat": 1})
    events.append({"type": "discarded", "seat": 1, "card": "KD"})
    knocker = 1 if opp_ends else 0
    events.append({"type": "knocked", "seat": knocker, "card": "QS", "deadwood": 5})
    mine = MINE.split()
    events.append(
        {
            "type": "hand_over",
            "hands": [mine, opp_cards],
            "knocker": knocker,
            "winner": knocker,
            "outcome": "knock",
            "points": 10,
        }
    )
    return events


# Seat 1's shown hands: deadwood 6 (it could have knocked), and deadwood 60.
LOW = ["AH", "2H", "3H", "4S", "5S", "6S", "9C", "9D", "9H", "6D"]
HIGH = ["AH", "2H", "3H", "KS", "QS", "JD", "9C", "8D", "7H", "6D"]


def test_an_eager_knocker_and_a_waiter_read_apart() -> None:
    eager = read([e for _ in range(5) for e in _hand(True, HIGH)], 0)
    waiter = read([e for _ in range(5) for e in _hand(False, LOW)], 0)
    prior = read([], 0)
    assert (eager.taken, eager.declined, waiter.taken, waiter.declined) == (5, 0, 0, 5)
    assert waiter.knocks < prior.knocks < eager.knocks
    assert eager.waits < prior.waits < waiter.waits
    # The prior keeps a few hands from deciding it outright.
    assert 0.2 < waiter.knocks < 0.5 and eager.knocks < 1.0


def test_a_hand_it_could_not_have_knocked_tells_nothing() -> None:
    # Seat 0 ended the hand and seat 1 showed deadwood 60: it could not knock.
    assert read(_hand(False, HIGH), 0) == Habits(hands=1)
    # Read from the other seat, the same hand is seat 0's knock: taken.
    assert read(_hand(False, HIGH), 1).taken == 1


def test_pickups_kept_in_melds_and_pickups_kept_as_deadwood_read_apart() -> None:
    melder = read([e for _ in range(4) for e in _hand(True, LOW, picked="9H")], 0)
    other = read([e for _ in range(4) for e in _hand(True, LOW, picked="6D")], 0)
    assert (melder.to_meld, melder.otherwise, other.to_meld, other.otherwise) == (4, 0, 0, 4)
    assert other.melds_only < read([], 0).melds_only < melder.melds_only


def _late() -> Knowledge:
    """Seat 0 to discard after the opponent drew twice, discarded twice (no knock) and refused
    the 5C seat 0 threw."""
    state = position(MINE, OPP, "6S", stock_top="AS 7C 8C", dealer=1)
    state, seen = play_seen(
        state,
        (0, "pass", None),
        (1, "take_upcard", None),
        (1, "discard", "KD"),
        (0, "draw_stock", None),
        (0, "discard", "5C"),
        (1, "draw_stock", None),
        (1, "discard", "QD"),
        (0, "draw_stock", None),
    )
    k = build(seat_view(state, 0), seen)
    assert k.opp_discards and k.opp_refused
    return k


def _samples(k: Knowledge, habits: Habits | None, n: int = 300) -> list[int]:
    rng = random.Random(3)
    chance = get_bot_holding(k)
    # A few extra cards: many unconstrained samples are knockable hands.
    return [sample_opponent(k, chance, 4, rng, habits) for _ in range(n)]


def get_bot_holding(k: Knowledge) -> dict[int, float]:
    bot = get_bot("hard")
    assert isinstance(bot, HardBot)
    return bot.holding(k)


def test_an_eager_knocker_that_did_not_knock_is_sampled_above_the_knock_limit() -> None:
    k = _late()
    free = _samples(k, None)
    eager = _samples(k, Habits(taken=200))
    waiter = _samples(k, Habits(declined=200))

    def knockable(hands: list[int]) -> int:
        return sum(deadwood(h) <= k.knock_limit for h in hands)

    assert knockable(free) > 60  # so the constraint has something to reject
    assert knockable(eager) < knockable(free) / 4
    assert knockable(waiter) > knockable(free) * 3 / 4
    assert all(h & k.opp_known == k.opp_known and h.bit_count() == k.opp_count for h in eager)


def test_a_player_that_takes_only_to_meld_holds_no_meld_for_a_card_it_refused() -> None:
    k = _late()
    free = _samples(k, None)
    melder = _samples(k, Habits(to_meld=200, declined=200))

    def melding(hands: list[int]) -> int:
        return sum(bool(k.opp_refused & meld_draws(h)) for h in hands)

    assert melding(free) > 20
    assert melding(melder) < melding(free) / 4


def test_in_playouts_the_opponent_waits_for_gin_only_where_the_model_has_it_wait() -> None:
    eager = Hand(10, 2, False, wait=6, wait_turns=4)
    waiting = Hand(10, 2, False, wait=6, wait_turns=4, opp_waits=True)
    # Seat 1 with deadwood 5, 30 cards in the stock: the waiter plays on, late it knocks.
    assert eager.knocks(1, 5, 30) and not waiting.knocks(1, 5, 30)
    assert waiting.knocks(1, 5, 8) and waiting.knocks(1, 0, 30) and waiting.knocks(1, 9, 30)


def _match(levels: tuple[str, str], seed: str, stop_hand: int) -> tuple[dict[str, Any], list[Any]]:
    """Seat 0's view and its match events at its first decision of hand ``stop_hand``."""
    bots = [get_bot(levels[0], SMALL), get_bot(levels[1])]
    state, events = new_match(make_ruleset("standard"), seed)
    seen: list[list[Any]] = [[e.for_recipient(s) for e in events] for s in (0, 1)]
    while state.status == PLAYING:
        seat = 0 if state.hand.phase == OVER else state.hand.turn
        view = seat_view(state, seat)
        if seat == 0 and state.hand.number >= stop_hand and state.hand.phase != OVER:
            return view, seen[0]
        state, new = apply(state, seat, Action.from_dict(bots[seat].choose(view, seen[seat])))
        for s in (0, 1):
            seen[s] += [e.for_recipient(s) for e in new]
    raise AssertionError("the match ended first")


def test_the_same_view_and_match_events_give_the_same_move() -> None:
    view, seen = _match(("hard", "easy"), "opp-1", 3)
    assert sum(e["type"] == "hand_over" for e in seen) == 2
    habits = read(seen, 0)
    assert habits.hands == 2
    first = get_bot("hard", SMALL, model=True).choose(view, seen)
    again = get_bot("hard", SMALL, model=True).choose(view, [dict(e) for e in seen])
    assert first == again
    bot = get_bot("hard", SMALL, model=True)
    assert isinstance(bot, HardBot)
    bot.choose(view, seen)
    assert bot.habits == habits
    blind = get_bot("hard", SMALL)  # the product's hard: without the model
    assert isinstance(blind, HardBot)
    blind.choose(view, seen)
    assert blind.habits is None
