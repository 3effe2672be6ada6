"""Players: create an anonymous player (and their token), read yourself and your history, and
manage your tokens (list, issue another, rotate the one in use, revoke any)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.convertors import Convertor, register_url_convertor

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import CurrentActor, ServiceDep, bearer_token, client_address
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.players import (
    BotMarked,
    PlayerCreate,
    PlayerCreated,
    PlayerOut,
    TokenCreate,
    TokenCreated,
    TokenOut,
)
from app.api.http.schemas.ratings import MatchRecordOut
from app.service.tokens import Issued

router = APIRouter(prefix="/v1/players", tags=["players"], route_class=StrictJSONRoute)


@router.post(
    "",
    status_code=201,
    response_model=PlayerCreated,
    responses=error_responses(413, 422),
)
async def create_player(request: Request, body: PlayerCreate, service: ServiceDep) -> PlayerCreated:
    """Create an anonymous player; the token is returned once and only its hash is kept."""
    actor, token = await service.create_player(body.name, client_address(request), bot=body.bot)
    return PlayerCreated(id=actor.player_id, name=actor.name, token=token)


@router.get("/me", response_model=PlayerOut, responses=error_responses(401))
async def me(actor: CurrentActor) -> PlayerOut:
    """The player holding the bearer token."""
    return PlayerOut(id=actor.player_id, name=actor.name)


@router.post("/me/bot", response_model=BotMarked, responses=error_responses(401, 409))
async def mark_bot(request: Request, actor: CurrentActor) -> BotMarked:
    """Mark your account as a bot account, for good: only before it first sits at a table
    (409 already_played), and it is never unmarked. The lobby shows it as a bot."""
    await request.app.state.lobby.mark_bot(actor)
    return BotMarked(id=actor.player_id, bot=True)


@router.get(
    "/me/matches", response_model=list[MatchRecordOut], responses=error_responses(401, 404, 422)
)
async def my_matches(
    actor: CurrentActor,
    service: ServiceDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    before: Annotated[
        str | None,
        Query(max_length=80, description="the last match_id you have: the page after it"),
    ] = None,
) -> list[MatchRecordOut]:
    """Finished matches only (target or resignation), newest first, a page at a time; abandoned
    ones never count. A page shorter than ``limit`` is the last."""
    page = await service.match_history(actor, limit, before)
    return [MatchRecordOut.model_validate(m) for m in page]


def _created(issued: Issued) -> TokenCreated:
    return TokenCreated(
        **TokenOut.model_validate(issued.token, from_attributes=True).model_dump(),
        token=issued.secret,
    )


@router.get("/me/tokens", response_model=list[TokenOut], responses=error_responses(401))
async def my_tokens(actor: CurrentActor, service: ServiceDep) -> list[TokenOut]:
    """Your tokens, oldest first: id, label, when issued, last used and expiring; no secret."""
    return [
        TokenOut.model_validate(t, from_attributes=True) for t in await service.tokens.list(actor)
    ]


@router.post(
    "/me/tokens",
    status_code=201,
    response_model=TokenCreated,
    responses=error_responses(401, 413, 422),
)
async def issue_token(body: TokenCreate, actor: CurrentActor, service: ServiceDep) -> TokenCreated:
    """Another token for you (for another device); the one you used stays valid."""
    return _created(await service.tokens.issue(actor.player_id, body.label))


@router.post(
    "/me/tokens/rotate",
    status_code=201,
    response_model=TokenCreated,
    responses=error_responses(401),
)
async def rotate_token(request: Request, actor: CurrentActor, service: ServiceDep) -> TokenCreated:
    """A new token in place of the one this request carries, which is revoked at once; your
    tables, seats, ratings and history stay yours."""
    return _created(await service.tokens.rotate(bearer_token(request.headers)))


class TokenId(Convertor[str]):
    """A token's id (32 hex digits), so that ``/me/tokens/rotate`` is never taken for one."""

    regex = "[0-9a-f]{32}"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("token_id", TokenId())


@router.delete(
    "/me/tokens/{token_id:token_id}",
    response_model=list[TokenOut],
    responses=error_responses(401, 404, 422),
)
async def revoke_token(token_id: str, actor: CurrentActor, service: ServiceDep) -> list[TokenOut]:
    """Revoke one of your tokens (the one in use too); every server process refuses it from
    then on (see docs/security.md for how soon). Answers with the tokens you have left."""
    await service.tokens.revoke(actor, token_id)
    return await my_tokens(actor, service)
