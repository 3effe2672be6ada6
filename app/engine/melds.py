"""Meld arithmetic: the best arrangement of a hand and its deadwood.

Hands are 64-bit masks (see ``cards``). Most hands need no search at all: when no card can
belong both to a run and to a set, every card that can be melded is melded, and the deadwood
is the points of the others. Only hands whose run cards and set cards overlap are searched,
and then only over the choice of sets (``_search``): once the sets are chosen, the runs are
forced.

Tie-break among arrangements of equal minimum deadwood (documented, deterministic): fewer
melds first; then the arrangement whose meld masks, sorted ascending, form the smaller tuple.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from app.engine.cards import LANE, POINTS, RANK_MASK, SPREAD, Card, from_mask, parse_card


def _lane_points() -> tuple[int, ...]:
    """The points of each 13-bit rank mask within one suit lane: those of the mask without its
    lowest rank, plus that rank's (built in one pass: every process imports this)."""
    out = [0] * (1 << 13)
    for m in range(1, 1 << 13):
        low = m & -m
        out[m] = out[m ^ low] + min(low.bit_length(), 10)
    return tuple(out)


_LANE_POINTS: tuple[int, ...] = _lane_points()


def points(mask: int) -> int:
    """The point total of the cards in ``mask``."""
    lp = _LANE_POINTS
    return (
        lp[mask & RANK_MASK]
        + lp[mask >> LANE & RANK_MASK]
        + lp[mask >> 2 * LANE & RANK_MASK]
        + lp[mask >> 3 * LANE]
    )


def _candidates(mask: int) -> tuple[int, int]:
    """(cards that can be in a run, cards that can be in a set) within ``mask``."""
    r3 = mask & (mask >> 1) & (mask >> 2)
    run_cards = r3 | r3 << 1 | r3 << 2
    a = mask & RANK_MASK
    b = mask >> LANE & RANK_MASK
    c = mask >> 2 * LANE & RANK_MASK
    d = mask >> 3 * LANE
    set_ranks = (a & b & (c | d)) | (c & d & (a | b))
    return run_cards, set_ranks * SPREAD & mask


def _segments(run_cards: int) -> list[int]:
    """Split run cards into maximal runs of consecutive ranks (each one meld)."""
    out: list[int] = []
    while run_cards:
        low = run_cards & -run_cards
        # Adding the lowest bit carries through the consecutive block above it.
        block = ((run_cards + low) ^ run_cards) & run_cards
        out.append(block)
        run_cards ^= block
    return out


def _set_melds(set_cards: int) -> list[int]:
    out: list[int] = []
    ranks = (
        set_cards | set_cards >> LANE | set_cards >> 2 * LANE | set_cards >> 3 * LANE
    ) & RANK_MASK
    while ranks:
        low = ranks & -ranks
        out.append(low * SPREAD & set_cards)
        ranks ^= low
    return out


def melds_within(mask: int) -> list[int]:
    """Every valid meld (set of 3 or 4, run of 3 or more) made of cards in ``mask``."""
    run_cards, set_cards = _candidates(mask)
    out: list[int] = []
    for block in _segments(run_cards):
        bits = _bits(block)
        for i in range(len(bits)):
            for j in range(i + 3, len(bits) + 1):
                out.append(sum(bits[i:j]))
    for full in _set_melds(set_cards):
        out.append(full)
        if full.bit_count() == 4:
            out.extend(full ^ b for b in _bits(full))
    return out


def _bits(mask: int) -> list[int]:
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


# (melded points, meld masks ordered by lowest card, the melded cards)
_Best = tuple[int, tuple[int, ...], int]

# Scores rank arrangements in one int: 8 x melded points - melds (never 8 melds or more: a meld
# has three cards), so the higher score melds more points, then with fewer melds.
_SCALE = 8


