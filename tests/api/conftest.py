"""Server tests run against a real uvicorn, once on a SQLite file and once on PostgreSQL.

The ``database_url`` fixture (``tests/conftest.py``, shared by every folder) is parametrised:
``sqlite`` is a fresh file in a temp dir and ``postgresql`` a fresh database on this machine's
server (dropped at the end). Each gets one session-wide server; tests that restart or double
the server start their own on the same URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import asyncpg
import httpx
import pytest
import uvicorn

from app.api.edge.protocols import uvicorn_options
from app.main import create_app
from app.settings import Settings

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass
class Server:
    """A uvicorn serving ``create_app`` in a thread, on a free port."""

    url: str
    settings: Settings
    uvicorn: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.uvicorn.should_exit = True
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "uvicorn did not stop"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# What a test server changes besides its database and port: no human pause for bots, the
# shortest time controls low enough for timeouts within a test, and hand reviews (each result
# board asks for one) at a quarter of their budget, so the suite's CPU goes to what it tests.
TEST_DEFAULTS: dict[str, object] = {
    "review_samples": 16,
    "bot_draw_delay": 0.0,
    "bot_discard_delay": 0.0,
    "clock_min_per_move": 0.5,
    "clock_min_bank": 0.5,
    "rate_limit_players_ip": "",
}


def start_server(database_url: str, **overrides: object) -> Server:
    """Start a new app instance on ``database_url`` (migrations run at its start).

    Bots move without their human pause here, clocks may be as short as half a second, and new
    players are not limited per address (the session's server makes every test's players, all
    from 127.0.0.1) (``TEST_DEFAULTS``), unless a test asks otherwise. Sockets get per-message
    deflate only with ``deflate=True`` (``python -m app`` serves without); the other overrides
    are settings.
    """
    deflate = bool(overrides.pop("deflate", False))
    port = _free_port()
    settings = Settings(
        database_url=database_url,
        port=port,
        public_url=f"http://127.0.0.1:{port}",
        gc_freeze=False,  # the app shares the test process: leave its collector alone
        **{**TEST_DEFAULTS, **overrides},  # type: ignore[arg-type]
    )
    config = uvicorn.Config(
        create_app(settings),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        # As ``python -m app`` serves: sockets then take the shared frames' wire
        # (app.api.live.wire).
        **{**uvicorn_options(settings), "ws_per_message_deflate": deflate},
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    return Server(f"http://127.0.0.1:{port}", settings, server, thread)


@contextlib.asynccontextmanager
async def client_of(database_url: str, **overrides: object) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a new server on ``database_url`` (``start_server``), stopped after."""
    running = start_server(database_url, **overrides)
    try:
        async with httpx.AsyncClient(base_url=running.url, timeout=30) as http:
            yield http
    finally:
        running.stop()


async def _pg(statement: str) -> None:
    conn = await asyncpg.connect(PG_ADMIN)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@contextlib.contextmanager
def pg_database(prefix: str, *settings: str) -> Iterator[str]:
    """A new PostgreSQL database (``ALTER DATABASE ... SET`` each of ``settings``), dropped
    afterwards: its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg(f'CREATE DATABASE "{name}"'))
    for setting in settings:
        asyncio.run(_pg(f'ALTER DATABASE "{name}" SET {setting}'))
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        asyncio.run(_pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# For a test whose subject is not the database (documents, the edge, input checks, error
# mapping, redaction): run it once, on SQLite, rather than on both.
sqlite_only = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@contextlib.contextmanager
def own_database(like: str, tmp_path_factory: pytest.TempPathFactory, prefix: str) -> Iterator[str]:
    """A new empty database of the same kind as ``like``. For a module whose servers must be
    the only ones on their database: the session's ``server`` shares ``database_url`` and runs
    background workers (the notification dispatcher) with the default settings, which would
    take that module's work with other settings than its own servers'."""
    if like.startswith("sqlite"):
        yield f"sqlite+aiosqlite:///{tmp_path_factory.mktemp(prefix) / f'{prefix}.db'}"
        return
    with pg_database(f"ginrummy_{prefix}", "synchronous_commit = off") as url:
        yield url
