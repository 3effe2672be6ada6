"""The WebSockets, over real connections to a real uvicorn (SQLite and PostgreSQL).

Every message any test receives is validated against the message models of
``app/api/live/messages.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.api.live.backpressure import SEND_GRACE
from app.api.live.client_out import event_message
from app.api.live.messages import SERVER_MESSAGES
from app.engine import Event, MatchState
from app.engine.cards import codes, from_mask
from app.store import Database, tables
from app.table.model import StoredEvent
from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, Player, get_table, new_player, seated_table, step, strings_in
from tests.waiting import until

SEQUENCED = ("view", "event", "skip")


@pytest.fixture(scope="module")
def live(database_url: str) -> Iterator[Server]:
    """A server whose heartbeat comes every 0.2 s."""
    running = start_server(database_url, ws_heartbeat=0.2)
    yield running
    running.stop()


@pytest.fixture
async def client(live: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        yield http


class Recorder:
    """Every message a connection receives, in order, each checked against the models."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.messages: list[JSON] = []
        self._arrived = asyncio.Condition()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                SERVER_MESSAGES.validate_python(message)
                async with self._arrived:
                    self.messages.append(message)
                    self._arrived.notify_all()
        except ConnectionClosed:
            pass
        async with self._arrived:
            self._arrived.notify_all()

    @property
    def done(self) -> bool:
        """The connection ended (closed, or lost)."""
        return self._task.done()

    @property
    def seq(self) -> int:
        """The newest seq received (0 before any)."""
        return max((m["seq"] for m in self.messages if m["type"] in SEQUENCED), default=0)

    def of_type(self, kind: str) -> list[JSON]:
        return [m for m in self.messages if m["type"] == kind]

    async def until(self, done: Callable[[], bool], timeout: float = 10) -> None:
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: done() or self._task.done())
        assert done(), self.messages[-5:]

    async def reach(self, seq: int) -> None:
        await self.until(lambda: self.seq >= seq)

    async def count(self, kind: str, n: int) -> None:
        """Wait for the ``n``-th message of ``kind``."""
        await self.until(lambda: len(self.of_type(kind)) >= n)

    async def first(self, kind: str) -> JSON:
        await self.until(lambda: bool(self.of_type(kind)))
        return self.of_type(kind)[0]

    async def closed(self) -> None:
        async with asyncio.timeout(10):
            await self._task


def ws_url(server: Server, path: str) -> str:
    return server.url.replace("http://", "ws://", 1) + path


@asynccontextmanager
async def listen(
    server: Server, path: str, who: Player | None = None, *, header: bool = False
) -> AsyncIterator[Recorder]:
    """A recorded connection to ``path``; ``who`` authenticates by ?token= or by header."""
    headers = {}
    if who is not None and header:
        headers = who.auth
    elif who is not None:
        path += ("&" if "?" in path else "?") + f"token={who.token}"
    async with connect(ws_url(server, path), additional_headers=headers, proxy=None) as ws:
        recorder = Recorder(ws)
        yield recorder


async def play(
    client: httpx.AsyncClient,
    table_id: str,
    players: list[Player],
    moves: int,
    view: JSON | None = None,
) -> JSON:
    """Make ``moves`` moves (whoever is to act); the last mover's view."""
    for _ in range(moves):
        view = (await step(client, table_id, players, view))["table"]
    assert view is not None
    return view


def without_empty_invite(view: JSON) -> JSON:
    """A GET view as the pipeline renders it (the route's model adds null invite fields)."""
    return {k: v for k, v in view.items() if v is not None or not k.startswith("invite")}


def numbered(messages: list[JSON]) -> list[int]:
    return [m["seq"] for m in messages if m["type"] in ("event", "skip")]


async def log_of(client: httpx.AsyncClient, table_id: str, who: Player | None) -> list[JSON]:
    r = await client.get(f"/v1/tables/{table_id}/events", headers=who.auth if who else None)
    assert r.status_code == 200, r.text
    log: list[JSON] = r.json()
    return log


# Connecting.


