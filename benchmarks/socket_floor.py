"""The floor of a fan-out: CPU of one small write to each of N connected sockets; one JSON line.

    python benchmarks/socket_floor.py [--sockets 5000] [--bytes 300] [--rounds 20]

Whatever a server does before it, sending one event to N sockets costs at least N writes, one
system call each. This measures that alone, with nothing of the app: N loopback TCP
connections whose far ends are read by a separate process (uvloop, as the spectator clients of
``benchmarks/audience.py``), then ``--rounds`` rounds of one ``--bytes`` message to every
socket, 0.2 s apart, two ways:

- ``socket``: a plain non-blocking ``sock.send`` per socket;
- ``transport``: uvloop's ``transport.write`` per socket, as the server's shared frames are
  written (``app/api/live/wire.py``).

It prints the sender's CPU per write (user + system, median round), its system share, and the
reading process's CPU per write. On loopback the sender's system call also runs the receiving
side's TCP stack and wakes the reader, so it costs more than on a real network interface.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import uvloop


def raise_nofile() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Drain(asyncio.Protocol):
    def data_received(self, data: bytes) -> None:
        pass


async def read(port: int, sockets: int) -> None:
    """The far ends: connect ``sockets`` times, then read (and drop) everything until stdin ends."""
    loop = asyncio.get_running_loop()
    for _ in range(sockets):
        await loop.create_connection(Drain, "127.0.0.1", port)
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.read)


class Quiet(asyncio.Protocol):
    pass


async def rounds(
    send: list[Any], payload: bytes, count: int, pause: float
) -> list[tuple[float, float]]:
    """(cpu, system cpu) of each round of one write to every socket, in the loop's thread."""
    out = []
    for _ in range(count):
        user, system = cpu()
        for write in send:
            write(payload)
        user2, system2 = cpu()
        out.append((user2 - user + system2 - system, system2 - system))
        await asyncio.sleep(pause)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    listener = socket.create_server(("127.0.0.1", 0), backlog=4096)
    port = listener.getsockname()[1]
    reader = subprocess.Popen(
        [sys.executable, __file__, "--read", str(port), str(args.sockets)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    accepted: list[socket.socket] = []
    loop = asyncio.get_running_loop()
    try:
        while len(accepted) < args.sockets:
            conn, _ = await loop.sock_accept(listener)
            conn.setblocking(False)
            accepted.append(conn)
        assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
        payload = b"x" * args.bytes
        result: dict[str, Any] = {"sockets": args.sockets, "bytes": args.bytes}
        plain: list[Any] = [s.send for s in accepted]
        transports: list[asyncio.BaseTransport] = []
        for name in ("socket", "transport"):
            if name == "transport":
                for s in accepted:
                    transport, _ = await loop.connect_accepted_socket(Quiet, s)
                    transports.append(transport)
                sends: list[Any] = [t.write for t in transports]  # type: ignore[attr-defined]
            else:
                sends = plain
            read_before = cpu_of(reader.pid)
            measured = await rounds(sends, payload, args.rounds, 0.2)
            read_cpu = cpu_of(reader.pid) - read_before
            per = [c / args.sockets * 1e6 for c, _ in measured]
            system = sum(s for _, s in measured) / max(1e-9, sum(c for c, _ in measured))
            result[name] = {
                "cpu_us_per_write_median": round(statistics.median(per), 2),
                "cpu_us_per_write_min_max": [round(min(per), 2), round(max(per), 2)],
                "system_share": round(system, 2),
                "reader_cpu_us_per_write": round(read_cpu / args.rounds / args.sockets * 1e6, 2),
            }
        result["load_before_after"] = [args.load, round(os.getloadavg()[0], 2)]
        for t in transports:
            t.close()
        return result
    finally:
        if reader.stdin is not None:
            reader.stdin.close()
        reader.wait(timeout=30)
        listener.close()


def main() -> None:
    raise_nofile()
    if len(sys.argv) > 1 and sys.argv[1] == "--read":
        uvloop.run(read(int(sys.argv[2]), int(sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=5000)
    parser.add_argument("--bytes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    args.load = round(os.getloadavg()[0], 2)
    print(json.dumps(uvloop.run(run(args))))


if __name__ == "__main__":
    main()
