"""The WebSocket messages, both ways, as pydantic models (their JSON schema: ``ws_schema()``).

Every message is a JSON object with a ``type``. The protocol itself is described in
docs/protocol.md (WebSocket); the models here fix each message's shape and carry its example.
The server's messages are built in ``app.api.live.client_out``, the client's read in
``app.api.live.client_in``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from app.api.http.schemas.common import OPPONENT_ID, TABLE_ID
from app.api.http.schemas.players import PlayerOut
from app.api.http.schemas.seeks import SEEK_EXAMPLE, SEEK_ID, SeekOut
from app.api.http.schemas.tables import _VIEW_EXAMPLE, TableOut

ActionKind = Literal[
    "take_upcard",
    "pass",
    "draw_stock",
    "draw_discard",
    "discard",
    "knock",
    "big_gin",
    "next_hand",
    "resign",
]


def _example(value: dict[str, Any]) -> ConfigDict:
    return ConfigDict(extra="forbid", json_schema_extra={"examples": [value]})


# Server to client.


class ViewMessage(BaseModel):
    """The full view as this recipient may see it: sent on connect and on every resync."""

    model_config = _example({"type": "view", "seq": 9, "version": 7, "table": _VIEW_EXAMPLE})

    type: Literal["view"] = "view"
    seq: int = Field(description="Events up to this seq are folded into the view.")
    version: int
    table: TableOut


class EventMessage(BaseModel):
    """One event of the table's log, redacted for this recipient."""

    model_config = _example(
        {
            "type": "event",
            "seq": 10,
            "event": {"type": "drew_stock", "seat": 1, "stock_size": 29, "card": "2H"},
        }
    )

    type: Literal["event"] = "event"
    seq: int
    event: dict[str, Any] = Field(description="The engine event as this recipient may see it.")


class SkipMessage(BaseModel):
    """An event this recipient may not see: it only advances the seq."""

    model_config = _example({"type": "skip", "seq": 11})

    type: Literal["skip"] = "skip"
    seq: int


class YourTurnMessage(BaseModel):
    """It is the recipient's turn at ``table_id`` (on the table's and the player's socket)."""

    model_config = _example(
        {"type": "your_turn", "table_id": TABLE_ID, "hand_number": 2, "phase": "draw"}
    )

    type: Literal["your_turn"] = "your_turn"
    table_id: str
    hand_number: int
    phase: Literal["upcard_offer", "draw", "discard"]


class OpponentJoinedMessage(BaseModel):
    """Someone took seat 1 of a table you created (player's socket)."""

    model_config = _example(
        {
            "type": "opponent_joined",
            "table_id": TABLE_ID,
            "player": {"id": OPPONENT_ID, "name": "Bo"},
        }
    )

    type: Literal["opponent_joined"] = "opponent_joined"
    table_id: str
    player: PlayerOut


class MatchFinishedMessage(BaseModel):
    """A match you played is over (player's socket)."""

    model_config = _example(
        {
            "type": "match_finished",
            "table_id": TABLE_ID,
            "winner": 0,
            "reason": "target",
            "final_scores": [187, 40],
        }
    )

    type: Literal["match_finished"] = "match_finished"
    table_id: str
    winner: int | None = Field(description="null when the match was aborted (no result)")
    reason: Literal["target", "resignation", "timeout", "abandoned", "aborted"]
    final_scores: list[int]


class RematchOfferedMessage(BaseModel):
    """Your opponent asks for a rematch at a table whose match is over (player's socket):
    answer with ``POST /v1/tables/{id}/rematch/accept`` or ``/decline``."""

    model_config = _example(
        {
            "type": "rematch_offered",
            "table_id": TABLE_ID,
            "player": {"id": OPPONENT_ID, "name": "Bo"},
        }
    )

    type: Literal["rematch_offered"] = "rematch_offered"
    table_id: str
    player: PlayerOut


class SeekPairedMessage(BaseModel):
    """Your seek or challenge was paired: ``table_id`` is the started table (player's socket,
    lobby socket with a token)."""

    model_config = _example({"type": "seek_paired", "table_id": TABLE_ID, "seek": SEEK_EXAMPLE})

    type: Literal["seek_paired"] = "seek_paired"
    table_id: str
    seek: SeekOut = Field(description="your own row of the pairing")


class SeekClosedMessage(BaseModel):
    """Your seek or challenge (or one to you) closed without a table: cancelled (reason
    ``paired_elsewhere`` when another pairing took you), declined (the reason given), expired
    (a live seek also when none of your sockets was open)."""

    model_config = _example(
        {"type": "seek_closed", "seek_id": SEEK_ID, "status": "declined", "reason": "later"}
    )

    type: Literal["seek_closed"] = "seek_closed"
    seek_id: str
    status: Literal["cancelled", "declined", "expired"]
    reason: str | None


