"""The feed's shared frames written straight to parked sockets (``Feed._write`` in
``app/api/live/audiences.py``): real server, real sockets.

A parked socket that takes frames now gets an audience's frame with one ``transport.write`` and
nothing else on the way; one whose transport pauses, in the middle of a fan-out or between its
chunks, goes through its bounded outbox instead and gets what waited when it resumes: every seq
once and in order either way. What is written straight counts in the socket's log line and the
route's metric as any message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from prometheus_client import REGISTRY

from app.api.live import audiences
from app.api.live.parking import Parked
from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, seated_table, step
from tests.api.test_live import _server_frames, listen
from tests.api.test_parking import ROUTE, SEQUENCED, _until_parked
from tests.waiting import until

SPECTATORS = 4


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(f"sqlite+aiosqlite:///{tmp_path / 'fanout.db'}", ws_heartbeat=0)
    yield running
    running.stop()


class _Pauses:
    """A parked socket's transport that records each ``write`` and passes it on; while armed,
    its first write pauses every other parked socket of the table that is still writable (as
    their transports would on a full buffer): at once, or in the loop's next turn (``later``),
    where the fan-out gives the loop back between two chunks."""

    def __init__(self, parked: Parked, group: list[Parked], later: bool) -> None:
        self.transport = parked.transport
        self.group, self.later = group, later
        self.writes: list[bytes] = []
        self.armed = False
        self.paused: list[Parked] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)
        if not self.armed:
            return
        self.armed = False
        for other in self.group:
            spy: Any = other.transport
            spy.armed = False  # the first written pauses the others
            if spy is not self and other.writable:
                self.paused.append(other)
                if self.later:
                    asyncio.get_running_loop().call_soon(other.pause_writing)
                else:
                    other.pause_writing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def _seqs(writes: list[bytes]) -> list[int]:
    return [seq for seqs in _events(writes) for seq in seqs]


def _events(writes: list[bytes]) -> list[list[int]]:
    """The seqs of the events in each write."""
    out = []
    for data in writes:
        seqs = [json.loads(p)["seq"] for op, p in _server_frames(data) if op == 0x1]
        if seqs:
            out.append(seqs)
    return out


@pytest.mark.parametrize("later", [False, True], ids=["in-its-write", "between-chunks"])
async def test_a_spectator_paused_in_the_middle_of_a_fan_out_gets_every_seq_once_in_order(
    server: Server, later: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if later:
        monkeypatch.setattr(audiences, "CHUNK", 1)  # the loop is given back after each socket
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=30) as client,
        AsyncExitStack() as stack,
    ):
        table_id, players = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        recs = [await stack.enter_async_context(listen(server, path)) for _ in range(SPECTATORS)]
        (start,) = {(await rec.first("view"))["seq"] for rec in recs}
        group = await _until_parked(server, table_id, SPECTATORS)
        watching: Any = group[0].tenant  # session.Watching
        feed: Any = watching.member.feed
        loop = feed.task.get_loop()
        moved = await step(client, table_id, players)
        for rec in recs:  # after an event, the feed writes to all four straight
            await rec.reach(moved["seq"])
        await until(lambda: len(feed.ready[None].sockets) == SPECTATORS)
        armed = moved["seq"]
        spies = [_Pauses(parked, group, later) for parked in group]
        for parked, spy in zip(group, spies, strict=True):
            parked.transport = spy  # type: ignore[assignment]
            spy.armed = True
        moved = await step(client, table_id, players, moved["table"])
        await until(lambda: any(spy.paused for spy in spies))
        (first,) = [spy for spy in spies if spy.paused]
        assert len(first.paused) == SPECTATORS - 1
        for _ in range(3):  # frames wait in the paused sockets' outboxes
            moved = await step(client, table_id, players, moved["table"])
        last = moved["seq"]
        await until(lambda: _seqs(first.writes)[-1:] == [last])
        assert all(not p.writable for p in first.paused)
        for parked in first.paused:
            loop.call_soon_threadsafe(parked.resume_writing)
        for rec in recs:
            await rec.reach(last)
            sequenced = [m["seq"] for m in rec.messages if m["type"] in SEQUENCED]
            assert sequenced == list(range(start, last + 1))  # each seq once, in order
        assert _seqs(first.writes) == list(range(armed + 1, last + 1))
        for parked in first.paused:  # paused before the fan-out reached it: all waited
            assert _events(parked.transport.writes) == [  # type: ignore[attr-defined]
                list(range(armed + 1, last + 1))
            ]
        paused = {cast(Any, p.tenant).member for p in first.paused}
        assert not feed.ready[None].sockets.keys() & paused


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_frames_written_straight_count_in_the_log_line_and_the_metric(
    server: Server,
) -> None:
    app: Any = server.uvicorn.config.app
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        table_id, players = await seated_table(client, rules={"target": 500})
        path = f"/v1/tables/{table_id}/ws"
        async with AsyncExitStack() as stack:
            recs = [
                await stack.enter_async_context(listen(server, path)) for _ in range(SPECTATORS)
            ]
            for rec in recs:
                await rec.first("view")
            group = await _until_parked(server, table_id, SPECTATORS)
            feed = app.state.feeds.feed_of(table_id)  # parked, each is written straight
            await until(lambda: len(feed.ready[None].sockets) == SPECTATORS)
            sessions = [p.session for p in group]
            counted = [s.outgoing for s in sessions]
            out_before = _sample("ginrummy_websocket_messages_total", route=ROUTE, direction="out")
            view: JSON | None = None
            moved: JSON = {}
            for _ in range(5):
                moved = await step(client, table_id, players, view)
                view = moved["table"]
            for rec in recs:
                await rec.reach(moved["seq"])
            kinds = ("event", "skip")
            events = {len([m for m in rec.messages if m["type"] in kinds]) for rec in recs}
            assert len(events) == 1 and events != {0}  # the same events to every spectator
            out = _sample("ginrummy_websocket_messages_total", route=ROUTE, direction="out")
            assert out - out_before == SPECTATORS * next(iter(events))
        # Closed: each session's count, as its log line gives it, has every message.
        await until(lambda: app.state.feeds.feed_of(table_id) is None, timeout=10)
        assert {s.outgoing - c for s, c in zip(sessions, counted, strict=True)} == events
