"""Request and response bodies, with the examples the OpenAPI document shows."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from app.engine import PRESETS, parse_card
from app.engine.rules import BOOLS, CHOICES, RANGES
from app.service.commands import CHAT_MAX
from app.settings import Settings

DeckDesign = Literal["classic", "royal", "neon", "forest"]
# A card code as ``parse_card`` reads it: rank (A, 2-9, T or 10, J, Q, K) and suit, any case.
CARD_PATTERN = r"^\s*(10|[2-9TtJjQqKkAa])[CcDdHhSs]\s*$"
# A chat line: no control characters but newline and tab, and something besides whitespace.
_TEXT_CHAR = r"[^\x00-\x08\x0b-\x1f\x7f]"
CHAT_PATTERN = rf"^{_TEXT_CHAR}*[^\s\x00-\x1f\x7f]{_TEXT_CHAR}*$"
# A player's name: no control characters at all, and something besides whitespace.
NAME_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"

PLAYER_ID = "5f0c7d2e9a5b4c3e8f1a2b3c4d5e6f70"
OPPONENT_ID = "9b8a7c6d5e4f40312a1b2c3d4e5f6a7b"
TABLE_ID = "3c9d1f0e2b7a4e5d8c6b0a1f2e3d4c5b"


# Database integer columns are 32-bit: larger numbers are malformed input, not a server error.
INT32 = 2**31 - 1


def _printable(value: str, *, allow_newlines: bool = False) -> str:
    """Refuse control characters (NUL cannot even be stored by PostgreSQL)."""
    allowed = {"\n", "\t"} if allow_newlines else set()
    if any((ord(c) < 32 and c not in allowed) or c == "\x7f" for c in value):
        raise ValueError("control characters are not allowed")
    return value


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


def _example(value: Any) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [value]})


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    model_config = _example({"code": "not_your_turn", "message": "it is the other player's turn"})

    code: str
    message: str


class PlayerCreate(Body):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"name": "Ada"}]})

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
                {
                    "preset": "standard",
                    "clock": {"control": "bank", "seconds": 86400, "bonus": 3600, "cap": 172800},
                },
            ],
            # A rated table plays its preset unchanged (its category is the preset).
            "if": {"properties": {"rated": {"const": True}}, "required": ["rated"]},
            "then": {"properties": {"rules": {"maxProperties": 0}}},
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


PUSH_ENDPOINT = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bH..."
PUSH_SUBSCRIPTION_EXAMPLE = {
    "id": "0d6f4c1b2a3e4f5a6b7c8d9e0f1a2b3c",
    "endpoint": PUSH_ENDPOINT,
    "created_at": "2026-11-30T12:00:00Z",
}


class PushKeys(Body):
    p256dh: str = Field(
        pattern=r"^B[A-Za-z0-9_-]{86}=?$",
        description="The browser's P-256 public key, base64url of its 65-byte uncompressed point "
        "(it must lie on the curve: 422 invalid_push_subscription otherwise).",
    )
    auth: str = Field(
        pattern=r"^[A-Za-z0-9_-]{22}(==)?$",
        description="The browser's 16-byte authentication secret, base64url.",
    )


class PushSubscriptionIn(Body):
    """A browser's ``PushSubscription.toJSON()``, as it is."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "endpoint": PUSH_ENDPOINT,
                    "expirationTime": None,
                    "keys": {
                        "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-"
                        "Ts1XbjhazAkj7I99e8QcYP7DkM",
                        "auth": "tBHItJI5svbpez7KI4CCXg",
                    },
                }
            ]
        },
    )

    endpoint: str = Field(
        min_length=1,
        max_length=1024,
        description="The push service's URL for this browser: https, not a private address.",
    )
    keys: PushKeys
    expirationTime: float | None = Field(  # noqa: N815  (the browser's own name)
        default=None,
        strict=True,
        description="Ignored: the push service says when it is gone (404/410).",
    )


class PushSubscriptionOut(BaseModel):
    """One of your push subscriptions (a browser or device that gets your notifications)."""

    model_config = _example(PUSH_SUBSCRIPTION_EXAMPLE)

    id: str
    endpoint: str
    created_at: datetime


class PushKeyOut(BaseModel):
    model_config = _example(
        {
            "public_key": "BDd3_hVL9fZi9Ybo2UUzA284WG5FZR30_95YeZJsiApwXKpNcF1rRPF3foIiBHXRdJI2Qhu"
            "mhf6_LFTeZaNndIo"
        }
    )

    public_key: str = Field(
        description="The server's VAPID public key (uncompressed P-256 point, base64url): "
        "`applicationServerKey` of `PushManager.subscribe`."
    )


class StatusOut(BaseModel):
    model_config = _example({"status": "ok"})

    status: str


_ERROR_EXAMPLES: dict[int, tuple[str, str, str]] = {
    401: ("missing or unknown bearer token", "unauthorized", "a bearer token is required"),
    403: ("not your seat", "not_seated", "you do not hold a seat at this table"),
    404: ("unknown table", "table_not_found", "no table 'nope'"),
    409: (
        "a rule or the table's state says no, or the Idempotency-Key came with another request",
        "not_your_turn",
        "it is the other player's turn",
    ),
    413: ("the body is too large", "payload_too_large", "a request body has at most 8192 bytes"),
    422: ("malformed body", "invalid_request", "body.card: Value error, not a card: 'ZZ'"),
    429: (
        "over a rate limit: requests per bearer token or client address, or the route's own "
        "(chat lines per player)",
        "rate_limited",
        "too many requests for this token",
    ),
}
# Headers an error status always carries, as the OpenAPI document shows them.
_ERROR_HEADERS: dict[int, dict[str, Any]] = {
    429: {
        "Retry-After": {
            "description": "whole seconds until the limit lets the request through",
            "schema": {"type": "integer", "minimum": 1},
        }
    },
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the given error statuses, each with an example body."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        description, code, message = _ERROR_EXAMPLES[status]
        out[status] = {
            "model": ErrorOut,
            "description": description,
            "content": {"application/json": {"example": {"code": code, "message": message}}},
        }
        if status in _ERROR_HEADERS:
            out[status]["headers"] = _ERROR_HEADERS[status]
    return out


# Every operation but the health routes' counts against the rate limits
# (``app.api.edge.ratelimit``): the app includes each router with these ``responses``.
RATE_LIMITED = error_responses(429)
