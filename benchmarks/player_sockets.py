"""Idle player sockets: N ``/v1/players/me/ws`` sockets open and quiet; prints one JSON line.

    python benchmarks/player_sockets.py --sockets 2000 [--clients 4] [--idle 60]

Starts the server as ``python -m app`` (on a temp SQLite file, no caps on sockets per address
or players per address) and creates ``--sockets`` players (``POST /v1/players``); then
``--clients`` separate client processes take a ticket for each (``POST /v1/ws-tickets``, as a
browser does, just before the socket: a ticket lasts ``WS_TICKET_SECONDS``) and open the
player's socket with it (the open-file limit raised to the hard limit; the server inherits it).
Each client speaks a minimal WebSocket of its own: the upgrade, then it answers the server's
pings and counts its messages. A lobby full of people waiting: nothing else happens. Figures:

- server RSS per socket: RSS with the N sockets open and idle, minus RSS after 20 warm-up
  sockets, / N;
- server CPU (user + system, from ``/proc``) per second over ``--idle`` s with the sockets idle
  (``WS_PING_INTERVAL`` is 20 s: three keepalive rounds in 60 s), as a share of one core, and
  before the sockets were opened (the idle server alone);
- per socket over the window: the pings and heartbeats each received, and the sockets that
  closed (none should).

``--py-spy FILE`` profiles the server over the idle window (``pip install py-spy``, not a
dependency; ``benchmarks/audience.py --summary FILE`` sums it by function).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.audience import profile, raise_nofile, rss_kb  # noqa: E402
from benchmarks.server import cpu_seconds  # noqa: E402
from benchmarks.ws_frames import pong, take_frame  # noqa: E402

JSON = dict[str, Any]
WARM = 20  # sockets opened (and kept) before the RSS baseline


# The client processes.


class Holder(asyncio.Protocol):
    """One player socket by hand: the upgrade, then the server's frames (unmasked, never
    fragmented) counted, its pings answered with masked pongs."""

    def __init__(self, host: str, path: str, counts: dict[str, int]) -> None:
        self.counts = counts
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        self.buffer = bytearray()
        self.upgraded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's: not a subclass
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if not self.upgraded.done():
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(ConnectionError(bytes(buffer[:80]).decode()))
                return
            del buffer[: end + 4]
            self.upgraded.set_result(None)
        while (frame := take_frame(buffer)) is not None:
            opcode, payload, _ = frame
            if opcode == 0x1:
                kind = json.loads(payload)["type"]
                self.counts[kind] = self.counts.get(kind, 0) + 1
            elif opcode == 0x9 and self.transport is not None:
                self.counts["ping"] = self.counts.get("ping", 0) + 1
                self.transport.write(pong(payload))
            elif opcode == 0x8:
                code = f"close {int.from_bytes(payload[:2], 'big')}"
                self.counts[code] = self.counts.get(code, 0) + 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.counts["lost"] = self.counts.get("lost", 0) + 1
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError("closed before the upgrade"))


async def hold(url: str, tokens: list[str]) -> None:
    """For each player's token take a ticket (``POST /v1/ws-tickets``) and open the player's
    socket with it, say ``ready``; on ``report`` print the counts so far."""
    counts: dict[str, int] = {}
    gate = asyncio.Semaphore(50)
    loop = asyncio.get_running_loop()
    parsed = urlsplit(url)
    host, port = parsed.hostname, parsed.port
    assert host is not None and port is not None

    async def one(http: httpx.AsyncClient, token: str) -> None:
        async with gate:
            r = await http.post("/v1/ws-tickets", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 201, r.text
            path = f"/v1/players/me/ws?ticket={r.json()['ticket']}"
            _, holder = await loop.create_connection(
                lambda: Holder(parsed.netloc, path, counts), host, port
            )
            await asyncio.wait_for(holder.upgraded, 120)

    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        await asyncio.gather(*(one(http, t) for t in tokens))
    print("ready", flush=True)
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "report":
        print(json.dumps(counts), flush=True)


class Clients:
    """The client processes, each holding its share of the sockets."""

    def __init__(self, url: str, tokens: list[str], processes: int) -> None:
        share = [tokens[i::processes] for i in range(processes)]
        self.procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--hold", url, *part],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for part in share
            if part
        ]

    def ready(self) -> None:
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline().strip()
            assert line == "ready", f"a client failed: {line!r}"

    def report(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.procs:
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write("report\n")
            p.stdin.flush()
            for key, n in json.loads(p.stdout.readline()).items():
                out[key] = out.get(key, 0) + n
        return out

    def stop(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


# The server.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@asynccontextmanager
async def server(extra: dict[str, str]) -> AsyncIterator[tuple[str, int]]:
    """``python -m app`` on a temp SQLite file: (url, pid)."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/players.db",
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            # Every player and socket of the run comes from this one address.
            "RATE_LIMIT_PLAYERS_IP": "",
            "WS_MAX_PER_ADDRESS": "0",
            "LOG_LEVEL": "WARNING",
            **extra,
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
        )
        url = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(base_url=url) as http:
                for _ in range(300):
                    with suppress(httpx.TransportError):
                        if (await http.get("/readyz")).status_code == 200:
                            break
                    assert process.poll() is None, "the server exited"
                    await asyncio.sleep(0.1)
            yield url, process.pid
        finally:
            process.terminate()
            process.wait(timeout=60)


