"""Idle sockets served below ASGI (``app/api/live/parking.py``): real server, real sockets.

A spectator's socket, once live and idle, and a player's socket (``/v1/players/me/ws``), once
accepted, are handed from uvicorn's protocol and the ASGI call to a ``Parked`` protocol of ours.
A spectator must still get every seq once and in order, a player each notification in order
and its heartbeats; both answer what the client may send as the ASGI way does, keep the
keepalive, the 4008 close of a client that does not read, the server's 1012 at shutdown, and
their metrics at their close.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from app.api.live.backpressure import SEND_GRACE
from app.api.live.parking import Parked
from app.api.live.player import Waiting
from app.api.live.session import Watching
from app.api.live.socket import Socket
from tests.api.conftest import Server, start_server
from tests.api.helpers import get_table, new_player, new_table, seated_table, step
from tests.api.test_live import (
    CLOSE_4008,
    MESSAGES,
    SERVER_SNDBUF,
    TRANSPORT_HIGH,
    Recorder,
    _client_frame,
    _server_frames,
    _slow_consumers,
    listen,
    ws_url,
)
from tests.waiting import until

ROUTE = "/v1/tables/{table_id}/ws"
SEQUENCED = ("view", "event", "skip")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(f"sqlite+aiosqlite:///{tmp_path / 'parking.db'}", ws_heartbeat=0)
    yield running
    running.stop()


def _parked(server: Server, table_id: str) -> list[Parked]:
    app: Any = server.uvicorn.config.app
    parking = getattr(app.state, "parking", None)
    if parking is None:
        return []
    return [
        p
        for p in list(parking.sockets)
        if isinstance(p.tenant, Watching)
        and p.tenant.member.feed is not None
        and p.tenant.member.feed.table_id == table_id
    ]


async def _until_parked(server: Server, table_id: str, count: int) -> list[Parked]:
    await until(lambda: len(_parked(server, table_id)) >= count, timeout=10, every=0.01)
    return _parked(server, table_id)


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_parked_spectator_gets_every_seq_and_answers_as_through_asgi(
    server: Server,
) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        table_id, players = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        open_before = _sample("ginrummy_websockets_open", route=ROUTE)
        closed_before = _sample("ginrummy_websocket_sessions_total", route=ROUTE, code="1000")
        async with (
            connect(ws_url(server, path), proxy=None) as ws,
            listen(server, path, players[0]) as seat0,
        ):
            rec = Recorder(ws)
            start = (await rec.first("view"))["seq"]
            await seat0.first("view")
            await _until_parked(server, table_id, 1)
            await asyncio.sleep(0.1)
            assert len(_parked(server, table_id)) == 1  # a player's socket is not parked
            gc.collect()  # the spectator's ASGI call returned: its Socket went with it
            sockets = [o for o in gc.get_objects() if type(o) is Socket]
            assert [s.websocket.scope["path"] for s in sockets].count(path) == 1  # the seat's
            assert _sample("ginrummy_websockets_open", route=ROUTE) == open_before + 2
            await ws.send(json.dumps({"type": "ping", "id": "p1"}))
            await ws.send(json.dumps({"type": "move", "kind": "draw_stock", "id": "m1"}))
            await ws.send("not json")
            await rec.count("error", 2)
            assert rec.of_type("pong") == [{"type": "pong", "id": "p1"}]
            move, bad = rec.of_type("error")
            assert (move["code"], move["id"]) == ("unauthorized", "m1")
            assert bad["code"] == "invalid_message"
            view = None
            for _ in range(30):
                view = (await step(client, table_id, players, view))["table"]
            assert view is not None
            await rec.reach(view["seq"])
            sequenced = [m["seq"] for m in rec.messages if m["type"] in SEQUENCED]
            assert sequenced == list(range(start, view["seq"] + 1))
        app: Any = server.uvicorn.config.app
        await until(  # the member left the feed, the session ended
            lambda: (
                app.state.feeds.feed_of(table_id) is None
                and _sample("ginrummy_websockets_open", route=ROUTE) == open_before
            ),
            timeout=10,
        )
        closed = _sample("ginrummy_websocket_sessions_total", route=ROUTE, code="1000")
        assert closed == closed_before + 2  # the seat's and the parked spectator's
        # The table is still served to a new spectator.
        async with connect(ws_url(server, path), proxy=None) as ws:
            rec = Recorder(ws)
            assert (await rec.first("view"))["seq"] == (await get_table(client, table_id, None))[
                "seq"
            ]


async def test_with_parking_off_a_spectator_stays_an_asgi_session(tmp_path: Path) -> None:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'off.db'}", ws_heartbeat=0, ws_park_spectators=False
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, _ = await seated_table(client, rules={"target": 500})
            path = f"/v1/tables/{table_id}/ws"
            async with connect(ws_url(server, path), proxy=None) as ws:
                await Recorder(ws).first("view")
                await asyncio.sleep(0.2)
                assert _parked(server, table_id) == []
    finally:
        server.stop()


async def _raw_spectator(
    server: Server, path: str
) -> tuple[socket.socket, asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """A spectator's connection by hand: (socket, reader, writer, the upgrade's answer)."""
    port = server.settings.port
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=raw)
    writer.write(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    assert head.startswith(b"HTTP/1.1 101")
    return raw, reader, writer, head


async def test_a_parked_spectator_that_stops_reading_is_closed_4008_after_what_was_queued(
    tmp_path: Path,
) -> None:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'slow.db'}",
        ws_send_queue=8,
        ws_heartbeat=0,
        rate_limit_socket="",  # every message answered: the outbox fills at once
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, _ = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        raw, reader, writer, head = await _raw_spectator(server, path)
        (parked,) = await _until_parked(server, table_id, 1)
        app: Any = server.uvicorn.config.app
        loop = app.state.feeds.feed_of(table_id).task.get_loop()
        shrunk: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        here = asyncio.get_running_loop()

        def shrink() -> None:
            transport = parked.transport
            transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, SERVER_SNDBUF
            )
            transport.set_write_buffer_limits(high=TRANSPORT_HIGH)
            here.call_soon_threadsafe(shrunk.set_result, None)

        loop.call_soon_threadsafe(shrink)
        await asyncio.wait_for(shrunk, 10)
        bad = _client_frame(json.dumps({"type": "move", "kind": "x"}))
        slow_before = _slow_consumers()
        chunks: list[bytes] = [head]
        async with asyncio.timeout(120):
            for _ in range(MESSAGES // 100):
                writer.write(bad * 100)
                await writer.drain()
            # Still not reading when the grace runs out (SEND_GRACE after the queue filled).
            await until(lambda: _slow_consumers() > slow_before, timeout=SEND_GRACE + 60)
            while CLOSE_4008 not in b"".join(chunks[-2:]):
                chunk = await reader.read(65536)
                assert chunk, "the server hung up without the 4008 close frame"
                chunks.append(chunk)
        writer.close()
        raw.close()
        assert _slow_consumers() == slow_before + 1
        data = b"".join(chunks)
        frames = list(_server_frames(data[data.index(b"\r\n\r\n") + 4 :]))
        texts = [json.loads(p)["type"] for op, p in frames if op == 0x1]
        assert texts[0] == "view" and "error" in texts
        assert len(texts) < MESSAGES  # bounded
        assert [p for op, p in frames if op == 0x8] == [CLOSE_4008]
        assert frames[-1] == (0x8, CLOSE_4008)  # nothing after it
    finally:
        server.stop()


async def test_one_keepalive_for_parked_sockets_closes_those_that_do_not_answer(
    tmp_path: Path,
) -> None:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'keepalive.db'}",
        ws_heartbeat=0,
        ws_ping_interval=0.3,
        ws_ping_timeout=0.3,
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, _ = await seated_table(client, rules={"target": 500})
            player = await new_player(client, "Cy")
        path = f"/v1/tables/{table_id}/ws"
        mine = f"{PLAYER_ROUTE}?token={player.token}"
        # The library's client answers pings (and pings the server too, which must answer).
        async with (
            connect(ws_url(server, path), proxy=None, ping_interval=0.2) as answering,
            connect(ws_url(server, mine), proxy=None, ping_interval=0.2) as answering_player,
        ):
            rec, player_rec = Recorder(answering), Recorder(answering_player)
            await rec.first("view")
            raw, reader, writer, _ = await _raw_spectator(server, path)
            raw_player, player_reader, player_writer, _ = await _raw_spectator(server, mine)
            await _until_parked(server, table_id, 2)
            await _until_players_parked(server, 2)
            started = time.monotonic()
            for read, first in ((reader, [0x1, 0x9]), (player_reader, [0x9])):
                data = b""
                async with asyncio.timeout(10):
                    while not any(op == 0x8 for op, _ in _server_frames(data)):
                        chunk = await read.read(65536)
                        assert chunk, "closed without a close frame"
                        data += chunk
                frames = list(_server_frames(data))
                # A spectator's view, then a ping; a player's ping.
                assert [op for op, _ in frames[: len(first)]] == first
                assert frames[-1][0] == 0x8
                assert frames[-1][1][:2] == (1011).to_bytes(2, "big")
            assert time.monotonic() - started < 3
            for w, r in ((writer, raw), (player_writer, raw_player)):
                w.close()
                r.close()
            await asyncio.sleep(1.0)  # several rounds: those that answer stay
            assert not rec.done and not player_rec.done
            assert len(_parked(server, table_id)) == 1
            assert len(_parked_players(server)) == 1
    finally:
        server.stop()


async def test_a_server_that_stops_closes_parked_sockets_with_1012(tmp_path: Path) -> None:
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'stop.db'}", ws_heartbeat=0)
    stopped = False
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, _ = await seated_table(client, rules={"target": 500})
            player = await new_player(client, "Cy")
        path = f"/v1/tables/{table_id}/ws"
        mine = f"{PLAYER_ROUTE}?token={player.token}"
        async with (
            connect(ws_url(server, path), proxy=None) as ws,
            connect(ws_url(server, mine), proxy=None) as player_ws,
        ):
            rec, player_rec = Recorder(ws), Recorder(player_ws)
            await rec.first("view")
            await _until_parked(server, table_id, 1)
            await _until_players_parked(server, 1)
            await asyncio.to_thread(server.stop)
            stopped = True
            for each, recorder in ((ws, rec), (player_ws, player_rec)):
                await recorder.closed()
                with pytest.raises(ConnectionClosed) as closed:
                    await each.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
    finally:
        if not stopped:
            server.stop()


class _Writes:
    """A transport that records each ``write`` (its bytes) and passes it on."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


