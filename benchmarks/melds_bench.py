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


def _dense_hand(size: int, rng: random.Random) -> int:
    """``size`` cards where runs and sets overlap: a block of ranks, or a long run plus sets."""
    shape = rng.randrange(3)
    if shape == 0:  # 3-4 consecutive ranks in all four suits
        width = rng.choice((3, 4))
        low = rng.randrange(14 - width)
        pool = [s * LANE + r for s in range(4) for r in range(low, low + width)]
        return _mask(rng.sample(pool, size))
    if shape == 1:  # 4-5 consecutive ranks in three or four suits
        width = rng.choice((4, 5))
        low = rng.randrange(14 - width)
        suits = rng.sample(range(4), rng.choice((3, 4)))
        pool = [s * LANE + r for s in suits for r in range(low, low + width)]
        return _mask(rng.sample(pool, size))
    # a run of 6-9 whose ranks also make sets in the other suits
    length = rng.randint(6, 9)
    low = rng.randrange(14 - length)
    suit = rng.randrange(4)
    run = [suit * LANE + r for r in range(low, low + length)]
    others = [s * LANE + r for s in range(4) if s != suit for r in range(low, low + length)]
    return _mask(run + rng.sample(others, size - length))


def dense_hands(count: int, size: int, seed: int) -> list[int]:
    """``count`` distinct meld-dense hands of ``size`` cards (10 or 11), in the order drawn."""
    return _distinct(count, lambda rng: _dense_hand(size, rng), seed)


def bench_hands(count: int = HANDS) -> dict[str, list[int]]:
    """The benchmark's hand sets by name: random and meld-dense, 10 and 11 cards, fixed seeds."""
    return {
        "random_10": _distinct(count, _random_hand(10), seed=10),
        "random_11": _distinct(count, _random_hand(11), seed=11),
        "dense_10": dense_hands(count, 10, seed=12),
        "dense_11": dense_hands(count, 11, seed=13),
    }


def side_by_side_us(
    calls: dict[str, Callable[[int], object]],
    hands: list[int],
    passes: int = PASSES,
    caches: tuple[Callable[[], None], ...] = (_search.cache_clear,),
) -> dict[str, float]:
    """Median over batches of ``BATCH`` hands of the CPU µs per call, for each of ``calls``.

    CPU time of this process (``time.process_time_ns``), not wall time: on a shared machine a
    batch during which another process held the core would count that process's time too.

    The calls take turns on each batch (first one first, then the other way round), so a
    machine shared with other work slows them alike. Each pass starts with the search caches
    cleared (``caches``), and no two hands share a search key, so no hand is answered from one.
    """
    per_call_ns: dict[str, list[float]] = {name: [] for name in calls}
    order = list(calls.items())
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(passes):
            for clear in caches:
                clear()
            for start in range(0, len(hands) - BATCH + 1, BATCH):
                batch = hands[start : start + BATCH]
                for name, call in order:
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
