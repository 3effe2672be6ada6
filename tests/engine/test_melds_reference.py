"""The set-choice search gives exactly what the old subset search gave: deadwood, melds, ties.

``reference_melds`` keeps the old algorithm. Compared over seeded random hands, every 10- and
11-card hand of several narrow rank windows (where sets and runs overlap most), the benchmark's
meld-dense shapes (all together and each on its own), hypothesis' dense hands, and every hand
met in random play under each preset and layoff method (the meld rules are the same in every
ruleset: ace low, no wrap, sets of 3-4, runs of 3+). The rulesets differ in what is done with
an arrangement: knocks on meld-dense hands are settled with each layoff method, once as the
engine does and once with the reference search in place of ``arrange`` and ``deadwood``, and
must give the same settlement.
"""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import given, settings

import app.engine.settlement as settlement_module
from app.engine import Action, apply, legal_actions, make_ruleset, new_match
from app.engine.cards import ALL_CARDS, LANE
from app.engine.melds import _search, arrange, deadwood, discards_within
from app.engine.rules import PRESETS
from app.engine.settlement import LAYOFF_METHODS, settle
from app.engine.state import NEXT_HAND, OVER, RESIGN
from benchmarks.melds_bench import DENSE_SHAPES
from benchmarks.melds_bench import dense_hands as bench_dense
from tests.engine.reference_melds import (
    candidates,
    reference_arrange,
    reference_arrangement,
    reference_deadwood,
    reference_discards_within,
)
from tests.engine.test_melds import dense_hands, mask_of


def assert_same(mask: int) -> None:
    want_dead, want_melds = reference_arrange(mask)
    got = arrange(mask)
    assert (got.deadwood, got.meld_masks) == (want_dead, want_melds), hex(mask)
    assert deadwood(mask) == want_dead


def mask(cards: list[int] | tuple[int, ...]) -> int:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


@pytest.fixture(autouse=True)
def cold_cache() -> None:
    _search.cache_clear()


@pytest.mark.parametrize("size", [10, 11])
def test_random_hands_match_the_reference(size: int) -> None:
    rng = random.Random(size)
    for _ in range(20_000):
        assert_same(mask(rng.sample(ALL_CARDS, size)))


@pytest.mark.parametrize(
    ("low", "width", "suits"),
    [
        (0, 4, (0, 1, 2, 3)),  # A-4 in every suit: aces are worth 1
        (5, 4, (0, 1, 2, 3)),  # 6-9 in every suit
        (9, 4, (0, 1, 2, 3)),  # T-K: every card worth 10, ties everywhere
        (0, 5, (0, 1, 3)),
        (6, 5, (1, 2, 3)),
        (8, 5, (0, 2, 3)),
    ],
)
def test_every_hand_of_a_narrow_window_matches_the_reference(
    low: int, width: int, suits: tuple[int, ...]
) -> None:
    pool = [s * LANE + r for s in suits for r in range(low, low + width)]
    for size in (10, 11):
        for cards in combinations(pool, size):
            assert_same(mask(cards))


def test_benchmark_dense_hands_match_the_reference() -> None:
    for m in bench_dense(3000, size=10, seed=1) + bench_dense(3000, size=11, seed=2):
        assert_same(m)


@pytest.mark.parametrize("shape", range(len(DENSE_SHAPES)), ids=DENSE_SHAPES)
def test_each_dense_shape_matches_the_reference(shape: int) -> None:
    """Each meld-dense shape on its own (overlapping blocks, a set across two runs, four of a
    kind inside runs, runs touching sets, near-melds...), most of them searched."""
    hands = bench_dense(800, size=10, seed=shape, shape=shape)
    hands += bench_dense(800, size=11, seed=100 + shape, shape=shape)
    searched = 0
    for m in hands:
        assert_same(m)
        run_cards, set_cards = candidates(m)
        searched += bool(run_cards & set_cards)
    assert searched > len(hands) // 4


@settings(deadline=None, max_examples=300)
@given(dense_hands())
def test_hypothesis_dense_hands_match_the_reference(hand: list[str]) -> None:
    assert_same(mask_of(hand))


@settings(deadline=None, max_examples=200)
@given(dense_hands())
def test_knock_discards_of_dense_hands_match_the_reference(hand: list[str]) -> None:
    m = mask_of(hand)
    assert discards_within(m, 10) == reference_discards_within(m, 10)


@pytest.mark.parametrize("layoff", LAYOFF_METHODS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_hands_met_in_random_play_match_the_reference(preset: str, layoff: str) -> None:
    """Every hand held in 40 random hands of each ruleset, and the knock discards offered."""
    rules = make_ruleset(preset, {"layoff": layoff})
    rng = random.Random(f"{preset}-{layoff}")
    state, _ = new_match(rules, f"reference-{preset}-{layoff}")
    played = 0
    while played < 40:
        if state.status != "playing":
            state, _ = new_match(rules, f"reference-{preset}-{layoff}-{played}")
        if state.hand.phase == OVER:
            state, _ = apply(state, 0, Action(NEXT_HAND))
            continue
        for held in state.hand.hands:
            assert_same(held)
            if held.bit_count() == 11:
                assert discards_within(held, 10) == reference_discards_within(held, 10)
        seat = state.hand.turn
        moves = [a for a in legal_actions(state, seat) if a.kind != RESIGN]
        state, _ = apply(state, seat, rng.choice(moves))
        if state.hand.phase == OVER:
            played += 1


@pytest.mark.parametrize("layoff", LAYOFF_METHODS)
def test_knocks_settle_as_with_the_reference(layoff: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Meld-dense knockers (deadwood <= 10) against defenders from the same ranks, so layoffs
    and ties abound: the settlement is the same with the reference search under it."""
    rng = random.Random(layoff)
    cases: list[tuple[int, int]] = []
    for knocker in bench_dense(4000, size=10, seed=3):
        if reference_arrange(knocker)[0] > 10:
            continue
        ranks = {c & 15 for c in range(64) if knocker >> c & 1}
        near = [
            s * LANE + r
            for s in range(4)
            for r in range(max(0, min(ranks) - 2), min(13, max(ranks) + 3))
            if not knocker >> (s * LANE + r) & 1
        ]
        rest = [int(c) for c in ALL_CARDS if not knocker >> c & 1 and c not in near]
        take = max(10 - len(rest), min(len(near), rng.randint(4, 10)))
        defender = mask(rng.sample(near, take) + rng.sample(rest, 10 - take))
        cases.append((knocker, defender))
    assert len(cases) > 500
    got = [settled(k, d, layoff) for k, d in cases]
    assert sum(bool(s["layoffs"]) for s in got) > 100
    monkeypatch.setattr(settlement_module, "arrange", reference_arrangement)
    monkeypatch.setattr(settlement_module, "deadwood", reference_deadwood)
    assert [settled(k, d, layoff) for k, d in cases] == got


def settled(knocker: int, defender: int, layoff: str) -> dict[str, object]:
    return settle(
        knocker,
        defender,
        big_gin=False,
        gin_bonus=25,
        big_gin_bonus=31,
        undercut_bonus=25,
        layoff=layoff,
    ).to_dict()
