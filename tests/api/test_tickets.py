"""Socket tickets: one socket each, within their lifetime; a reused or expired one is refused
with ``invalid_ticket`` and close code 4401; kept in process, or in Redis."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, new_player, seated_table


def _ws(server: Server, path: str) -> str:
    return server.url.replace("http", "ws", 1) + path


async def _ticket(client: httpx.AsyncClient, auth: dict[str, str]) -> str:
    r = await client.post("/v1/ws-tickets", headers=auth)
    assert r.status_code == 201, r.text
    ticket: str = r.json()["ticket"]
    return ticket


async def _first(server: Server, path: str) -> tuple[JSON, int | None]:
    """The first message on a new socket at ``path``, and its close code if it closed."""
    async with connect(_ws(server, path)) as ws:
        first: JSON = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if first.get("type") == "error":
            await asyncio.wait_for(ws.wait_closed(), 30)
        return first, ws.close_code


@pytest.fixture(scope="module", params=["memory", "redis"])
def ticket_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("tickets") / "db.sqlite"
    redis = {}
    if request.param == "redis":
        redis = {"redis_url": "redis://127.0.0.1:6379/0", "redis_prefix": f"t-{uuid.uuid4().hex}"}
    server = start_server(
        f"sqlite+aiosqlite:///{db}", ws_ticket_seconds=1.0, ws_heartbeat=0.5, **redis
    )
    yield server
    server.stop()


async def test_a_ticket_opens_one_socket_once(ticket_server: Server) -> None:
    async with httpx.AsyncClient(base_url=ticket_server.url, timeout=30) as client:
        table_id, (p0, _) = await seated_table(client)
        ticket = await _ticket(client, p0.auth)
        first, code = await _first(ticket_server, f"/v1/tables/{table_id}/ws?ticket={ticket}")
        assert first["type"] == "view" and first["table"]["you"] == 0 and code is None
        first, code = await _first(ticket_server, f"/v1/tables/{table_id}/ws?ticket={ticket}")
        assert first["code"] == "invalid_ticket" and code == 4401

        ticket = await _ticket(client, p0.auth)
        first, code = await _first(ticket_server, f"/v1/players/me/ws?ticket={ticket}")
        assert first["type"] != "error" and code is None
        first, code = await _first(ticket_server, f"/v1/players/me/ws?ticket={ticket}")
        assert first["code"] == "invalid_ticket" and code == 4401


async def test_an_expired_or_unknown_ticket_is_refused(ticket_server: Server) -> None:
    async with httpx.AsyncClient(base_url=ticket_server.url, timeout=30) as client:
        player = await new_player(client)
        ticket = await _ticket(client, player.auth)
        await asyncio.sleep(1.5)
        for t in (ticket, "made-up"):
            first, code = await _first(ticket_server, f"/v1/players/me/ws?ticket={t}")
            assert first["code"] == "invalid_ticket" and code == 4401
        r = await client.post("/v1/ws-tickets")
        assert r.status_code == 401
