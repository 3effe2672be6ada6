"""The bodies of tournaments: creation, entry, the tournament's view, listings and export."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.http.schemas.common import PLAYER_ID, TABLE_ID, Body, _example
from app.api.http.schemas.tables import BotLevel, TimeControlIn
from app.engine import PRESETS

TOURNAMENT_ID = "7d3e9c1a0b2f4e6d8a5c3b1e0f9d7c6a"
BOT_ENTRANT = "bot-medium-1"

_ENTRANTS = [
    {"id": PLAYER_ID, "name": "Ada", "bot_level": None, "player_id": PLAYER_ID,
     "rating": 1512.0, "withdrawn": False},
    {"id": BOT_ENTRANT, "name": "CARMEN", "bot_level": "medium", "player_id": None,
     "rating": 1500.0, "withdrawn": False},
]  # fmt: skip
_PAIRING = {
    "number": 1,
    "seat0": PLAYER_ID,
    "seat1": BOT_ENTRANT,
    "table_id": TABLE_ID,
    "status": "finished",
    "winner": PLAYER_ID,
    "record_id": f"{TABLE_ID}-1",
    "created_at": "2026-12-04T19:00:01Z",
    "finished_at": "2026-12-04T19:09:40Z",
}
_ROUNDS = [{"number": 1, "pairings": [_PAIRING]}]
_STANDING = {
    "rank": 1,
    "entrant_id": PLAYER_ID,
    "name": "Ada",
    "rating": 1512.0,
    "withdrawn": False,
    "score": 1.0,
    "played": 1,
    "wins": 1,
    "buchholz": 0.0,
    "sonneborn_berger": 0.0,
    "streak": 0,
    "progress": [1.0],
}
_SUMMARY: dict[str, Any] = {
    "tournament_id": TOURNAMENT_ID,
    "name": "Friday Swiss",
    "format": "swiss",
    "status": "running",
    "preset": "standard",
    "rules": {"target": 50},
    "clock": None,
    "rated": False,
    "admits": "both",
    "capacity": 16,
    "entrant_count": 2,
    "starts_at": "2026-12-04T19:00:00Z",
    "ends_at": None,
    "duration": None,
    "rounds_total": 3,
    "round_days": None,
    "round": 1,
    "round_deadline": None,
    "finished_at": None,
}


class TournamentCreate(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"format": "swiss", "rounds": 3, "rules": {"target": 50}, "admits": "both"},
                {"format": "arena", "duration": 1800, "rules": {"target": 50}, "capacity": 64},
                {
                    "format": "swiss",
                    "rounds": 5,
                    "round_days": 3,
                    "clock": {"control": "bank", "seconds": 86400, "bonus": 3600,
                              "cap": 172800},
                },
            ]
        },
    )  # fmt: skip

    format: Literal["arena", "swiss"]
    name: str | None = Field(None, min_length=1, max_length=80, pattern=r"^[^\x00-\x1f\x7f]+$")
    preset: str = Field("standard", json_schema_extra={"enum": list(PRESETS)})
    rules: dict[str, Any] = Field(
        default_factory=dict, description="Overrides of rule fields, as for POST /v1/tables."
    )
    clock: TimeControlIn | None = Field(None, description="each table's time control")
    rated: bool = Field(False, strict=True)
    admits: Literal["humans", "bots", "both"] = Field(
        "humans", description="who may enter: only humans unless the organiser chose otherwise"
    )
    capacity: int | None = Field(None, ge=2, le=4096, description="most entrants")
    starts_at: datetime | None = Field(None, description="default: in five minutes")
    duration: int | None = Field(None, ge=1, le=10**7, description="an arena's length, seconds")
    rounds: int | None = Field(None, ge=1, le=1000, description="a Swiss's number of rounds")
    round_days: float | None = Field(
        None, gt=0, le=60, description="a correspondence Swiss: the days a round may last"
    )


class BotEntryBody(Body):
    model_config = _example({"level": "medium"})

    level: BotLevel


class EntrantOut(BaseModel):
    id: str = Field(description="the player's id, or bot-<level>-<n> for a built-in bot")
    name: str
    bot_level: str | None
    player_id: str | None
    rating: float = Field(description="the rating when it entered (Glicko-2 scale)")
    withdrawn: bool


class PairingOut(BaseModel):
    number: int
    seat0: str = Field(description="the entrant who deals the first hand")
    seat1: str | None = Field(description="null: a bye")
    table_id: str | None
    status: Literal["playing", "finished", "drawn", "bye", "unfinished"]
    winner: str | None
    record_id: str | None = Field(description="the match record (GET /v1/matches/{id}/record)")
    created_at: str = Field(description="when it was paired")
    finished_at: str | None = Field(description="when its result was recorded")


class RoundOut(BaseModel):
    number: int = Field(description="the Swiss round; an arena has one list, number 1")
    pairings: list[PairingOut]


class StandingOut(BaseModel):
    rank: int
    entrant_id: str
    name: str
    rating: float
    withdrawn: bool
    score: float
    played: int
    wins: int
    buchholz: float
    sonneborn_berger: float
    streak: int = Field(description="an arena's wins in a row now")
    progress: list[float] = Field(description="points after each round (arena: each match)")


class TournamentSummaryOut(BaseModel):
    model_config = _example(_SUMMARY)

    tournament_id: str
    name: str
    format: Literal["arena", "swiss"]
    status: Literal["upcoming", "running", "finished"]
    preset: str
    rules: dict[str, Any]
    clock: dict[str, Any] | None
    rated: bool
    admits: Literal["humans", "bots", "both"]
    capacity: int
    entrant_count: int
    starts_at: str | None
    ends_at: str | None
    duration: int | None
    rounds_total: int | None
    round_days: float | None
    round: int
    round_deadline: str | None
    finished_at: str | None


class OrganiserOut(BaseModel):
    id: str
    name: str


class YouOut(BaseModel):
    entrant_id: str
    withdrawn: bool


class TournamentOut(TournamentSummaryOut):
    model_config = _example(
        {
            **_SUMMARY,
            "organiser": {"id": PLAYER_ID, "name": "Ada"},
            "entrants": _ENTRANTS,
            "standings": [_STANDING],
            "rounds": _ROUNDS,
            "you": {"entrant_id": PLAYER_ID, "withdrawn": False},
            "server_time": "2026-12-04T19:20:00Z",
        }
    )

    organiser: OrganiserOut
    entrants: list[EntrantOut]
    standings: list[StandingOut]
    rounds: list[RoundOut]
    you: YouOut | None = Field(description="your entry, when you are entered")
    server_time: str


class TournamentListOut(BaseModel):
    model_config = _example({"status": "running", "tournaments": [_SUMMARY], "offset": 0,
                             "limit": 50})  # fmt: skip

    status: Literal["upcoming", "running", "finished"]
    tournaments: list[TournamentSummaryOut]
    offset: int
    limit: int


class ExportTournamentOut(BaseModel):
    id: str
    name: str
    format: Literal["arena", "swiss"]
    preset: str
    rounds: int | None
    status: str


class TournamentExportOut(BaseModel):
    model_config = _example(
        {
            "format": "ginrummy-tournament-export",
            "version": 1,
            "tournament": {"id": TOURNAMENT_ID, "name": "Friday Swiss", "format": "swiss",
                           "preset": "standard", "rounds": 3, "status": "running"},
            "entrants": _ENTRANTS,
            "rounds": _ROUNDS,
        }
    )  # fmt: skip

    format: Literal["ginrummy-tournament-export"]
    version: Literal[1]
    tournament: ExportTournamentOut
    entrants: list[EntrantOut]
    rounds: list[RoundOut]