async def test_the_events_of_one_commit_go_to_a_socket_in_one_write(server: Server) -> None:
    """A move that ends a hand commits two events: the feed takes both before it sends, and
    each parked socket gets their frames in one ``write``, in order, each seq once."""
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        table_id, players = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        async with connect(ws_url(server, path), proxy=None) as ws:
            rec = Recorder(ws)
            start = (await rec.first("view"))["seq"]
            (parked,) = await _until_parked(server, table_id, 1)
            spy = _Writes(parked.transport)
            parked.transport = spy  # type: ignore[assignment]
            view, seq = None, start
            for _ in range(300):
                moved = await step(client, table_id, players, view)
                view = moved["table"]
                if moved["seq"] - seq >= 2:
                    break
                seq = moved["seq"]
            else:
                raise AssertionError("no move committed two events")
            await rec.reach(moved["seq"])
        texts = [[json.loads(p) for op, p in _server_frames(w) if op == 0x1] for w in spy.writes]
        texts = [t for t in texts if t]  # not the close frame's echo
        assert len(texts[-1]) == moved["seq"] - seq  # the last move's events: one write
        seqs = [m["seq"] for t in texts for m in t if m["type"] in SEQUENCED]
        assert seqs == list(range(start + 1, moved["seq"] + 1))
        assert [m["seq"] for m in rec.messages if m["type"] in SEQUENCED] == [start, *seqs]


