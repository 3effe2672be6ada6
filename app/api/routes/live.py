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
- Never a silent jump: the stream keeps the last seq it sent; a live event further on (an
  event lost between processes, a bus reconnect) is preceded by the missing ones, read from the
  log. While the bus is degraded (Redis down) the stream reads the log every
  ``hub.POLL_INTERVAL`` s itself, so events committed by other processes still arrive.
- A recipient whose subscription falls ``hub.QUEUE_LIMIT`` events behind gets a fresh ``view``.
- A slow consumer: at most ``ws_send_queue`` messages wait to be sent to one socket; when it is
  still full ``SEND_GRACE`` (5) seconds later, the socket is closed with code 4008 (reason
  ``slow consumer: reconnect with since``) after the queued messages, so the client reconnects
  with ``?since=`` its last seq and loses nothing. A client that does not
  read at all is cut by the keepalive (``ws_ping_interval`` + ``ws_ping_timeout``).
- The first message is always the ``view`` (or the catch-up): the client's messages are
  answered only after it.
- A ``since`` that is not an integer ≥ 0: an ``error`` (``invalid_since``), then close code 4400.
- Client messages: ``{"type": "move", "kind": ..., "card"?, "expected_version"?, "id"?}`` goes
  through the one command pipeline like an HTTP move and is answered by ``ack`` (version, seq,
  your view) or ``error`` (the HTTP error codes); ``{"type": "ping"}`` gets ``pong``.

``/v1/players/me/ws[?ticket=K | ?token=T]``: a ticket or token required (4401 otherwise);
forwards the player's notifications across all their tables (``your_turn``,
``opponent_joined``, ``match_finished``) and heartbeats, so a player who is away learns when to
come back.

Every message's shape is a model in ``app/api/messages.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, WebSocket
from prometheus_client import Counter
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect, WebSocketState

from app.api.deps import bearer_token
from app.api.frames import Frames, text
from app.api.messages import CLIENT_MESSAGES, MoveMessage, PingMessage
from app.engine import Action, RuleError
from app.logs import annotate
from app.service.commands import Actor, Play
from app.service.errors import (
    ForbiddenError,
    InvalidError,
    NotFoundError,
    RateLimitedError,
    ServiceError,
    UnauthenticatedError,
)
from app.service.hub import POLL_INTERVAL, Notification, Subscription
from app.service.rate_limits import RateLimits
from app.service.tables import TableService
from app.service.tickets import Tickets
from app.settings import Settings
from app.store.repo import Loaded, StoredEvent

log = logging.getLogger(__name__)

router = APIRouter(tags=["live"])

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHORIZED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_SLOW_CONSUMER = 4008
CLOSE_INTERNAL = 1011

T = TypeVar("T")

# How long a send may wait for room in a full socket queue before the client is a slow
# consumer (seconds): a burst the client reads drains well within it.
SEND_GRACE = 5.0
# The longest a table stream waits before it looks at the bus's health again (seconds).
AWAKE = 1.0

GAP_FILLS = Counter(
    "ginrummy_ws_gap_fills_total",
    "Times a table socket read missing events from the log (a gap, a bus reconnect, polling)",
)
SLOW_CONSUMERS = Counter(
    "ginrummy_ws_slow_consumers_total", "Sockets closed because the client did not keep up"
)

# Parsed by the route itself, so a bad value is answered on the socket (not a 403 handshake).
Since = Annotated[str | None, Query(description="the last seq you have (an integer >= 0)")]
Token = Annotated[str | None, Query(description="the player's token (or a Bearer header)")]
Ticket = Annotated[str | None, Query(description="a ticket from POST /v1/ws-tickets (single use)")]


def _error(exc: ServiceError | RuleError, message_id: str | None = None) -> dict[str, Any]:
    return {"type": "error", "id": message_id, "code": exc.code, "message": exc.message}


