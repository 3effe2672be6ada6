"""A plain move on SQLite goes straight to the driver (``commits._commit_plain_sqlite``): its rows
must be stored exactly as the Core statements of every other change store them, and read back
the same."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import orjson

from app.bus.hub import Hub
from app.engine import Action, legal_actions
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, run_migrations
from app.table.commands import Join, Play, Start

STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}")


async def test_a_plain_move_on_sqlite_is_stored_as_core_stores_it(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    await run_migrations(db)
    service = TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
    try:
        a, _ = await service.create_player("a")
        b, _ = await service.create_player("b")
        table_id = (await service.create_table(a, "standard", {})).body["table_id"]
        await service.submit(table_id, b, Join())
        await service.submit(table_id, a, Start())  # Core: seats, a new match, a deal's secret
        loaded = await service.load(table_id)
        core_seq = loaded.table.last_seq
        for _ in range(6):  # plain moves: each writes its events and the snapshot only
            state = loaded.state
            assert state is not None
            seat = state.hand.turn
            actor = (a, b)[seat]
            action = next(x for x in legal_actions(state, seat) if x.kind != "resign")
            result = await service.submit(table_id, actor, Play(Action.from_dict(action.to_dict())))
            assert result.status_code == 200
            loaded = await service.load(table_id)
        assert loaded.table.version == result.body["version"]
        logged = await service.log_since(table_id, 0, 1000)
        assert [s.seq for s in logged] == list(range(1, loaded.table.last_seq + 1))
        assert loaded.table.last_seq > core_seq
    finally:
        await db.close()

    with sqlite3.connect(path) as raw:
        rows = raw.execute(
            "SELECT seq, typeof(data), typeof(secret), secret, typeof(created_at), created_at,"
            " typeof(hand_number), typeof(match_number) FROM events WHERE table_id = ?"
            " ORDER BY seq",
            (table_id,),
        ).fetchall()
        snapshot = raw.execute(
            "SELECT typeof(state), state, typeof(updated_at), updated_at, version, last_seq"
            " FROM snapshots WHERE table_id = ?",
            (table_id,),
        ).fetchone()
    core = [r for r in rows if r[0] <= core_seq]
    plain = [r for r in rows if r[0] > core_seq]
    assert core and plain
    # The same storage classes for every column, whichever path wrote the row.
    shapes = {(r[1], r[2], r[4], r[7]) for r in rows}
    assert shapes == {("text", "text", "text", "integer")}, shapes
    # No secret is JSON null as the JSON type writes it, never SQL NULL.
    assert {r[3] for r in plain} == {"null"}
    assert "null" in {r[3] for r in core}
    assert all(STAMP.fullmatch(r[5]) for r in rows), [r[5] for r in rows]
    assert {r[6] for r in plain} == {"integer"}  # moves of a hand
    state_type, state, stamp_type, stamp, version, last_seq = snapshot
    assert (state_type, stamp_type) == ("text", "text") and STAMP.fullmatch(stamp)
    assert loaded.state is not None and orjson.loads(state) == loaded.state.to_dict()
    assert (version, last_seq) == (loaded.table.version, loaded.table.last_seq)
