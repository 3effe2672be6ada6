"""The WebSocket routes: a table's live stream, ``/v1/tables/{table_id}/ws`` (``table_ws``), a
player's notifications across all their tables, ``/v1/players/me/ws`` (``player_ws``), and the
lobby's news, ``/v1/lobby/ws`` (``lobby_ws``).

Here the handshake: who opens the socket (a ticket, a token or a Bearer header; a browser's
origin), the socket caps of its address and player (``app.api.edge.occupancy``), ``since``, and
the close code of a refused handshake (``REFUSALS``). Then a table's socket is a
``TableStream`` (``app.api.live.session``), the player's forwards their notifications (parked
below ASGI where it can be: ``app.api.live.player``). The
protocol is described in docs/protocol.md (WebSocket): what is sent when, the close codes, the
guarantees of order and contiguity.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

from fastapi import APIRouter, Query, WebSocket

from app.api.edge.access import SESSION
from app.api.edge.occupancy import Occupancy
from app.api.edge.protocols import CLOSE_TOO_MANY
from app.api.http.deps import bearer_token
from app.api.http.schemas.common import INT32
from app.api.live import client_out
from app.api.live.client_in import not_a_table
from app.api.live.player import park
from app.api.live.session import TableStream, feeds_of
from app.api.live.socket import Socket
from app.bus.hub import LOBBY
from app.errors import (
    ForbiddenError,
    InvalidError,
    NotFoundError,
    RateLimitedError,
    ServiceError,
    UnauthenticatedError,
)
from app.service.pipeline import TableService
from app.service.tickets import Tickets
from app.service.tokens import Tokens, hash_token
from app.settings import Settings
from app.table.commands import Actor

log = logging.getLogger(__name__)

router = APIRouter(tags=["live"])

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHORIZED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
# The close code of a refused handshake, by its error (the first that matches).
REFUSALS: tuple[tuple[type[ServiceError], int], ...] = (
    (RateLimitedError, CLOSE_TOO_MANY),
    (InvalidError, CLOSE_BAD_REQUEST),
    (UnauthenticatedError, CLOSE_UNAUTHORIZED),
    (ForbiddenError, CLOSE_FORBIDDEN),
    (NotFoundError, CLOSE_NOT_FOUND),
)


# The query parameters of the player's socket (the table's socket reads its own: see table_ws).
Token = Annotated[str | None, Query(description="the player's token (or a Bearer header)")]
Ticket = Annotated[str | None, Query(description="a ticket from POST /v1/ws-tickets (single use)")]


def close_code(exc: ServiceError) -> int | None:
    """The close code a handshake refused with ``exc`` ends with; None: not a refusal."""
    for kind, code in REFUSALS:
        if isinstance(exc, kind):
            return code
    return None


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
        if feeds_of(websocket.app).feed_of(table_id) is None:  # else the table is known
            await service.load(table_id)
    except ServiceError as exc:
        code = close_code(exc)
        if code is None:
            raise
        await socket.refuse(code, exc)
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
    except ServiceError as exc:
        code = close_code(exc)
        if code is None:
            raise
        await socket.refuse(code, exc)
        return
    await socket.accept()
    if park(socket, service.hub, service.tokens, actor.player_id, digest):
        return  # served below ASGI from now on (app.api.live.player)

    async def forward() -> None:
        await _forward(socket, service, actor.player_id, settings.ws_heartbeat)

    async def receive() -> None:
        await socket.receive(not_a_table)

    service.tokens.hold(digest, socket)  # a revocation closes the socket (4401)
    try:
        await socket.serve(forward, receive)
    finally:
        service.tokens.release(digest, socket)


async def _forward(socket: Socket, service: TableService, key: str, heartbeat: float) -> None:
    """Send the notifications to ``key`` (a player, or ``LOBBY``), with a heartbeat after each
    ``heartbeat`` s of silence (0: none)."""
    while True:  # a fresh subscription after an overflow: notifications are only hints
        async with service.hub.player(key) as notes:
            while not notes.overflowed:
                try:
                    async with asyncio.timeout(heartbeat or None):
                        note = await notes.get()
                except TimeoutError:
                    await socket.send_text(client_out.heartbeat(None))
                    continue
                if note is not None:
                    await socket.send_text(client_out.note(note))


@router.websocket("/v1/lobby/ws")
async def lobby_ws(websocket: WebSocket, token: Token = None, ticket: Ticket = None) -> None:
    """The lobby's news (``seek_added``, ``seek_removed``) for anyone; with a ticket or token,
    the player's notifications too (their live seeks live while it is open)."""
    service: TableService = websocket.app.state.service
    settings: Settings = websocket.app.state.settings
    socket = Socket(websocket, settings.ws_send_queue)
    try:
        caller = await _caller(websocket, token, ticket)
        _admit(websocket, None if caller is None else caller[0])
    except ServiceError as exc:
        code = close_code(exc)
        if code is None:
            raise
        await socket.refuse(code, exc)
        return
    await socket.accept()

    async def lobby() -> None:
        await _forward(socket, service, LOBBY, settings.ws_heartbeat)

    async def receive() -> None:
        await socket.receive(not_a_table)

    if caller is None:
        await socket.serve(lobby, receive)
        return
    actor, digest = caller

    async def mine() -> None:
        await _forward(socket, service, actor.player_id, 0)

    service.tokens.hold(digest, socket)
    try:
        await socket.serve(lobby, mine, receive)
    finally:
        service.tokens.release(digest, socket)
