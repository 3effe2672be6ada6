"""WebSockets: a table's live stream, and a player's notifications across all their tables.

``/v1/tables/{table_id}/ws[?since=N][&token=T]``

- Auth: the player's token as ``?token=`` (browsers cannot set headers on the upgrade) or an
  ``Authorization: Bearer`` header. A seated player gets their seat's view and events; anyone
  else (no token, or not seated) is a spectator, exactly as ``GET /v1/tables/{id}``. A bad
  token: an ``error`` message (``unauthorized``), then close code 4401; an unknown table:
  ``error`` (``table_not_found``), then 4404.
- On connect without ``since``: a ``view`` (the full redacted table with its ``seq`` and
  ``version``). With ``since=N``: exactly the events N+1.. from the log, then live ones; when N
  cannot be resumed (more than ``ws_resume_limit`` events behind, from before the current match
  started, or beyond the newest seq) a ``view`` instead.
- Then every event of the table in seq order, contiguous: ``event`` (redacted for this
  recipient) or ``skip`` (only the seq: an event whose redaction carries nothing for this
  recipient). ``your_turn`` follows the events that made it this seat's turn (and comes on
  connect when it already is). ``heartbeat`` after ``ws_heartbeat`` seconds of silence.
- A recipient too slow to keep up (``hub.QUEUE_LIMIT`` events queued) gets a fresh ``view``.
- Client messages: ``{"type": "move", "kind": ..., "card"?, "expected_version"?, "id"?}`` goes
  through the one command pipeline like an HTTP move and is answered by ``ack`` (version, seq,
  your view) or ``error`` (the HTTP error codes); ``{"type": "ping"}`` gets ``pong``.

``/v1/players/me/ws[?token=T]``: token required (4401 otherwise); forwards the player's
notifications across all their tables (``your_turn``, ``opponent_joined``, ``match_finished``)
and heartbeats, so a player who is away learns when to come back.

Every message's shape is a model in ``app/api/messages.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import APIRouter, Query, WebSocket
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect, WebSocketState

from app.api.deps import bearer_token
from app.api.messages import CLIENT_MESSAGES, MoveMessage, PingMessage
from app.engine import Action, Event, RuleError
from app.logs import annotate
from app.service.commands import Actor, Play
from app.service.errors import (
    NotFoundError,
    RateLimitedError,
    ServiceError,
    UnauthenticatedError,
)
from app.service.hub import Notification, Subscription
from app.service.rate_limits import RateLimits
from app.service.tables import TableService
from app.settings import Settings
from app.store.repo import Loaded, StoredEvent

log = logging.getLogger(__name__)

router = APIRouter(tags=["live"])

CLOSE_UNAUTHORIZED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_INTERNAL = 1011

T = TypeVar("T")

Since = Annotated[int | None, Query(ge=0, description="the last seq you have")]
Token = Annotated[str | None, Query(description="the player's token (or a Bearer header)")]


def visible(event: Event, seat: int | None) -> bool:
    """Whether the event's redaction for ``seat`` carries anything (else it goes as a skip)."""
    return bool(event.public) or (seat is not None and seat in event.private)


def frame(stored: StoredEvent, seat: int | None) -> dict[str, Any]:
    """The ``event`` or ``skip`` message of a logged event for ``seat`` (None: spectator)."""
    if not visible(stored.event, seat):
        return {"type": "skip", "seq": stored.seq}
    return {"type": "event", "seq": stored.seq, "event": stored.event.for_recipient(seat)}


def _error(exc: ServiceError | RuleError, message_id: str | None = None) -> dict[str, Any]:
    return {"type": "error", "id": message_id, "code": exc.code, "message": exc.message}


def _token(websocket: WebSocket, token: str | None) -> str | None:
    return token or bearer_token(websocket.headers)


