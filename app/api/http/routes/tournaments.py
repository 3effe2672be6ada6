"""Tournaments: create, list, view, join, withdraw, enter a bot, start early, export."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import IDEMPOTENT, TOKEN_OPTIONAL, CommandCaller, CurrentActor, ViewerDep
from app.api.http.routes.common import command_response
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.tournaments import (
    BotEntryBody,
    TournamentCreate,
    TournamentExportOut,
    TournamentListOut,
    TournamentOut,
)
from app.service.tournaments import Tournaments

router = APIRouter(tags=["tournaments"], route_class=StrictJSONRoute)


async def _tournaments(request: Request) -> Tournaments:
    tournaments: Tournaments = request.app.state.tournaments
    return tournaments


TournamentsDep = Annotated[Tournaments, Depends(_tournaments)]


@router.post(
    "/v1/tournaments",
    status_code=201,
    response_model=TournamentOut,
    responses=error_responses(401, 409, 413, 422),
    openapi_extra=IDEMPOTENT,
)
async def create_tournament(
    body: TournamentCreate, caller: CommandCaller, tournaments: TournamentsDep
) -> JSONResponse:
    """Create an arena (``duration``) or a Swiss (``rounds``); you are its organiser (not an
    entrant: join to play). It starts at ``starts_at``, or when you start it."""
    data = body.model_dump()
    data["clock"] = None if body.clock is None else body.clock.model_dump(exclude_none=True)
    return command_response(await tournaments.create(caller.actor, data, caller.idempotency))


@router.get(
    "/v1/tournaments",
    response_model=TournamentListOut,
    responses=error_responses(422),
    openapi_extra=TOKEN_OPTIONAL,
)
async def list_tournaments(
    tournaments: TournamentsDep,
    status: Literal["upcoming", "running", "finished"] = "upcoming",
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> dict[str, Any]:
    """Tournaments of one status: upcoming soonest first, running and finished latest first."""
    return await tournaments.listing(status, offset, limit)


@router.get(
    "/v1/tournaments/{tournament_id}",
    response_model=TournamentOut,
    responses=error_responses(401, 404, 422),
    openapi_extra=TOKEN_OPTIONAL,
)
async def get_tournament(
    tournament_id: str, viewer: ViewerDep, tournaments: TournamentsDep
) -> dict[str, Any]:
    """Status, entrants, standings (with tie-breaks) and every round's pairings."""
    return await tournaments.view(tournament_id, viewer.actor)


@router.get(
    "/v1/tournaments/{tournament_id}/export",
    response_model=TournamentExportOut,
    responses=error_responses(404, 422),
    openapi_extra=TOKEN_OPTIONAL,
)
async def export_tournament(tournament_id: str, tournaments: TournamentsDep) -> dict[str, Any]:
    """Entrants, rounds and pairings with each match's record id and result: what
    ``python -m app.table.standings`` recomputes the standings from (docs/tournaments.md)."""
    return await tournaments.export(tournament_id)


@router.post(
    "/v1/tournaments/{tournament_id}/join",
    response_model=TournamentOut,
    responses=error_responses(401, 403, 404, 409, 422),
)
async def join_tournament(
    tournament_id: str, actor: CurrentActor, tournaments: TournamentsDep
) -> dict[str, Any]:
    """Enter (before or during it; in an arena, after withdrawing, resume)."""
    return await tournaments.join(actor, tournament_id)


@router.post(
    "/v1/tournaments/{tournament_id}/withdraw",
    response_model=TournamentOut,
    responses=error_responses(401, 404, 409, 422),
)
async def withdraw_from_tournament(
    tournament_id: str, actor: CurrentActor, tournaments: TournamentsDep
) -> dict[str, Any]:
    """Leave: no further pairing (an arena keeps your points: join again to resume)."""
    return await tournaments.withdraw(actor, tournament_id)


@router.post(
    "/v1/tournaments/{tournament_id}/bots",
    response_model=TournamentOut,
    responses=error_responses(401, 403, 404, 409, 413, 422),
)
async def enter_tournament_bot(
    tournament_id: str, body: BotEntryBody, actor: CurrentActor, tournaments: TournamentsDep
) -> dict[str, Any]:
    """The organiser enters a built-in bot (a tournament that admits bots)."""
    return await tournaments.add_bot(actor, tournament_id, body.level)


@router.post(
    "/v1/tournaments/{tournament_id}/start",
    response_model=TournamentOut,
    responses=error_responses(401, 403, 404, 409, 422),
)
async def start_tournament(
    tournament_id: str, actor: CurrentActor, tournaments: TournamentsDep
) -> dict[str, Any]:
    """The organiser starts it now (two entrants at least)."""
    return await tournaments.start(actor, tournament_id)
