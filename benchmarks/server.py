"""Server speed: N tables played at once over HTTP and WebSocket; prints tables, then one JSON line.

    python benchmarks/server.py --tables 100 --seconds 15 [--think 0.5] [--db sqlite postgresql]
    python benchmarks/server.py --processes 2 --db postgresql [--redis redis://127.0.0.1:6379/0]
    python benchmarks/server.py ... --profile /tmp/prof   # py-spy the servers: CPU by layer

For each database it starts ``uvicorn`` as a subprocess (a temp SQLite file; a fresh PostgreSQL
database on 127.0.0.1:5432, dropped afterwards), creates N tables with two players each, and
connects each seat's WebSocket. Every seat is a scripted client: it waits for ``your_turn`` on
its socket (or sees its turn in its own move's response) and moves over HTTP (the strategy of
the API tests: knock when allowed, else draw from the stock and shed the highest deadwood,
choosing only among the legal actions of its view); seat 0 deals the next hand when its socket
reports ``hand_over`` (or starts a rematch when the match is over).

Two phases per database, each measured over ``--seconds`` after a warm-up:

- **paced** (latency): the player to move thinks before each move, a uniform random
  ``0.5 .. 1.5 x --think`` seconds (0.5 s by default), as people do. This is the service time a
  player feels at N live tables: moves/s, p50/p99 move latency (HTTP request to response) and
  p50/p99 event delivery (the mover's response received to the same event received on the
  opponent's socket; negative when the socket was first). A closed loop with no think time
  would keep N requests queued at all times and its p99 would measure the queue, not the
  server.
- **capacity** (throughput): the same tables with no think time, as fast as the server
  answers: the most moves/s this server and client reach, compared with ``GET /healthz``
  requests/s from the same number of concurrent loops through the same client library (the
  ceiling of an empty route on this server, client and machine).

Client, server and database share this machine's cores (with whatever else runs there), so
each phase also reports the server's CPU time per move (from ``/proc``; ``/healthz`` gets the
same per request) and the client's, which hold whatever the load, and the load average
(``os.getloadavg``). The servers' CPU is also watched for 3 s with every table seated and
nobody moving; ``server_cpu_ms_per_move_over_idle`` takes that fixed cost per second out,
which matters when a loaded machine makes few moves per second. PostgreSQL's processes and
Redis's are read from ``/proc`` too (every process of this machine by that name), so
``machine_cpu_ms_per_move`` is what a move costs the whole machine, and
``healthz_machine_cpu_ms`` what a request to ``/healthz`` does: with both phases saturating the
same cores, their ratio (``healthz_vs_move_machine_cpu``) is what capacity / ``/healthz``
comes to from CPU alone (it tracks the measured ratio; a process that ends between two readings,
such as a PostgreSQL backend, takes its CPU out of the sum). Targets (the issue): p99
move latency <= 20 ms in the paced phase and capacity >= 40% of the /healthz ceiling.

The server runs as ``python -m app`` does: without WebSocket per-message deflate.

``--processes N`` starts N servers on the same database, sharing one Redis (``--redis``, a
unique ``REDIS_PREFIX`` per run; the Redis bus is on even for N = 1, to compare): table i's
seat 0 plays through server i mod N and seat 1 through server (i + 1) mod N, so with N >= 2
every event delivery timed above is cross-process (committed by the mover's server, received on
the opponent's socket through another). ``--together`` serves both seats of table i through
server i mod N instead, as ``deploy/nginx.conf`` routes a table's requests and sockets to one
replica: no table event then needs to cross, and the other servers read only the first line
of each bus message. CPU figures are the sum over the N servers.

``--wake-probe``: beside each phase, a process that only sleeps 1 ms at a time reports how
late its wake-ups come (``wake_late_p50_ms``, ``wake_late_p99_ms``): the machine's floor for
anything that waits for a core, measured in the same seconds. A cross-process delivery waits
for three wake-ups (the mover's server, the receiving one, this client).

``--ws-moves``: the players send their moves on their table socket (``{"type": "move"}``,
answered by an ``ack``) instead of over HTTP; dealing the next hand stays HTTP. The move
latency is then from the message sent to its ack received, and event delivery is timed on the
last seq of each move (the ack's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import socket
import ssl
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

import aiohttp
import asyncpg
import httpx
import orjson
import uvloop
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.engine import parse_card  # noqa: E402
from app.main import tune_gc  # noqa: E402
from benchmarks import layers  # noqa: E402

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
JSON = dict[str, Any]
# One TLS context for every client: httpx loads the CA bundle for each client otherwise, ~50 ms
# of CPU each with the event loop blocked, and 200 of them kept the sockets from answering
# the servers' keepalive pings on a loaded machine (closed with 1011, the run stalled).
TLS = ssl.create_default_context()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) the process ``pid`` has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Server:
    url: str
    pid: int
    # Granian's worker process (its main process only supervises it): counted with ``pid``.
    workers: list[int] = field(default_factory=list)


# The bus's counters each server reports at /metrics (``app.bus.redis``), read after each phase:
# the messages of the other processes it received, those nothing of it listened to, and those
# about tables and players it does not serve at all (target 0).
BUS_COUNTERS = {
    "bus_received": "ginrummy_bus_received_total",
    "bus_skipped": "ginrummy_bus_skipped_total",
    "bus_foreign": "ginrummy_bus_foreign_messages_total",
}
# Every counter read after each phase: the bus's, the garbage collections' CPU seconds
# (``app.metrics.Collections``) and SQLite's, which runs inside the server (``app.store.db``).
COUNTERS = {
    **BUS_COUNTERS,
    "gc_seconds": "ginrummy_gc_seconds_total",
    "sqlite_seconds": "ginrummy_sqlite_cpu_seconds_total",
}


async def read_counters(servers: list[Server]) -> list[dict[str, float | None]]:
    """Each server's ``COUNTERS`` so far (None: a server without that counter)."""
    out: list[dict[str, float | None]] = []
    async with httpx.AsyncClient(verify=TLS) as http:
        for server in servers:
            text = (await http.get(f"{server.url}/metrics")).text
            values = {
                line.split(" ")[0]: float(line.split(" ")[1])
                for line in text.splitlines()
                if line and not line.startswith("#")
            }
            out.append({key: values.get(name) for key, name in COUNTERS.items()})
    return out


