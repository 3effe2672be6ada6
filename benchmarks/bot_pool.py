"""How many LUNA tables one worker process sustains: simulated bot tables against a BotPool.

    python benchmarks/bot_pool.py --tables 1,2,4,8,16 --seconds 20 --pause 0.45

Each simulated table does what the server's BotRunner does for a bot turn, over and over:
pause ``--pause`` seconds while its decision is made in the pool, then go on. The positions
are real ones (a discard or a draw with a choice) from seeded matches. Per table count it
prints the decisions made, how many got a lowered budget because others queued, how long a
table waited past its pause (median, p99, worst), and the worker's CPU time per decision
(all of the pool's children CPU time, read when the pool stops, over its decisions).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import get_bot
from app.bots.search import Budget
from app.engine import Action, apply, make_ruleset, new_match
from app.engine.state import OVER, PLAYING
from app.engine.views import seat_view
from app.service.workers.bot_pool import BotPool

Position = tuple[dict[str, Any], list[dict[str, Any]]]


def positions(count: int) -> list[Position]:
    """Views (and events) of medium-vs-medium matches where a seat draws or discards."""
    out: list[Position] = []
    bot = get_bot("medium")
    match = 0
    while len(out) < count:
        state, events = new_match(make_ruleset("standard"), f"pool-bench-{match}")
        match += 1
        seen = {s: [e.for_recipient(s) for e in events] for s in (0, 1)}
        while state.status == PLAYING and len(out) < count:
            seat = 0 if state.hand.phase == OVER else state.hand.turn
            view = seat_view(state, seat)
            if state.hand.phase in ("draw", "discard"):
                out.append((view, list(seen[seat])))
            state, events = apply(state, seat, Action.from_dict(bot.choose(view, seen[seat])))
            for event in events:
                for s in (0, 1):
                    if event.type == "hand_started":
                        seen[s] = []
                    seen[s].append(event.for_recipient(s))
    return out


async def _table(
    pool: BotPool, views: list[Position], start: int, pause: float, until: float
) -> list[float]:
    waits = []
    i = start
    while time.monotonic() < until:
        view, events = views[i % len(views)]
        i += 7
        began = time.monotonic()
        await asyncio.gather(asyncio.sleep(pause), pool.choose("hard", view, events))
        waits.append(time.monotonic() - began - pause)
    return waits


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def measure(tables: int, seconds: float, pause: float, budget: Budget) -> dict[str, Any]:
    views = positions(200)
    pool = BotPool(1, budget)
    await pool.choose("hard", *views[0])  # the worker is up
    pool.decisions = pool.lowered = 0
    cpu_before = os.times().children_user + os.times().children_system
    until = time.monotonic() + seconds
    runs = await asyncio.gather(*(_table(pool, views, t, pause, until) for t in range(tables)))
    await asyncio.to_thread(pool.close)
    cpu = os.times().children_user + os.times().children_system - cpu_before
    waits = [w for run in runs for w in run]
    return {
        "tables": tables,
        "decisions": pool.decisions,
        "lowered": pool.lowered,
        "wait_past_pause_ms": {
            "median": round(1000 * _pct(waits, 0.5), 1),
            "p99": round(1000 * _pct(waits, 0.99), 1),
            "max": round(1000 * max(waits), 1),
        },
        "worker_cpu_ms_per_decision": round(1000 * cpu / max(1, pool.decisions + 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="1,2,4,8,16")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pause", type=float, default=0.45)
    parser.add_argument("--playouts", type=int, default=Budget().playouts)
    parser.add_argument("--cap-ms", type=float, default=Budget().cap_ms)
    args = parser.parse_args()
    budget = Budget(args.playouts, args.cap_ms)
    for n in (int(x) for x in args.tables.split(",")):
        out = asyncio.run(measure(n, args.seconds, args.pause, budget))
        w = out["wait_past_pause_ms"]
        print(
            f"{n:>3} tables: {out['decisions']} decisions, {out['lowered']} with a lowered"
            f" budget; wait past the pause ms median {w['median']} p99 {w['p99']}"
            f" max {w['max']}; worker CPU {out['worker_cpu_ms_per_decision']} ms/decision"
        )
        print(json.dumps(out))


if __name__ == "__main__":
    main()