async def test_a_watcher_with_a_token_is_parked_and_plays_once_it_takes_a_seat(
    server: Server,
) -> None:
    """A player who watches a table they are not seated at (the web client always connects
    with a ticket) is parked as a spectator; once they join the table their socket takes their
    seat's events, their ``your_turn`` and their moves, through the pipeline."""
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        creator, watcher = await new_player(client, "Ada"), await new_player(client, "Bo")
        table = await new_table(client, creator, rules={"target": 500})
        table_id = table["table_id"]
        path = f"/v1/tables/{table_id}/ws?token={watcher.token}"
        async with connect(ws_url(server, path), proxy=None) as ws:
            rec = Recorder(ws)
            await rec.first("view")
            await _until_parked(server, table_id, 1)
            r = await client.post(f"/v1/invites/{table['invite_code']}", headers=watcher.auth)
            assert r.status_code == 200, r.text
            r = await client.post(f"/v1/tables/{table_id}/start", headers=creator.auth)
            assert r.status_code == 200, r.text
            view = await get_table(client, table_id, watcher)
            assert view["you"] == 1
            if view["game"]["hand"]["turn"] != 1:  # the creator's turn first: over HTTP
                view = (await step(client, table_id, [creator, watcher], view))["table"]
                view = await get_table(client, table_id, watcher)
            await rec.first("your_turn")
            kind = "pass" if view["game"]["hand"]["phase"] == "upcard_offer" else "draw_stock"
            await ws.send(json.dumps({"type": "move", "id": "m1", "kind": kind}))
            ack = await rec.first("ack")
            assert ack["id"] == "m1" and ack["table"]["you"] == 1
            await rec.reach(ack["seq"])
            mine = next(m for m in rec.of_type("event") if m["seq"] == ack["seq"])
            assert mine["event"]["seat"] == 1
            if kind == "draw_stock":
                assert "card" in mine["event"]  # the seat's own rendering: the card drawn
            assert len(_parked(server, table_id)) == 1  # still the parked socket