def counters_since(
    after: list[dict[str, float | None]], before: list[dict[str, float | None]]
) -> dict[str, list[float | None]]:
    """Each counter's growth over a phase, one figure per server."""
    return {
        key: [
            None if a[key] is None else a[key] - (b[key] or 0.0)  # type: ignore[operator]
            for a, b in zip(after, before, strict=True)
        ]
        for key in COUNTERS
    }


def servers_cpu(servers: list[Server]) -> float:
    return sum(cpu_seconds(pid) for s in servers for pid in (s.pid, *s.workers))


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux)."""
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if int((proc / "stat").read_text().rpartition(")")[2].split()[1]) == pid:
                    out.append(int(proc.name))
    return out


def named_cpu(name: str) -> float:
    """CPU time used so far by every process of this machine whose command is ``name``
    (``postgres``: the cluster's backends and its background writers; ``redis-server``)."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (proc / "comm").read_text().strip() == name:
                total += cpu_seconds(int(proc.name))
    return total


@dataclass
class Machine:
    """CPU so far of everything a move or a request costs on this machine: the servers, this
    client, PostgreSQL's processes and Redis's (SQLite works inside the servers)."""

    servers: float
    client: float
    database: float
    redis: float

    @classmethod
    def read(cls, servers: list[Server]) -> Machine:
        return cls(
            servers_cpu(servers),
            time.process_time(),
            named_cpu("postgres"),
            named_cpu("redis-server"),
        )

    def since(self, before: Machine) -> Machine:
        return Machine(
            self.servers - before.servers,
            self.client - before.client,
            self.database - before.database,
            self.redis - before.redis,
        )

    @property
    def total(self) -> float:
        return self.servers + self.client + self.database + self.redis


@contextlib.asynccontextmanager
async def serve_many(
    database_url: str, processes: int, redis: str | None, asgi: str = "uvicorn"
) -> AsyncIterator[list[Server]]:
    """``processes`` servers on ``database_url`` (the first migrates it), on one Redis bus."""
    env = {} if redis is None else {"REDIS_URL": redis, "REDIS_PREFIX": f"bench-{uuid.uuid4()}"}
    async with contextlib.AsyncExitStack() as stack:
        servers = [await stack.enter_async_context(serve(database_url, env, asgi))]
        env["MIGRATE_ON_START"] = "false"
        for _ in range(processes - 1):
            servers.append(await stack.enter_async_context(serve(database_url, env, asgi)))
        yield servers


@contextlib.asynccontextmanager
async def serve(
    database_url: str, extra: dict[str, str] | None = None, asgi: str = "uvicorn"
) -> AsyncIterator[Server]:
    """uvicorn (or ``asgi="granian"``) serving the app on ``database_url`` in a subprocess."""
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "PUBLIC_URL": f"http://127.0.0.1:{port}"}
    env["RATE_LIMIT_PLAYERS_IP"] = ""  # every player of a run comes from this one address
    # Every client of a benchmark comes from one address, many with one player's token.
    env.update({"WS_MAX_PER_ADDRESS": "0", "WS_MAX_PER_PLAYER": "0"})
    env.update(extra or {})
    if asgi == "granian":
        # A trial of another ASGI server (Rust's HTTP and WebSocket stack; installed beside
        # the benchmark only): one worker on uvloop, its runtime single-threaded.
        granian = str(Path(sys.executable).parent / "granian")
        command = [granian, "--interface", "asgi", "--factory", "app.main:create_app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
        command += ["--log-level", "warning", "--backlog", "4096", "--workers", "1"]
        command += ["--loop", "uvloop", "--runtime-mode", "st"]
    else:
        command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
        command += ["--log-level", "warning", "--backlog", "4096"]
        # As ``python -m app`` serves: its protocols (at their settings' defaults), no deflate.
        command += ["--http", "app.api.edge.protocols:HttpProtocol"]
        command += ["--ws", "app.api.edge.protocols:WebSocketProtocol"]
        command += ["--ws-per-message-deflate", "false"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, verify=TLS) as http:
            for _ in range(300):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/readyz")).status_code == 200:
                        break
                assert process.poll() is None, "the server exited"
                await asyncio.sleep(0.1)
        yield Server(url, process.pid, children(process.pid) if asgi == "granian" else [])
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextlib.asynccontextmanager
async def database(kind: str, existing: str | None = None) -> AsyncIterator[str]:
    """A fresh database: a SQLite file in a temp dir, or a new PostgreSQL database; or the
    ``existing`` one (its URL), kept as it is."""
    if existing is not None:
        yield existing
        return
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
    """What the clients measured in one phase; only moves started inside the window count."""

    measuring: bool = False
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
class Bench:
    """The phase the clients are in: its think time and its Stats."""

    think: float
    stats: Stats = field(default_factory=Stats)
    stop: bool = False
    ws_moves: bool = False
    idle_share: float = 0.0
    sockets_lost: int = 0

    async def pause(self) -> None:
        """The player's think time before a move (none in the capacity phase)."""
        if self.think:
            await asyncio.sleep(self.think * random.uniform(0.5, 1.5))


@dataclass
class Seat:
    """One scripted player: a token, a socket, and a queue of reasons to act."""

    table_id: str
    seat: int
    token: str
    wake: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    acks: asyncio.Queue[JSON] = field(default_factory=asyncio.Queue)
    ws: ClientConnection | None = None
    http: aiohttp.ClientSession = field(init=False)
    server: Server = field(init=False)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def listen(seat: Seat, bench: Bench) -> None:
    """The seat's socket: your_turn and finished hands wake the player; events are timed."""
    assert seat.ws is not None
    try:
        await _listen(seat, seat.ws, bench)
        if not bench.stop:
            bench.sockets_lost += 1  # a run with lost sockets stalls: its figures say so
    finally:
        seat.acks.put_nowait({"type": "closed"})  # a move waiting for its ack gives up


async def _listen(seat: Seat, ws: ClientConnection, bench: Bench) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for raw in ws:
            now = time.perf_counter()
            message = orjson.loads(raw)
            kind = message["type"]
            if kind in ("ack", "error"):
                seat.acks.put_nowait(message)
            elif kind == "your_turn":
                seat.wake.put_nowait(message["phase"])
            elif kind == "event":
                stats = bench.stats
                if message["event"].get("seat") != seat.seat and stats.measuring:
                    stats.delivered[(seat.table_id, message["seq"])] = now
                if seat.seat == 0 and message["event"]["type"] == "hand_over":
                    seat.wake.put_nowait("hand_over")
                if seat.seat == 1 and message["event"]["type"] == "rematch_offered":
                    seat.wake.put_nowait("rematch_offered")


async def play(seat: Seat, bench: Bench) -> None:
    """Act whenever woken, and again while the own response says it is still our turn."""
    base = f"/v1/tables/{seat.table_id}"
    while not bench.stop:
        reason = await seat.wake.get()
        if reason == "stop":
            return
        # your_turn says the phase: in these two the legal moves need no view.
        path, body = {
            "hand_over": ("next-hand", None),
            "rematch_offered": ("rematch/accept", None),
            "upcard_offer": ("moves/pass", None),
            "draw": ("moves/draw", {"source": "stock"}),
        }[reason]
        while path and not bench.stop:
            await bench.pause()
            stats = bench.stats
            measuring = stats.measuring
            start = time.perf_counter()
            if bench.ws_moves and path.startswith("moves/"):
                assert seat.ws is not None
                message = {"type": "move", **_move_message(path, body)}
                await seat.ws.send(orjson.dumps(message).decode())
                out = await seat.acks.get()
                now = time.perf_counter()
                if out["type"] != "ack":
                    stats.errors += 1
                    break
                seqs = [out["seq"]]
            else:
                data = None if body is None else orjson.dumps(body)
                async with seat.http.post(f"{base}/{path}", data=data, headers=seat.auth) as r:
                    status, raw = r.status, await r.read()
                now = time.perf_counter()
                out = orjson.loads(raw)
                if status != 200:
                    if path == "next-hand" and out["code"] == "match_over":
                        path = "rematch"
                        continue
                    stats.errors += 1
                    break
                seqs = [event["seq"] for event in out["events"]]
            if measuring:
                stats.moves += 1
                stats.latencies.append(now - start)
                for seq in seqs:
                    stats.responded[(seat.table_id, seq)] = now
            # Seat 0 deals the next hand (or asks for a rematch, which seat 1 accepts) when its
            # socket says hand_over.
            game = out["table"]["game"]
            path, body = "", None
            if game["match"]["status"] == "playing" and game["hand"]["turn"] == seat.seat:
                path, body = choose(game)


def _move_message(path: str, body: JSON | None) -> JSON:
    """The socket's move message for the HTTP move ``path`` with ``body``."""
    kind = path.removeprefix("moves/")
    if kind == "draw":
        return {"kind": "draw_stock" if body and body["source"] == "stock" else "draw_discard"}
    return {"kind": kind, **(body or {})}


async def setup(
    http: httpx.AsyncClient, servers: list[Server], tables: int, *, together: bool = False
) -> list[Seat]:
    """N tables with two new players each, their sockets connected (not yet started); seat s
    of table i is served by server (i + s) mod len(servers), or both seats by server i mod
    len(servers) if ``together``."""

    async def post(path: str, token: str | None = None, body: JSON | None = None) -> JSON:
        """A setup request, sent again (same Idempotency-Key) if its kept-alive connection was
        closed under it."""
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in range(5):
            try:
                r = await http.post(path, json=body, headers=headers)
                break
            except httpx.TransportError:
                if attempt == 4:
                    raise
        assert r.status_code in (200, 201), r.text
        out: JSON = r.json()
        return out

    async def one(i: int) -> list[Seat]:
        a = await post("/v1/players", body={"name": f"a{i}"})
        b = await post("/v1/players", body={"name": f"b{i}"})
        table = await post("/v1/tables", a["token"], {})
        await post(f"/v1/invites/{table['invite_code']}", b["token"])
        seats = [Seat(table["table_id"], 0, a["token"]), Seat(table["table_id"], 1, b["token"])]
        for seat in seats:
            seat.server = servers[(i + (0 if together else seat.seat)) % len(servers)]
            ws_base = seat.server.url.replace("http://", "ws://", 1)
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


async def healthz(
    clients: list[aiohttp.ClientSession], servers: list[Server], seconds: float
) -> JSON:
    """GET /healthz from one loop per client for ``seconds``: requests/s and CPU."""
    count = 0
    deadline = time.perf_counter() + seconds

    async def loop(http: aiohttp.ClientSession) -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            try:
                async with http.get("/healthz") as r:
                    await r.read()
            except aiohttp.ClientConnectionError:
                continue  # a kept-alive connection the server closed as idle meanwhile
            assert r.status == 200
            count += 1

    start = time.perf_counter()
    before = Machine.read(servers)
    await asyncio.gather(*(loop(http) for http in clients))
    elapsed = time.perf_counter() - start
    used = Machine.read(servers).since(before)
    per = 1000 / max(count, 1)
    return {
        "healthz_per_s": round(count / elapsed, 1),
        "healthz_server_cpu_ms": round(used.servers * per, 3),
        "healthz_client_cpu_ms": round(used.client * per, 3),
        # Everything one request cost the machine (servers, client, database, Redis).
        "healthz_machine_cpu_ms": round(used.total * per, 3),
    }


def _ms(values: list[float], q: float) -> float:
    return round(_pct(values, q) * 1000, 2)


def profile(servers: list[Server], seconds: float, out: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy recording each server for ``seconds`` (raw stacks, ``benchmarks/layers.py``)."""
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    out.mkdir(parents=True, exist_ok=True)
    duration = str(max(1, int(seconds)))
    options = ["--rate", "100", "--format", "raw", "--nonblocking", "--duration", duration]
    return [
        subprocess.Popen(
            [spy, "record", "--pid", str(s.pid), *options, "-o", str(out / f"{s.pid}.raw")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for s in servers
    ]


# Seconds the servers are watched with every table seated and every socket open, before the
# first move: their CPU then is the fixed cost per second (sockets' heartbeats and health
# looks, the bus's pings, the bot runner's scans) that every phase pays whatever its moves/s.
IDLE_SECONDS = 3.0


async def idle(servers: list[Server], seconds: float) -> float:
    """The servers' CPU share (cores) while nobody moves."""
    cpu, start = servers_cpu(servers), time.perf_counter()
    await asyncio.sleep(seconds)
    return (servers_cpu(servers) - cpu) / (time.perf_counter() - start)


# The machine's floor for anything that waits to be woken: a process that does nothing but
# sleep 1 ms at a time, timing how late each wake-up comes, while a phase runs. Delivering an
# event across processes wakes three (the mover's server publishing, the receiving server,
# this client), each at least as late as this.
WAKE_PROBE = """
import json, sys, time
end, late = time.perf_counter() + float(sys.argv[1]), []
while (began := time.perf_counter()) < end:
    time.sleep(0.001)
    late.append(time.perf_counter() - began - 0.001)
late.sort()
print(json.dumps([late[len(late) // 2], late[int(len(late) * 0.99)], len(late)]))
"""


def wake_probe(seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", WAKE_PROBE, str(seconds)], stdout=subprocess.PIPE
    )


def wake_figures(probe: subprocess.Popen[bytes]) -> JSON:
    out, _ = probe.communicate()
    p50, p99, wakes = json.loads(out)
    return {
        "wake_late_p50_ms": round(p50 * 1000, 2),
        "wake_late_p99_ms": round(p99 * 1000, 2),
        "wakes": wakes,
    }


async def measure(
    bench: Bench,
    servers: list[Server],
    think: float,
    warmup: float,
    seconds: float,
    *,
    profile_to: Path | None = None,
    wake: bool = False,
) -> JSON:
    """One phase: switch the clients to ``think``, warm up, then measure for ``seconds``
    (and profile the servers meanwhile into ``profile_to``; with ``wake``, the wake-up
    probe beside them)."""
    bench.think = think
    bench.stats = stats = Stats()
    await asyncio.sleep(warmup)
    spies = [] if profile_to is None else profile(servers, seconds, profile_to)
    probe = wake_probe(seconds) if wake else None
    load = os.getloadavg()[0]
    counters = await read_counters(servers)
    before = Machine.read(servers)
    stats.measuring = True
    start = time.perf_counter()
    await asyncio.sleep(seconds)
    stats.measuring = False
    elapsed = time.perf_counter() - start
    used = Machine.read(servers).since(before)
    server_cpu, client_cpu = used.servers, used.client
    grown = counters_since(await read_counters(servers), counters)
    for spy in spies:
        await asyncio.to_thread(spy.wait)
    woken = {} if probe is None else await asyncio.to_thread(wake_figures, probe)
    moves = max(stats.moves, 1)
    delivery = stats.delivery()
    return {
        "think_s": think,
        "moves": stats.moves,
        "moves_per_s": round(stats.moves / elapsed, 1),
        "move_p50_ms": _ms(stats.latencies, 0.50),
        "move_p99_ms": _ms(stats.latencies, 0.99),
        "move_mean_ms": round(statistics.fmean(stats.latencies) * 1000, 2)
        if stats.latencies
        else None,
        "event_delivery_p50_ms": _ms(delivery, 0.50),
        "event_delivery_p99_ms": _ms(delivery, 0.99),
        "events_timed": len(delivery),
        "refused": stats.errors,
        "sockets_lost": bench.sockets_lost,
        # CPU per move, whatever else the machine runs: 1000 / server_cpu_ms_per_move is the
        # moves/s one free core would give the server.
        "server_cpu_ms_per_move": round(server_cpu * 1000 / moves, 3),
        "server_cpu_share": round(server_cpu / elapsed, 2),
        # The same without the fixed cost per second measured before the first move: what a
        # move adds, which holds better when a loaded machine makes few moves per second.
        "server_cpu_ms_per_move_over_idle": round(
            (server_cpu - bench.idle_share * elapsed) * 1000 / moves, 3
        ),
        "server_idle_cpu_share": round(bench.idle_share, 3),
        "client_cpu_ms_per_move": round(client_cpu * 1000 / moves, 3),
        # PostgreSQL's processes and Redis's, and everything a move cost this machine: on a
        # saturated machine, moves/s is about its cores / machine_cpu_ms_per_move.
        "database_cpu_ms_per_move": round(used.database * 1000 / moves, 3),
        "redis_cpu_ms_per_move": round(used.redis * 1000 / moves, 3),
        "machine_cpu_ms_per_move": round(used.total * 1000 / moves, 3),
        "loadavg_1m": round(max(load, os.getloadavg()[0]), 2),
        # Per server: bus messages of the others received, not listened to, and foreign.
        **{key: grown[key] for key in BUS_COUNTERS},
        # The servers' garbage collections, as a share of their CPU.
        "gc_share": round(sum(s or 0.0 for s in grown["gc_seconds"]) / max(server_cpu, 1e-9), 4),
        # SQLite's writes, inside the servers: part of server_cpu_ms_per_move (0 on PostgreSQL,
        # whose CPU is database_cpu_ms_per_move).
        "sqlite_cpu_ms_per_move": round(
            sum(s or 0.0 for s in grown["sqlite_seconds"]) * 1000 / moves, 3
        ),
        **woken,
    }


async def run(
    kind: str,
    tables: int,
    seconds: float,
    warmup: float,
    think: float,
    *,
    processes: int | None,
    redis: str,
    ws_moves: bool = False,
    together: bool = False,
    profile_to: Path | None = None,
    asgi: str = "uvicorn",
    database_url: str | None = None,
    wake: bool = False,
) -> JSON:
    bus = None if processes is None else redis
    async with (
        database(kind, database_url) as url,
        serve_many(url, processes or 1, bus, asgi) as servers,
    ):
        base = servers[0].url
        async with contextlib.AsyncExitStack() as stack:
            http = await stack.enter_async_context(
                httpx.AsyncClient(base_url=base, timeout=60, verify=TLS)
            )
            seats = await setup(http, servers, tables, together=together)
            for seat in seats:
                # A client per player, as in life. aiohttp, not httpx: the client shares the
                # machine's cores with the servers, and httpx spent 1.5-2 ms of CPU per move
                # (more than the server), which showed in the servers' latency tail.
                seat.http = await stack.enter_async_context(
                    aiohttp.ClientSession(
                        base_url=seat.server.url,
                        timeout=aiohttp.ClientTimeout(total=60),
                        headers={"Content-Type": "application/json"},
                    )
                )
            # The client's own full garbage collections (its 400 connections: ~130 ms each,
            # measured) would stop every player at once and count as move latency. Like the
            # server, it freezes what it has set up and collects the oldest generation rarely.
            tune_gc()
            bench = Bench(think, ws_moves=ws_moves)
            tasks = [asyncio.create_task(listen(s, bench)) for s in seats]
            tasks += [asyncio.create_task(play(s, bench)) for s in seats]
            bench.idle_share = await idle(servers, IDLE_SECONDS)
            for seat in seats[::2]:
                async with seat.http.post(
                    f"/v1/tables/{seat.table_id}/start", headers=seat.auth
                ) as r:
                    assert r.status == 200, await r.text()
                    hand = orjson.loads(await r.read())["table"]["game"]["hand"]
                if hand["turn"] == 0:
                    seat.wake.put_nowait(hand["phase"])
            paced = await measure(bench, servers, think, warmup + think, seconds, wake=wake)
            capacity = await measure(
                bench, servers, 0.0, warmup, seconds, profile_to=profile_to, wake=wake
            )
            bench.stop = True
            for seat in seats:
                seat.wake.put_nowait("stop")
                assert seat.ws is not None
                await seat.ws.close()
            await asyncio.gather(*tasks, return_exceptions=True)
            clients = [s.http for s in seats[::2]]  # as many loops as tables
            capacity.update(await healthz(clients, servers, seconds))
    capacity["moves_vs_healthz"] = round(capacity["moves_per_s"] / capacity["healthz_per_s"], 3)
    # The same ratio from CPU alone: what /healthz costs the whole machine over what a move
    # costs it. Both phases saturate the same cores, so the ratio above follows it.
    capacity["healthz_vs_move_machine_cpu"] = round(
        capacity["healthz_machine_cpu_ms"] / capacity["machine_cpu_ms_per_move"], 3
    )
    return {
        "tables": tables,
        "processes": len(servers),
        "moves_over": "websocket" if ws_moves else "http",
        "seats": "together" if together else "split",
        "asgi_server": asgi,
        "paced": paced,
        "capacity": capacity,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--think", type=float, default=0.5, help="mean think time (s), paced")
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument(
        "--database-url",
        default=None,
        help="play on this existing database (of the one --db kind) instead of a fresh one",
    )
    parser.add_argument(
        "--processes", type=int, default=None, help="N servers on one database and Redis bus"
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="with --processes")
    parser.add_argument(
        "--ws-moves", action="store_true", help="moves on the table socket instead of HTTP"
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="with --processes N: both seats of a table on one server, as nginx.conf routes",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="py-spy each server in the capacity phase into this directory, print its layers",
    )
    parser.add_argument(
        "--asgi-server",
        choices=["uvicorn", "granian"],
        default="uvicorn",
        help="serve with granian instead (a trial: pip install granian beside the benchmark)",
    )
    parser.add_argument(
        "--wake-probe",
        action="store_true",
        help="time a 1 ms sleeper's wake-ups beside each phase: the machine's floor for waking",
    )
    args = parser.parse_args()
    results: JSON = {}
    for kind in args.db:
        results[kind] = r = uvloop.run(
            run(
                kind,
                args.tables,
                args.seconds,
                args.warmup,
                args.think,
                processes=args.processes,
                redis=args.redis,
                ws_moves=args.ws_moves,
                together=args.together,
                profile_to=None if args.profile is None else args.profile / kind,
                asgi=args.asgi_server,
                database_url=args.database_url,
                wake=args.wake_probe,
            )
        )
        print(
            f"\n{kind}: {args.tables} tables, {r['processes']} process(es), "
            f"moves over {r['moves_over']}, "
            f"{args.seconds:g} s per phase"
        )
        for phase in ("paced", "capacity"):
            print(f"  {phase}")
            for key, value in r[phase].items():
                print(f"    {key:<24}{value}")
        if args.profile is not None:
            raws = sorted((args.profile / kind).glob("*.raw"))
            counts = layers.tally(line for raw in raws for line in raw.read_text().splitlines())
            print(f"  where the servers' time went, capacity phase ({len(raws)} profiles):")
            print(layers.table(counts))
        print(
            f"  target p99 <= 20 ms (paced): {r['paced']['move_p99_ms'] <= 20}; "
            f"capacity >= 40% of /healthz: {r['capacity']['moves_vs_healthz'] >= 0.4}"
        )
    print(json.dumps({"benchmark": "server", "seconds": args.seconds, **results}))


if __name__ == "__main__":
    main()
