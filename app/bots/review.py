"""A finished hand's review: every decision of each seat judged by LUNA from that seat's view.

For each move of the hand (``app.engine.replay``) the seat's view is rebuilt as it was then
(``seat_view``) with the hand's events as that seat received them (``for_recipient``): its own
cards and the public play, never the opponent's hidden cards nor anything later. Every legal
option is then played out by LUNA's search (``app.bots.search``: the hidden cards sampled from
hard's model of the opponent, each option on the same samples) and valued in the hand's
points to the seat, gins, undercuts and bonuses included (negative: the opponent scores). The
samples' seed comes from what the seat saw and ``ReviewBudget.seed`` alone, so two hands that
differ only in what a seat could not see give that seat the same values.

An option's ``cost`` is the best option's mean minus its own. A move is marked when its cost is
at least a threshold (``MARKS``) and clear of the sampling noise (``EVIDENCE`` standard errors
of the paired difference). A seat's ``accuracy`` is the share of its decisions with a real
choice that cost less than the first threshold.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.bots.knock import Sampler
from app.bots.knowledge import Knowledge, build
from app.bots.levels import HardBot
from app.bots.search import EVIDENCE, Hand, Move, Terms, World, _seed, evaluate, sample_world
from app.engine.cards import code, parse_card
from app.engine.replay import Step
from app.engine.settlement import settle
from app.engine.state import BIG_GIN, Event
from app.engine.views import seat_view

# (mark, the least cost in points that earns it), worst first.
MARKS: tuple[tuple[str, float], ...] = (("blunder", 10.0), ("mistake", 5.0), ("inaccuracy", 2.0))


@dataclass(frozen=True, slots=True)
class ReviewBudget:
    """Samples of the hidden cards per decision (every option is played out on each) and the
    seed mixed with what the seat saw."""

    samples: int = 64
    seed: int = 0x5EED


class _Points(Terms):
    """Terms that value a hand's result by its points to the searching seat, not by the match."""

    __slots__ = ()

    def value(self, mine: int) -> float:
        return float(mine)


def options_of(view: Mapping[str, Any]) -> list[Move]:
    """Every move a seat's view allows now but resigning and the next hand, in a fixed order."""
    legal = view["legal"]
    kinds = set(legal["actions"])
    out: list[Move] = []
    for kind in ("take_upcard", "pass", "draw_discard", "draw_stock"):
        if kind in kinds:
            out.append((kind, None))
    if "discard" in kinds:
        out += [("discard", int(parse_card(c))) for c in legal["discards"]]
        out += [("knock", int(parse_card(x["card"]))) for x in legal["knock_discards"]]
    if BIG_GIN in kinds:
        out.append((BIG_GIN, None))
    return out


def _value(move: Move, world: World, hand: Hand, terms: Terms) -> float:
    if move[0] == BIG_GIN:
        s = settle(
            world.hands[0],
            world.hands[1],
            big_gin=True,
            gin_bonus=terms.gin_bonus,
            big_gin_bonus=terms.big_gin_bonus,
            undercut_bonus=terms.undercut_bonus,
            multiplier=terms.multiplier,
            layoff=terms.layoff,
        )
        return terms.value(s.points)
    return evaluate(move, world, hand, terms)


def judge(
    view: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    options: Sequence[Move],
    budget: ReviewBudget,
) -> list[list[float]]:
    """Per option, its points on each sample of the hidden cards, as the seat of ``view`` (its
    view and its events, nothing else) can judge them."""
    k: Knowledge = build(view, events)
    bot = HardBot()
    rng = random.Random(_seed(view, events, budget.seed))
    terms = _Points.of(view)
    top = k.top
    offer_next = "pass" in k.actions and top is not None and not k.opp_refused >> top & 1
    hand = Hand(
        k.knock_limit, k.dead_hand_at, k.big_gin, bot.gin_wait, bot.gin_wait_turns, offer_next
    )
    sample = Sampler(k, bot.holding(k), int(k.opp_draws * bot.extra_per_draw))
    values: list[list[float]] = [[] for _ in options]
    for _ in range(budget.samples):
        world = sample_world(k, sample, rng)
        for i, move in enumerate(options):
            copy = World(list(world.hands), list(world.stock), list(world.pile))
            values[i].append(_value(move, copy, hand, terms))
    return values


