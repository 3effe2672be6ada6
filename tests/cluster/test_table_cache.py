"""Two real ``python -m app`` processes on one PostgreSQL database and one Redis: a table whose
players move through different processes. Each process's table cache takes the other's
commits from the bus, so no move loads the table, and a read through either process sees every
move at once."""

from __future__ import annotations

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect

from tests.api.helpers import choose, mover, seated_table
from tests.cluster.conftest import App, table_loads


async def heard(ws: ClientConnection, seq: int) -> None:
    """Read a spectator's table socket until it has the event ``seq``."""
    while True:
        message = orjson.loads(await ws.recv())
        if message.get("seq", 0) >= seq and message["type"] in ("event", "view", "heartbeat"):
            return


async def test_moves_alternating_processes_load_nothing_and_reads_see_them_at_once(
    two: list[App],
) -> None:
    clients = [httpx.AsyncClient(base_url=app.url, timeout=30) for app in two]
    try:
        # Created, joined and started through process 0; then each move through the other
        # process than the one before.
        table_id, players = await seated_table(clients[0])
        r = await clients[1].get(f"/v1/tables/{table_id}", headers=players[0].auth)
        view = r.json()
        path = f"/v1/tables/{table_id}/ws"
        sockets = [
            await connect(app.url.replace("http://", "ws://", 1) + path, proxy=None) for app in two
        ]
        before = [table_loads((await c.get("/metrics")).text) for c in clients]
        for n in range(30):
            here, there = clients[n % 2], clients[1 - n % 2]
            seat = mover(view)
            if view["you"] != seat:
                r = await here.get(f"/v1/tables/{table_id}", headers=players[seat].auth)
                view = r.json()
            path, body = choose(view)
            r = await here.post(
                f"/v1/tables/{table_id}/{path}", json=body, headers=players[seat].auth
            )
            assert r.status_code == 200, r.text
            view = r.json()["table"]
            # The other process answers with the table as this move left it, at once.
            seen = await there.get(f"/v1/tables/{table_id}", headers=players[seat].auth)
            assert seen.json() == {"invite_code": None, "invite_url": None, **view}
            # Move through the other process once it heard of this move (as a player's
            # socket would tell them): the commit is in its cache by then.
            await heard(sockets[1 - n % 2], view["seq"])
        for ws in sockets:
            await ws.close()
        after = [table_loads((await c.get("/metrics")).text) for c in clients]
    finally:
        for client in clients:
            await client.aclose()
    # A move decided on a table another process moved last would have been refused by the
    # version guard and counted as "stale"; none was: the bus brought every commit.
    for old, new in zip(before, after, strict=True):
        assert new.get("stale", 0) == old.get("stale", 0), (old, new)
        assert new.get("uncached", 0) - old.get("uncached", 0) <= 1, (old, new)
