"""Challenges: to a named player, or open to whoever takes the link first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import IDEMPOTENT, CommandCaller, CurrentActor
from app.api.http.routes.common import command_response
from app.api.http.routes.seeks import LobbyDep, game_of
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.seeks import ChallengeCreate, DeclineBody, SeekOut

router = APIRouter(tags=["lobby"], route_class=StrictJSONRoute)


@router.post(
    "/v1/challenges",
    status_code=201,
    response_model=SeekOut,
    responses=error_responses(401, 404, 409, 413, 422, 429),
    openapi_extra=IDEMPOTENT,
)
async def post_challenge(
    body: ChallengeCreate, caller: CommandCaller, lobby: LobbyDep
) -> JSONResponse:
    """Challenge a player by id or name (they are told: ``challenge_received``), or leave it
    open: its ``url`` is taken by whoever opens it first. Rate limited per player (429); 404
    player_not_found, 409 ambiguous_name, 422 challenge_yourself."""
    result = await lobby.post(
        caller.actor,
        game_of(body),
        mode="challenge",
        target=body.to,
        expires_in=body.expires_in,
        idempotency=caller.idempotency,
    )
    return command_response(result)


@router.get(
    "/v1/challenges/{challenge_id}", response_model=SeekOut, responses=error_responses(404, 422)
)
async def get_challenge(challenge_id: str, lobby: LobbyDep) -> dict[str, Any]:
    """A challenge: open, or paired with its ``table_id``, declined with a reason, expired."""
    return await lobby.get(challenge_id, "challenge")


@router.post(
    "/v1/challenges/{challenge_id}/accept",
    response_model=SeekOut,
    responses=error_responses(401, 403, 404, 409, 422),
)
async def accept_challenge(
    challenge_id: str, actor: CurrentActor, lobby: LobbyDep
) -> dict[str, Any]:
    """Accept: the table is started at once (409 seek_closed if someone was first; 403
    not_challenged if it is to another player). The answer is your own row of the pairing."""
    return await lobby.accept(actor, challenge_id, "challenge")


@router.post(
    "/v1/challenges/{challenge_id}/decline",
    response_model=SeekOut,
    responses=error_responses(401, 403, 404, 409, 413, 422),
)
async def decline_challenge(
    challenge_id: str,
    actor: CurrentActor,
    lobby: LobbyDep,
    body: Annotated[DeclineBody | None, Body()] = None,
) -> dict[str, Any]:
    """Decline a challenge to you, with a reason code; you two are not paired again at once."""
    return await lobby.decline(actor, challenge_id, (body or DeclineBody()).reason)


@router.delete(
    "/v1/challenges/{challenge_id}",
    response_model=SeekOut,
    responses=error_responses(401, 403, 404, 409, 422),
)
async def cancel_challenge(
    challenge_id: str, actor: CurrentActor, lobby: LobbyDep
) -> dict[str, Any]:
    """Withdraw your open challenge."""
    return await lobby.cancel(actor, challenge_id, "challenge")
