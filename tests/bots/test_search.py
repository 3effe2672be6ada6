"""Hard's search: blind to hidden cards, reproducible from view, events, budget and seed,
bounded by its wall-time cap, anytime, and valued by the match score."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.bots import get_bot
from app.bots.evaluate import bits, costliest
from app.bots.levels import HardBot
from app.bots.search import Budget, Hand, Outcome, Terms, knock_points, win_chance
from app.engine import Action, MatchState, apply, parse_card
from app.engine.cards import POINTS, code
from app.engine.settlement import settle
from app.engine.views import seat_view
from tests.engine.builders import position

SMALL = Budget(60, 10_000.0, seed=7)
MINE = "2C 5C 9C 3D 7D JD 4H 8H QS KS"
# Two opponent hands (and so two stocks) seat 0 cannot tell apart.
HIDDEN = ("AH 2H 3S 4S 5S 9S TS JS QD KD", "AD 6H 7H 7S 8S 6C JH TD QH KD")


def _after(state: MatchState, *moves: tuple[int, str, str | None]) -> tuple[MatchState, list[Any]]:
    seen: list[Any] = []
    for seat, kind, card in moves:
        state, events = apply(state, seat, Action.from_dict({"kind": kind, "card": card}))
        seen += [e.for_recipient(0) for e in events]
    return state, seen


def _to_discard(opp: str) -> tuple[dict[str, Any], list[Any]]:
    """Seat 0 to discard, after the opponent took the upcard and threw the KD."""
    state = position(MINE, opp, "6S", stock_top="AS", dealer=1)
    state, seen = _after(
        state,
        (0, "pass", None),
        (1, "take_upcard", None),
        (1, "discard", "KD"),
        (0, "draw_stock", None),
    )
    return seat_view(state, 0), seen


def _search(budget: Budget, opp: str = HIDDEN[0]) -> tuple[dict[str, Any], Outcome]:
    view, seen = _to_discard(opp)
    bot = get_bot("hard", budget)
    assert isinstance(bot, HardBot)
    move = bot.choose(view, seen)
    assert bot.last is not None
    return move, bot.last


def test_the_same_view_with_other_hidden_cards_gives_the_same_search() -> None:
    (view_a, _), (view_b, _) = _to_discard(HIDDEN[0]), _to_discard(HIDDEN[1])
    assert view_a == view_b
    move_a, out_a = _search(SMALL, HIDDEN[0])
    move_b, out_b = _search(SMALL, HIDDEN[1])
    assert out_a.samples > 0 and len(out_a.values) > 1  # it did search
    assert (move_a, out_a) == (move_b, out_b)


@pytest.mark.parametrize("dealer", [1, 0])
def test_the_upcard_offer_is_searched_blind_to_hidden_cards(dealer: int) -> None:
    # The ace melds nothing but lowers the count: the judgements pass, the search weighs both.
    # Seat 0 is offered it first (dealer 1) or after the opponent passed (dealer 0).
    outcomes = []
    for opp in HIDDEN:
        state = position(MINE, opp, "AC", stock_top="AS", dealer=dealer)
        state, seen = _after(state, *([(1, "pass", None)] if dealer == 0 else []))
        view = seat_view(state, 0)
        assert set(view["legal"]["actions"]) >= {"take_upcard", "pass"}
        bot = get_bot("hard", SMALL)
        assert isinstance(bot, HardBot)
        move = bot.choose(view, seen)
        assert bot.last is not None
        assert list(bot.last.values) == [("pass", None), ("take_upcard", None)]
        outcomes.append((view, move, bot.last))
    assert outcomes[0] == outcomes[1]


def test_a_decision_is_reproducible_from_its_budget_and_seed() -> None:
    first = _search(SMALL)
    assert _search(SMALL) == first
    other_seed = _search(Budget(SMALL.playouts, SMALL.cap_ms, seed=8))[1]
    assert other_seed.values != first[1].values  # the seed picks the samples
    more = _search(Budget(SMALL.playouts * 2, SMALL.cap_ms, seed=7))[1]
    assert more.samples == 2 * first[1].samples


def test_the_wall_time_cap_cuts_a_search_short_with_the_best_so_far() -> None:
    start = time.perf_counter()
    move, out = _search(Budget(10**6, 40.0))
    elapsed = time.perf_counter() - start
    assert out.cut_short and 0 < out.playouts < 10**6
    assert elapsed < 5.0  # generous: the machine is shared; the search alone stops near 40 ms
    kind, card = out.move
    assert card is not None and move == {"kind": kind, "card": code(card)}
    assert set(out.values) >= {out.move}


def test_a_search_cut_before_its_first_sample_plays_the_heuristic_choice() -> None:
    view, seen = _to_discard(HIDDEN[0])
    move, out = _search(Budget(10**6, 0.0))
    assert out.cut_short and out.samples == 0
    heuristic = get_bot("hard", Budget(0))
    assert move == heuristic.choose(view, seen)


def test_too_small_a_budget_leaves_the_choice_to_the_heuristic() -> None:
    view, seen = _to_discard(HIDDEN[0])
    move, out = _search(Budget(5))
    assert out.samples == 0 and not out.cut_short
    assert move == get_bot("hard", Budget(0)).choose(view, seen)


def test_win_chance_is_symmetric_and_grows_with_the_lead() -> None:
    assert win_chance(50, 50, 100) == pytest.approx(0.5)
    assert win_chance(30, 70, 100) == pytest.approx(1 - win_chance(70, 30, 100))
    assert win_chance(5, 10, 100) > win_chance(50, 55, 100) > 0.5
    assert win_chance(0, 10, 100) == 1.0 and win_chance(10, 0, 100) == 0.0
    # Targets beyond the table are scaled onto it.
    assert win_chance(500, 500, 1000) == pytest.approx(0.5)


def test_points_are_worth_what_they_do_to_the_match() -> None:
    view, _ = _to_discard(HIDDEN[0])
    view["match"]["scores"] = [0, 95]
    terms = Terms.of(view)
    assert terms.value(-5) == 0.0
    assert terms.value(20) < 0.5 < terms.value(100)


@pytest.mark.parametrize("scores", [(0, 0), (98, 0), (0, 98)])
def test_a_knock_is_valued_by_what_it_does_to_the_match(scores: tuple[int, int]) -> None:
    # Deadwood 2 early: a knock now is rarely undercut. At 98 it wins the match; at 0-98 it
    # only keeps the opponent off for a hand; at 0-0 it is worth a little more than even.
    state = position(
        "AC 2C 3C 4D 5D 6D 7H 8H 9H KS",
        "AS 3S 4S 5S 6S 7S 8S 9S TS QD",
        "JD",
        stock_top="2H",
        scores=scores,
    )
    state, seen = _after(state, (0, "pass", None), (1, "pass", None), (0, "draw_stock", None))
    bot = get_bot("hard", SMALL)
    assert isinstance(bot, HardBot)
    bot.choose(seat_view(state, 0), seen)
    assert bot.last is not None
    knock = bot.last.values[("knock", int(parse_card("KS")))]
    expected = {(0, 0): (0.55, 0.9), (98, 0): (0.99, 1.0), (0, 98): (0.05, 0.3)}[scores]
    assert expected[0] <= knock <= expected[1]


def test_in_playouts_the_searching_seat_waits_for_gin_as_hard_does() -> None:
    # Seat 0 (the searcher) plays on with a low count while draws remain, as HardBot does;
    # near the dead hand it knocks; the opponent's fast policy knocks at the first chance.
    hand = Hand(knock_limit=10, dead_hand_at=2, big_gin=False, wait=6, wait_turns=4)
    assert not hand.knocks(0, 5, stock=20)
    assert hand.knocks(0, 5, stock=10) and hand.knocks(0, 0, stock=20)
    assert hand.knocks(0, 8, stock=20) and not hand.knocks(0, 11, stock=20)
    assert hand.knocks(1, 5, stock=20)
    assert Hand(10, 2, False).knocks(0, 5, stock=20)


def _mask(cards: str) -> int:
    out = 0
    for c in cards.split():
        out |= 1 << int(parse_card(c))
    return out


@pytest.mark.parametrize(
    ("knocker", "defender"),
    [
        ("AC 2C 3C 4D 5D 6D 7H 7S 7C 2H", "KS QS JS 9D 9H 8C 8D TH TC 5S"),  # gin
        ("AC 2C 3C 4D 5D 6D 7H 7S 7C 9H", "4C 5C 3D 8D 7D KS QS 2S 3H 4S"),  # layoffs, a knock
        ("AC 2C 3C 4D 5D 6D 7H 7S 7C 9H", "4C 7D 8D JH QH KH 2S 2D AS AH"),  # an undercut
        ("TC JC QC KC 5D 5H 5S 2H 3S 4S", "9C 8C 5C 6D 7D 2C AS AD 3C 4C"),  # both run ends
    ],
)
def test_a_playout_knock_scores_as_the_engine_settles_it(knocker: str, defender: str) -> None:
    k, d = _mask(knocker), _mask(defender)
    terms = Terms(0, (0, 0), 100, 25, 31, 25, 1, "joint")
    s = settle(k, d, big_gin=False, gin_bonus=25, big_gin_bonus=31, undercut_bonus=25)
    assert knock_points(k, d, terms) == (s.points if s.knocker_won else -s.points)


def test_costliest_is_the_dearest_card_highest_id_among_equals() -> None:
    for cards in ("2C 3D AS", "TC KD 5S", "JS QC TD 9H", "4C 4D 4H 4S", "KS"):
        m = _mask(cards)
        assert costliest(m) == max(bits(m), key=lambda c: (POINTS[c], c))
