"""The Database handle on a real SQLite file: reads are one snapshot, writes take the lock."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import threading
import time
import uuid
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import Connection, text

from app.store.db import Database, SQLiteWriter


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


async def test_a_sqlite_write_waits_for_another_process_off_the_event_loop(tmp_path: Path) -> None:
    """Another connection holds the write lock: ``transact`` waits for it, the loop runs on."""
    path = tmp_path / "busy.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        await db.transact(lambda conn: conn.exec_driver_sql("CREATE TABLE t (x INTEGER)"))
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO t VALUES (1)")
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        def release() -> None:
            time.sleep(0.3)
            other.execute("COMMIT")

        ticker = asyncio.create_task(tick())
        releaser = threading.Thread(target=release)
        releaser.start()
        try:
            await db.transact(lambda conn: conn.exec_driver_sql("INSERT INTO t VALUES (2)"))
        finally:
            ticker.cancel()
            releaser.join()
        assert ticks >= 10  # the loop ran while the write waited ~0.3 s for the lock
        async with db.read() as session:
            rows = (await session.execute(text("SELECT x FROM t ORDER BY x"))).scalars().all()
        assert rows == [1, 2]
    finally:
        other.close()
        await db.close()


async def test_a_failed_transact_writes_nothing(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'rollback.db'}")
    try:
        await db.transact(lambda conn: conn.exec_driver_sql("CREATE TABLE t (x INTEGER)"))

        def work(conn: Connection) -> None:
            conn.exec_driver_sql("INSERT INTO t VALUES (1)")
            raise LookupError("refused after a write")

        with pytest.raises(LookupError):
            await db.transact(work)
        async with db.read() as session:
            assert (await session.execute(text("SELECT count(*) FROM t"))).scalar_one() == 0
        # The writer's connection is whole again: the next transactions commit, each alone.
        await db.transact(lambda conn: conn.exec_driver_sql("INSERT INTO t VALUES (2)"))
        with pytest.raises(LookupError):
            await db.transact(work)
        await db.transact(lambda conn: conn.exec_driver_sql("INSERT INTO t VALUES (3)"))
        async with db.read() as session:
            rows = (await session.execute(text("SELECT x FROM t ORDER BY x"))).scalars().all()
        assert rows == [2, 3]
    finally:
        await db.close()


PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


async def test_a_postgresql_write_survives_a_dropped_connection() -> None:
    """The server ends the pooled connection (as a restart does): the next write still lands."""
    db = Database(PG_URL)
    table = f"t_{uuid.uuid4().hex[:12]}"
    try:
        await db.transact(lambda conn: conn.exec_driver_sql(f"CREATE TABLE {table} (x INTEGER)"))
        backend = await db.transact(
            lambda conn: conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        )
        admin = await asyncpg.connect(PG_URL.replace("+asyncpg", ""))
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", backend)
        finally:
            await admin.close()
        await asyncio.sleep(0.2)  # the server's notice of termination reaches the idle connection
        await db.transact(lambda conn: conn.exec_driver_sql(f"INSERT INTO {table} VALUES (1)"))
        async with db.read() as session:
            assert (await session.execute(text(f"SELECT x FROM {table}"))).scalar_one() == 1
    finally:
        await db.transact(lambda conn: conn.exec_driver_sql(f"DROP TABLE IF EXISTS {table}"))
        await db.close()


async def test_a_driver_statement_survives_a_dropped_connection() -> None:
    """The one-statement path (a plain move on PostgreSQL) also replaces a dropped connection."""
    db = Database(PG_URL)
    try:
        backend = await db.fetchrow_driver("SELECT pg_backend_pid() AS pid")
        admin = await asyncpg.connect(PG_URL.replace("+asyncpg", ""))
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", backend["pid"])
        finally:
            await admin.close()
        await asyncio.sleep(0.2)  # the server's notice of termination reaches the idle connection
        again = await db.fetchrow_driver("SELECT pg_backend_pid() AS pid, 1 + $1::int AS x", 1)
        assert again["x"] == 2 and again["pid"] != backend["pid"]
        assert (await db.fetchrow_driver("SELECT 3 AS y"))["y"] == 3  # the pool works on
    finally:
        await db.close()


async def test_a_new_sqlite_file_and_its_wal_are_the_owners_alone(tmp_path: Path) -> None:
    """The file holds every game and setting: 0600 with the usual umask (before: 0644)."""
    path = tmp_path / "private.db"
    old = os.umask(0o022)
    try:
        db = Database(f"sqlite+aiosqlite:///{path}")
        try:
            await db.transact(lambda conn: conn.exec_driver_sql("CREATE TABLE t (x INTEGER)"))
            async with db.read() as session:
                await session.execute(text("SELECT x FROM t"))
            files = [path, path.with_name("private.db-wal"), path.with_name("private.db-shm")]
            modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files}
            assert modes == dict.fromkeys(modes, 0o600), {k: oct(v) for k, v in modes.items()}
        finally:
            await db.close()
    finally:
        os.umask(old)


async def test_a_sqlite_wal_under_a_steady_stream_of_commits_stays_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits that never pause leave a PASSIVE checkpoint always behind, and the WAL would
    grow for as long as they come: past ``WAL_LIMIT_PAGES`` a RESTART under the write gate
    starts it again, and ``journal_size_limit`` cuts the file back."""
    monkeypatch.setattr(SQLiteWriter, "WAL_LIMIT_PAGES", 100)
    monkeypatch.setattr(SQLiteWriter, "CHECKPOINT_EVERY", 10)
    path = tmp_path / "wal.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    blob = os.urandom(8000)  # two pages and more a row
    try:
        await db.transact(lambda conn: conn.exec_driver_sql("CREATE TABLE t (x BLOB)"))

        async def write() -> None:
            await db.transact(
                lambda conn: conn.exec_driver_sql("INSERT INTO t VALUES (?)", (blob,))
            )

        longest = 0
        for _ in range(40):
            await asyncio.gather(*(write() for _ in range(50)))
            longest = max(longest, path.with_name("wal.db-wal").stat().st_size)
        async with db.read() as session:
            assert (await session.execute(text("SELECT count(*) FROM t"))).scalar_one() == 2000
    finally:
        await db.close()
    # 16 MB of rows went through it; it stayed within a few hundred pages of its limit (the
    # commits already queued for the gate, and the checkpoints for the thread, go first).
    assert longest < 2000 * 4096
