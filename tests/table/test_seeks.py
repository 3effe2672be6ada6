"""The matcher: closest rating first, the gap widening with waiting time, never oneself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from app.table.seeks import Waiting, Widening, pairs, pool_of, speed_of

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
WIDEN = Widening(base=100, per_second=10, most=600)


def seek(name: str, rating: float, waited: float = 0.0, player: str = "", **kw: float) -> Waiting:
    return Waiting(name, player or name, rating, NOW - timedelta(seconds=waited), **kw)


def test_the_oldest_seek_takes_the_closest_rating() -> None:
    old, near, far = seek("old", 1500, 30), seek("near", 1520, 1), seek("far", 1590, 2)
    assert [(a.seek_id, b.seek_id) for a, b in pairs([far, near, old], NOW, WIDEN)] == [
        ("old", "near")
    ]


def test_the_gap_widens_with_waiting_time() -> None:
    low, high = seek("low", 1200), seek("high", 1500)
    assert pairs([low, high], NOW, WIDEN) == []  # 300 apart, gap 100 at once
    waited = seek("low", 1200, waited=20)  # gap 100 + 10 x 20 = 300
    assert len(pairs([waited, high], NOW, WIDEN)) == 1
    assert WIDEN.gap(10_000) == 600


def test_never_oneself_nor_someone_just_declined() -> None:
    a1, a2 = seek("a1", 1500, player="a"), seek("a2", 1500, player="a")
    assert pairs([a1, a2], NOW, WIDEN) == []
    b = seek("b", 1500)
    assert pairs([a1, b], NOW, WIDEN, {frozenset(("a", "b"))}) == []


def test_a_seek_range_binds_both_ways() -> None:
    picky = seek("picky", 1500, rating_min=1550)
    assert pairs([picky, seek("x", 1520)], NOW, WIDEN) == []
    assert len(pairs([picky, seek("y", 1560)], NOW, WIDEN)) == 1


def test_speed_and_pool() -> None:
    assert speed_of(None) == "correspondence"
    bank = {"control": "bank", "seconds": 300.0, "bonus": 5.0, "cap": 300.0, "policy": "claim"}
    day = {"control": "per_move", "seconds": 86400.0, "policy": "claim"}
    assert speed_of(bank) == "live" and speed_of(day) == "correspondence"
    rules = {"target": 100}
    assert pool_of("standard", rules, bank, True) != pool_of("standard", rules, bank, False)
    assert pool_of("standard", rules, bank, True).startswith("standard/bank+300+5+300+claim/rated")


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1000, 2000), st.integers(0, 90))))
def test_each_player_is_paired_at_most_once_and_within_the_gap(
    entries: list[tuple[int, int, int]],
) -> None:
    pool = [seek(f"s{i}", r, w, player=f"p{p}") for i, (p, r, w) in enumerate(entries)]
    made = pairs(pool, NOW, WIDEN)
    players = [w.player_id for pair in made for w in pair]
    assert len(players) == len(set(players))
    for a, b in made:
        wait = (NOW - min(a.created_at, b.created_at)).total_seconds()
        assert a.player_id != b.player_id and abs(a.rating - b.rating) <= WIDEN.gap(wait)