class Socket:
    """One accepted WebSocket: sends are serialised, and a vanished client ends the session."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self._lock = asyncio.Lock()
        self._limits: RateLimits = websocket.app.state.rate_limits
        self._key = uuid.uuid4().hex

    async def send(self, message: dict[str, Any]) -> None:
        text = orjson.dumps(message).decode()  # clients expect text frames
        async with self._lock:
            await self.websocket.send_text(text)

    async def refuse(self, code: int, exc: ServiceError) -> None:
        """Accept only to say why, then close with ``code``."""
        await self.websocket.accept()
        await self.send(_error(exc))
        await self.websocket.close(code)

    async def next(self, sub: Subscription[T], heartbeat: float, seq: int | None) -> T | None:
        """The subscription's next item, sending a heartbeat after each ``heartbeat`` s idle."""
        while True:
            try:
                async with asyncio.timeout(heartbeat or None):
                    return await sub.get()
            except TimeoutError:
                await self.send({"type": "heartbeat", "seq": seq})

    async def serve(self, *loops: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``loops`` until any ends (the client left, or a loop failed); then close."""
        tasks = [asyncio.create_task(loop()) for loop in loops]
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
        """The client's messages until it disconnects; a malformed one is answered here."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
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
        self.seat: int | None = None
        self.last = 0

    async def stream(self, since: int | None) -> None:
        """Send the catch-up, then live events until the client leaves; resync on overflow."""
        player_id = self.actor.player_id if self.actor else None
        while True:
            # Subscribe before reading the store, so nothing falls between the two.
            async with (
                self.service.hub.table(self.table_id) as events,
                _notes(self.service, player_id) as notes,
            ):
                await self._catch_up(since)
                heartbeat = self.settings.ws_heartbeat
                while (item := await self.socket.next(events, heartbeat, self.last)) is not None:
                    await self._send_event(item)
                    while (more := events.get_nowait()) is not None:
                        await self._send_event(more)
                    # The pipeline notifies right after it publishes: the turn is already here.
                    while notes is not None and (note := notes.get_nowait()) is not None:
                        if note.type == "your_turn" and note.table_id == self.table_id:
                            await self.socket.send(note.to_dict())
            since = None  # overflowed: a full view

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
            view = self.service.render(loaded, self.actor)
            await self.socket.send(
                {"type": "view", "seq": view["seq"], "version": view["version"], "table": view}
            )
            self.last = view["seq"]
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

    async def _send_event(self, stored: StoredEvent) -> None:
        if stored.seq <= self.last:
            return
        event = stored.event
        if (
            self.actor is not None
            and event.type == "player_joined"
            and event.public["player"]["id"] == self.actor.player_id
        ):
            self.seat = int(event.public["seat"])
        await self.socket.send(frame(stored, self.seat))
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
    websocket: WebSocket, table_id: str, since: Since = None, token: Token = None
) -> None:
    """A table's live stream for a seat (with its token) or a spectator (without)."""
    service: TableService = websocket.app.state.service
    socket = Socket(websocket)
    raw = _token(websocket, token)
    try:
        actor = None if raw is None else await service.authenticate(raw)
        await service.load(table_id)
    except UnauthenticatedError as exc:
        await socket.refuse(CLOSE_UNAUTHORIZED, exc)
        return
    except NotFoundError as exc:
        await socket.refuse(CLOSE_NOT_FOUND, exc)
        return
    await websocket.accept()
    stream = TableStream(socket, service, websocket.app.state.settings, table_id, actor)
    await socket.serve(lambda: stream.stream(since), stream.receive)


@router.websocket("/v1/players/me/ws")
async def player_ws(websocket: WebSocket, token: Token = None) -> None:
    """The player's notifications across all their tables."""
    service: TableService = websocket.app.state.service
    settings: Settings = websocket.app.state.settings
    socket = Socket(websocket)
    try:
        actor = await service.authenticate(_token(websocket, token))
    except UnauthenticatedError as exc:
        await socket.refuse(CLOSE_UNAUTHORIZED, exc)
        return
    await websocket.accept()

    async def forward() -> None:
        while True:  # a fresh subscription after an overflow: notifications are only hints
            async with service.hub.player(actor.player_id) as notes:
                while (note := await socket.next(notes, settings.ws_heartbeat, None)) is not None:
                    await socket.send(note.to_dict())

    async def receive() -> None:
        async for message in socket.requests():
            if isinstance(message, MoveMessage):
                exc = ServiceError("not_a_table", "send moves on the table's socket")
                await socket.send(_error(exc, message.id))
            else:
                await socket.send({"type": "pong", "id": message.id})

    await socket.serve(forward, receive)
