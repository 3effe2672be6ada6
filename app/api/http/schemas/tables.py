"""The bodies of tables: creation, clocks, seats, invitations, the view, commands and moves,
the hand record."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from app.api.http.schemas.common import (
    CARD_PATTERN,
    CHAT_PATTERN,
    INT32,
    OPPONENT_ID,
    PLAYER_ID,
    TABLE_ID,
    Body,
    _example,
    _printable,
)
from app.api.http.schemas.players import PlayerOut
from app.api.http.schemas.reviews import ArrangedHandOut, ReplayStepOut
from app.engine import PRESETS, parse_card
from app.engine.rules import BOOLS, CHOICES, RANGES
from app.settings import Settings
from app.table.commands import CHAT_MAX, DeckDesign


def _rule_overrides_schema() -> dict[str, Any]:
    """The JSON schema of a table's rule overrides, read from the engine's own limits (the
    engine validates them: 422 ``invalid_ruleset`` otherwise)."""
    properties: dict[str, Any] = {name: {"type": "boolean"} for name in sorted(BOOLS)}
    properties |= {name: {"enum": list(values)} for name, values in CHOICES.items()}
    properties |= {
        name: {"type": "integer", "minimum": low, "maximum": high}
        for name, (low, high) in RANGES.items()
    }
    return {"type": "object", "properties": properties, "additionalProperties": False}


BotLevel = Literal["easy", "medium", "hard"]


_SETTINGS = Settings.model_fields
MAX_CLOCK_SECONDS = 30 * 86400
Policy = Literal["claim", "forfeit", "autoplay"]
_POLICY = "what a timeout does (docs/clocks.md); default claim"
_LEVEL = "the bot that plays a late seat's turns: policy autoplay only; default medium"


class NoClockIn(Body):
    """No clock: only abandonment ends a stalled match. Takes no other field."""

    control: Literal["none"] = "none"


class PerMoveClockIn(Body):
    """Each turn within ``seconds``."""

    control: Literal["per_move"]
    seconds: float = Field(
        gt=0,
        le=MAX_CLOCK_SECONDS,
        description="each turn's time; at least the server's clock_min_per_move "
        f"({_SETTINGS['clock_min_per_move'].default:g} s by default), at most 30 days",
        json_schema_extra={"minimum": _SETTINGS["clock_min_per_move"].default},
    )
    policy: Policy | None = Field(None, description=_POLICY)
    autoplay_level: BotLevel | None = Field(None, description=_LEVEL)


class BankClockIn(Body):
    """Each seat starts a match with ``seconds``, gains ``bonus`` after each of its turns,
    never above ``cap``."""

    control: Literal["bank"]
    seconds: float = Field(
        gt=0,
        le=MAX_CLOCK_SECONDS,
        description="each seat's time at the start of a match; at least the server's "
        f"clock_min_bank ({_SETTINGS['clock_min_bank'].default:g} s by default), at most 30 days",
        json_schema_extra={"minimum": _SETTINGS["clock_min_bank"].default},
    )
    bonus: float | None = Field(
        None, ge=0, le=MAX_CLOCK_SECONDS, description="added after each turn; at most cap"
    )
    cap: float | None = Field(
        None, gt=0, le=MAX_CLOCK_SECONDS, description="the most a seat may hold; default seconds"
    )
    policy: Policy | None = Field(None, description=_POLICY)
    autoplay_level: BotLevel | None = Field(None, description=_LEVEL)


def _control(value: Any) -> Any:
    """The clock's kind: a missing ``control`` is ``none``, as before the union."""
    if isinstance(value, dict):
        return value.get("control", "none")
    return getattr(value, "control", None)


# A table's clock (docs/clocks.md), told apart by ``control``: the schema says exactly which
# fields each control takes.
TimeControlIn = Annotated[
    Annotated[NoClockIn, Tag("none")]
    | Annotated[PerMoveClockIn, Tag("per_move")]
    | Annotated[BankClockIn, Tag("bank")],
    Discriminator(_control),
]


