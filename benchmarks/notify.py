"""Notifications: webhook throughput and latency, and the outbox's cost per move.

    python benchmarks/notify.py --tables 100 --seconds 10 [--think 1] [--db postgresql sqlite]
    python benchmarks/notify.py ... --profile /tmp/prof   # py-spy the server: CPU by layer

For each database it starts one server (``benchmarks.server.serve``: uvicorn in a subprocess,
a fresh database) with webhooks to loopback allowed, creates ``--tables`` tables with two
players each, and plays them all at once, as fast as the server answers (each table a loop:
the seat to move reads its view and makes the API tests' move, after ``--think`` seconds
give or take half), in two phases of ``--seconds``:

- **without**: no player has a channel: moves write no outbox rows;
- **with**: every player has a webhook on a receiver in this process (an HTTP/1.1 server in
  its own thread): every ``your_turn`` (and each finished match) is written to the outbox with
  its move, then POSTed, signed, by the server's dispatcher.

Each phase reports moves/s and the server's CPU time per move (``/proc``, whatever else the
machine runs); the second also the webhooks received per second and the latency from the
commit (the outbox row's ``created_at``) to the receiver (p50/p99), read back from the
database, and the webhooks still undelivered when the phase ended (they are then waited for
and counted in the latency too).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.server import (  # noqa: E402
    Server,
    _free_port,
    choose,
    cpu_seconds,
    database,
    profile,
    serve,
)

JSON = dict[str, Any]


class Receiver:
    """A webhook receiver in a process of its own (so the load generator here does not slow
    it): an HTTP/1.1 server answering 204, appending "webhook-id arrival-time" lines to a file.
    """

    def __init__(self, directory: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = directory / f"arrivals-{self.port}.txt"
        self.log.touch()
        command = [sys.executable, __file__, "--receiver", str(self.port), str(self.log)]
        self.process = subprocess.Popen(command)
        deadline = time.monotonic() + 120  # its imports are slow on a loaded machine
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            assert time.monotonic() < deadline, "the receiver did not start"
            time.sleep(0.05)

    def arrivals(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for line in self.log.read_text().splitlines():
            message_id, _, at = line.partition(" ")
            if at:
                out.setdefault(message_id, float(at))
        return out

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()


def receive(port: int, log: Path) -> None:
    """The receiver process's body."""
    out = log.open("a", buffering=1)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            at = time.time()
            with lock:
                out.write(f"{self.headers['webhook-id']} {at}\n")
            self.send_response(204)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


