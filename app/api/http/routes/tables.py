"""Tables: create, view, join by invite, bot seat, start, rematch, deck, chat, log, hands."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from fastapi.responses import JSONResponse

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import IDEMPOTENT, TOKEN_OPTIONAL, CommandCaller, ServiceDep, ViewerDep
from app.api.http.routes.common import COMMAND_ROUTE, command_response, submit
from app.api.http.schemas.common import INT32, error_responses
from app.api.http.schemas.tables import (
    EVENTS_EXAMPLE,
    BotBody,
    ChatBody,
    CommandOut,
    DeckBody,
    HandOut,
    InviteOut,
    JoinBody,
    TableCreate,
    TableOut,
    Versioned,
)
from app.table.clock import Claim
from app.table.commands import (
    AnswerRematch,
    Chat,
    ChooseDeck,
    Rematch,
    RemoveBot,
    SeatBot,
    Start,
)

router = APIRouter(tags=["tables"], route_class=StrictJSONRoute)


@router.post(
    "/v1/tables",
    status_code=201,
    response_model=TableOut,
    responses=error_responses(401, 409, 413, 422),
    openapi_extra=IDEMPOTENT,
)
async def create_table(body: TableCreate, caller: CommandCaller) -> JSONResponse:
    """Create a table from a preset and rule overrides; you take seat 0 and get the invite."""
    result = await caller.service.create_table(
        caller.actor,
        body.preset,
        body.rules,
        body.deck_design,
        caller.idempotency,
        rated=body.rated,
        hints=bool(body.hints),
        clock=None if body.clock is None else body.clock.model_dump(exclude_none=True),
    )
    return command_response(result)


@router.get(
    "/v1/tables/{table_id}",
    response_model=TableOut,
    responses=error_responses(401, 404, 422),
    openapi_extra=TOKEN_OPTIONAL,
)
async def get_table(table_id: str, viewer: ViewerDep) -> dict[str, Any]:
    """Your view of the table: a seat's view, or a spectator's (no token, or not seated)."""
    return await viewer.service.table_view(table_id, viewer.actor)


@router.get(
    "/v1/invites/{code}",
    response_model=InviteOut,
    responses=error_responses(404, 422),
    openapi_extra=TOKEN_OPTIONAL,
)
async def invite(code: str, service: ServiceDep) -> dict[str, Any]:
    """What the invite offers before you accept it: the table, who invites, the rules, whether
    it is rated, its clock, and whether seat 1 is still free (404 invite_not_found)."""
    return await service.invite(code)


@router.post("/v1/invites/{code}", **COMMAND_ROUTE)
async def join(
    code: str, caller: CommandCaller, body: Annotated[JoinBody | None, Body()] = None
) -> JSONResponse:
    """Join the invite's table in seat 1 (409 table_full once both seats are taken; 409
    invite_mismatch if ``table_id`` is not the invite's table)."""
    body = body or JoinBody()
    result = await caller.service.join(
        code, caller.actor, body.deck_design, caller.idempotency, table_id=body.table_id
    )
    return command_response(result)


@router.post("/v1/tables/{table_id}/bot", **COMMAND_ROUTE)
async def seat_bot(table_id: str, body: BotBody, caller: CommandCaller) -> JSONResponse:
    """Seat a bot (TITO easy, CARMEN medium, LUNA hard) in the empty seat 1, or change its
    level; creator only, and never during a match (409 ``match_in_progress``)."""
    return await submit(caller, table_id, SeatBot(body.level))


@router.delete("/v1/tables/{table_id}/bot", **COMMAND_ROUTE)
async def remove_bot(table_id: str, caller: CommandCaller) -> JSONResponse:
    """Empty the bot's seat between matches, so a player may join by invite again."""
    return await submit(caller, table_id, RemoveBot())


@router.post("/v1/tables/{table_id}/start", **COMMAND_ROUTE)
async def start(
    table_id: str, caller: CommandCaller, body: Annotated[Versioned | None, Body()] = None
) -> JSONResponse:
    """The creator (seat 0) deals the first hand once seat 1 is taken."""
    return await submit(caller, table_id, Start(), body)


