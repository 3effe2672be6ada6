"""The database handle: an async engine, a session factory and the write gate."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Connection, event, text
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

# PostgreSQL connections per process (its default ``max_connections`` is 100).
POOL_SIZE = 20


class Database:
    """One engine per app. ``read()`` and ``write()`` each yield a session inside a transaction.

    SQLite allows one writer at a time, and a transaction that read before it wrote fails at
    once (SQLITE_BUSY_SNAPSHOT) when another writer committed meanwhile. So with SQLite every
    write transaction of this process passes one asyncio lock, and a writer from another process
    waits on ``busy_timeout``. PostgreSQL needs no gate: the version-guarded UPDATE serialises.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        kwargs: dict[str, Any] = {}
        if not self.is_sqlite:
            # A fixed pool: connections past the pool ("overflow") are opened and closed per
            # checkout, a new PostgreSQL backend each time, which under load costs more than
            # waiting for a pooled one.
            kwargs.update(pool_size=POOL_SIZE, max_overflow=0, pool_pre_ping=True)
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        # A table, its seats and its snapshot read as one moment: PostgreSQL's READ COMMITTED
        # would let a commit land between the statements of one load. SQLite's driver runs a
        # SELECT outside any transaction, so the engine begins its transactions itself: a
        # deferred BEGIN reads one WAL snapshot, BEGIN IMMEDIATE takes the write lock up front
        # (another process's writer then waits on busy_timeout instead of failing mid-way).
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_connect)
            event.listen(self.engine.sync_engine, "begin", _sqlite_begin)
            readers = self.engine.execution_options(sqlite_begin="BEGIN")
            writers = self.engine.execution_options(sqlite_begin="BEGIN IMMEDIATE")
        else:
            readers = self.engine.execution_options(isolation_level="REPEATABLE READ")
            writers = self.engine
        self.sessions = async_sessionmaker(writers, expire_on_commit=False)
        self._read_sessions = async_sessionmaker(readers, expire_on_commit=False)
        self._write_gate = asyncio.Lock() if self.is_sqlite else None

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read-only transaction (a consistent snapshot on PostgreSQL)."""
        async with self._read_sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A write transaction; commits on exit, rolls back on an exception."""
        if self._write_gate is None:
            async with self.sessions() as session, session.begin():
                yield session
            return
        async with self._write_gate, self.sessions() as session, session.begin():
            yield session

    async def ping(self) -> None:
        """Raise unless the database answers."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def close(self) -> None:
        await self.engine.dispose()


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Let the engine, not the driver, say where transactions begin (see ``_sqlite_begin``).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql(conn.get_execution_options().get("sqlite_begin", "BEGIN"))
