"""The lobby's seeks: post one, list the open ones, read, cancel, accept, take a bot offered."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import JSONResponse

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import IDEMPOTENT, CommandCaller, CurrentActor
from app.api.http.routes.common import command_response
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.seeks import BotPick, SeekCreate, SeekOut
from app.service.lobby import Game, Lobby

router = APIRouter(tags=["lobby"], route_class=StrictJSONRoute)


async def get_lobby(request: Request) -> Lobby:
    lobby: Lobby = request.app.state.lobby
    return lobby


LobbyDep = Annotated[Lobby, Depends(get_lobby)]


def game_of(body: SeekCreate | Any) -> Game:
    """The game a seek or challenge body asks for."""
    clock = None if body.clock is None else body.clock.model_dump(exclude_none=True)
    return Game(body.preset, body.rules, clock, body.rated, body.deck_design)


@router.post(
    "/v1/seeks",
    status_code=201,
    response_model=SeekOut,
    responses=error_responses(401, 409, 413, 422),
    openapi_extra=IDEMPOTENT,
)
async def post_seek(body: SeekCreate, caller: CommandCaller, lobby: LobbyDep) -> JSONResponse:
    """Seek a game (the fields of ``POST /v1/tables``): listed in the lobby and paired in its
    pool by rating; ``GET`` it (or the ``seek_paired`` message) for the table. A live seek
    lives while you have a socket open (409 too_many_seeks, too_many_live_games,
    too_many_correspondence_games: the caps)."""
    result = await lobby.post(
        caller.actor,
        game_of(body),
        rating_range=(body.rating_min, body.rating_max),
        bot_after=body.bot_after,
        expires_in=body.expires_in,
        idempotency=caller.idempotency,
    )
    return command_response(result)


@router.get("/v1/seeks", response_model=list[SeekOut])
async def list_seeks(lobby: LobbyDep) -> list[dict[str, Any]]:
    """The lobby: every open seek, oldest first (public: who, their rating, bot or not, what
    game); ``/v1/lobby/ws`` tells what changes."""
    return await lobby.listed()


@router.get("/v1/players/me/seeks", response_model=list[SeekOut], responses=error_responses(401))
async def my_seeks(actor: CurrentActor, lobby: LobbyDep) -> list[dict[str, Any]]:
    """Your open seeks and challenges, and the open challenges to you."""
    return await lobby.mine(actor)


@router.get("/v1/seeks/{seek_id}", response_model=SeekOut, responses=error_responses(404, 422))
async def get_seek(seek_id: str, lobby: LobbyDep) -> dict[str, Any]:
    """A seek: open, or paired with its ``table_id``, or closed with its reason."""
    return await lobby.get(seek_id, "seek")


@router.delete(
    "/v1/seeks/{seek_id}",
    response_model=SeekOut,
    responses=error_responses(401, 403, 404, 409, 422),
)
async def cancel_seek(seek_id: str, actor: CurrentActor, lobby: LobbyDep) -> dict[str, Any]:
    """Cancel your open seek (409 seek_closed once paired or closed)."""
    return await lobby.cancel(actor, seek_id, "seek")


@router.post(
    "/v1/seeks/{seek_id}/accept",
    response_model=SeekOut,
    responses=error_responses(401, 404, 409, 422),
)
async def accept_seek(seek_id: str, actor: CurrentActor, lobby: LobbyDep) -> dict[str, Any]:
    """Take a listed seek: one acceptor wins, the others get 409 seek_closed. The answer is
    your own row of the pairing, with the started table's ``table_id``."""
    return await lobby.accept(actor, seek_id, "seek")


@router.post(
    "/v1/seeks/{seek_id}/bot",
    response_model=SeekOut,
    responses=error_responses(401, 403, 404, 409, 413, 422),
)
async def take_bot(
    seek_id: str,
    actor: CurrentActor,
    lobby: LobbyDep,
    body: Annotated[BotPick | None, Body()] = None,
) -> dict[str, Any]:
    """Play the bot offered to your live seek (409 no_bot_offer before the offer): the seek
    is paired with a started table against that bot."""
    return await lobby.accept_bot(actor, seek_id, (body or BotPick()).level)
