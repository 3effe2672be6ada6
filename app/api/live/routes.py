"""WebSockets: a table's live stream, and a player's notifications across all their tables.

``/v1/tables/{table_id}/ws[?since=N][&ticket=K | &token=T]``

- Auth: a socket ticket as ``?ticket=`` (``POST /v1/ws-tickets``: single use, short-lived; what
  browsers should use, since they cannot set headers on the upgrade), the player's token as
  ``?token=`` (kept for existing clients; never logged) or an ``Authorization: Bearer`` header.
  A used, expired or unknown ticket: an ``error`` (``invalid_ticket``), then close code 4401.
  A browser page from an origin not allowed (``allowed_origins``): ``origin_not_allowed``, 4403.
  A seated player gets their seat's view and events; anyone else (no token, or not seated) is
  a spectator, exactly as ``GET /v1/tables/{id}``. A bad token: an ``error`` message
  (``unauthorized``), then close code 4401; an unknown table: ``error`` (``table_not_found``),
  then 4404.
- On connect without ``since``: a ``view`` (the full redacted table with its ``seq`` and
  ``version``). With ``since=N``: exactly the events N+1.. from the log, then live ones; when N
  cannot be resumed (more than ``ws_resume_limit`` events behind, from before the current match
  started, or beyond the newest seq) a ``view`` instead.
- Then every event of the table in seq order, contiguous: ``event`` (redacted for this
  recipient) or ``skip`` (only the seq: an event whose redaction carries nothing for this
  recipient). ``your_turn`` follows the events that made it this seat's turn (and comes on
  connect when it already is). ``heartbeat`` after ``ws_heartbeat`` seconds of silence.
- Never a silent jump: each socket keeps the last seq it was sent; a live event further on (an
  event lost between processes, a bus reconnect) is preceded by the missing ones, read from the
  log. While the bus is degraded (Redis down) the table's feed reads the log every
  ``hub.POLL_INTERVAL`` s, so events committed by other processes still arrive.
- The live events of a table come from its feed in this process (``app.api.live.audiences``): one
  subscription and one task per table, each event rendered once per audience and handed to
  every socket's outbox; a feed that falls ``hub.QUEUE_LIMIT`` events behind sends its sockets a
  fresh ``view``.
- A spectator's socket, once live and idle, is served below ASGI (``app.api.live.parking``) with
  the same guarantees; a few KB of memory instead of ~33.
- A slow consumer: at most ``ws_send_queue`` messages wait to be sent to one socket; when its
  outbox is still full ``SEND_GRACE`` (5) seconds after it filled (or the feed has
  ``OVERFLOW`` more for it meanwhile), the socket is closed with code 4008 (reason
  ``slow consumer: reconnect with since``) after the first ``ws_send_queue`` messages, so the
  client reconnects with ``?since=`` its last seq and loses nothing. A client that does not
  read at all is cut by the keepalive (``ws_ping_interval`` + ``ws_ping_timeout``).
- The first message is always the ``view`` (or the catch-up): the client's messages are
  answered only after it.
- A ``since`` that is not an integer from 0 to 2^31-1: an ``error`` (``invalid_since``), then
  close code 4400.
- A socket opened with a token (or with a ticket, which stands for the token it was issued
  with) ends with it: when the token is revoked or rotated, in this process or any other (the
  bus carries revocations: ``app.service.tokens``), the socket gets an ``error``
  (``token_revoked``), then close code 4401 (reason ``token revoked``), within milliseconds;
  what was queued for it is dropped, and its messages are no longer answered. A move resolves
  the token again first (from the cache): a process that missed the revocation on the bus ends
  the socket at its next move, ``token_cache_seconds`` after at most. A ticket whose
  token was revoked opens nothing (``unauthorized``, 4401).
- One socket more than ``ws_max_per_player`` for its player or ``ws_max_per_address`` from its
  address open in this process (``app.api.edge.occupancy``): an ``error``
  (``too_many_sockets``), then close code 4429. The socket's frames count against
  ``rate_limit_socket``: a message over it is answered by an ``error`` (``rate_limited``), a
  ping or pong over it closes the socket with 4429 (``app.api.edge.protocols``).
- Client messages: ``{"type": "move", "kind": ..., "card"?, "expected_version"?, "id"?}`` goes
  through the one command pipeline like an HTTP move and is answered by ``ack`` (version, seq,
  your view) or ``error`` (the HTTP error codes); ``{"type": "ping"}`` gets ``pong``.

``/v1/players/me/ws[?ticket=K | ?token=T]``: a ticket or token required (4401 otherwise);
forwards the player's notifications across all their tables (``your_turn``,
``opponent_joined``, ``match_finished``) and heartbeats, so a player who is away learns when to
come back.

Every message's shape is a model in ``app/api/live/messages.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any, NamedTuple, TypeVar

from fastapi import APIRouter, Query, WebSocket
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect, WebSocketState

from app.api.edge.access import SESSION
from app.api.edge.occupancy import Occupancy
from app.api.edge.protocols import ALLOWANCE, CLOSE_TOO_MANY
from app.api.http.deps import bearer_token
from app.api.http.schemas.common import INT32
from app.api.live.audiences import (
    CLOSE_REVOKED,
    REVOKED_ERROR,
    REVOKED_REASON,
    Feed,
    Feeds,
    Member,
)
from app.api.live.backpressure import (
    CLOSE_SLOW_CONSUMER,
    OVERFLOW,
    SEND_GRACE,
    SLOW_CONSUMERS,
    SLOW_REASON,
    Graced,
)
from app.api.live.frames import Frames, text
from app.api.live.messages import CLIENT_MESSAGES, MoveMessage, PingMessage
from app.api.live.parking import Parking
from app.api.live.wire import CLOSED, SENT, WIRE, Wire, frame
from app.engine import Action, RuleError
from app.logs import annotate
from app.service.commands import Actor, Play, seat_of
from app.service.errors import (
    ForbiddenError,
    InvalidError,
    NotFoundError,
    RateLimitedError,
    ServiceError,
    UnauthenticatedError,
)
from app.service.rate_limits import Allowance
from app.service.tables import TableService
from app.service.tickets import Tickets
from app.service.tokens import Tokens, hash_token
from app.settings import Settings
from app.store.repo import Loaded, StoredEvent

log = logging.getLogger(__name__)

router = APIRouter(tags=["live"])

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHORIZED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_INTERNAL = 1011

T = TypeVar("T")

# The query parameters of the player's socket (the table's socket reads its own: see table_ws).
Token = Annotated[str | None, Query(description="the player's token (or a Bearer header)")]
Ticket = Annotated[str | None, Query(description="a ticket from POST /v1/ws-tickets (single use)")]


def _error(exc: ServiceError | RuleError, message_id: str | None = None) -> dict[str, Any]:
    return {"type": "error", "id": message_id, "code": exc.code, "message": exc.message}


async def _caller(
    websocket: WebSocket, token: str | None, ticket: str | None
) -> tuple[Actor, str] | None:
    """Who opens the socket, and the hash of the token they open it with: by ticket, token or
    Bearer header; None for none of them.

    A browser's page from an origin not in ``Settings.origins()`` is refused first
    (``origin_not_allowed``, 4403); a client that sends no ``Origin`` is not a browser. A
    ticket stands for the token it was issued with, which must still be live.
    """
    origin = websocket.headers.get("origin")
    settings: Settings = websocket.app.state.settings
    if origin is not None and origin.rstrip("/") not in settings.origins():
        raise ForbiddenError("origin_not_allowed", "this origin may not open sockets here")
    tokens: Tokens = websocket.app.state.service.tokens
    if ticket is not None:
        tickets: Tickets = websocket.app.state.tickets
        digest = await tickets.redeem(ticket)
    else:
        raw = token or bearer_token(websocket.headers)
        if raw is None:
            return None
        digest = hash_token(raw)
    return await tokens.resolve(digest), digest


class _Close(NamedTuple):
    """A close in a socket's outbox: the last thing written."""

    code: int
    reason: str


