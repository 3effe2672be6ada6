"""Players: create an anonymous player (and their token), read yourself and your history."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import CurrentActor, ServiceDep
from app.api.request_body import StrictJSONRoute
from app.api.schemas import (
    MatchRecordOut,
    PlayerCreate,
    PlayerCreated,
    PlayerOut,
    error_responses,
)

router = APIRouter(prefix="/v1/players", tags=["players"], route_class=StrictJSONRoute)


@router.post("", status_code=201, response_model=PlayerCreated, responses=error_responses(413, 422))
async def create_player(body: PlayerCreate, service: ServiceDep) -> PlayerCreated:
    """Create an anonymous player; the token is returned once and only its hash is kept."""
    actor, token = await service.create_player(body.name)
    return PlayerCreated(id=actor.player_id, name=actor.name, token=token)


@router.get("/me", response_model=PlayerOut, responses=error_responses(401))
async def me(actor: CurrentActor) -> PlayerOut:
    """The player holding the bearer token."""
    return PlayerOut(id=actor.player_id, name=actor.name)


@router.get("/me/matches", response_model=list[MatchRecordOut], responses=error_responses(401))
async def my_matches(actor: CurrentActor, service: ServiceDep) -> list[MatchRecordOut]:
    """Finished matches only (target or resignation), newest first; abandoned ones never count."""
    return [MatchRecordOut.model_validate(m) for m in await service.match_history(actor)]
