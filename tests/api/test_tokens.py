"""A player's tokens: list, issue, rotate, revoke, expire; and the migration that keeps the
tokens issued before it working."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import sqlalchemy as sa
from fastapi import FastAPI

from alembic import command
from app.store import Database, run_migrations
from app.store.migrate import alembic_config
from tests.api.conftest import start_server
from tests.api.helpers import Player, get_table, new_player, seated_table


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_list_issue_rotate_and_revoke(client: httpx.AsyncClient) -> None:
    p = await new_player(client)
    r = await client.get("/v1/players/me/tokens", headers=p.auth)
    assert r.status_code == 200, r.text
    [first] = r.json()
    assert set(first) == {"id", "label", "created_at", "last_used_at", "expires_at"}
    assert first["last_used_at"] is not None and first["expires_at"] is None
    assert p.token not in r.text

    r = await client.post("/v1/players/me/tokens", json={"label": "phone"}, headers=p.auth)
    assert r.status_code == 201, r.text
    phone = r.json()
    assert phone["label"] == "phone" and phone["token"] != p.token
    r = await client.get("/v1/players/me", headers=_auth(phone["token"]))
    assert r.status_code == 200 and r.json()["id"] == p.id

    r = await client.post("/v1/players/me/tokens/rotate", headers=p.auth)
    assert r.status_code == 201, r.text
    rotated = r.json()["token"]
    r = await client.get("/v1/players/me", headers=p.auth)
    assert r.status_code == 401 and r.json()["code"] == "unauthorized"
    assert (await client.get("/v1/players/me", headers=_auth(rotated))).json()["id"] == p.id
    ids = {
        t["id"] for t in (await client.get("/v1/players/me/tokens", headers=_auth(rotated))).json()
    }
    assert first["id"] not in ids and phone["id"] in ids and len(ids) == 2

    r = await client.delete(f"/v1/players/me/tokens/{phone['id']}", headers=_auth(rotated))
    assert r.status_code == 200, r.text
    assert (await client.get("/v1/players/me", headers=_auth(phone["token"]))).status_code == 401
    r = await client.delete(f"/v1/players/me/tokens/{phone['id']}", headers=_auth(rotated))
    assert r.status_code == 404 and r.json()["code"] == "token_not_found"


async def test_a_token_revokes_none_of_another_players(client: httpx.AsyncClient) -> None:
    a, b = await new_player(client), await new_player(client)
    [b_token] = (await client.get("/v1/players/me/tokens", headers=b.auth)).json()
    r = await client.delete(f"/v1/players/me/tokens/{b_token['id']}", headers=a.auth)
    assert r.status_code == 404
    assert (await client.get("/v1/players/me", headers=b.auth)).status_code == 200


async def test_rotating_keeps_seats_and_history(client: httpx.AsyncClient) -> None:
    table_id, (p0, p1) = await seated_table(client)
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=p1.auth)
    assert r.status_code == 200, r.text
    r = await client.post("/v1/players/me/tokens/rotate", headers=p0.auth)
    fresh = Player(p0.id, p0.name, r.json()["token"])
    view = await get_table(client, table_id, fresh)
    assert view["you"] == 0
    r = await client.get("/v1/players/me/matches", headers=fresh.auth)
    assert [m["table_id"] for m in r.json()] == [table_id]


def test_an_expired_token_is_refused(tmp_path: Path) -> None:
    # A lifetime of about a second: issued, used, then refused once it has passed.
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
        token_lifetime_days=1.5 / 86400,
        token_cache_seconds=60.0,
    )
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            r = http.post("/v1/players", json={"name": "Ada"})
            token = r.json()["token"]
            [row] = http.get("/v1/players/me/tokens", headers=_auth(token)).json()
            assert row["expires_at"] is not None
            deadline = time.monotonic() + 30
            while (r := http.get("/v1/players/me", headers=_auth(token))).status_code == 200:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert r.status_code == 401 and r.json()["code"] == "token_expired"
    finally:
        server.stop()


def test_an_unknown_token_repeated_costs_one_statement(tmp_path: Path) -> None:
    """A refusal is remembered (before: two reads per request, 40 for these 20)."""
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}")
    statements: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if "tokens" in statement:
            statements.append(statement)

    try:
        app = server.uvicorn.config.app
        assert isinstance(app, FastAPI)
        db: Database = app.state.db
        writer = db._writer
        assert writer is not None
        engines = [db.engine.sync_engine, writer._inline, writer._waiting]
        for engine in engines:
            sa.event.listen(engine, "before_cursor_execute", count)
        with httpx.Client(base_url=server.url, timeout=30) as http:
            for _ in range(20):
                r = http.get("/v1/players/me", headers=_auth("not-a-token"))
                assert (r.status_code, r.json()["code"]) == (401, "unauthorized")
            assert len(statements) == 1, statements
            # A token issued after the refusals works at once.
            token = http.post("/v1/players", json={"name": "Ada"}).json()["token"]
            assert http.get("/v1/players/me", headers=_auth(token)).status_code == 200
        for engine in engines:
            sa.event.remove(engine, "before_cursor_execute", count)
    finally:
        server.stop()


async def test_the_migration_keeps_tokens_issued_before_it(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.sqlite'}"
    db = Database(url)
    try:
        async with db.engine.begin() as conn:
            await conn.run_sync(lambda c: _upgrade(c, url, "0004_ratings"))
        digest = "ab" * 32
        player_id = uuid.uuid4().hex
        async with db.write() as session:
            await session.execute(
                sa.text(
                    "INSERT INTO players (id, name, token_hash, created_at) "
                    "VALUES (:id, 'Old', :h, CURRENT_TIMESTAMP)"
                ),
                {"id": player_id, "h": digest},
            )
        await run_migrations(db)
        async with db.read() as session:
            rows = (
                await session.execute(sa.text("SELECT player_id, token_hash FROM tokens"))
            ).all()
        assert [tuple(r) for r in rows] == [(player_id, digest)]
    finally:
        await db.close()


def _upgrade(conn: sa.Connection, url: str, revision: str) -> None:
    config = alembic_config(url)
    config.attributes["connection"] = conn
    command.upgrade(config, revision)
