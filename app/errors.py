"""The service's refusals, each with a stable machine-readable ``code``.

Transport-neutral: HTTP maps each class to a status in ``app/api/http/errors.py``; a WebSocket sends
``{"code", "message"}``. The engine's own refusals stay ``RuleError`` and pass through unchanged.
"""

from __future__ import annotations


class ServiceError(Exception):
    """A refused request; ``code`` is stable, ``message`` says why in words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class UnauthenticatedError(ServiceError):
    """No token, or a token that belongs to no player."""


class ForbiddenError(ServiceError):
    """An authenticated player acting for a seat that is not theirs."""


class NotFoundError(ServiceError):
    """An unknown table, invite or hand."""


class ConflictError(ServiceError):
    """The table's state refuses the request (stale version, table full, match not over...)."""


class InvalidError(ServiceError):
    """Input that no state of the table could accept."""


class RateLimitedError(ServiceError):
    """Too many requests; retry after ``retry_after`` seconds."""

    def __init__(self, code: str, message: str, retry_after: float) -> None:
        super().__init__(code, message)
        self.retry_after = retry_after
