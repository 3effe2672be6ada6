"""The bots: TITO (easy), CARMEN (medium), LUNA (hard), plus random and baseline for the arena.

All levels follow the same turn structure and the same rule: big gin and gin are always
taken. They differ in what they observe (seed 002): easy looks only at its own melds; medium
also counts its outs among the unseen cards, weighs undercut risk and avoids feeding the
opponent's pickups; hard models what the opponent holds from everything public and plays by
expected deadwood after the next draws.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Mapping
from typing import Any

from app.bots.base import Bot, Events, NoMoveError, View
from app.bots.evaluate import (
    NEAR,
    SAME_RANK,
    STEP1,
    STEP2,
    Outlook,
    adjacent_mask,
    bits,
    max_points,
    near_mask,
)
from app.bots.knowledge import Knowledge, build
from app.engine.cards import POINTS, RANKS, SUITS, parse_card
from app.engine.melds import arrange, deadwood

DISPLAY_NAMES: dict[str, str] = {"easy": "TITO", "medium": "CARMEN", "hard": "LUNA"}


def _code(c: int) -> str:
    return RANKS[c & 15] + SUITS[c >> 4]


def _act(kind: str, card: int | None = None) -> dict[str, Any]:
    return {"kind": kind} if card is None else {"kind": kind, "card": _code(card)}


class RandomBot:
    """A uniformly random legal action (never resign), seeded from what it sees."""

    level = "random"

    def choose(self, view: View, events: Events) -> dict[str, Any]:
        legal = view["legal"]
        moves: list[dict[str, Any]] = []
        for kind in legal["actions"]:
            if kind == "discard":
                moves += [{"kind": kind, "card": c} for c in legal["discards"]]
            elif kind == "knock":
                moves += [{"kind": kind, "card": k["card"]} for k in legal["knock_discards"]]
            elif kind != "resign":
                moves.append({"kind": kind})
        if not moves:
            raise NoMoveError("nothing to do")
        seen = json.dumps([view, list(events)], sort_keys=True, default=str).encode()
        return random.Random(hashlib.sha256(seen).digest()).choice(moves)


class _Player:
    """The turn structure shared by every level; subclasses supply the three judgements."""

    level = ""

    def choose(self, view: View, events: Events) -> dict[str, Any]:
        legal = view["legal"]
        actions = set(legal["actions"])
        if "next_hand" in actions:
            return _act("next_hand")
        if "big_gin" in actions:
            return _act("big_gin")
        k = build(view, events)
        if "take_upcard" in actions:
            return _act("take_upcard" if self.wants_top(k) else "pass")
        if "draw_stock" in actions:
            take = "draw_discard" in actions and self.wants_top(k)
            return _act("draw_discard" if take else "draw_stock")
        if "discard" in actions:
            knocks = sorted(
                (
                    (int(x["deadwood"]), -POINTS[c], c)
                    for x in legal["knock_discards"]
                    for c in [int(parse_card(x["card"]))]
                ),
            )
            if knocks and knocks[0][0] == 0:
                return _act("knock", knocks[0][2])
            if knocks and self.should_knock(k, knocks[0][0]):
                return _act("knock", knocks[0][2])
            options = [int(parse_card(c)) for c in legal["discards"]]
            return _act("discard", self.pick_discard(k, options))
        raise NoMoveError("nothing to do")

    def wants_top(self, k: Knowledge) -> bool:
        raise NotImplementedError

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        raise NotImplementedError

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        raise NotImplementedError


def _joins_meld(hand: int, c: int) -> bool:
    return bool(arrange(hand | 1 << c).melded_mask >> c & 1)


class BaselineBot(_Player):
    """Takes a card only to meld it, throws the highest unmelded card, knocks at once."""

    level = "baseline"

    def wants_top(self, k: Knowledge) -> bool:
        top = k.top
        return top is not None and _joins_meld(k.hand, top)

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        return True

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        loose = [c for c in bits(arrange(k.hand).deadwood_mask) if c in options]
        if loose:
            return max(loose, key=lambda c: (POINTS[c], c & 15))
        return min(options, key=lambda c: deadwood(k.hand & ~(1 << c)))


class EasyBot(BaselineBot):
    """TITO: melds what it can, sheds its costliest deadwood, knocks at the first chance."""

    level = "easy"

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        # The dearest deadwood card; among equals the one with the fewest partners in hand.
        loose = [c for c in bits(arrange(k.hand).deadwood_mask) if c in options]
        if not loose:
            return super().pick_discard(k, options)
        return min(loose, key=lambda c: (-POINTS[c], (k.hand & NEAR[c]).bit_count(), c))


def _opp_deadwood(k: Knowledge) -> float:
    """A rough mean of the opponent's deadwood, from how many cards it has drawn."""
    progress = k.opp_draws + 1.5 * k.opp_known.bit_count()
    return max(3.0, 48.0 * math.exp(-progress / 8.0))


def _undercut_chance(mine: int, mean: float) -> float:
    """P(opponent's deadwood <= mine) if its deadwood is roughly normal around ``mean``."""
    sigma = max(3.0, 0.45 * mean)
    return 0.5 * math.erfc((mean - mine - 0.5) / (sigma * math.sqrt(2)))


