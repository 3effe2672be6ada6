"""LUNA's value network, run in numpy: a seat's own information in, its expected hand points out.

A small MLP (``app.bots.features`` rows of 327 numbers -> 64 -> 32 -> 1, ReLU) trained by
self-play (``training/train.py``; PyTorch there only) to predict the points the current hand
will bring the seat (negative: the opponent's), from positions where the seat is to draw or
has just discarded. The weights are ``luna_value.npz`` beside this module; the file's
``meta`` records the command, seed and data size that made it.

The committed weights: ``python -m training.train --seed 1 --matches 2500 --workers 2
--epochs 4``, 571,675 positions (docs/bots.md, "LUNA's value network"; the trials that
measured it as hard's guide: docs/history/bots.md). The product hard does not use it: every
guide tried lost matches (``GUIDES``).

``discard_values`` values the discards of one position at once (one batch), each on the
position it leaves: the network's hand points to the seat once the card is down.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from app.bots.evaluate import bits, costliest
from app.bots.features import WIDTH, Matrix, Terms, after_discard, features
from app.bots.knowledge import Knowledge
from app.engine.melds import arrange

# Labels are hand points divided by this while training; the output is multiplied back.
SCALE = 25.0
WEIGHTS = Path(__file__).with_name("luna_value.npz")


@dataclass(frozen=True)
class Network:
    """The MLP's layers: ``weights[i]`` (inputs x outputs) and ``biases[i]``, ReLU between."""

    weights: tuple[Matrix, ...]
    biases: tuple[Matrix, ...]
    meta: Mapping[str, Any]

    def __call__(self, x: Matrix) -> Matrix:
        """Hand points to the seat, one per row of ``x``."""
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        out: Matrix = h[:, 0] * np.float32(SCALE)
        return out

    @classmethod
    def load(cls, path: Path) -> Network:
        with np.load(path, allow_pickle=False) as f:
            n = sum(1 for name in f.files if name.startswith("w"))
            weights = tuple(f[f"w{i}"].astype(np.float32) for i in range(1, n + 1))
            biases = tuple(f[f"b{i}"].astype(np.float32) for i in range(1, n + 1))
            meta = json.loads(str(f["meta"])) if "meta" in f.files else {}
        if weights[0].shape[0] != WIDTH or weights[-1].shape[1] != 1:
            raise ValueError(f"{path}: a network of {WIDTH} inputs and 1 output expected")
        return cls(weights, biases, meta)


@lru_cache(maxsize=1)
def shipped() -> Network:
    """The committed network (loaded once per process)."""
    return Network.load(WEIGHTS)


def draw_values(net: Network, k: Knowledge, view: Mapping[str, Any]) -> tuple[float, float]:
    """The network's hand points to the seat of taking the pile's top card and of drawing
    from the stock, each followed by shedding the costliest deadwood card (not the card just
    taken), the stock draw averaged over the unseen cards alike: any of them may be the next
    one, for all the seat knows. One batch."""
    top = k.top
    assert top is not None
    taken = dataclasses.replace(
        k, hand=k.hand | 1 << top, discard_pile=k.discard_pile[:-1], my_draws=k.my_draws + 1
    )
    loose = arrange(taken.hand).deadwood_mask & ~(1 << top)
    rows = [after_discard(taken, costliest(loose or k.hand))]
    unseen = list(bits(k.unseen))
    for u in unseen:
        drawn = dataclasses.replace(
            k, hand=k.hand | 1 << u, stock_size=k.stock_size - 1, my_draws=k.my_draws + 1
        )
        loose = arrange(drawn.hand).deadwood_mask
        rows.append(after_discard(drawn, costliest(loose or drawn.hand)))
    values = net(features(rows, Terms.of(view)))
    take = float(values[0])
    return take, float(values[1:].mean()) if unseen else take


def discard_values(
    net: Network, k: Knowledge, view: Mapping[str, Any], options: Sequence[int]
) -> list[float]:
    """The network's hand points to the seat after each discard of ``options``."""
    rows = features([after_discard(k, c) for c in options], Terms.of(view))
    return [float(v) for v in net(rows)]


# How the network guides hard (HardBot ``guide``): "" not at all; "net" reorders the
# judgements' best ``CHOICES`` discards by the network's value and judges the draw
# (``wants_top``); "mix" puts the network's best of those first only when it beats the
# judgements' choice by ``MARGIN`` points, and leaves the draws to the judgements. The
# network is never let loose on every discard: it has seen only the positions that sensible
# play reaches, and its best of all 11 (a card from a meld, as often as not) lost 90% of
# the matches against medium.
GUIDES = ("", "net", "mix")
CHOICES = 3
MARGIN = 1.0


def guide_discards(
    guide: str, k: Knowledge, view: Mapping[str, Any], ranked: Sequence[int]
) -> list[int]:
    """``ranked`` (the judgements' order, best first) reordered as ``guide`` says."""
    if not guide or len(ranked) < 2:
        return list(ranked)
    head, tail = list(ranked[:CHOICES]), list(ranked[CHOICES:])
    values = discard_values(shipped(), k, view, head)
    if guide == "net":
        order = sorted(range(len(head)), key=lambda i: -values[i])  # stable: ties keep order
        return [head[i] for i in order] + tail
    best = max(range(len(head)), key=lambda i: values[i])
    if values[best] < values[0] + MARGIN:
        return list(ranked)
    return [head[best], *(c for c in head if c != head[best]), *tail]


def wants_top(k: Knowledge, view: Mapping[str, Any]) -> bool:
    """Whether the network prefers the pile's top card to the stock."""
    take, stock = draw_values(shipped(), k, view)
    return take > stock
