"""The bodies of the lobby: seeks, challenges, and what they show."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.api.http.schemas.common import OPPONENT_ID, PLAYER_ID, TABLE_ID, Body, _example
from app.api.http.schemas.tables import BotLevel, TableCreate
from app.service.lobby import DECLINE_REASONS

SEEK_ID = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
MINE_ID = "0f9e8d7c6b5a49382716a5b4c3d2e1f0"
MAX_RATING = 4000
# The longest expiry the schema states (the server's ``lobby_seek_max_seconds`` may be less).
MAX_EXPIRY = 30 * 86400
_RANGE = "the opponent's rating at least / at most this (default: any)"
_EXPIRES = (
    "seconds until it expires unless taken: at most the server's lobby_seek_max_seconds (30 "
    "days by default); default lobby_seek_default_seconds (7 days)"
)


class _Game(TableCreate):
    """The game, in the fields of ``POST /v1/tables``."""

    model_config = ConfigDict(extra="forbid")

    expires_in: float | None = Field(None, gt=0, le=MAX_EXPIRY, description=_EXPIRES)


class SeekCreate(_Game):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"preset": "standard"},
                {
                    "preset": "standard",
                    "rated": True,
                    "clock": {"control": "bank", "seconds": 300, "bonus": 5},
                    "rating_min": 1400,
                    "rating_max": 1700,
                    "bot_after": 60,
                },
                {
                    "preset": "standard",
                    "clock": {"control": "per_move", "seconds": 259200},
                    "expires_in": 1209600,
                },
            ]
        },
    )

    rating_min: int | None = Field(None, ge=0, le=MAX_RATING, description=_RANGE)
    rating_max: int | None = Field(None, ge=0, le=MAX_RATING, description=_RANGE)
    bot_after: float | None = Field(
        None,
        ge=5,
        le=3600,
        description="live seeks: offer me a bot (bot_offered) after waiting this many seconds",
    )

    @model_validator(mode="after")
    def _range(self) -> SeekCreate:
        low, high = self.rating_min, self.rating_max
        if low is not None and high is not None and low > high:
            raise ValueError("rating_min is at most rating_max")
        return self


class ChallengeCreate(_Game):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"to": "Bo", "preset": "standard", "clock": {"control": "per_move", "seconds": 60}},
                {"preset": "classic", "expires_in": 86400},
            ]
        },
    )

    to: str | None = Field(
        None,
        min_length=1,
        max_length=40,
        description="the challenged player's id or name (any case; 409 ambiguous_name when "
        "several share it); none: an open challenge, taken by whoever opens its url first",
    )


class DeclineBody(Body):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"reason": "later"}]})

    reason: Literal[DECLINE_REASONS] = "generic"  # type: ignore[valid-type]


class BotPick(Body):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"level": "medium"}]})

    level: BotLevel = "medium"


class SeekPlayer(BaseModel):
    id: str
    name: str
    rating: float = Field(description="their rating in the preset's category when they posted")
    bot: bool = Field(description="a bot account (a built-in bot plays only when offered)")


class SeekTarget(BaseModel):
    id: str
    name: str


class SeekGame(BaseModel):
    preset: str
    rules: dict[str, Any] = Field(description="the rule overrides asked for")
    clock: dict[str, Any] | None = Field(description="the time control asked for")
    rated: bool
    deck_design: str = Field(description="the owner's deck design at the table")
    speed: Literal["live", "correspondence"] = Field(
        description="correspondence: no clock, or a per-move clock of a day or more"
    )
    pool: str = Field(description="the quick-pairing pool: seeks of one pool are paired")


class RatingRange(BaseModel):
    min: float | None
    max: float | None


class BotOffer(BaseModel):
    offered_at: datetime


SEEK_EXAMPLE: dict[str, Any] = {
    "seek_id": SEEK_ID,
    "mode": "seek",
    "status": "paired",
    "reason": None,
    "player": {"id": PLAYER_ID, "name": "Ada", "rating": 1500.0, "bot": False},
    "target": None,
    "game": {
        "preset": "standard",
        "rules": {},
        "clock": {"control": "bank", "seconds": 300, "bonus": 5},
        "rated": True,
        "deck_design": "classic",
        "speed": "live",
        "pool": "standard/bank+300+5+300+claim/rated/4be1f0a2c9",
    },
    "rating_range": {"min": 1400, "max": 1700},
    "bot_after": 60,
    "bot_offer": None,
    "table_id": TABLE_ID,
    "opponent_id": OPPONENT_ID,
    "created_at": "2026-12-02T10:00:00Z",
    "expires_at": "2026-12-09T10:00:00Z",
    "url": None,
}


class SeekOut(BaseModel):
    model_config = _example(SEEK_EXAMPLE)

    seek_id: str
    mode: Literal["seek", "challenge"]
    status: Literal["open", "paired", "cancelled", "expired", "declined"]
    reason: str | None = Field(
        description="why it closed: a decline's reason, paired_elsewhere, a cap's code"
    )
    player: SeekPlayer
    target: SeekTarget | None = Field(description="a direct challenge's player")
    game: SeekGame
    rating_range: RatingRange
    bot_after: float | None
    bot_offer: BotOffer | None = Field(description="a bot was offered: POST .../bot to take it")
    table_id: str | None = Field(description="once paired: the started table")
    opponent_id: str | None = Field(description="once paired: who (none against a bot)")
    created_at: datetime
    expires_at: datetime
    url: str | None = Field(description="a challenge's link, to share")
