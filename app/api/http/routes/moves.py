"""Moves: one endpoint per engine action, all through the one command pipeline.

The routes below are what the API is (OpenAPI, validation, errors). Their common case is
served from the gateway by ``app.api.edge.move_lane.MoveLane``, as the route it stands for.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import Caller, CommandCaller
from app.api.http.routes.common import COMMAND_ROUTE, submit
from app.api.http.schemas.tables import CardBody, DrawBody, Versioned
from app.engine import Action
from app.table.commands import Play

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