async def _caller(websocket: WebSocket, token: str | None, ticket: str | None) -> Actor | None:
    """Who opens the socket: by ticket, token or Bearer header; None for none of them.

    A browser's page from an origin not in ``Settings.origins()`` is refused first
    (``origin_not_allowed``, 4403); a client that sends no ``Origin`` is not a browser.
    """
    origin = websocket.headers.get("origin")
    settings: Settings = websocket.app.state.settings
    if origin is not None and origin.rstrip("/") not in settings.origins():
        raise ForbiddenError("origin_not_allowed", "this origin may not open sockets here")
    if ticket is not None:
        tickets: Tickets = websocket.app.state.tickets
        return await tickets.redeem(ticket)
    raw = token or bearer_token(websocket.headers)
    service: TableService = websocket.app.state.service
    return None if raw is None else await service.authenticate(raw)


class Socket:
    """One accepted WebSocket: messages go out in order through a bounded queue (a client that
    does not keep up is closed with 4008), and a vanished client ends the session."""

    def __init__(self, websocket: WebSocket, queue_limit: int = 256) -> None:
        self.websocket = websocket
        self.queue_limit = queue_limit
        # Unbounded underneath: the limit is enforced in ``send``, so the close always fits.
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._closing = False
        self._room = asyncio.Event()  # set by the writer when the queue is below its limit
        # Set once the first message (the view) is queued: the client's messages wait for it.
        self.ready = asyncio.Event()
        self._limits: RateLimits = websocket.app.state.rate_limits
        self._key = uuid.uuid4().hex

    async def send(self, message: dict[str, Any]) -> None:
        """Queue ``message`` (see ``send_text``)."""
        await self.send_text(text(message))

    async def send_text(self, message: str) -> None:
        """Queue an encoded message (shared by every socket of an audience: see ``Frames``).
        With ``queue_limit`` waiting, wait up to ``SEND_GRACE`` s for room (a burst, such as a
        catch-up, drains); still full, queue the 4008 close instead."""
        if self._closing:
            return
        if self._outbox.qsize() >= self.queue_limit:
            self._room.clear()
            try:
                async with asyncio.timeout(SEND_GRACE):
                    await self._room.wait()
            except TimeoutError:
                self._closing = True
                SLOW_CONSUMERS.inc()
                self._outbox.put_nowait(None)
                return
        self._outbox.put_nowait(message)

    async def refuse(self, code: int, exc: ServiceError) -> None:
        """Accept only to say why, then close with ``code``."""
        await self.websocket.accept()
        await self.websocket.send_text(text(_error(exc)))
        await self.websocket.close(code)

    async def _write(self) -> None:
        while (message := await self._outbox.get()) is not None:
            if self._outbox.qsize() < self.queue_limit:
                self._room.set()
            await self.websocket.send_text(message)
        await self.websocket.close(CLOSE_SLOW_CONSUMER, "slow consumer: reconnect with since")

    async def serve(self, *loops: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``loops`` until any ends (the client left, or a loop failed); then close."""
        tasks = [asyncio.create_task(loop()) for loop in (self._write, *loops)]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        failed = [t.exception() for t in done if not t.cancelled() and t.exception()]
        gone = self.websocket.client_state != WebSocketState.CONNECTED
        for exc in failed:
            if not gone and not isinstance(exc, WebSocketDisconnect | OSError):
                log.error("websocket session failed", exc_info=exc)
                with contextlib.suppress(Exception):
                    await self.websocket.close(CLOSE_INTERNAL)

    async def requests(self) -> AsyncIterator[MoveMessage | PingMessage]:
        """The client's messages until it disconnects; a malformed one is answered here.

        Each is handled only once the first message has been queued, so it comes first."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            await self.ready.wait()
            try:
                await self._limits.hit("socket", self._key)
            except RateLimitedError as exc:
                await self.send(_error(exc))
                continue
            raw = message.get("text") or message.get("bytes") or b""
            try:
                parsed = CLIENT_MESSAGES.validate_json(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                await self.send(
                    {
                        "type": "error",
                        "id": None,
                        "code": "invalid_message",
                        "message": f"{where}: {first['msg']}" if where else first["msg"],
                    }
                )
                continue
            yield parsed


class ResyncError(Exception):
    """Too far behind to fill from the log: send a full view."""


class TableStream:
    """One recipient's stream of a table: catch-up, live events, your_turn, client moves."""

    def __init__(
        self,
        socket: Socket,
        service: TableService,
        settings: Settings,
        table_id: str,
        actor: Actor | None,
    ) -> None:
        self.socket = socket
        self.service = service
        self.settings = settings
        self.table_id = table_id
        self.actor = actor
        # Shared with every socket of this process: each message rendered once per audience.
        self.frames: Frames = socket.websocket.app.state.frames
        self.seat: int | None = None
        self.last = 0
        self.epoch = 0

    async def stream(self, since: int | None) -> None:
        """Send the catch-up, then live events until the client leaves; resync on overflow."""
        player_id = self.actor.player_id if self.actor else None
        hub = self.service.hub
        while True:
            # Subscribe before reading the store, so nothing falls between the two.
            async with hub.table(self.table_id) as events, _notes(self.service, player_id) as notes:
                self.epoch = hub.epoch
                await self._catch_up(since)
                self.socket.ready.set()
                with contextlib.suppress(ResyncError):
                    await self._follow(events, notes)
            since = None  # overflowed, or too far behind: a full view

    async def _follow(
        self, events: Subscription[StoredEvent], notes: Subscription[Notification] | None
    ) -> None:
        """Live events (filling any gap from the log) and your_turn, until an overflow."""
        hub = self.service.hub
        heartbeat = self.settings.ws_heartbeat
        quiet_since = time.monotonic()
        while not events.overflowed:
            degraded = hub.health() is not None
            # Awake at least every second, so a bus that turns degraded is noticed at once.
            wait = POLL_INTERVAL if degraded else min(heartbeat or AWAKE, AWAKE)
            item: StoredEvent | None = None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait or None):
                    item = await events.get()
                if item is None:
                    return  # overflowed
            sent = self.last
            if degraded or hub.epoch != self.epoch:
                # Other processes' events may be missing: read the log once.
                self.epoch = hub.epoch
                await self._fill(None)
            if item is not None:
                await self._send_event(item)
                while (more := events.get_nowait()) is not None:
                    await self._send_event(more)
                # The pipeline notifies right after it publishes: the turn is already here.
                while notes is not None and (note := notes.get_nowait()) is not None:
                    if note.type == "your_turn" and note.table_id == self.table_id:
                        await self.socket.send(note.to_dict())
            now = time.monotonic()
            if self.last != sent or item is not None:
                quiet_since = now
            elif heartbeat and now - quiet_since >= heartbeat:
                await self.socket.send({"type": "heartbeat", "seq": self.last})
                quiet_since = now

    async def _catch_up(self, since: int | None) -> None:
        loaded = await self.service.load(self.table_id)
        self.seat = loaded.seat_of(self.actor.player_id if self.actor else None)
        annotate(seat=self.seat)
        backlog = None if since is None else await self._backlog(loaded, since)
        if since is not None and backlog is not None:
            self.last = since
            for stored in backlog:
                await self._send_event(stored)
        else:
            await self.socket.send_text(self.frames.view(self.service, loaded, self.actor))
            self.last = loaded.table.last_seq
        state = loaded.state
        if (
            self.seat is not None
            and state is not None
            and state.status == "playing"
            and state.hand.phase != "over"
            and state.hand.turn == self.seat
        ):
            await self.socket.send(
                {
                    "type": "your_turn",
                    "table_id": self.table_id,
                    "hand_number": state.hand.number,
                    "phase": state.hand.phase,
                }
            )

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

    async def _fill(self, upto: int | None) -> None:
        """Send the logged events after the last one sent (up to seq ``upto``, or all): a gap,
        a bus reconnect, or polling while the bus is degraded. Too many: a full view."""
        limit = self.settings.ws_resume_limit
        wanted = limit + 1 if upto is None else min(upto - self.last, limit + 1)
        backlog = await self.service.log_since(self.table_id, self.last, wanted)
        if len(backlog) > limit:
            raise ResyncError
        if backlog:
            GAP_FILLS.inc()
        for stored in backlog:
            await self._send_one(stored)

    async def _send_event(self, stored: StoredEvent) -> None:
        """Send a live event, after the ones missing before it; never one already sent."""
        if stored.seq <= self.last:
            return
        if stored.seq > self.last + 1:
            await self._fill(stored.seq - 1)
        await self._send_one(stored)

    async def _send_one(self, stored: StoredEvent) -> None:
        if stored.seq <= self.last:
            return
        event = stored.event
        if (
            self.actor is not None
            and event.type == "player_joined"
            and event.public["player"]["id"] == self.actor.player_id
        ):
            self.seat = int(event.public["seat"])
        await self.socket.send_text(self.frames.event(stored, self.seat))
        self.last = stored.seq

    async def receive(self) -> None:
        """Answer the client's pings and submit its moves through the pipeline."""
        async for message in self.socket.requests():
            if isinstance(message, MoveMessage):
                await self.socket.send(await self._move(message))
            else:
                await self.socket.send({"type": "pong", "id": message.id})

    async def _move(self, message: MoveMessage) -> dict[str, Any]:
        if self.actor is None:
            exc = UnauthenticatedError("unauthorized", "connect with your token to play")
            return _error(exc, message.id)
        try:
            action = Action.from_dict(message.model_dump(include={"kind", "card"}))
            result = await self.service.submit(
                self.table_id,
                self.actor,
                Play(action),
                expected_version=message.expected_version,
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


@contextlib.asynccontextmanager
async def _notes(
    service: TableService, player_id: str | None
) -> AsyncIterator[Subscription[Notification] | None]:
    if player_id is None:
        yield None
        return
    async with service.hub.player(player_id) as sub:
        yield sub


@router.websocket("/v1/tables/{table_id}/ws")
async def table_ws(
    websocket: WebSocket,
    table_id: str,
    since: Since = None,
    token: Token = None,
    ticket: Ticket = None,
) -> None:
    """A table's live stream for a seat (with its ticket or token) or a spectator (without)."""
    service: TableService = websocket.app.state.service
    settings: Settings = websocket.app.state.settings
    socket = Socket(websocket, settings.ws_send_queue)
    try:
        resume = _since(since)
        actor = await _caller(websocket, token, ticket)
        await service.load(table_id)
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
    await websocket.accept()
    stream = TableStream(socket, service, settings, table_id, actor)
    await socket.serve(lambda: stream.stream(resume), stream.receive)


def _since(raw: str | None) -> int | None:
    """The ``since`` query parameter: None, or an integer >= 0 (else ``invalid_since``)."""
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit():
        raise InvalidError("invalid_since", "since must be an integer >= 0 (the last seq)")
    return int(raw)


@router.websocket("/v1/players/me/ws")
async def player_ws(websocket: WebSocket, token: Token = None, ticket: Ticket = None) -> None:
    """The player's notifications across all their tables."""
    service: TableService = websocket.app.state.service
    settings: Settings = websocket.app.state.settings
    socket = Socket(websocket, settings.ws_send_queue)
    try:
        actor = await _caller(websocket, token, ticket)
        if actor is None:
            raise UnauthenticatedError("unauthorized", "a ticket or bearer token is required")
    except UnauthenticatedError as exc:
        await socket.refuse(CLOSE_UNAUTHORIZED, exc)
        return
    except ForbiddenError as exc:
        await socket.refuse(CLOSE_FORBIDDEN, exc)
        return
    await websocket.accept()
    socket.ready.set()

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

    await socket.serve(forward, receive)
