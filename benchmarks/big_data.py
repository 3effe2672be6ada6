"""Cost as the data grows: the same requests on an empty and on a filled PostgreSQL database.

    python benchmarks/big_data.py [--filled-url URL] [--keep] [--tables 50] [--seconds 10]
    python benchmarks/big_data.py --filled-url URL --plans   # EXPLAIN what the requests ran

The empty database is new and migrated; the filled one is ``--filled-url`` (made by
``benchmarks/big_fixture.py --keep``) or, without it, one filled here (the fixture's default
sizes: a million finished matches, 100,000 open tables with a pending clock each). Both then
get the same probe rows (``big_fixture.probe``): a player with 50 finished matches, 100
settled ratings, one open table, so every request below reads the same rows on both and only
the rest of the database differs. ``--rounds`` rounds (2), each:

- **moves**: ``benchmarks/server.py``'s paced and capacity phases (``--tables`` new tables of
  new players, ``--seconds`` each): server CPU per move and the paced p99;
- **clocks**: ``benchmarks/clocks.py`` (``--clock-tables`` tables whose first turn runs out
  after ``--clock-seconds``, on top of the filled database's 100,000 clocks pending days ahead):
  the deadline runner's lateness p99;

  (these two on one database, then on the other: the empty first in even rounds, the filled
  first in odd ones)
- **reads**: a server on each database at once, each request ``--repeat`` times on each, the
  two in alternation (empty then filled, filled then empty, ...) so both see the same minutes
  of the machine, after a warm-up: p50 and p99 latency and each server's CPU per request. The
  open table (a spectator's ``GET /v1/tables/{id}``), the event log's first page and a later
  one (``/events?since=``), a finished hand, the probe player's match history
  (``/players/me/matches``), profile and statistics, a match record, the ``standard``
  leaderboard's first page and ``/metrics``.

It prints filled / empty for each figure (the median over the rounds, then each round's), and
one JSON line with every round's figures.

``--plans`` (with ``--filled-url``) instead logs every statement the server runs on the filled
database while it serves each read request once and plays a few moves
(``log_min_duration_statement = 0`` for that database, read back from PostgreSQL's log file),
then runs ``EXPLAIN (ANALYZE, BUFFERS)`` on each distinct statement with its logged parameters
(writes inside a transaction rolled back) and prints each plan, flagging sequential scans.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import big_fixture, clocks  # noqa: E402
from benchmarks import server as bench_server  # noqa: E402
from benchmarks.server import cpu_seconds, serve  # noqa: E402

JSON = dict[str, Any]
PG_LOG = Path("/var/log/postgresql/postgresql-15-main.log")
HISTORY = 50
LEADERS = 100


async def _probe(url: str) -> JSON:
    """The probe rows on ``url`` and what the reads ask for: a player (created through the
    API, for a token), their matches, the open table."""
    async with serve(url) as running, httpx.AsyncClient(base_url=running.url) as http:
        r = await http.post("/v1/players", json={"name": "Probe"})
        r.raise_for_status()
        player = r.json()
    await big_fixture.probe(url, player["id"], HISTORY, LEADERS)
    pid = player["id"]
    return {
        "player_id": pid,
        "token": player["token"],
        "finished": big_fixture.md5_of(f"q{pid}1"),
        "open": big_fixture.md5_of(f"r{pid}1"),
    }


def requests(probe: JSON) -> dict[str, tuple[str, bool]]:
    """Name -> (path, with the probe player's token)."""
    finished, opened, pid = probe["finished"], probe["open"], probe["player_id"]
    return {
        "table": (f"/v1/tables/{opened}", False),
        "events_first_page": (f"/v1/tables/{finished}/events?since=0&limit=20", False),
        "events_later_page": (f"/v1/tables/{finished}/events?since=20&limit=20", False),
        "hand": (f"/v1/tables/{finished}/hands/1", False),
        "match_history": ("/v1/players/me/matches", True),
        "profile": (f"/v1/players/{pid}", False),
        "stats": (f"/v1/players/{pid}/stats", False),
        "match_record": (f"/v1/matches/{finished}-1/record", False),
        "leaderboard": ("/v1/leaderboards/standard", False),
        "metrics": ("/metrics", False),
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _figures(times: list[float], used: float, size: int) -> JSON:
    return {
        "p50_ms": round(_pct(times, 0.5) * 1000, 2),
        "p99_ms": round(_pct(times, 0.99) * 1000, 2),
        "mean_ms": round(statistics.fmean(times) * 1000, 2),
        "server_cpu_ms": round(used * 1000 / len(times), 3),
        "bytes": size,
    }


async def reads(sides: dict[str, tuple[str, JSON]], repeat: int) -> dict[str, JSON]:
    """Each request ``repeat`` times on each side's server ({side: (url, probe)}), the sides
    in alternation (A B, B A, A B, ...) so that both see the same minutes of the machine:
    latency and each server's CPU per request."""
    out: dict[str, JSON] = {side: {} for side in sides}
    async with contextlib.AsyncExitStack() as stack:
        running = {}
        for side, (url, probe) in sides.items():
            server = await stack.enter_async_context(serve(url))
            http = await stack.enter_async_context(httpx.AsyncClient(base_url=server.url))
            auth = {"Authorization": f"Bearer {probe['token']}"}
            running[side] = (server, http, requests(probe), auth)
        order = list(sides)
        for name in requests(next(iter(sides.values()))[1]):

            async def get(side: str, name: str = name) -> httpx.Response:
                _, http, paths, auth = running[side]
                path, authed = paths[name]
                r = await http.get(path, headers=auth if authed else {})
                assert r.status_code == 200, (side, path, r.status_code, r.text[:300])
                return r

            for _ in range(max(3, repeat // 10)):  # warm-up: caches, prepared statements
                for side in order:
                    await get(side)
            times: dict[str, list[float]] = {side: [] for side in order}
            size = dict.fromkeys(order, 0)
            cpu = {side: cpu_seconds(running[side][0].pid) for side in order}
            for i in range(repeat):
                for side in order if i % 2 == 0 else order[::-1]:
                    began = time.perf_counter()
                    size[side] = len((await get(side)).content)
                    times[side].append(time.perf_counter() - began)
            for side in order:
                used = cpu_seconds(running[side][0].pid) - cpu[side]
                out[side][name] = _figures(times[side], used, size[side])
    return out


async def moves_and_clocks(url: str, args: argparse.Namespace) -> JSON:
    load = os.getloadavg()[0]
    moves = await bench_server.run(
        "postgresql",
        args.tables,
        args.seconds,
        args.warmup,
        args.think,
        processes=None,
        redis="",
        database_url=url,
    )
    clock = await clocks.run(
        "postgresql", args.clock_tables, args.clock_seconds, 1, None, database_url=url
    )
    paced, capacity = moves["paced"], moves["capacity"]
    return {
        "moves": {
            "paced_move_p99_ms": paced["move_p99_ms"],
            "paced_moves_per_s": paced["moves_per_s"],
            "paced_server_cpu_ms_per_move": paced["server_cpu_ms_per_move"],
            "server_cpu_ms_per_move": capacity["server_cpu_ms_per_move"],
            "database_cpu_ms_per_move": capacity["database_cpu_ms_per_move"],
            "capacity_moves_per_s": capacity["moves_per_s"],
        },
        "clocks": {
            k: clock[k] for k in ("applied", "missing", "late_p50_ms", "late_p99_ms", "late_max_ms")
        },
        "loadavg_1m": round(max(load, os.getloadavg()[0]), 2),
    }


def ratios(empty: JSON, filled: JSON) -> JSON:
    """filled / empty for every figure that costs (latency, CPU)."""
    out: JSON = {}
    for group in ("moves", "clocks"):
        for key, value in empty[group].items():
            other = filled[group][key]
            if key.endswith(("_ms", "_per_move")) and value:
                out[f"{group}.{key}"] = round(other / value, 3)
    for name, figures in empty["reads"].items():
        for key in ("p50_ms", "p99_ms", "server_cpu_ms"):
            if figures[key]:
                out[f"reads.{name}.{key}"] = round(filled["reads"][name][key] / figures[key], 3)
    return out


async def run(args: argparse.Namespace) -> JSON:
    """``--rounds`` rounds; in each, the moves and clocks on one database then the other (the
    empty first in even rounds, the filled first in odd ones), then the reads side by side."""
    stamp = f"{datetime.now(UTC):%Y%m%d_%H%M%S}"
    empty_name = f"bench_big_{stamp}_empty"
    filled_name = f"bench_big_{stamp}"
    dropping = [empty_name]
    result: JSON = {"date_utc": datetime.now(UTC).isoformat(timespec="seconds")}
    try:
        urls = {"empty": await big_fixture.create_database(empty_name)}
        filled_url = args.filled_url
        if filled_url is None:
            dropping.append(filled_name)
            filled_url = await big_fixture.create_database(filled_name)
            result["fill_seconds"] = await big_fixture.fill(
                filled_url, args.matches, args.open, args.players
            )
        urls["filled"] = filled_url
        result["filled_tables"] = await big_fixture.sizes(filled_url)
        probes = {side: await _probe(url) for side, url in urls.items()}
        rounds = []
        for n in range(args.rounds):
            began = datetime.now(UTC).isoformat(timespec="seconds")
            one: JSON = {"began_utc": began}
            for side in ("empty", "filled") if n % 2 == 0 else ("filled", "empty"):
                one[side] = await moves_and_clocks(urls[side], args)
            read = await reads({side: (urls[side], probes[side]) for side in urls}, args.repeat)
            for side in urls:
                one[side]["reads"] = read[side]
            one["filled_over_empty"] = ratios(one["empty"], one["filled"])
            rounds.append(one)
    finally:
        for name in dropping if not args.keep else []:
            await big_fixture.drop_database(name)
    result["rounds"] = rounds
    result["median_filled_over_empty"] = {
        key: round(statistics.median(r["filled_over_empty"][key] for r in rounds), 3)
        for key in rounds[0]["filled_over_empty"]
    }
    return result


# --- plans -----------------------------------------------------------------------------------

_ENTRY = re.compile(r"^\S+ \S+ \S+ \[\d+\] \S+@(?P<db>\S+) (?P<level>LOG|DETAIL):  (?P<text>.*)$")
_STATEMENT = re.compile(r"^duration: [\d.]+ ms  (?:statement|execute [^:]*): (?P<sql>.*)$", re.S)
_PARAM = re.compile(r"\$(\d+) = ('(?:[^']|'')*'|NULL)")
_SKIP = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SELECT 1$|SET |SHOW |RESET |select pg_|"
                   r"select current_schema|SELECT \$1|select version)", re.I)  # fmt: skip


def logged_statements(text: str, database: str) -> list[str]:
    """The distinct statements (parameters in place) ``database`` ran, from PostgreSQL's log."""
    entries: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match:
            entries.append((match["db"], f"{match['level']}:{match['text']}"))
        elif entries:
            db, body = entries[-1]
            entries[-1] = (db, body + "\n" + line)
    out: dict[str, str] = {}
    pending: str | None = None
    for db, body in entries:
        if db != database:
            continue
        level, _, text_ = body.partition(":")
        if level == "LOG":
            if pending is not None:
                out.setdefault(_shape(pending), pending)
            found = _STATEMENT.match(text_)
            pending = found["sql"].strip() if found else None
        elif level == "DETAIL" and pending is not None and text_.startswith("parameters:"):
            values = {int(n): v for n, v in _PARAM.findall(text_)}
            for n in sorted(values, reverse=True):
                pending = pending.replace(f"${n}", values[n])
            out.setdefault(_shape(pending), pending)
            pending = None
    if pending is not None:
        out.setdefault(_shape(pending), pending)
    return [sql for sql in out.values() if not _SKIP.match(sql)]


def _shape(sql: str) -> str:
    """The statement without its values (one plan per shape)."""
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)
    return re.sub(r"\b\d+\b", "?", re.sub(r"\s+", " ", sql))


async def plans(url: str, args: argparse.Namespace) -> list[JSON]:
    """Log what the requests and a few moves run on ``url``, then EXPLAIN each statement."""
    name = url.rsplit("/", 1)[1]
    probe = await _probe(url)
    admin = await asyncpg.connect(big_fixture.PG_ADMIN)
    start = PG_LOG.stat().st_size
    try:
        await admin.execute(f'ALTER DATABASE "{name}" SET log_min_duration_statement = 0')
        await reads({"filled": (url, probe)}, 1)
        await bench_server.run(
            "postgresql", 4, 3.0, 1.0, 0.2, processes=None, redis="", database_url=url
        )
    finally:
        await admin.execute(f'ALTER DATABASE "{name}" RESET log_min_duration_statement')
        await admin.close()
    with PG_LOG.open() as log:
        log.seek(start)
        statements = logged_statements(log.read(), name)
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    out = []
    try:
        for sql in statements:
            tx = conn.transaction()
            await tx.start()
            try:
                rows = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
                plan = [r[0] for r in rows]
            except asyncpg.PostgresError as exc:
                plan = [f"(not explained: {exc})"]
            finally:
                await tx.rollback()
            seq = [line.strip() for line in plan if "Seq Scan" in line]
            out.append({"sql": sql, "plan": plan, "seq_scans": seq})
    finally:
        await conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--filled-url", default=None, help="a database big_fixture.py filled")
    parser.add_argument("--keep", action="store_true", help="keep the databases made here")
    parser.add_argument("--plans", action="store_true", help="EXPLAIN the requests' statements")
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--open", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--tables", type=int, default=50, help="tables playing (moves)")
    parser.add_argument("--seconds", type=float, default=10.0, help="per moves phase")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--think", type=float, default=0.5)
    parser.add_argument("--clock-tables", type=int, default=200)
    parser.add_argument("--clock-seconds", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=200, help="each read request")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (medians)")
    args = parser.parse_args()
    if args.plans:
        assert args.filled_url, "--plans needs --filled-url"
        found = uvloop.run(plans(args.filled_url, args))
        for entry in found:
            print("\n" + entry["sql"])
            print("\n".join("    " + line for line in entry["plan"]))
        flagged = [e["sql"][:160] for e in found if e["seq_scans"]]
        print(f"\n{len(found)} statements, {len(flagged)} with a sequential scan:")
        for sql in flagged:
            print("  " + sql)
        print(json.dumps({"benchmark": "big_data_plans", "statements": len(found),
                          "seq_scans": flagged}))  # fmt: skip
        return
    out = uvloop.run(run(args))
    print(f"  {'filled / empty':<52}{'median':>8}  rounds")
    for key, value in out["median_filled_over_empty"].items():
        each = " ".join(f"{r['filled_over_empty'][key]:.3f}" for r in out["rounds"])
        print(f"  {key:<52}{value:>8.3f}  {each}")
    print(json.dumps({"benchmark": "big_data", "run": uuid.uuid4().hex[:8], **out}))


if __name__ == "__main__":
    main()
