"""The access log and the request metrics of every request and socket (``app.api.edge.gateway``).

Per HTTP request: a request id (the client's ``X-Request-ID`` when it is a sane one, else a
new one; returned in the response's ``X-Request-ID``), ``ginrummy_http_requests_total`` and
``ginrummy_http_request_duration_seconds`` by route template and status, and one log line
``request`` with the method, route, path, status, duration and the request's fields
(``table_id``, ``seat``, ``player_id`` where known).

Per WebSocket session: the same request id (in the accept's headers), the open-sockets gauge,
message counts, and one log line ``websocket`` at its close with the route, table, seat,
duration, messages in and out, and the close code.

Paths are logged without query strings but ``since`` (the first, cut short): a ``?token=``
never reaches the log.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Sequence
from typing import Any

from prometheus_client import Counter, Histogram
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.edge.occupancy import Lease
from app.api.live.wire import WIRE, Wire
from app.logs import ACCESS, request_fields
from app.metrics import (
    HTTP_LATENCY,
    HTTP_REQUESTS,
    WEBSOCKET_MESSAGES,
    WEBSOCKET_SESSIONS,
    WEBSOCKETS_OPEN,
)

REQUEST_ID = b"x-request-id"
# A client's request id is kept when it is this plain; anything else gets a fresh one.
_SANE_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")
# The route label of a request no route matched (so a scan cannot grow the label set).
UNMATCHED = "unmatched"
# The longest ``since=...`` query parameter written into a log line, in bytes.
SINCE_LOGGED = 32
# Close code of a WebSocket that ended without a close frame either way.
CLOSED_ABNORMALLY = 1006
# ``scope["extensions"]`` key of a socket's ``WebSocketSession``.
SESSION = "ginrummy.session"


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
    """The path with only the query parameter safe to log: the first ``since``, cut to
    ``SINCE_LOGGED`` bytes (a seq has at most 10 digits; a client may send thousands)."""
    query: bytes = scope.get("query_string", b"")
    path: str = scope["path"]
    if b"since=" not in query:
        return path
    since = next((p for p in query.split(b"&") if p.startswith(b"since=")), None)
    return path if since is None else f"{path}?{since[:SINCE_LOGGED].decode(errors='replace')}"


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
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """Serve an HTTP request by ``app`` with its id, metrics and line; its response gets the
    ``X-Request-ID`` and ``headers``."""
    rid = request_id(scope)
    added = [(REQUEST_ID, rid.encode()), *headers]
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
    """Serve a WebSocket session by ``app`` with its id, counts, gauge and line
    (``WebSocketSession``)."""
    session = WebSocketSession(scope)

    async def counting_receive() -> Message:
        message = await receive()
        if message["type"] == "websocket.receive":
            session.received()
        elif message["type"] == "websocket.disconnect" and session.code is None:
            session.code = message.get("code", CLOSED_ABNORMALLY)
        return message

    async def counting_send(message: Message) -> None:
        kind = message["type"]
        if kind == "websocket.send":
            session.sent()
        elif kind == "websocket.accept":
            message = {**message, "headers": [*message.get("headers", ()), session.header]}
            await send(message)
            session.accepted(scope)
            # Shared frames go straight to the transport where it is safe (app.api.live.wire).
            wire = Wire.of(send, session.sent)
            if wire is not None:
                scope["extensions"][WIRE] = wire
            return
        elif kind == "websocket.close" and session.code is None:
            session.code = message.get("code", 1000)
        await send(message)

    scope.setdefault("extensions", {})[SESSION] = session
    with request_fields(request_id=session.rid) as fields:
        session.fields = fields
        try:
            await app(scope, counting_receive, counting_send)
        finally:
            if not session.detached:
                session.finish(scope)


class WebSocketSession:
    """One WebSocket session's access log entry and metrics, counted as it goes.

    A socket served below ASGI once idle (``app.api.live.parking``) outlives the ASGI call: it is
    ``detach``-ed then, keeping only the strings its log line needs, and ``finish``-ed at its
    close."""

    __slots__ = (
        "client",
        "code",
        "counters",
        "detached",
        "fields",
        "header",
        "incoming",
        "lease",
        "outgoing",
        "path",
        "rid",
        "route",
        "started",
    )

    def __init__(self, scope: Scope) -> None:
        self.rid = request_id(scope)
        self.header = (REQUEST_ID, self.rid.encode())
        self.started = time.perf_counter()
        self.incoming = 0
        self.outgoing = 0
        self.code: int | None = None
        self.route: str | None = None  # set once accepted
        self.counters: tuple[Counter, Counter] | None = None
        self.fields: dict[str, Any] = {}
        self.detached = False
        self.path: str | None = None
        self.client: str | None = None
        self.lease: Lease | None = None  # its count in ``app.api.edge.occupancy``

    def accepted(self, scope: Scope) -> None:
        route = self.route = route_of(scope)
        self.counters = (
            WEBSOCKET_MESSAGES.labels(route, "in"),
            WEBSOCKET_MESSAGES.labels(route, "out"),
        )
        WEBSOCKETS_OPEN.labels(route).inc()

    def received(self) -> None:
        self.incoming += 1
        if self.counters is not None:
            self.counters[0].inc()

    def sent(self) -> None:
        self.outgoing += 1
        if self.counters is not None:
            self.counters[1].inc()

    def detach(self, scope: Scope) -> None:
        """The ASGI call ends but the socket stays open: keep what the log line needs."""
        self.detached = True
        self.path = logged_path(scope)
        self.client = _client(scope)
        _table_fields(scope, self.fields)

    def finish(self, scope: Scope | None = None) -> None:
        """The session ended: its count, its metrics and its one log line."""
        if self.lease is not None:
            self.lease.release()
            self.lease = None
        if self.route is not None:
            WEBSOCKETS_OPEN.labels(self.route).dec()
        route = self.route or (UNMATCHED if scope is None else route_of(scope))
        if scope is not None:
            self.path = logged_path(scope)
            self.client = _client(scope)
            _table_fields(scope, self.fields)
        closed = CLOSED_ABNORMALLY if self.code is None else self.code
        WEBSOCKET_SESSIONS.labels(route, str(closed)).inc()
        with request_fields(**self.fields):
            ACCESS.info(
                "websocket",
                route=route,
                path=self.path,
                accepted=self.route is not None,
                close_code=closed,
                duration_ms=round((time.perf_counter() - self.started) * 1000, 2),
                messages_in=self.incoming,
                messages_out=self.outgoing,
                client=self.client,
            )
