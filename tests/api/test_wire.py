"""Shared frames written straight to the transport (``app/api/live/wire.py``): real server, sockets.

The other socket tests (``test_live.py``, ``test_audience.py``) run on the same wire: the test
server serves without per-message deflate, as ``python -m app`` does, and their clients then
negotiate no extension. Here: the frame's bytes are the ones any WebSocket parser reads back,
hold nothing a spectator may not see, and a socket on the wire and one the ASGI way (per-message
deflate negotiated: no wire) receive exactly the same messages, every seq once and in order,
each counted by the access log.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from app.api.live.frames import Frames
from app.api.live.socket import Socket
from app.api.live.wire import frame
from app.engine import Event
from app.table.model import StoredEvent
from tests.api.conftest import Server, start_server
from tests.api.helpers import seated_table, step
from tests.api.test_live import Recorder, listen, log_of, ws_url
from tests.waiting import until

SEQUENCED = ("view", "event", "skip")


def parse(data: bytes) -> Frame:
    """``data`` read back by the websockets library's own frame parser (a client: unmasked)."""
    reader = StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        parsed: Frame = done.value
        assert reader.at_eof()  # the frame is all of ``data``
        return parsed
    raise AssertionError("incomplete frame")


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 70000])
def test_a_frame_is_one_final_unmasked_text_frame_of_the_message(size: int) -> None:
    message = "é" * (size // 2) + "x" * (size % 2)  # multi-byte UTF-8: the length is in bytes
    parsed = parse(frame(message))
    assert (parsed.opcode, parsed.fin, parsed.rsv1) == (Opcode.TEXT, True, False)
    assert bytes(parsed.data).decode() == message


def test_a_spectators_shared_frame_bytes_hold_nothing_hidden() -> None:
    hands = {0: {"hand": ["AS", "2S", "3S"]}, 1: {"hand": ["KD", "QD", "JD"]}}
    dealt = StoredEvent("t", 5, 1, 1, Event("hand_started", {"upcard": "9C"}, hands))
    shared = frame(Frames().event(dealt, None))
    assert json.loads(bytes(parse(shared).data)) == {
        "type": "event",
        "seq": 5,
        "event": {"type": "hand_started", "upcard": "9C"},
    }
    for private in hands.values():
        assert not [card for card in private["hand"] if card.encode() in shared]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """Per-message deflate on offer: a client that takes it is served the ASGI way."""
    database = f"sqlite+aiosqlite:///{tmp_path / 'wire.db'}"
    running = start_server(database, deflate=True, ws_heartbeat=0)
    yield running
    running.stop()


def _sockets(path: str) -> list[Socket]:
    """The live ``Socket`` objects of the table at ``path`` in this process (another test's
    sockets may not be collected yet: they are on other tables)."""
    return [o for o in gc.get_objects() if type(o) is Socket and o.websocket.scope["path"] == path]


def _sent(route: str) -> float:
    value = REGISTRY.get_sample_value(
        "ginrummy_websocket_messages_total", {"route": route, "direction": "out"}
    )
    return value or 0.0


@pytest.mark.parametrize("park", [False, True])
async def test_a_socket_on_the_wire_gets_exactly_the_events_in_order(
    tmp_path: Path, park: bool
) -> None:
    """With parking (``app.api.live.parking``) the plain spectator is served below ASGI once idle,
    on the wire too; without, its ``Socket`` writes the shared frames."""
    database = f"sqlite+aiosqlite:///{tmp_path / 'wire.db'}"
    server = start_server(database, deflate=True, ws_heartbeat=0, ws_park_spectators=park)
    try:
        await _on_the_wire(server, park)
    finally:
        server.stop()


async def _on_the_wire(server: Server, park: bool) -> None:
    route = "/v1/tables/{table_id}/ws"
    app: Any = server.uvicorn.config.app
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        table_id, players = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        before = _sent(route)
        async with (
            connect(ws_url(server, path), proxy=None, compression=None) as plain_ws,
            connect(ws_url(server, path), proxy=None) as deflating,
            listen(server, path, players[1]) as seat1,
        ):
            plain, deflated = Recorder(plain_ws), Recorder(deflating)
            start = (await plain.first("view"))["seq"]
            await deflated.first("view")
            await seat1.first("view")
            # Deflate (the default client's): the ASGI way.
            wires = sorted(s._wire is not None for s in _sockets(path))
            parked = getattr(app.state, "parking", None)
            if park:
                assert wires == [False, False]
                assert parked is not None
                await until(
                    lambda: [p.tenant.member.feed.table_id for p in parked.sockets] == [table_id]
                )
            else:
                assert wires == [False, False, True]
                assert parked is None
            view = None
            for _ in range(40):
                view = (await step(client, table_id, players, view))["table"]
            assert view is not None
            for rec in (plain, deflated, seat1):
                await rec.reach(view["seq"])
            log = await log_of(client, table_id, None)
            sequenced = [m for m in plain.messages if m["type"] in SEQUENCED]
            assert sequenced == [m for m in deflated.messages if m["type"] in SEQUENCED]
            assert [m["seq"] for m in sequenced] == list(range(start, view["seq"] + 1))
            expected = [{"type": "event", "seq": e["seq"], "event": e} for e in log]
            for message in expected:
                del message["event"]["seq"]
            events = [m for m in plain.messages if m["type"] == "event"]
            assert events == [m for m in expected if m["seq"] > start]
            sent = sum(len(rec.messages) for rec in (plain, deflated, seat1))
        assert _sent(route) - before >= sent  # the wire's writes are counted as any other


async def test_a_fresh_view_for_every_socket_is_framed_once_per_audience(server: Server) -> None:
    """A resync of the feed's members (as for members it finds stale): each socket gets its
    audience's ``view``, written on the wire or the ASGI way, then the events after it."""
    app: Any = server.uvicorn.config.app
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        table_id, players = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        async with (
            connect(ws_url(server, path), proxy=None, compression=None) as plain_ws,
            connect(ws_url(server, path), proxy=None) as deflating,
            listen(server, path, players[0]) as seat0,
        ):
            plain, deflated = Recorder(plain_ws), Recorder(deflating)
            for rec in (plain, deflated, seat0):
                await rec.first("view")
            view = (await step(client, table_id, players))["table"]
            for rec in (plain, deflated, seat0):
                await rec.reach(view["seq"])
            feed = app.state.feeds.feed_of(table_id)
            members = [m for audience in feed.audiences.values() for m in audience]
            assert len(members) == 3
            resync = asyncio.run_coroutine_threadsafe(feed.resync(members), feed.task.get_loop())
            await asyncio.wrap_future(resync)
            for rec in (plain, deflated, seat0):
                await rec.count("view", 2)
            fresh = [rec.of_type("view")[1] for rec in (plain, deflated, seat0)]
            assert fresh[0] == fresh[1] and fresh[0]["seq"] == view["seq"]
            assert fresh[2] != fresh[0]  # the seat's own view: its hand
            for _ in range(5):
                view = (await step(client, table_id, players, view))["table"]
            for rec in (plain, deflated, seat0):
                await rec.reach(view["seq"])
                sequenced = [m for m in rec.messages if m["type"] in SEQUENCED]
                views = [i for i, m in enumerate(sequenced) if m["type"] == "view"]
                tail = [m["seq"] for m in sequenced[views[1] :]]  # from the fresh view on
                assert tail == list(range(fresh[0]["seq"], view["seq"] + 1))