async def call(http: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
    """``http.request``, again on a transport error: the server closes a keep-alive connection
    idle for 5 s, and a loaded machine makes that race with the next request common."""
    for _ in range(4):
        with contextlib.suppress(httpx.TransportError):
            return await http.request(method, path, **kw)
    return await http.request(method, path, **kw)


async def new_table(http: httpx.AsyncClient, hook: str | None) -> tuple[str, list[str]]:
    tokens = []
    for name in ("A", "B"):
        r = await call(http, "POST", "/v1/players", json={"name": name})
        token = r.json()["token"]
        tokens.append(token)
        if hook is not None:
            r = await call(
                http,
                "PUT",
                "/v1/players/me/webhook",
                json={"url": f"{hook}/{r.json()['id']}"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert r.status_code == 200, r.text
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    table = (await call(http, "POST", "/v1/tables", json={}, headers=auth[0])).json()
    await call(http, "POST", f"/v1/invites/{table['invite_code']}", headers=auth[1])
    await call(http, "POST", f"/v1/tables/{table['table_id']}/start", headers=auth[0])
    return table["table_id"], tokens


async def play(
    http: httpx.AsyncClient, table_id: str, tokens: list[str], until: float, think: float
) -> int:
    """Move at the table until ``until``, each move after a pause of 0.5 to 1.5 x ``think``
    seconds (0: as fast as the server answers); how many moves."""
    moves = 0
    auth = [{"Authorization": f"Bearer {t}"} for t in tokens]
    while time.monotonic() < until:
        view = (await call(http, "GET", f"/v1/tables/{table_id}", headers=auth[0])).json()
        game = view["game"]
        if game["match"]["status"] == "finished":
            await call(http, "POST", f"/v1/tables/{table_id}/rematch", headers=auth[0])
            await call(http, "POST", f"/v1/tables/{table_id}/rematch/accept", headers=auth[1])
            continue
        hand = game["hand"]
        seat = 0 if hand["phase"] == "over" else int(hand["turn"])
        if seat != 0:
            view = (await call(http, "GET", f"/v1/tables/{table_id}", headers=auth[seat])).json()
        game = view["game"]
        if "next_hand" in game["legal"]["actions"]:
            path, body = "next-hand", None
        else:
            path, body = choose(game)
        if think:
            await asyncio.sleep(think * random.uniform(0.5, 1.5))
        r = await call(http, "POST", f"/v1/tables/{table_id}/{path}", json=body, headers=auth[seat])
        moves += r.status_code == 200
    return moves


async def created_times(url: str) -> dict[str, float]:
    """Each outbox row's commit time (``created_at``), by message id."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[1]
        with contextlib.closing(sqlite3.connect(path)) as conn:
            rows = conn.execute("SELECT message_id, created_at FROM outbox").fetchall()
        stamps = (datetime.fromisoformat(c) for _, c in rows)
        return {
            m: (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()
            for (m, _), t in zip(rows, stamps, strict=True)
        }
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        rows = await conn.fetch("SELECT message_id, created_at FROM outbox")
    finally:
        await conn.close()
    return {r["message_id"]: r["created_at"].timestamp() for r in rows}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


async def phase(  # noqa: PLR0917
    server: Server,
    url: str,
    tables: int,
    seconds: float,
    think: float,
    receiver: Receiver | None,
    profile_to: Path | None = None,
) -> JSON:
    limits = httpx.Limits(max_connections=tables * 2, max_keepalive_connections=tables * 2)
    async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as http:
        hook = None if receiver is None else receiver.url
        seated = [await new_table(http, hook) for _ in range(tables)]
        await asyncio.sleep(1)  # the joins' notifications go out first
        before = 0 if receiver is None else len(receiver.arrivals())
        wall_start = time.time()
        cpu, started = cpu_seconds(server.pid), time.monotonic()
        until = started + seconds
        spies = [] if profile_to is None else profile([server], seconds, profile_to)
        counts = await asyncio.gather(
            *(play(http, t, tokens, until, think) for t, tokens in seated)
        )
        for spy in spies:
            spy.wait()
        elapsed = time.monotonic() - started
        moves = sum(counts)
        out: JSON = {
            "moves": moves,
            "moves_per_s": round(moves / elapsed, 1),
        }
        if receiver is None:
            out["server_cpu_ms_per_move"] = round((cpu_seconds(server.pid) - cpu) * 1000 / moves, 3)
            return out
        during = len(receiver.arrivals()) - before
        wall = time.monotonic()
        every = await created_times(url)
        times = {m: t for m, t in every.items() if t >= wall_start}
        for _ in range(600):  # wait for the backlog (at most a minute)
            arrived = receiver.arrivals()
            if all(m in arrived for m in times):
                break
            await asyncio.sleep(0.1)
        drained = time.monotonic() - wall
        out["server_cpu_ms_per_move"] = round((cpu_seconds(server.pid) - cpu) * 1000 / moves, 3)
        arrivals = receiver.arrivals()
        latency = [arrivals[m] - times[m] for m in arrivals if m in times]
        out.update(
            {
                "webhooks_written": len(times),
                "webhooks_received_during": during,
                "webhooks_per_s": round(during / elapsed, 1),
                "backlog_at_end": len(times) - during,
                "backlog_drained_s": round(drained, 2),
                "latency_p50_ms": _pct(latency, 0.5),
                "latency_p99_ms": _pct(latency, 0.99),
                "latency_max_ms": _pct(latency, 1.0),
            }
        )
        return out


async def run(  # noqa: PLR0917
    dbs: list[str],
    tables: int,
    seconds: float,
    think: float,
    directory: Path,
    profile_to: Path | None,
) -> JSON:
    results: JSON = {}
    env = {"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOW_LOOPBACK": "true", "LOG_LEVEL": "WARNING"}
    for kind in dbs:
        for name in ("without", "with"):
            async with database(kind) as url, serve(url, env) as server:
                receiver = Receiver(directory) if name == "with" else None
                try:
                    spy_to = None if profile_to is None else profile_to / f"{kind}_{name}"
                    result = await phase(server, url, tables, seconds, think, receiver, spy_to)
                finally:
                    if receiver is not None:
                        receiver.close()
            results[f"{kind}_{name}"] = result
            print(kind, name, json.dumps(result), flush=True)
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--db", nargs="+", default=["postgresql", "sqlite"])
    p.add_argument("--think", type=float, default=0.0, help="pause before each move (s)")
    p.add_argument("--profile", type=Path, help="py-spy the server into this directory")
    p.add_argument("--receiver", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.receiver:
        receive(int(args.receiver[0]), Path(args.receiver[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        results = uvloop.run(
            run(args.db, args.tables, args.seconds, args.think, Path(tmp), args.profile)
        )
    summary = {"tables": args.tables, "seconds": args.seconds, "think": args.think}
    print(json.dumps({**summary, "load_average": os.getloadavg(), **results}))


if __name__ == "__main__":
    main()
