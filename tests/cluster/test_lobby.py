"""The lobby across processes: two ``python -m app`` behind nginx on one PostgreSQL, one Redis.

PostgreSQL decides each pairing (one pairing per seek, one table per pairing, never a player
at two live tables), Redis carries the news to the sockets of the other process, and a process
killed with ``kill -9`` in the middle of a pairing leaves no seek half-taken, no table half-made.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.api.conftest import _free_port, pg_database
from tests.api.helpers import Player, new_player
from tests.cluster.conftest import App, Nginx, RedisServer, spawn_app, start_app, start_nginx
from tests.lobby.helpers import CORRESPONDENCE, LIVE, message, post_seek, seek, socket
from tests.waiting import until

LOBBY_ENV = {
    "WS_HEARTBEAT": "1.0",
    "LOBBY_PRESENCE_SECONDS": "30",
    "LOBBY_MAX_OPEN_SEEKS": "50",
    "RATE_LIMIT_PLAYERS_IP": "",
}


class Two:
    def __init__(self, database_url: str, apps: list[App], nginx: Nginx) -> None:
        self.database_url = database_url
        self.apps = apps
        self.nginx = nginx

    async def pg(self) -> asyncpg.Connection:
        return await asyncpg.connect(self.database_url.replace("+asyncpg", ""))


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    server = RedisServer(_free_port())
    server.start()
    yield server
    server.stop()


def _env(database_url: str, redis: RedisServer) -> dict[str, str]:
    return {
        **LOBBY_ENV,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis.url,
        "REDIS_PREFIX": f"lobby-{uuid.uuid4().hex}",
    }


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory, redis: RedisServer) -> Iterator[Two]:
    tmp = tmp_path_factory.mktemp("lobby")
    with pg_database("ginrummy_lobby", "synchronous_commit = off") as database_url:
        env = _env(database_url, redis)
        apps = [start_app(tmp, env)]
        apps.append(start_app(tmp, {**env, "MIGRATE_ON_START": "false"}))
        nginx = start_nginx(tmp, [a.port for a in apps])
        try:
            yield Two(database_url, apps, nginx)
        finally:
            nginx.stop()
            for app in apps:
                app.stop()


async def _tables_of(conn: asyncpg.Connection, *players: Player) -> list[str]:
    rows = await conn.fetch(
        "SELECT DISTINCT table_id FROM seats WHERE player_id = ANY($1::text[])",
        [p.id for p in players],
    )
    return [r["table_id"] for r in rows]


async def test_seekers_on_two_processes_are_paired_once(two: Two) -> None:
    a, b = two.apps
    async with (
        httpx.AsyncClient(base_url=a.url, timeout=30) as on_a,
        httpx.AsyncClient(base_url=b.url, timeout=30) as on_b,
    ):
        ada, bo = await new_player(on_a, "Ada"), await new_player(on_b, "Bo")
        async with (
            socket(a.url, ada) as ada_ws,
            socket(b.url, bo) as bo_ws,
            socket(b.url, None, "/v1/lobby/ws") as lobby_b,
        ):
            first = await post_seek(on_a, ada, **LIVE)
            added = await message(lobby_b, "seek_added")  # posted on A, told on B
            assert added["seek"]["seek_id"] == first["seek_id"]
            second = await post_seek(on_b, bo, **LIVE)
            told = await asyncio.gather(
                message(ada_ws, "seek_paired"), message(bo_ws, "seek_paired")
            )
            removed = {(await message(lobby_b, "seek_removed"))["seek_id"] for _ in range(2)}
        assert removed == {first["seek_id"], second["seek_id"]}
        table_id = told[0]["table_id"]
        assert told[1]["table_id"] == table_id
        for mine, client in ((first, on_b), (second, on_a)):
            assert (await seek(client, mine["seek_id"]))["table_id"] == table_id
    conn = await two.pg()
    try:
        assert await _tables_of(conn, ada, bo) == [table_id]
        assert await conn.fetchval("SELECT status FROM tables WHERE id = $1", table_id) == "playing"
    finally:
        await conn.close()


async def test_racing_acceptors_on_two_processes(two: Two) -> None:
    clients = [httpx.AsyncClient(base_url=app.url, timeout=30) for app in two.apps]
    try:
        owner = await new_player(clients[0], "Owner")
        posted = await post_seek(clients[0], owner, **CORRESPONDENCE, rating_min=4000)
        takers = [await new_player(clients[i % 2]) for i in range(12)]
        path = f"/v1/seeks/{posted['seek_id']}/accept"
        answers = await asyncio.gather(
            *(clients[i % 2].post(path, headers=t.auth) for i, t in enumerate(takers))
        )
    finally:
        for client in clients:
            await client.aclose()
    assert sorted(r.status_code for r in answers) == [200] + [409] * 11
    conn = await two.pg()
    try:
        assert len(await _tables_of(conn, owner, *takers)) == 1
        rows = await conn.fetch(
            "SELECT status, table_id FROM seeks WHERE table_id IS NOT NULL"
            " AND (player_id = $1 OR opponent_id = $1)",
            owner.id,
        )
        assert len(rows) == 2 and len({r["table_id"] for r in rows}) == 1
    finally:
        await conn.close()


async def test_a_crowd_over_two_processes_each_at_one_table(two: Two) -> None:
    """Twenty players of one pool, their sockets and seeks spread over both processes (each
    process pairs what it sees): each is paired once, every table holds two of them."""
    clients = [httpx.AsyncClient(base_url=app.url, timeout=30) for app in two.apps]
    players = [await new_player(clients[i % 2], f"Crowd{i}") for i in range(20)]
    body = {**LIVE, "clock": {"control": "bank", "seconds": 240}}
    try:
        sockets = [socket(two.apps[i % 2].url, p) for i, p in enumerate(players)]
        opened = [await s.__aenter__() for s in sockets]
        try:
            posted = await asyncio.gather(
                *(post_seek(clients[i % 2], p, **body) for i, p in enumerate(players))
            )
            told = await asyncio.gather(*(message(ws, "seek_paired") for ws in opened))
        finally:
            for s in sockets:
                await s.__aexit__(None, None, None)
    finally:
        for client in clients:
            await client.aclose()
    tables = [t["table_id"] for t in told]
    assert sorted(tables.count(t) for t in set(tables)) == [2] * 10
    conn = await two.pg()
    try:
        ids = [s["seek_id"] for s in posted]
        rows = await conn.fetch("SELECT table_id FROM seeks WHERE id = ANY($1::text[])", ids)
        assert sorted(r["table_id"] for r in rows) == sorted(tables)
        seats = await conn.fetch(
            "SELECT player_id, count(*) AS n FROM seats WHERE player_id = ANY($1::text[])"
            " GROUP BY player_id",
            [p.id for p in players],
        )
        assert {r["n"] for r in seats} == {1} and len(seats) == 20
    finally:
        await conn.close()


@pytest.fixture
def own_db() -> Iterator[str]:
    with pg_database("ginrummy_lobby_kill", "synchronous_commit = off") as database_url:
        yield database_url


async def test_kill_9_mid_pairing_leaves_nothing_half_done(
    tmp_path: Path, redis: RedisServer, own_db: str
) -> None:
    """A process is killed inside its pairing transaction (held there by a row lock the test
    takes on a seek the pairing must cancel): the seeks stay open, no table exists, and the
    next process pairs them once."""
    database_url = own_db
    env = _env(database_url, redis)
    doomed = start_app(tmp_path, env)
    conn = await asyncpg.connect(database_url.replace("+asyncpg", ""))
    try:
        async with httpx.AsyncClient(base_url=doomed.url, timeout=30) as http:
            ada, bo = await new_player(http, "Ada"), await new_player(http, "Bo")
            async with socket(doomed.url, ada), socket(doomed.url, bo):
                # Ada's other live seek, in a pool of its own: the pairing cancels it.
                other = await post_seek(http, ada, preset="classic", clock=LIVE["clock"])
                first = await post_seek(http, ada, **LIVE)
                hold = conn.transaction()
                await hold.start()
                await conn.execute("SELECT 1 FROM seeks WHERE id = $1 FOR UPDATE", other["seek_id"])
                second = await post_seek(http, bo, **LIVE)
                watcher = await asyncpg.connect(database_url.replace("+asyncpg", ""))
                try:
                    await until(
                        lambda: watcher.fetchval(
                            "SELECT count(*) FROM pg_stat_activity WHERE"
                            " datname = current_database() AND wait_event_type = 'Lock'"
                            " AND query LIKE 'UPDATE seeks%'"
                        ),
                        what="the pairing to wait for the held row",
                    )
                    doomed.kill()
                    await hold.rollback()

                    async def settled() -> bool:
                        busy = await watcher.fetchval(
                            "SELECT count(*) FROM pg_stat_activity WHERE"
                            " datname = current_database() AND state LIKE 'idle in%'"
                        )
                        return not busy

                    await until(settled, what="the killed process's transaction to end")
                finally:
                    await watcher.close()
        ids = [first["seek_id"], second["seek_id"], other["seek_id"]]
        rows = await conn.fetch(
            "SELECT status, table_id FROM seeks WHERE id = ANY($1::text[])", ids
        )
        assert [(r["status"], r["table_id"]) for r in rows] == [("open", None)] * 3
        assert await _tables_of(conn, ada, bo) == []
        # The next process (the owners back on its sockets) pairs them, once.
        heir = spawn_app(tmp_path, {**env, "MIGRATE_ON_START": "false"})
        heir.ready()
        try:
            async with httpx.AsyncClient(base_url=heir.url, timeout=30) as http:

                async def paired() -> str | None:
                    found: str | None = (await seek(http, first["seek_id"]))["table_id"]
                    return found

                async with socket(heir.url, ada), socket(heir.url, bo):
                    table_id = await until(paired, what="the heir to pair the seeks")
                for mine in (first, second):
                    assert (await seek(http, mine["seek_id"]))["table_id"] == table_id
                assert (await seek(http, other["seek_id"]))["reason"] == "paired_elsewhere"
            assert await _tables_of(conn, ada, bo) == [table_id]
        finally:
            heir.stop()
    finally:
        await conn.close()
        doomed.stop()