class Socket(Graced):
    """One accepted WebSocket: messages go out in order through a bounded outbox, written by a
    task that runs only while there is something to send (an idle socket holds no task and no
    queue); a client that does not keep up is closed with 4008; one whose token is revoked
    with 4401 (``end``)."""

    __slots__ = (
        "_allowance",
        "_full_since",
        "_outbox",
        "_room",
        "_wire",
        "_writer",
        "closing",
        "queue_limit",
        "websocket",
    )

    def __init__(self, websocket: WebSocket, queue_limit: int = 256) -> None:
        self.websocket = websocket
        self.queue_limit = queue_limit
        # Messages waiting to be written; None when there are none. A ``_Close`` in it is the
        # socket's close. Past ``queue_limit`` only the table's feed adds (it never waits), up
        # to ``OVERFLOW`` more before the client counts as slow at once.
        self._outbox: deque[str | _Close] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._full_since: float | None = None  # when the outbox last reached its limit
        self._room: asyncio.Event | None = None  # for ``send`` waiting on a full outbox
        self.closing = False
        # The socket's count against ``rate_limit_socket``, shared with its protocol, which
        # counts the pings and pongs (``app.api.edge.protocols``); its own under another server.
        extensions = websocket.scope.get("extensions") or {}
        self._allowance: Allowance | None = (
            extensions[ALLOWANCE]
            if ALLOWANCE in extensions
            else Allowance.of(websocket.app.state.settings.rate_limit_socket)
        )
        self._wire: Wire | None = None  # the transport, for shared frames (``app.api.live.wire``)

    @property
    def wire(self) -> Wire | None:
        return self._wire

    def idle(self) -> bool:
        """Open, with nothing waiting to be written."""
        return not self.closing and self._outbox is None and self._writer is None

    async def accept(self) -> None:
        """Accept the socket; then find its wire, where the server allows one."""
        await self.websocket.accept()
        self._wire = self.websocket.scope.get("extensions", {}).get(WIRE)

    def offer(self, message: str, framed: bytes | None = None) -> None:
        """Queue an encoded message without waiting (shared by every socket of an audience:
        see ``Frames``; ``framed``: its frame, ``app.api.live.wire.frame``, shared too). An outbox
        still full ``SEND_GRACE`` s after it filled closes the socket with 4008 after the first
        ``queue_limit`` messages (``_check``)."""
        if self.closing:
            return
        box = self._outbox
        if box is None:
            if self._send_now(message, framed):
                return
            box = self._outbox = deque()
        box.append(message)
        size = len(box)
        if size >= self.queue_limit:
            if size > self.queue_limit + OVERFLOW:
                self._slow()
                return
            if self._full_since is None:
                loop = asyncio.get_running_loop()
                self._full_since = loop.time()
                loop.call_later(SEND_GRACE, self._check)
        if self._writer is None:
            self._writer = asyncio.create_task(self._write())

    def offer_many(self, messages: list[str], framed: bytes) -> None:
        """Queue ``messages`` in order (``framed``: their frames joined, written at once on the
        wire when nothing is queued), as ``offer`` does each."""
        wire = self._wire
        if wire is not None and not self.closing and self._outbox is None:
            done = wire.write(framed, len(messages))
            if done == SENT:
                return
            if done == CLOSED:
                self._gone()
                return
        for message in messages:
            self.offer(message)

    def _send_now(self, message: str, framed: bytes | None) -> bool:
        """Send ``message`` at once when the transport takes it without waiting (nothing is
        queued, nothing being written): no task, no queue. False: queue it.

        With a wire (``app.api.live.wire``) the frame's bytes are written to the transport, unless
        it is paused. Else the ASGI send of a text message runs to its end without suspending
        unless the server's transport is paused (its write buffer above the high-water mark: a
        client that does not read); it then suspends before writing anything, and is closed
        here unsent. Either way a paused transport's message goes through the outbox and its
        writer task, whose ASGI send waits for the transport."""
        wire = self._wire
        if wire is not None:
            done = wire.write(frame(message) if framed is None else framed)
            if done == SENT:
                return True
            if done == CLOSED:
                self._gone()  # the client left, or the socket is closing
                return True
            return False
        step = self.websocket.send_text(message)
        try:
            step.send(None)
        except StopIteration:
            return True
        except (WebSocketDisconnect, OSError, RuntimeError):
            self._gone()  # the client left
            return True
        except Exception:
            log.exception("websocket send failed")
            self._gone()
            return True
        step.close()
        return False

    async def send(self, message: dict[str, Any]) -> None:
        """Queue ``message`` (see ``send_text``)."""
        await self.send_text(text(message))

    async def send_text(self, message: str) -> None:
        """Queue a reply to the client: with ``queue_limit`` waiting, wait for room first (a
        burst, such as a catch-up, drains; a client that does not read is closed meanwhile)."""
        while (
            not self.closing and self._outbox is not None and len(self._outbox) >= self.queue_limit
        ):
            if self._room is None:
                self._room = asyncio.Event()
            self._room.clear()
            await self._room.wait()
        self.offer(message)

    def _slow(self) -> None:
        """Close with 4008 after the first ``queue_limit`` messages queued."""
        self.closing = True
        SLOW_CONSUMERS.inc()
        box = self._outbox
        if box is None:
            box = self._outbox = deque()
        while len(box) > self.queue_limit:
            box.pop()
        box.append(_Close(CLOSE_SLOW_CONSUMER, SLOW_REASON))
        if self._room is not None:
            self._room.set()
        if self._writer is None:
            self._writer = asyncio.create_task(self._write())

    def end(self, code: int, reason: str, last: str | None = None) -> None:
        """Close with ``code`` once what is being written is out: nothing else queued is sent
        but ``last``, and the client's messages are read but no longer answered."""
        if self.closing:
            return
        self.closing = True
        box = self._outbox
        if box is None:
            box = self._outbox = deque()
        box.clear()
        if last is not None:
            box.append(last)
        box.append(_Close(code, reason))
        if self._room is not None:
            self._room.set()
        if self._writer is None:
            self._writer = asyncio.create_task(self._write())

    def revoked(self) -> None:
        """The token this socket was opened with was revoked (``Tokens.hold``): 4401."""
        self.end(CLOSE_REVOKED, REVOKED_REASON, REVOKED_ERROR)

    async def _write(self) -> None:
        box = self._outbox
        assert box is not None
        try:
            while box:
                message = box.popleft()
                if isinstance(message, _Close):
                    box.clear()
                    await self.websocket.close(message.code, message.reason)
                    return
                await self.websocket.send_text(message)
                if len(box) < self.queue_limit:
                    self._full_since = None
                    if self._room is not None:
                        self._room.set()
        except (WebSocketDisconnect, OSError, RuntimeError):
            self._gone()  # the client left (Starlette: RuntimeError once it is closed)
        except Exception:
            log.exception("websocket writer failed")
            self._gone()
            with contextlib.suppress(Exception):
                await self.websocket.close(CLOSE_INTERNAL)
        finally:
            self._writer = None
            if not box:
                self._outbox = None

    def _gone(self) -> None:
        self.closing = True
        if self._outbox is not None:
            self._outbox.clear()
        if self._room is not None:
            self._room.set()

    def stop(self) -> None:
        """The session ended: nothing more is written."""
        self._gone()
        if self._writer is not None:
            self._writer.cancel()

    async def refuse(self, code: int, exc: ServiceError) -> None:
        """Accept only to say why, then close with ``code``."""
        await self.websocket.accept()
        await self.websocket.send_text(text(_error(exc)))
        await self.websocket.close(code)

    async def serve(self, *loops: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``loops`` until any ends (the client left, or a loop failed); then close. One
        loop runs in the calling task (the ASGI session's own)."""
        failed: list[BaseException] = []
        if len(loops) == 1:
            try:
                await loops[0]()
            except Exception as error:
                failed.append(error)
        else:
            tasks = [asyncio.create_task(loop()) for loop in loops]
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            failed = [e for t in done if not t.cancelled() and (e := t.exception())]
        gone = self.websocket.client_state != WebSocketState.CONNECTED
        for exc in failed:
            if not gone and not isinstance(exc, WebSocketDisconnect | OSError):
                log.error("websocket session failed", exc_info=exc)
                self.stop()
                with contextlib.suppress(Exception):
                    await self.websocket.close(CLOSE_INTERNAL)
        self.stop()

    async def requests(self) -> AsyncIterator[MoveMessage | PingMessage]:
        """The client's messages until it disconnects; a malformed one is answered here.

        Read only once the first message (the view) is queued, so it comes first."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if self.closing:
                continue  # closed by the server (``end``): only the client's close is awaited
            try:
                if self._allowance is not None:
                    self._allowance.hit()
            except RateLimitedError as exc:
                await self.send(_error(exc))
                continue
            parsed = parse_message(message.get("text") or message.get("bytes") or b"")
            if isinstance(parsed, dict):
                await self.send(parsed)
                continue
            yield parsed


def parse_message(raw: str | bytes) -> MoveMessage | PingMessage | dict[str, Any]:
    """A client's message, or the ``invalid_message`` error that answers it."""
    try:
        return CLIENT_MESSAGES.validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return {
            "type": "error",
            "id": None,
            "code": "invalid_message",
            "message": f"{where}: {first['msg']}" if where else first["msg"],
        }


def _spectator_move(message: MoveMessage) -> dict[str, Any]:
    exc = UnauthenticatedError("unauthorized", "connect with your token to play")
    return _error(exc, message.id)


class ParkedAnswers:
    """The answers to parked sockets' messages (``app.api.live.parking``), as ``requests`` and
    ``TableStream.receive`` give them through ASGI: a move goes through the pipeline as the
    member's (a watcher who took a seat meanwhile plays), or is refused to a spectator."""

    def __init__(self, service: TableService) -> None:
        self.service = service

    async def __call__(
        self, member: Member, table_id: str, allowance: Allowance | None, raw: str | bytes
    ) -> str:
        try:
            if allowance is not None:
                allowance.hit()
        except RateLimitedError as exc:
            return text(_error(exc))
        parsed = parse_message(raw)
        if isinstance(parsed, MoveMessage):
            return text(await _move(self.service, table_id, member.actor, parsed, member.token))
        if isinstance(parsed, PingMessage):
            return text({"type": "pong", "id": parsed.id})
        return text(parsed)


async def _move(
    service: TableService,
    table_id: str,
    actor: Actor | None,
    message: MoveMessage,
    token: str | None,
) -> dict[str, Any]:
    """A move sent on a table's socket, through the one pipeline: its ``ack`` or ``error``.

    The socket's token (its hash) is resolved again first, as an HTTP move's is: a revocation
    this process missed on the bus (Redis down) stops it acting ``token_cache_seconds`` after
    at most, and ends it (``Tokens.check``)."""
    if actor is None:
        return _spectator_move(message)
    try:
        if token is not None:
            await service.tokens.check(token)
        action = Action.from_dict(message.model_dump(include={"kind", "card"}))
        result = await service.submit(
            table_id, actor, Play(action), expected_version=message.expected_version
        )
    except (ServiceError, RuleError) as exc:
        return _error(exc, message.id)
    body = result.body
    return {
        "type": "ack",
        "id": message.id,
        "version": body["version"],
        "seq": body["seq"],
        "table": body["table"],
    }


class TableStream:
    """One recipient's session on a table: its catch-up, then its place in the table's feed
    (``app.api.live.audiences``), which sends it the live events; client moves and pings here."""

    __slots__ = ("actor", "feeds", "frames", "service", "settings", "socket", "table_id", "token")

    def __init__(
        self,
        socket: Socket,
        service: TableService,
        settings: Settings,
        table_id: str,
        actor: Actor | None,
        *,
        token: str | None = None,
    ) -> None:
        self.socket = socket
        self.service = service
        self.settings = settings
        self.table_id = table_id
        self.actor = actor
        self.token = token  # the hash of the token the socket was opened with
        app = socket.websocket.app
        # Shared with every socket of this process: each message rendered once per audience.
        self.frames: Frames = app.state.frames
        self.feeds: Feeds = _feeds(app)

    async def stream(self, since: int | None) -> None:
        """Join the table's feed, catch up, then answer the client until it leaves."""
        player_id = self.actor.player_id if self.actor else None
        notes = None if player_id is None else self.service.hub.player(player_id)
        member = Member(self.socket, self.actor, notes, self.token)
        try:
            while True:
                # Joined before the store is read, so nothing falls between the two.
                feed = self.feeds.join(self.table_id, member)
                if await self._catch_up(feed, member, since):
                    break
                self.feeds.leave(member)  # too far behind meanwhile: a full view
                member = Member(self.socket, self.actor, notes, self.token)
                since = None
            if member.seat is None and self._park(member):
                # Served below ASGI from now on (app.api.live.parking); the feed closes its notes
                # when it leaves.
                notes = None
                return
            # Only now are the client's messages read: they are answered after the view.
            await self.receive()
        except BaseException:
            self.feeds.leave(member)
            raise
        else:
            self.feeds.leave(member)
        finally:
            if notes is not None:
                notes.close()

    def _park(self, member: Member) -> bool:
        """Serve this live spectator (no seat, with or without a player) below ASGI
        (``app.api.live.parking``), where the server allows it and the socket is idle; False: it
        stays as it is."""
        socket = self.socket
        wire = socket.wire
        if not self.settings.ws_park_spectators or wire is None or not socket.idle():
            return False
        session = socket.websocket.scope.get("extensions", {}).get(SESSION)
        if session is None:
            return False
        parking = _parking(socket.websocket.app)
        parked = wire.detach(
            lambda detached: parking.park(detached, member, session, self.table_id)
        )
        if parked is None:
            return False
        member.outbox = parked
        session.detach(socket.websocket.scope)
        socket.stop()
        return True

    async def _catch_up(self, feed: Feed, member: Member, since: int | None) -> bool:
        loaded = await feed.snapshot()
        member.seat = seat_of(loaded, self.actor)
        annotate(seat=member.seat)
        backlog = None if since is None else await self._backlog(loaded, since)
        if since is not None and backlog is not None:
            member.last = since
            for stored in backlog:
                member.give(stored, self.frames)
        else:
            self.socket.offer(self.frames.view(self.service, loaded, self.actor))
            member.last = loaded.table.last_seq
        state = loaded.state
        if (
            member.seat is not None
            and state is not None
            and state.status == "playing"
            and state.hand.phase != "over"
            and state.hand.turn == member.seat
        ):
            self.socket.offer(
                text(
                    {
                        "type": "your_turn",
                        "table_id": self.table_id,
                        "hand_number": state.hand.number,
                        "phase": state.hand.phase,
                    }
                )
            )
        return await feed.go_live(member)

    async def _backlog(self, loaded: Loaded, since: int) -> list[StoredEvent] | None:
        """Events after ``since`` when they can be resumed; None when only a view will do."""
        head = loaded.table.last_seq
        limit = self.settings.ws_resume_limit
        if since > head or head - since > limit:
            return None
        backlog = await self.service.log_since(self.table_id, since, limit + 1)
        if len(backlog) > limit or any(
            s.match_number != loaded.table.match_number for s in backlog if s.seq <= head
        ):
            return None
        return backlog

    async def receive(self) -> None:
        """Answer the client's pings and submit its moves through the pipeline."""
        async for message in self.socket.requests():
            if isinstance(message, MoveMessage):
                await self.socket.send(await self._move(message))
            else:
                await self.socket.send({"type": "pong", "id": message.id})

    async def _move(self, message: MoveMessage) -> dict[str, Any]:
        return await _move(self.service, self.table_id, self.actor, message, self.token)


def _parking(app: Any) -> Parking:
    """This process's parked spectators, made on first use."""
    parking: Parking | None = getattr(app.state, "parking", None)
    if parking is None:
        parking = app.state.parking = Parking(
            _feeds(app),
            ParkedAnswers(app.state.service),
            app.state.settings.ws_send_queue,
        )
    return parking


def _feeds(app: Any) -> Feeds:
    """This process's table feeds, made on first use."""
    feeds: Feeds | None = getattr(app.state, "feeds", None)
    if feeds is None:
        feeds = app.state.feeds = Feeds(app.state.service, app.state.settings, app.state.frames)
    return feeds


async def table_ws(websocket: WebSocket) -> None:
    """A table's live stream for a seat (with its ticket or token) or a spectator (without).

    A plain Starlette route (registered below): FastAPI's parameter machinery would stay on the
    stack of every open socket for its whole life, about 4 KB each."""
    table_id: str = websocket.path_params["table_id"]
    query = websocket.query_params
    since, token, ticket = query.get("since"), query.get("token"), query.get("ticket")
    service: TableService = websocket.app.state.service
    settings: Settings = websocket.app.state.settings
    socket = Socket(websocket, settings.ws_send_queue)
    try:
        resume = _since(since)
        actor, digest = await _caller(websocket, token, ticket) or (None, None)
        _admit(websocket, actor)
        if _feeds(websocket.app).feed_of(table_id) is None:  # else the table is known
            await service.load(table_id)
    except RateLimitedError as exc:
        await socket.refuse(CLOSE_TOO_MANY, exc)
        return
    except InvalidError as exc:
        await socket.refuse(CLOSE_BAD_REQUEST, exc)
        return
    except UnauthenticatedError as exc:
        await socket.refuse(CLOSE_UNAUTHORIZED, exc)
        return
    except ForbiddenError as exc:
        await socket.refuse(CLOSE_FORBIDDEN, exc)
        return
    except NotFoundError as exc:
        await socket.refuse(CLOSE_NOT_FOUND, exc)
        return
    await socket.accept()
    stream = TableStream(socket, service, settings, table_id, actor, token=digest)
    await socket.serve(lambda: stream.stream(resume))


router.add_websocket_route("/v1/tables/{table_id}/ws", table_ws)


def _admit(websocket: WebSocket, actor: Actor | None) -> None:
    """Count this socket against the caps of its address and its player (``too_many_sockets``
    beyond one); its session gives the count back at its close."""
    session = websocket.scope.get("extensions", {}).get(SESSION)
    if session is None:  # served outside the access log: nothing would give it back
        return
    occupancy: Occupancy = websocket.app.state.occupancy
    client = websocket.client
    session.lease = occupancy.admit(
        None if client is None else client.host, None if actor is None else actor.player_id
    )


def _since(raw: str | None) -> int | None:
    """The ``since`` query parameter: None, or an integer from 0 to ``INT32``, as over HTTP
    (else ``invalid_since``). Its digits are counted before ``int()`` reads them, which raises
    past 4,300."""
    if raw is None:
        return None
    if (
        not raw.isascii()
        or not raw.isdigit()
        or len(raw.lstrip("0")) > len(str(INT32))
        or int(raw) > INT32
    ):
        raise InvalidError("invalid_since", f"since must be an integer from 0 to {INT32}")
    return int(raw)


@router.websocket("/v1/players/me/ws")
async def player_ws(websocket: WebSocket, token: Token = None, ticket: Ticket = None) -> None:
    """The player's notifications across all their tables."""
    service: TableService = websocket.app.state.service
    settings: Settings = websocket.app.state.settings
    socket = Socket(websocket, settings.ws_send_queue)
    try:
        caller = await _caller(websocket, token, ticket)
        if caller is None:
            raise UnauthenticatedError("unauthorized", "a ticket or bearer token is required")
        actor, digest = caller
        _admit(websocket, actor)
    except RateLimitedError as exc:
        await socket.refuse(CLOSE_TOO_MANY, exc)
        return
    except UnauthenticatedError as exc:
        await socket.refuse(CLOSE_UNAUTHORIZED, exc)
        return
    except ForbiddenError as exc:
        await socket.refuse(CLOSE_FORBIDDEN, exc)
        return
    await socket.accept()

    async def forward() -> None:
        while True:  # a fresh subscription after an overflow: notifications are only hints
            async with service.hub.player(actor.player_id) as notes:
                while not notes.overflowed:
                    try:
                        async with asyncio.timeout(settings.ws_heartbeat or None):
                            note = await notes.get()
                    except TimeoutError:
                        await socket.send({"type": "heartbeat", "seq": None})
                        continue
                    if note is not None:
                        await socket.send(note.to_dict())

    async def receive() -> None:
        async for message in socket.requests():
            if isinstance(message, MoveMessage):
                exc = ServiceError("not_a_table", "send moves on the table's socket")
                await socket.send(_error(exc, message.id))
            else:
                await socket.send({"type": "pong", "id": message.id})

    service.tokens.hold(digest, socket)  # a revocation closes the socket (4401)
    try:
        await socket.serve(forward, receive)
    finally:
        service.tokens.release(digest, socket)