class NoClockOut(BaseModel):
    """A table without a clock: nothing counts down, so the view stays the same over time."""

    control: Literal["none"]


class ClockOut(BaseModel):
    """A clocked table's clock (docs/clocks.md). Count down ``deadline - server_time`` from when
    the view arrived, without trusting the client's own clock."""

    control: Literal["per_move", "bank"]
    seconds: float
    bonus: float
    cap: float
    policy: Literal["claim", "forfeit", "autoplay"]
    autoplay_level: BotLevel | None
    running: int | None = Field(description="The seat whose clock runs, or null.")
    remaining: list[float] = Field(description="Each seat's seconds left for its turn.")
    deadline: str | None = Field(
        description="When the running seat's time is up (ISO 8601, UTC).",
        json_schema_extra={"format": "date-time"},
    )
    expired: int | None = Field(description="The seat whose time ran out, until it moves.")
    autoplay: int | None = Field(description="The seat a bot plays for (policy autoplay).")
    server_time: str = Field(
        description="The server's time when it made the view (ISO 8601, UTC).",
        json_schema_extra={"format": "date-time"},
    )


class TableCreate(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"preset": "standard"},
                {
                    "preset": "classic",
                    "rules": {"target": 150, "knock_limit": 8},
                    "deck_design": "royal",
                },
                {"preset": "standard", "rated": True},
                {"preset": "standard", "hints": True},
                {
                    "preset": "standard",
                    "clock": {"control": "bank", "seconds": 86400, "bonus": 3600, "cap": 172800},
                },
            ],
            # A rated table plays its preset unchanged (its category is the preset).
            "if": {"properties": {"rated": {"const": True}}, "required": ["rated"]},
            "then": {
                "properties": {"rules": {"maxProperties": 0}, "hints": {"enum": [False, None]}}
            },
        },
    )

    preset: str = Field(
        "standard",
        description=", ".join(PRESETS),
        json_schema_extra={"enum": list(PRESETS)},
    )
    rules: dict[str, Any] = Field(
        default_factory=dict,
        description="Overrides of rule fields (RULES.md §9).",
        json_schema_extra=_rule_overrides_schema(),
    )
    deck_design: DeckDesign = "classic"
    rated: bool = Field(
        False,
        strict=True,
        description="Rated: its finished matches move ratings (preset unchanged only).",
    )
    clock: TimeControlIn | None = Field(None, description="the time control; default none")
    hints: bool | None = Field(
        None,
        strict=True,
        description="Casual only: the seat to move may ask LUNA for a hint (422 "
        "hints_on_rated on a rated table); the table's view says so to both players. "
        "Default: off.",
    )


class JoinBody(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"deck_design": "neon"}, {"deck_design": "neon", "table_id": TABLE_ID}]
        },
    )

    deck_design: DeckDesign = "classic"
    table_id: str | None = Field(
        default=None,
        max_length=64,
        description="The table the link named (`/t/{table_id}?invite=`): refuse to join "
        "any other (409 invite_mismatch). Clients should send it.",
    )


class InviteOut(BaseModel):
    """What an invite offers, before it is accepted (``GET /v1/invites/{code}``)."""

    model_config = _example(
        {
            "table_id": TABLE_ID,
            "inviter": {"id": PLAYER_ID, "name": "Ada"},
            "seat_open": True,
            "status": "waiting",
            "preset": "standard",
            "rated": True,
            "rules": {"preset": "standard", "upcard_offer": True, "knock_limit": 10, "target": 100},
            "clock": {
                "control": "per_move",
                "seconds": 60.0,
                "bonus": 0.0,
                "cap": 0.0,
                "policy": "forfeit",
                "autoplay_level": None,
                "running": None,
                "remaining": [60.0, 60.0],
                "deadline": None,
                "expired": None,
                "autoplay": None,
                "server_time": "2026-11-30T12:00:00+00:00",
            },
        }
    )

    table_id: str = Field(description="The invite's table: a link naming another is not it.")
    inviter: PlayerOut | None = Field(description="Who invites: the player in seat 0.")
    seat_open: bool = Field(description="Seat 1 is free: accepting the invite seats you.")
    status: Literal["waiting", "ready", "playing", "finished"]
    preset: str
    rated: bool = Field(description="Its finished matches move ratings.")
    hints: bool = Field(False, description="The seat to move may ask LUNA for a hint.")
    rules: dict[str, Any]
    clock: NoClockOut | ClockOut = Field(
        description="the time control (docs/clocks.md)", discriminator="control"
    )


