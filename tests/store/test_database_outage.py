"""PostgreSQL drops every connection (as a restart does): a write goes on, a read says 503."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import asyncpg
import httpx
import pytest

from tests.api.conftest import PG_ADMIN, pg_database, start_server
from tests.api.helpers import get_table, mover, seated_table, step

T = TypeVar("T")


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


# A terminated backend's last words (pg_terminate_backend): a FATAL ErrorResponse, 57P01.
_FIELDS = (
    b"SFATAL\x00VFATAL\x00C57P01\x00Mterminating connection due to administrator command\x00\x00"
)
TERMINATED = b"E" + struct.pack("!i", 4 + len(_FIELDS)) + _FIELDS


class TerminatingProxy:
    """A TCP proxy in front of PostgreSQL, in a thread of its own, that can do what a terminated
    backend does with the gap between its two steps widened: send each client the notice of
    termination at once, and close the connection only ``gap`` seconds later. A real
    termination leaves a moment between the two too (the deadline scan met it 4 times in 18
    outages); here the gap is certain."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.links: list[tuple[asyncio.StreamWriter, asyncio.StreamWriter, asyncio.Event]] = []
        self.thread.start()
        self.server = self._call(asyncio.start_server(self._link, "127.0.0.1", 0))
        self.port: int = self.server.sockets[0].getsockname()[1]

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", 5432)
        cut = asyncio.Event()
        self.links.append((writer, up_writer, cut))

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while (data := await source.read(65536)) and not cut.is_set():
                    sink.write(data)
                    await sink.drain()
            if not cut.is_set():  # one side closed: so does the other (a cut one waits)
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def _terminate_all(self, gap: float) -> int:
        links, self.links = self.links, []
        for client, _, cut in links:
            cut.set()
            client.write(TERMINATED)
        await asyncio.sleep(gap)
        for client, upstream, _ in links:
            client.close()
            upstream.close()
        return len(links)

    def terminate_all(self, gap: float) -> int:
        """Every connection open now told of its termination, and closed ``gap`` s later."""
        return self._call(self._terminate_all(gap))

    def url(self, url: str) -> str:
        return url.replace("127.0.0.1:5432", f"127.0.0.1:{self.port}")

    def stop(self) -> None:
        async def close() -> None:
            self.server.close()
            for client, upstream, _ in self.links:
                client.close()
                upstream.close()

        self._call(close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


async def test_the_deadline_scan_meets_terminated_backends_with_a_warning(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """18 outages gave ``[error] deadline scan failed`` with a traceback 4 times (``cannot
    switch to state 12``: a pooled connection that had read its termination notice but not yet
    the close, see ``app.store.db.is_unavailable``): an outage the server recovers from is a
    warning."""
    proxy = TerminatingProxy()
    caplog.set_level(logging.WARNING)
    # The deadline scan alone on the pool: the other scans would meet the dead connections first.
    server = start_server(
        proxy.url(pg_url),
        bot_scan_interval=3600.0,
        notify_scan_interval=3600.0,
        tournament_scan_interval=3600.0,
        lobby_scan_interval=3600.0,
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            await asyncio.sleep(0.5)  # a few deadline scans (every 0.25 s) on pooled connections
            for _ in range(3):
                assert await asyncio.to_thread(proxy.terminate_all, 1.0) >= 1
                await asyncio.sleep(0.5)
            assert (await client.get("/readyz")).status_code == 200
    finally:
        server.stop()
        proxy.stop()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [(r.name, r.getMessage(), r.exc_info) for r in errors]
    warned = [r.getMessage() for r in caplog.records if r.name == "app.service.workers.deadlines"]
    assert any("the database is unavailable" in m for m in warned), warned
