"""The bot ladder: a bot account's availability, the bots available now, the standings."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import TOKEN_OPTIONAL, CurrentActor
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.ladder import AvailableBody, AvailableOut, LadderOut, OnlineBotsOut
from app.service.ladder import Ladder

router = APIRouter(tags=["bots"], route_class=StrictJSONRoute)


async def _ladder(request: Request) -> Ladder:
    ladder: Ladder = request.app.state.ladder
    return ladder


LadderDep = Annotated[Ladder, Depends(_ladder)]


@router.put(
    "/v1/bots/me/available",
    response_model=AvailableOut,
    responses=error_responses(401, 403, 413, 422),
)
async def set_available(body: AvailableBody, actor: CurrentActor, ladder: LadderDep) -> Any:
    """A bot account says it is available for the ladder (for ``LADDER_AVAILABLE_SECONDS``:
    say it again every ``renew_every`` seconds), or no longer; 403 ``not_a_bot`` otherwise."""
    return await ladder.set_available(actor, body.available)


@router.get(
    "/v1/bots/online",
    response_model=OnlineBotsOut,
    responses=error_responses(),
    openapi_extra=TOKEN_OPTIONAL,
)
async def online_bots(ladder: LadderDep) -> dict[str, Any]:
    """The bot accounts available for the ladder now, with their ratings."""
    return await ladder.online()


@router.get(
    "/v1/bots/ladder",
    response_model=LadderOut,
    responses=error_responses(422),
    openapi_extra=TOKEN_OPTIONAL,
)
async def ladder_standings(
    ladder: LadderDep,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> dict[str, Any]:
    """The ladder's standings: every bot account that entered and the anchors (TITO, CARMEN,
    LUNA), best rated first, each with its interval and games played."""
    return await ladder.standings(offset, limit)