class BotOfferedMessage(BaseModel):
    """Your live seek waited its ``bot_after``: a bot is offered (``POST
    /v1/seeks/{id}/bot`` takes it; the seek stays open meanwhile)."""

    model_config = _example(
        {
            "type": "bot_offered",
            "seek_id": SEEK_ID,
            "suggested": "medium",
            "bots": [{"level": "medium", "name": "CARMEN", "rating": 1500.0}],
        }
    )

    type: Literal["bot_offered"] = "bot_offered"
    seek_id: str
    suggested: Literal["easy", "medium", "hard"] = Field(description="the closest rating")
    bots: list[dict[str, Any]]


class ChallengeReceivedMessage(SeekOut):
    """A player challenges you: the challenge (accept or decline it by its ``seek_id``)."""

    model_config = _example(
        {
            **SEEK_EXAMPLE,
            "type": "challenge_received",
            "mode": "challenge",
            "status": "open",
            "table_id": None,
            "opponent_id": None,
            "target": {"id": OPPONENT_ID, "name": "Bo"},
        }
    )

    type: Literal["challenge_received"] = "challenge_received"


class SeekAddedMessage(BaseModel):
    """A seek is open in the lobby (lobby socket)."""

    model_config = _example({"type": "seek_added", "seek": {**SEEK_EXAMPLE, "status": "open"}})

    type: Literal["seek_added"] = "seek_added"
    seek: SeekOut


class SeekRemovedMessage(BaseModel):
    """A seek left the lobby: paired, cancelled or expired (lobby socket)."""

    model_config = _example({"type": "seek_removed", "seek_id": SEEK_ID})

    type: Literal["seek_removed"] = "seek_removed"
    seek_id: str


class HeartbeatMessage(BaseModel):
    """Sent after ``ws_heartbeat`` seconds without any other message; ``seq``: the last sent."""

    model_config = _example({"type": "heartbeat", "seq": 11})

    type: Literal["heartbeat"] = "heartbeat"
    seq: int | None = Field(None, description="null on the player's socket")


class AckMessage(BaseModel):
    """A ``move`` went through the pipeline: the new version and seq, and your view after it."""

    model_config = _example(
        {"type": "ack", "id": "m-41", "version": 7, "seq": 9, "table": _VIEW_EXAMPLE}
    )

    type: Literal["ack"] = "ack"
    id: str | None = None
    version: int
    seq: int
    table: TableOut


class PongMessage(BaseModel):
    """The answer to a ``ping``."""

    model_config = _example({"type": "pong", "id": "p-1"})

    type: Literal["pong"] = "pong"
    id: str | None = None


class ErrorMessage(BaseModel):
    """A refused message or connection; the same codes as over HTTP."""

    model_config = _example(
        {
            "type": "error",
            "id": "m-41",
            "code": "not_your_turn",
            "message": "it is the other player's turn",
        }
    )

    type: Literal["error"] = "error"
    id: str | None = None
    code: str
    message: str


# Client to server.


class MoveMessage(BaseModel):
    """An engine action, submitted through the same pipeline as the HTTP move routes."""

    model_config = _example(
        {"type": "move", "id": "m-41", "kind": "discard", "card": "QC", "expected_version": 7}
    )

    type: Literal["move"] = "move"
    id: str | None = Field(None, max_length=100, description="Echoed in the ack or error.")
    kind: ActionKind
    card: str | None = Field(None, description="For discard and knock.")
    expected_version: int | None = Field(None, ge=0)


class PingMessage(BaseModel):
    model_config = _example({"type": "ping", "id": "p-1"})

    type: Literal["ping"] = "ping"
    id: str | None = Field(None, max_length=100)


ServerMessage = Annotated[
    ViewMessage
    | EventMessage
    | SkipMessage
    | YourTurnMessage
    | OpponentJoinedMessage
    | MatchFinishedMessage
    | RematchOfferedMessage
    | SeekPairedMessage
    | SeekClosedMessage
    | BotOfferedMessage
    | ChallengeReceivedMessage
    | SeekAddedMessage
    | SeekRemovedMessage
    | HeartbeatMessage
    | AckMessage
    | PongMessage
    | ErrorMessage,
    Field(discriminator="type"),
]
ClientMessage = Annotated[MoveMessage | PingMessage, Field(discriminator="type")]

SERVER_MESSAGES: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)
CLIENT_MESSAGES: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)

# Each message type by its ``type``, in both directions.
MESSAGE_MODELS: dict[str, type[BaseModel]] = {
    model.model_fields["type"].default: model
    for model in (
        ViewMessage,
        EventMessage,
        SkipMessage,
        YourTurnMessage,
        OpponentJoinedMessage,
        MatchFinishedMessage,
        RematchOfferedMessage,
        SeekPairedMessage,
        SeekClosedMessage,
        BotOfferedMessage,
        ChallengeReceivedMessage,
        SeekAddedMessage,
        SeekRemovedMessage,
        HeartbeatMessage,
        AckMessage,
        PongMessage,
        ErrorMessage,
        MoveMessage,
        PingMessage,
    )
}


def ws_schema() -> dict[str, Any]:
    """The JSON schema of every WebSocket message, server to client and client to server."""
    return {
        "server_to_client": SERVER_MESSAGES.json_schema(),
        "client_to_server": CLIENT_MESSAGES.json_schema(),
    }
