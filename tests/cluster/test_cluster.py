"""Many processes, one game: three ``python -m app`` behind nginx, one PostgreSQL, one Redis.

The proxy sends a table's requests and sockets to one process (``deploy/nginx.conf``), so the
tests spread a table's players and spectators over the processes themselves, some straight to
a process, as a proxy that balanced otherwise (or a replica's failure) would.

The tests run in this order on one cluster: a full match, the proxy's routing, a Redis outage,
then kill -9 of one process (the cluster has two left afterwards).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
from websockets.asyncio.client import connect

from tests.api.helpers import JSON, Player, choose, mover, new_player, new_table
from tests.api.test_live import Recorder, log_of, numbered
from tests.cluster.conftest import App, Cluster, start_app
from tests.waiting import until

RETRIED = (502, 503, 504)


@contextlib.asynccontextmanager
async def recorded(url: str) -> AsyncIterator[Recorder]:
    async with connect(url, proxy=None) as ws:
        yield Recorder(ws)


async def post(
    client: httpx.AsyncClient, path: str, who: Player, body: JSON | None = None, retry: bool = True
) -> JSON:
    """A command through the proxy; with ``retry``, one that met a dying process is sent again
    with the same Idempotency-Key (applied at most once)."""
    headers = {**who.auth, "Idempotency-Key": uuid.uuid4().hex}
    for _ in range(50):
        try:
            r = await client.post(path, json=body, headers=headers)
        except httpx.TransportError:
            assert retry
            await asyncio.sleep(0.1)
            continue
        if r.status_code in RETRIED and retry:
            await asyncio.sleep(0.1)
            continue
        assert r.status_code in (200, 201), r.text
        out: JSON = r.json()
        return out
    raise AssertionError(f"{path} kept failing")


async def view_of(client: httpx.AsyncClient, table_id: str, who: Player) -> JSON:
    for _ in range(50):
        r = await client.get(f"/v1/tables/{table_id}", headers=who.auth)
        if r.status_code not in RETRIED:
            assert r.status_code == 200, r.text
            out: JSON = r.json()
            return out
        await asyncio.sleep(0.1)
    raise AssertionError("the table could not be read")


class Match:
    """Two HTTP players at one table, moving through the proxy (or, a seat in ``through``,
    straight through that process); counts the your_turn each should be told of (the turn
    passed to them by the other's move)."""

    def __init__(self, client: httpx.AsyncClient, table_id: str, players: list[Player]) -> None:
        self.client = client
        self.table_id = table_id
        self.players = players
        self.through: dict[int, httpx.AsyncClient] = {}
        self.turns: Counter[int] = Counter()
        self.view: JSON | None = None

    def _count(self, actor: int, view: JSON) -> None:
        game = view["game"]
        if game is None or game["match"]["status"] != "playing":
            return
        hand = game["hand"]
        if hand["phase"] != "over" and hand["turn"] != actor:
            self.turns[hand["turn"]] += 1

    async def command(self, seat: int, path: str, body: JSON | None = None, **kw: bool) -> JSON:
        client = self.through.get(seat, self.client)
        result = await post(client, path, self.players[seat], body, **kw)
        self.view = result.get("table", result)
        assert self.view is not None
        self._count(seat, self.view)
        return self.view

    async def step(self, *, retry: bool = True) -> JSON:
        view = self.view or await view_of(self.client, self.table_id, self.players[0])
        seat = mover(view)
        if view["you"] != seat:
            view = await view_of(self.client, self.table_id, self.players[seat])
        path, body = choose(view)
        return await self.command(seat, f"/v1/tables/{self.table_id}/{path}", body, retry=retry)

    async def play(self, moves: int, *, retry: bool = True) -> JSON:
        for _ in range(moves):
            await self.step(retry=retry)
        assert self.view is not None
        return self.view

    @property
    def finished(self) -> bool:
        return self.view is not None and self.view["game"]["match"]["status"] == "finished"


async def new_match(client: httpx.AsyncClient, **rules: int) -> Match:
    p0, p1 = await new_player(client, "Ada"), await new_player(client, "Bo")
    table = await new_table(client, p0, rules=rules)
    match = Match(client, table["table_id"], [p0, p1])
    await match.command(1, f"/v1/invites/{table['invite_code']}")
    return match


def table_sockets(cluster: Cluster, match: Match, on: list[App | None] | None = None) -> list[str]:
    """The URLs of seat 0's, seat 1's and a spectator's table socket: through the proxy, or
    straight to the process ``on[i]`` for the i-th of them."""
    path = f"/v1/tables/{match.table_id}/ws"
    on = on or [None, None, None]
    urls = []
    for token, app in zip((match.players[0].token, match.players[1].token, ""), on, strict=True):
        urls.append(cluster.ws(path + (f"?token={token}" if token else ""), app))
    return urls


Recipient = tuple[list[Recorder], int, Player | None]


def recipients(match: Match, recs: list[list[Recorder]], start: list[int]) -> list[Recipient]:
    """Seat 0's, seat 1's and spectators' connections, each with the seq of its first view."""
    who = [*match.players, *[None] * (len(recs) - 2)]
    return list(zip(recs, start, who, strict=True))


async def assert_exactly_the_log(
    client: httpx.AsyncClient, match: Match, recipients: list[Recipient]
) -> None:
    """Each recipient's messages (over one or more connections, in order) are the log after its
    first view, redacted for it: every seq once, in order, contiguous."""
    head = (await view_of(client, match.table_id, match.players[0]))["seq"]
    for connections, first, who in recipients:
        await connections[-1].reach(head)
        received = [m for rec in connections for m in rec.messages]
        assert numbered(received) == list(range(first + 1, head + 1))
        log = await log_of(client, match.table_id, who)
        expected = [
            {"type": "event", "seq": e["seq"], "event": {k: v for k, v in e.items() if k != "seq"}}
            for e in log
            if e["seq"] > first
        ]
        assert [m for m in received if m["type"] == "event"] == expected


async def test_a_match_over_three_processes_reaches_every_socket_once_in_order(
    cluster: Cluster,
) -> None:
    """Seat 0 moves through process 0, seat 1 through the proxy (the table's process); seat 1's
    socket is on process 1, the spectator's on process 2, seat 0's through the proxy, and the
    players' own sockets wherever the proxy puts them (round-robin): every commit of either
    process crosses to sockets of another."""
    apps = cluster.apps
    async with (
        httpx.AsyncClient(base_url=cluster.url, timeout=30) as client,
        httpx.AsyncClient(base_url=apps[0].url, timeout=30) as first,
    ):
        p0, p1 = await new_player(client, "Ada"), await new_player(client, "Bo")
        note_urls = [cluster.ws(f"/v1/players/me/ws?token={p.token}") for p in (p0, p1)]
        async with recorded(note_urls[0]) as n0, recorded(note_urls[1]) as n1:
            table = await new_table(client, p0, rules={"target": 30})
            match = Match(client, table["table_id"], [p0, p1])
            match.through[0] = first
            async with contextlib.AsyncExitStack() as stack:
                recs = [
                    await stack.enter_async_context(recorded(url))
                    for url in table_sockets(cluster, match, [None, apps[1], apps[2]])
                ]
                start = [(await rec.first("view"))["seq"] for rec in recs]
                await match.command(1, f"/v1/invites/{table['invite_code']}")
                await match.command(0, f"/v1/tables/{match.table_id}/start")
                while not match.finished:
                    await match.step(retry=False)
                await assert_exactly_the_log(
                    client, match, recipients(match, [[r] for r in recs], start)
                )
            for seat, notes in enumerate((n0, n1)):
                await notes.count("match_finished", 1)
                assert len(notes.of_type("your_turn")) == match.turns[seat]
                assert len(notes.of_type("match_finished")) == 1
            assert [m["player"]["id"] for m in n0.of_type("opponent_joined")] == [p1.id]


async def test_the_proxy_sends_a_tables_requests_and_sockets_to_one_process(
    cluster: Cluster,
) -> None:
    """Through the proxy, every path under a table's ``/v1/tables/{id}`` reaches the same
    process (a consistent hash of the id); a table's events then cross no process on their way
    to its sockets. Requests of no table are balanced over all of them."""
    async with httpx.AsyncClient(base_url=cluster.url, timeout=30) as client:
        matches = [await new_match(client, target=500) for _ in range(4)]
        for match in matches:
            await match.command(0, f"/v1/tables/{match.table_id}/start")
            async with recorded(table_sockets(cluster, match)[2]) as spectator:
                view = await match.play(4)
                await spectator.reach(view["seq"])
    served: list[list[int]] = [
        [app.output().count(f"/v1/tables/{m.table_id}") for app in cluster.apps] for m in matches
    ]
    for counts in served:
        assert sorted(counts)[:-1] == [0] * (len(counts) - 1), served
        assert max(counts) >= 4 + 1 + 1, served  # the moves, the start, the socket
    # The players' creations (no table in their path) went round-robin: to every process.
    assert all(re.search(r"/v1/players(?![/\w])", app.output()) for app in cluster.apps)


async def _logged(apps: list[App], text: str, count: int, timeout: float = 15) -> None:
    await until(
        lambda: all(app.output().count(text) >= count for app in apps), timeout, f"log: {text}"
    )


async def test_redis_down_then_up_refuses_no_move_and_loses_no_event(cluster: Cluster) -> None:
    apps = cluster.apps
    async with (
        httpx.AsyncClient(base_url=cluster.url, timeout=30) as client,
        httpx.AsyncClient(base_url=apps[0].url, timeout=30) as first,
    ):
        match = await new_match(client, target=500)
        match.through[0] = first  # seat 1 through the proxy
        await match.command(0, f"/v1/tables/{match.table_id}/start")
        async with contextlib.AsyncExitStack() as stack:
            recs = [
                await stack.enter_async_context(recorded(url))
                for url in table_sockets(cluster, match, [None, apps[1], apps[2]])
            ]
            start = [(await rec.first("view"))["seq"] for rec in recs]
            await match.play(4, retry=False)
            outages = cluster.apps[0].output().count("bus degraded")
            cluster.redis.stop()
            await _logged(cluster.apps, "bus degraded", outages + 1)
            # Degraded: every move applies at its first try, and the sockets (on any process)
            # read the others' events from the log.
            view = await match.play(10, retry=False)
            for rec in recs:
                await rec.reach(view["seq"])
            cluster.redis.start()
            await _logged(cluster.apps, "bus connected to redis again", outages + 1)
            await match.play(6, retry=False)
            await assert_exactly_the_log(
                client, match, recipients(match, [[r] for r in recs], start)
            )


async def _lease(cluster: Cluster, table_id: str) -> tuple[str | None, float]:
    """The bot seat's lease owner and how long it remains valid (s)."""
    conn = await asyncpg.connect(cluster.database_url.replace("+asyncpg", ""))
    try:
        row = await conn.fetchrow(
            "SELECT bot_lease_owner, extract(epoch FROM bot_lease_until - now()) AS left "
            "FROM seats WHERE table_id = $1 AND bot_level IS NOT NULL",
            table_id,
        )
    finally:
        await conn.close()
    return row["bot_lease_owner"], float(row["left"] or 0)


async def _give_the_bot_its_turn(client: httpx.AsyncClient, table_id: str, human: Player) -> int:
    """The human (seat 0) moves until a move of theirs makes it the bot's turn: its version."""
    while True:
        view = await view_of(client, table_id, human)
        if mover(view) != 0:
            await asyncio.sleep(0.05)
            continue
        path, body = choose(view)
        moved = await post(client, f"/v1/tables/{table_id}/{path}", human, body)
        if moved["table"]["game"]["hand"]["turn"] == 1:
            version: int = moved["version"]
            return version


async def test_kill_9_loses_no_event_and_the_bot_moves_again_within_3_s(
    cluster: Cluster,
) -> None:
    async with httpx.AsyncClient(base_url=cluster.url, timeout=30) as client:
        # A bot table, and a match of two people whose sockets are spread over the processes.
        human = await new_player(client, "Cy")
        bot_table = (await new_table(client, human))["table_id"]
        await post(client, f"/v1/tables/{bot_table}/bot", human, {"level": "easy"})
        await post(client, f"/v1/tables/{bot_table}/start", human)
        match = await new_match(client, target=500)
        await match.command(0, f"/v1/tables/{match.table_id}/start")
        async with contextlib.AsyncExitStack() as stack:
            urls = table_sockets(cluster, match)
            # One more spectator straight on each process, so some socket surely dies.
            path = f"/v1/tables/{match.table_id}/ws"
            direct = [cluster.ws(path, app) for app in cluster.apps]
            recs = [[await stack.enter_async_context(recorded(url))] for url in [*urls, *direct]]
            start = [(await rec[0].first("view"))["seq"] for rec in recs]
            await match.play(6)
            for rec in recs:
                await rec[0].reach(match.view["seq"] if match.view else 0)

            # The bot answers within its pause whichever process took the human's move (each
            # process in turn): the bus tells the lease holder.
            answers = []
            for n in range(4):
                async with httpx.AsyncClient(base_url=cluster.apps[n % 3].url) as through:
                    version = await _give_the_bot_its_turn(through, bot_table, human)
                moved_at = time.monotonic()
                while (await view_of(client, bot_table, human))["version"] == version:
                    await asyncio.sleep(0.02)
                answers.append(time.monotonic() - moved_at)
            print(f"the bot answered after {', '.join(f'{a:.2f}' for a in answers)} s")
            assert max(answers) <= 1.0 + 1.0, answers  # its pause, slack
            # Then the process holding the bot's lease dies in the bot's pause.
            version = await _give_the_bot_its_turn(client, bot_table, human)
            owner, _ = await _lease(cluster, bot_table)
            assert owner is not None
            pid = int(owner.split("/")[1])
            victim = next(app for app in cluster.apps if app.process.pid == pid)
            victim.kill()
            killed = time.monotonic()
            cluster.apps.remove(victim)
            taken_over = None
            while True:
                owner_now, left = await _lease(cluster, bot_table)
                if taken_over is None and owner_now not in (None, owner) and left > 0:
                    taken_over = time.monotonic() - killed
                if (await view_of(client, bot_table, human))["version"] > version:
                    bot_moved = time.monotonic() - killed
                    break
                assert time.monotonic() - killed < 30, "the bot never moved again"
                await asyncio.sleep(0.05)
            print(
                f"bot lease taken over {taken_over:.2f} s, bot moved {bot_moved:.2f} s "
                "after kill -9 (its pause: 1 s)"
            )
            assert taken_over is not None and taken_over <= 3.0, taken_over
            assert bot_moved <= 3.0 + 1.0 + 1.0, bot_moved  # the takeover, the pause, slack

            # The players go on through the proxy; sockets that died reconnect with since.
            await match.play(6)
            reconnected = 0
            again = [*urls, *[urls[2]] * len(direct)]  # through the proxy
            for connections, url in zip(recs, again, strict=True):
                if connections[-1].done:
                    sep = "&" if "?" in url else "?"
                    since = f"{url}{sep}since={connections[-1].seq}"
                    connections.append(await stack.enter_async_context(recorded(since)))
                    reconnected += 1
            assert reconnected >= 1
            await match.play(6)
            await assert_exactly_the_log(client, match, recipients(match, recs, start))


def test_the_keepalive_cuts_a_client_that_never_answers_pings(tmp_path: Path) -> None:
    """``ws_ping_interval`` / ``ws_ping_timeout`` are settings of ``python -m app``."""
    app = start_app(
        tmp_path,
        {
            "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'ping.db'}",
            "WS_PING_INTERVAL": "0.3",
            "WS_PING_TIMEOUT": "0.3",
            "WS_HEARTBEAT": "0",
        },
    )
    try:
        token = httpx.post(f"{app.url}/v1/players", json={"name": "Di"}).json()["token"]
        with socket.create_connection(("127.0.0.1", app.port), timeout=10) as raw:
            raw.sendall(
                (
                    f"GET /v1/players/me/ws?token={token} HTTP/1.1\r\n"
                    f"Host: 127.0.0.1:{app.port}\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    "Sec-WebSocket-Version: 13\r\n\r\n"
                ).encode()
            )
            started = time.monotonic()
            received = b""
            # A raw socket answers no ping: the server must hang up after about 0.6 s.
            while chunk := raw.recv(4096):
                received += chunk
            assert received.startswith(b"HTTP/1.1 101")
            assert time.monotonic() - started < 5
    finally:
        app.stop()
