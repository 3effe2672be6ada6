"""Server speed: N tables played at once over HTTP and WebSocket; prints tables, then one JSON line.

    python benchmarks/server.py --tables 100 --seconds 20 [--db sqlite postgresql]

For each database it starts ``uvicorn`` as a subprocess (a temp SQLite file; a fresh PostgreSQL
database on 127.0.0.1:5432, dropped afterwards), creates N tables with two players each, and
connects each seat's WebSocket. Every seat is a scripted client: it waits for ``your_turn`` on
its socket (or sees its turn in its own move's response), moves over HTTP as fast as the
server answers (the strategy of the API tests: knock when allowed, else draw from the stock and
shed the highest deadwood, choosing only among the legal actions of its view); seat 0 deals the
next hand when its socket reports ``hand_over`` (or starts a rematch when the match is over).

Measured over ``--seconds`` after a warm-up: moves/s; move latency (HTTP request to response);
event delivery latency (the mover's response received to the same event received on the
opponent's socket; negative when the socket was first); then ``GET /healthz`` requests/s with
the same number of concurrent clients, the ceiling of this server and client on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import uvloop
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine import parse_card  # noqa: E402

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
JSON = dict[str, Any]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def serve(database_url: str) -> AsyncIterator[str]:
    """uvicorn serving the app on ``database_url`` in a subprocess; yields its base URL."""
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "PUBLIC_URL": f"http://127.0.0.1:{port}"}
    command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    command += ["--log-level", "warning", "--backlog", "4096"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url) as http:
            for _ in range(300):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/readyz")).status_code == 200:
                        break
                assert process.poll() is None, "the server exited"
                await asyncio.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextlib.asynccontextmanager
async def database(kind: str) -> AsyncIterator[str]:
    """A fresh database: a SQLite file in a temp dir, or a new PostgreSQL database."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite+aiosqlite:///{tmp}/bench.db"
        return
    name = f"ginrummy_bench_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(PG_ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def choose(game: JSON) -> tuple[str, JSON | None]:
    """(path suffix, body) among the view's legal actions: knock if allowed, else shed deadwood."""
    legal = game["legal"]
    actions = set(legal["actions"])
    if legal["knock_discards"]:
        best = min(legal["knock_discards"], key=lambda k: k["deadwood"])
        return "moves/knock", {"card": best["card"]}
    if "pass" in actions:
        return "moves/pass", None
    if "draw_stock" in actions:
        return "moves/draw", {"source": "stock"}
    loose = [c for c in game["hand"]["yours"]["deadwood_cards"] if c in legal["discards"]]
    pool = loose or legal["discards"]
    return "moves/discard", {"card": max(pool, key=lambda c: parse_card(c).points)}


@dataclass
class Stats:
    """What the clients measured; only moves started inside the window count."""

    measuring: bool = False
    stop: bool = False
    moves: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    # (table_id, seq) -> when the mover's response arrived / when the opponent's socket got it.
    responded: dict[tuple[str, int], float] = field(default_factory=dict)
    delivered: dict[tuple[str, int], float] = field(default_factory=dict)

    def delivery(self) -> list[float]:
        return [
            self.delivered[key] - at for key, at in self.responded.items() if key in self.delivered
        ]


@dataclass
class Seat:
    """One scripted player: a token, a socket, and a queue of reasons to act."""

    table_id: str
    seat: int
    token: str
    wake: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    ws: ClientConnection | None = None

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def listen(seat: Seat, stats: Stats) -> None:
    """The seat's socket: your_turn and finished hands wake the player; events are timed."""
    assert seat.ws is not None
    with contextlib.suppress(ConnectionClosed):
        async for raw in seat.ws:
            now = time.perf_counter()
            message = json.loads(raw)
            kind = message["type"]
            if kind == "your_turn":
                seat.wake.put_nowait(message["phase"])
            elif kind == "event":
                if message["event"].get("seat") != seat.seat and stats.measuring:
                    stats.delivered[(seat.table_id, message["seq"])] = now
                if seat.seat == 0 and message["event"]["type"] == "hand_over":
                    seat.wake.put_nowait("hand_over")


async def play(seat: Seat, http: httpx.AsyncClient, stats: Stats) -> None:
    """Act whenever woken, and again while the own response says it is still our turn."""
    base = f"/v1/tables/{seat.table_id}"
    while not stats.stop:
        reason = await seat.wake.get()
        if reason == "stop":
            return
        # your_turn says the phase: in these two the legal moves need no view.
        path, body = {
            "hand_over": ("next-hand", None),
            "upcard_offer": ("moves/pass", None),
            "draw": ("moves/draw", {"source": "stock"}),
        }[reason]
        while path and not stats.stop:
            measuring = stats.measuring
            start = time.perf_counter()
            r = await http.post(f"{base}/{path}", json=body, headers=seat.auth)
            now = time.perf_counter()
            if r.status_code != 200:
                if path == "next-hand" and r.json()["code"] == "match_over":
                    path = "rematch"
                    continue
                stats.errors += 1
                break
            out = r.json()
            if measuring:
                stats.moves += 1
                stats.latencies.append(now - start)
                for event in out["events"]:
                    stats.responded[(seat.table_id, event["seq"])] = now
            # Seat 0 deals the next hand (or starts a rematch) when its socket says hand_over.
            game = out["table"]["game"]
            path, body = "", None
            if game["match"]["status"] == "playing" and game["hand"]["turn"] == seat.seat:
                path, body = choose(game)


