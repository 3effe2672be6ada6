"""Tournament figures: an arena of built-in bots on a real server, and Swiss pairing at 64.

    python benchmarks/tournaments.py [--entrants 200] [--seconds 600] [--swiss 64] [--rounds 6]

1. Arena: a fresh ``python -m app`` on its own PostgreSQL database (bots without their pause,
   ``--level`` easy by default, target 10), ``--entrants`` bots for ``--seconds``. From the
   export: matches played, and the pairing latency after a finished match (an entrant's next
   pairing less its previous match's end: the scheduler's wake and scan, plus any wait for a
   free opponent) p50/p99; the server process's CPU seconds over the arena (bots included:
   they play in that process).
2. Swiss: ``--swiss`` entrants and ``--rounds`` rounds paired by ``app.table.swiss`` with
   random results: the time to pair each round (with the standings it needs), and a check that
   no pairing repeats.

One JSON line each; docs/tournaments.md quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from app.table import swiss
from tests.api.conftest import pg_database
from tests.api.helpers import new_player
from tests.api.processes import start_process, stop


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, clock ticks


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _arena(url: str, entrants: int, seconds: int, level: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        org = await new_player(http, "Org")
        body = {"format": "arena", "duration": seconds, "rules": {"target": 10},
                "admits": "bots", "capacity": entrants}  # fmt: skip
        t = (await http.post("/v1/tournaments", json=body, headers=org.auth)).json()
        tid = t["tournament_id"]
        for _ in range(entrants):
            r = await http.post(f"/v1/tournaments/{tid}/bots", json={"level": level},
                                headers=org.auth)  # fmt: skip
            assert r.status_code == 200, r.text
        await http.post(f"/v1/tournaments/{tid}/start", headers=org.auth)
        while (await http.get(f"/v1/tournaments/{tid}")).json()["status"] != "finished":
            await asyncio.sleep(1)
        export: dict[str, Any] = (await http.get(f"/v1/tournaments/{tid}/export")).json()
    return export


def arena(entrants: int, seconds: int, level: str) -> dict[str, Any]:
    with pg_database("ginrummy_bench_tourney") as db, tempfile.TemporaryDirectory() as tmp:
        server = start_process(Path(tmp) / "server.log", DATABASE_URL=db, MIGRATE_ON_START="true",
                               TOURNAMENT_MIN_DURATION="10")  # fmt: skip
        try:
            before = _cpu(server.process.pid)
            export = asyncio.run(_arena(server.url, entrants, seconds, level))
            cpu = _cpu(server.process.pid) - before
        finally:
            stop(server)
    pairings = [p for r in export["rounds"] for p in r["pairings"]]
    last_end: dict[str, datetime] = {}
    waits: list[float] = []
    for p in sorted(pairings, key=lambda p: p["number"]):
        created = datetime.fromisoformat(p["created_at"])
        for who in (p["seat0"], p["seat1"]):
            if who in last_end:
                waits.append((created - last_end.pop(who)).total_seconds())
        if p["finished_at"]:
            end = datetime.fromisoformat(p["finished_at"])
            last_end[p["seat0"]] = last_end[p["seat1"]] = end
    return {
        "bench": "arena",
        "entrants": entrants,
        "seconds": seconds,
        "level": level,
        "matches": sum(p["status"] == "finished" for p in pairings),
        "unfinished_at_end": sum(p["status"] == "unfinished" for p in pairings),
        "pairing_latency_p50_ms": round(_pct(waits, 0.5) * 1000, 1),
        "pairing_latency_p99_ms": round(_pct(waits, 0.99) * 1000, 1),
        "server_cpu_s": round(cpu, 1),
    }


def swiss_rounds(n: int, rounds: int, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    scores = {f"e{i}": 0.0 for i in range(n)}
    played: set[frozenset[str]] = set()
    had_bye: set[str] = set()
    balance: dict[str, int] = {}
    times: list[float] = []
    repeats = 0
    for _ in range(rounds):
        started = time.perf_counter()
        field = [swiss.Player(i, scores[i], 1500.0 + rng.random()) for i in scores]
        r = swiss.pair_round(field, played, had_bye, balance)
        times.append(time.perf_counter() - started)
        for a, b in r.pairs:
            key = swiss.pair_key(a, b)
            repeats += key in played
            played.add(key)
            balance[a] = balance.get(a, 0) + 1
            balance[b] = balance.get(b, 0) - 1
            scores[rng.choice((a, b))] += 1
        if r.bye:
            had_bye.add(r.bye)
            scores[r.bye] += 1
    return {
        "bench": "swiss",
        "entrants": n,
        "rounds": rounds,
        "pair_ms_median": round(statistics.median(times) * 1000, 2),
        "pair_ms_max": round(max(times) * 1000, 2),
        "repeated_pairings": repeats,
        "max_first_deal_imbalance": max(abs(v) for v in balance.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--level", default="easy")
    parser.add_argument("--swiss", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--no-arena", action="store_true")
    args = parser.parse_args()
    print(json.dumps(swiss_rounds(args.swiss, args.rounds)), flush=True)
    if not args.no_arena:
        print(json.dumps(arena(args.entrants, args.seconds, args.level)), flush=True)


if __name__ == "__main__":
    main()
