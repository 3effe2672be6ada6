"""Big audiences: N spectator sockets on a table while its players move; prints one JSON line.

    python benchmarks/audience.py --spectators 1000 [--clients 4] [--moves 60] [--tables 1]
    python benchmarks/audience.py --spectators 1000 --tables 10          # 10 tables x 1,000
    python benchmarks/audience.py --spectators 1000 --processes 2 --redis redis://127.0.0.1:6379/0

One server (``uvicorn`` as ``benchmarks/server.py`` starts it, on a temp SQLite file), or
``--processes`` servers sharing a Redis bus (spectators spread over them round-robin, the players
on the first). Each table gets two players who move over HTTP, ``--pause`` s apart, first with
no audience (the baseline), then with ``--spectators`` sockets on every table, held by
``--clients`` separate client processes (so the client's CPU does not sit in the players'
process; it still shares the machine's cores with the server). Figures:

- server CPU per move (user + system from ``/proc``, summed over the servers), and per second
  with no moves (``--idle`` s), without and with the audience connected (the difference: the
  keepalive pings and their pongs, the heartbeats of a quiet table);
- the players' move latency (request to response), p50 / p99, without and with the audience;
- for each move, the time from the mover's response to its event reaching the *last* spectator
  socket (wall clock, the same machine), p50 / p99;
- server RSS per spectator socket (RSS with the idle audience connected, minus before, / N);
- the client processes' CPU, and the load average before and after;
- the fan-out against the floor, in the same run: after the audience has gone,
  ``benchmarks/socket_floor.py`` on as many sockets with frames of the events' mean size (its
  uvloop ``transport.write``, median round: ``floor_us_per_write``), and
  ``fan_out_us_per_spectator_move``, (server CPU per move watched - alone) / spectators: what one
  move's events (one write per socket) cost the server per spectator, keepalive included;
  ``fan_out_ratio`` is the one over the other (``..._net_of_idle``: the idle audience's CPU over
  a move's period taken off too; ``--no-floor`` skips it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
import orjson
import uvloop
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.server import (  # noqa: E402
    choose,
    cpu_seconds,
    database,
    serve_many,
    servers_cpu,
)
from benchmarks.ws_frames import pong, take_frame  # noqa: E402

JSON = dict[str, Any]


def raise_nofile() -> None:
    """Open files up to the hard limit: every socket is one."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# The client processes: hold sockets, note when each seq reached the last of them.


def report(last: dict[str, float], frames: list[int]) -> None:
    """What a client process saw: {table seq: last arrival}, event frames and their bytes."""
    print(json.dumps({"last": last, "frames": frames[0], "bytes": frames[1]}), flush=True)


async def hold(urls: list[str]) -> None:
    """Connect to ``urls``, say ``ready``; on ``report`` print what it saw (``report``)."""
    last: dict[str, float] = {}
    frames = [0, 0]  # event frames received, their bytes (the payload's size, close enough)
    connected = 0
    gate = asyncio.Semaphore(50)

    async def one(url: str) -> None:
        nonlocal connected
        table = url.rsplit("/", 2)[-2]
        async with gate:
            ws = await connect(url, proxy=None, open_timeout=120, ping_interval=None)
        connected += 1
        async for raw in ws:
            message = json.loads(raw)
            if message["type"] in ("event", "skip"):
                last[f"{table} {message['seq']}"] = time.time()
                frames[0] += 1
                frames[1] += len(raw) + (2 if len(raw) < 126 else 4)

    tasks = [asyncio.create_task(one(u)) for u in urls]
    while connected < len(urls):
        failed = [t for t in tasks if t.done() and t.exception()]
        if failed:
            raise failed[0].exception()  # type: ignore[misc]
        await asyncio.sleep(0.1)
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "report":
        report(last, frames)


