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
from app.api.live.session import TableStream, feeds_of
from app.api.live.socket import Socket
from app.service.commands import Actor
from app.service.errors import (
    ForbiddenError,
    InvalidError,
    NotFoundError,
    RateLimitedError,
    ServiceError,
    UnauthenticatedError,
)
from app.service.tables import TableService
from app.service.tickets import Tickets
from app.service.tokens import Tokens, hash_token
from app.settings import Settings

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

    async def forward() -> None:
        while True:  # a fresh subscription after an overflow: notifications are only hints
            async with service.hub.player(actor.player_id) as notes:
                while not notes.overflowed:
                    try:
                        async with asyncio.timeout(settings.ws_heartbeat or None):
                            note = await notes.get()
                    except TimeoutError:
                        await socket.send_text(client_out.heartbeat(None))
                        continue
                    if note is not None:
                        await socket.send_text(client_out.note(note))

    async def receive() -> None:
        await socket.receive(not_a_table)

    service.tokens.hold(digest, socket)  # a revocation closes the socket (4401)
    try:
        await socket.serve(forward, receive)
    finally:
        service.tokens.release(digest, socket)
