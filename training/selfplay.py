"""Self-play positions for LUNA's value network, each labelled with its hand's outcome.

The engine plays itself through the arena's match loop (``benchmarks.bots.drive``: engine
state held apart, each seat fed its ``seat_view`` and its redacted events): easy, medium and
``hard:0`` (hard's judgements without search) in every pairing, on every preset in turn.
A position is recorded from the seat's own information only (``app.bots.features``, built
from ``app.bots.knowledge.build``) twice a turn: when the seat is to draw (or take or pass
the upcard) and right after it has discarded (the opponent to move). When the hand ends,
each of its positions is labelled with the hand's points to the seat that saw it: the
winner's points, negative for the loser, 0 for a dead hand.

    python -m training.selfplay --seed 1 --matches 600 --workers 2 --out training/data/x.npz
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Mapping
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

from app.bots.base import Events, View
from app.bots.features import PLANES, SCALARS, Masks, Matrix, Terms, encode
from app.bots.knowledge import build
from app.bots.search import Budget
from app.engine.state import Event, MatchState
from app.engine.views import seat_view
from benchmarks.bots import arena_bot, drive

LEVELS = ("easy", "medium", "hard:0")
PRESETS = ("standard", "reino", "cardems")
_DRAWS = frozenset({"take_upcard", "draw_stock"})

Positions = tuple[Masks, Matrix, np.ndarray[Any, np.dtype[np.float32]]]


def job(seed: int, i: int, levels: tuple[str, ...] = LEVELS) -> tuple[str, str, str, str, int]:
    """The ``i``-th match of a run: its two levels (every pairing of ``levels`` in turn),
    preset, deal seed and a's seat."""
    pairs = tuple(itertools.combinations_with_replacement(levels, 2))
    a, b = pairs[i % len(pairs)]
    preset = PRESETS[(i // len(pairs)) % len(PRESETS)]
    return a, b, preset, f"selfplay-{seed}-{i}", i % 2


def record_match(spec: tuple[str, str, str, str, int]) -> Positions:
    """Play one match; its positions (masks, scalars) and their labels (hand points)."""
    level_a, level_b, preset, seed, a_seat = spec
    budget = Budget(0)
    bots = {a_seat: arena_bot(level_a, budget), 1 - a_seat: arena_bot(level_b, budget)}
    masks: list[Masks] = []
    scalars: list[Matrix] = []
    labels: list[float] = []
    pending: list[tuple[int, Masks, Matrix]] = []  # this hand's (seat, masks, scalars)

    def keep(seat: int, view: View, events: Events) -> None:
        m, s = encode([build(view, events)], Terms.of(view))
        pending.append((seat, m, s))

    def decide(seat: int, view: View, events: Events) -> dict[str, Any]:
        if _DRAWS & set(view["legal"]["actions"]):
            keep(seat, view, events)
        return bots[seat].choose(view, events)

    def moved(
        seat: int, state: MatchState, events: list[Event], seen: Mapping[int, Events]
    ) -> None:
        types = [e.type for e in events]
        if types == ["discarded"]:
            keep(seat, seat_view(state, seat), seen[seat])
        for event in events:
            if event.type != "hand_over":
                continue
            winner, points = event.public["winner"], int(event.public.get("points") or 0)
            for s, m, x in pending:
                masks.append(m)
                scalars.append(x)
                labels.append(0.0 if winner is None else points if s == winner else -points)
            pending.clear()

    drive(preset, seed, a_seat, decide, moved)
    if not labels:
        return (
            np.empty((0, PLANES), np.uint64),
            np.empty((0, SCALARS), np.float32),
            np.empty(0, np.float32),
        )
    return np.concatenate(masks), np.concatenate(scalars), np.array(labels, dtype=np.float32)


def generate(seed: int, matches: int, workers: int, levels: tuple[str, ...] = LEVELS) -> Positions:
    """Positions of ``matches`` self-play matches, over ``workers`` processes."""
    specs = [job(seed, i, levels) for i in range(matches)]
    with Pool(max(1, workers)) as pool:
        parts = pool.map(record_match, specs, chunksize=4)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]).astype(np.float32),
    )


def save(path: Path, data: Positions) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, masks=data[0], scalars=data[1], labels=data[2])


def load(path: Path) -> Positions:
    with np.load(path) as f:
        return f["masks"], f["scalars"], f["labels"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--matches", type=int, default=600)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--levels", default=",".join(LEVELS), help="the levels paired")
    p.add_argument("--out", type=Path, default=Path("training/data/selfplay.npz"))
    args = p.parse_args()
    data = generate(args.seed, args.matches, args.workers, tuple(args.levels.split(",")))
    save(args.out, data)
    print(f"{len(data[2])} positions from {args.matches} matches -> {args.out}")


if __name__ == "__main__":
    main()
