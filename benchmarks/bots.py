"""Bot arena: seeded matches between two players; prints the figures, then one JSON line.

    python benchmarks/bots.py --a hard --b medium --matches 400 --preset standard --seed 1
    python benchmarks/bots.py --report --matches 100 --presets standard,reino,cardems
    python benchmarks/bots.py --a hard --b eaai --target 0.8 --max-seconds 1800 --workers 2

``--report`` plays every product level against the EAAI baseline (``eaai``, below) on each
preset and prints one markdown table. Decision times are CPU time of the deciding process
(``time.process_time``), so other load on the machine does not inflate them; the wall time of
each decision is kept apart (its p99.9 and how many searches the wall-time cap cut short).

Matches come in pairs on the same deal seed with the players' seats swapped, so both play
every deal from both sides (and the dealer alternates with the seat). Like the server, the
arena holds the engine state and feeds each bot only ``seat_view`` and the match's events so
far redacted for its seat; every answer is checked against ``legal_actions``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import LEVELS, Bot, NoMoveError, get_bot
from app.bots.base import Events, View
from app.bots.evaluate import meld_draws
from app.bots.levels import HardBot
from app.bots.network import GUIDES
from app.bots.search import Budget
from app.engine import Action, apply, legal_actions, make_ruleset, new_match, parse_card
from app.engine.cards import code
from app.engine.melds import deadwood
from app.engine.state import OVER, PLAYING, Event, MatchState
from app.engine.views import seat_view

SIDES = ("a", "b")
PRODUCT_LEVELS = ("easy", "medium", "hard")


class EaaiBot:
    """The EAAI competition's SimpleGinRummyPlayer, from its published description.

    It takes the face-up card only if the card would join a meld; it discards a card leaving
    the least deadwood (a random one among equals, never the card just taken); it knocks at
    the first chance (gin when it can; big gin too where the preset has it). Not a product
    level: the arena's fixed yardstick.
    """

    level = "eaai"

    def choose(self, view: View, events: Events) -> dict[str, Any]:
        legal = view["legal"]
        actions = set(legal["actions"])
        if "next_hand" in actions:
            return {"kind": "next_hand"}
        if "big_gin" in actions:
            return {"kind": "big_gin"}
        hand = 0
        for c in view["hand"]["yours"]["cards"]:
            hand |= 1 << int(parse_card(c))
        pile = view["hand"]["discard_pile"]
        top = int(parse_card(pile[-1])) if pile else None
        melds_top = top is not None and bool(meld_draws(hand) >> top & 1)
        if "take_upcard" in actions:
            return {"kind": "take_upcard" if melds_top else "pass"}
        if "draw_stock" in actions:
            take = "draw_discard" in actions and melds_top
            return {"kind": "draw_discard" if take else "draw_stock"}
        if "discard" not in actions:
            raise NoMoveError("nothing to do")
        left = {c: deadwood(hand & ~(1 << int(parse_card(c)))) for c in legal["discards"]}
        least = min(left.values())
        ties = sorted(c for c, dw in left.items() if dw == least)
        seen = json.dumps(view, sort_keys=True, default=str).encode()
        card = random.Random(hashlib.sha256(seen).digest()).choice(ties)
        knocks = {k["card"] for k in legal["knock_discards"]}
        return {"kind": "knock" if card in knocks else "discard", "card": code(parse_card(card))}


ARENA_LEVELS = (*LEVELS, "eaai")


def arena_bot(level: str, budget: Budget) -> Bot:
    """A product level (hard with ``budget``), or the baseline. Hard takes options after
    colons, in any order: ``N`` playouts; ``model`` (the opponent model) or ``nomodel``;
    the value network's guide, one of ``GUIDES`` (``net``, ``mix``) or ``heur`` for none."""
    if level == "eaai":
        return EaaiBot()
    name, *options = level.split(":")
    guide = ""
    for option in options:
        if option.isdigit():
            budget = Budget(int(option), budget.cap_ms, budget.seed)
        elif option in GUIDES:
            guide = option
    if name == "hard":
        return HardBot(budget, guide, model="model" in options)
    return get_bot(name, budget)


