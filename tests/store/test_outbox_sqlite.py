"""The plain move's notes on SQLite's own driver (``outbox.write_notes_sqlite``) write exactly
the rows, byte for byte, that the general path's statement (``outbox.write_notes``) writes: the
same players chosen, the same values stored."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Connection

from app.bus.hub import Hub
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, outbox, run_migrations
from app.store.db import sqlite_time
from app.table.model import Note

# Each player's settings: (active, reminders), or no row at all.
CHOICES: list[tuple[bool, str] | None] = [
    (True, "each_turn"),
    (True, "digest"),
    (True, "none"),
    (False, "each_turn"),
    None,
]


async def test_the_driver_writes_the_rows_the_general_statement_writes(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        await run_migrations(db)
        service = TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
        players = [(await service.create_player(f"p{i}"))[0].player_id for i in range(5)]
        with sqlite3.connect(path) as raw:
            for player, choice in zip(players, CHOICES, strict=True):
                if choice is not None:
                    raw.execute(
                        "INSERT INTO notification_settings (player_id, reminders, digest_hours,"
                        " push, active, updated_at) VALUES (?, ?, 24.0, 0, ?, ?)",
                        (player, choice[1], int(choice[0]), sqlite_time(datetime.now(UTC))),
                    )
        now = datetime(2026, 12, 4, 20, 50, 1, 123456, tzinfo=UTC)
        later = now + timedelta(minutes=3)

        def notes(tag: str) -> list[Note]:
            return [
                Note(player, kind, "t" * 32, {"n": i, "é": [1, None]}, f"{tag}_{i}_{kind}", when)
                for i, player in enumerate(players)
                for kind, when in (("your_turn", None), ("time_running_out", later))
            ]

        def general(conn: Connection) -> int:
            return outbox.write_notes(conn, notes("a"), now)

        def driver(conn: Connection) -> int:
            connection = conn.connection.driver_connection
            assert isinstance(connection, sqlite3.Connection)
            return outbox.write_notes_sqlite(connection, notes("b"), sqlite_time(now))

        written = (await db.transact(general), await db.transact(driver))
        assert written == (5, 5)  # your_turn for each_turn and digest, the other for all three
        with sqlite3.connect(path) as raw:
            rows = raw.execute(
                "SELECT message_id, player_id, kind, table_id, payload, status, created_at,"
                " next_at, attempts, channels_done, typeof(created_at), typeof(payload)"
                " FROM outbox ORDER BY id"
            ).fetchall()
    finally:
        await db.close()
    by_tag: dict[str, list[tuple[object, ...]]] = {"a": [], "b": []}
    for message_id, *rest in rows:
        tag, i, kind = message_id.split("_", 2)
        by_tag[tag].append((i, kind, *rest))
    assert len(by_tag["a"]) == 5
    assert by_tag["a"] == by_tag["b"]
