"""The meld search as it was before the set-choice search (commit 9e5ce35), kept as a reference.

``app.engine.melds`` must give exactly what this gives: the same deadwood and the same melds,
ties included. This is the old exact search over subsets of the candidate cards (always meld or
drop the lowest card left, memo keyed by the cards left), independent of the new code except for
``melds_within`` and ``points``, which ``test_melds`` checks against a brute-force oracle.
"""

from __future__ import annotations

from app.engine.cards import LANE, POINTS, RANK_MASK, SPREAD
from app.engine.melds import Arrangement, melds_within, points

_Best = tuple[int, tuple[int, ...]]  # (melded points, meld masks sorted ascending)


def candidates(mask: int) -> tuple[int, int]:
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
    out: list[int] = []
    while run_cards:
        low = run_cards & -run_cards
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


def search(cand: int) -> _Best:
    """Exact best melding of the candidate cards ``cand``, under the documented tie-break."""
    by_low: dict[int, list[tuple[int, int]]] = {}
    for m in melds_within(cand):
        by_low.setdefault(m & -m, []).append((m, points(m)))
    memo: dict[int, _Best] = {0: (0, ())}

    def go(rest: int) -> _Best:
        hit = memo.get(rest)
        if hit is not None:
            return hit
        low = rest & -rest
        best = go(rest ^ low)  # the lowest card stays deadwood
        options = by_low.get(low)
        if options:
            best_points, best_melds = best
            for m, meld_points in options:
                if m & rest == m:
                    sub_points, sub_melds = go(rest ^ m)
                    total = sub_points + meld_points
                    if total < best_points:
                        continue
                    merged = tuple(sorted((*sub_melds, m)))
                    tied = total == best_points
                    if tied and (len(merged), merged) >= (len(best_melds), best_melds):
                        continue
                    best_points, best_melds = total, merged
            best = (best_points, best_melds)
        memo[rest] = best
        return best

    return go(cand)


def reference_arrange(mask: int) -> tuple[int, tuple[int, ...]]:
    """(deadwood, meld masks ordered by lowest card), as ``arrange`` gave them."""
    run_cards, set_cards = candidates(mask)
    if not run_cards & set_cards:
        found = _segments(run_cards) + _set_melds(set_cards)
        return points(mask & ~(run_cards | set_cards)), tuple(sorted(found, key=lambda m: m & -m))
    _, meld_masks = search(run_cards | set_cards)
    melded = 0
    for m in meld_masks:
        melded |= m
    return points(mask & ~melded), tuple(sorted(meld_masks, key=lambda m: m & -m))


def reference_arrangement(mask: int) -> Arrangement:
    """``reference_arrange`` as the ``Arrangement`` that ``arrange`` returns."""
    _, meld_masks = reference_arrange(mask)
    melded = 0
    for m in meld_masks:
        melded |= m
    return Arrangement(mask, melded, meld_masks)


def reference_deadwood(mask: int) -> int:
    return reference_arrange(mask)[0]


def reference_discards_within(
    mask: int, limit: int, forbidden: int | None = None
) -> list[tuple[int, int]]:
    """(card, deadwood after discarding it) for each discard leaving deadwood <= ``limit``."""
    out: list[tuple[int, int]] = []
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        c = low.bit_length() - 1
        if c == forbidden:
            continue
        dw = reference_arrange(mask ^ low)[0]
        if dw <= limit:
            out.append((c, dw))
    return out


__all__ = [
    "POINTS",
    "candidates",
    "reference_arrange",
    "reference_arrangement",
    "reference_deadwood",
    "reference_discards_within",
    "search",
]
