"""Logs: every record of the standard library's loggers as one line, JSON or plain text.

``configure(settings)`` (called by ``python -m app``) installs one handler on the root logger
whose formatter is structlog's ``ProcessorFormatter``: the level, the logger's name, a UTC
timestamp, the fields of the request being served (``request_id``, ``table_id``, ``seat``,
``player_id``: whatever is known) and the record's ``extra`` fields, rendered by
``LOG_FORMAT`` as a JSON object or ``key=value`` text.

The request's fields live in a dict that ``app.api.access`` opens per request or WebSocket
session (``request_fields``); code deeper down adds to it with ``annotate(seat=...)``. Tasks
started while serving it share the dict, so what they learn lands on the session's line too.
"""

from __future__ import annotations

import logging
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
    event.pop("color_message", None)  # uvicorn's copy of its message with terminal colours
    current = _fields.get()
    if current:
        for key, value in current.items():
            event.setdefault(key, value)
    return event


def _dumps(event: EventDict, **_: Any) -> str:
    return orjson.dumps(event, default=str).decode()


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of every line: ``json`` or ``text``."""
    pre_chain: list[Processor] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),
        _add_request_fields,
    ]
    renderer: Processor
    if log_format == "json":
        renderer = structlog.processors.JSONRenderer(serializer=_dumps)
        tail: list[Processor] = [structlog.processors.format_exc_info]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
        tail = []
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *tail, renderer],
    )


def configure(settings: Settings) -> None:
    """Send every logger's records to stdout, one line each, as ``settings.log_format`` says.

    uvicorn's own loggers go through the same handler; its access log stays off, since
    ``app.api.access`` writes one line per request with the route, the request id and no
    query-string token.
    """
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter(settings.log_format))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(settings.log_level.upper())
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    logging.getLogger("uvicorn.error").addFilter(_without_handshakes)
    logging.getLogger("uvicorn.access").disabled = True


def _without_handshakes(record: logging.LogRecord) -> bool:
    """Drop uvicorn's lines about each WebSocket handshake: they hold the raw query string (a
    ``?token=``), and the session's own line says more."""
    return not (
        record.levelno <= logging.INFO
        and isinstance(record.msg, str)
        and (record.msg.startswith('%s - "WebSocket ') or record.msg.startswith("connection "))
    )