async def test_a_bad_token_is_told_why_then_closed_4401(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, _ = await seated_table(client)
    stranger = Player("x", "x", "not-a-token")
    for path in (f"/v1/tables/{table_id}/ws", "/v1/players/me/ws"):
        for header in (False, True):
            async with listen(live, path, stranger, header=header) as rec:
                await rec.closed()
            assert [m["code"] for m in rec.messages] == ["unauthorized"]
            assert rec.ws.close_code == 4401
    async with listen(live, "/v1/players/me/ws") as rec:
        await rec.closed()
    assert rec.ws.close_code == 4401


async def test_an_unknown_table_closes_4404(live: Server) -> None:
    async with listen(live, "/v1/tables/nope/ws") as rec:
        await rec.closed()
    assert rec.messages == [
        {"type": "error", "id": None, "code": "table_not_found", "message": "no table 'nope'"}
    ]
    assert rec.ws.close_code == 4404


async def test_connect_sends_the_view_of_a_seat_or_a_spectator(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, players = await seated_table(client)
    stranger = await new_player(client)
    path = f"/v1/tables/{table_id}/ws"
    for who, header in ((players[0], True), (players[1], False), (stranger, False), (None, False)):
        async with listen(live, path, who, header=header) as rec:
            view = await rec.first("view")
            expected = await get_table(client, table_id, who)
            assert view == {
                "type": "view",
                "seq": expected["seq"],
                "version": expected["version"],
                "table": without_empty_invite(expected),
            }
            if expected["you"] is not None and expected["game"]["hand"]["turn"] == expected["you"]:
                turn = await rec.first("your_turn")
                assert turn["table_id"] == table_id
                assert turn["phase"] == expected["game"]["hand"]["phase"]
            heartbeat = await rec.first("heartbeat")
            assert heartbeat["seq"] == expected["seq"]
            assert not rec.of_type("your_turn") or expected["you"] is not None


# Moves over the socket.


async def test_moves_over_the_socket_go_through_the_pipeline(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, players = await seated_table(client)
    view = await get_table(client, table_id, players[0])
    mover = view["game"]["hand"]["turn"]
    path = f"/v1/tables/{table_id}/ws"
    async with (
        listen(live, path, players[mover]) as me,
        listen(live, path, players[1 - mover]) as other,
        listen(live, path) as spectator,
    ):
        await me.first("view")
        await me.ws.send(json.dumps({"type": "ping", "id": "p"}))
        assert await me.first("pong") == {"type": "pong", "id": "p"}

        await other.ws.send(json.dumps({"type": "move", "id": "early", "kind": "pass"}))
        refused = await other.first("error")
        assert refused["id"] == "early" and refused["code"] == "not_your_turn"

        await me.ws.send(json.dumps({"type": "move", "kind": "discard"}))
        await me.until(lambda: len(me.of_type("error")) == 1)
        assert me.of_type("error")[0]["code"] == "card_required"
        await me.ws.send("{not json")
        await me.until(lambda: len(me.of_type("error")) == 2)
        assert me.of_type("error")[1]["code"] == "invalid_message"

        await spectator.ws.send(json.dumps({"type": "move", "id": "s", "kind": "pass"}))
        assert (await spectator.first("error"))["code"] == "unauthorized"

        kind = "pass" if view["game"]["hand"]["phase"] == "upcard_offer" else "draw_stock"
        await me.ws.send(json.dumps({"type": "move", "id": "m1", "kind": kind}))
        ack = await me.first("ack")
        assert ack["id"] == "m1"
        mine_now = await get_table(client, table_id, players[mover])
        assert ack["table"] == without_empty_invite(mine_now)
        for rec in (me, other, spectator):
            await rec.reach(ack["seq"])
        theirs = next(m["event"] for m in other.of_type("event") if m["seq"] == ack["seq"])
        mine = next(m["event"] for m in me.of_type("event") if m["seq"] == ack["seq"])
        assert theirs["seat"] == mover
        if kind == "draw_stock":
            assert "card" in mine and "card" not in theirs
        else:
            assert (await other.first("your_turn"))["table_id"] == table_id


def test_an_event_with_nothing_for_the_recipient_is_a_skip() -> None:
    secret = StoredEvent("t", 7, 1, 1, Event("peeked", {}, {0: {"card": "AS"}}))
    assert event_message(secret, 0) == {
        "type": "event",
        "seq": 7,
        "event": {"type": "peeked", "card": "AS"},
    }
    assert event_message(secret, 1) == {"type": "skip", "seq": 7}
    assert event_message(secret, None) == {"type": "skip", "seq": 7}
    public = StoredEvent("t", 8, 1, 1, Event("discarded", {"seat": 0, "card": "AS"}))
    assert event_message(public, None)["type"] == "event"


def _rendered(kind: str) -> float:
    """Table messages this process has rendered (``app/api/live/frames.py``)."""
    value = REGISTRY.get_sample_value("ginrummy_ws_frames_rendered_total", {"kind": kind})
    return value or 0.0


async def test_each_audience_shares_one_frame_redacted_as_its_own_log(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, players = await seated_table(client, rules={"target": 500})
    path = f"/v1/tables/{table_id}/ws"
    events, views = _rendered("event"), _rendered("view")
    async with (
        listen(live, path, players[0]) as seat0,
        listen(live, path, players[1]) as seat1,
        listen(live, path) as first,
        listen(live, path) as second,
        listen(live, path, await new_player(client)) as third,  # signed in, not seated
    ):
        spectators = (first, second, third)
        start = (await first.first("view"))["seq"]
        view = await play(client, table_id, players, 12)
        for rec in (seat0, seat1, *spectators):
            await rec.reach(view["seq"])
    # Five sockets, three audiences: each event and each view rendered at most three times.
    assert _rendered("event") - events <= 3 * (view["seq"] - start)
    assert _rendered("view") - views <= 3
    sequenced = [[m for m in rec.messages if m["type"] in SEQUENCED] for rec in spectators]
    assert sequenced[0] == sequenced[1] == sequenced[2]
    received: dict[Recorder, list[JSON]] = {}
    for who, rec in ((players[0], seat0), (players[1], seat1), (None, first)):
        log = await log_of(client, table_id, who)
        expected = [{"type": "event", "seq": e["seq"], "event": e} for e in log if e["seq"] > start]
        for message in expected:
            del message["event"]["seq"]
        received[rec] = [m for m in rec.messages if m["type"] == "event"]
        assert received[rec] == expected  # exactly the recipient's own redaction, no more
    assert received[seat0] != received[seat1]


async def test_sockets_joining_while_moves_are_made_get_every_seq_once_in_order(
    client: httpx.AsyncClient, live: Server
) -> None:
    """Spectators and seats connect (some with ``since``) while the table moves: each joins the
    table's one feed before its catch-up reads the store, and gets its view (or catch-up),
    then every later seq exactly once, whatever moment it joined at."""
    table_id, players = await seated_table(client, rules={"target": 500})
    path = f"/v1/tables/{table_id}/ws"
    start = (await get_table(client, table_id, None))["seq"]
    async with contextlib.AsyncExitStack() as stack:
        recorders: list[tuple[Recorder, int | None]] = []

        async def join(i: int) -> None:
            since = start if i % 3 == 2 else None
            who = players[i % 2] if i % 4 == 1 else None
            url = path if since is None else f"{path}?since={since}"
            recorders.append((await stack.enter_async_context(listen(live, url, who)), since))

        async def moves() -> JSON:
            return await play(client, table_id, players, 20)

        joins = [asyncio.create_task(join(i)) for i in range(40)]
        view = await moves()
        await asyncio.gather(*joins)
        for rec, since in recorders:
            await rec.reach(view["seq"])
            kinds = [m["type"] for m in rec.messages if m["type"] in SEQUENCED]
            seqs = [m["seq"] for m in rec.messages if m["type"] in SEQUENCED]
            if since is None:
                assert kinds[0] == "view"
                assert seqs == list(range(seqs[0], view["seq"] + 1)), seqs
            else:
                assert "view" not in kinds
                assert seqs == list(range(since + 1, view["seq"] + 1)), seqs


# Resuming.


async def test_resume_after_a_forced_disconnect_loses_and_repeats_nothing(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, players = await seated_table(client, rules={"target": 500})
    path = f"/v1/tables/{table_id}/ws"
    async with listen(live, path, players[1]) as before:
        start = (await before.first("view"))["seq"]
        view = await play(client, table_id, players, 5)
        await before.reach(view["seq"])
        assert view["game"]["hand"]["phase"] != "over"
        # Cut the connection without a closing handshake, as a dropped network would.
        before.ws.transport.abort()
        await before.closed()
    resume_from = before.seq
    view = await play(client, table_id, players, 5, view)
    # More moves while the client reconnects: the backlog and the live stream meet.
    playing = asyncio.create_task(play(client, table_id, players, 10, view))
    async with listen(live, f"{path}?since={resume_from}", players[1]) as after:
        final = await playing
        await after.reach(final["seq"])
        assert after.messages[0]["type"] == "event"
        assert after.messages[0]["seq"] == resume_from + 1
        assert not after.of_type("view")
    received = before.messages + after.messages
    assert numbered(received) == list(range(start + 1, final["seq"] + 1))
    log = await log_of(client, table_id, players[1])
    expected = [{"type": "event", "seq": e["seq"], "event": e} for e in log if e["seq"] > start]
    for message in expected:
        del message["event"]["seq"]
    assert [m for m in received if m["type"] == "event"] == expected


async def test_an_unresumable_since_gets_a_full_view(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, players = await seated_table(client)
    head = (await get_table(client, table_id, players[0]))["seq"]
    path = f"/v1/tables/{table_id}/ws"
    # 1: before the match started; head + 1: beyond the newest event.
    for since in (1, head + 1):
        async with listen(live, f"{path}?since={since}", players[0]) as rec:
            view = await rec.first("view")
            assert view["seq"] == head
            assert rec.messages[0]["type"] == "view"
    async with listen(live, f"{path}?since={head}", players[0]) as rec:
        await rec.first("heartbeat")
        assert not rec.of_type("view") and not numbered(rec.messages)


async def test_a_resume_too_far_behind_gets_a_full_view(database_url: str) -> None:
    server = start_server(database_url, ws_resume_limit=3)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, players = await seated_table(client)
            head = (await get_table(client, table_id, players[0]))["seq"]
            view = await play(client, table_id, players, 4)
            path = f"/v1/tables/{table_id}/ws"
            async with listen(server, f"{path}?since={head}", players[0]) as rec:
                assert (await rec.first("view"))["seq"] == view["seq"]
            async with listen(server, f"{path}?since={view['seq'] - 3}", players[0]) as rec:
                await rec.reach(view["seq"])
                assert numbered(rec.messages) == [view["seq"] - 2, view["seq"] - 1, view["seq"]]
    finally:
        server.stop()


# The player's socket.


async def test_the_players_socket_tells_a_rematch_asked_for(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, (p0, p1) = await seated_table(client)
    await client.post(f"/v1/tables/{table_id}/resign", headers=p1.auth)
    async with listen(live, "/v1/players/me/ws", p1) as bo:
        await bo.first("heartbeat")
        r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p0.auth)
        assert r.status_code == 200, r.text
        asked = await bo.first("rematch_offered")
        assert asked == {
            "type": "rematch_offered",
            "table_id": table_id,
            "player": {"id": p0.id, "name": "Ada"},
        }
        # Declined and asked again: told again.
        await client.post(f"/v1/tables/{table_id}/rematch/decline", headers=p1.auth)
        await client.post(f"/v1/tables/{table_id}/rematch", headers=p0.auth)
        await bo.count("rematch_offered", 2)


async def test_the_players_socket_says_when_to_come_back(
    client: httpx.AsyncClient, live: Server
) -> None:
    p0, p1 = await new_player(client, "Ada"), await new_player(client, "Bo")
    r = await client.post("/v1/tables", json={}, headers=p0.auth)
    table_id, code = r.json()["table_id"], r.json()["invite_code"]
    async with (
        listen(live, "/v1/players/me/ws", p0) as ada,
        listen(live, "/v1/players/me/ws", p1, header=True) as bo,
    ):
        await ada.first("heartbeat")
        await bo.first("heartbeat")
        await client.post(f"/v1/invites/{code}", headers=p1.auth)
        joined = await ada.first("opponent_joined")
        assert joined == {
            "type": "opponent_joined",
            "table_id": table_id,
            "player": {"id": p1.id, "name": "Bo"},
        }
        await client.post(f"/v1/tables/{table_id}/start", headers=p0.auth)
        players, recorders = [p0, p1], (ada, bo)
        view: JSON | None = None
        while not ada.of_type("your_turn") or not bo.of_type("your_turn"):
            told = [len(rec.of_type("your_turn")) for rec in recorders]
            view = (await step(client, table_id, players, view))["table"]
            turn = view["game"]["hand"]["turn"]
            if turn is not None and turn != view["you"]:
                # The turn passed to the other player: they are told.
                await recorders[turn].count("your_turn", told[turn] + 1)
        assert (await bo.first("your_turn"))["table_id"] == table_id
        await client.post(f"/v1/tables/{table_id}/resign", headers=p1.auth)
        for rec in (ada, bo):
            finished = await rec.first("match_finished")
            assert finished["winner"] == 0 and finished["reason"] == "resignation"
        await bo.ws.send(json.dumps({"type": "ping", "id": "b"}))
        assert await bo.first("pong") == {"type": "pong", "id": "b"}


# Redaction during full games.


def _unrevealed(state: MatchState, seat: int) -> set[str]:
    hand = state.hand
    return set(codes(from_mask(hand.hands[seat] & ~hand.taken_from_discard[seat])))


async def _state(db: Database, table_id: str) -> MatchState:
    async with db.read() as session:
        loaded = await tables.load(session, table_id)
    assert loaded is not None and loaded.state is not None
    return loaded.state


def _assert_hides(messages: list[JSON], cards: set[str], secrets: set[str]) -> None:
    for message in messages:
        seen = set(strings_in(message))
        assert not seen & cards, (message, seen & cards)
        text = json.dumps(message)
        assert not [s for s in secrets if s in text], message


async def test_seat1_and_spectators_never_receive_hidden_cards_or_seeds(
    client: httpx.AsyncClient, live: Server
) -> None:
    # Target 100: one hand can score 60 or more, so a lower target may end after a single hand.
    table_id, players = await seated_table(client, rules={"target": 100})
    db = Database(live.settings.database_url)
    path = f"/v1/tables/{table_id}/ws"
    try:
        async with (
            listen(live, path, players[0]) as seat0,
            listen(live, path, players[1]) as seat1,
            listen(live, path) as spectator,
        ):
            recorders = (seat0, seat1, spectator)
            checked = [0, 0, 0]
            view: JSON | None = None
            own_cards_seen = 0
            for _ in range(3000):
                state = await _state(db, table_id)
                head = (await get_table(client, table_id, None))["seq"]
                for rec in recorders:
                    await rec.reach(head)
                # Once a hand is over its hands, seed and nonce are revealed; never the match seed.
                cards: set[str] = set()
                both: set[str] = set()
                secrets = {state.seed}
                if state.hand.phase != "over":
                    cards = _unrevealed(state, 0) | set(codes(state.hand.stock))
                    both = cards | _unrevealed(state, 1)
                    secrets |= {state.hand.seed, state.hand.nonce}
                for i, (rec, hidden) in enumerate(((seat1, cards), (spectator, both)), start=1):
                    _assert_hides(rec.messages[checked[i] :], hidden, secrets)
                    checked[i] = len(rec.messages)
                # The check has teeth: seat 0 does receive its own cards.
                own = _unrevealed(state, 0)
                if own and own <= {s for m in seat0.messages for s in strings_in(m)}:
                    own_cards_seen += 1
                if state.status == "finished":
                    break
                view = (await step(client, table_id, players, view))["table"]
            assert state.status == "finished" and state.hand.number > 1
            assert own_cards_seen > 10
            for rec in recorders:
                seqs = [m["seq"] for m in rec.messages if m["type"] in SEQUENCED]
                assert seqs == list(range(seqs[0], seqs[-1] + 1))
    finally:
        await db.close()


# Order, bad input, slow consumers, disconnects (issue 8).


async def test_the_view_comes_before_the_answer_to_a_message_sent_at_once(
    client: httpx.AsyncClient, live: Server
) -> None:
    table_id, players = await seated_table(client)
    url = ws_url(live, f"/v1/tables/{table_id}/ws?token={players[0].token}")
    for _ in range(5):
        async with connect(url, proxy=None) as ws:
            await ws.send("not json")
            await ws.send(json.dumps({"type": "ping", "id": "p"}))
            received = [json.loads(await ws.recv())]
            while received[-1]["type"] != "pong":
                received.append(json.loads(await ws.recv()))
        assert received[0]["type"] == "view"
        assert [m["type"] for m in received if m["type"] in ("error", "pong")] == ["error", "pong"]


@pytest.mark.parametrize("since", ["-1", "abc", "1.5", "", "%C2%B2", "2147483648", "9" * 5000])
async def test_a_bad_since_is_told_why_then_closed_4400(
    client: httpx.AsyncClient, live: Server, since: str
) -> None:
    table_id, players = await seated_table(client)
    async with listen(live, f"/v1/tables/{table_id}/ws?since={since}", players[0]) as rec:
        await rec.closed()
    assert [m["code"] for m in rec.messages] == ["invalid_since"]
    assert rec.ws.close_code == 4400


# Far more answers (each ~100 bytes) than the buffers between the server and a client that
# reads nothing can hold once they are made small (``_small_buffers``): ~8 KB of the server's
# kernel send buffer, 1 KB of uvicorn's transport, the client's few KB, the socket's queue.
MESSAGES = 3000
# The server's buffers for the slow client's connection (bytes): Linux would otherwise grow the
# send buffer up to ``tcp_wmem``'s 4 MB, and whether 30,000 answers fit depended on the run.
SERVER_SNDBUF = 4096
TRANSPORT_HIGH = 1024
CLOSE_4008 = (4008).to_bytes(2, "big") + b"slow consumer: reconnect with since"


async def _small_buffers(server: Server, client: socket.socket) -> None:
    """Shrink the server side of ``client``'s connection: its kernel send buffer and uvicorn's
    transport write buffer. The server runs in this process, in a thread with its own loop."""
    peer = client.getsockname()[:2]
    protocols = [
        p
        for p in list(server.uvicorn.server_state.connections)
        if getattr(p, "client", None) == peer
    ]
    assert len(protocols) == 1, protocols
    protocol: Any = protocols[0]
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    here = asyncio.get_running_loop()

    def shrink() -> None:
        transport = protocol.transport
        transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_SNDBUF, SERVER_SNDBUF
        )
        transport.set_write_buffer_limits(high=TRANSPORT_HIGH)
        here.call_soon_threadsafe(done.set_result, None)

    protocol.loop.call_soon_threadsafe(shrink)
    await asyncio.wait_for(done, 10)


def _slow_consumers() -> float:
    """Sockets this process closed as slow consumers (the servers of these tests are in it)."""
    return REGISTRY.get_sample_value("ginrummy_ws_slow_consumers_total") or 0.0


def _client_frame(text: str) -> bytes:
    """A masked WebSocket text frame (RFC 6455 5.2) of under 126 bytes."""
    payload = text.encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x81, 0x80 | len(payload)]) + mask + masked


def _server_frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(opcode, payload) of each unmasked frame in ``data``."""
    at = 0
    while at + 2 <= len(data):
        opcode, size = data[at] & 0x0F, data[at + 1] & 0x7F
        at += 2
        if size == 126:
            size, at = int.from_bytes(data[at : at + 2], "big"), at + 2
        elif size == 127:
            size, at = int.from_bytes(data[at : at + 8], "big"), at + 8
        yield opcode, data[at : at + size]
        at += size


async def test_a_client_that_stops_reading_is_closed_4008_after_what_was_queued(
    tmp_path: Path,
) -> None:
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'slow.db'}",
        ws_send_queue=8,
        ws_heartbeat=0,
        rate_limit_socket="",  # every message answered: the queue fills at once
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, players = await seated_table(client, rules={"target": 500})
            head = (await get_table(client, table_id, players[0]))["seq"]
            view = await play(client, table_id, players, 30)
        # A catch-up larger than the queue is a burst, not a slow consumer.
        path = f"/v1/tables/{table_id}/ws"
        async with listen(server, f"{path}?since={head}", players[0]) as rec:
            await rec.reach(view["seq"])
            assert numbered(rec.messages) == list(range(head + 1, view["seq"] + 1))
        assert rec.ws.close_code in (None, 1000)
        # A raw client that sends and never reads: each message is answered by an error.
        port = server.settings.port
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # no room kept for it
        raw.connect(("127.0.0.1", port))
        reader, writer = await asyncio.open_connection(sock=raw)
        writer.write(
            (
                f"GET {path}?token={players[0].token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        # Frames only once the upgrade is answered: sent with the request, they could reach
        # the server's HTTP parser before it hands the connection to the WebSocket one.
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        await _small_buffers(server, raw)
        bad_move = _client_frame(json.dumps({"type": "move", "kind": "x"}))
        slow_before = _slow_consumers()
        chunks: list[bytes] = [head]
        async with asyncio.timeout(120):
            for _ in range(MESSAGES // 100):
                writer.write(bad_move * 100)
                await writer.drain()
            # Still not reading when the server's grace for a full queue runs out.
            await until(lambda: _slow_consumers() > slow_before, timeout=SEND_GRACE + 60)
            # Everything up to the close frame (the server reads and drops what we sent).
            while CLOSE_4008 not in b"".join(chunks[-2:]):
                chunk = await reader.read(65536)
                assert chunk, "the server hung up without the 4008 close frame"
                chunks.append(chunk)
        writer.close()
        assert _slow_consumers() == slow_before + 1
        data = b"".join(chunks)
        head_end = data.index(b"\r\n\r\n") + 4
        assert data.startswith(b"HTTP/1.1 101")
        frames = list(_server_frames(data[head_end:]))
        texts = [json.loads(p)["type"] for op, p in frames if op == 0x1]
        assert texts[0] == "view" and "error" in texts
        # Bounded: the socket queue filled long before the client stopped sending.
        assert len(texts) < MESSAGES
        assert [p for op, p in frames if op == 0x8] == [CLOSE_4008]
        assert frames[-1] == (0x8, CLOSE_4008)  # nothing after it
    finally:
        server.stop()


async def test_clients_that_vanish_leave_no_traceback_on_sqlite(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'vanish.db'}")
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, players = await seated_table(client)
        url = ws_url(server, f"/v1/tables/{table_id}/ws?token={players[0].token}")
        with caplog.at_level(logging.WARNING):
            # Each client leaves at a different moment of the server's catch-up.
            for i in range(400):
                async with connect(url, proxy=None) as ws:
                    if i % 2:
                        await ws.send(json.dumps({"type": "ping"}))
                    await asyncio.sleep((i % 7) * 0.0005)
                    ws.transport.abort()
            await asyncio.sleep(0.5)
    finally:
        server.stop()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_socket_never_jumps_over_events_committed_elsewhere(database_url: str) -> None:
    """Two servers on one database without a shared bus: the socket on one fills from the log
    what the other committed, before the next event it hears of itself."""
    here, there = start_server(database_url), start_server(database_url)
    try:
        async with (
            httpx.AsyncClient(base_url=here.url, timeout=30) as near,
            httpx.AsyncClient(base_url=there.url, timeout=30) as far,
        ):
            table_id, players = await seated_table(near, rules={"target": 500})
            async with listen(here, f"/v1/tables/{table_id}/ws", players[1]) as rec:
                start = (await rec.first("view"))["seq"]
                view = await play(far, table_id, players, 4)
                view = await play(near, table_id, players, 1)
                await rec.reach(view["seq"])
        assert numbered(rec.messages) == list(range(start + 1, view["seq"] + 1))
    finally:
        here.stop()
        there.stop()