class Watcher(asyncio.Protocol):
    """A spectator socket by hand (``--light``): the upgrade, then the server's frames parsed
    as they come (unmasked, never fragmented), each ``event`` or ``skip`` noted, pings
    answered; a fraction of the ``websockets`` client's CPU per message."""

    def __init__(
        self, table: str, host: str, path: str, last: dict[str, float], frames: list[int]
    ) -> None:
        self.table, self.last, self.frames = table, last, frames
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        self.buffer = bytearray()
        self.upgraded = False
        self.viewed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's: not a subclass
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if not self.upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            assert buffer.startswith(b"HTTP/1.1 101"), bytes(buffer[:80])
            del buffer[: end + 4]
            self.upgraded = True
        while (frame := take_frame(buffer)) is not None:
            opcode, payload, wire = frame
            if opcode == 0x1:
                message = orjson.loads(payload)
                if message["type"] in ("event", "skip"):
                    self.last[f"{self.table} {message['seq']}"] = time.time()
                    self.frames[0] += 1
                    self.frames[1] += wire
                elif not self.viewed.done():
                    self.viewed.set_result(None)
            elif opcode == 0x9 and self.transport is not None:  # a ping: the masked pong
                self.transport.write(pong(payload))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.viewed.done():
            self.viewed.set_exception(ConnectionError("closed before its view"))


async def hold_light(urls: list[str]) -> None:
    """``hold`` with ``Watcher`` sockets instead of the ``websockets`` client's."""
    last: dict[str, float] = {}
    frames = [0, 0]
    gate = asyncio.Semaphore(50)
    loop = asyncio.get_running_loop()

    async def one(url: str) -> None:
        parsed = urlsplit(url)
        table = url.rsplit("/", 2)[-2]
        assert parsed.hostname is not None and parsed.port is not None
        async with gate:
            _, watcher = await loop.create_connection(
                lambda: Watcher(table, parsed.netloc, parsed.path, last, frames),
                parsed.hostname,
                parsed.port,
            )
            await asyncio.wait_for(watcher.viewed, 120)

    await asyncio.gather(*(one(u) for u in urls))
    print("ready", flush=True)
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "report":
        report(last, frames)


