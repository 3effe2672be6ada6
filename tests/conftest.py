"""Before any test: the local PostgreSQL the suite needs must answer, or one clear message.

The API and store tests create their own databases on the server at 127.0.0.1:5432 (user
``postgres``, trust auth, database ``test``); without it they would each fail with a connection
error. ``GINRUMMY_TEST_POSTGRES`` names another address for this check.

Then the fixtures the server tests of every folder share (``database_url``, ``server``,
``client``, ``module_db``, ``receiver``), built from ``tests/api/conftest.py``'s servers.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.api.conftest import Server, own_database, pg_database, start_server
from tests.api.receiver import Receiver

POSTGRES = os.environ.get("GINRUMMY_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


async def _reachable(url: str) -> str | None:
    """None when ``url`` accepts a connection, else why not."""
    try:
        conn = await asyncpg.connect(url, timeout=10)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        return f"{type(exc).__name__}: {exc}"
    await conn.close()
    return None


def pytest_configure(config: pytest.Config) -> None:
    problem = asyncio.run(_reachable(POSTGRES))
    if problem is not None:
        raise pytest.UsageError(
            f"The tests need the local PostgreSQL at {POSTGRES} (database 'test', trust auth); "
            f"it did not answer ({problem}). Start it (`.ci/run` does) and run `make test` again."
        )


# The servers the tests of the API, clocks, notifications, ratings and bots share: one per
# database kind for the session (``start_server``).
@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("db") / "ginrummy.db"
        yield f"sqlite+aiosqlite:///{path}"
        return
    # Durability is not under test here; speed is welcome.
    with pg_database("ginrummy_test", "synchronous_commit = off") as url:
        yield url


@pytest.fixture(scope="module")
def module_db(
    request: pytest.FixtureRequest, database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The module's own database of each kind (``own_database``), for the servers it starts;
    its tests on the session ``server`` keep ``database_url``."""
    prefix = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    with own_database(database_url, tmp_path_factory, prefix) as url:
        yield url


@pytest.fixture(scope="session")
def server(database_url: str) -> Iterator[Server]:
    running = start_server(database_url)
    yield running
    running.stop()


@pytest.fixture
async def client(server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        yield http


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on a loopback port of its own (``tests/api/receiver.py``)."""
    running = Receiver().start()
    yield running
    running.stop()
