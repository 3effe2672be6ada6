"""The access log and the request metrics of every request and socket (``app.api.gateway``).

Per HTTP request: a request id (the client's ``X-Request-ID`` when it is a sane one, else a
new one; returned in the response's ``X-Request-ID``), ``ginrummy_http_requests_total`` and
``ginrummy_http_request_duration_seconds`` by route template and status, and one log line
``request`` with the method, route, path, status, duration and the request's fields
(``table_id``, ``seat``, ``player_id`` where known).

Per WebSocket session: the same request id (in the accept's headers), the open-sockets gauge,
message counts, and one log line ``websocket`` at its close with the route, table, seat,
duration, messages in and out, and the close code.

Paths are logged without query strings but ``since``: a ``?token=`` never reaches the log.
"""

from __future__ import annotations

import functools
import os
import re
import time
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.wire import WIRE, Wire
from app.logs import ACCESS, request_fields
from app.metrics import (
    HTTP_LATENCY,
    HTTP_REQUESTS,
    WEBSOCKET_MESSAGES,
    WEBSOCKET_SESSIONS,
    WEBSOCKETS_OPEN,
)

REQUEST_ID = b"x-request-id"
VARY_ORIGIN = (b"vary", b"Origin")
# A client's request id is kept when it is this plain; anything else gets a fresh one.
_SANE_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")
# The route label of a request no route matched (so a scan cannot grow the label set).
UNMATCHED = "unmatched"
# Close code of a WebSocket that ended without a close frame either way.
CLOSED_ABNORMALLY = 1006


def request_id(scope: Scope) -> str:
    """The client's ``X-Request-ID`` if it is sane, else a new id."""
    value: bytes
    for name, value in scope["headers"]:
        if name == REQUEST_ID and _SANE_ID.fullmatch(value):
            return value.decode()
    return os.urandom(16).hex()


def route_of(scope: Scope) -> str:
    """The template of the route that served ``scope`` (``/v1/tables/{table_id}``).

    A request refused before routing (a rate limit) is matched here, so it is labelled like
    the others; its path parameters are taken too.
    """
    route = scope.get("route")
    if route is None:
        route = _match(scope["app"].router.routes, scope)
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED


def _match(routes: list[BaseRoute], scope: Scope) -> BaseRoute | None:
    for candidate in routes:
        # FastAPI (0.160 on) keeps an included router whole; its routes carry full paths here
        # (no router is included under a prefix).
        included = getattr(candidate, "original_router", None)
        if included is not None:
            found = _match(included.routes, scope)
        else:
            match, child = candidate.matches(scope)
            found = candidate if match != Match.NONE else None
            if found is not None:
                scope.setdefault("path_params", child.get("path_params", {}))
        if found is not None:
            return found
    return None


def logged_path(scope: Scope) -> str:
    """The path with only the query parameters safe to log (``since``)."""
    query: bytes = scope.get("query_string", b"")
    kept = [p for p in query.split(b"&") if p.startswith(b"since=")] if query else []
    path: str = scope["path"]
    return f"{path}?{b'&'.join(kept).decode(errors='replace')}" if kept else path


def _client(scope: Scope) -> str | None:
    client = scope.get("client")
    return None if client is None else str(client[0])


def _table_fields(scope: Scope, fields: dict[str, Any]) -> None:
    table_id = scope.get("path_params", {}).get("table_id")
    if table_id is not None:
        fields.setdefault("table_id", table_id)


@functools.cache
def _http_metrics(method: str, route: str, status: int) -> tuple[Counter, Histogram]:
    """The children of the request metrics for these labels (a lookup costs more than a hit)."""
    return HTTP_REQUESTS.labels(method, route, str(status)), HTTP_LATENCY.labels(method, route)


async def http(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, vary: bool = False
) -> None:
    """Serve an HTTP request by ``app`` with its id, metrics and line (``vary``: the response
    says ``Vary: Origin``, as CORS says it when the request has no ``Origin``)."""
    rid = request_id(scope)
    added = [(REQUEST_ID, rid.encode())]
    if vary:
        added.append(VARY_ORIGIN)
    status = 500  # unless a response starts: an exception escaped to the server's handler
    started = time.perf_counter()

    async def send_with_id(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            message["headers"] = [*message.get("headers", ()), *added]
        await send(message)

    with request_fields(request_id=rid) as fields:
        try:
            await app(scope, receive, send_with_id)
        finally:
            duration = time.perf_counter() - started
            method: str = scope["method"]
            route = route_of(scope)
            count, latency = _http_metrics(method, route, status)
            count.inc()
            latency.observe(duration)
            _table_fields(scope, fields)
            ACCESS.info(
                "request",
                method=method,
                route=route,
                path=logged_path(scope),
                status=status,
                duration_ms=round(duration * 1000, 2),
                client=_client(scope),
            )


async def websocket(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve a WebSocket session by ``app`` with its id, counts, gauge and line."""
    rid = request_id(scope)
    header = (REQUEST_ID, rid.encode())
    started = time.perf_counter()
    counts = {"in": 0, "out": 0}
    code: int | None = None
    route: str | None = None
    counters: dict[str, Counter] = {}

    def count(direction: str) -> None:
        counts[direction] += 1
        if route is not None:
            counters[direction].inc()

    async def counting_receive() -> Message:
        nonlocal code
        message = await receive()
        if message["type"] == "websocket.receive":
            count("in")
        elif message["type"] == "websocket.disconnect" and code is None:
            code = message.get("code", CLOSED_ABNORMALLY)
        return message

    async def counting_send(message: Message) -> None:
        nonlocal code, route
        kind = message["type"]
        if kind == "websocket.send":
            count("out")
        elif kind == "websocket.accept":
            message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)
            route = route_of(scope)
            counters.update((d, WEBSOCKET_MESSAGES.labels(route, d)) for d in ("in", "out"))
            WEBSOCKETS_OPEN.labels(route).inc()
            # Shared frames go straight to the transport where it is safe (app.api.wire).
            wire = Wire.of(send, functools.partial(count, "out"))
            if wire is not None:
                scope.setdefault("extensions", {})[WIRE] = wire
            return
        elif kind == "websocket.close" and code is None:
            code = message.get("code", 1000)
        await send(message)

    with request_fields(request_id=rid) as fields:
        try:
            await app(scope, counting_receive, counting_send)
        finally:
            if route is not None:
                WEBSOCKETS_OPEN.labels(route).dec()
            closed = CLOSED_ABNORMALLY if code is None else code
            WEBSOCKET_SESSIONS.labels(route or route_of(scope), str(closed)).inc()
            _table_fields(scope, fields)
            ACCESS.info(
                "websocket",
                route=route or route_of(scope),
                path=logged_path(scope),
                accepted=route is not None,
                close_code=closed,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
                messages_in=counts["in"],
                messages_out=counts["out"],
                client=_client(scope),
            )
