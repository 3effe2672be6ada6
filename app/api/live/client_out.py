"""The messages the server sends on a socket, built in one place (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

from app.engine import RuleError
from app.service.errors import ServiceError


def error(exc: ServiceError | RuleError, message_id: str | None = None) -> dict[str, Any]:
    return {"type": "error", "id": message_id, "code": exc.code, "message": exc.message}
