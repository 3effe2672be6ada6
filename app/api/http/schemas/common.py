"""What every HTTP body shares: the patterns, the example ids, the error bodies and their
OpenAPI responses."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

# A card code as ``parse_card`` reads it: rank (A, 2-9, T or 10, J, Q, K) and suit, any case.
CARD_PATTERN = r"^\s*(10|[2-9TtJjQqKkAa])[CcDdHhSs]\s*$"
# A chat line: no control characters but newline and tab, and something besides whitespace.
_TEXT_CHAR = r"[^\x00-\x08\x0b-\x1f\x7f]"
CHAT_PATTERN = rf"^{_TEXT_CHAR}*[^\s\x00-\x1f\x7f]{_TEXT_CHAR}*$"
# A player's name: no control characters at all, and something besides whitespace.
NAME_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"

PLAYER_ID = "5f0c7d2e9a5b4c3e8f1a2b3c4d5e6f70"
OPPONENT_ID = "9b8a7c6d5e4f40312a1b2c3d4e5f6a7b"
TABLE_ID = "3c9d1f0e2b7a4e5d8c6b0a1f2e3d4c5b"


# Database integer columns are 32-bit: larger numbers are malformed input, not a server error.
INT32 = 2**31 - 1


def _printable(value: str, *, allow_newlines: bool = False) -> str:
    """Refuse control characters (NUL cannot even be stored by PostgreSQL)."""
    allowed = {"\n", "\t"} if allow_newlines else set()
    if any((ord(c) < 32 and c not in allowed) or c == "\x7f" for c in value):
        raise ValueError("control characters are not allowed")
    return value


def _example(value: Any) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [value]})


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    model_config = _example({"code": "not_your_turn", "message": "it is the other player's turn"})

    code: str
    message: str


class StatusOut(BaseModel):
    model_config = _example({"status": "ok"})

    status: str


_ERROR_EXAMPLES: dict[int, tuple[str, str, str]] = {
    401: ("missing or unknown bearer token", "unauthorized", "a bearer token is required"),
    403: ("not your seat", "not_seated", "you do not hold a seat at this table"),
    404: ("unknown table", "table_not_found", "no table 'nope'"),
    409: (
        "a rule or the table's state says no, or the Idempotency-Key came with another request",
        "not_your_turn",
        "it is the other player's turn",
    ),
    413: ("the body is too large", "payload_too_large", "a request body has at most 8192 bytes"),
    422: ("malformed body", "invalid_request", "body.card: Value error, not a card: 'ZZ'"),
    429: (
        "over a rate limit: requests per bearer token or client address, or the route's own "
        "(new players per client address, chat lines per player and per address)",
        "rate_limited",
        "too many requests for this token",
    ),
}
# Headers an error status always carries, as the OpenAPI document shows them.
_ERROR_HEADERS: dict[int, dict[str, Any]] = {
    429: {
        "Retry-After": {
            "description": "whole seconds until the limit lets the request through",
            "schema": {"type": "integer", "minimum": 1},
        }
    },
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the given error statuses, each with an example body."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        description, code, message = _ERROR_EXAMPLES[status]
        out[status] = {
            "model": ErrorOut,
            "description": description,
            "content": {"application/json": {"example": {"code": code, "message": message}}},
        }
        if status in _ERROR_HEADERS:
            out[status]["headers"] = _ERROR_HEADERS[status]
    return out


# Every operation but the health routes' counts against the rate limits
# (``app.api.edge.ratelimit``): the app includes each router with these ``responses``.
RATE_LIMITED = error_responses(429)
