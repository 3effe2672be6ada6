"""Two real ``python -m app`` processes on one PostgreSQL database and one Redis: each process
receives the bus messages of the tables and players it serves, and no others.

A table's moves go through process A while its sockets open on process B, some in the middle
of a burst of moves (an event committed between a socket's subscription and its read of the
log must still reach it once, in order); another table plays through A alone, and B hears
nothing of it; a socket closed leaves the table's channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import re

import httpx
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from tests.api.helpers import JSON, Player, choose, mover, seated_table
from tests.api.test_live import Recorder, log_of, numbered
from tests.cluster.conftest import App, Pair


def counter(metrics: str, name: str) -> float:
    """An unlabelled counter's value on a ``/metrics`` page (0 if absent)."""
    found = re.search(rf"^{name} (\S+)$", metrics, re.M)
    return float(found.group(1)) if found else 0.0


async def bus_counts(client: httpx.AsyncClient) -> tuple[float, float]:
    """(messages of the other process received, those about nothing it serves)."""
    metrics = (await client.get("/metrics")).text
    return (
        counter(metrics, "ginrummy_bus_received_total"),
        counter(metrics, "ginrummy_bus_foreign_messages_total"),
    )


async def subscribers(pair: Pair, table_id: str) -> int:
    """How many processes Redis has subscribed to the table's channel."""
    client = Redis.from_url(pair.redis.url)
    try:
        [(_, count)] = await client.pubsub_numsub(f"{pair.prefix}:table:{table_id}")
    finally:
        await client.aclose()
    return int(count)


async def play(client: httpx.AsyncClient, table_id: str, players: list[Player], moves: int) -> int:
    """``moves`` moves through ``client`` as fast as it answers; the seq after the last."""
    r = await client.get(f"/v1/tables/{table_id}", headers=players[0].auth)
    view: JSON = r.json()
    for _ in range(moves):
        seat = mover(view)
        if view["you"] != seat:
            view = (await client.get(f"/v1/tables/{table_id}", headers=players[seat].auth)).json()
        path, body = choose(view)
        r = await client.post(
            f"/v1/tables/{table_id}/{path}", json=body, headers=players[seat].auth
        )
        assert r.status_code == 200, r.text
        view = r.json()["table"]
    return int(view["seq"])


def as_sent(log: list[JSON], first: int) -> list[JSON]:
    """The log's events after seq ``first`` as a table socket sends them."""
    return [
        {"type": "event", "seq": e["seq"], "event": {k: v for k, v in e.items() if k != "seq"}}
        for e in log
        if e["seq"] > first
    ]


def ws_url(app: App, table_id: str, token: str = "") -> str:
    query = f"?token={token}" if token else ""
    return app.url.replace("http://", "ws://", 1) + f"/v1/tables/{table_id}/ws{query}"


async def test_sockets_on_b_of_a_table_moving_through_a_get_every_event_once_in_order(
    pair: Pair,
) -> None:
    a, b = pair.apps
    async with (
        httpx.AsyncClient(base_url=a.url, timeout=30) as on_a,
        httpx.AsyncClient(base_url=b.url, timeout=30) as on_b,
    ):
        table_id, players = await seated_table(on_a, rules={"target": 500})
        before = await bus_counts(on_b)
        async with contextlib.AsyncExitStack() as stack:
            burst = asyncio.create_task(play(on_a, table_id, players, 40))
            recs: list[Recorder] = []
            firsts: list[int] = []
            # Sockets open on B one after another while A commits: their subscriptions and
            # their reads of the log fall between A's commits. At most 40 of them (20 a
            # player, under the cap of 50): on a slow machine the burst outlasts many opens.
            while not burst.done() and len(recs) < 40:
                ws = await stack.enter_async_context(
                    connect(ws_url(b, table_id, players[len(recs) % 2].token), proxy=None)
                )
                rec = Recorder(ws)
                recs.append(rec)
                firsts.append((await rec.first("view"))["seq"])
            head = await burst
            for rec, first in zip(recs, firsts, strict=True):
                await rec.reach(head)
                assert numbered(rec.messages) == list(range(first + 1, head + 1))
            log = {p.id: await log_of(on_a, table_id, p) for p in players}
            for n, (rec, first) in enumerate(zip(recs, firsts, strict=True)):
                events = [m for m in rec.messages if m["type"] == "event"]
                assert events == as_sent(log[players[n % 2].id], first)
            assert len(recs) >= 3
            assert await subscribers(pair, table_id) == 1  # B's; A has no socket there
        # The last socket closed: B leaves the table's channel.
        for _ in range(100):
            if await subscribers(pair, table_id) == 0:
                break
            await asyncio.sleep(0.05)
        assert await subscribers(pair, table_id) == 0
        received, foreign = await bus_counts(on_b)
        assert foreign == before[1] == 0
        assert received > before[0]


async def test_a_table_b_does_not_serve_sends_b_nothing(pair: Pair) -> None:
    """A table played through A alone, with no socket on B: B receives not one message of
    it (its received counter stands still), and nothing foreign reaches either process."""
    a, b = pair.apps
    async with (
        httpx.AsyncClient(base_url=a.url, timeout=30) as on_a,
        httpx.AsyncClient(base_url=b.url, timeout=30) as on_b,
    ):
        table_id, players = await seated_table(on_a, rules={"target": 500})
        async with connect(ws_url(a, table_id), proxy=None) as ws:
            spectator = Recorder(ws)
            await spectator.first("view")
            await asyncio.sleep(0.3)  # the start's match_started reached every bot runner
            before_a, before_b = await bus_counts(on_a), await bus_counts(on_b)
            head = await play(on_a, table_id, players, 20)
            await spectator.reach(head)
            await asyncio.sleep(0.3)
            after_a, after_b = await bus_counts(on_a), await bus_counts(on_b)
        assert after_b == before_b  # nothing received at all
        assert after_a[1] == after_b[1] == 0
        assert after_a[0] == before_a[0]  # its own commits come back, uncounted
