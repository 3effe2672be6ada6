"""Settlement of a hand ended by a knock, gin or big gin (RULES.md section 6).

After a plain knock the defender lays off deadwood onto the knocker's melds: a 4th card onto a
3-card set, or cards extending a run at either end, chains included (a 7 then an 8 onto
4-5-6). Two methods, the ruleset's ``layoff`` field:

* ``joint`` (RULES.md §6.2, seed 002): the defender's own melds and its layoffs are chosen
  jointly by one exact search: every feasible set S of cards that could be laid off is tried,
  and the defender keeps the best arrangement of the rest, so the final deadwood is
  ``min over S of deadwood(defender & ~S)``. It may break a 4-set to lay its 7 and then an 8
  onto a 4-5-6 run.
* ``arrange_first`` (seed 000, ``cardems``): the defender's hand is arranged into its best melds
  first (``arrange()``), and only the deadwood left over is laid off, chains included, by the
  same exact search over those cards.

Tie-breaks (deterministic):

* Defender, among plans with the same final deadwood: fewer cards laid off; then the plan whose
  (card id, meld index) pairs, sorted, form the smaller tuple. The defender's melds are then
  ``arrange()`` of what is left, with its own tie-break.
* Knocker, among all its arrangements of minimum deadwood (``all_best_arrangements``): the one
  that leaves the defender the highest final deadwood (the least to lay off); then the one
  ``arrange()`` chooses; then the one allowing fewer layoffs; then the first in the order of
  ``all_best_arrangements``. Gin and big gin have no layoffs, so they keep ``arrange()``'s melds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.engine.cards import (
    FULL_DECK_MASK,
    POINTS,
    SPREAD,
    code,
    codes_mask,
    mask_codes,
    parse_card,
)
from app.engine.melds import arrange, deadwood, melds_within

OUTCOMES = ("knock", "undercut", "gin", "big_gin")
LAYOFF_METHODS = ("joint", "arrange_first")


@dataclass(frozen=True, slots=True)
class Layoff:
    """A card laid off by the defender and the index (into ``knocker_melds``) of its meld."""

    card: int
    meld: int


@dataclass(frozen=True, slots=True)
class Settlement:
    """The revealed hands, the layoffs and the score of a hand ended by a knock.

    ``points`` go to the knocker when ``knocker_won`` is True, else to the defender; they are
    already multiplied. The defender's melds, deadwood mask and deadwood are after layoffs.
    Layoffs are listed in the order they would be laid: meld by meld, and on a run the low end
    first, each end from the inside out.
    """

    outcome: str
    knocker_won: bool
    points: int
    knocker_melds: tuple[int, ...]
    knocker_deadwood_mask: int
    knocker_deadwood: int
    defender_melds: tuple[int, ...]
    defender_deadwood_mask: int
    defender_deadwood: int
    layoffs: tuple[Layoff, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict with card codes; masks become ``*_cards`` code lists."""
        return {
            "outcome": self.outcome,
            "knocker_won": self.knocker_won,
            "points": self.points,
            "knocker_melds": [mask_codes(m) for m in self.knocker_melds],
            "knocker_deadwood_cards": mask_codes(self.knocker_deadwood_mask),
            "knocker_deadwood": self.knocker_deadwood,
            "defender_melds": [mask_codes(m) for m in self.defender_melds],
            "defender_deadwood_cards": mask_codes(self.defender_deadwood_mask),
            "defender_deadwood": self.defender_deadwood,
            "layoffs": [{"card": code(lay.card), "meld": lay.meld} for lay in self.layoffs],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Settlement:
        """The inverse of ``to_dict``; raises ValueError on an unknown outcome or card code."""
        outcome = str(d["outcome"])
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome: {outcome!r}")
        return cls(
            outcome=outcome,
            knocker_won=bool(d["knocker_won"]),
            points=int(d["points"]),
            knocker_melds=tuple(codes_mask(m) for m in d["knocker_melds"]),
            knocker_deadwood_mask=codes_mask(d["knocker_deadwood_cards"]),
            knocker_deadwood=int(d["knocker_deadwood"]),
            defender_melds=tuple(codes_mask(m) for m in d["defender_melds"]),
            defender_deadwood_mask=codes_mask(d["defender_deadwood_cards"]),
            defender_deadwood=int(d["defender_deadwood"]),
            layoffs=tuple(
                Layoff(int(parse_card(lay["card"])), int(lay["meld"])) for lay in d["layoffs"]
            ),
        )


def _by_lowest_card(meld: int) -> int:
    return meld & -meld


def all_best_arrangements(mask: int) -> list[tuple[int, ...]]:
    """Every arrangement of ``mask`` with the minimum deadwood, as tuples of meld masks.

    Each tuple is ordered by lowest card id, as ``Arrangement.meld_masks``; the list is sorted
    by those tuples. Ties come from a card usable in two melds (a 4-set and a run through one of
    its cards), from long runs split differently, and from equal-point deadwood choices.
    """
    target = deadwood(mask)
    # A meld taken for the lowest undecided card has that card as its own lowest card.
    by_low: dict[int, list[int]] = {}
    for m in melds_within(mask):
        by_low.setdefault(m & -m, []).append(m)
    out: list[tuple[int, ...]] = []

    def go(rest: int, dead: int, chosen: tuple[int, ...]) -> None:
        if not rest:
            if dead == target:
                out.append(tuple(sorted(chosen, key=_by_lowest_card)))
            return
        low = rest & -rest
        card_points = POINTS[low.bit_length() - 1]
        if dead + card_points <= target:
            go(rest ^ low, dead + card_points, chosen)
        for m in by_low.get(low, ()):
            if m & rest == m:
                go(rest ^ m, dead, (*chosen, m))

    go(mask, 0, ())
    return sorted(out)


_Plan = tuple[int, tuple[Layoff, ...]]  # (cards laid off, layoffs in laying order)


def _meld_options(meld: int, index: int, defender: int) -> list[_Plan]:
    """Every way the defender can extend one knocker meld, the empty way first."""
    lo = (meld & -meld).bit_length() - 1
    hi = meld.bit_length() - 1
    options: list[_Plan] = [(0, ())]
    if lo >> 4 == hi >> 4:  # one suit lane: a run
        down: list[int] = []
        c = lo - 1
        while c & 15 != 15 and defender >> c & 1:  # rank 15 is below an ace (or c == -1)
            down.append(c)
            c -= 1
        up: list[int] = []
        c = hi + 1
        while c & 15 < 13 and defender >> c & 1:
            up.append(c)
            c += 1
        for i in range(len(down) + 1):
            for j in range(len(up) + 1):
                if i or j:
                    cards = down[:i] + up[:j]
                    used = sum(1 << x for x in cards)
                    options.append((used, tuple(Layoff(x, index) for x in cards)))
    elif meld.bit_count() == 3:
        fourth = (SPREAD << (lo & 15)) & ~meld & defender
        if fourth:
            options.append((fourth, (Layoff(fourth.bit_length() - 1, index),)))
    return options


def _best_layoffs(knocker_melds: tuple[int, ...], defender: int, pool: int) -> tuple[int, _Plan]:
    """(defender's final deadwood, its best layoff plan of cards from ``pool``) against these
    knocker melds."""
    plans: list[_Plan] = [(0, ())]
    for i, meld in enumerate(knocker_melds):
        options = _meld_options(meld, i, pool)
        if len(options) > 1:
            plans = [
                (used | more, lays + extra)
                for used, lays in plans
                for more, extra in options
                if not used & more
            ]
    dead_of: dict[int, int] = {}

    def rank(plan: _Plan) -> tuple[int, int, list[tuple[int, int]]]:
        used, lays = plan
        dead = dead_of.get(used)
        if dead is None:
            dead = dead_of[used] = deadwood(defender & ~used)
        return dead, len(lays), sorted((lay.card, lay.meld) for lay in lays)

    best = min(plans, key=rank)
    return dead_of[best[0]], best


def _union(melds: tuple[int, ...]) -> int:
    out = 0
    for m in melds:
        out |= m
    return out


def settle(
    knocker_hand: int,
    defender_hand: int,
    *,
    big_gin: bool,
    gin_bonus: int,
    big_gin_bonus: int,
    undercut_bonus: int,
    multiplier: int = 1,
    layoff: str = "joint",
) -> Settlement:
    """Settle a hand ended by a knock (gin when the knocker's deadwood is 0) or big gin.

    ``knocker_hand`` holds the knocker's 10 cards after the discard (11 for big gin),
    ``defender_hand`` the defender's 10; ``layoff`` is one of ``LAYOFF_METHODS``. The knock
    limit is the caller's to check. Raises ValueError for big gin with deadwood, hands that
    share a card, a bit that is no card, or an unknown layoff method.
    """
    if layoff not in LAYOFF_METHODS:
        raise ValueError(f"unknown layoff method: {layoff!r}")
    if knocker_hand & defender_hand:
        raise ValueError("the knocker's and the defender's hands share a card")
    if (knocker_hand | defender_hand) & ~FULL_DECK_MASK:
        raise ValueError("a hand holds a bit that is not a card")
    knocker = arrange(knocker_hand)
    k = knocker.deadwood
    if big_gin and k:
        raise ValueError(f"big gin needs 0 deadwood, the hand has {k}")
    if k == 0:
        defender = arrange(defender_hand)
        bonus = big_gin_bonus if big_gin else gin_bonus
        return Settlement(
            outcome="big_gin" if big_gin else "gin",
            knocker_won=True,
            points=(defender.deadwood + bonus) * multiplier,
            knocker_melds=knocker.meld_masks,
            knocker_deadwood_mask=0,
            knocker_deadwood=0,
            defender_melds=defender.meld_masks,
            defender_deadwood_mask=defender.deadwood_mask,
            defender_deadwood=defender.deadwood,
            layoffs=(),
        )

    arrange_choice = knocker.meld_masks
    own = arrange(defender_hand)
    pool = defender_hand if layoff == "joint" else own.deadwood_mask
    choices = [
        (m, *_best_layoffs(m, defender_hand, pool)) for m in all_best_arrangements(knocker_hand)
    ]
    # Highest defender deadwood; then arrange()'s own choice; then fewer layoffs; then list order.
    melds, d, (laid, layoffs) = min(
        choices, key=lambda c: (-c[1], c[0] != arrange_choice, len(c[2][1]))
    )
    # Arranged first, the defender keeps its melds and only deadwood was laid off.
    defender = arrange(defender_hand & ~laid) if layoff == "joint" else own
    knocker_won = k < d
    return Settlement(
        outcome="knock" if knocker_won else "undercut",
        knocker_won=knocker_won,
        points=(d - k if knocker_won else k - d + undercut_bonus) * multiplier,
        knocker_melds=melds,
        knocker_deadwood_mask=knocker_hand & ~_union(melds),
        knocker_deadwood=k,
        defender_melds=defender.meld_masks,
        defender_deadwood_mask=defender.deadwood_mask & ~laid,
        defender_deadwood=d,
        layoffs=layoffs,
    )


__all__ = ["Layoff", "Settlement", "all_best_arrangements", "settle"]
