"""Chat: the two seats talk to each other; spectators see neither the lines nor may they speak.

Checked over HTTP (the command's response, ``/events``) and over WebSockets, for a seat, an
authenticated spectator and an anonymous one.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests.api.conftest import Server
from tests.api.helpers import JSON, get_table, new_player, seated_table, strings_in

SECRET = "let us play fast"


async def _until_seq(ws: ClientConnection, seq: int) -> list[JSON]:
    """Every message up to and including the one numbered ``seq``."""
    got: list[JSON] = []
    async with asyncio.timeout(20):
        while not got or got[-1].get("seq") != seq:
            got.append(json.loads(await ws.recv()))
    return got


async def test_seats_chat_and_spectators_get_a_skip(
    server: Server, client: httpx.AsyncClient
) -> None:
    table_id, (p0, p1) = await seated_table(client)
    stranger = await new_player(client)
    before = (await get_table(client, table_id, p0))["seq"]
    ws = server.url.replace("http", "ws") + f"/v1/tables/{table_id}/ws"
    async with AsyncExitStack() as stack:
        seat1 = await stack.enter_async_context(connect(f"{ws}?token={p1.token}"))
        watcher = await stack.enter_async_context(connect(f"{ws}?token={stranger.token}"))
        anonymous = await stack.enter_async_context(connect(ws))
        for socket in (seat1, watcher, anonymous):
            assert json.loads(await socket.recv())["type"] == "view"

        r = await client.post(f"/v1/tables/{table_id}/chat", headers=p0.auth, json={"text": SECRET})
        assert r.status_code == 200, r.text
        [line] = r.json()["events"]
        seq = before + 1
        assert line == {
            "seq": seq,
            "type": "chat",
            "seat": 0,
            "player": {"id": p0.id, "name": p0.name},
            "text": SECRET,
        }

        heard = (await _until_seq(seat1, seq))[-1]
        assert heard == {
            "type": "event",
            "seq": seq,
            "event": {k: v for k, v in line.items() if k != "seq"},
        }
        for socket in (watcher, anonymous):
            received = await _until_seq(socket, seq)
            assert received[-1] == {"type": "skip", "seq": seq}
            assert SECRET not in set(strings_in(received))

    for who in (p0, p1):
        r = await client.get(f"/v1/tables/{table_id}/events?since={before}", headers=who.auth)
        assert r.json() == [line]
    for headers in (stranger.auth, {}):
        r = await client.get(f"/v1/tables/{table_id}/events?since={before}", headers=headers)
        assert r.json() == [{"seq": seq, "type": "skip"}]


async def test_only_a_seat_may_speak(client: httpx.AsyncClient) -> None:
    table_id, (p0, _) = await seated_table(client)
    stranger = await new_player(client)
    before = await get_table(client, table_id, p0)
    r = await client.post(f"/v1/tables/{table_id}/chat", headers=stranger.auth, json={"text": "hi"})
    assert r.status_code == 403 and r.json()["code"] == "not_seated", r.text
    r = await client.post(f"/v1/tables/{table_id}/chat", json={"text": "hi"})
    assert r.status_code == 401 and r.json()["code"] == "unauthorized"
    assert await get_table(client, table_id, p0) == before
