"""Timing of ``best_arrangement``: median CPU microseconds per call on fixed, distinct hands.

Run ``python benchmarks/melds_bench.py`` for a table and a JSON line; the engine benchmark
imports ``measure_best_arrangement``. Each timing pass starts from an empty search cache and
times batches of distinct hands, so no result is served from a cache it filled itself.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from app.engine.cards import ALL_CARDS, LANE
from app.engine.melds import _candidates, _search, best_arrangement

HANDS = 5000
BATCH = 100
PASSES = 3


def _search_key(mask: int) -> tuple[int, int]:
    """What the search cache is keyed by for a searched hand (its candidate cards), else the hand.

    Hands with the same key would be answered from the cache after the first one.
    """
    run_cards, set_cards = _candidates(mask)
    return (run_cards, set_cards) if run_cards & set_cards else (mask, -1)


def _distinct(count: int, draw: Callable[[random.Random], int], seed: int) -> list[int]:
    """``count`` hands from ``draw`` no two of which share a search key, in the order drawn."""
    rng = random.Random(seed)
    seen: dict[tuple[int, int], int] = {}
    while len(seen) < count:
        mask = draw(rng)
        seen.setdefault(_search_key(mask), mask)
    return list(seen.values())


def _mask(cards: list[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def _random_hand(size: int) -> Callable[[random.Random], int]:
    return lambda rng: _mask(rng.sample(ALL_CARDS, size))


def _fill(rng: random.Random, core: list[int], size: int, near: list[int]) -> int:
    """``size`` cards: ``core`` (or a random part of it), then cards of ``near``, then any."""
    cards = set(rng.sample(core, size) if len(core) > size else core)
    spare = [c for c in near if c not in cards]
    rng.shuffle(spare)
    while len(cards) < size and spare:
        cards.add(spare.pop())
    while len(cards) < size:
        cards.add(rng.choice(ALL_CARDS))
    return _mask(list(cards))


def _window(low: int, width: int, suits: list[int] | range) -> list[int]:
    return [s * LANE + r for s in suits for r in range(max(0, low), min(13, low + width))]


# The shapes of meld-dense hands, by the number ``_dense_hand`` draws.
DENSE_SHAPES = (
    "block of 3-4 ranks, 4 suits",
    "block of 4-5 ranks, 3-4 suits",
    "run of 6-9 with sets",
    "two overlapping blocks",
    "a set crossing two runs",
    "four of a kind inside runs",
    "a run touching sets",
    "near-melds",
)


def _dense_hand(size: int, rng: random.Random, shape: int | None = None) -> int:
    """``size`` cards where runs and sets overlap, in one of ``DENSE_SHAPES`` (drawn alike
    unless ``shape`` is given)."""
    if shape is None:
        shape = rng.randrange(len(DENSE_SHAPES))
    if shape == 0:  # 3-4 consecutive ranks in all four suits
        width = rng.choice((3, 4))
        low = rng.randrange(14 - width)
        return _mask(rng.sample(_window(low, width, range(4)), size))
    if shape == 1:  # 4-5 consecutive ranks in three or four suits
        width = rng.choice((4, 5))
        low = rng.randrange(14 - width)
        return _mask(
            rng.sample(_window(low, width, rng.sample(range(4), rng.choice((3, 4)))), size)
        )
    if shape == 2:  # a run of 6-9 whose ranks also make sets in the other suits
        length = rng.randint(6, 9)
        low = rng.randrange(14 - length)
        suit = rng.randrange(4)
        run = [suit * LANE + r for r in range(low, low + length)]
        others = [c for c in _window(low, length, range(4)) if c not in run]
        return _mask(run + rng.sample(others, size - length))
    if shape == 3:  # two overlapping blocks: 3 ranks x 2-3 suits each, ranks and suits shifted
        low = rng.randrange(9)
        first = _window(low, 3, rng.sample(range(4), rng.choice((2, 3))))
        second = _window(low + rng.randint(1, 2), 3, rng.sample(range(4), rng.choice((2, 3))))
        core = list(dict.fromkeys(first + second))
        return _fill(rng, core, size, _window(low - 1, 7, range(4)))
    if shape == 4:  # a set (or four) crossing two runs of 3-5 in two suits
        rank = rng.randrange(13)
        suits = rng.sample(range(4), 2)
        core = []
        for s in suits:
            length = rng.randint(3, 5)
            start = rng.randint(max(0, rank - length + 1), min(rank, 13 - length))
            core += [s * LANE + r for r in range(start, start + length)]
        core += [s * LANE + rank for s in range(4) if s not in suits][: rng.choice((1, 2))]
        return _fill(rng, core, size, _window(rank - 3, 7, range(4)))
    if shape == 5:  # four of a kind inside runs in two or three suits
        rank = rng.randrange(1, 12)
        core = [s * LANE + rank for s in range(4)]
        for s in rng.sample(range(4), rng.choice((2, 3))):
            start = rng.randint(max(0, rank - 2), min(rank, 10))
            core += [s * LANE + r for r in range(start, start + 3) if r != rank]
        return _fill(rng, list(dict.fromkeys(core)), size, _window(rank - 3, 7, range(4)))
    if shape == 6:  # a run of 3-5 touching sets at its ends or just past them
        length = rng.randint(3, 5)
        low = rng.randrange(14 - length)
        suit = rng.randrange(4)
        core = [suit * LANE + r for r in range(low, low + length)]
        for rank in rng.sample([low - 1, low, low + length - 1, low + length], 2):
            if 0 <= rank < 13:
                core += [s * LANE + rank for s in rng.sample(range(4), 3)]
        return _fill(rng, list(dict.fromkeys(core)), size, _window(low - 2, length + 4, range(4)))
    # near-melds: pairs and two-card runs of 6-7 ranks in 3-4 suits, many 2-card combinations
    width = rng.choice((6, 7))
    low = rng.randrange(14 - width)
    pool = _window(low, width, rng.sample(range(4), rng.choice((3, 4))))
    return _mask(rng.sample(pool, size))


def dense_hands(count: int, size: int, seed: int, shape: int | None = None) -> list[int]:
    """``count`` distinct meld-dense hands of ``size`` cards (10 or 11), in the order drawn:
    of one of ``DENSE_SHAPES``, or of all of them alike."""
    return _distinct(count, lambda rng: _dense_hand(size, rng, shape), seed)


def bench_hands(count: int = HANDS) -> dict[str, list[int]]:
    """The benchmark's hand sets by name: random and meld-dense, 10 and 11 cards, fixed seeds."""
    return {
        "random_10": _distinct(count, _random_hand(10), seed=10),
        "random_11": _distinct(count, _random_hand(11), seed=11),
        "dense_10": dense_hands(count, 10, seed=12),
        "dense_11": dense_hands(count, 11, seed=13),
    }


