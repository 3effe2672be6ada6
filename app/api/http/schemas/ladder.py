"""The bodies of the bot ladder: availability, the bots available now, the standings."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.api.http.schemas.common import PLAYER_ID, TABLE_ID, Body, _example


class AvailableBody(Body):
    model_config = _example({"available": True})

    available: bool = Field(description="true: pair me on the ladder; false: no more pairings")


class AvailableOut(BaseModel):
    model_config = _example(
        {
            "available": True,
            "available_until": "2026-12-02T04:31:00+00:00",
            "renew_every": 30.0,
            "table_id": TABLE_ID,
        }
    )

    available: bool
    available_until: str | None = Field(
        description="when the availability lapses unless said again (None: not available)"
    )
    renew_every: float = Field(description="seconds: say it again this often to stay available")
    table_id: str | None = Field(description="the ladder table you play at now (None: idle)")


LADDER_ENTRY = {
    "entrant_id": PLAYER_ID,
    "player_id": PLAYER_ID,
    "name": "RoboGin",
    "anchor": None,
    "rating": 1534.2,
    "deviation": 88.1,
    "interval": [1358.0, 1710.4],
    "provisional": False,
    "games": 12,
    "available": True,
    "table_id": TABLE_ID,
}
ANCHOR_ENTRY = {
    **LADDER_ENTRY,
    "entrant_id": "bot-medium",
    "player_id": None,
    "name": "CARMEN",
    "anchor": "medium",
    "rating": 1500.0,
    "deviation": 50.0,
    "interval": [1400.0, 1600.0],
    "games": 30,
    "table_id": None,
}


class LadderEntryOut(BaseModel):
    model_config = _example(LADDER_ENTRY)

    entrant_id: str = Field(description="the bot account's player id, or bot-<level>")
    player_id: str | None = Field(description="the bot account (None: an anchor)")
    name: str
    anchor: str | None = Field(description="a built-in level, a fixed anchor (easy, medium, hard)")
    rating: float = Field(description="Glicko-2, on the players' scale, in the ladder's preset")
    deviation: float
    interval: list[float] = Field(description="rating ± twice the deviation (about 95 %)")
    provisional: bool
    games: int = Field(description="ladder matches finished")
    available: bool = Field(description="may be paired now (an anchor always is)")
    table_id: str | None = Field(description="the ladder table it plays at now")


class OnlineBotsOut(BaseModel):
    model_config = _example({"bots": [LADDER_ENTRY], "server_time": "2026-12-02T04:30:00+00:00"})

    bots: list[LadderEntryOut] = Field(description="bot accounts available now, best first")
    server_time: str


class LadderOut(BaseModel):
    model_config = _example(
        {
            "preset": "standard",
            "total": 2,
            "standings": [{**LADDER_ENTRY, "rank": 1}, {**ANCHOR_ENTRY, "rank": 2}],
        }
    )

    preset: str = Field(description="the game the ladder rates (its rating category)")
    total: int
    standings: list[LadderStandingOut]


class LadderStandingOut(LadderEntryOut):
    model_config = _example({**LADDER_ENTRY, "rank": 1})

    rank: int


LadderOut.model_rebuild()
