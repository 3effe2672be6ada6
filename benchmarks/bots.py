"""Bot arena: seeded matches between two players; prints the figures, then one JSON line.

    python benchmarks/bots.py --a hard --b medium --matches 400 --preset standard --seed 1

Matches come in pairs on the same deal seed with the players' seats swapped, so both play
every deal from both sides (and the dealer alternates with the seat). Like the server, the
arena holds the engine state and feeds each bot only ``seat_view`` and the events redacted
for its seat; every answer is checked against ``legal_actions``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import LEVELS, get_bot
from app.engine import Action, apply, legal_actions, make_ruleset, new_match
from app.engine.game import OVER, PLAYING
from app.engine.views import seat_view

SIDES = ("a", "b")


def play_match(job: tuple[str, str, str, str, int]) -> dict[str, Any]:
    """One match; ``a_seat`` is the seat of player a. Per-side tallies and decision times."""
    level_a, level_b, preset, seed, a_seat = job
    bots = {a_seat: get_bot(level_a), 1 - a_seat: get_bot(level_b)}
    side = {a_seat: "a", 1 - a_seat: "b"}
    state, events = new_match(make_ruleset(preset), seed)
    seen: dict[int, list[dict[str, Any]]] = {
        s: [e.for_recipient(s) for e in events] for s in (0, 1)
    }
    tally: dict[str, Any] = {
        "hands": 0,
        "dead": 0,
        **{
            f"{k}_{s}": 0
            for s in SIDES
            for k in ("points", "gin", "big_gin", "knock", "undercut", "won")
        },
        "ms_a": [],
        "ms_b": [],
    }
    while state.status == PLAYING:
        seat = a_seat if state.hand.phase == OVER else state.hand.turn
        view = seat_view(state, seat)
        start = time.perf_counter()
        move = bots[seat].choose(view, seen[seat])
        tally[f"ms_{side[seat]}"].append((time.perf_counter() - start) * 1000)
        action = Action.from_dict(move)
        if action not in legal_actions(state, seat):
            raise AssertionError(f"{bots[seat].level} chose an illegal {move} in {view}")
        state, events = apply(state, seat, action)
        for event in events:
            for s in (0, 1):
                if event.type == "hand_started":
                    seen[s] = []
                seen[s].append(event.for_recipient(s))
            if event.type == "hand_over":
                _count(tally, event.public, side)
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
                "max": round(max(ms), 3),
            },
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="hard", choices=LEVELS)
    parser.add_argument("--b", default="medium", choices=LEVELS)
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--preset", default="standard")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    jobs = [
        (args.a, args.b, args.preset, f"arena-{args.seed}-{i // 2}", i % 2)
        for i in range(args.matches)
    ]
    if args.workers > 1:
        with Pool(args.workers) as pool:
            results = pool.map(play_match, jobs, chunksize=4)
    else:
        results = [play_match(job) for job in jobs]
    out = summarize(args.a, args.b, args.preset, results)
    print(f"{args.a} vs {args.b} on {args.preset}: {out['matches']} matches, {out['hands']} hands")
    print(
        f"  {args.a} match win rate {out['a_match_win_rate']:.1%} "
        f"(95% CI {out['ci95'][0]:.1%} .. {out['ci95'][1]:.1%})"
    )
    print(f"  dead hands {out['dead_hand_rate']:.1%}")
    for s, name in zip(SIDES, (args.a, args.b), strict=True):
        st = out[s + "_stats"]
        ms = st["decision_ms"]
        print(
            f"  {name:>8}: {st['points_per_hand']:5.2f} pts/hand, won {st['hands_won_rate']:.1%}"
            f" of hands, knock {st['knock_rate']:.1%} gin {st['gin_rate']:.1%}"
            f" big gin {st['big_gin_rate']:.1%} undercut {st['undercut_rate']:.1%};"
            f" decision ms median {ms['median']:.2f} p99 {ms['p99']:.2f} max {ms['max']:.2f}"
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
