"""The AsyncAPI 3 document of the two sockets, served at ``/asyncapi.json``.

Built from the message models the server validates and builds its messages against
(``app.api.live.messages``): each message's payload is that model's JSON schema, with the
example the model carries; the handshake (ticket, token or Bearer header, ``since``) is each
channel's WebSocket binding, and the close codes (``routes.REFUSALS``, ``backpressure``) are in
each channel's description and its ``x-close-codes``. docs/protocol.md tells the same in prose.
``tests/api/test_asyncapi.py`` checks it with the AsyncAPI parser and validates every message a
recorded match sends against it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from app.api.http.schemas.common import INT32
from app.api.live.messages import MESSAGE_MODELS

VERSION = "0.1.0"
REF = "#/components/schemas/{model}"

# What each socket carries, by message type, in each direction.
TABLE_SENDS = ("view", "event", "skip", "your_turn", "heartbeat", "ack", "pong", "error")
PLAYER_SENDS = ("your_turn", "opponent_joined", "match_finished", "heartbeat", "pong", "error")
RECEIVES = ("move", "ping")

# (code, when, what the client does): docs/protocol.md's table of close codes.
CLOSE_CODES: tuple[tuple[int, str, str], ...] = (
    (4400, "`since` is not an integer from 0 to 2^31-1 (error `invalid_since`)", "fix the URL"),
    (
        4401,
        "bad or missing token (`unauthorized`), a used, expired or unknown ticket "
        "(`invalid_ticket`), or the socket's token was revoked (`token_revoked`)",
        "get a token or a new ticket",
    ),
    (4403, "the page's Origin is not allowed (`origin_not_allowed`)", "serve from an allowed one"),
    (4404, "no such table (`table_not_found`)", "give up"),
    (4008, "slow consumer (no error message)", "reconnect with `since` its last seq"),
    (
        4429,
        "too many sockets for this player or address (`too_many_sockets`), or control frames "
        "over the socket's limit (`rate_limited`)",
        "reconnect after a few seconds, with fewer sockets",
    ),
    (1009, "a client message over WS_MAX_MESSAGE_BYTES", "send smaller messages"),
    (1011, "internal error", "reconnect with `since`"),
    (1006, "connection lost (a server went away)", "reconnect with `since`"),
)

_AUTH_QUERY: dict[str, Any] = {
    "ticket": {
        "type": "string",
        "description": "a ticket from POST /v1/ws-tickets: opens one socket, once, within "
        "WS_TICKET_SECONDS (what a browser uses)",
    },
    "token": {"type": "string", "description": "the player's token (kept for older clients)"},
}
_HEADERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "Authorization": {"type": "string", "description": "Bearer <token>, instead of a query"},
        "Origin": {"type": "string", "description": "a browser's; must be in ALLOWED_ORIGINS"},
    },
}


# The close codes the player socket cannot end with: it takes no ``since`` and names no table.
TABLE_ONLY = frozenset({4400, 4404})


def _codes(table: bool) -> tuple[tuple[int, str, str], ...]:
    return tuple(c for c in CLOSE_CODES if table or c[0] not in TABLE_ONLY)


def _description(what: str, table: bool) -> str:
    rows = "\n".join(f"| {code} | {when} | {then} |" for code, when, then in _codes(table))
    return (
        f"{what}\n\nA refused handshake is accepted, answered with one `error` message, then "
        "closed with the code below. Every message is a JSON text frame with a `type`.\n\n"
        f"| close code | when | what the client does |\n|---|---|---|\n{rows}\n"
    )


def _close_codes(table: bool) -> list[dict[str, Any]]:
    return [{"code": code, "when": when, "then": then} for code, when, then in _codes(table)]


def _asyncapi_schema(value: Any) -> Any:
    """A pydantic JSON schema as an AsyncAPI schema: its OpenAPI-style ``discriminator``
    object becomes the property name AsyncAPI's takes."""
    if isinstance(value, dict):
        out = {k: _asyncapi_schema(v) for k, v in value.items()}
        found = value.get("discriminator")
        if isinstance(found, dict):
            out["discriminator"] = found["propertyName"]
        return out
    if isinstance(value, list):
        return [_asyncapi_schema(v) for v in value]
    return value