def _move_json(move: Move) -> dict[str, Any]:
    kind, card = move
    return {"kind": kind} if card is None else {"kind": kind, "card": code(card)}


def mark_of(cost: float, error: float) -> str | None:
    """The mark a move of this ``cost`` earns, its paired difference's standard error
    ``error``: none while the cost is within the noise."""
    if cost <= EVIDENCE * error:
        return None
    return next((name for name, least in MARKS if cost >= least), None)


def review_step(step: Step, events: Sequence[Event], budget: ReviewBudget) -> dict[str, Any]:
    """One decision: its options with their mean points, the best, the chosen, what it cost."""
    seat = step.seat
    view = seat_view(step.before, seat)
    seen = [e.for_recipient(seat) for e in events[: step.seen]]
    chosen: Move = (step.action.kind, step.action.card)
    options = options_of(view)
    out: dict[str, Any] = {
        "index": step.index,
        "seat": seat,
        "phase": step.before.hand.phase,
        "chosen": _move_json(chosen),
    }
    if chosen not in options or len(options) < 2:
        # A forced move (or a resignation): nothing to judge.
        return {**out, "forced": True, "options": [], "best": out["chosen"], "cost": 0.0,
                "mark": None}  # fmt: skip
    values = judge(view, seen, options, budget)
    means = [sum(v) / len(v) for v in values]
    best = max(range(len(options)), key=lambda i: (means[i], -i))
    mine = options.index(chosen)
    diffs = [b - c for b, c in zip(values[best], values[mine], strict=True)]
    n = len(diffs)
    cost = sum(diffs) / n
    spread = max(0.0, sum(d * d for d in diffs) / n - cost * cost)
    error = (spread / max(1, n - 1)) ** 0.5
    ranked = sorted(range(len(options)), key=lambda i: (-means[i], i))
    return {
        **out,
        "forced": False,
        "options": [{**_move_json(options[i]), "points": round(means[i], 2)} for i in ranked],
        "best": _move_json(options[best]),
        "cost": round(cost, 2),
        "mark": mark_of(cost, error),
    }


def summary(decisions: Sequence[Mapping[str, Any]], hands: int = 1) -> list[dict[str, Any]]:
    """Per seat: its judged decisions, marks, points lost (in all and per hand), accuracy."""
    least = MARKS[-1][1]
    out = []
    for seat in (0, 1):
        mine = [d for d in decisions if d["seat"] == seat and not d["forced"]]
        lost = sum(float(d["cost"]) for d in mine)
        good = sum(1 for d in mine if float(d["cost"]) < least)
        marks = {name: sum(1 for d in mine if d["mark"] == name) for name, _ in MARKS}
        out.append(
            {
                "seat": seat,
                "decisions": len(mine),
                "accuracy": round(100.0 * good / len(mine), 1) if mine else None,
                "points_lost": round(lost, 2),
                "points_lost_per_hand": round(lost / max(1, hands), 2),
                "inaccuracies": marks["inaccuracy"],
                "mistakes": marks["mistake"],
                "blunders": marks["blunder"],
            }
        )
    return out


def review_hand(
    steps: Sequence[Step], events: Sequence[Event], budget: ReviewBudget
) -> dict[str, Any]:
    """Every decision of a replayed hand (``app.engine.replay``) and each seat's summary."""
    decisions = [review_step(s, events, budget) for s in steps]
    return {
        "budget": {"samples": budget.samples, "seed": budget.seed},
        "decisions": decisions,
        "seats": summary(decisions),
    }
