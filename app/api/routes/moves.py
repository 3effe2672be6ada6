"""Moves: one endpoint per engine action, all through the one command pipeline.

The routes below are what the API is (OpenAPI, validation, errors). ``DirectMoves`` serves the
common case of the six move routes without FastAPI's per-request machinery (its routing through
included routers, the dependency solver, the request wrappers), which cost more CPU than the
pipeline's own work: a well-formed body goes through the same model, the same caller dependency
(token, Idempotency-Key) and the same ``submit``; anything else (a body that is not the
model's, another content type) is handed to the FastAPI route itself, so every refusal and its
422 are the route's own.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Body, FastAPI
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match
from starlette.types import Message, Receive, Scope, Send

from app.api.deps import Caller, CommandCaller, command_caller
from app.api.request_body import StrictJSONRequest, StrictJSONRoute
from app.api.routes.common import COMMAND_ROUTE, submit
from app.api.schemas import CardBody, DrawBody, Versioned
from app.engine import Action
from app.service.commands import Play

router = APIRouter(prefix="/v1/tables/{table_id}", tags=["moves"], route_class=StrictJSONRoute)

OptionalVersioned = Annotated[Versioned | None, Body()]


async def _play(
    caller: Caller, table_id: str, action: dict[str, str], body: Versioned | None
) -> JSONResponse:
    return await submit(caller, table_id, Play(Action.from_dict(action)), body)


@router.post("/moves/take-upcard", **COMMAND_ROUTE)
async def take_upcard(
    table_id: str, caller: CommandCaller, body: OptionalVersioned = None
) -> JSONResponse:
    """Take the upcard offered on the first turn (then discard or knock)."""
    return await _play(caller, table_id, {"kind": "take_upcard"}, body)


@router.post("/moves/pass", **COMMAND_ROUTE)
async def pass_upcard(
    table_id: str, caller: CommandCaller, body: OptionalVersioned = None
) -> JSONResponse:
    """Refuse the upcard offered on the first turn."""
    return await _play(caller, table_id, {"kind": "pass"}, body)


@router.post("/moves/draw", **COMMAND_ROUTE)
async def draw(table_id: str, body: DrawBody, caller: CommandCaller) -> JSONResponse:
    """Draw the top card of the stock or of the discard pile."""
    kind = "draw_stock" if body.source == "stock" else "draw_discard"
    return await _play(caller, table_id, {"kind": kind}, body)


@router.post("/moves/discard", **COMMAND_ROUTE)
async def discard(table_id: str, body: CardBody, caller: CommandCaller) -> JSONResponse:
    """Discard a card and end your turn."""
    return await _play(caller, table_id, {"kind": "discard", "card": body.card}, body)


@router.post("/moves/knock", **COMMAND_ROUTE)
async def knock(table_id: str, body: CardBody, caller: CommandCaller) -> JSONResponse:
    """Discard ``card`` and knock (gin with no deadwood left); the hand is settled at once."""
    return await _play(caller, table_id, {"kind": "knock", "card": body.card}, body)


@router.post("/moves/big-gin", **COMMAND_ROUTE)
async def big_gin(
    table_id: str, caller: CommandCaller, body: OptionalVersioned = None
) -> JSONResponse:
    """Declare big gin: all 11 cards melded, no discard (rulesets with a big gin bonus)."""
    return await _play(caller, table_id, {"kind": "big_gin"}, body)


@router.post("/next-hand", **COMMAND_ROUTE)
async def next_hand(
    table_id: str, caller: CommandCaller, body: OptionalVersioned = None
) -> JSONResponse:
    """Deal the next hand once the last one is over (either seated player)."""
    return await _play(caller, table_id, {"kind": "next_hand"}, body)


@router.post("/resign", **COMMAND_ROUTE)
async def resign(
    table_id: str, caller: CommandCaller, body: OptionalVersioned = None
) -> JSONResponse:
    """Resign the match: the opponent wins it."""
    return await _play(caller, table_id, {"kind": "resign"}, body)


# The move routes ``DirectMoves`` serves: path suffix -> (body model, whether a body is
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


class DirectMoves(BaseRoute):
    """The move routes' common case, matched before every other route (see the module
    docstring). Labelled, logged and rate-limited as the route it stands for."""

    def __init__(self, routes: dict[str, APIRoute]) -> None:
        self.routes = routes

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope["method"] == "POST":
            found = _PATH.fullmatch(scope["path"])
            if found is not None and found[2] in self.routes:
                route = self.routes[found[2]]
                return Match.FULL, {"route": route, "path_params": {"table_id": found[1]}}
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: APIRoute = scope["route"]
        kind = scope["path"].rpartition("/")[2]
        model, required, action = _DIRECT[kind]
        request = StrictJSONRequest(scope, receive)
        raw = await request.body()
        body = _body(scope, raw, model, required)
        if body is False:
            # Not the plain case: the FastAPI route answers it, reading the same body again.
            await route.handle(scope, _replay(raw), send)
            return
        caller = await command_caller(request)
        response = await submit(
            caller, scope["path_params"]["table_id"], Play(Action.from_dict(action(body))), body
        )
        await response(scope, receive, send)


def _body(scope: Scope, raw: bytes, model: type[Versioned], required: bool) -> Any:
    """The validated body (None for none), or False when the FastAPI route must judge it."""
    content_type = None
    for name, value in scope["headers"]:
        if name == b"content-type":
            content_type = value
    if not raw:
        return False if required else None
    if content_type != b"application/json":
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


def install_direct(app: FastAPI) -> None:
    """Put ``DirectMoves`` first among ``app``'s routes (after ``router`` was included)."""
    routes = {
        path.rpartition("/")[2]: route
        for route in router.routes
        if isinstance(route, APIRoute)
        and (path := route.path).rpartition("/")[2] in _DIRECT
        and "/moves/" in path
    }
    assert set(routes) == set(_DIRECT), "a move route without its direct case (or the reverse)"
    app.router.routes.insert(0, DirectMoves(routes))
    changed = getattr(app.router, "_mark_routes_changed", None)
    if changed is not None:
        changed()  # FastAPI caches its routes' matching by a version of the list
