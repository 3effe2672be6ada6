"""The messages the server sends on a socket: each one built here, encoded as the text frame
clients read. docs/protocol.md describes them; ``app.api.live.messages`` is their schema."""

from __future__ import annotations

from typing import Any, Final

import orjson

from app.bus.hub import Notification
from app.engine import RuleError
from app.errors import ServiceError
from app.service.rate_limits import SOCKET_MESSAGE
from app.table.model import StoredEvent


def text(message: dict[str, Any]) -> str:
    """A message as the text frame clients expect."""
    return orjson.dumps(message).decode()


def _error(code: str, message: str, message_id: str | None = None) -> str:
    return text({"type": "error", "id": message_id, "code": code, "message": message})


def error(exc: ServiceError | RuleError, message_id: str | None = None) -> str:
    """A refused message or connection (``message_id``: the client's message it answers)."""
    return _error(exc.code, exc.message, message_id)


def invalid_message(detail: str) -> str:
    """A client's message that is not one of the protocol's."""
    return _error("invalid_message", detail)


# The last message of a socket whose token was revoked.
TOKEN_REVOKED: Final = _error("token_revoked", "the token this socket was opened with was revoked")
# The last message of a socket whose client sent more control frames than its limit.
FLOODED: Final = _error("rate_limited", SOCKET_MESSAGE)


def event_message(stored: StoredEvent, seat: int | None) -> dict[str, Any]:
    """The ``event`` or ``skip`` message of a logged event for ``seat`` (None: spectator)."""
    if not stored.event.visible_to(seat):
        return {"type": "skip", "seq": stored.seq}
    return {"type": "event", "seq": stored.seq, "event": stored.event.for_recipient(seat)}


def view(table: dict[str, Any]) -> str:
    """The full view of a table (``TableService.render``) for one recipient."""
    return text({"type": "view", "seq": table["seq"], "version": table["version"], "table": table})


def ack(message_id: str | None, body: dict[str, Any]) -> str:
    """A move went through the pipeline: ``body`` is its result (version, seq, your view)."""
    return text(
        {
            "type": "ack",
            "id": message_id,
            "version": body["version"],
            "seq": body["seq"],
            "table": body["table"],
        }
    )


def pong(message_id: str | None) -> str:
    return text({"type": "pong", "id": message_id})


def your_turn(table_id: str, hand_number: int, phase: str) -> str:
    return text(
        {"type": "your_turn", "table_id": table_id, "hand_number": hand_number, "phase": phase}
    )


def heartbeat(seq: int | None) -> str:
    """After ``ws_heartbeat`` s of silence; ``seq``: the last sent (None on the player's socket)."""
    return text({"type": "heartbeat", "seq": seq})


def note(notification: Notification) -> str:
    """A player's notification (``your_turn``, ``opponent_joined``, ``match_finished``,
    ``rematch_offered``)."""
    return text(notification.to_dict())