class Clients:
    """The spectator client processes."""

    def __init__(self, urls: list[str], processes: int, light: bool = False) -> None:
        share = [urls[i::processes] for i in range(processes)]
        self.procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--hold-light" if light else "--hold", *part],
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

    def report(self) -> tuple[dict[str, float], int, int]:
        """(table seq) -> when the last spectator socket got it; event frames, their bytes."""
        out: dict[str, float] = {}
        frames = size = 0
        for p in self.procs:
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write("report\n")
            p.stdin.flush()
            seen = json.loads(p.stdout.readline())
            for key, at in seen["last"].items():
                out[key] = max(at, out.get(key, 0.0))
            frames += seen["frames"]
            size += seen["bytes"]
        return out, frames, size

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.procs)

    def stop(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def profile(pid: int, out: str | None, seconds: float) -> subprocess.Popen[bytes] | None:
    """py-spy (``pip install py-spy``, not a dependency) sampling the server for ``seconds``,
    raw stacks into ``out`` (summed with ``--summary``); None without ``out``."""
    if out is None:
        return None
    command = ["py-spy", "record", "--pid", str(pid), "--rate", "200", "--format", "raw"]
    command += ["--nonblocking", "--duration", str(max(1, int(seconds))), "-o", out]
    spy_bin = Path(sys.executable).with_name("py-spy")
    return subprocess.Popen([str(spy_bin) if spy_bin.exists() else command[0], *command[1:]])


def summary(raw: str, top: int = 25) -> None:
    """The share of samples in which each function appears (raw py-spy stacks)."""
    counts: dict[str, int] = {}
    total = 0
    for line in Path(raw).read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        total += int(samples)
        for name in {f.split(" (")[0] for f in stack.split(";")}:
            counts[name] = counts.get(name, 0) + int(samples)
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{100 * n / total:5.1f}%  {name}")


def own_shares(raw: str, top: int = 20) -> list[tuple[str, float]]:
    """The share of samples whose innermost frame is each line (raw py-spy stacks), the
    ``top`` first; stacks with no Python frame as ``(native)``."""
    counts: dict[str, int] = {}
    total = 0
    for line in Path(raw).read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        innermost = stack.rpartition(";")[2].strip() or "(native)"
        counts[innermost] = counts.get(innermost, 0) + int(samples)
        total += int(samples)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
    return [(name, n / max(1, total)) for name, n in ranked]


# The players.


async def new_table(http: httpx.AsyncClient) -> tuple[str, list[dict[str, str]]]:
    auths = []
    for name in ("Ada", "Bo"):
        r = await http.post("/v1/players", json={"name": name})
        auths.append({"Authorization": f"Bearer {r.json()['token']}"})
    table = (
        await http.post("/v1/tables", json={"rules": {"target": 500}}, headers=auths[0])
    ).json()
    await http.post(f"/v1/invites/{table['invite_code']}", headers=auths[1])
    await http.post(f"/v1/tables/{table['table_id']}/start", headers=auths[0])
    return table["table_id"], auths


async def moves(
    http: httpx.AsyncClient,
    tables: list[tuple[str, list[dict[str, str]]]],
    count: int,
    pause: float,
) -> tuple[list[float], dict[str, float]]:
    """``count`` moves, round-robin over the tables: latencies, and (table seq) -> response time."""
    latencies: list[float] = []
    responded: dict[str, float] = {}
    for i in range(count):
        table_id, auths = tables[i % len(tables)]
        views = [(await http.get(f"/v1/tables/{table_id}", headers=a)).json() for a in auths]
        seat = next(
            s
            for s, v in enumerate(views)
            if v["game"]["hand"]["turn"] == s or "next_hand" in v["game"]["legal"]["actions"]
        )
        game = views[seat]["game"]
        if "next_hand" in game["legal"]["actions"]:
            suffix, body = "next-hand", None
        else:
            suffix, body = choose(game)
        started = time.perf_counter()
        r = await http.post(f"/v1/tables/{table_id}/{suffix}", json=body, headers=auths[seat])
        latencies.append(time.perf_counter() - started)
        now = time.time()
        assert r.status_code == 200, r.text
        responded[f"{table_id} {r.json()['seq']}"] = now
        await asyncio.sleep(pause)
    return latencies, responded


async def run(args: argparse.Namespace) -> JSON:
    async with (
        database("sqlite") as url,
        serve_many(url, args.processes, args.redis) as servers,
        httpx.AsyncClient(base_url=servers[0].url, timeout=60) as http,
    ):
        tables = [await new_table(http) for _ in range(args.tables)]
        await moves(http, tables, 4, args.pause)  # warm up
        load_before = os.getloadavg()[0]
        cpu = servers_cpu(servers)
        await asyncio.sleep(args.idle)
        cpu_idle_alone = (servers_cpu(servers) - cpu) / args.idle
        cpu = servers_cpu(servers)
        alone, _ = await moves(http, tables, args.moves, args.pause)
        cpu_alone = (servers_cpu(servers) - cpu) / args.moves

        rss = [rss_kb(s.pid) for s in servers]
        urls = [
            servers[i % len(servers)].url.replace("http", "ws", 1) + f"/v1/tables/{t}/ws"
            for t, _ in tables
            for i in range(args.spectators)
        ]
        clients = Clients(urls, args.clients, args.light)
        try:
            clients.ready()
            await asyncio.sleep(3)  # idle: every socket past its view
            rss_per_socket = (sum(rss_kb(s.pid) for s in servers) - sum(rss)) / len(urls)
            # What the idle audience costs without moves (keepalive pings and their pongs).
            cpu = servers_cpu(servers)
            await asyncio.sleep(args.idle)
            cpu_idle = (servers_cpu(servers) - cpu) / args.idle
            cpu, client_cpu = servers_cpu(servers), clients.cpu()
            spy = profile(servers[0].pid, args.py_spy, args.moves * args.pause)
            started = time.perf_counter()
            watched, responded = await moves(http, tables, args.moves, args.pause)
            period = (time.perf_counter() - started) / args.moves
            if spy is not None:
                spy.wait()
            cpu_watched = (servers_cpu(servers) - cpu) / args.moves
            await asyncio.sleep(2)
            arrived, frames, frame_bytes = clients.report()
            client_cpu = (clients.cpu() - client_cpu) / args.moves
        finally:
            clients.stop()
        lag = [arrived[k] - at for k, at in responded.items() if k in arrived]
        sockets = len(urls)
        # One move's events reach each socket in one write (the events of one commit joined).
        fan_out = (cpu_watched - cpu_alone) / sockets
        fan_out_net = fan_out - (cpu_idle - cpu_idle_alone) * period / sockets
        frame_size = round(frame_bytes / max(1, frames))
        floor = None if args.no_floor else socket_floor(sockets, frame_size)
        against: JSON = {}
        if floor is not None:
            per_write = floor["transport"]["cpu_us_per_write_median"]
            against = {
                "floor_us_per_write": per_write,
                "floor_us_per_write_min_max": floor["transport"]["cpu_us_per_write_min_max"],
                "floor_load_before_after": floor["load_before_after"],
                "fan_out_ratio": round(fan_out * 1e6 / per_write, 3),
                "fan_out_ratio_net_of_idle": round(fan_out_net * 1e6 / per_write, 3),
            }
        if args.py_spy is not None:
            # The watched phase's server CPU per move and spectator, by the line each sample
            # was on (its innermost frame): where a socket's share of a move goes.
            against["profile_us_per_spectator_move"] = {
                line: round(share * cpu_watched / sockets * 1e6, 3)
                for line, share in own_shares(args.py_spy)
            }
        return {
            "spectators_per_table": args.spectators,
            "tables": args.tables,
            "server_processes": args.processes,
            "client_processes": len(clients.procs),
            "light_clients": args.light,
            "moves": args.moves,
            "server_cpu_ms_per_move_alone": round(cpu_alone * 1000, 2),
            "server_cpu_ms_per_move_watched": round(cpu_watched * 1000, 2),
            "server_cpu_ms_per_s_idle_alone_watched": [
                round(cpu_idle_alone * 1000, 2),
                round(cpu_idle * 1000, 2),
            ],
            "client_cpu_ms_per_move": round(client_cpu * 1000, 2),
            "move_ms_alone_p50_p99": [round(_pct(alone, q) * 1000, 1) for q in (0.5, 0.99)],
            "move_ms_watched_p50_p99": [round(_pct(watched, q) * 1000, 1) for q in (0.5, 0.99)],
            "last_spectator_ms_p50_p99": [round(_pct(lag, q) * 1000, 1) for q in (0.5, 0.99)],
            "moves_seen_by_all": f"{len(lag)}/{len(responded)}",
            "server_rss_kb_per_socket": round(rss_per_socket, 1),
            "load_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "mean_move_ms_alone": round(statistics.mean(alone) * 1000, 1),
            "move_period_s": round(period, 3),
            "event_frames_per_socket_per_move": round(frames / sockets / args.moves, 2),
            "event_frame_bytes": frame_size,
            "ws_ping_interval_s": float(os.environ.get("UVICORN_WS_PING_INTERVAL", "20")),
            "fan_out_us_per_spectator_move": round(fan_out * 1e6, 2),
            "fan_out_us_per_spectator_move_net_of_idle": round(fan_out_net * 1e6, 2),
            **against,
        }


def socket_floor(sockets: int, size: int) -> JSON:
    """``benchmarks/socket_floor.py`` on ``sockets`` sockets with frames of ``size`` bytes."""
    floor = Path(__file__).with_name("socket_floor.py")
    command = [sys.executable, str(floor), "--sockets", str(sockets), "--bytes", str(size)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    return cast(JSON, json.loads(out.stdout))


def main() -> None:
    raise_nofile()
    if len(sys.argv) > 1 and sys.argv[1] == "--hold":
        uvloop.run(hold(sys.argv[2:]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--hold-light":
        uvloop.run(hold_light(sys.argv[2:]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--summary":
        summary(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spectators", type=int, default=1000, help="per table")
    parser.add_argument("--tables", type=int, default=1)
    parser.add_argument("--clients", type=int, default=4, help="spectator client processes")
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between moves")
    parser.add_argument("--processes", type=int, default=1, help="server processes")
    parser.add_argument("--redis", default=None, help="Redis URL (needed for --processes > 1)")
    parser.add_argument("--idle", type=float, default=10, help="seconds of idle audience")
    parser.add_argument(
        "--light",
        action="store_true",
        help="spectator sockets by hand (Watcher): less client CPU beside the server",
    )
    parser.add_argument("--py-spy", default=None, help="profile the watched phase into FILE")
    parser.add_argument(
        "--no-floor", action="store_true", help="skip socket_floor.py after the audience"
    )
    parser.add_argument(
        "--ping-interval",
        type=float,
        default=None,
        help="seconds between keepalive rounds (uvicorn's, 20): each pings every socket",
    )
    args = parser.parse_args()
    if args.ping_interval is not None:
        # The servers inherit it (uvicorn reads its options from UVICORN_* too).
        os.environ["UVICORN_WS_PING_INTERVAL"] = str(args.ping_interval)
    print(json.dumps(uvloop.run(run(args))))


if __name__ == "__main__":
    main()
