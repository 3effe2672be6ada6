"""Ratings and records: what a rating update adds to a match's end, the leaderboard query at
scale, and ``verify`` speed. Prints figures, then one JSON line.

    python benchmarks/ratings.py update --matches 200 [--database-url URL]
    python benchmarks/ratings.py leaderboard --players 100000 [--queries 2000]
    python benchmarks/ratings.py verify --matches 10

``update`` finishes matches (a resignation) through the real pipeline, on rated and on casual
tables alternately, and times the finishing command: the difference is what the rating update
costs inside the match's commit; it also times the Glicko-2 arithmetic alone. ``leaderboard``
makes a fresh PostgreSQL database with ``--players`` rated players in one category, then times
``GET /v1/leaderboards/{category}``'s query (``app.store.ratings.leaderboard``) on random pages
of the first 50 and prints the plan. ``verify`` plays matches through the pipeline on SQLite,
takes their records and times ``app.engine.verify.verify`` over them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bus.hub import Hub
from app.engine import Action, deadwood, legal_actions
from app.engine.state import DISCARD_CARD, DRAW_STOCK, KNOCK, NEXT_HAND, RESIGN
from app.engine.verify import verify
from app.service import ratings, records
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, run_migrations
from app.store import ratings as store
from app.table.commands import Actor, Play, Start
from app.table.glicko2 import Game, rate
from app.table.time import utcnow

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def _quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
    }


async def _service(url: str) -> TableService:
    db = Database(url)
    await run_migrations(db)
    return TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))


async def _started(service: TableService, rated: bool) -> tuple[str, list[Actor]]:
    """A new table of two new players, started."""
    players = [(await service.create_player(name))[0] for name in ("Ada", "Bo")]
    created = await service.create_table(players[0], "standard", {}, rated=rated)
    table_id = created.body["table_id"]
    await service.join(created.body["invite_code"], players[1])
    await service.submit(table_id, players[0], Start())
    return table_id, players


async def bench_update(url: str, matches: int) -> dict[str, Any]:
    service = await _service(url)
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for i in range(2 * matches):
            rated = i % 2 == 0
            table_id, players = await _started(service, rated)
            start = time.perf_counter()
            await service.submit(table_id, players[1], Play(Action(RESIGN)))
            times[rated].append(time.perf_counter() - start)
    finally:
        await service.db.close()
    player, opponent = ratings.START, ratings.bot_glicko("hard")
    n = 20_000
    start = time.perf_counter()
    for _ in range(n):
        rate(player, [Game(opponent, 1.0)], ratings.TAU)
    maths = (time.perf_counter() - start) / n
    with_update, without = _quantiles(times[True]), _quantiles(times[False])
    return {
        "database": url.split(":", 1)[0],
        "matches": matches,
        "finish_rated": with_update,
        "finish_casual": without,
        "update_cost_mean_ms": round(with_update["mean_ms"] - without["mean_ms"], 3),
        "glicko2_per_player_us": round(maths * 1e6, 2),
    }


async def bench_leaderboard(players: int, queries: int) -> dict[str, Any]:
    name = f"ginrummy_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(PG_ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    db = Database(url)
    try:
        await run_migrations(db)
        conn = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:5432/{name}")
        rng = random.Random(1)
        now = utcnow()
        ids = [uuid.uuid4().hex for _ in range(players)]
        await conn.copy_records_to_table(
            "players",
            records=[(pid, f"p{i}", now) for i, pid in enumerate(ids)],
            columns=["id", "name", "created_at"],
        )
        # Most are settled and recent; a fifth provisional, a tenth idle too long.
        rows = []
        for pid in ids:
            roll = rng.random()
            deviation = 200.0 if roll < 0.2 else rng.uniform(45, 105)
            idle = timedelta(days=90 if roll > 0.9 else rng.uniform(0, 25))
            rows.append(
                (pid, "standard", rng.gauss(1500, 200), deviation, 0.06, 30, 15, 15, now - idle)
            )
        await conn.copy_records_to_table(
            "ratings",
            records=rows,
            columns=[
                "player_id",
                "category",
                "rating",
                "deviation",
                "volatility",
                "games",
                "wins",
                "losses",
                "last_played_at",
            ],
        )
        await conn.execute("VACUUM ANALYZE")
        await conn.close()
        samples = []
        for _ in range(queries):
            offset = 50 * rng.randrange(50)
            start = time.perf_counter()
            await ratings.leaderboard(db, "standard", offset, 50)
            samples.append(time.perf_counter() - start)
        async with db.read() as session:
            await store.leaderboard(
                session,
                "standard",
                max_deviation=ratings.PROVISIONAL_DEVIATION,
                since=now - ratings.RECENT,
                offset=0,
                limit=50,
            )
            plan = (
                await session.execute(
                    text(
                        "EXPLAIN (ANALYZE) SELECT r.*, players.name FROM (SELECT * FROM ratings "
                        "WHERE category = 'standard' AND deviation <= 110 "
                        "AND last_played_at >= now() - interval '30 days' "
                        "ORDER BY rating DESC, player_id DESC OFFSET 2450 LIMIT 50) AS r "
                        "JOIN players ON players.id = r.player_id "
                        "ORDER BY r.rating DESC, r.player_id DESC"
                    )
                )
            ).all()
        print("\n".join(row[0] for row in plan))
        server = float(plan[-1][0].split(":")[1].split()[0])
    finally:
        await db.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    return {
        "players": players,
        "queries": queries,
        "page": 50,
        **_quantiles(samples),
        "deepest_page_server_ms": server,
        "load_average": round(os.getloadavg()[0], 1),
    }


async def bench_verify(matches: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        service = await _service(f"sqlite+aiosqlite:///{tmp}/verify.db")
        rng = random.Random(3)
        found = []
        try:
            for _ in range(matches):
                table_id, players = await _started(service, rated=False)
                while True:
                    state = (await service.load(table_id)).state
                    assert state is not None
                    if state.status != "playing":
                        break
                    seat = 0 if state.hand.phase == "over" else state.hand.turn
                    legal = [a for a in legal_actions(state, seat) if a.kind != RESIGN]
                    knocks = [a for a in legal if a.kind in (KNOCK, NEXT_HAND, DRAW_STOCK)]
                    discards = [a for a in legal if a.kind == DISCARD_CARD]
                    if knocks:
                        action = knocks[0]
                    elif discards:
                        hand = state.hand.hands[seat]
                        action = min(discards, key=lambda a: deadwood(hand & ~(1 << (a.card or 0))))
                    else:
                        action = rng.choice(legal)
                    await service.submit(table_id, players[seat], Play(action))
                found.append(await records.match_record(service.db, f"{table_id}-1"))
        finally:
            await service.db.close()
    hands = sum(len(r["hands"]) for r in found)
    rounds = 5
    start = time.perf_counter()
    for _ in range(rounds):
        for record in found:
            verify(record)
    elapsed = time.perf_counter() - start
    return {
        "matches": matches,
        "hands": hands,
        "verify_hands_per_s": round(rounds * hands / elapsed, 1),
        "verify_matches_per_s": round(rounds * matches / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    update = sub.add_parser("update")
    update.add_argument("--matches", type=int, default=200)
    update.add_argument("--database-url", default="")
    board = sub.add_parser("leaderboard")
    board.add_argument("--players", type=int, default=100_000)
    board.add_argument("--queries", type=int, default=2000)
    check = sub.add_parser("verify")
    check.add_argument("--matches", type=int, default=10)
    args = parser.parse_args()
    if args.what == "update":
        with tempfile.TemporaryDirectory() as tmp:
            url = args.database_url or f"sqlite+aiosqlite:///{tmp}/update.db"
            figures = asyncio.run(bench_update(url, args.matches))
    elif args.what == "leaderboard":
        figures = asyncio.run(bench_leaderboard(args.players, args.queries))
    else:
        figures = asyncio.run(bench_verify(args.matches))
    for key, value in figures.items():
        print(f"{key:>28}  {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
