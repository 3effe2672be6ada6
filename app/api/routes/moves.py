"""Moves: one endpoint per engine action, all through the one command pipeline."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse

from app.api.deps import CurrentActor, IdempotencyDep, ServiceDep
from app.api.routes.common import command_response
from app.api.routes.tables import COMMAND_ERRORS
from app.api.schemas import CardBody, CommandOut, DrawBody, Versioned
from app.engine import Action
from app.service.commands import Play

router = APIRouter(prefix="/v1/tables/{table_id}", tags=["moves"])

OptionalVersioned = Annotated[Versioned | None, Body()]


async def _play(
    service: ServiceDep,
    table_id: str,
    actor: CurrentActor,
    idem: IdempotencyDep,
    *,
    action: dict[str, str],
    body: Versioned | None,
) -> JSONResponse:
    expected = None if body is None else body.expected_version
    result = await service.submit(
        table_id, actor, Play(Action.from_dict(action)), expected_version=expected, idempotency=idem
    )
    return command_response(result)


@router.post("/moves/take-upcard", response_model=CommandOut, responses=COMMAND_ERRORS)
async def take_upcard(
    table_id: str,
    actor: CurrentActor,
    service: ServiceDep,
    idem: IdempotencyDep,
    body: OptionalVersioned = None,
) -> JSONResponse:
    """Take the upcard offered on the first turn (then discard or knock)."""
    return await _play(service, table_id, actor, idem, action={"kind": "take_upcard"}, body=body)


@router.post("/moves/pass", response_model=CommandOut, responses=COMMAND_ERRORS)
async def pass_upcard(
    table_id: str,
    actor: CurrentActor,
    service: ServiceDep,
    idem: IdempotencyDep,
    body: OptionalVersioned = None,
) -> JSONResponse:
    """Refuse the upcard offered on the first turn."""
    return await _play(service, table_id, actor, idem, action={"kind": "pass"}, body=body)


@router.post("/moves/draw", response_model=CommandOut, responses=COMMAND_ERRORS)
async def draw(
    table_id: str, body: DrawBody, actor: CurrentActor, service: ServiceDep, idem: IdempotencyDep
) -> JSONResponse:
    """Draw the top card of the stock or of the discard pile."""
    kind = "draw_stock" if body.source == "stock" else "draw_discard"
    return await _play(service, table_id, actor, idem, action={"kind": kind}, body=body)


@router.post("/moves/discard", response_model=CommandOut, responses=COMMAND_ERRORS)
async def discard(
    table_id: str, body: CardBody, actor: CurrentActor, service: ServiceDep, idem: IdempotencyDep
) -> JSONResponse:
    """Discard a card and end your turn."""
    return await _play(
        service, table_id, actor, idem, action={"kind": "discard", "card": body.card}, body=body
    )


@router.post("/moves/knock", response_model=CommandOut, responses=COMMAND_ERRORS)
async def knock(
    table_id: str, body: CardBody, actor: CurrentActor, service: ServiceDep, idem: IdempotencyDep
) -> JSONResponse:
    """Discard ``card`` and knock (gin with no deadwood left); the hand is settled at once."""
    return await _play(
        service, table_id, actor, idem, action={"kind": "knock", "card": body.card}, body=body
    )


@router.post("/moves/big-gin", response_model=CommandOut, responses=COMMAND_ERRORS)
async def big_gin(
    table_id: str,
    actor: CurrentActor,
    service: ServiceDep,
    idem: IdempotencyDep,
    body: OptionalVersioned = None,
) -> JSONResponse:
    """Declare big gin: all 11 cards melded, no discard (rulesets with a big gin bonus)."""
    return await _play(service, table_id, actor, idem, action={"kind": "big_gin"}, body=body)


@router.post("/next-hand", response_model=CommandOut, responses=COMMAND_ERRORS)
async def next_hand(
    table_id: str,
    actor: CurrentActor,
    service: ServiceDep,
    idem: IdempotencyDep,
    body: OptionalVersioned = None,
) -> JSONResponse:
    """Deal the next hand once the last one is over (either seated player)."""
    return await _play(service, table_id, actor, idem, action={"kind": "next_hand"}, body=body)


@router.post("/resign", response_model=CommandOut, responses=COMMAND_ERRORS)
async def resign(
    table_id: str,
    actor: CurrentActor,
    service: ServiceDep,
    idem: IdempotencyDep,
    body: OptionalVersioned = None,
) -> JSONResponse:
    """Resign the match: the opponent wins it."""
    return await _play(service, table_id, actor, idem, action={"kind": "resign"}, body=body)