async def players(http: httpx.AsyncClient, count: int) -> list[str]:
    """``count`` new players' tokens (8 requests at a time)."""
    gate = asyncio.Semaphore(8)

    async def one(i: int) -> str:
        async with gate:
            r = await http.post("/v1/players", json={"name": f"p{i}"})
            assert r.status_code == 201, r.text
            token: str = r.json()["token"]
            return token

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def run(args: argparse.Namespace) -> JSON:
    extra = dict(kv.split("=", 1) for kv in args.env)
    async with (
        server(extra) as (url, pid),
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        started = time.monotonic()
        tokens = await players(http, WARM + args.sockets)
        made = time.monotonic() - started
        warm = Clients(url, tokens[:WARM], 1)
        clients = None
        try:
            warm.ready()
            await asyncio.sleep(2)
            cpu = cpu_seconds(pid)
            await asyncio.sleep(10)
            alone = (cpu_seconds(pid) - cpu) / 10
            rss = rss_kb(pid)
            clients = Clients(url, tokens[WARM:], args.clients)
            clients.ready()
            await asyncio.sleep(5)  # every socket settled
            rss_after = rss_kb(pid)
            rss_per_socket = (rss_after - rss) / args.sockets
            opened = clients.report()
            load_before = os.getloadavg()[0]
            cpu = cpu_seconds(pid)
            spy = profile(pid, args.py_spy, args.idle)
            await asyncio.sleep(args.idle)
            cpu_idle = (cpu_seconds(pid) - cpu) / args.idle
            if spy is not None:
                spy.wait()
            counts = clients.report()
            counts = {k: n - opened.get(k, 0) for k, n in counts.items()}
        finally:
            warm.stop()
            if clients is not None:
                clients.stop()
        return {
            "sockets": args.sockets,
            "client_processes": args.clients,
            "idle_s": args.idle,
            "server_rss_kb_per_socket": round(rss_per_socket, 1),
            "server_rss_mb": round(rss_after / 1024, 1),
            "server_cpu_share_idle": round(cpu_idle, 4),
            "server_cpu_share_before_sockets": round(alone, 4),
            "sockets_cpu_share": round(cpu_idle - alone, 4),
            "pings_per_socket": round(counts.get("ping", 0) / args.sockets, 2),
            "heartbeats_per_socket": round(counts.get("heartbeat", 0) / args.sockets, 2),
            "closed": counts.get("lost", 0),
            "close_codes": {k: n for k, n in counts.items() if k.startswith("close") and n},
            "refused_at_open": opened.get("error", 0),
            "setup_s": round(made, 1),
            "load_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        }


def main() -> None:
    raise_nofile()
    if len(sys.argv) > 1 and sys.argv[1] == "--hold":
        uvloop.run(hold(sys.argv[2], sys.argv[3:]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--idle", type=float, default=60, help="seconds measured while idle")
    parser.add_argument("--py-spy", default=None, help="profile the idle window into FILE")
    parser.add_argument(
        "--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)"
    )
    args = parser.parse_args()
    print(json.dumps(uvloop.run(run(args))))


if __name__ == "__main__":
    main()