# What may follow ``hard:``, besides a number of playouts.
HARD_OPTIONS = ("model", "nomodel", "heur", *GUIDES[1:])


def _level(text: str) -> str:
    name, *options = text.split(":")
    if name not in ARENA_LEVELS or (
        options and (name != "hard" or not all(o.isdigit() or o in HARD_OPTIONS for o in options))
    ):
        raise argparse.ArgumentTypeError(
            f"one of {ARENA_LEVELS}, or hard with options hard[:N][:model|nomodel][:net|mix|heur]"
        )
    return text


# A seat's answer to its view and its events; called after each move with the mover, the new
# state, the move's events and every seat's events so far (of the current hand).
Decide = Callable[[int, View, Events], dict[str, Any]]
Moved = Callable[[int, MatchState, list[Event], Mapping[int, list[dict[str, Any]]]], None]


def drive(preset: str, seed: str, first: int, decide: Decide, moved: Moved) -> MatchState:
    """One match as the server plays it: the engine holds the state and each seat sees only
    ``seat_view`` and its redacted events; every answer is checked against ``legal_actions``.
    ``first`` deals the next hand when one is over. Returns the final state."""
    state, events = new_match(make_ruleset(preset), seed)
    seen: dict[int, list[dict[str, Any]]] = {
        s: [e.for_recipient(s) for e in events] for s in (0, 1)
    }
    while state.status == PLAYING:
        seat = first if state.hand.phase == OVER else state.hand.turn
        view = seat_view(state, seat)
        move = decide(seat, view, seen[seat])
        action = Action.from_dict(move)
        if action not in legal_actions(state, seat):
            raise AssertionError(f"seat {seat} chose an illegal {move} in {view}")
        state, events = apply(state, seat, action)
        for event in events:
            for s in (0, 1):
                seen[s].append(event.for_recipient(s))  # the match's events, as the server's
        moved(seat, state, events, seen)
    return state


def play_match(job: tuple[str, str, str, str, int, Budget]) -> dict[str, Any]:
    """One match; ``a_seat`` is the seat of player a. Per-side tallies and decision times."""
    level_a, level_b, preset, seed, a_seat, budget = job
    bots = {a_seat: arena_bot(level_a, budget), 1 - a_seat: arena_bot(level_b, budget)}
    side = {a_seat: "a", 1 - a_seat: "b"}
    tally: dict[str, Any] = {
        "hands": 0,
        "dead": 0,
        **{
            f"{k}_{s}": 0
            for s in SIDES
            for k in ("points", "gin", "big_gin", "knock", "undercut", "won")
        },
        **{f"{k}_{s}": [] for s in SIDES for k in ("ms", "wall")},
        **{f"{k}_{s}": 0 for s in SIDES for k in ("cut", "searched", "overruled")},
    }

    def decide(seat: int, view: View, events: Events) -> dict[str, Any]:
        wall, cpu = time.perf_counter(), time.process_time()
        bot = bots[seat]
        move = bot.choose(view, events)
        tally[f"ms_{side[seat]}"].append((time.process_time() - cpu) * 1000)
        tally[f"wall_{side[seat]}"].append((time.perf_counter() - wall) * 1000)
        if isinstance(bot, HardBot) and bot.last is not None:
            tally[f"cut_{side[seat]}"] += bot.last.cut_short
            tally[f"searched_{side[seat]}"] += 1
            # The candidates are valued in the judgements' order: a search that chose
            # another move than the first overruled them.
            tally[f"overruled_{side[seat]}"] += bot.last.move != next(
                iter(bot.last.values), bot.last.move
            )
        return move

    def moved(seat: int, state: MatchState, events: list[Event], seen: Mapping[int, Any]) -> None:
        for event in events:
            if event.type == "hand_over":
                _count(tally, event.public, side)

    state = drive(preset, seed, a_seat, decide, moved)
    tally["winner"] = side[state.winner] if state.winner is not None else None
    return tally


