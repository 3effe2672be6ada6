"""What writing a move to SQLite costs the server's CPU, by how many moves commit together.

    python benchmarks/sqlite_writes.py [--tables 100] [--rounds 60] [--groups 1 9 100]

SQLite runs inside the server's process, so its writes are part of the server's CPU per move
(``benchmarks/server.py`` reports them as ``sqlite_cpu_ms_per_move``). Here one
``TableService`` on a fresh SQLite file plays random legal moves (no resign) on ``--tables``
tables, ``K`` tables' moves at a time with ``asyncio.gather``, so that they commit in one pass
of the loop (group commit: one transaction for ``K`` moves; the server at capacity makes groups
of about 9). Per ``K`` it prints the CPU seconds of SQLite's writes per move
(``ginrummy_sqlite_cpu_seconds_total``: the write transactions, each timed on its thread),
this process's CPU per move (the pipeline around them, no HTTP or sockets) and the WAL's size
at the end. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import uvloop
from prometheus_client import REGISTRY

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bus.hub import Hub
from app.engine import MatchState, apply, legal_actions
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, run_migrations
from app.table.commands import Actor, Join, Play, Rematch, Start

COUNTER = "ginrummy_sqlite_cpu_seconds_total"


class Game:
    def __init__(self, table_id: str, players: list[Actor], state: MatchState) -> None:
        self.table_id, self.players, self.state = table_id, players, state


async def measure(tables: int, rounds: int, k: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "writes.db"
        db = Database(f"sqlite+aiosqlite:///{path}")
        try:
            await run_migrations(db)
            service = TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
            games = []
            for i in range(tables):
                a, _ = await service.create_player(f"a{i}")
                b, _ = await service.create_player(f"b{i}")
                table_id = (await service.create_table(a, "standard", {})).body["table_id"]
                await service.submit(table_id, b, Join())
                await service.submit(table_id, a, Start())
                state = (await service.load(table_id)).state
                assert state is not None
                games.append(Game(table_id, [a, b], state))
            rng = random.Random(1)

            async def move(game: Game) -> int:
                if game.state.status == "finished":
                    await service.submit(game.table_id, game.players[0], Rematch())
                    state = (await service.load(game.table_id)).state
                    assert state is not None
                    game.state = state
                    return 0
                seat = game.state.hand.turn
                legal = [a for a in legal_actions(game.state, seat) if a.kind != "resign"]
                action = rng.choice(legal)
                answer = await service.submit(game.table_id, game.players[seat], Play(action))
                assert answer.status_code == 200, answer.body
                game.state = apply(game.state, seat, action)[0]
                return 1

            sqlite_before = REGISTRY.get_sample_value(COUNTER) or 0.0
            cpu_before = time.process_time()
            moves = 0
            for _ in range(rounds):
                for start in range(0, tables, k):
                    moves += sum(await asyncio.gather(*map(move, games[start : start + k])))
            sqlite = (REGISTRY.get_sample_value(COUNTER) or 0.0) - sqlite_before
            cpu = time.process_time() - cpu_before
            wal = path.with_name(path.name + "-wal")
            return {
                "group": k,
                "moves": moves,
                "sqlite_cpu_ms_per_move": round(sqlite * 1000 / moves, 4),
                "process_cpu_ms_per_move": round(cpu * 1000 / moves, 4),
                "wal_mb": round(wal.stat().st_size / 1e6, 1) if wal.exists() else 0.0,
            }
        finally:
            await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--groups", type=int, nargs="+", default=[1, 9, 100])
    args = parser.parse_args()
    out = []
    for k in args.groups:
        figures = uvloop.run(measure(args.tables, args.rounds, k))
        print(
            f"groups of {k:>3}: SQLite's writes {figures['sqlite_cpu_ms_per_move']:.4f} ms "
            f"per move, the process {figures['process_cpu_ms_per_move']:.4f} ms, "
            f"WAL {figures['wal_mb']} MB ({figures['moves']} moves)",
            flush=True,
        )
        out.append(figures)
    print(json.dumps({"benchmark": "sqlite_writes", "loadavg_1m": os.getloadavg()[0], "runs": out}))


if __name__ == "__main__":
    main()
