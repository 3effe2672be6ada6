"""PostgreSQL drops every connection (as a restart does): a write goes on, a read says 503."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import asyncpg
import httpx
import pytest

from tests.api.conftest import PG_ADMIN, pg_database, start_server
from tests.api.helpers import get_table, mover, seated_table, step


@pytest.fixture
def pg_url() -> Iterator[str]:
    with pg_database("ginrummy_outage") as url:
        yield url


async def _terminate_connections(database: str) -> int:
    admin = await asyncpg.connect(PG_ADMIN)
    try:
        dropped: int = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
            database,
        )
    finally:
        await admin.close()
    await asyncio.sleep(0.2)  # the notices of termination reach the pooled connections
    return dropped


async def test_after_the_database_drops_its_connections_the_game_goes_on(pg_url: str) -> None:
    # No periodic bot scan: it would meet the dropped connections before the requests do.
    server = start_server(pg_url, bot_scan_interval=3600.0)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, players = await seated_table(client)
            view = await get_table(client, table_id, players[0])
            who = players[mover(view)]
            database = pg_url.rsplit("/", 1)[1]

            # A read meets a dropped connection: the table's load (one statement on the driver)
            # is tried again on a new pool, or a 503 with Retry-After says to retry; then the
            # pool has new connections for the next request.
            assert await _terminate_connections(database) >= 1
            r = await client.get(f"/v1/tables/{table_id}", headers=who.auth)
            assert r.status_code in (200, 503), r.text
            if r.status_code == 503:
                assert r.json()["code"] == "database_unavailable"
                assert r.headers["Retry-After"] == "1"
            view = await get_table(client, table_id, who)

            # A move (on this process's cached table) is written whatever connection it meets.
            assert await _terminate_connections(database) >= 1
            moved = await step(client, table_id, players, view)
            who = players[mover(moved["table"])]
            # A read may still meet one of the dropped connections, once.
            r = await client.get(f"/v1/tables/{table_id}", headers=who.auth)
            if r.status_code == 503:
                assert r.json()["code"] == "database_unavailable"
                r = await client.get(f"/v1/tables/{table_id}", headers=who.auth)
            assert r.status_code == 200, r.text
            assert r.json()["version"] == moved["version"] == view["version"] + 1
            await step(client, table_id, players, r.json())
    finally:
        server.stop()
