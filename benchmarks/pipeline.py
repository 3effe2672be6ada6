"""A move's CPU in the pipeline alone, one process or two: no HTTP, no client, no sockets.

    python benchmarks/pipeline.py [--db sqlite postgresql] [--moves 600] [--tables 20]

Two ``TableService`` in this process play the same tables, each on its own database pool and
its own ``RedisBus`` (Redis at ``--redis``, a unique prefix): as far as the pipeline can tell,
two server processes. In the **one process** run every move goes through the first; in the
**two processes** run the moves of each table alternate between them, as when a table's two
players are served by different processes, so each move is decided on a table the other process
committed last. The figure is this process's CPU time (``time.process_time``: both pipelines,
the commit, the bus's encode / publish / receive / decode, and the SQLite writer thread) per
move, which holds on a loaded machine far better than a latency, and leaves out what the HTTP
benchmark (``benchmarks/server.py``) adds around it. Moves are random legal ones (no resign).
The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.bus.redis import RedisBus  # noqa: E402
from app.engine import apply, legal_actions  # noqa: E402
from app.service.pipeline import TableService  # noqa: E402
from app.service.rate_limits import RateLimits  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.store import Database, run_migrations  # noqa: E402
from app.table.commands import Actor, Join, Play, Rematch, Start  # noqa: E402
from benchmarks.server import database  # noqa: E402


async def play(services: list[TableService], tables: int, moves: int, spread: bool) -> float:
    """``moves`` random legal moves over ``tables`` tables; CPU ms per move. With ``spread``
    each move of a table goes through the other service than the one before."""
    one = services[0]
    games: list[tuple[str, list[Actor]]] = []
    for i in range(tables):
        a, _ = await one.create_player(f"a{i}")
        b, _ = await services[-1].create_player(f"b{i}")
        table_id = (await one.create_table(a, "standard", {})).body["table_id"]
        await services[-1].submit(table_id, b, Join())
        await one.submit(table_id, a, Start())
        games.append((table_id, [a, b]))
    await asyncio.sleep(0.5)  # the bus delivered the setup's commits
    rng = random.Random(1)
    # Each table's state, followed here with the engine (a client would read it from the
    # move's response): the same engine work in both runs.
    states = {table_id: (await one.load(table_id)).state for table_id, _ in games}
    cpu = time.process_time()
    for done in range(moves):
        table_id, players = games[done % tables]
        state = states[table_id]
        assert state is not None
        # Table i's k-th move goes through service k mod 2 (with ``spread``).
        service = services[(done // tables) % len(services)] if spread else one
        if state.status == "finished":
            await service.submit(table_id, players[0], Rematch())
            states[table_id] = (await service.load(table_id)).state
            continue
        seat = state.hand.turn
        action = rng.choice([a for a in legal_actions(state, seat) if a.kind != "resign"])
        await service.submit(table_id, players[seat], Play(action))
        states[table_id] = apply(state, seat, action)[0]
        # The bus carries the commit to the other service meanwhile: the table moves again
        # only ``tables`` moves later.
        await asyncio.sleep(0)
    return (time.process_time() - cpu) * 1000 / moves


async def run(kind: str, redis: str, tables: int, moves: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, spread in (("one_process", False), ("two_processes", True)):
        async with database(kind) as url:
            prefix = f"pipeline-{uuid.uuid4().hex}"
            services: list[TableService] = []
            for _ in range(2):
                db = Database(url)
                if not services:
                    await run_migrations(db)
                bus = RedisBus(redis, prefix)
                await bus.start()
                limits = RateLimits.from_settings(Settings(redis_url=None))
                services.append(TableService(db, bus, limits))
            try:
                out[label] = round(await play(services, tables, moves, spread), 3)
            finally:
                # Bounded: stopping a bus under uvloop was seen to hang here (the moves were
                # all made and measured), which a benchmark need not wait for.
                for service in services:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(service.hub.stop(), 5)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(service.db.close(), 5)
    out["ratio"] = round(out["two_processes"] / out["one_process"], 2)
    out["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--moves", type=int, default=600)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    results = {kind: uvloop.run(run(kind, args.redis, args.tables, args.moves)) for kind in args.db}
    for kind, r in results.items():
        print(
            f"{kind}: CPU per move {r['one_process']} ms (one process), {r['two_processes']} ms "
            f"(two, moves alternating), x{r['ratio']}, load {r['loadavg_1m']}"
        )
    print(json.dumps({"benchmark": "pipeline", **results}))


if __name__ == "__main__":
    main()
