"""The cap on a player's open tables (``MAX_OPEN_TABLES``) follows each table's life: a table
counts while it waits or is played, stops counting once finished, and counts again when a
rematch opens it; its seats say so (``seats.table_open``, what the count is found by)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import sqlalchemy as sa

from app.store import Database
from app.store.tables import SEATS
from tests.api.conftest import client_of
from tests.api.helpers import Player, new_player, new_table, rematch, step


@pytest.fixture
def url(module_db: str) -> str:
    return module_db


@pytest.fixture
async def capped(url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A server where a player may sit at two open tables when creating another."""
    async with client_of(url, max_open_tables=2) as http:
        yield http


async def _create(http: httpx.AsyncClient, player: Player) -> httpx.Response:
    return await http.post("/v1/tables", json={}, headers=player.auth)


async def _open_seats(url: str, table_id: str) -> list[bool]:
    db = Database(url)
    try:
        async with db.read() as session:
            query = sa.select(SEATS.c.table_open).where(SEATS.c.table_id == table_id)
            return [bool(v) for v in (await session.execute(query)).scalars()]
    finally:
        await db.close()


async def test_a_table_counts_until_it_finishes_and_again_after_a_rematch(
    capped: httpx.AsyncClient, url: str
) -> None:
    ada, bo = await new_player(capped, "Ada"), await new_player(capped, "Bo")
    first = await new_table(capped, ada)
    await new_table(capped, ada)
    refused = await _create(capped, ada)
    assert refused.status_code == 409 and refused.json()["code"] == "too_many_open_tables"

    table_id = first["table_id"]
    r = await capped.post(f"/v1/invites/{first['invite_code']}", headers=bo.auth)
    assert r.status_code == 200, r.text
    r = await capped.post(f"/v1/tables/{table_id}/start", headers=ada.auth)
    assert r.status_code == 200, r.text
    assert await _open_seats(url, table_id) == [True, True]
    for _ in range(2):
        await step(capped, table_id, [ada, bo])
    r = await capped.post(f"/v1/tables/{table_id}/resign", headers=bo.auth)
    assert r.status_code == 200, r.text
    assert await _open_seats(url, table_id) == [False, False]
    assert (await _create(capped, ada)).status_code == 201

    await rematch(capped, table_id, ada, bo)
    assert await _open_seats(url, table_id) == [True, True]
    refused = await _create(capped, ada)
    assert refused.status_code == 409 and refused.json()["code"] == "too_many_open_tables"
    assert (await _create(capped, bo)).status_code == 201
    assert (await _create(capped, bo)).status_code == 409
