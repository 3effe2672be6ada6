"""HTTP rate limits per bearer token and per client address, before any route runs.

Checked by ``app.api.edge.gateway`` around every request, so a refused one costs no routing, no
dependency and no database: ``429 rate_limited`` with ``Retry-After`` (whole seconds), the body
every error has. A WebSocket handshake counts as a request (its token may be ``?token=``) and
is refused with the same 429 response. The health and metrics routes are exempt: orchestrators
and scrapers poll them. Behind a proxy the client address is the one uvicorn takes from
``X-Forwarded-For`` when the proxy is trusted (``FORWARDED_ALLOW_IPS``).
"""

from __future__ import annotations

import hashlib
import math
from urllib.parse import parse_qs

from fastapi.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from app.api.http.errors import error_body
from app.errors import RateLimitedError
from app.service.rate_limits import RateLimits

EXEMPT = frozenset({"/healthz", "/livez", "/readyz", "/metrics"})


def _token(scope: Scope) -> bytes | None:
    """The bearer token of the request; for a WebSocket handshake, also its ``?token=``."""
    value: bytes
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credentials = value.partition(b" ")
            token = credentials.strip()
            if scheme.lower() == b"bearer" and token:
                return token
    if scope["type"] == "websocket":
        query = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
        if query.get("token"):
            return str(query["token"][0]).encode()
    return None


def too_many(exc: RateLimitedError) -> JSONResponse:
    """The 429 answer to ``exc``."""
    return JSONResponse(
        error_body(exc.code, exc.message),
        status_code=429,
        headers={"Retry-After": str(max(1, math.ceil(exc.retry_after)))},
    )


async def over_limit(scope: Scope) -> RateLimitedError | None:
    """Count an HTTP request or WebSocket handshake against the ``token`` and ``ip`` limits of
    ``app.state``; the error when it is over one (None for the exempt paths)."""
    if scope["path"] in EXEMPT:
        return None
    limits: RateLimits = scope["app"].state.rate_limits
    try:
        token = _token(scope) if limits.enabled("token") else None
        if token is not None:
            # A digest: the token itself never goes to Redis.
            await limits.hit("token", hashlib.sha256(token).hexdigest()[:32])
        client = scope.get("client")
        if client is not None and limits.enabled("ip"):
            await limits.hit("ip", str(client[0]))
    except RateLimitedError as exc:
        return exc
    return None


async def refuse(exc: RateLimitedError, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer a request over a limit: 429 (or close a handshake a server cannot answer)."""
    if scope["type"] == "http" or "websocket.http.response" in scope.get("extensions", {}):
        await too_many(exc)(scope, receive, send)
    else:  # a server that cannot answer a handshake with a response: 403
        await send({"type": "websocket.close", "code": 1008})
