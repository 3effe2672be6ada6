"""Ratings and records: leaderboards, public profiles, match records and a player's export."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from app.api.http.deps import CurrentActor, ServiceDep
from app.api.http.schemas.common import OPPONENT_ID, PLAYER_ID, TABLE_ID, error_responses
from app.api.http.schemas.players import PlayerOut
from app.api.http.schemas.ratings import RatingChangeOut
from app.api.http.schemas.stats import StatsOut
from app.engine import PRESETS
from app.errors import NotFoundError
from app.service import ratings, records, stats

router = APIRouter(tags=["ratings"])

_RATING = {"rating": 1642.7, "deviation": 74.1, "volatility": 0.059998, "provisional": False}


class BotRatingOut(BaseModel):
    level: str
    name: str
    rating: float = Field(description="fixed, anchored on CARMEN (medium) at 1500")


class LeaderboardEntryOut(BaseModel):
    rank: int
    player: PlayerOut
    rating: float
    deviation: float
    volatility: float
    provisional: bool
    games: int
    wins: int
    losses: int


class LeaderboardOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "category": "standard",
                    "offset": 0,
                    "limit": 50,
                    "next": "WzUwLDE1MTIuMywiOWYyYzRlIl0",
                    "entries": [
                        {
                            "rank": 1,
                            "player": {"id": PLAYER_ID, "name": "Ada"},
                            **_RATING,
                            "games": 31,
                            "wins": 20,
                            "losses": 11,
                        }
                    ],
                    "bots": [{"level": "medium", "name": "CARMEN", "rating": 1500}],
                }
            ]
        }
    )

    category: str
    offset: int
    limit: int
    next: str | None = Field(description="the after of the next page; null on the last")
    entries: list[LeaderboardEntryOut]
    bots: list[BotRatingOut] = Field(description="the bots' fixed ratings on the same scale")


class CategoryRatingOut(BaseModel):
    category: str
    rating: float
    deviation: float = Field(description="grown for the days since the last rated match")
    volatility: float
    provisional: bool
    games: int
    wins: int
    losses: int
    last_played_at: str


class RatingHistoryOut(RatingChangeOut):
    """One rated match in a player's history: its rating change, which match and its result."""

    match_id: str
    result: str
    at: str


class ProfileOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": PLAYER_ID,
                    "name": "Ada",
                    "won": 21,
                    "lost": 12,
                    "ratings": [
                        {
                            "category": "standard",
                            **_RATING,
                            "games": 31,
                            "wins": 20,
                            "losses": 11,
                            "last_played_at": "2026-11-29T14:03:11+00:00",
                        }
                    ],
                    "history": [
                        {
                            "match_id": f"{TABLE_ID}-1",
                            "result": "win",
                            "at": "2026-11-29T14:03:11+00:00",
                            "category": "standard",
                            "before": 1630.2,
                            "after": 1642.7,
                            "change": 12.5,
                            "deviation": 74.1,
                            "provisional": False,
                        }
                    ],
                }
            ]
        }
    )

    id: str
    name: str
    won: int = Field(description="finished matches won, rated or casual")
    lost: int
    ratings: list[CategoryRatingOut]
    history: list[RatingHistoryOut] = Field(description="rating changes, newest first")


_RECORD_EXAMPLE: dict[str, Any] = {
    "format": "ginrummy-match-record",
    "version": 1,
    "match_id": f"{TABLE_ID}-1",
    "table_id": TABLE_ID,
    "match_number": 1,
    "preset": "standard",
    "rated": True,
    "rules": {"preset": "standard", "target": 100, "...": "every Ruleset field"},
    "players": [
        {"seat": 0, "player": {"id": PLAYER_ID, "name": "Ada"}, "bot": None},
        {"seat": 1, "player": {"id": OPPONENT_ID, "name": "Bo"}, "bot": None},
    ],
    "match_seed": "9f2c...",
    "hands": [
        {
            "number": 1,
            "dealer": 0,
            "seed": "41d7...",
            "nonce": "0b5e...",
            "commitment": "c3a1...",
            "deal": {"hands": [["AC", "..."], ["2D", "..."]], "upcard": "7S", "stock": ["..."]},
            "actions": [{"seat": 1, "kind": "pass"}, {"seat": 0, "kind": "take_upcard"}],
            "result": {"hand_number": 1, "outcome": "knock", "winner": 0, "points": 17},
        }
    ],
    "result": {
        "winner": 0,
        "reason": "target",
        "scores": [104, 37],
        "bonuses": [{"game": 0, "line": 0}, {"game": 0, "line": 0}],
        "final_scores": [104, 37],
    },
    "finished_at": "2026-11-29T14:03:11+00:00",
}


@router.get(
    "/v1/matches/{match_id}/record",
    response_model=dict[str, Any],
    responses={
        200: {"content": {"application/json": {"example": _RECORD_EXAMPLE}}},
        **error_responses(404, 409, 422),
    },
)
async def match_record(match_id: str, service: ServiceDep) -> dict[str, Any]:
    """A finished match's record (``{table_id}-{match_number}``): every seed, deal, action and
    result, to check with ``python -m app.engine.verify`` (409 while the match is played)."""
    return await records.match_record(service.db, match_id)


@router.get(
    "/v1/players/me/matches/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"application/x-ndjson": {"example": "{...record 1...}\n{...}\n"}},
            "description": "one match record per line, oldest first",
        },
        **error_responses(401),
    },
)
async def export_matches(actor: CurrentActor, service: ServiceDep) -> StreamingResponse:
    """All your finished matches as NDJSON, one record per line, streamed."""
    return StreamingResponse(
        records.export(service.db, actor.player_id), media_type="application/x-ndjson"
    )


@router.get(
    "/v1/leaderboards/{category}",
    response_model=LeaderboardOut,
    responses=error_responses(404, 422),
)
async def leaderboard(
    category: str,
    service: ServiceDep,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    after: Annotated[
        str | None, Query(max_length=200, description="a page's next: the page after it")
    ] = None,
) -> dict[str, Any]:
    """Settled ratings (not provisional) with a rated match in the last 30 days, best first.
    Page by ``after`` (each page's ``next``), which walks no entry before the page; ``offset``
    skips entries (after ``after``, if given)."""
    if category not in PRESETS:
        raise NotFoundError("category_not_found", f"no category {category!r}")
    page = await ratings.leaderboard(service.db, category, offset, limit, after)
    return {
        "category": category,
        "offset": page.offset,
        "limit": page.limit,
        "next": page.next,
        "entries": page.entries,
        "bots": ratings.bots(),
    }


@router.get(
    "/v1/players/{player_id}", response_model=ProfileOut, responses=error_responses(404, 422)
)
async def profile(player_id: str, service: ServiceDep) -> dict[str, Any]:
    """A player's public profile: name, ratings, matches won and lost, rating history."""
    return await ratings.profile(service.db, player_id)


@router.get(
    "/v1/players/{player_id}/stats", response_model=StatsOut, responses=error_responses(404, 422)
)
async def player_stats(player_id: str, service: ServiceDep, request: Request) -> dict[str, Any]:
    """A player's matches and hands played and won by kind of opponent, how their hands ended,
    their knocks' mean deadwood, their accuracy in reviewed hands, their rating over time."""
    limit = request.app.state.settings.stats_max_matches
    return await stats.player_stats(service.db, player_id, limit)