@router.post("/v1/tables/{table_id}/rematch", **COMMAND_ROUTE)
async def rematch(
    table_id: str, caller: CommandCaller, body: Annotated[Versioned | None, Body()] = None
) -> JSONResponse:
    """Ask for a new match at the same table and seats once it is over: the other seat accepts
    or declines. A bot seat accepts at once, as does a player who had asked too (409
    ``rematch_already_offered`` if you asked already)."""
    return await submit(caller, table_id, Rematch(), body)


@router.post("/v1/tables/{table_id}/rematch/accept", **COMMAND_ROUTE)
async def accept_rematch(
    table_id: str, caller: CommandCaller, body: Annotated[Versioned | None, Body()] = None
) -> JSONResponse:
    """Accept the rematch your opponent asked for: the new match starts (409
    ``no_rematch_offer`` if they asked for none)."""
    return await submit(caller, table_id, AnswerRematch(accept=True), body)


@router.post("/v1/tables/{table_id}/rematch/decline", **COMMAND_ROUTE)
async def decline_rematch(
    table_id: str, caller: CommandCaller, body: Annotated[Versioned | None, Body()] = None
) -> JSONResponse:
    """Decline the rematch your opponent asked for; the table stays as the match left it
    (409 ``no_rematch_offer`` if they asked for none)."""
    return await submit(caller, table_id, AnswerRematch(accept=False), body)


@router.post("/v1/tables/{table_id}/claim", **COMMAND_ROUTE)
async def claim(
    table_id: str, caller: CommandCaller, body: Annotated[Versioned | None, Body()] = None
) -> JSONResponse:
    """Claim the match: your opponent's time ran out at a ``claim`` table, or they made no move
    for the abandonment time (409 ``nothing_to_claim`` otherwise)."""
    return await submit(caller, table_id, Claim(), body)


@router.put("/v1/tables/{table_id}/deck", **COMMAND_ROUTE)
async def choose_deck(table_id: str, body: DeckBody, caller: CommandCaller) -> JSONResponse:
    """Pick your seat's deck design; every view shows it for your seat."""
    return await submit(caller, table_id, ChooseDeck(body.design))


@router.post(
    "/v1/tables/{table_id}/chat",
    response_model=CommandOut,
    responses=error_responses(401, 403, 404, 409, 413, 422),
    openapi_extra=IDEMPOTENT,
)
async def chat(table_id: str, body: ChatBody, caller: CommandCaller) -> JSONResponse:
    """Say something at the table (1-500 characters; rate limited per player, 429 says when)."""
    return await submit(caller, table_id, Chat(body.text))


@router.get(
    "/v1/tables/{table_id}/events",
    response_model=list[dict[str, Any]],
    responses={
        200: {"content": {"application/json": {"example": EVENTS_EXAMPLE}}},
        **error_responses(401, 404, 422),
    },
    openapi_extra=TOKEN_OPTIONAL,
)
async def events(
    table_id: str,
    viewer: ViewerDep,
    since: Annotated[int, Query(ge=0, le=INT32, description="the last seq you have")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 500,
) -> list[dict[str, Any]]:
    """The table's log after ``since``, each event redacted for you, with contiguous seqs."""
    loaded = await viewer.service.load(table_id)
    seat = loaded.seat_of(viewer.actor.player_id if viewer.actor else None)
    return await viewer.service.events_since(table_id, since, seat, limit)


@router.get(
    "/v1/tables/{table_id}/hands/{number}",
    response_model=HandOut,
    responses=error_responses(404, 409, 422),
)
async def hand(
    table_id: str,
    number: Annotated[int, Path(ge=1, le=INT32)],
    service: ServiceDep,
    match: Annotated[int | None, Query(ge=1, le=INT32, description="default: latest")] = None,
) -> dict[str, Any]:
    """A finished hand in full (409 hand_not_finished while it is being played)."""
    return await service.hand_history(table_id, number, match)