class SeatOut(BaseModel):
    seat: int
    player: PlayerOut | None
    bot_level: str | None = Field(description="easy, medium or hard for a bot's seat")
    bot_name: str | None = Field(None, description="a bot's display name: TITO, CARMEN, LUNA")
    deck_design: DeckDesign | None


class BotBody(Body):
    """The level of the bot to seat (or to switch to, between matches)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"level": "hard"}]})

    level: BotLevel


_VIEW_EXAMPLE: dict[str, Any] = {
    "table_id": TABLE_ID,
    "version": 7,
    "seq": 9,
    "status": "playing",
    "preset": "standard",
    "rules": {"preset": "standard", "upcard_offer": True, "knock_limit": 10, "target": 100},
    "match_number": 1,
    "you": 1,
    "role": "seat",
    "seats": [
        {
            "seat": 0,
            "player": {"id": PLAYER_ID, "name": "Ada"},
            "bot_level": None,
            "deck_design": "classic",
        },
        {
            "seat": 1,
            "player": {"id": OPPONENT_ID, "name": "Bo"},
            "bot_level": None,
            "deck_design": "neon",
        },
    ],
    "game": {
        "you": 1,
        "match": {"status": "playing", "scores": [0, 0], "winner": None, "history": []},
        "hand": {
            "number": 1,
            "dealer": 0,
            "phase": "discard",
            "turn": 1,
            "stock_size": 30,
            "discard_pile": ["7H"],
            "yours": {
                "cards": ["3C", "4C", "5C", "KD", "KH", "KS", "2H", "4S", "8D", "9H", "QC"],
                "melds": [["3C", "4C", "5C"], ["KD", "KH", "KS"]],
                "deadwood_cards": ["2H", "4S", "8D", "9H", "QC"],
                "deadwood": 33,
            },
        },
        "legal": {
            "actions": ["discard", "resign"],
            "discards": ["2H", "QC"],
            "can_knock": False,
            "can_big_gin": False,
        },
    },
}


class TableOut(BaseModel):
    """A table as the caller may see it; ``game`` is the engine's view for the caller."""

    model_config = _example(_VIEW_EXAMPLE)

    table_id: str
    version: int = Field(description="Send as expected_version to refuse a stale move.")
    seq: int = Field(description="The seq of the newest event in the table's log.")
    status: Literal["waiting", "ready", "playing", "finished"]
    preset: str
    rated: bool = False
    hints: bool = Field(False, description="the seat to move may ask LUNA for a hint")
    rules: dict[str, Any]
    match_number: int
    you: int | None = Field(description="Your seat, or null for a spectator.")
    role: Literal["seat", "spectator"]
    seats: list[SeatOut]
    game: dict[str, Any] | None = Field(description="engine view (app.engine.views.view)")
    clock: NoClockOut | ClockOut = Field(
        description="the time control, each seat's time left and the deadline, as server times",
        discriminator="control",
    )
    invite_code: str | None = Field(None, description="Seat 0 only, until seat 1 is taken.")
    invite_url: str | None = None
    rematch_offer: int | None = Field(
        None,
        description="The seat that asked for a rematch, until the other seat accepts "
        "(POST .../rematch/accept) or declines (POST .../rematch/decline).",
    )