# The player's socket (``app/api/live/player.py``): parked once accepted.

PLAYER_ROUTE = "/v1/players/me/ws"


def _parked_players(server: Server) -> list[Parked]:
    app: Any = server.uvicorn.config.app
    parking = getattr(app.state, "parking", None)
    if parking is None:
        return []
    return [p for p in list(parking.sockets) if isinstance(p.tenant, Waiting)]


async def _until_players_parked(server: Server, count: int) -> list[Parked]:
    await until(lambda: len(_parked_players(server)) >= count, timeout=10, every=0.01)
    return _parked_players(server)


async def test_a_parked_player_socket_gets_its_notifications_in_order_and_answers(
    tmp_path: Path,
) -> None:
    """A player's socket is parked once accepted (no ASGI call, no ``Socket`` left); it still
    gets each notification in order, its heartbeats, counts as present for the lobby's seeks,
    answers pings and moves as through ASGI, and ends with its log session and metrics."""
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'player.db'}", ws_heartbeat=0.5)
    try:
        app: Any = server.uvicorn.config.app
        hub = app.state.service.hub
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            p0, p1 = await new_player(client, "Ada"), await new_player(client, "Bo")
            open_before = _sample("ginrummy_websockets_open", route=PLAYER_ROUTE)
            closed_before = _sample(
                "ginrummy_websocket_sessions_total", route=PLAYER_ROUTE, code="1000"
            )
            async with listen(server, PLAYER_ROUTE, p0) as ada:
                (parked,) = await _until_players_parked(server, 1)
                gc.collect()  # the ASGI call returned: its Socket went with it
                assert not [
                    o
                    for o in gc.get_objects()
                    if type(o) is Socket and o.websocket.scope["path"] == PLAYER_ROUTE
                ]
                assert _sample("ginrummy_websockets_open", route=PLAYER_ROUTE) == open_before + 1
                assert p0.id in hub.present()  # its live seeks stay alive
                await ada.ws.send(json.dumps({"type": "ping", "id": "p1"}))
                await ada.ws.send(json.dumps({"type": "move", "kind": "draw_stock", "id": "m1"}))
                await ada.ws.send("not json")
                await ada.count("error", 2)
                assert ada.of_type("pong") == [{"type": "pong", "id": "p1"}]
                move, bad = ada.of_type("error")
                assert (move["code"], move["id"]) == ("not_a_table", "m1")
                assert bad["code"] == "invalid_message"
                # From the one timer of the parked sockets; on a loaded machine it may come
                # before the answers above.
                beat = await ada.first("heartbeat")
                assert beat == {"type": "heartbeat", "seq": None}

                table = await new_table(client, p0, rules={"target": 500})
                table_id = table["table_id"]
                r = await client.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
                assert r.status_code == 200, r.text
                await ada.first("opponent_joined")
                r = await client.post(f"/v1/tables/{table_id}/start", headers=p0.auth)
                assert r.status_code == 200, r.text
                r = await client.post(f"/v1/tables/{table_id}/resign", headers=p0.auth)
                assert r.status_code == 200, r.text
                for _ in range(3):  # asked, declined, asked again: told each time
                    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p1.auth)
                    assert r.status_code == 200, r.text
                    r = await client.post(f"/v1/tables/{table_id}/rematch/decline", headers=p0.auth)
                await ada.count("rematch_offered", 3)
                told = [m["type"] for m in ada.messages if m["type"] not in ("heartbeat",)]
                assert told == [
                    "pong",
                    "error",
                    "error",
                    "opponent_joined",
                    *told[4:-3],
                    "rematch_offered",
                    "rematch_offered",
                    "rematch_offered",
                ]
                assert "match_finished" in told[4:-3]
                assert _parked_players(server) == [parked]  # still the parked socket
            await until(
                lambda: (
                    _sample("ginrummy_websockets_open", route=PLAYER_ROUTE) == open_before
                    and not _parked_players(server)
                ),
                timeout=10,
            )
            closed = _sample("ginrummy_websocket_sessions_total", route=PLAYER_ROUTE, code="1000")
            assert closed == closed_before + 1
            assert p0.id not in hub.present()
            assert not app.state.heartbeats.quiet
    finally:
        server.stop()


