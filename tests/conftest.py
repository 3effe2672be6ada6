"""Before any test: the local PostgreSQL the suite needs must answer, or one clear message.

The API and store tests create their own databases on the server at 127.0.0.1:5432 (user
``postgres``, trust auth, database ``test``); without it they would each fail with a connection
error. ``GINRUMMY_TEST_POSTGRES`` names another address for this check.
"""

from __future__ import annotations

import asyncio
import os

import asyncpg
import pytest

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
