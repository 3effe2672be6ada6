"""What LUNA's value network sees: one seat's own information as a vector of numbers.

Built from ``Knowledge`` (``app.bots.knowledge.build``: the seat's view and its redacted
events) and the match's public terms, never from a hidden card. Six planes of 52 bits (card
``suit * 13 + rank``) and a few scalars:

- planes: the seat's hand; the discard pile's top card; the rest of the pile; the opponent's
  known cards (taken from the pile and still held); the cards it refused; the cards it
  discarded this hand;
- scalars: whether the seat is to move; its hand's deadwood; the stock, and the stock above
  the dead-hand count; the knock limit; the opponent's card count and how many of them are
  unknown; the draws of each seat this hand; the points each seat needs to reach the target
  (as a share of it); the gin and undercut bonuses; big gin; the hand's multiplier.

``after_discard`` is the seat's knowledge once it has discarded a card (the opponent to
move), as ``build`` would give it from the next view: a discard is valued by the network on
the position it leaves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from app.bots.knowledge import Knowledge
from app.engine.cards import ALL_CARDS
from app.engine.melds import deadwood

PLANES = 6
SCALARS = 15
WIDTH = PLANES * 52 + SCALARS

# Bit ``card`` of a 64-bit mask, for the 52 cards in plane order (suit * 13 + rank).
_CARD_BITS = np.array([int(c) for c in ALL_CARDS], dtype=np.intp)
# Actions that mean the seat is to move (not "resign", which is always there).
_MOVES = frozenset({"take_upcard", "pass", "draw_stock", "draw_discard", "discard", "knock"})

Matrix = npt.NDArray[np.float32]


@dataclasses.dataclass(frozen=True, slots=True)
class Terms:
    """The match's public terms, the same for every position of a hand: the points each
    seat needs (mine first), the target and the scoring rules."""

    need_me: int
    need_opp: int
    target: int
    gin_bonus: int
    undercut_bonus: int
    big_gin: bool
    multiplier: int

    @classmethod
    def of(cls, view: Mapping[str, Any]) -> Terms:
        rules = view["match"]["rules"]
        scores = view["match"]["scores"]
        me = int(view["you"])
        target = int(rules["target"])
        return cls(
            need_me=target - int(scores[me]),
            need_opp=target - int(scores[1 - me]),
            target=target,
            gin_bonus=int(rules["gin_bonus"]),
            undercut_bonus=int(rules["undercut_bonus"]),
            big_gin=bool(rules["big_gin_bonus"]),
            multiplier=int(view["hand"]["multiplier"]),
        )


def after_discard(k: Knowledge, card: int) -> Knowledge:
    """The seat's knowledge once it has discarded ``card`` and the opponent is to move."""
    return dataclasses.replace(
        k,
        phase="draw",
        actions=frozenset({"resign"}),
        hand=k.hand & ~(1 << card),
        discard_pile=(*k.discard_pile, card),
        cannot_discard=None,
        my_discards=k.my_discards | 1 << card,
    )


Masks = npt.NDArray[np.uint64]


def encode(ks: Sequence[Knowledge], terms: Terms) -> tuple[Masks, Matrix]:
    """The positions compactly: ``PLANES`` card masks and ``SCALARS`` numbers per position
    (``expand`` turns them into the network's rows; the self-play data keeps this form)."""
    masks: list[list[int]] = []
    scalars = np.empty((len(ks), SCALARS), dtype=np.float32)
    t = max(1, terms.target)
    for i, k in enumerate(ks):
        pile = k.discard_pile
        top = 1 << pile[-1] if pile else 0
        rest = 0
        for c in pile[:-1]:
            rest |= 1 << c
        masks.append([k.hand, top, rest, k.opp_known, k.opp_refused, k.opp_discards])
        scalars[i] = (
            1.0 if k.actions & _MOVES else 0.0,
            deadwood(k.hand) / 50.0,
            k.stock_size / 31.0,
            (k.stock_size - k.dead_hand_at) / 31.0,
            k.knock_limit / 10.0,
            k.opp_count / 11.0,
            k.opp_unknown_count / 11.0,
            k.my_draws / 16.0,
            k.opp_draws / 16.0,
            terms.need_me / t,
            terms.need_opp / t,
            terms.gin_bonus / 25.0,
            terms.undercut_bonus / 25.0,
            float(terms.big_gin),
            terms.multiplier / 2.0,
        )
    return np.array(masks, dtype=np.uint64).reshape(len(ks), PLANES), scalars


def expand(masks: Masks, scalars: Matrix) -> Matrix:
    """The network's rows: each mask as 52 bits (plane by plane), then the scalars."""
    n = masks.shape[0]
    raw = np.ascontiguousarray(masks, dtype=np.uint64).view(np.uint8).reshape(n * PLANES, 8)
    bits = np.unpackbits(raw, axis=1, bitorder="little")[:, _CARD_BITS]
    return np.concatenate([bits.reshape(n, PLANES * 52).astype(np.float32), scalars], axis=1)


def features(ks: Sequence[Knowledge], terms: Terms) -> Matrix:
    """One row of ``WIDTH`` numbers per position (all of one hand's match terms)."""
    return expand(*encode(ks, terms))
