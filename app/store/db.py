"""The database handle: an async engine, a session factory and the write gate."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import asyncpg
import orjson
from prometheus_client import Counter
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.util import greenlet_spawn

# PostgreSQL connections per process (its default ``max_connections`` is 100): the pool of
# SQLAlchemy's statements, and that of the hot statements sent on the driver's own connection.
POOL_SIZE = 16
HOT_POOL_SIZE = 4
# The hot statements (``fetchrow_driver``: a table's load, a token's, the plain move, the group
# commit) walk primary keys and unique indexes whatever the data. Their connections plan each
# once, generically, instead of at every execution: with statistics of a large database the
# planner keeps custom plans for the group commit (it sees each call's array lengths): 0.4-0.7
# ms of planning a call, against 2 us for a generic plan. A generic plan made while a
# table is small would scan it for as long as the connection lives (a new database has no
# statistics; a plan is made again only when they change), so these connections never choose
# a sequential scan where an index serves.
HOT_SETTINGS = {"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off"}

# SQLite runs in the server's own process, so its work is part of the server's CPU (on
# PostgreSQL it is another process's): what it costs, read beside the process's CPU.
SQLITE_CPU = Counter(
    "ginrummy_sqlite_cpu_seconds",
    "CPU seconds this process spent writing to SQLite: its write transactions (statements "
    "built and run, and their commits) and WAL checkpoints, each on the thread that ran it.",
)


def dump_json(value: Any) -> str:
    """A JSON column's text, by orjson: the document ``json.dumps`` writes (compact, UTF-8, int
    keys as strings) at a tenth of the CPU; a snapshot and events are written per move."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def sqlite_time(moment: datetime) -> str:
    """``moment`` as SQLAlchemy's SQLite ``DATETIME`` stores it (``UTCDateTime``: in UTC), for
    the statements sent on SQLite's driver itself."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


JSON_CODEC: dict[str, Any] = {"json_serializer": dump_json, "json_deserializer": orjson.loads}

# asyncpg's errors that mean the connection is gone, not that the statement was wrong.
ASYNCPG_CONNECTION_ERRORS: tuple[type[Exception], ...] = (
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # e.g. the backend terminated
    # A notice of termination that came while the connection sat in the pool leaves asyncpg's
    # protocol unusable.
    asyncpg.InternalClientError,
)

_DRIVER_CONNECTION_ERRORS: tuple[type[Exception], ...] = (OSError, *ASYNCPG_CONNECTION_ERRORS)


def is_unavailable(exc: BaseException) -> bool:
    """The database dropped or refused the connection (a restart, an outage): the work may be
    tried again later, as opposed to a statement or a program that is wrong.

    One such failure is ``InternalClientError: cannot switch to state 12; another operation (2)
    is in progress``, which reads as two operations on one connection but is not: a terminated
    backend sends its notice (a FATAL ErrorResponse) and then closes, and a connection idle in
    the pool that has read the notice but not yet the close is left in asyncpg's error state.
    The next statement on it fails so; asyncpg then aborts the connection, and SQLAlchemy,
    seeing it closed, discards it and renews the pool.
    """
    if isinstance(exc, DBAPIError):
        return exc.connection_invalidated or isinstance(exc.orig, _DRIVER_CONNECTION_ERRORS)
    return isinstance(exc, _DRIVER_CONNECTION_ERRORS)


# How long a writer waits for another process's SQLite write lock.
BUSY_TIMEOUT_MS = 10000

T = TypeVar("T")
log = logging.getLogger(__name__)


def create_private(url: str) -> None:
    """Create the SQLite database file of ``url`` readable and writable by its owner alone
    (0600), if it does not exist yet: it holds every player's games and settings. SQLite gives
    the ``-wal`` and ``-shm`` files it makes beside it the mode of the main file. A file that
    exists keeps the mode its operator gave it."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite"):
        return
    path = parsed.database
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