def _count(tally: dict[str, Any], result: dict[str, Any], side: dict[int, str]) -> None:
    tally["hands"] += 1
    outcome = result["outcome"]
    if outcome == "dead_hand":
        tally["dead"] += 1
        return
    winner = side[result["winner"]]
    tally[f"points_{winner}"] += result["points"]
    tally[f"won_{winner}"] += 1
    knocker = side[result["knocker"]]
    if outcome == "knock":
        tally[f"knock_{knocker}"] += 1
    elif outcome in ("gin", "big_gin", "undercut"):
        tally[f"{outcome}_{winner}"] += 1


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def summarize(
    level_a: str, level_b: str, preset: str, results: list[dict[str, Any]]
) -> dict[str, Any]:
    n = len(results)
    wins = sum(r["winner"] == "a" for r in results)
    rate = wins / n
    half = 1.96 * math.sqrt(rate * (1 - rate) / n)
    hands = sum(r["hands"] for r in results)
    out: dict[str, Any] = {
        "a": level_a,
        "b": level_b,
        "preset": preset,
        "matches": n,
        "hands": hands,
        "a_match_win_rate": round(rate, 4),
        "ci95": [round(max(0.0, rate - half), 4), round(min(1.0, rate + half), 4)],
        "dead_hand_rate": round(sum(r["dead"] for r in results) / hands, 4),
    }
    for s in SIDES:
        ms = [t for r in results for t in r[f"ms_{s}"]]
        wall = [t for r in results for t in r[f"wall_{s}"]]
        out[s + "_stats"] = {
            "points_per_hand": round(sum(r[f"points_{s}"] for r in results) / hands, 2),
            "hands_won_rate": round(sum(r[f"won_{s}"] for r in results) / hands, 4),
            **{
                f"{k}_rate": round(sum(r[f"{k}_{s}"] for r in results) / hands, 4)
                for k in ("knock", "gin", "big_gin", "undercut")
            },
            "decision_ms": {
                "median": round(statistics.median(ms), 3),
                "p99": round(_percentile(ms, 0.99), 3),
                "p999": round(_percentile(ms, 0.999), 3),
                "max": round(max(ms), 3),
            },
            "wall_ms": {"p999": round(_percentile(wall, 0.999), 3), "max": round(max(wall), 3)},
            "cut_short": sum(r[f"cut_{s}"] for r in results),
            "searched": sum(r[f"searched_{s}"] for r in results),
            "overruled": sum(r[f"overruled_{s}"] for r in results),
            "decisions": len(ms),
        }
    return out


def run(
    level_a: str,
    level_b: str,
    preset: str,
    *,
    matches: int,
    seed: str,
    workers: int,
    budget: Budget,
    target: float | None = None,
    max_seconds: float | None = None,
) -> dict[str, Any]:
    """Play up to ``matches`` matches (in seat-swapped pairs) and summarize them.

    Sequential check: with ``target`` (a match win rate), stop after a pair once at least
    ``MIN_SEQUENTIAL`` matches are in and the 99% interval of a's win rate lies wholly above
    or below it (99%, not 95%: the interval is looked at again and again). With
    ``max_seconds``, stop after the first pair that ends past that much wall time. The
    summary says how many matches were played and why it stopped.
    """
    jobs = [
        (level_a, level_b, preset, f"arena-{seed}-{i // 2}", i % 2, budget) for i in range(matches)
    ]
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    stopped = "all matches played"
    with Pool(max(1, workers)) as pool:
        for result in pool.imap(play_match, jobs, chunksize=1):
            results.append(result)
            if len(results) % 2:
                continue
            if target is not None and len(results) >= MIN_SEQUENTIAL:
                verdict = _clears(sum(r["winner"] == "a" for r in results), len(results), target)
                if verdict:
                    stopped = f"the 99% interval is {verdict} the target {target:.0%}"
                    break
            if max_seconds is not None and time.perf_counter() - started > max_seconds:
                stopped = f"time limit of {max_seconds:g} s"
                break
        pool.terminate()
    out = summarize(level_a, level_b, preset, results)
    out["stopped"] = stopped
    return out


# The fewest matches a sequential check stops at.
MIN_SEQUENTIAL = 60