def _schemas() -> dict[str, Any]:
    models: list[type[BaseModel]] = list(MESSAGE_MODELS.values())
    _, top = models_json_schema([(m, "serialization") for m in models], ref_template=REF)
    schemas: dict[str, Any] = _asyncapi_schema(top["$defs"])
    for model in models:  # every message carries its type (the models default it)
        schema = schemas[model.__name__]
        schema["required"] = ["type", *(f for f in schema.get("required", []) if f != "type")]
    return schemas


def _message(kind: str, model: type[BaseModel]) -> dict[str, Any]:
    extra = model.model_config.get("json_schema_extra")
    found = extra.get("examples") if isinstance(extra, dict) else None
    examples = found if isinstance(found, list) else []
    doc = (model.__doc__ or kind).strip()
    return {
        "name": kind,
        "title": kind,
        "summary": doc.splitlines()[0],
        "contentType": "application/json",
        "payload": {"$ref": REF.format(model=model.__name__)},
        "examples": [{"name": kind, "payload": e} for e in examples],
    }


def _channel(address: str, what: str, sends: tuple[str, ...], query: dict[str, Any]) -> Any:
    kinds = (*sends, *RECEIVES)
    table = bool(query)
    return {
        "address": address,
        "title": what.split(":", 1)[0],
        "description": _description(what, table),
        "messages": {k: {"$ref": f"#/components/messages/{k}"} for k in kinds},
        "bindings": {
            "ws": {
                "method": "GET",
                "query": {"type": "object", "properties": {**query, **_AUTH_QUERY}},
                "headers": _HEADERS,
                "bindingVersion": "0.1.0",
            }
        },
        "x-close-codes": _close_codes(table),
    }


def _operations(channel: str, sends: tuple[str, ...]) -> dict[str, Any]:
    ref = f"#/channels/{channel}"
    return {
        f"{channel}Send": {
            "action": "send",
            "title": f"what the server sends on the {channel} socket",
            "channel": {"$ref": ref},
            "messages": [{"$ref": f"{ref}/messages/{k}"} for k in sends],
        },
        f"{channel}Receive": {
            "action": "receive",
            "title": f"what a client sends on the {channel} socket",
            "description": "a `move` is answered by `ack` or `error`, a `ping` by `pong`"
            + (", a `move` by `error` `not_a_table`" if channel == "player" else ""),
            "channel": {"$ref": ref},
            "messages": [{"$ref": f"{ref}/messages/{k}"} for k in RECEIVES],
        },
    }


@cache
def asyncapi() -> dict[str, Any]:
    """The AsyncAPI 3.0 document of ``/v1/tables/{table_id}/ws`` and ``/v1/players/me/ws``."""
    since = {
        "since": {
            "type": "integer",
            "minimum": 0,
            "maximum": INT32,
            "description": "the last seq this client received: the events after it are sent "
            "instead of a view, unless they cannot be resumed (then a view)",
        }
    }
    table = _channel(
        "/v1/tables/{table_id}/ws",
        "The table socket: a table's live stream for a seat (ticket, token or Bearer header) or "
        "a spectator (none). First a `view` (or, with `since`, the events after it), then "
        "every `event`/`skip` with contiguous seqs, `your_turn` when it is the seat's, "
        "`heartbeat` after WS_HEARTBEAT seconds of silence.",
        TABLE_SENDS,
        since,
    )
    table["parameters"] = {"table_id": {"description": "the table's id"}}
    player = _channel(
        "/v1/players/me/ws",
        "The player socket: a player's notifications from all their tables (a ticket, token or "
        "Bearer header is required), and a `heartbeat` with a null seq after WS_HEARTBEAT "
        "seconds of silence.",
        PLAYER_SENDS,
        {},
    )
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Gin Rummy server sockets",
            "version": VERSION,
            "description": "The two WebSockets of the Gin Rummy server (docs/protocol.md). The "
            "HTTP API is in /openapi.json.",
            "license": {"name": "MIT"},
        },
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": "127.0.0.1:8000",
                "protocol": "ws",
                "description": "`python -m app`; wss behind TLS",
            }
        },
        "channels": {"table": table, "player": player},
        "operations": {**_operations("table", TABLE_SENDS), **_operations("player", PLAYER_SENDS)},
        "components": {
            "messages": {k: _message(k, m) for k, m in MESSAGE_MODELS.items()},
            "schemas": _schemas(),
        },
    }