def side_by_side_us(
    calls: dict[str, Callable[[Any], object]],
    hands: list[int],
    passes: int = PASSES,
    caches: tuple[Callable[[], None], ...] = (_search.cache_clear,),
    inputs: dict[str, list[Any]] | None = None,
) -> dict[str, float]:
    """Median over batches of ``BATCH`` hands of the CPU µs per call, for each of ``calls``.

    Each call is given each hand's mask, or what ``inputs`` has for it under the call's name
    (the same hands in another form: codes, another library's card list), made beforehand.

    CPU time of this process (``time.process_time_ns``), not wall time: on a shared machine a
    batch during which another process held the core would count that process's time too.

    The calls take turns on each batch (first one first, then the other way round), so a
    machine shared with other work slows them alike. Each call's batch starts with the search
    caches cleared (``caches``: two forms of the same call share one), and no two hands share a
    search key, so no hand is answered from a cache.
    """
    given = inputs or {}
    per_call_ns: dict[str, list[float]] = {name: [] for name in calls}
    order = [(name, call, given.get(name, hands)) for name, call in calls.items()]
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(passes):
            for start in range(0, len(hands) - BATCH + 1, BATCH):
                for name, call, args in order:
                    batch = args[start : start + BATCH]
                    for clear in caches:
                        clear()
                    t0 = time.process_time_ns()
                    for hand in batch:
                        call(hand)
                    per_call_ns[name].append((time.process_time_ns() - t0) / BATCH)
                order.reverse()
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(ns) / 1000 for name, ns in per_call_ns.items()}


def median_us(call: Callable[[int], object], hands: list[int], passes: int = PASSES) -> float:
    """``side_by_side_us`` of one call."""
    return side_by_side_us({"call": call}, hands, passes)["call"]


def measure_best_arrangement(hands: int = HANDS) -> dict[str, float]:
    """Median µs per ``best_arrangement(mask)`` call on each of ``bench_hands``' sets."""
    return {
        f"best_arrangement_{name}_us": median_us(best_arrangement, masks)
        for name, masks in bench_hands(hands).items()
    }


def main() -> None:
    figures = measure_best_arrangement()
    print(f"best_arrangement, median per call over batches of {BATCH} distinct hands")
    print(f"{'hands':<28}{'µs/call':>10}")
    for name, value in figures.items():
        print(f"{name:<28}{value:>10.2f}")
    print(json.dumps({name: round(value, 3) for name, value in figures.items()}))


if __name__ == "__main__":
    main()
