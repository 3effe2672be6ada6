"""Bots: legal play on every preset, gin always taken, blind to hidden cards, level traits."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from app.bots import LEVELS, NoMoveError, get_bot, has_move
from app.bots.evaluate import bits, meld_draws, melds_with
from app.bots.knock import knock_risk
from app.bots.knowledge import build
from app.bots.levels import MediumBot
from app.bots.search import Budget
from app.engine import PRESETS, Action, MatchState, apply, legal_actions, make_ruleset, new_match
from app.engine.cards import FULL_DECK_MASK, parse_card
from app.engine.melds import melds_within
from app.engine.views import seat_view
from benchmarks.bots import arena_bot
from tests.engine.builders import play_seen, position

# Searches in tests stay small: a few samples per candidate.
SMALL = Budget(32, 10_000.0)

LEVELS_OF_THE_PRODUCT = ("easy", "medium", "hard")


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_level_plays_only_legal_moves(preset: str) -> None:
    pairs = [("easy", "hard"), ("medium", "random"), ("eaai", "hard"), ("medium", "easy")]
    for i, (a, b) in enumerate(pairs):
        bots = {0: arena_bot(a, SMALL), 1: arena_bot(b, SMALL)}
        state, events = new_match(make_ruleset(preset, {"target": 50}), f"legal-{preset}-{i}")
        seen = {s: [e.for_recipient(s) for e in events] for s in (0, 1)}
        moves = 0
        while state.status == "playing":
            seat = moves % 2 if state.hand.phase == "over" else state.hand.turn
            view = seat_view(state, seat)
            assert has_move(view)
            action = Action.from_dict(bots[seat].choose(view, seen[seat]))
            assert action in legal_actions(state, seat), (bots[seat].level, action)
            state, events = apply(state, seat, action)
            for s in (0, 1):
                seen[s] += [e.for_recipient(s) for e in events]
            moves += 1
        assert moves >= 6  # a whole hand at least: upcard offers, draws, discards, a knock
        for seat in (0, 1):
            with pytest.raises(NoMoveError):
                bots[seat].choose(seat_view(state, seat), seen[seat])


def test_a_bot_waits_when_it_is_not_its_turn() -> None:
    state = position("2C 5C 9C 3D 7D JD 4H 8H QS KS", "AH 2H 3S 4S 5S 9S TS JS QD KD", "6S")
    view = seat_view(state, 1)
    assert not has_move(view)
    with pytest.raises(NoMoveError):
        get_bot("hard").choose(view, [])


@pytest.mark.parametrize("level", LEVELS_OF_THE_PRODUCT)
def test_gin_is_always_taken(level: str) -> None:
    state = position("AC 2C 3C 4D 5D 6D 7H 8H 9H KS", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS", "TH")
    state, seen = play_seen(state, (0, "take_upcard", None))
    assert get_bot(level).choose(seat_view(state, 0), seen) == {"kind": "knock", "card": "KS"}


@pytest.mark.parametrize("level", LEVELS_OF_THE_PRODUCT)
@pytest.mark.parametrize(("preset", "expected"), [("standard", "big_gin"), ("classic", "knock")])
def test_big_gin_where_the_preset_has_it_else_gin(level: str, preset: str, expected: str) -> None:
    state = position(
        "AC 2C 3C 4D 5D 6D 7H 8H 9H TH",
        "AS 2S 3S 4S 5S 6S 7S 8S 9S TS",
        "KS",
        stock_top="JH",
        preset=preset,
    )
    state, seen = play_seen(state, (0, "pass", None), (1, "pass", None), (0, "draw_stock", None))
    move = get_bot(level).choose(seat_view(state, 0), seen)
    assert move["kind"] == expected
    if expected == "knock":
        assert move["card"] in ("7H", "JH")


@pytest.mark.parametrize("level", ["easy", "eaai"])
def test_easy_knocks_at_the_first_chance(level: str) -> None:
    state = position(
        "AC 2C 3C 4D 5D 6D 7H 8H 9H KS", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS", "QD", stock_top="6C"
    )
    state, seen = play_seen(state, (0, "pass", None), (1, "pass", None), (0, "draw_stock", None))
    # Deadwood 6 this early: an undercut is unlikely but possible; easy does not ask.
    bot = arena_bot(level, SMALL)
    assert bot.choose(seat_view(state, 0), seen) == {"kind": "knock", "card": "KS"}


def _twins() -> list[tuple[MatchState, MatchState, list[Any]]]:
    """Pairs of states seat 0 cannot tell apart: other opponent cards and stock behind them."""
    mine = "2C 5C 9C 3D 7D JD 4H 8H QS KS"
    hidden = ("AH 2H 3S 4S 5S 9S TS JS QD KD", "AD 6H 7H 7S 8S 6C JH TD QH KD")
    pairs = []
    for moves in (
        [],
        [(0, "pass", None), (1, "take_upcard", None), (1, "discard", "KD")],
        [
            (0, "pass", None),
            (1, "take_upcard", None),
            (1, "discard", "KD"),
            (0, "draw_stock", None),
        ],
    ):
        states = []
        for opp in hidden:
            state = position(mine, opp, "6S", stock_top="AS", dealer=1)
            states.append(play_seen(state, *moves))
        (a, seen), (b, _) = states
        assert a.hand.hands[1] != b.hand.hands[1]
        assert a.hand.stock != b.hand.stock
        pairs.append((a, b, seen))
    return pairs


@pytest.mark.parametrize("level", LEVELS)
def test_hidden_cards_do_not_change_the_choice(level: str) -> None:
    for a, b, seen in _twins():
        view_a, view_b = seat_view(a, 0), seat_view(b, 0)
        assert view_a == view_b
        assert get_bot(level).choose(view_a, seen) == get_bot(level).choose(view_b, seen)


@pytest.mark.parametrize("level", ["medium", "hard"])
def test_does_not_feed_a_card_next_to_an_opponent_pickup(level: str) -> None:
    # Seat 1 takes the 9H upcard. Seat 0 then holds three melds and two lone tens of equal
    # worth to it; the TH sits next to the 9H, so the TC is the one to let go. (A knock limit
    # of 5 keeps the 10 points of deadwood from ending the hand.)
    state = position(
        "2S 3S 4S 5D 6D 7D KC KD KS TC",
        "9S 9D 2H 3H 4H 5C 6C QH AD 8D",
        "9H",
        stock_top="TH",
        dealer=0,
        rules=make_ruleset("standard", {"knock_limit": 5}),
    )
    state, seen = play_seen(
        state, (1, "take_upcard", None), (1, "discard", "QH"), (0, "draw_stock", None)
    )
    view = seat_view(state, 0)
    assert view["hand"]["seats"][1]["known_cards"] == ["9H"]
    assert get_bot(level).choose(view, seen) == {"kind": "discard", "card": "TC"}
    assert get_bot("easy").choose(view, seen)["card"] in ("TC", "TH")


def test_levels_and_names() -> None:
    assert set(LEVELS) == {"easy", "medium", "hard", "random"}
    with pytest.raises(ValueError, match="unknown bot level"):
        get_bot("grandmaster")


def test_hard_waits_for_gin_with_a_low_count_early_and_easy_does_not() -> None:
    state = position(
        "AC 2C 3C 4D 5D 6D 7H 8H 9H KS", "AS 3S 4S 5S 6S 7S 8S 9S TS QD", "JD", stock_top="2H"
    )
    state, seen = play_seen(state, (0, "pass", None), (1, "pass", None), (0, "draw_stock", None))
    view = seat_view(state, 0)
    assert {"card": "KS", "deadwood": 2} in view["legal"]["knock_discards"]
    assert get_bot("easy").choose(view, seen) == {"kind": "knock", "card": "KS"}
    # Deadwood 2 with the stock nearly full: gin is a few draws away, an undercut unlikely.
    # (Hard's judgement, before its search weighs the knock against playing on.)
    assert get_bot("hard", Budget(0)).choose(view, seen) == {"kind": "discard", "card": "KS"}


@pytest.mark.parametrize("level", ["medium", "hard"])
def test_weighs_undercut_risk_late_but_knocks_near_the_dead_hand(level: str) -> None:
    state = position(
        "AC 2C 3C 4D 5D 6D 7H 8H 9H KS", "AS 3S 4S 5S 6S 7S 8S 9S TS QD", "JD", stock_top="9C"
    )
    state, seen = play_seen(state, (0, "pass", None), (1, "pass", None), (0, "draw_stock", None))
    k = build(seat_view(state, 0), seen)
    bot = get_bot(level)
    assert isinstance(bot, MediumBot)
    assert bot.should_knock(k, 9)  # early: the opponent's hand is still far from a knock
    late = replace(k, opp_draws=13, my_draws=13, stock_size=10)
    assert not bot.should_knock(late, 9)  # late: a 9 is likely undercut, and time is left
    assert bot.should_knock(replace(late, stock_size=6), 9)  # the dead hand is near


def test_meld_draws_are_exactly_the_cards_that_can_join_a_meld() -> None:
    rng = random.Random(7)
    deck = list(bits(FULL_DECK_MASK))
    for _ in range(300):
        hand = sum(1 << c for c in rng.sample(deck, 10))
        joins = sum(
            1 << u
            for u in bits(FULL_DECK_MASK & ~hand)
            if any(m >> u & 1 for m in melds_within(hand | 1 << u))
        )
        assert meld_draws(hand) == joins


def test_melds_with_tells_one_card_as_meld_draws_tells_them_all() -> None:
    rng = random.Random(11)
    deck = list(bits(FULL_DECK_MASK))
    for _ in range(2000):
        hand = sum(1 << c for c in rng.sample(deck, rng.randint(0, 12)))
        draws = meld_draws(hand)
        for u in bits(FULL_DECK_MASK & ~hand):
            assert melds_with(hand, u) == bool(draws >> u & 1)


def test_hard_knock_risk_is_higher_late_than_early() -> None:
    state = position(
        "AC 2C 3C 4D 5D 6D 7H 8H 9H KS", "AS 3S 4S 5S 6S 7S 8S 9S TS QD", "JD", stock_top="9C"
    )
    state, seen = play_seen(state, (0, "pass", None), (1, "pass", None), (0, "draw_stock", None))
    k = build(seat_view(state, 0), seen)
    bot = get_bot("hard")
    assert isinstance(bot, MediumBot)
    knock_hand = k.hand & ~(1 << int(parse_card("KS")))
    early = knock_risk(k, knock_hand, bot.holding(k), samples=32, extra=0)
    late_k = replace(k, opp_draws=13, my_draws=13, stock_size=10)
    late = knock_risk(late_k, knock_hand, bot.holding(late_k), samples=32, extra=6)
    assert early.undercut < late.undercut
    assert early.points > late.points