class MediumBot(_Player):
    """CARMEN: counts outs among unseen cards, weighs undercut risk, avoids feeding pickups."""

    level = "medium"
    feed_penalty = 1.5
    knock_bonus = 10.0
    meld_weight = 1.0
    swap_weight = 1.0
    max_risk = 1.0

    def outlook(self, k: Knowledge) -> Outlook:
        return Outlook.uniform(k.unseen)

    def best_after(self, k: Knowledge, hand: int, options: list[int], out: Outlook) -> int:
        return min(options, key=lambda c: (self.score(k, hand & ~(1 << c), c, out), -POINTS[c], c))

    def value(self, k: Knowledge, kept: int, out: Outlook) -> float:
        """Expected deadwood after the next draw, less a bonus for the chance to knock then."""
        p = out.outlook(kept, k.knock_limit)
        return (
            p.deadwood
            - self.meld_weight * p.meld_gain
            - self.swap_weight * p.swap_gain
            - self.knock_bonus * p.reach
        )

    def score(self, k: Knowledge, kept: int, thrown: int, out: Outlook) -> float:
        feeds = adjacent_mask(k.opp_known) >> thrown & 1
        return self.value(k, kept, out) + self.feed_penalty * feeds

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        return self.best_after(k, k.hand, options, self.outlook(k))

    def wants_top(self, k: Knowledge) -> bool:
        top = k.top
        if top is None or not (near_mask(k.hand) >> top & 1 or POINTS[top] < _top_loose(k.hand)):
            return False
        out = self.outlook(k)
        hand = k.hand | 1 << top
        options = list(bits(k.hand))
        taken = self.value(k, hand & ~(1 << self.best_after(k, hand, options, out)), out)
        return taken < self.stock_value(k, out)

    def stock_value(self, k: Knowledge, out: Outlook) -> float:
        """The value expected after a stock draw: one draw's expected gain realised."""
        return self.value(k, k.hand, out) - (deadwood(k.hand) - out.expected_deadwood(k.hand))

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        if k.stock_size - k.dead_hand_at <= 2:
            return True
        return _undercut_chance(dw, _opp_deadwood(k)) <= self.max_risk


def _top_loose(hand: int) -> int:
    return max_points(arrange(hand).deadwood_mask)


class HardBot(MediumBot):
    """LUNA: models the opponent's hand from all public play and plays by expected deadwood."""

    level = "hard"
    danger_weight = 6.0

    def holding(self, k: Knowledge) -> dict[int, float]:
        """P(opponent holds u) for each unseen card u, from pickups, refusals and discards."""
        weight = dict.fromkeys(bits(k.unseen), 1.0)
        _shape(weight, k.opp_known, (4.0, 3.0, 1.5))
        _shape(weight, k.opp_discards, (0.4, 0.5, 0.8))
        _shape(weight, k.opp_refused, (0.6, 0.6, 0.85))
        total = sum(weight.values()) or 1.0
        n = k.opp_unknown_count
        return {u: min(0.95, n * w / total) for u, w in weight.items()}

    def outlook(self, k: Knowledge) -> Outlook:
        held = self.holding(k)
        return Outlook(k.unseen, {u: 1.0 - p for u, p in held.items()})

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        held = self.holding(k)
        out = Outlook(k.unseen, {u: 1.0 - p for u, p in held.items()})
        chance = dict(held)
        for c in bits(k.opp_known):
            chance[c] = 1.0
        return min(
            options,
            key=lambda c: (
                self.value(k, k.hand & ~(1 << c), out) + self.danger_weight * _danger(c, chance),
                -POINTS[c],
                c,
            ),
        )

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        if k.stock_size - k.dead_hand_at <= 3:
            return True
        return _undercut_chance(dw, _opp_deadwood(k)) <= self.max_risk


def _shape(weight: dict[int, float], cards: int, factors: tuple[float, float, float]) -> None:
    same, step1, step2 = factors
    for t in bits(cards):
        for tables, f in ((SAME_RANK, same), (STEP1, step1), (STEP2, step2)):
            for u in bits(tables[t]):
                if u in weight:
                    weight[u] *= f


def _danger(c: int, chance: Mapping[int, float]) -> float:
    """P(the opponent can meld ``c``): it holds two of its rank, or two run neighbours."""
    p = [chance.get(u, 0.0) for u in bits(SAME_RANK[c])]
    p_set = p[0] * p[1] + p[0] * p[2] + p[1] * p[2] - 2 * p[0] * p[1] * p[2]
    miss = 1.0 - p_set
    rank, base = c & 15, c & ~15

    def at(r: int) -> float:
        return chance.get(base + r, 0.0) if 0 <= r < 13 else 0.0

    for a, b in ((rank - 2, rank - 1), (rank - 1, rank + 1), (rank + 1, rank + 2)):
        miss *= 1.0 - at(a) * at(b)
    return 1.0 - miss


_LEVELS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "baseline": BaselineBot,
    "easy": EasyBot,
    "medium": MediumBot,
    "hard": HardBot,
}
LEVELS = tuple(_LEVELS)


def get_bot(level: str) -> Bot:
    """The bot for ``level``: easy, medium, hard, random or baseline."""
    try:
        return _LEVELS[level]()
    except KeyError:
        raise ValueError(f"unknown bot level {level!r}; one of {list(LEVELS)}") from None
