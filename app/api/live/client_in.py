"""The messages a client sends on a socket, parsed and answered in one place (``answer``), for
the sockets served through ASGI and the parked ones alike (docs/protocol.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import ValidationError

from app.api.live import client_out
from app.api.live.messages import CLIENT_MESSAGES, MoveMessage, PingMessage
from app.engine import Action, RuleError
from app.errors import RateLimitedError, ServiceError, UnauthenticatedError
from app.service.pipeline import TableService
from app.service.rate_limits import Allowance
from app.table.commands import Actor, Play

# Answers a move: the socket's ``ack`` or ``error``.
Mover = Callable[[MoveMessage], Awaitable[str]]


async def answer(raw: str | bytes, allowance: Allowance | None, play: Mover) -> str:
    """The reply to one client message: counted against the socket's ``allowance`` first
    (None: no limit; ``rate_limited`` past it), then parsed (``invalid_message``); a ``ping``
    gets its ``pong``, a ``move`` what ``play`` answers."""
    try:
        if allowance is not None:
            allowance.hit()
    except RateLimitedError as exc:
        return client_out.error(exc)
    parsed = parse_message(raw)
    if isinstance(parsed, MoveMessage):
        return await play(parsed)
    if isinstance(parsed, PingMessage):
        return client_out.pong(parsed.id)
    return parsed


async def not_a_table(message: MoveMessage) -> str:
    """A move sent on the player's socket, which has no table."""
    exc = ServiceError("not_a_table", "send moves on the table's socket")
    return client_out.error(exc, message.id)


def parse_message(raw: str | bytes) -> MoveMessage | PingMessage | str:
    """A client's message, or the ``invalid_message`` error that answers it."""
    try:
        return CLIENT_MESSAGES.validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return client_out.invalid_message(f"{where}: {first['msg']}" if where else first["msg"])


def _spectator_move(message: MoveMessage) -> str:
    exc = UnauthenticatedError("unauthorized", "connect with your token to play")
    return client_out.error(exc, message.id)


async def move(
    service: TableService,
    table_id: str,
    actor: Actor | None,
    message: MoveMessage,
    token: str | None,
) -> str:
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
        return client_out.error(exc, message.id)
    return client_out.ack(message.id, result.body)
