"""How long the pending migrations take on a database, and how long play waits meanwhile.

    python benchmarks/migration_locks.py --url postgresql://postgres@127.0.0.1:5432/NAME
        [--every 0.02]

It runs ``alembic upgrade head`` on ``--url`` (as the app does at its start) while, on their
own connections, three writers do what play does every ``--every`` seconds: ``move`` touches a
seat of an open table and its table's row (a move's guarded UPDATE, a bot's lease),
``rematch`` a seat of a finished table, ``result`` writes a match's row to
``finished_matches`` and rolls it back (a match that ends). Each write is timed from before it
is sent to its commit. It prints the migration's time and each writer's writes,
p50, p99 and longest wait, then one JSON line. Run it on a copy made by
``benchmarks/big_fixture.py --keep`` before its migrations are applied (that script migrates
to head: check out the revision before the migration under test to fill it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.store import Database, run_migrations  # noqa: E402

_OPEN_SEAT = """
SELECT s.table_id FROM seats s JOIN tables t ON t.id = s.table_id
WHERE t.status {op} 'finished' AND s.seat = 0 LIMIT 1
"""
_TOUCH = "UPDATE seats SET deck_design = deck_design WHERE table_id = $1 AND seat = 0"
_TOUCH_TABLE = "UPDATE tables SET version = version WHERE id = $1"
# A match's result, written and rolled back: it takes the locks a match that ends takes.
_RESULT = """
INSERT INTO finished_matches (table_id, match_number, seat0_player_id, seat1_player_id,
    winner, reason, scores, final_scores, finished_at)
SELECT table_id, 1000000, seat0_player_id, seat1_player_id, winner, reason, scores,
    final_scores, now()
FROM finished_matches WHERE table_id = $1 AND match_number = 1
"""


async def _writer(
    url: str, table_id: str, kind: str, every: float, stop: asyncio.Event
) -> list[float]:
    conn = await asyncpg.connect(url)
    waits: list[float] = []
    try:
        while not stop.is_set():
            began = time.perf_counter()
            if kind == "result":
                written = conn.transaction()
                await written.start()
                await conn.execute(_RESULT, table_id)
                await written.rollback()
            else:
                async with conn.transaction():
                    await conn.execute(_TOUCH, table_id)
                    if kind == "move":
                        await conn.execute(_TOUCH_TABLE, table_id)
            waits.append(time.perf_counter() - began)
            await asyncio.sleep(every)
    finally:
        await conn.close()
    return waits


def _summary(waits: list[float]) -> dict[str, Any]:
    ordered = sorted(waits)
    return {
        "writes": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[round(0.99 * (len(ordered) - 1))] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


async def run(url: str, every: float) -> dict[str, Any]:
    plain = url.replace("+asyncpg", "")
    conn = await asyncpg.connect(plain)
    try:
        version = await conn.fetchval("SELECT version_num FROM alembic_version")
        tables = {
            name: await conn.fetchval(_OPEN_SEAT.format(op=op))
            for name, op in (("open_table", "<>"), ("finished_table", "="))
        }
    finally:
        await conn.close()
    stop = asyncio.Event()
    kinds = {"move": "open_table", "rematch": "finished_table", "result": "finished_table"}
    writers = {
        kind: asyncio.create_task(_writer(plain, tables[table], kind, every, stop))
        for kind, table in kinds.items()
    }
    await asyncio.sleep(1.0)  # the writers' own pace first
    db = Database(plain.replace("postgresql://", "postgresql+asyncpg://", 1))
    began = time.perf_counter()
    try:
        await run_migrations(db)
    finally:
        seconds = time.perf_counter() - began
        await db.close()
        stop.set()
    waits = dict(zip(writers, await asyncio.gather(*writers.values()), strict=True))
    return {
        "benchmark": "migration_locks",
        "from": version,
        "migration_s": round(seconds, 2),
        **{f"{kind}_writes": _summary(w) for kind, w in waits.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--every", type=float, default=0.02)
    args = parser.parse_args()
    result = asyncio.run(run(args.url, args.every))
    print(f"migrations from {result['from']}: {result['migration_s']} s")
    for name in ("move_writes", "rematch_writes", "result_writes"):
        print(f"  {name:<24}{result[name]}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
