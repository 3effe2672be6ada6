"""The bots: TITO (easy), CARMEN (medium), LUNA (hard), plus random for the tests.

All levels follow the same turn structure and the same rule: big gin and gin are always
taken. They differ in what they observe (seed 002): easy looks only at its own melds; medium
also counts its outs among the unseen cards, weighs undercut risk and avoids feeding the
opponent's pickups; hard models what the opponent holds from everything public and plays by
expected deadwood after the next draws, then searches its real choices by match value over
samples of the hidden cards. (The arena's EAAI baseline lives in ``benchmarks/bots.py``.)
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Mapping
from typing import Any

from app.bots.base import Bot, Events, NoMoveError, View
from app.bots.evaluate import (
    NEAR,
    SAME_RANK,
    STEP1,
    STEP2,
    Outlook,
    best_discard_deadwood,
    bits,
)
from app.bots.knock import knock_risk
from app.bots.knowledge import Knowledge, build
from app.bots.opponent import Habits
from app.bots.opponent import read as read_habits
from app.bots.search import Budget, Move, Outcome, search
from app.engine.cards import POINTS, RANKS, SUITS, parse_card
from app.engine.melds import arrange, deadwood, discards_within

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


class EasyBot(_Player):
    """TITO: melds what it can, sheds its costliest deadwood, knocks at the first chance.

    Takes a card only to meld it; throws the dearest deadwood card, among equals the one with
    the fewest partners in hand.
    """

    level = "easy"

    def wants_top(self, k: Knowledge) -> bool:
        top = k.top
        return top is not None and _joins_meld(k.hand, top)

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        return True

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        loose = [c for c in bits(arrange(k.hand).deadwood_mask) if c in options]
        if not loose:
            return min(options, key=lambda c: deadwood(k.hand & ~(1 << c)))
        return min(loose, key=lambda c: (-POINTS[c], (k.hand & NEAR[c]).bit_count(), c))


class MediumBot(_Player):
    """CARMEN: counts outs among unseen cards, weighs undercut risk, avoids feeding pickups.

    Discards by expected deadwood after the next stock draw, over the unseen cards alike
    (its outs: the draws that would join a meld or undercut its costliest card), so flexible
    cards are kept. A discard's cost adds the chance it lets the opponent meld, reckoning the
    cards the opponent took as held and every unseen card alike: a card next to a pickup is
    the dearest to feed. Draws the discard only to meld it. Knocks at once unless the
    undercut risk is high and the stock leaves time to improve: the risk is measured on
    sampled opponent hands (its pickups plus unseen cards alike, the best of as many extra
    cards as it has drawn), each settled exactly against the knocking hand.
    """

    level = "medium"
    danger_weight = 3.0
    max_risk = 0.15
    risk_samples = 24
    # Extra cards per opponent draw a sampled hand keeps the best of (see app.bots.knock).
    extra_per_draw = 1.0

    def outlook(self, k: Knowledge) -> Outlook:
        return Outlook.uniform(k.unseen)

    def holding(self, k: Knowledge) -> dict[int, float]:
        """P(opponent holds u): the cards it took for sure, each unseen card alike."""
        unseen = k.unseen
        p = k.opp_unknown_count / max(1, unseen.bit_count())
        chance = dict.fromkeys(bits(unseen), p)
        for c in bits(k.opp_known):
            chance[c] = 1.0
        return chance

    def pick_discard(self, k: Knowledge, options: list[int]) -> int:
        return self.ranked_discards(k, options)[0]

    def ranked_discards(self, k: Knowledge, options: list[int]) -> list[int]:
        """The discards best first: expected deadwood after the next draw plus feeding risk."""
        out = self.outlook(k)
        chance = self.holding(k)
        return sorted(
            options,
            key=lambda c: (
                out.expected_deadwood(k.hand & ~(1 << c)) + self.danger_weight * _danger(c, chance),
                -POINTS[c],
                c,
            ),
        )

    def wants_top(self, k: Knowledge) -> bool:
        top = k.top
        return top is not None and _joins_meld(k.hand, top)

    def turns_left(self, k: Knowledge) -> int:
        """Stock draws left to this seat before the hand goes dead."""
        return (k.stock_size - k.dead_hand_at) // 2

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        if self.turns_left(k) <= 2:
            return True
        return self.undercut_risk(k, dw) <= self.max_risk

    def undercut_risk(self, k: Knowledge, dw: int) -> float:
        """The undercut chance of knocking now, over opponent hands sampled by ``holding``."""
        risk = knock_risk(
            k,
            _knock_hand(k, dw),
            self.holding(k),
            samples=self.risk_samples,
            extra=int(k.opp_draws * self.extra_per_draw),
            habits=self.opponent_habits(),
        )
        return risk.undercut

    def opponent_habits(self) -> Habits | None:
        """The opponent model of this decision (medium has none)."""
        return None


class HardBot(MediumBot):
    """LUNA: models the opponent's hand from all public play and searches its choices.

    The opponent's pickups, refusals and discards shape the chance it holds each unseen card;
    the stock draws are weighed by the chance a card is still in the stock, and a discard's
    cost adds the chance it lets the opponent meld. With a low count and stock to spare it
    waits for gin (a count that low is rarely undercut, and an opponent's knock into it often
    is); otherwise it samples likely opponent hands from its model, settles each exactly
    against the knocking hand (layoffs included) and waits when the undercut chance is too
    high; near the dead-hand count it takes any sure knock.

    Those judgements rank the candidates; then, when there is a real choice (the upcard or a
    pass; the discard pile or the stock; its best few discards; a knock or playing on), it
    searches them by match value over samples of the hidden cards (``app.bots.search``)
    within its ``budget``. With ``model`` (off in the product: docs/bots.md) it reads the
    opponent's habits from the match's earlier hands (``app.bots.opponent``: how readily it
    knocks, whether it takes discards only to meld them), and its sampled opponent hands and
    playouts follow them. With a ``guide`` the value network (``app.bots.network``, numpy,
    loaded only then) reorders its discards and judges its draws; the product level has none
    (it measured worse).
    """

    level = "hard"
    gin_wait = 6
    max_risk = 0.2
    gin_wait_turns = 4
    risk_samples = 32
    # Against a player that waits, a full draw count overrated the opponent's hand and
    # waited too long; half of it measured best.
    extra_per_draw = 0.5
    # Discards the search weighs (the heuristic's best ones).
    discard_candidates = 3

    def __init__(
        self, budget: Budget | None = None, guide: str = "", *, model: bool = False
    ) -> None:
        self.budget = budget or Budget()
        self.model = model  # read the opponent's habits from the match (app.bots.opponent)
        self.last: Outcome | None = None
        self.habits: Habits | None = None  # this decision's reading, made afresh each call
        # How the value network orders the discards (app.bots.network.GUIDES; "": not at all).
        # numpy (a development dependency) is imported only for a guide.
        if guide:
            from app.bots.network import GUIDES  # noqa: PLC0415 (numpy: a guide only)

            if guide not in GUIDES:
                raise ValueError(f"unknown guide {guide!r}; one of {GUIDES}")
        self.guide = guide
        self.view: View = {}

    def ranked_discards(self, k: Knowledge, options: list[int]) -> list[int]:
        ranked = super().ranked_discards(k, options)
        if not self.guide:
            return ranked
        from app.bots.network import guide_discards  # noqa: PLC0415 (numpy: a guide only)

        return guide_discards(self.guide, k, self.view, ranked)

    def wants_top(self, k: Knowledge) -> bool:
        if self.guide == "net" and k.top is not None:
            from app.bots.network import wants_top  # noqa: PLC0415 (numpy: a guide only)

            return wants_top(k, self.view)
        return super().wants_top(k)

    def choose(self, view: View, events: Events) -> dict[str, Any]:
        started = time.perf_counter()  # the cap covers the judgements too
        self.view = view
        self.habits = read_habits(events, int(view["you"])) if self.model else None
        actions = set(view["legal"]["actions"])
        if actions & {"next_hand", "big_gin"} or self.budget.playouts <= 0:
            return super().choose(view, events)
        k = build(view, events)
        if "take_upcard" in actions:
            # The upcard offer is a draw from the pile or none at all: the same candidates.
            candidates = [(_UPCARD[kind], card) for kind, card in self.draw_candidates(k, True)]
        elif "draw_stock" in actions:
            candidates = self.draw_candidates(k, "draw_discard" in actions)
        elif "discard" in actions:
            candidates = self.discard_candidates_of(k, view["legal"])
        else:
            return super().choose(view, events)
        self.last = None
        if len(candidates) > 1:
            self.last = search(
                k,
                view,
                events,
                candidates,
                chance=self.holding(k),
                extra=int(k.opp_draws * self.extra_per_draw),
                budget=self.budget,
                started=started,
                wait=self.gin_wait,
                wait_turns=self.gin_wait_turns,
                habits=self.habits,
            )
            kind, card = self.last.move
        else:
            kind, card = candidates[0]
        return _act(kind, card)

    def draw_candidates(self, k: Knowledge, may_take: bool) -> list[Move]:
        """The stock, and the discard when taking it could lower the count (heuristic first)."""
        top = k.top
        if not may_take or top is None:
            return [("draw_stock", None)]
        if best_discard_deadwood(k.hand | 1 << top) >= deadwood(k.hand):
            return [("draw_stock", None)]
        moves: list[Move] = [("draw_stock", None), ("draw_discard", None)]
        return moves[::-1] if self.wants_top(k) else moves

    def discard_candidates_of(self, k: Knowledge, legal: Mapping[str, Any]) -> list[Move]:
        """Gin at once; else the best few discards and the lowest knock (heuristic first)."""
        knocks = sorted(
            (int(x["deadwood"]), -POINTS[c], c)
            for x in legal["knock_discards"]
            for c in [int(parse_card(x["card"]))]
        )
        if knocks and knocks[0][0] == 0:
            return [("knock", knocks[0][2])]
        options = [int(parse_card(c)) for c in legal["discards"]]
        moves: list[Move] = [
            ("discard", c) for c in self.ranked_discards(k, options)[: self.discard_candidates]
        ]
        if knocks:
            knock: Move = ("knock", knocks[0][2])
            moves = [knock, *moves] if self.should_knock(k, knocks[0][0]) else [*moves, knock]
        return moves

    def holding(self, k: Knowledge) -> dict[int, float]:
        """P(opponent holds u): its pickups for sure; unseen cards shaped by pickups, refusals
        and discards."""
        weight = dict.fromkeys(bits(k.unseen), 1.0)
        _shape(weight, k.opp_known, (4.0, 3.0, 1.5))
        _shape(weight, k.opp_discards, (0.4, 0.5, 0.8))
        _shape(weight, k.opp_refused, (0.6, 0.6, 0.85))
        total = sum(weight.values()) or 1.0
        n = k.opp_unknown_count
        chance = {u: min(0.95, n * w / total) for u, w in weight.items()}
        for c in bits(k.opp_known):
            chance[c] = 1.0
        return chance

    def opponent_habits(self) -> Habits | None:
        return self.habits

    def outlook(self, k: Knowledge) -> Outlook:
        held = self.holding(k)
        return Outlook(k.unseen, {u: 1.0 - held[u] for u in bits(k.unseen)})

    def should_knock(self, k: Knowledge, dw: int) -> bool:
        if self.turns_left(k) <= 2:
            return True
        if dw <= self.gin_wait and self.turns_left(k) > self.gin_wait_turns:
            return False
        return self.undercut_risk(k, dw) <= self.max_risk


# The upcard offer's moves for the draw's: take the pile's card, or leave it.
_UPCARD = {"draw_discard": "take_upcard", "draw_stock": "pass"}


def _knock_hand(k: Knowledge, dw: int) -> int:
    """The 10 cards the turn structure knocks with at deadwood ``dw`` (its choice of card)."""
    options = [(d, -POINTS[c], c) for c, d in discards_within(k.hand, dw, k.cannot_discard)]
    return k.hand & ~(1 << min(options)[2])


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
    "easy": EasyBot,
    "medium": MediumBot,
    "hard": HardBot,
}
LEVELS = tuple(_LEVELS)


def get_bot(level: str, budget: Budget | None = None, *, model: bool = False) -> Bot:
    """The bot for ``level``: easy, medium, hard or random; ``budget`` is hard's search budget
    (``Budget()`` when None), ``model`` whether hard reads the opponent's habits."""
    try:
        cls = _LEVELS[level]
    except KeyError:
        raise ValueError(f"unknown bot level {level!r}; one of {list(LEVELS)}") from None
    return HardBot(budget, model=model) if cls is HardBot else cls()
