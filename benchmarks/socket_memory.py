"""Where an idle spectator socket's memory goes: Python allocations per socket, by file and line.

    python benchmarks/socket_memory.py [--sockets 500] [--top 20] [--ws websockets] [--players]

Serves the app in this process (uvicorn in a thread, as the API tests do, without per-message
deflate as ``python -m app`` serves), opens ``--sockets`` spectator sockets on one table from a
client subprocess (``benchmarks/audience.py --hold``), and compares ``tracemalloc`` snapshots
taken before and after: the Python memory each idle socket holds on the server, by file and by
line. Memory outside Python's allocator (uvloop's handles, the kernel's socket buffers) is not
in it; ``benchmarks/audience.py`` measures the process's RSS per socket. The spectators are
parked once idle (``app/api/live/parking.py``) unless the server runs with ``WS_PARK_SPECTATORS``
false or with a ``--ws`` of uvicorn's own. ``--players``: player sockets
(``/v1/players/me/ws``, each its own player's, opened with a ticket by
``benchmarks/player_sockets.py --hold``) instead, parked once accepted unless ``WS_PARK_PLAYERS``
is false.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.api.conftest import start_server  # noqa: E402
from tests.api.helpers import new_player, seated_table  # noqa: E402

_config_init = uvicorn.Config.__init__


# uvicorn's WebSocket implementation (``--ws``); "app": the app's own (``app.api.edge.protocols``).
CHOSEN = {"ws": "app"}


def _without_deflate(self: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
    kwargs["ws_per_message_deflate"] = False  # as ``python -m app`` serves
    if CHOSEN["ws"] != "app":
        kwargs["ws"] = CHOSEN["ws"]
    _config_init(self, *args, **kwargs)


def hold(url: str, sockets: int) -> subprocess.Popen[str]:
    """A client process holding ``sockets`` spectator sockets on ``url`` (each past its view)."""
    command = [sys.executable, str(ROOT / "benchmarks" / "audience.py"), "--hold"]
    return _held([*command, *[url] * sockets])


def hold_players(url: str, tokens: list[str]) -> subprocess.Popen[str]:
    """A client process holding the player socket of each of ``tokens`` on the server ``url``."""
    command = [sys.executable, str(ROOT / "benchmarks" / "player_sockets.py"), "--hold", url]
    return _held([*command, *tokens])


def _held(command: list[str]) -> subprocess.Popen[str]:
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


async def run(sockets: int, top: int, players: bool) -> None:
    uvicorn.Config.__init__ = _without_deflate  # type: ignore[method-assign]
    folder = tempfile.mkdtemp()
    # Every spectator comes from one address: no cap on them.
    server = start_server(
        f"sqlite+aiosqlite:///{folder}/memory.db", ws_heartbeat=15, ws_max_per_address=0
    )
    table_id = ""
    clients: list[subprocess.Popen[str]] = []
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            if players:
                tokens = [(await new_player(http, f"p{i}")).token for i in range(20 + sockets)]
            else:
                table_id, _ = await seated_table(http, rules={"target": 500})
        url = server.url.replace("http", "ws", 1) + f"/v1/tables/{table_id}/ws"

        def opened(first: int, count: int) -> subprocess.Popen[str]:
            if players:
                return hold_players(server.url, tokens[first : first + count])
            return hold(url, count)

        clients.append(await asyncio.to_thread(opened, 0, 20))  # warm every path first
        await asyncio.sleep(1)
        gc.collect()
        tracemalloc.start(10)
        before = tracemalloc.take_snapshot()
        clients.append(await asyncio.to_thread(opened, 20, sockets))
        await asyncio.sleep(2)
        gc.collect()
        after = tracemalloc.take_snapshot()
        by_file = after.compare_to(before, "filename")
        total = sum(s.size_diff for s in by_file)
        kind = "player" if players else "spectator"
        print(f"Python memory per idle {kind} socket: {total / sockets / 1024:.1f} KB")
        for group in ("filename", "lineno"):
            print(f"\nby {group}:")
            for stat in after.compare_to(before, group)[:top]:
                print(
                    f"{stat.size_diff / sockets:8.0f} B {stat.count_diff / sockets:6.1f} objects"
                    f"  {stat.traceback[0]}"
                )
    finally:
        for process in clients:
            process.kill()
            process.wait()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=500)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument(
        "--ws",
        default="app",
        choices=["app", "websockets", "websockets-sansio", "wsproto"],
        help="uvicorn's WebSocket implementation (app: websockets-sansio as app.api.edge.protocols "
        "extends it, as the app is served; the others are parked never)",
    )
    parser.add_argument("--players", action="store_true", help="player sockets, not spectators")
    args = parser.parse_args()
    CHOSEN["ws"] = args.ws
    asyncio.run(run(args.sockets, args.top, args.players))


if __name__ == "__main__":
    main()
