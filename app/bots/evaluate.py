"""Hand evaluation for the bots, built on the engine's best arrangement.

The central figure is a 10-card hand's *expected deadwood after the next draw*: for each card
that might come off the stock, the deadwood of the best 10 of the 11 cards, weighted by that
card's chance. It rewards low deadwood and, through the draws that would complete a meld,
flexible cards (pairs, two-card runs, cards serving both). Weights are where the levels
differ: uniform over the unseen cards, or shaped by what the opponent is believed to hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from app.engine.cards import ALL_CARDS, FULL_DECK_MASK, LANE, POINTS, SPREAD
from app.engine.melds import arrange

RANK_COUNT = 13


def bits(mask: int) -> Iterator[int]:
    """The card ids of a mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _same_rank(c: int) -> int:
    rank = c & 15
    return sum(1 << (s * LANE + rank) for s in range(4)) & ~(1 << c)


def _same_suit(c: int, reach: int) -> int:
    rank, base = c & 15, c & ~15
    return sum(
        1 << (base + r)
        for r in range(rank - reach, rank + reach + 1)
        if 0 <= r < RANK_COUNT and r != rank
    )


def _table(make: Callable[[int], int]) -> tuple[int, ...]:
    return tuple(make(c) if c in ALL_CARDS else 0 for c in range(64))


# Per card id: the other cards of its rank; of its suit one rank away; two ranks away.
SAME_RANK = _table(_same_rank)
STEP1 = _table(lambda c: _same_suit(c, 1))
STEP2 = _table(lambda c: _same_suit(c, 2) & ~_same_suit(c, 1))
# NEAR[c]: the cards that can share a meld with c given one more card.
NEAR = tuple(a | b | c for a, b, c in zip(SAME_RANK, STEP1, STEP2, strict=True))


_RANKS_MASK = (1 << RANK_COUNT) - 1


def meld_draws(hand: int) -> int:
    """Cards that would join a meld with the cards of ``hand``: a third (or fourth) card of a
    rank held twice, or a card with two suit neighbours in hand on one side or both. Any
    other card drawn stays deadwood whatever the arrangement."""
    runs = ((hand << 1) & (hand << 2)) | ((hand >> 1) & (hand >> 2)) | ((hand << 1) & (hand >> 1))
    lanes = [(hand >> (s * LANE)) & _RANKS_MASK for s in range(4)]
    pairs = 0
    for i in range(4):
        for j in range(i + 1, 4):
            pairs |= lanes[i] & lanes[j]
    sets = pairs | pairs << LANE | pairs << 2 * LANE | pairs << 3 * LANE
    return (runs | sets) & FULL_DECK_MASK & ~hand


# By the five bits of a suit around a card (two ranks below it to two above, the card itself
# in the middle): whether two of them make a run with it. Ranks past the king and below the
# ace are never held (a lane has 16 ids for 13 ranks), so the window needs no bounds check.
_RUN_WINDOW = tuple(
    w & 0b00011 == 0b00011 or w & 0b01010 == 0b01010 or w & 0b11000 == 0b11000 for w in range(32)
)


def melds_with(hand: int, c: int) -> bool:
    """Whether the card ``c`` (not in ``hand``) would join a meld with the cards of ``hand``:
    ``meld_draws(hand) >> c & 1`` for one card, without building the whole mask."""
    return (hand & SAME_RANK[c]).bit_count() >= 2 or _RUN_WINDOW[hand << 2 >> c & 31]


# The ten-point ranks (T, J, Q, K) of every suit.
_TENS = ((1 << RANK_COUNT) - (1 << 9)) * SPREAD


def costliest(mask: int) -> int:
    """The card of the non-empty ``mask`` with the most points, the highest id among equals:
    ``max(bits(mask), key=lambda c: (POINTS[c], c))`` without the loop (points grow with the
    rank up to the ten, and a card's id is its suit lane plus its rank)."""
    tens = mask & _TENS
    if tens:
        return tens.bit_length() - 1
    ranks = (mask | mask >> LANE | mask >> 2 * LANE | mask >> 3 * LANE) & _RANKS_MASK
    return (mask & SPREAD << (ranks.bit_length() - 1)).bit_length() - 1


def max_points(mask: int) -> int:
    """The highest point value among the cards of ``mask`` (0 when empty)."""
    return max((POINTS[c] for c in bits(mask)), default=0)


def best_discard_deadwood(mask11: int) -> int:
    """The deadwood left after discarding the costliest deadwood card of an 11-card hand."""
    a = arrange(mask11)
    return a.deadwood - max_points(a.deadwood_mask)


class Outlook:
    """The chance of each unseen card being the next stock card, ready for fast evaluation."""

    __slots__ = ("by_points", "unseen", "weight")

    def __init__(self, unseen: int, weight: dict[int, float]) -> None:
        self.unseen = unseen
        total = sum(weight.values()) or 1.0
        self.weight = {c: w / total for c, w in weight.items()}
        self.by_points = [0.0] * 11
        for c, w in self.weight.items():
            self.by_points[POINTS[c]] += w

    @classmethod
    def uniform(cls, unseen: int) -> Outlook:
        return cls(unseen, dict.fromkeys(bits(unseen), 1.0))

    def expected_deadwood(self, hand: int) -> float:
        """Expected deadwood of the 10-card ``hand`` after one draw and the best discard."""
        a = self.outlook(hand, -1)
        return a.deadwood - a.meld_gain - a.swap_gain

    def outlook(self, hand: int, limit: int) -> Prospect:
        """What the next draw promises the 10-card ``hand`` (see Prospect)."""
        a = arrange(hand)
        dw = a.deadwood
        top = max_points(a.deadwood_mask)
        weight = self.weight
        helpful = self.unseen & meld_draws(hand)
        meld_gain = reach = 0.0
        left = list(self.by_points)  # weights of the cards that cannot join a meld
        for u in bits(helpful):
            w = weight[u]
            left[POINTS[u]] -= w
            after = min(dw, best_discard_deadwood(hand | 1 << u))
            meld_gain += w * (dw - after)
            if after <= limit:
                reach += w
        # A card that joins nothing replaces the costliest deadwood card only if it is cheaper.
        swap_gain = 0.0
        for p in range(11):
            after = dw - top + p if p < top else dw
            swap_gain += left[p] * (dw - after)
            if after <= limit:
                reach += left[p]
        return Prospect(dw, meld_gain, swap_gain, reach)


class Prospect(NamedTuple):
    """A 10-card hand's deadwood and what one more draw (and the best discard) is worth.

    ``meld_gain``: expected deadwood saved by draws that join a meld; ``swap_gain``: by draws
    that join nothing but are cheaper than the costliest deadwood card; ``reach``: the chance
    that deadwood is then within the given limit.
    """

    deadwood: int
    meld_gain: float
    swap_gain: float
    reach: float
