"""What a request body may be: at most ``max_body_bytes`` bytes, and strict JSON.

Size (``BodyLimit``): a body whose Content-Length passes the limit is answered 413
``payload_too_large`` before a byte of it is read; a chunked body is counted as it streams and
refused the moment it passes the limit. No body is ever held whole beyond the limit. (FastAPI's
own ``max_body_size`` does the same but answers an announced length in plain text, past our
error handlers.)

Depth (``too_deep``): a body whose arrays and objects nest deeper than ``max_body_depth`` is
answered 422 ``body_too_deep`` before it is parsed. The deepest valid body nests 2 levels,
while orjson takes 1024: a 2 KB body nested 1000 levels would cost every layer above the
parser that walks it (validation, the 422's details) a recursion per level.

Strict JSON: bodies are decoded by orjson, which refuses what the standard library lets through
but no encoder (the database's, or our own responses') can write back: lone UTF-16 surrogates
(``"\\ud800"``), bytes that are not UTF-8, NaN and infinities. Each is a JSON decode error,
which FastAPI answers 422 ``invalid_request`` before any route runs, so nothing is stored.
Every HTTP router takes ``route_class=StrictJSONRoute``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Coroutine
from itertools import accumulate
from typing import Any

import orjson
from fastapi.routing import APIRoute
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.http.errors import BodyTooDeep, payload_too_large

_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# An opening bracket one level in (+1), a closing one out (-1 as a signed byte).
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def depth(raw: bytes) -> int:
    """How deep arrays and objects nest in the JSON text ``raw`` (brackets inside strings do
    not count), read without parsing it: 1 ms for 8 KB of nothing but brackets.

    In a string, backslashes pair from the left: without its escaped backslashes, then its
    escaped quotes, every quote left opens or closes a string. (A malformed text gets some
    number; the parser refuses it anyway.)"""
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(plain.split(b'"')[::2]).translate(_STEPS, _NOT_BRACKETS)
    return max(accumulate(array("b", brackets)), default=0)


def too_deep(raw: bytes, limit: int) -> bool:
    """Whether ``raw`` nests deeper than ``limit``; a body with at most ``limit`` brackets
    cannot, and is not scanned (nearly every body)."""
    return raw.count(b"[") + raw.count(b"{") > limit and depth(raw) > limit


def announced_over(length: bytes, limit: int) -> bool:
    """Whether a Content-Length value announces more than ``limit`` bytes. Its ASCII digits are
    counted before ``int()`` reads them, which raises past 4,300 (uvicorn's HTTP parser refuses
    such a header first; another server might not)."""
    if not length.isdigit():
        return False
    significant = length.lstrip(b"0")
    return len(significant) > len(str(limit)) or int(significant or b"0") > limit


class StrictJSONRequest(Request):
    """A request whose ``json()`` is orjson's (valid UTF-8, no lone surrogates, no NaN), of a
    body no deeper than ``max_body_depth``."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            limit: int = self.app.state.settings.max_body_depth
            if too_deep(body, limit):
                raise BodyTooDeep(limit)
            self._json = orjson.loads(body)
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
        if announced_over(length.encode("latin-1"), self.limit):
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
