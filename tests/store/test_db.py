"""The Database handle on a real SQLite file: reads are one snapshot, writes take the lock."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from app.store.db import Database


async def test_a_sqlite_read_sees_one_snapshot_while_a_write_commits(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'snap.db'}")
    try:
        async with db.write() as session:
            await session.execute(text("CREATE TABLE t (x INTEGER)"))
            await session.execute(text("INSERT INTO t VALUES (1)"))
        async with db.read() as reader:
            before = (await reader.execute(text("SELECT x FROM t"))).scalar_one()
            async with db.write() as writer:
                await writer.execute(text("UPDATE t SET x = 2"))
            during = (await reader.execute(text("SELECT x FROM t"))).scalar_one()
        async with db.read() as reader:
            after = (await reader.execute(text("SELECT x FROM t"))).scalar_one()
        assert (before, during, after) == (1, 1, 2)
    finally:
        await db.close()
