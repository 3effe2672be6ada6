"""The bodies of ratings and match records."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.api.http.schemas.common import OPPONENT_ID, TABLE_ID, _example
from app.api.http.schemas.players import PlayerOut


class SideScores(BaseModel):
    you: int
    opponent: int


class BotOpponentOut(BaseModel):
    level: str = Field(description="easy, medium or hard")
    name: str | None = Field(description="the level's display name (TITO, CARMEN, LUNA)")


class RatingChangeOut(BaseModel):
    """A rated match's change to one player's rating (Glicko-2, deviation after the match)."""

    category: str
    before: float
    after: float
    change: float
    deviation: float
    provisional: bool


class MatchRecordOut(BaseModel):
    model_config = _example(
        {
            "table_id": TABLE_ID,
            "match_number": 1,
            "seat": 0,
            "opponent": {"id": OPPONENT_ID, "name": "Bo"},
            "opponent_bot": None,
            "result": "win",
            "reason": "target",
            "scores": {"you": 104, "opponent": 37},
            "final_scores": {"you": 104, "opponent": 37},
            "finished_at": "2026-11-29T14:03:11+00:00",
            "match_id": f"{TABLE_ID}-1",
            "rating": {
                "category": "standard",
                "before": 1500.0,
                "after": 1662.3,
                "change": 162.3,
                "deviation": 290.3,
                "provisional": True,
            },
        }
    )

    table_id: str
    match_number: int
    seat: int
    opponent: PlayerOut | None = Field(description="the person in the other seat; None for a bot")
    opponent_bot: BotOpponentOut | None = Field(
        default=None, description="the bot in the other seat, if a bot held it"
    )
    result: Literal["win", "loss"]
    reason: Literal["target", "resignation", "timeout", "abandoned"]
    scores: SideScores
    final_scores: SideScores
    finished_at: str
    match_id: str = Field(description="the match's id for GET /v1/matches/{id}/record")
    rating: RatingChangeOut | None = Field(
        default=None, description="what the match did to your rating; null when casual"
    )