class CommandOut(BaseModel):
    """The caller's redacted events of this command and the table afterwards."""

    model_config = _example(
        {
            "version": 7,
            "seq": 9,
            "events": [{"seq": 9, "type": "drew_stock", "seat": 1, "stock_size": 30, "card": "2H"}],
            "table": _VIEW_EXAMPLE,
        }
    )

    version: int
    seq: int
    events: list[dict[str, Any]]
    table: TableOut


class Versioned(Body):
    """Optional for every move: refuse with 409 stale_version unless the table is there."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{}, {"expected_version": 7}]}
    )

    expected_version: int | None = Field(None, ge=0, le=INT32)


class DrawBody(Versioned):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"source": "stock"}, {"source": "discard", "expected_version": 7}]
        },
    )

    source: Literal["stock", "discard"]


class CardBody(Versioned):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"card": "QC"}, {"card": "10h", "expected_version": 8}]},
    )

    card: str = Field(
        description="A card code: AS, TH, 10h, kc ...",
        json_schema_extra={"pattern": CARD_PATTERN},
    )

    @field_validator("card")
    @classmethod
    def _card(cls, value: str) -> str:
        return parse_card(value).code


class ChatBody(Body):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"text": "good game!"}]}
    )

    text: str = Field(
        max_length=CHAT_MAX,
        description=f"At most {CHAT_MAX} characters, not all whitespace; no control characters "
        "but newline and tab.",
        json_schema_extra={"pattern": CHAT_PATTERN},
    )

    @field_validator("text")
    @classmethod
    def _trim(cls, value: str) -> str:
        value = _printable(value.strip(), allow_newlines=True)
        if not 1 <= len(value) <= CHAT_MAX:
            raise ValueError(f"a chat line has 1 to {CHAT_MAX} characters after trimming")
        return value


class DeckBody(Body):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"design": "forest"}]}
    )

    design: DeckDesign


# What seat 1 receives from the log: seat 0's stock draw is a numbered event without its card.
EVENTS_EXAMPLE: list[dict[str, Any]] = [
    {"seq": 6, "type": "upcard_passed", "seat": 1, "next": 0},
    {"seq": 7, "type": "drew_stock", "seat": 0, "stock_size": 30},
    {"seq": 8, "type": "discarded", "seat": 0, "card": "KD"},
    {
        "seq": 9,
        "type": "chat",
        "seat": 0,
        "player": {"id": PLAYER_ID, "name": "Ada"},
        "text": "your move",
    },
]


class HandOut(BaseModel):
    """A finished hand in full; re-deal with ``app.engine.cards.shuffled_deck(seed)``."""

    model_config = _example(
        {
            "table_id": TABLE_ID,
            "match_number": 1,
            "hand_number": 1,
            "ended_by": "hand_over",
            "commitment": "5d1e...c0",
            "seed": "a4f0...9e",
            "nonce": "0c3b...71",
            "commitment_valid": True,
            "dealer": 0,
            "deal": {
                "hands": [["AC", "..."], ["2D", "..."]],
                "upcard": "7H",
                "stock": ["9S", "..."],
            },
            "events": [
                {
                    "seq": 5,
                    "type": "hand_started",
                    "public": {"hand_number": 1},
                    "private": {"0": {"hand": ["AC", "..."]}, "1": {"hand": ["2D", "..."]}},
                }
            ],
            "result": {"hand_number": 1, "outcome": "knock", "winner": 0, "points": 11},
        }
    )

    table_id: str
    match_number: int
    hand_number: int
    ended_by: Literal["hand_over", "resignation", "timeout", "abandoned", "aborted"]
    commitment: str = Field(description="SHA-256 hex of f'{seed}:{nonce}', sent at the deal.")
    seed: str
    nonce: str
    commitment_valid: bool
    dealer: int
    deal: dict[str, Any] = Field(description="hands per seat, upcard, stock in drawing order")
    events: list[dict[str, Any]]
    result: dict[str, Any] | None
    dealt: list[ArrangedHandOut] = Field(description="both hands as dealt, arranged")
    steps: list[ReplayStepOut] = Field(description="each move and the table after it")
