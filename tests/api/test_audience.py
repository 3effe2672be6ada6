"""A big audience on one table: hundreds of real spectator sockets, a few that stop reading.

A slow spectator must cost the others nothing: each socket has its own bounded outbox and
writer, and the pipeline never waits for a socket (``app/api/live/socket.py``). The 4008 close
of a socket whose outbox stays full is tested in ``test_live.py``: reaching it takes megabytes
unread per socket (Linux grows a socket's send buffer up to 4 MB), too slow for hundreds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.api.conftest import start_server
from tests.api.helpers import JSON, get_table, seated_table, step
from tests.api.test_live import ws_url
from tests.waiting import until

READERS = 200
SLOW = 20
MOVES = 30


class Spectator:
    """A spectator that reads everything and keeps the seqs of its view, events and skips."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seqs: list[int] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message["type"] in ("view", "event", "skip"):
                    self.seqs.append(message["seq"])
        except ConnectionClosed:
            pass


async def test_spectators_that_stop_reading_cost_the_others_nothing(tmp_path: Path) -> None:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'audience.db'}",
        ws_send_queue=8,
        ws_heartbeat=0,
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            table_id, players = await seated_table(client, rules={"target": 500})
            path = f"/v1/tables/{table_id}/ws"
            readers = [
                Spectator(await connect(ws_url(server, path), proxy=None)) for _ in range(READERS)
            ]
            head = (await get_table(client, table_id, None))["seq"]
            await until(lambda: all(r.seqs for r in readers), timeout=60)
            # Spectators that stop reading: the server's sends to them back up.
            stalled = [
                await connect(ws_url(server, path), proxy=None, max_queue=1) for _ in range(SLOW)
            ]
            for ws in stalled:
                ws.transport.pause_reading()
            view: JSON | None = None
            for _ in range(MOVES):  # the players move while the stalled ones hold nothing up
                view = (await step(client, table_id, players, view))["table"]
            assert view is not None
            last = view["seq"]
            await until(lambda: all(r.seqs[-1] >= last for r in readers), timeout=120)
            for r in readers:
                assert r.seqs == list(range(head, view["seq"] + 1))  # the view, then every event
                assert not r.task.done()  # still connected
                await r.ws.close()
            # The stalled ones, once they read again, lose nothing either.
            for ws in stalled:
                ws.transport.resume_reading()
                seqs: list[int] = []
                async with asyncio.timeout(60):
                    while not seqs or seqs[-1] < view["seq"]:
                        message = json.loads(await ws.recv())
                        if message["type"] in ("view", "event", "skip"):
                            seqs.append(message["seq"])
                assert seqs == list(range(head, view["seq"] + 1))
                await ws.close()
    finally:
        server.stop()