def _clears(wins: int, n: int, target: float) -> str:
    """'above' or 'below' when the 99% interval of ``wins / n`` clears ``target``, else ''."""
    rate = wins / n
    half = 2.576 * math.sqrt(max(rate * (1 - rate), 1e-9) / n)
    if rate - half > target:
        return "above"
    if rate + half < target:
        return "below"
    return ""


def print_pair(out: dict[str, Any]) -> None:
    a, b = out["a"], out["b"]
    print(f"{a} vs {b} on {out['preset']}: {out['matches']} matches, {out['hands']} hands")
    print(
        f"  {a} match win rate {out['a_match_win_rate']:.1%} "
        f"(95% CI {out['ci95'][0]:.1%} .. {out['ci95'][1]:.1%})"
    )
    print(f"  dead hands {out['dead_hand_rate']:.1%}; stopped: {out.get('stopped', '')}")
    for s, name in zip(SIDES, (a, b), strict=True):
        st = out[s + "_stats"]
        ms = st["decision_ms"]
        print(
            f"  {name:>8}: {st['points_per_hand']:5.2f} pts/hand, won {st['hands_won_rate']:.1%}"
            f" of hands, knock {st['knock_rate']:.1%} gin {st['gin_rate']:.1%}"
            f" big gin {st['big_gin_rate']:.1%} undercut {st['undercut_rate']:.1%};"
            f" CPU ms median {ms['median']:.2f} p99 {ms['p99']:.2f} p99.9 {ms['p999']:.2f}"
            f" max {ms['max']:.2f};"
            f" wall ms p99.9 {st['wall_ms']['p999']:.1f};"
            f" searched {st['searched']}, overruling the judgements {st['overruled']},"
            f" cut short {st['cut_short']}, of {st['decisions']} decisions"
        )
    print(json.dumps(out))


def report_row(out: dict[str, Any]) -> str:
    """One markdown row: the product level against the baseline."""
    st = out["a_stats"]
    ms = st["decision_ms"]
    lo, hi = out["ci95"]
    return (
        f"| {out['preset']} | {out['a']} | {out['matches']}"
        f" | {out['a_match_win_rate']:.1%} [{lo:.1%}, {hi:.1%}]"
        f" | {st['points_per_hand']:.2f} / {out['b_stats']['points_per_hand']:.2f}"
        f" | {st['gin_rate']:.1%} / {st['undercut_rate']:.1%} / {st['knock_rate']:.1%}"
        f" | {ms['median']:.2f} / {ms['p99']:.1f} / {ms['max']:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="hard", type=_level)
    parser.add_argument("--b", default="medium", type=_level)
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--preset", default="standard")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--playouts", type=int, default=Budget().playouts, help="hard's work")
    parser.add_argument("--cap-ms", type=float, default=Budget().cap_ms, help="hard's wall cap")
    parser.add_argument(
        "--target", type=float, help="sequential check: stop once the 99%% interval clears it"
    )
    parser.add_argument("--max-seconds", type=float, help="stop a pair after this wall time")
    parser.add_argument("--report", action="store_true", help="every product level vs eaai")
    parser.add_argument("--levels", default=",".join(PRODUCT_LEVELS), help="for --report")
    parser.add_argument("--presets", default="standard,reino,cardems", help="for --report")
    args = parser.parse_args()
    budget = Budget(args.playouts, args.cap_ms)
    common: dict[str, Any] = {
        "matches": args.matches,
        "seed": args.seed,
        "workers": args.workers,
        "budget": budget,
        "target": args.target,
        "max_seconds": args.max_seconds,
    }
    if not args.report:
        out = run(args.a, args.b, args.preset, **common)
        print_pair(out)
        return
    rows = []
    for preset in args.presets.split(","):
        for level in args.levels.split(","):
            out = run(level, "eaai", preset, **common)
            print_pair(out)
            rows.append(report_row(out))
    print(f"\nUp to {args.matches} matches per row; hard's budget {budget.playouts} playouts,")
    print(f"cap {budget.cap_ms:g} ms wall.\n")
    print("| preset | level vs eaai | matches | match wins [95% CI] | points/hand", end="")
    print(" (level / eaai)", end="")
    print(" | gin / undercut / knock rate | CPU ms median / p99 / worst |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
