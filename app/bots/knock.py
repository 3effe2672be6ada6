"""Knock risk by sampling: likely opponent hands, settled exactly against the knocking hand.

The opponent holds the cards it took from the discard pile and still shows, plus unknown cards
from the unseen ones. A sample draws those unknown cards, weighted by the chance the bot's
model gives each card of being held, together with as many extra cards as the opponent has
drawn from the stock, and keeps the best of them by shedding the costliest deadwood card one
at a time: the opponent has been choosing what to keep all hand long, so its hand is closer
to melds than a random deal. With the opponent model (``app.bots.opponent``) a sample that
contradicts the opponent's habits (an eager knocker that did not knock holding a knock; a
player that takes only to meld holding a meld for a card it refused) is drawn again, with the
model's probability. Each sample is then settled with the server's own settlement
(layoffs chosen exactly), giving the undercut chance and the expected points of a knock now.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import NamedTuple

from app.bots.evaluate import bits, costliest
from app.bots.knowledge import Knowledge
from app.bots.opponent import RETRIES, Habits
from app.engine.melds import arrange
from app.engine.settlement import settle


class KnockRisk(NamedTuple):
    """Over the sampled opponent hands: the undercut chance and the mean points (signed, to
    the knocker)."""

    undercut: float
    points: float


class Sampler:
    """Plausible opponent hands for one decision: its known cards plus unknown ones drawn by
    ``chance`` (with ``extra`` cards more, the costliest shed); with ``habits``
    (``app.bots.opponent``), drawn again while one contradicts them. What every sample shares
    (the unseen cards that may be held, and their weights' exponents) is worked out once."""

    __slots__ = ("_exponents", "_habits", "_k", "_pool", "_take")

    def __init__(
        self,
        k: Knowledge,
        chance: Mapping[int, float],
        extra: int,
        habits: Habits | None = None,
    ) -> None:
        pool = [u for u in bits(k.unseen) if chance.get(u, 0.0) > 0.0]
        self._k = k
        self._pool = pool
        self._exponents = [1.0 / chance[u] for u in pool]
        self._take = min(len(pool), k.opp_unknown_count + max(0, extra))
        self._habits = habits

    def __call__(self, rng: random.Random) -> int:
        """One sampled opponent hand (its cards now)."""
        hand = self._draw(rng)
        habits = self._habits
        if habits is not None:
            for _ in range(RETRIES):
                if habits.allows(self._k, hand, rng):
                    break
                hand = self._draw(rng)
        return hand

    def _draw(self, rng: random.Random) -> int:
        k, pool, exponents = self._k, self._pool, self._exponents
        # Weighted sampling without replacement (Efraimidis-Spirakis keys).
        r = rng.random
        keys = [-(r() ** e) for e in exponents]
        order = sorted(range(len(pool)), key=keys.__getitem__)
        hand = k.opp_known
        for i in order[: self._take]:
            hand |= 1 << pool[i]
        while hand.bit_count() > k.opp_count:
            a = arrange(hand)
            loose = a.deadwood_mask & ~k.opp_known or hand & ~k.opp_known
            hand &= ~(1 << costliest(loose))
        return hand


def sample_opponent(
    k: Knowledge,
    chance: Mapping[int, float],
    extra: int,
    rng: random.Random,
    habits: Habits | None = None,
) -> int:
    """One plausible opponent hand (``Sampler``'s, for a single draw)."""
    return Sampler(k, chance, extra, habits)(rng)


def knock_risk(
    k: Knowledge,
    knock_hand: int,
    chance: Mapping[int, float],
    *,
    samples: int,
    extra: int,
    habits: Habits | None = None,
) -> KnockRisk:
    """Undercut chance and expected points of knocking with the 10 cards ``knock_hand``."""
    rng = random.Random(knock_hand * 131 + k.stock_size * 7 + k.opp_known)
    sample = Sampler(k, chance, extra, habits)
    undercut = 0
    total = 0.0
    for _ in range(samples):
        opp = sample(rng) & ~knock_hand
        s = settle(
            knock_hand,
            opp,
            big_gin=False,
            gin_bonus=0,
            big_gin_bonus=0,
            undercut_bonus=k.undercut_bonus,
        )
        if s.knocker_won:
            total += s.points
        else:
            undercut += 1
            total -= s.points
    return KnockRisk(undercut / samples, total / samples)
