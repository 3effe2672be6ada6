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

from app.engine.cards import CODE_BIT, LANE, POINTS, RANK_MASK, SPREAD, Card, codes_mask, from_mask


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


# Scores rank arrangements in one int: 8 x melded points - melds (never 8 melds or more: a meld
# has three cards), so the higher score melds more points, then with fewer melds.
_SCALE = 8
# A search's set choices are packed in one int each: score << _HIGH | the set cards chosen. The
# set cards of two ranks are disjoint, so adding two packed choices adds both parts at once.
_HIGH = 64
_LOW_MASK = (1 << _HIGH) - 1


def _lane_run_score(lane: int) -> int:
    """The score of the runs of one suit's 13-bit rank mask: every card in 3+ consecutive
    ranks is melded, one meld per maximal block."""
    r3 = lane & (lane >> 1) & (lane >> 2)
    runs = r3 | r3 << 1 | r3 << 2
    # A block starts at each run card whose lower neighbour is none.
    return _SCALE * _LANE_POINTS[runs] - (runs & ~(runs << 1)).bit_count()


_LANE_RUN_SCORE: tuple[int, ...] = tuple(_lane_run_score(m) for m in range(1 << 13))
# The packed score of one card of a rank, by the rank's bit in a 13-bit rank mask.
_CARD_SCORE: dict[int, int] = {1 << r: _SCALE * POINTS[r] << _HIGH for r in range(13)}
_ONE_MELD = 1 << _HIGH


@lru_cache(maxsize=1 << 16)
def _search(key: int) -> tuple[int, int]:
    """(the melded cards, the set cards among them) of the exact best melding of the candidate
    cards, under the documented tie-break; ``key`` is ``run_cards << 64 | set_cards``.

    A rank holds at most one set (two would need six cards), and once the sets are chosen the
    runs are forced: every card left in three or more consecutive cards of a suit is melded
    (each card has points), one meld per maximal block (fewest melds). So the search is over
    the set choices alone, rank by rank: the full set, the set of three without one card that
    could run instead, or no set. A rank none of whose cards could run always takes its full
    set; and "no set" is only tried when two or more of a 4-card rank's cards could run (with
    one, the three others make a set that frees it at no cost to anything else). Each choice
    of sets is scored with one table lookup per suit; only a tie among the best builds melds.
    """
    run_cards = key >> _HIGH
    set_cards = key & _LOW_MASK
    combos = [0]  # packed set choices of the ranks seen so far
    fixed = 0
    ranks = (
        set_cards | set_cards >> LANE | set_cards >> 2 * LANE | set_cards >> 3 * LANE
    ) & RANK_MASK
    while ranks:
        low = ranks & -ranks
        ranks ^= low
        full = low * SPREAD & set_cards
        running = full & run_cards
        if not running:
            fixed |= full
            continue
        card_score = _CARD_SCORE[low]  # every card of a rank has the same points
        if full.bit_count() == 4:
            three = 3 * card_score - _ONE_MELD
            options = [4 * card_score - _ONE_MELD + full]
            rest = running
            while rest:
                one = rest & -rest
                rest ^= one
                options.append(three + (full ^ one))
            if running & (running - 1):
                options.append(0)
        else:
            options = [3 * card_score - _ONE_MELD + full, 0]
        combos = [c + o for c in combos for o in options]
    free = run_cards & ~fixed
    table = _LANE_RUN_SCORE
    scores = [
        (c >> _HIGH)
        + table[(left := free & ~c) & RANK_MASK]
        + table[left >> LANE & RANK_MASK]
        + table[left >> 2 * LANE & RANK_MASK]
        + table[left >> 3 * LANE]
        for c in combos
    ]
    best = max(scores)
    if scores.count(best) == 1:
        sets = combos[scores.index(best)] & _LOW_MASK
    else:  # equal scores: the smaller tuple of sorted meld masks
        sets = min(
            (
                tuple(sorted(_set_melds(s | fixed) + _segments(_runs(free & ~s)))),
                s,
            )
            for c, score in zip(combos, scores, strict=True)
            if score == best
            for s in (c & _LOW_MASK,)
        )[1]
    sets |= fixed
    return sets | _runs(free & ~sets), sets


def _runs(cards: int) -> int:
    """The cards of ``cards`` in three or more consecutive ranks of a suit."""
    r3 = cards & (cards >> 1) & (cards >> 2)
    return r3 | r3 << 1 | r3 << 2


def _lowest_card(meld: int) -> int:
    return meld & -meld


class Arrangement:
    """A hand's best arrangement: its melds, its deadwood cards and their point total."""

    __slots__ = ("_meld_masks", "_sets", "deadwood", "mask", "melded_mask")

    def __init__(self, mask: int, melded_mask: int, meld_masks: tuple[int, ...]) -> None:
        self.mask = mask
        self.melded_mask = melded_mask
        self.deadwood = points(mask & ~melded_mask)
        self._meld_masks: tuple[int, ...] | None = meld_masks
        self._sets = 0

    @property
    def meld_masks(self) -> tuple[int, ...]:
        """The melds as masks, ordered by their lowest card id."""
        if self._meld_masks is None:
            # A rank holds at most one set, and the runs are the maximal blocks of the rest.
            sets = self._sets
            found = _segments(self.melded_mask & ~sets) + _set_melds(sets)
            self._meld_masks = tuple(sorted(found, key=_lowest_card))
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