async def test_a_parked_player_socket_ends_with_its_token_4401(tmp_path: Path) -> None:
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'revoked.db'}", ws_heartbeat=0)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            p0 = await new_player(client, "Ada")
            r = await client.post("/v1/ws-tickets", headers=p0.auth)
            path = f"{PLAYER_ROUTE}?ticket={r.json()['ticket']}"
            async with connect(ws_url(server, path), proxy=None) as ws:
                rec = Recorder(ws)
                await _until_players_parked(server, 1)
                (token,) = (await client.get("/v1/players/me/tokens", headers=p0.auth)).json()
                r = await client.delete(f"/v1/players/me/tokens/{token['id']}", headers=p0.auth)
                assert r.status_code == 200, r.text
                await rec.closed()
                assert [m["code"] for m in rec.of_type("error")] == ["token_revoked"]
                assert ws.close_code == 4401
        await until(lambda: not _parked_players(server), timeout=10)
        app: Any = server.uvicorn.config.app
        assert p0.id not in app.state.service.hub.present()
    finally:
        server.stop()


async def test_with_player_parking_off_a_player_socket_stays_an_asgi_session(
    tmp_path: Path,
) -> None:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'off.db'}", ws_heartbeat=0.2, ws_park_players=False
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            p0 = await new_player(client, "Ada")
            async with listen(server, PLAYER_ROUTE, p0) as ada:
                await ada.first("heartbeat")
                assert _parked_players(server) == []
                gc.collect()
                assert [
                    o
                    for o in gc.get_objects()
                    if type(o) is Socket and o.websocket.scope["path"] == PLAYER_ROUTE
                ]
    finally:
        server.stop()
