"""The lobby under arrivals: players seek at a steady rate into a few pools and are paired.

    python benchmarks/lobby.py --players 2000 --rate 50 --processes 1 2

For each process count it starts the servers on a fresh PostgreSQL database (N processes on one
Redis bus, as ``benchmarks/server.py`` does), creates ``--players`` players with ratings drawn
around 1500 (σ 200, written straight to the ratings table: the pairing reads them as a rated
player's), then lets them arrive at ``--rate`` a second: each opens its player socket (on
process i mod N), posts a live seek in one of three pools (``per_move`` 60 s, ``bank`` 300+5,
``bank`` 600+10) and waits for ``seek_paired``. After the last arrival it waits ``--drain``
seconds for the stragglers. It prints:

- the pairing latency, from the moment the pair became acceptable (the later seek posted, or
  the older one's wait widening the gap enough) to both sockets told: p50, p99, max; and how
  long each player waited, seek to told (the matching rule's part and the server's);
- the rating gap of each pair against how long its older seek waited (buckets of wait);
- the checks, from the database: seeks paired with another count than two per table (double
  pairings), seeks paired to a table that does not exist or sockets told of a table no seek
  names (orphans), players at two tables, players told twice;
- what a seek cost: the servers' CPU and PostgreSQL's per seek, the servers' memory growth,
  and PostgreSQL's transactions and rows written per seek (``pg_stat_database``), the pairing's
  table, seats, events and snapshot included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import uvloop
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.server import database, named_cpu, serve_many, servers_cpu  # noqa: E402

JSON = dict[str, Any]
POOLS = [
    {"control": "per_move", "seconds": 60},
    {"control": "bank", "seconds": 300, "bonus": 5},
    {"control": "bank", "seconds": 600, "bonus": 10},
]
WAIT_BUCKETS = (1.0, 2.0, 5.0, 10.0, 30.0, float("inf"))
# The servers' default gap widening (LOBBY_GAP_BASE, LOBBY_GAP_PER_SECOND).
GAP_BASE, GAP_PER_SECOND = 100.0, 10.0


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def pg_writes(conn: asyncpg.Connection) -> tuple[int, int]:
    """(transactions committed, rows inserted + updated + deleted) in this database so far."""
    row = await conn.fetchrow(
        "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted AS rows"
        " FROM pg_stat_database WHERE datname = current_database()"
    )
    assert row is not None
    return int(row["xact_commit"]), int(row["rows"])


async def make_players(http: httpx.AsyncClient, n: int) -> list[JSON]:
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> JSON:
        async with sem:
            r = await http.post("/v1/players", json={"name": f"Seeker {i}"})
            r.raise_for_status()
            return dict(r.json())

    return await asyncio.gather(*(one(i) for i in range(n)))


async def rate_them(conn: asyncpg.Connection, players: list[JSON], rng: random.Random) -> None:
    now = datetime.now(UTC)
    rows = []
    for p in players:
        p["rating"] = max(600.0, rng.gauss(1500.0, 200.0))
        rows.append((p["id"], "standard", p["rating"], 60.0, 0.06, 10, 5, 5, now))
    await conn.executemany(
        "INSERT INTO ratings (player_id, category, rating, deviation, volatility, games, wins,"
        " losses, last_played_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        rows,
    )


async def arrive(base: str, http: httpx.AsyncClient, player: JSON, pool: JSON, out: JSON) -> None:
    """Open the socket, post the seek, wait for ``seek_paired`` (or the end)."""
    url = base.replace("http://", "ws://") + f"/v1/players/me/ws?token={player['token']}"
    headers = {"Authorization": f"Bearer {player['token']}"}
    async with connect(url, proxy=None, max_queue=None) as ws:
        out["posted"] = time.monotonic()
        r = await http.post(
            "/v1/seeks", json={"preset": "standard", "clock": pool}, headers=headers
        )
        r.raise_for_status()
        out["seek_id"] = r.json()["seek_id"]
        out["told"] = []
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] == "seek_paired":
                out["told"].append((time.monotonic(), message["table_id"]))
                out["done"].set()


async def run(players_n: int, rate: float, processes: int, drain: float, seed: int) -> JSON:
    rng = random.Random(seed)
    redis = "redis://127.0.0.1:6379/0" if processes > 1 else None
    async with database("postgresql") as url, serve_many(url, processes, redis) as servers:
        conn = await asyncpg.connect(url.replace("+asyncpg", ""))
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=200)
        clients = [httpx.AsyncClient(base_url=s.url, timeout=60, limits=limits) for s in servers]
        try:
            players = await make_players(clients[0], players_n)
            await rate_them(conn, players, rng)
            await asyncio.sleep(1)
            rss0 = sum(rss_kb(s.pid) for s in servers)
            cpu0, pg0 = servers_cpu(servers), named_cpu("postgres")
            xact0, rows0 = await pg_writes(conn)
            results: list[JSON] = []
            tasks = []
            began = time.monotonic()
            for i, p in enumerate(players):
                await asyncio.sleep(max(0.0, began + i / rate - time.monotonic()))
                out: JSON = {"player": p, "done": asyncio.Event(), "pool": i % len(POOLS)}
                results.append(out)
                server = servers[i % len(servers)]
                task = arrive(server.url, clients[i % len(clients)], p, POOLS[i % 3], out)
                tasks.append(asyncio.create_task(task))
            give_up = time.monotonic() + drain
            while time.monotonic() < give_up and not all(r["done"].is_set() for r in results):
                await asyncio.sleep(0.1)
            await asyncio.sleep(1)  # a second notice would show by now
            cpu = servers_cpu(servers) - cpu0
            pg_cpu = named_cpu("postgres") - pg0
            rss = sum(rss_kb(s.pid) for s in servers) - rss0
            await asyncio.sleep(1)  # the statistics collector's flush
            xact, rows = await pg_writes(conn)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            checks = await check(conn, results)
        finally:
            for c in clients:
                await c.aclose()
            await conn.close()
    return summarise(results, checks, cpu, pg_cpu, rss, xact - xact0, rows - rows0, processes)


async def check(conn: asyncpg.Connection, results: list[JSON]) -> JSON:
    ids = [r["seek_id"] for r in results if "seek_id" in r]
    seeks = await conn.fetch(
        "SELECT s.id, s.player_id, s.status, s.reason, s.table_id, t.id AS real FROM seeks s"
        " LEFT JOIN tables t ON t.id = s.table_id WHERE s.id = ANY($1::text[])",
        ids,
    )
    per_table: dict[str, int] = defaultdict(int)
    orphans = 0
    for s in seeks:
        if s["status"] == "paired":
            per_table[s["table_id"]] += 1
            orphans += s["real"] is None
    named = set(per_table)
    told_tables = {t for r in results for _, t in r.get("told", [])}
    seats = await conn.fetch(
        "SELECT player_id, count(*) AS n FROM seats WHERE player_id = ANY($1::text[])"
        " GROUP BY player_id",
        [r["player"]["id"] for r in results],
    )
    return {
        "double_pairings": sum(1 for n in per_table.values() if n != 2),
        "orphaned": orphans + len(told_tables - named),
        "players_at_two_tables": sum(1 for s in seats if s["n"] > 1),
        "told_twice": sum(1 for r in results if len(r.get("told", [])) > 1),
        "paired_seeks": sum(per_table.values()),
        "open_at_end": sum(1 for s in seeks if s["status"] == "open"),
        "statuses": dict(Counter(f"{s['status']}/{s['reason']}" for s in seeks)),
    }


def summarise(  # noqa: PLR0917 - a run's figures, each measured apart
    results: list[JSON],
    checks: JSON,
    cpu: float,
    pg_cpu: float,
    rss_kb_growth: int,
    xacts: int,
    rows: int,
    processes: int,
) -> JSON:
    by_table: dict[str, list[JSON]] = defaultdict(list)
    for r in results:
        if r.get("told"):
            by_table[r["told"][0][1]].append(r)
    latency: list[float] = []
    waits: list[float] = []
    gaps: dict[float, list[float]] = defaultdict(list)
    for pair in by_table.values():
        if len(pair) != 2:
            continue
        a, b = sorted(pair, key=lambda r: r["posted"])
        gap = abs(a["player"]["rating"] - b["player"]["rating"])
        # The pair became acceptable when the later seek was posted, or when the older one
        # had waited long enough for the gap (the servers' default widening).
        acceptable = max(b["posted"], a["posted"] + max(0.0, (gap - GAP_BASE) / GAP_PER_SECOND))
        latency.append(max(a["told"][0][0], b["told"][0][0]) - acceptable)
        waits += [r["told"][0][0] - r["posted"] for r in (a, b)]
        waited = a["told"][0][0] - a["posted"]
        bucket = next(w for w in WAIT_BUCKETS if waited <= w)
        gaps[bucket].append(abs(a["player"]["rating"] - b["player"]["rating"]))
    n = len(results)
    return {
        "processes": processes,
        "players": n,
        "posted": sum(1 for r in results if "seek_id" in r),
        "pairs": len(latency),
        "wait_s": {"p50": round(pct(waits, 0.5), 2), "p99": round(pct(waits, 0.99), 2)},
        "latency_ms": {
            "p50": round(pct(latency, 0.5) * 1000, 1),
            "p99": round(pct(latency, 0.99) * 1000, 1),
            "max": round(max(latency, default=float("nan")) * 1000, 1),
        },
        "gap_by_wait": {
            f"<= {w:g} s" if w != float("inf") else "longer": {
                "pairs": len(g),
                "gap_p50": round(pct(g, 0.5)),
                "gap_max": round(max(g)),
            }
            for w, g in sorted(gaps.items())
        },
        **checks,
        "per_seek": {
            "server_cpu_ms": round(cpu / n * 1000, 2),
            "postgres_cpu_ms": round(pg_cpu / n * 1000, 2),
            "server_rss_kb": round(rss_kb_growth / n, 2),
            "transactions": round(xacts / n, 2),
            "rows_written": round(rows / n, 2),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--drain", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument(
        "--presence",
        type=float,
        default=30.0,
        help="LOBBY_PRESENCE_SECONDS of the servers: on a starved machine the 6 s default "
        "lapses seeks whose renewal comes late",
    )
    args = parser.parse_args()
    os.environ["LOBBY_PRESENCE_SECONDS"] = str(args.presence)  # the servers inherit it
    for n in args.processes:
        result = uvloop.run(run(args.players, args.rate, n, args.drain, args.seed))
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
