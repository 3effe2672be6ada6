"""Logs: one line per record, JSON or plain text, with the fields of the request being served.

``configure(settings)`` (called by ``python -m app``) sets up two ways to stdout that render
alike: the level, the logger's name, a UTC timestamp, the fields of the request being served
(``request_id``, ``table_id``, ``seat``: whatever is known) and the record's own fields, as a
JSON object or ``key=value`` text (``LOG_FORMAT``).

- ``ACCESS`` (structlog, written directly): the one line per request or WebSocket session of
  ``app.api.edge.access``. It skips the standard library's ``LogRecord``, a quarter of the cost.
- The standard library's loggers (the code's warnings, uvicorn, alembic) through one root
  handler with structlog's ``ProcessorFormatter``.

Until ``configure`` runs (the app inside the tests, or served by another entry point) the
access lines are dropped, like any INFO record under the standard library's defaults.

The request's fields live in a dict that ``app.api.edge.access`` opens per request or WebSocket
session (``request_fields``); code deeper down adds to it with ``annotate(seat=...)``. Tasks
started while serving it share the dict, so what they learn lands on the session's line too.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import orjson
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from app.settings import Settings

_fields: ContextVar[dict[str, Any] | None] = ContextVar("request_fields", default=None)

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
# A lazy proxy: it takes the configuration in force when it is first used.
ACCESS: Any = structlog.get_logger()
ACCESS_LOGGER = "ginrummy.access"


@contextmanager
def request_fields(**fields: Any) -> Iterator[dict[str, Any]]:
    """Open the fields of one request or session for its duration; yields the dict."""
    current = dict(fields)
    token = _fields.set(current)
    try:
        yield current
    finally:
        _fields.reset(token)


def annotate(**fields: Any) -> None:
    """Add ``fields`` to the request or session being served (nothing outside one)."""
    current = _fields.get()
    if current is not None:
        current.update(fields)


def _add_request_fields(_logger: WrappedLogger, _name: str, event: EventDict) -> EventDict:
    current = _fields.get()
    if current:
        for key, value in current.items():
            event.setdefault(key, value)
    return event


def _name_access(_logger: WrappedLogger, _name: str, event: EventDict) -> EventDict:
    event["logger"] = ACCESS_LOGGER
    return event


def _drop_colours(_logger: WrappedLogger, _name: str, event: EventDict) -> EventDict:
    event.pop("color_message", None)  # uvicorn's copy of its message with terminal colours
    return event


# Secrets a library's own record may quote (uvicorn's DEBUG request line holds the raw query
# string; an exception may hold a header): a query's ``token=`` / ``ticket=``, a bearer token,
# an ``Idempotency-Key`` header's value. The access lines never hold one (``app.api.edge.access``).
_SECRETS = re.compile(
    r"(?i)(\b(?:token|ticket)=|\bbearer\s+|idempotency-key['\"]?\s*[:=,]\s*\(?b?['\"]?)"
    r"[^\s&'\"#,)]+"
)
REDACTED = "[redacted]"


def mask_secrets(text: str) -> str:
    """``text`` with every token, ticket and Idempotency-Key it quotes replaced."""
    return _SECRETS.sub(lambda m: m.group(1) + REDACTED, text)


def _mask_secrets(_logger: WrappedLogger, _name: str, event: EventDict) -> EventDict:
    for key, value in event.items():
        if isinstance(value, str):
            event[key] = mask_secrets(value)
    return event


def _dumps(event: EventDict, **_: Any) -> str:
    return orjson.dumps(event, default=str).decode()


def _shared() -> list[Processor]:
    return [
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_request_fields,
    ]


def _renderer(log_format: str) -> list[Processor]:
    if log_format == "json":
        return [
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(serializer=_dumps),
        ]
    return [structlog.dev.ConsoleRenderer(colors=False)]


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of the standard library's records: ``json`` or ``text``."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_logger_name,
            *_shared(),
            structlog.stdlib.ExtraAdder(),
            _drop_colours,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _mask_secrets,
            *_renderer(log_format),
        ],
    )


def configure(settings: Settings) -> None:
    """Send every logger's records to stdout, one line each, as ``settings.log_format`` says.

    uvicorn's own loggers go through the same handler; its access log stays off, since
    ``app.api.edge.access`` writes one line per request with the route, the request id and no
    query-string token.
    """
    level = logging.getLevelNamesMapping()[settings.log_level.upper()]
    structlog.configure(
        processors=[_name_access, *_shared(), *_renderer(settings.log_format)],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter(settings.log_format))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    logging.getLogger("uvicorn.error").addFilter(_without_handshakes)
    # aiosqlite's DEBUG lines quote each statement's parameters (an Idempotency-Key, a token's
    # hash): never below INFO.
    logging.getLogger("aiosqlite").setLevel(max(level, logging.INFO))
    logging.getLogger("uvicorn.access").disabled = True


def _without_handshakes(record: logging.LogRecord) -> bool:
    """Drop uvicorn's lines about each WebSocket handshake: they hold the raw query string (a
    ``?token=``), and the session's own line says more."""
    return not (
        record.levelno <= logging.INFO
        and isinstance(record.msg, str)
        and (record.msg.startswith('%s - "WebSocket ') or record.msg.startswith("connection "))
    )
