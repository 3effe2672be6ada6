"""The bodies of players, their tokens and socket tickets."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.api.http.schemas.common import NAME_PATTERN, PLAYER_ID, Body, _example, _printable


class PlayerCreate(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "Ada"}, {"name": "RoboRummy", "bot": True}]},
    )

    name: str = Field(
        min_length=1,
        max_length=40,
        description=(
            "Shown to the other players; normalised (NFC, runs of spaces as one). Not all "
            "whitespace, no control, format, bidi or invisible characters, at most 3 combining "
            "marks on a character (422 invalid_name); not a bot's name, TITO, CARMEN or LUNA, "
            "in any case or look-alike letters (422 reserved_name)."
        ),
        json_schema_extra={"pattern": NAME_PATTERN},
    )

    @field_validator("name")
    @classmethod
    def _trim(cls, value: str) -> str:
        value = _printable(value.strip())
        if not value:
            raise ValueError("name must not be blank")
        return value

    bot: bool = Field(
        False,
        strict=True,
        description="a bot account: marked as one in the lobby, for good (see /me/bot)",
    )


class BotMarked(BaseModel):
    model_config = _example({"id": PLAYER_ID, "bot": True})

    id: str
    bot: bool


class PlayerOut(BaseModel):
    model_config = _example({"id": PLAYER_ID, "name": "Ada"})

    id: str
    name: str


class PlayerCreated(PlayerOut):
    model_config = _example({"id": PLAYER_ID, "name": "Ada", "token": "kX3...q9w"})

    token: str = Field(description="Bearer token for every other call; shown only once.")


TOKEN_EXAMPLE = {
    "id": "0d1c2b3a495867768594a3b2c1d0e0f1",
    "label": "laptop",
    "created_at": "2026-11-30T12:00:00Z",
    "last_used_at": "2026-11-30T12:05:00Z",
    "expires_at": None,
}


class TokenCreate(Body):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"label": "laptop"}]})

    label: str | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description="Your own name for the token (where it is used); no control characters.",
        json_schema_extra={"pattern": NAME_PATTERN},
    )

    @field_validator("label")
    @classmethod
    def _printable_label(cls, value: str | None) -> str | None:
        return None if value is None else _printable(value)


class TokenOut(BaseModel):
    """One of your tokens; its secret is never shown again after it is issued."""

    model_config = _example(TOKEN_EXAMPLE)

    id: str
    label: str | None
    created_at: datetime
    last_used_at: datetime | None = Field(
        description="When a server process last resolved it (to within token_cache_seconds)."
    )
    expires_at: datetime | None


class TokenCreated(TokenOut):
    model_config = _example({**TOKEN_EXAMPLE, "last_used_at": None, "token": "kX3...q9w"})

    token: str = Field(description="The new bearer token; shown only once.")


class TicketOut(BaseModel):
    model_config = _example({"ticket": "Qm9i...x2", "expires_in": 30.0})

    ticket: str = Field(description="Opens one WebSocket as you: `?ticket=`; single use.")
    expires_in: float = Field(description="Seconds it stays valid if unused.")
