"""The move routes' common case, served from ``app.api.edge.gateway``.

``MoveLane`` serves the common case of the six move routes (``app.api.http.routes.moves``) without
the layers under the gateway (body limit, exception middleware, FastAPI's routing through
included routers, the dependency solver, the request and response objects), which cost more CPU
than the pipeline's own work: a well-formed body with its length announced goes through the
same model, the same token and Idempotency-Key checks, the same pipeline call (``run``), the
app's own error handlers, and the same JSON; anything else (a body that is not the model's,
another content type, a streamed or long body) is handed to the app, so every refusal and its
422 or 413 are the route's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson
from fastapi.routing import APIRoute
from starlette.datastructures import URL
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.edge.request_body import announced_over
from app.api.http.deps import Caller, bearer, idempotency_of
from app.api.http.routes.common import render, run
from app.api.http.routes.moves import router
from app.api.http.schemas.tables import CardBody, DrawBody, Versioned
from app.engine import Action
from app.service.pipeline import TableService
from app.table.commands import Play

# The move routes ``MoveLane`` serves: path suffix -> (body model, whether a body is
# required, the action the body makes).
_DIRECT: dict[str, tuple[type[Versioned], bool, Any]] = {
    "take-upcard": (Versioned, False, lambda _: {"kind": "take_upcard"}),
    "pass": (Versioned, False, lambda _: {"kind": "pass"}),
    "draw": (
        DrawBody,
        True,
        lambda b: {"kind": "draw_stock" if b.source == "stock" else "draw_discard"},
    ),
    "discard": (CardBody, True, lambda b: {"kind": "discard", "card": b.card}),
    "knock": (CardBody, True, lambda b: {"kind": "knock", "card": b.card}),
    "big-gin": (Versioned, False, lambda _: {"kind": "big_gin"}),
}
_PATH = re.compile(r"/v1/tables/([^/]+)/moves/([a-z-]+)")
# The scope key of a request ``MoveLane.match`` took: the move's path suffix.
MOVE = "ginrummy.move"
_JSON = b"application/json"
_CONTENT_TYPE = (b"content-type", _JSON)


class MoveLane:
    """The move routes' common case, served inside ``app.api.edge.gateway`` (see the module
    docstring): labelled, logged and rate-limited there as the route it stands for."""

    def __init__(self, limit: int) -> None:
        self.limit = limit  # ``max_body_bytes``: a longer body goes to ``BodyLimit``
        self.routes = {
            path.rpartition("/")[2]: route
            for route in router.routes
            if isinstance(route, APIRoute)
            and (path := route.path).rpartition("/")[2] in _DIRECT
            and "/moves/" in path
        }
        assert set(self.routes) == set(_DIRECT), "a move route without its lane (or the reverse)"

    def match(self, scope: Scope) -> bool:
        """Whether ``scope`` is a POST to a move route; if so it gets the route and its path
        parameters, as the router would give them."""
        if scope["method"] != "POST":
            return False
        found = _PATH.fullmatch(scope["path"])
        if found is None or found[2] not in self.routes:
            return False
        scope[MOVE] = found[2]
        scope["route"] = self.routes[found[2]]
        scope["path_params"] = {"table_id": found[1]}
        return True

    async def serve(self, scope: Scope, receive: Receive, send: Send, rest: ASGIApp) -> None:
        """Answer the move ``match`` took; a request that is not the plain case goes to
        ``rest`` (the app: body limit, error handlers, the FastAPI route), its body replayed."""
        model, required, action = _DIRECT[scope[MOVE]]
        length = content_type = authorization = key = None
        value: bytes
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = value
            elif name == b"content-type":
                content_type = value
            elif name == b"authorization" and authorization is None:
                authorization = value  # the first, as ``Headers.get`` takes it
            elif name == b"idempotency-key" and key is None:
                key = value
        if length is None or not length.isdigit() or announced_over(length, self.limit):
            await rest(scope, receive, send)  # streamed, or too long: ``BodyLimit`` judges it
            return
        raw = await _read(receive)
        if raw is None:
            return  # the client left
        body = _body(content_type, raw, model, required)
        if body is False:
            # Not the plain case: the FastAPI route answers it, reading the same body again.
            await rest(scope, _replay(raw), send)
            return
        try:
            service: TableService = scope["app"].state.service
            actor = await service.authenticate(
                None if authorization is None else bearer(authorization.decode("latin-1"))
            )
            idempotent = (
                None
                if key is None
                else idempotency_of(key.decode("latin-1"), "POST", URL(scope=scope).path, raw)
            )
            command = Play(Action.from_dict(action(body)))
            result = await run(
                Caller(service, actor, idempotent), scope["path_params"]["table_id"], command, body
            )
        except Exception as exc:
            handler = _handler(scope["app"].exception_handlers, exc)
            if handler is None:
                raise  # the server's error handler: 500
            response = await handler(Request(scope, receive), exc)
            await response(scope, receive, send)
            return
        content = render(result.body)
        headers = [(b"content-length", b"%d" % len(content)), _CONTENT_TYPE]
        if result.replayed:
            headers.append((b"idempotency-replayed", b"true"))
        start = {"type": "http.response.start", "status": result.status_code, "headers": headers}
        await send(start)
        await send({"type": "http.response.body", "body": content})


def _handler(handlers: Mapping[Any, Any], exc: Exception) -> Any:
    """The app's handler of ``exc`` as Starlette's ExceptionMiddleware finds it: by the
    exception's classes, nearest first; None for what only the server's handler takes."""
    for cls in type(exc).__mro__:
        if cls is Exception:
            return None
        handler = handlers.get(cls)
        if handler is not None:
            return handler
    return None


async def _read(receive: Receive) -> bytes | None:
    """The whole body; None when the client disconnected first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _body(content_type: bytes | None, raw: bytes, model: type[Versioned], required: bool) -> Any:
    """The validated body (None for none), or False when the FastAPI route must judge it."""
    if not raw:
        return False if required else None
    if content_type != _JSON:
        return False
    try:
        return model.model_validate(orjson.loads(raw))
    except Exception:
        return False


def _replay(raw: bytes) -> Receive:
    """A ``receive`` that gives ``raw`` again as the whole body."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    return receive
