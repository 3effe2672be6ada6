"""The body of a player's statistics."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.api.http.schemas.common import PLAYER_ID, _example


class PlayedWonOut(BaseModel):
    played: int
    won: int


class ByOpponentOut(BaseModel):
    """Counts against people and against each bot level."""

    human: PlayedWonOut
    easy: PlayedWonOut
    medium: PlayedWonOut
    hard: PlayedWonOut


class RatesOut(BaseModel):
    """Shares of the hands played (null before any): ended by the player's knock (gin and big
    gin included), by their gin, by their big gin, and won by undercutting a knock."""

    knock: float | None
    gin: float | None
    big_gin: float | None
    undercut: float | None


class RatingPointOut(BaseModel):
    at: str
    category: str
    rating: float
    deviation: float
    provisional: bool


_COUNT = {"played": 12, "won": 7}


class StatsOut(BaseModel):
    """A player's statistics over their finished matches (docs/review.md)."""

    model_config = _example(
        {
            "id": PLAYER_ID,
            "name": "Ada",
            "matches": {"human": _COUNT, "easy": _COUNT, "medium": _COUNT, "hard": _COUNT},
            "hands": {"human": _COUNT, "easy": _COUNT, "medium": _COUNT, "hard": _COUNT},
            "rates": {"knock": 0.41, "gin": 0.08, "big_gin": 0.01, "undercut": 0.05},
            "mean_knock_deadwood": 4.6,
            "reviewed_hands": 9,
            "accuracy": 81.5,
            "points_lost_per_hand": 6.2,
            "rating_history": [
                {
                    "at": "2026-11-30T10:00:00+00:00",
                    "category": "standard",
                    "rating": 1540.2,
                    "deviation": 180.4,
                    "provisional": True,
                }
            ],
        }
    )

    id: str
    name: str
    matches: ByOpponentOut
    hands: ByOpponentOut
    rates: RatesOut
    mean_knock_deadwood: float | None = Field(description="of the player's knocks but gins")
    reviewed_hands: int
    accuracy: float | None = Field(description="over the decisions of the reviewed hands")
    points_lost_per_hand: float | None
    rating_history: list[RatingPointOut] = Field(description="oldest first")