def _lane_runs(lane: int) -> int:
    r3 = lane & (lane >> 1) & (lane >> 2)
    return r3 | r3 << 1 | r3 << 2


# By a suit's 13-bit rank mask: its cards in runs, and the points of the others.
_LANE_RUNS: tuple[int, ...] = tuple(_lane_runs(m) for m in range(1 << 13))
_LANE_LOOSE: tuple[int, ...] = tuple(_LANE_POINTS[m & ~_LANE_RUNS[m]] for m in range(1 << 13))
_new = object.__new__
_CODE_BIT = CODE_BIT.__getitem__


def best_arrangement(cards: Iterable[str | int] | int) -> Arrangement:
    """The best arrangement of 10 or 11 cards, given as a mask, codes or Card objects.

    Everything is inline: most hands need no search, and then calls, tuples and big-int
    operations would be most of the cost. The hand is split into its four suits' 13-bit rank
    masks (small ints) once; each suit's runs and loose points are table lookups.
    """
    if type(cards) is int:  # a mask: the common case first
        mask = cards
    elif type(cards) is list:  # codes as the server holds them: summed in C
        try:
            mask = sum(map(_CODE_BIT, cards))
        except (KeyError, TypeError):
            mask = _mask_of(cards)
        else:
            if mask.bit_count() != len(cards):  # a duplicate: the sum carried
                mask = _mask_of(cards)
    else:
        mask = _mask_of(cards)
    a = mask & RANK_MASK
    b = mask >> LANE & RANK_MASK
    c = mask >> 2 * LANE & RANK_MASK
    d = mask >> 3 * LANE
    set_ranks = (a & b & (c | d)) | (c & d & (a | b))
    runs = _LANE_RUNS
    ra = runs[a]
    rb = runs[b]
    rc = runs[c]
    rd = runs[d]
    out = _new(Arrangement)
    out.mask = mask
    out._meld_masks = None
    if not set_ranks:  # no set: the runs are the melds
        out.melded_mask = ra | rb << LANE | rc << 2 * LANE | rd << 3 * LANE
        loose = _LANE_LOOSE
        out.deadwood = loose[a] + loose[b] + loose[c] + loose[d]
        out._sets = 0
        return out
    lp = _LANE_POINTS
    sets = set_ranks * SPREAD & mask
    if (ra | rb | rc | rd) & set_ranks:  # a card could go in a run or in a set
        key = (ra | rb << LANE | rc << 2 * LANE | rd << 3 * LANE) << _HIGH | sets
        melded, sets = _search(key)
        left = mask & ~melded
        out.deadwood = (
            lp[left & RANK_MASK]
            + lp[left >> LANE & RANK_MASK]
            + lp[left >> 2 * LANE & RANK_MASK]
            + lp[left >> 3 * LANE]
        )
    else:  # runs and sets apart: every candidate is melded
        melded = ra | rb << LANE | rc << 2 * LANE | rd << 3 * LANE | sets
        out.deadwood = (
            lp[a & ~(ra | set_ranks)]
            + lp[b & ~(rb | set_ranks)]
            + lp[c & ~(rc | set_ranks)]
            + lp[d & ~(rd | set_ranks)]
        )
    out.melded_mask = melded
    out._sets = sets
    return out


def _mask_of(cards: Iterable[str | int] | int) -> int:
    if isinstance(cards, int):
        if isinstance(cards, Card):
            # A lone Card is an int too; read as a mask it would silently mean other cards.
            raise TypeError("best_arrangement takes a hand, not a single Card")
        return int(cards)
    return codes_mask(cards)


def arrange(mask: int) -> Arrangement:
    """The best arrangement of the hand ``mask`` (``best_arrangement`` of a mask)."""
    return best_arrangement(mask)


def deadwood(mask: int) -> int:
    """The minimum deadwood of the hand ``mask``."""
    a = mask & RANK_MASK
    b = mask >> LANE & RANK_MASK
    c = mask >> 2 * LANE & RANK_MASK
    d = mask >> 3 * LANE
    set_ranks = (a & b & (c | d)) | (c & d & (a | b))
    if not set_ranks:
        loose = _LANE_LOOSE
        return loose[a] + loose[b] + loose[c] + loose[d]
    runs = _LANE_RUNS
    ra = runs[a]
    rb = runs[b]
    rc = runs[c]
    rd = runs[d]
    lp = _LANE_POINTS
    if not (ra | rb | rc | rd) & set_ranks:
        return (
            lp[a & ~(ra | set_ranks)]
            + lp[b & ~(rb | set_ranks)]
            + lp[c & ~(rc | set_ranks)]
            + lp[d & ~(rd | set_ranks)]
        )
    key = (ra | rb << LANE | rc << 2 * LANE | rd << 3 * LANE) << _HIGH | set_ranks * SPREAD & mask
    left = mask & ~_search(key)[0]
    return (
        lp[left & RANK_MASK]
        + lp[left >> LANE & RANK_MASK]
        + lp[left >> 2 * LANE & RANK_MASK]
        + lp[left >> 3 * LANE]
    )


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
        whole += points(cand & ~_search(run_cards << _HIGH | set_cards)[0])
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


__all__ = [
    "Arrangement",
    "arrange",
    "best_arrangement",
    "deadwood",
    "discards_within",
    "melds_within",
    "points",
]
