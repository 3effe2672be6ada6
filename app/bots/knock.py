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


def sample_opponent(
    k: Knowledge,
    chance: Mapping[int, float],
    extra: int,
    rng: random.Random,
    habits: Habits | None = None,
) -> int:
    """One plausible opponent hand: its known cards plus unknown ones drawn by ``chance``;
    with ``habits`` (``app.bots.opponent``), drawn again while it contradicts them."""
    hand = _draw(k, chance, extra, rng)
    if habits is not None:
        for _ in range(RETRIES):
            if habits.allows(k, hand, rng):
                break
            hand = _draw(k, chance, extra, rng)
    return hand


def _draw(k: Knowledge, chance: Mapping[int, float], extra: int, rng: random.Random) -> int:
    need = k.opp_unknown_count
    pool = [u for u in bits(k.unseen) if chance.get(u, 0.0) > 0.0]
    take = min(len(pool), need + max(0, extra))
    # Weighted sampling without replacement (Efraimidis-Spirakis keys).
    keyed = sorted(pool, key=lambda u: -(rng.random() ** (1.0 / chance[u])))
    hand = k.opp_known
    for u in keyed[:take]:
        hand |= 1 << u
    while hand.bit_count() > k.opp_count:
        a = arrange(hand)
        loose = a.deadwood_mask & ~k.opp_known or hand & ~k.opp_known
        drop = costliest(loose)
        hand &= ~(1 << drop)
    return hand


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
    undercut = 0
    total = 0.0
    for _ in range(samples):
        opp = sample_opponent(k, chance, extra, rng, habits) & ~knock_hand
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
