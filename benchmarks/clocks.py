"""Timeout precision: how late the server applies timeouts with many deadlines pending.

    python benchmarks/clocks.py --tables 1000 --seconds 60 [--db sqlite postgresql] [--processes 2]

For each database it starts ``uvicorn`` as a subprocess (or N of them on one Redis bus, as
``benchmarks/server.py`` does), creates ``--tables`` started tables of two players each with a
``per_move`` clock of ``--seconds`` and the ``claim`` policy, and moves nobody: every table's
first turn runs out, all of them pending at once once the last table has started (creation must
take less than ``--seconds``; the script says if it did not). Each table's deadline is the one
its start response showed (``clock.deadline``, a server time). After the last deadline plus a
margin it reads, from the database, when each timeout was logged (``time_expired``, or
``match_aborted`` since a seat that never moved has its match aborted; the commit's
own time) and prints the lateness (logged minus deadline): p50, p99, max, how many timeouts
were applied (each table exactly once), the timeouts/s the runner sustained, and the servers'
CPU from a second before the first deadline until the last timeout was logged (polling the
database meanwhile, which the figure includes). A burst of due deadlines queues behind the
runner's commits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.server import database, serve_many, servers_cpu  # noqa: E402

JSON = dict[str, Any]


async def player(http: httpx.AsyncClient, name: str) -> dict[str, str]:
    r = await http.post("/v1/players", json={"name": name})
    r.raise_for_status()
    return {"Authorization": f"Bearer {r.json()['token']}"}


async def clocked_table(http: httpx.AsyncClient, seconds: float) -> tuple[str, datetime]:
    """A started table whose first turn must be played within ``seconds``; its deadline."""
    ada, bo = await player(http, "Ada"), await player(http, "Bo")
    body = {"clock": {"control": "per_move", "seconds": seconds, "policy": "claim"}}
    r = await http.post("/v1/tables", json=body, headers=ada)
    r.raise_for_status()
    table = r.json()
    (await http.post(f"/v1/invites/{table['invite_code']}", headers=bo)).raise_for_status()
    r = await http.post(f"/v1/tables/{table['table_id']}/start", headers=ada)
    r.raise_for_status()
    deadline = r.json()["table"]["clock"]["deadline"]
    return table["table_id"], datetime.fromisoformat(deadline)


async def expired_at(url: str, table_ids: list[str]) -> dict[str, list[datetime]]:
    """Table id -> when each of its timeouts was logged (nobody moved: the match is aborted),
    for these tables (read by their key: a database may hold many others)."""
    where = "type IN ('time_expired', 'match_aborted')"
    out: dict[str, list[datetime]] = {}
    if url.startswith("sqlite"):
        marks = ", ".join("?" * len(table_ids))
        query = f"SELECT table_id, created_at FROM events WHERE {where} AND table_id IN ({marks})"
        with sqlite3.connect(url.split("///", 1)[1]) as conn:
            rows = [(t, datetime.fromisoformat(c)) for t, c in conn.execute(query, table_ids)]
    else:
        query = f"SELECT table_id, created_at FROM events WHERE {where} AND table_id = ANY($1)"
        conn = await asyncpg.connect(url.replace("+asyncpg", ""))
        try:
            rows = [(r[0], r[1]) for r in await conn.fetch(query, table_ids)]
        finally:
            await conn.close()
    for table_id, at in rows:
        out.setdefault(table_id, []).append(at if at.tzinfo else at.replace(tzinfo=UTC))
    return out


async def count_expired(url: str, table_ids: list[str]) -> int:
    return sum(len(v) for v in (await expired_at(url, table_ids)).values())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(
    kind: str,
    tables: int,
    seconds: float,
    processes: int,
    redis: str | None,
    *,
    database_url: str | None = None,
) -> JSON:
    async with database(kind, database_url) as url, serve_many(url, processes, redis) as servers:
        clients = [httpx.AsyncClient(base_url=s.url, timeout=60) for s in servers]
        try:
            began = time.monotonic()
            sem = asyncio.Semaphore(32)

            async def one(i: int) -> tuple[str, datetime]:
                async with sem:
                    return await clocked_table(clients[i % len(clients)], seconds)

            made = await asyncio.gather(*(one(i) for i in range(tables)))
            created_in = time.monotonic() - began
            deadlines = dict(made)
            ids = list(deadlines)
            last = max(deadlines.values())
            first = min(deadlines.values())
            wait = (first - datetime.now(UTC)).total_seconds()
            await asyncio.sleep(max(0.0, wait - 1))
            cpu0 = servers_cpu(servers)
            # Until every table's timeout is logged (or 30 s past the last deadline).
            give_up = time.monotonic() + (last - datetime.now(UTC)).total_seconds() + 30
            while time.monotonic() < give_up and await count_expired(url, ids) < tables:
                await asyncio.sleep(0.2)
            cpu = servers_cpu(servers) - cpu0
            await asyncio.sleep(2)  # a timeout applied twice would show by now
        finally:
            for c in clients:
                await c.aclose()
        logged = await expired_at(url, ids)
    late = [(logged[t][0] - d).total_seconds() * 1000 for t, d in deadlines.items() if t in logged]
    applied_times = sorted(v[0] for v in logged.values())
    span = (applied_times[-1] - applied_times[0]).total_seconds() if applied_times else 0.0
    return {
        "tables": tables,
        "processes": processes,
        "created_in_s": round(created_in, 1),
        "all_pending_at_once": created_in < seconds,
        "deadlines_span_s": round((last - first).total_seconds(), 1),
        "applied": len(late),
        "applied_twice": sum(1 for v in logged.values() if len(v) > 1),
        "missing": tables - len(late),
        "late_p50_ms": round(pct(late, 0.5), 1) if late else None,
        "late_p99_ms": round(pct(late, 0.99), 1) if late else None,
        "late_max_ms": round(max(late), 1) if late else None,
        "timeouts_per_s": round(len(late) / span, 1) if span else None,
        "server_cpu_ms_per_timeout": round(cpu * 1000 / max(1, len(late)), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0, help="the per-move clock")
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument(
        "--database-url", default=None, help="an existing database (of the one --db kind)"
    )
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    results: JSON = {}
    for kind in args.db:
        redis = args.redis if args.processes > 1 else None
        url = args.database_url
        results[kind] = r = uvloop.run(
            run(kind, args.tables, args.seconds, args.processes, redis, database_url=url)
        )
        print(f"\n{kind}: {args.tables} clocked tables, {args.processes} process(es)")
        for key, value in r.items():
            print(f"  {key:<28}{value}")
    print(json.dumps({"benchmark": "clocks", "seconds": args.seconds, **results}))


if __name__ == "__main__":
    main()