async def setup(http: httpx.AsyncClient, ws_base: str, tables: int) -> list[Seat]:
    """N tables with two new players each, their sockets connected (not yet started)."""

    async def one(i: int) -> list[Seat]:
        a = (await http.post("/v1/players", json={"name": f"a{i}"})).json()
        b = (await http.post("/v1/players", json={"name": f"b{i}"})).json()
        auth_a = {"Authorization": f"Bearer {a['token']}"}
        table = (await http.post("/v1/tables", json={}, headers=auth_a)).json()
        join = await http.post(
            f"/v1/invites/{table['invite_code']}",
            headers={"Authorization": f"Bearer {b['token']}"},
        )
        assert join.status_code == 200, join.text
        seats = [Seat(table["table_id"], 0, a["token"]), Seat(table["table_id"], 1, b["token"])]
        for seat in seats:
            url = f"{ws_base}/v1/tables/{seat.table_id}/ws?token={seat.token}"
            seat.ws = await connect(url, proxy=None, max_queue=None)
        return seats

    out: list[Seat] = []
    for start in range(0, tables, 20):
        for seats in await asyncio.gather(*(one(i) for i in range(start, min(start + 20, tables)))):
            out += seats
    return out


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def healthz(http: httpx.AsyncClient, concurrency: int, seconds: float) -> float:
    """GET /healthz from ``concurrency`` loops for ``seconds``: requests/s."""
    count = 0
    deadline = time.perf_counter() + seconds

    async def loop() -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            r = await http.get("/healthz")
            assert r.status_code == 200
            count += 1

    start = time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    return count / (time.perf_counter() - start)


async def run(kind: str, tables: int, seconds: float, warmup: float) -> JSON:
    async with database(kind) as url, serve(url) as base:
        limits = httpx.Limits(max_connections=4 * tables, max_keepalive_connections=4 * tables)
        async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
            seats = await setup(http, base.replace("http://", "ws://", 1), tables)
            stats = Stats()
            tasks = [asyncio.create_task(listen(s, stats)) for s in seats]
            tasks += [asyncio.create_task(play(s, http, stats)) for s in seats]
            for seat in seats[::2]:
                r = await http.post(f"/v1/tables/{seat.table_id}/start", headers=seat.auth)
                assert r.status_code == 200, r.text
                hand = r.json()["table"]["game"]["hand"]
                if hand["turn"] == 0:
                    seat.wake.put_nowait(hand["phase"])
            await asyncio.sleep(warmup)
            stats.measuring = True
            start = time.perf_counter()
            await asyncio.sleep(seconds)
            stats.measuring = False
            elapsed = time.perf_counter() - start
            stats.stop = True
            for seat in seats:
                seat.wake.put_nowait("stop")
                assert seat.ws is not None
                await seat.ws.close()
            await asyncio.gather(*tasks, return_exceptions=True)
            ceiling = await healthz(http, tables, seconds)
    moves_per_s = stats.moves / elapsed
    delivery = stats.delivery()
    return {
        "tables": tables,
        "moves": stats.moves,
        "moves_per_s": round(moves_per_s, 1),
        "move_p50_ms": round(_pct(stats.latencies, 0.50) * 1000, 2),
        "move_p99_ms": round(_pct(stats.latencies, 0.99) * 1000, 2),
        "event_delivery_p50_ms": round(_pct(delivery, 0.50) * 1000, 2),
        "event_delivery_p99_ms": round(_pct(delivery, 0.99) * 1000, 2),
        "events_timed": len(delivery),
        "healthz_per_s": round(ceiling, 1),
        "moves_vs_healthz": round(moves_per_s / ceiling, 3),
        "refused": stats.errors,
        "mean_move_ms": round(statistics.fmean(stats.latencies) * 1000, 2)
        if stats.latencies
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    args = parser.parse_args()
    results: JSON = {}
    for kind in args.db:
        results[kind] = uvloop.run(run(kind, args.tables, args.seconds, args.warmup))
        r = results[kind]
        print(f"\n{kind}: {args.tables} tables, {args.seconds:g} s")
        for key, value in r.items():
            print(f"  {key:<24}{value}")
    print(json.dumps({"benchmark": "server", "seconds": args.seconds, **results}))


if __name__ == "__main__":
    main()