def _lane_run_score(lane: int) -> int:
    """The score of the runs of one suit's 13-bit rank mask: every card in 3+ consecutive
    ranks is melded, one meld per maximal block."""
    r3 = lane & (lane >> 1) & (lane >> 2)
    runs = r3 | r3 << 1 | r3 << 2
    # A block starts at each run card whose lower neighbour is none.
    return _SCALE * _LANE_POINTS[runs] - (runs & ~(runs << 1)).bit_count()


_LANE_RUN_SCORE: tuple[int, ...] = tuple(_lane_run_score(m) for m in range(1 << 13))
# The score of one card of a rank, by the rank's bit in a 13-bit rank mask.
_CARD_SCORE: dict[int, int] = {1 << r: _SCALE * POINTS[r] for r in range(13)}


@lru_cache(maxsize=1 << 16)
def _search(run_cards: int, set_cards: int) -> _Best:
    """Exact best melding of the candidate cards, under the documented tie-break.

    A rank holds at most one set (two would need six cards), and once the sets are chosen the
    runs are forced: every card left in three or more consecutive cards of a suit is melded
    (each card has points), one meld per maximal block (fewest melds). So the search is over
    the set choices alone, rank by rank: the full set, the set of three without one card that
    could run instead, or no set. A rank none of whose cards could run always takes its full
    set; and "no set" is only tried when two or more of a 4-card rank's cards could run (with
    one, the three others make a set that frees it at no cost to anything else). Each choice
    of sets is scored with one table lookup per suit; only the best score's ties build melds.
    """
    # (set cards chosen, their score, their melds) for each combination of the ranks seen so far.
    combos: list[tuple[int, int, tuple[int, ...]]] = [(0, 0, ())]
    fixed = fixed_score = 0
    fixed_melds: list[int] = []
    ranks = (
        set_cards | set_cards >> LANE | set_cards >> 2 * LANE | set_cards >> 3 * LANE
    ) & RANK_MASK
    while ranks:
        low = ranks & -ranks
        ranks ^= low
        full = low * SPREAD & set_cards
        card_score = _CARD_SCORE[low]  # every card of a rank has the same points
        size = full.bit_count()
        running = full & run_cards
        if not running:
            fixed |= full
            fixed_score += size * card_score - 1
            fixed_melds.append(full)
            continue
        options: list[tuple[int, int, tuple[int, ...]]] = [(full, size * card_score - 1, (full,))]
        if size == 4:
            three = 3 * card_score - 1
            rest = running
            while rest:
                one = rest & -rest
                rest ^= one
                options.append((full ^ one, three, (full ^ one,)))
            if running & (running - 1):
                options.append((0, 0, ()))
        else:
            options.append((0, 0, ()))
        combos = [(s | m, v + w, c + d) for s, v, c in combos for m, w, d in options]
    free = run_cards & ~fixed
    table = _LANE_RUN_SCORE
    scores = [
        v
        + table[(left := free & ~s) & RANK_MASK]
        + table[left >> LANE & RANK_MASK]
        + table[left >> 2 * LANE & RANK_MASK]
        + table[left >> 3 * LANE]
        for s, v, _ in combos
    ]
    best = max(scores)
    melded_points = (best + fixed_score + _SCALE - 1) // _SCALE
    if scores.count(best) == 1:
        sets, _, chosen = combos[scores.index(best)]
        left = free & ~sets
        r3 = left & (left >> 1) & (left >> 2)
        runs = r3 | r3 << 1 | r3 << 2
        melds = [*fixed_melds, *chosen, *_segments(runs)]
        return melded_points, tuple(sorted(melds, key=_lowest_card)), fixed | sets | runs
    # Equal scores: the smaller tuple of sorted meld masks.
    tied: list[tuple[tuple[int, ...], int]] = []
    for (sets, _, chosen), score in zip(combos, scores, strict=True):
        if score == best:
            left = free & ~sets
            r3 = left & (left >> 1) & (left >> 2)
            runs = r3 | r3 << 1 | r3 << 2
            melds = [*fixed_melds, *chosen, *_segments(runs)]
            tied.append((tuple(sorted(melds)), fixed | sets | runs))
    melds_sorted, melded = min(tied)
    return melded_points, tuple(sorted(melds_sorted, key=_lowest_card)), melded