async def _to_completion(coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` in a task of its own to its end, even if the caller is cancelled meanwhile
    (then re-raise the cancellation once it is done)."""
    task = asyncio.ensure_future(coro)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            cancelled = exc
    task.result()
    if cancelled is not None:
        raise cancelled


@asynccontextmanager
async def _transaction(
    sessions: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """A session in a transaction whose end runs to completion whatever happens meanwhile.

    The end (commit or rollback, then the connection's reset as it returns to the pool) awaits
    the driver; a cancellation landing there (a WebSocket whose client left) would break the
    reset, and the pool would log a traceback for an ordinary disconnect.
    """
    async with sessions() as session:
        transaction = await session.begin()
        try:
            yield session
        except BaseException:
            await _to_completion(transaction.rollback())
            raise
        await _to_completion(transaction.commit())


class Database:
    """One engine per app. ``read()`` and ``write()`` each yield a session inside a transaction.

    SQLite allows one writer at a time, and a transaction that read before it wrote fails at
    once (SQLITE_BUSY_SNAPSHOT) when another writer committed meanwhile. So with SQLite every
    write transaction of this process passes one asyncio lock, and a writer from another process
    waits on ``busy_timeout``. PostgreSQL needs no gate: the version-guarded UPDATE serialises.

    ``transact(work)`` is the hot write path (every command's commit): ``work`` is a plain
    function of a Core ``Connection``, run in one transaction. On PostgreSQL it runs on the
    async engine (``run_sync``), its statements awaited as usual; on SQLite see ``SQLiteWriter``.
    """

    def __init__(self, url: str, *, group_commit: bool = True) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        # The plain moves of a pass of the loop in one statement (PostgreSQL) or one
        # transaction (SQLite) (``app.store.group_commit``); off, each on its own.
        self.group_commit = group_commit
        create_private(url)
        kwargs: dict[str, Any] = {}
        if not self.is_sqlite:
            # A fixed pool: connections past the pool ("overflow") are opened and closed per
            # checkout, a new PostgreSQL backend each time, which under load costs more than
            # waiting for a pooled one. No ping on checkout: it costs three round trips per
            # transaction (BEGIN, a query, ROLLBACK); a connection the server dropped fails its
            # first statement instead, the pool then replaces all its connections, and
            # ``transact`` tries once more.
            kwargs.update(pool_size=POOL_SIZE, max_overflow=0)
        self.engine: AsyncEngine = create_async_engine(url, **kwargs, **JSON_CODEC)
        self._hot = self.engine
        if not self.is_sqlite:
            self._hot = create_async_engine(
                url,
                pool_size=HOT_POOL_SIZE,
                max_overflow=0,
                connect_args={"server_settings": HOT_SETTINGS},
                **JSON_CODEC,
            )
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
        # ``scan()``'s connections: each statement on its own, no BEGIN/COMMIT on PostgreSQL.
        autocommit = None if self.is_sqlite else {"isolation_level": "AUTOCOMMIT"}
        self._scans = readers if autocommit is None else self.engine.execution_options(**autocommit)
        self._read_sessions = async_sessionmaker(readers, expire_on_commit=False)
        self._write_gate = asyncio.Lock() if self.is_sqlite else None
        self._writer = None if self._write_gate is None else SQLiteWriter(url, self._write_gate)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read-only transaction (a consistent snapshot on PostgreSQL)."""
        async with _transaction(self._read_sessions) as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A write transaction; commits on exit, rolls back on an exception."""
        if self._write_gate is None:
            async with _transaction(self.sessions) as session:
                yield session
            return
        async with self._write_gate, _transaction(self.sessions) as session:
            yield session

    @asynccontextmanager
    async def scan(self) -> AsyncIterator[AsyncConnection]:
        """A connection for the background scans' reads (due notifications, clocks, bots),
        several times a second per process whether anyone plays or not.

        On PostgreSQL each statement runs on its own (autocommit): one round trip, where a
        read transaction takes three (BEGIN, the query, COMMIT) and an ORM session around it.
        A scan's statements need no common snapshot: each finds work that is then claimed by
        a conditional UPDATE. On SQLite it is a read transaction as ``read()`` opens.
        """
        async with self._scans.connect() as conn:
            yield conn

    async def transact(self, work: Callable[[Connection], T]) -> T:
        """``work(connection)`` in one write transaction: committed on return, rolled back on
        an exception (which propagates)."""
        if self._writer is None:
            for attempt in (1, 2):
                try:
                    async with self.engine.begin() as conn:
                        return await conn.run_sync(work)
                except DBAPIError as exc:
                    # The server dropped the connection (a restart): once more on a new one.
                    # Had the commit itself landed, the table's version guard refuses the repeat.
                    if attempt == 2 or not exc.connection_invalidated:
                        raise
            raise AssertionError("unreachable")
        assert self._write_gate is not None
        async with self._write_gate:
            return await self._writer.run(work)

    async def each(self, work: Callable[[Connection], T]) -> T:
        """``work(connection)`` for work whose statements each stand alone (a conditional
        UPDATE pinned to a lease, say): on PostgreSQL each commits on its own (autocommit, no
        BEGIN and COMMIT round trips); on SQLite it is one ``transact``, which costs no round
        trip there. An exception leaves the statements before it committed."""
        if self._writer is not None:
            return await self.transact(work)
        async with self._scans.connect() as conn:
            return await conn.run_sync(work)

    async def fetchrow_driver(self, statement: str, *args: Any) -> Any:
        """PostgreSQL: one statement straight on the driver (asyncpg), outside a transaction:
        its first row, or None.

        For the hottest statements only (``commits._commit_plain``,
        ``group_commit.GroupCommit``): they skip SQLAlchemy's statement machinery and the
        BEGIN/COMMIT round trips. A connection that fails is dropped with the whole pool
        (asyncpg's errors bypass SQLAlchemy's handling of them); the statement is tried once
        more on a new connection if the failure was the connection's.
        """
        return await self._driver("fetchrow", statement, args)

    async def fetch_driver(self, statement: str, *args: Any) -> list[Any]:
        """``fetchrow_driver``, every row."""
        rows: list[Any] = await self._driver("fetch", statement, args)
        return rows

    async def _driver(self, method: str, statement: str, args: tuple[Any, ...]) -> Any:
        for attempt in (1, 2):
            # The pool's connection itself, not an ``AsyncConnection`` around it: half the CPU
            # of a checkout (20 against 38 us), and no transaction is begun either way.
            raw = await self._hot.raw_connection()
            try:
                run = getattr(raw.driver_connection, method)
                return await run(statement, *args)
            except _DRIVER_CONNECTION_ERRORS:
                await greenlet_spawn(raw.invalidate)
                # The server dropped the others too (a restart): a new pool, as SQLAlchemy
                # makes when it sees a disconnect on its own statements.
                await self._hot.dispose(close=False)
                if attempt == 2:
                    raise
            finally:
                await greenlet_spawn(raw.close)  # back to the pool (replaced if invalidated)
        raise AssertionError("unreachable")

    async def ping(self) -> None:
        """Raise unless the database answers."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def close(self) -> None:
        await self.engine.dispose()
        if self._hot is not self.engine:
            await self._hot.dispose()
        if self._writer is not None:
            await self._writer.close()


class SQLiteWriter:
    """SQLite's write transactions run in the event loop, on their own ``sqlite3`` connection.

    A write transaction here is a few statements on a local file, without an fsync
    (``synchronous=NORMAL`` in WAL mode): a fraction of a millisecond of CPU. The async driver
    would hop to its thread and back for every statement, cursor and fetch while holding the
    write lock, each hop waiting its turn on a busy loop; a worker thread running the whole
    transaction waits for the GIL each time SQLite hands it back (both measured at half the
    moves/s of running it in the loop). Two things may not block the loop, so they go to one
    worker thread: waiting for another process's write lock (the loop's connection never waits,
    ``busy_timeout=0``: on SQLITE_BUSY the same work is redone in the thread, which waits), and
    the WAL checkpoint with its fsync (the loop's connection never checkpoints; every
    ``CHECKPOINT_EVERY`` commits the thread runs a PASSIVE one, which writers do not wait for).

    A PASSIVE checkpoint copies the WAL's pages into the database while the loop goes on
    appending, so under a steady stream of commits it never catches up, and the WAL, which
    starts again from its beginning only once every page is copied, grows for as long as the
    stream lasts (about 26 MB a second at capacity on the benchmark's 100 tables). When a
    checkpoint finds it longer than ``WAL_LIMIT_PAGES``, the thread runs a RESTART one with the
    write gate held: what the last PASSIVE left to copy and the fsyncs (about 4 ms in
    ``benchmarks/sqlite_writes.py``, and up to ``RESTART_WAIT_MS`` more for readers, during
    which this process's writes wait), after which the next commit writes the WAL from its
    beginning; ``journal_size_limit`` then cuts the file back to that length.
    """

    CHECKPOINT_EVERY = 200
    WAL_LIMIT_PAGES = 16384  # 64 MB of 4 KB pages
    # How long the RESTART waits for readers of the WAL to finish (the gate is held meanwhile);
    # one that does not finish in time leaves the WAL to the next try.
    RESTART_WAIT_MS = 100

    def __init__(self, url: str, gate: asyncio.Lock) -> None:
        self._gate = gate
        self._restarting: asyncio.Task[None] | None = None
        file_url = make_url(url).set(drivername="sqlite")
        immediate = {"sqlite_begin": "BEGIN IMMEDIATE"}
        self._inline = create_engine(file_url, execution_options=immediate, **JSON_CODEC)
        event.listen(self._inline, "connect", _sqlite_connect_inline)
        self._waiting = create_engine(file_url, execution_options=immediate, **JSON_CODEC)
        event.listen(self._waiting, "connect", _sqlite_connect)
        for engine in (self._inline, self._waiting):
            event.listen(engine, "begin", _sqlite_begin_on_driver)
        # The loop's one connection, kept checked out between transactions (a checkout and
        # return cost more CPU than a small transaction's SQLite work); dropped after a failure.
        self._held: Connection | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")
        self._commits = 0

    async def run(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one transaction; the caller holds the process's write gate."""
        loop = asyncio.get_running_loop()
        try:
            out = self._inline_transact(work)
        except OperationalError as exc:
            if getattr(exc.orig, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY:
                raise
            # Another process holds the write lock: wait for it off the loop.
            out = await loop.run_in_executor(self._thread, _transact, self._waiting, work)
        self._commits += 1
        if self._commits % self.CHECKPOINT_EVERY == 0:
            passive = loop.run_in_executor(self._thread, self._checkpoint, "PASSIVE")
            passive.add_done_callback(self._after_checkpoint)
        return out

    def _after_checkpoint(self, done: asyncio.Future[int | None]) -> None:
        """In the loop, after a PASSIVE checkpoint: a RESTART one if the WAL is too long."""
        pages = None if done.cancelled() else done.result()
        if pages is not None and pages > self.WAL_LIMIT_PAGES and self._restarting is None:
            self._restarting = asyncio.ensure_future(self._restart())

    async def _restart(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            async with self._gate:
                await loop.run_in_executor(self._thread, self._checkpoint, "RESTART")
        finally:
            self._restarting = None

    def _inline_transact(self, work: Callable[[Connection], T]) -> T:
        started = time.thread_time()
        if self._held is None:
            self._held = self._inline.connect()
        try:
            with self._held.begin():
                return work(self._held)
        except BaseException:
            # Rolled back; whatever state the failure left the connection in goes with it.
            self._held.close()
            self._held = None
            raise
        finally:
            SQLITE_CPU.inc(time.thread_time() - started)

    def _checkpoint(self, mode: str) -> int | None:
        """A checkpoint in ``mode``, in the thread: the WAL's length in pages, or None if it
        failed."""
        started = time.thread_time()
        pages = None
        try:
            # On the driver's connection: outside a transaction, as a checkpoint must be.
            raw = self._waiting.raw_connection()
            try:
                cursor = raw.cursor()
                restart = mode == "RESTART"
                if restart:
                    cursor.execute(f"PRAGMA busy_timeout={self.RESTART_WAIT_MS}")
                try:
                    _busy, pages, _copied = cursor.execute(
                        f"PRAGMA wal_checkpoint({mode})"
                    ).fetchone()
                finally:
                    if restart:
                        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            finally:
                raw.close()
        except Exception:
            log.exception("WAL checkpoint failed")
        SQLITE_CPU.inc(time.thread_time() - started)
        return pages

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        if self._restarting is not None:
            self._restarting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._restarting
        await loop.run_in_executor(self._thread, self._waiting.dispose)
        self._thread.shutdown()
        if self._held is not None:
            self._held.close()
            self._held = None
        self._inline.dispose()


def _transact(engine: Engine, work: Callable[[Connection], T]) -> T:
    started = time.thread_time()
    try:
        with engine.begin() as conn:
            return work(conn)
    finally:
        SQLITE_CPU.inc(time.thread_time() - started)


def _sqlite_connect(dbapi_connection: Any, _record: Any, *, inline: bool = False) -> None:
    # Let the engine, not the driver, say where transactions begin (see ``_sqlite_begin``).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={0 if inline else BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    # A WAL that started again from its beginning is cut back to this (SQLiteWriter).
    cursor.execute(f"PRAGMA journal_size_limit={SQLiteWriter.WAL_LIMIT_PAGES * 4096}")
    if inline:
        cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


def _sqlite_connect_inline(dbapi_connection: Any, record: Any) -> None:
    """The event loop's writer connection: never waits for a lock, never checkpoints."""
    _sqlite_connect(dbapi_connection, record, inline=True)


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql(conn.get_execution_options().get("sqlite_begin", "BEGIN"))


def _sqlite_begin_on_driver(conn: Connection) -> None:
    """``_sqlite_begin`` for the writer's ``sqlite3`` connections, on the driver itself:
    SQLAlchemy's execution of a statement costs more CPU than SQLite's BEGIN. A failure is
    raised as SQLAlchemy raises the driver's (``SQLITE_BUSY`` as ``OperationalError``)."""
    driver = conn.connection.driver_connection
    assert driver is not None
    statement = conn.get_execution_options().get("sqlite_begin", "BEGIN")
    try:
        driver.execute(statement)
    except sqlite3.OperationalError as exc:
        raise OperationalError(statement, None, exc) from exc
