"""What a request body may be: at most ``max_body_bytes`` bytes, and strict JSON.

Size (``BodyLimit``): a body whose Content-Length passes the limit is answered 413
``payload_too_large`` before a byte of it is read; a chunked body is counted as it streams and
refused the moment it passes the limit. No body is ever held whole beyond the limit. (FastAPI's
own ``max_body_size`` does the same but answers an announced length in plain text, past our
error handlers.)

Strict JSON: bodies are decoded by orjson, which refuses what the standard library lets through
but no encoder (the database's, or our own responses') can write back: lone UTF-16 surrogates
(``"\\ud800"``), bytes that are not UTF-8, NaN and infinities, nesting deeper than 1024. Each is
a JSON decode error, which FastAPI answers 422 ``invalid_request`` before any route runs, so
nothing is stored. Every HTTP router takes ``route_class=StrictJSONRoute``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi.routing import APIRoute
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import payload_too_large


class StrictJSONRequest(Request):
    """A request whose ``json()`` is orjson's: valid UTF-8, no lone surrogates, no NaN."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = orjson.loads(await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    """A route whose body is decoded by ``StrictJSONRequest``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict


class BodyLimit:
    """ASGI middleware: 413 for an HTTP request body over ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            response = JSONResponse(payload_too_large(self.limit), status_code=413)
            await response(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                # Raised where the route reads its body: FastAPI passes an HTTPException on to
                # the error handlers, which answer payload_too_large.
                raise HTTPException(413)
            return message

        await self.app(scope, counted, send)