def _lowest_card(meld: int) -> int:
    return meld & -meld


class Arrangement:
    """A hand's best arrangement: its melds, its deadwood cards and their point total."""

    __slots__ = ("_meld_masks", "deadwood", "mask", "melded_mask")

    def __init__(self, mask: int, melded_mask: int, meld_masks: tuple[int, ...] | None) -> None:
        self.mask = mask
        self.melded_mask = melded_mask
        self.deadwood = points(mask & ~melded_mask)
        self._meld_masks = meld_masks

    @property
    def meld_masks(self) -> tuple[int, ...]:
        """The melds as masks, ordered by their lowest card id."""
        if self._meld_masks is None:
            run_cards, set_cards = _candidates(self.mask)
            found = _segments(run_cards) + _set_melds(set_cards)
            self._meld_masks = tuple(sorted(found, key=lambda m: m & -m))
        return self._meld_masks

    @property
    def deadwood_mask(self) -> int:
        return self.mask & ~self.melded_mask

    @property
    def melds(self) -> list[list[Card]]:
        return [from_mask(m) for m in self.meld_masks]

    @property
    def deadwood_cards(self) -> list[Card]:
        return from_mask(self.deadwood_mask)

    def __repr__(self) -> str:
        return f"Arrangement(melds={self.melds}, deadwood={self.deadwood})"


def arrange(mask: int) -> Arrangement:
    """The best arrangement of the hand ``mask``."""
    run_cards, set_cards = _candidates(mask)
    if not run_cards & set_cards:
        return Arrangement(mask, run_cards | set_cards, None)
    _, meld_masks, melded = _search(run_cards, set_cards)
    return Arrangement(mask, melded, meld_masks)


def deadwood(mask: int) -> int:
    """The minimum deadwood of the hand ``mask``."""
    run_cards, set_cards = _candidates(mask)
    if not run_cards & set_cards:
        return points(mask & ~(run_cards | set_cards))
    return points(mask & ~_search(run_cards, set_cards)[2])


def discards_within(mask: int, limit: int, forbidden: int | None = None) -> list[tuple[int, int]]:
    """(card, deadwood after discarding it) for each discard leaving deadwood <= ``limit``.

    A card that fits no meld can leave without changing the melds, so its discard costs one
    subtraction; the others are searched only when the hand's unmeldable points allow a knock.
    """
    run_cards, set_cards = _candidates(mask)
    cand = run_cards | set_cards
    loose = points(mask & ~cand)
    out: list[tuple[int, int]] = []
    # A hand without card c melds no better than the whole hand with c as deadwood: no discard
    # leaves less than the whole hand's deadwood (at least its loose points) minus 10.
    if loose - 10 > limit:
        return out
    whole = loose
    if run_cards & set_cards:
        whole += points(cand) - _search(run_cards, set_cards)[0]
    if whole - 10 > limit:
        return out
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        c = low.bit_length() - 1
        if c == forbidden:
            continue
        if not low & cand:
            dw = whole - POINTS[c]
        elif loose <= limit:
            dw = deadwood(mask ^ low)
        else:
            continue
        if dw <= limit:
            out.append((c, dw))
    return out


def best_arrangement(cards: Iterable[str | int] | int) -> Arrangement:
    """The best arrangement of 10 or 11 cards, given as codes, Card objects or a mask."""
    if type(cards) is int:  # a mask: the common case first
        return arrange(cards)
    if isinstance(cards, Card):
        # A lone Card is an int too; read as a mask it would silently mean other cards.
        raise TypeError("best_arrangement takes a hand, not a single Card")
    if isinstance(cards, int):
        return arrange(cards)
    mask = 0
    for c in cards:
        mask |= 1 << parse_card(c)
    return arrange(mask)


__all__ = [
    "Arrangement",
    "arrange",
    "best_arrangement",
    "deadwood",
    "discards_within",
    "melds_within",
    "points",
]
