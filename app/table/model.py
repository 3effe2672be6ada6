"""The table's own records: a table as loaded, what a command does to it, what was written.

Plain data, no I/O: the store reads and writes them (``app.store.tables``), the commands decide
them (``app.table.commands``), the pipeline carries them (``app.service.pipeline``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

import orjson

from app.engine import Event, MatchState


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """A seat as the service sees it: who sits there (player or bot) and their deck design."""

    seat: int
    player_id: str | None
    player_name: str | None
    bot_level: str | None
    deck_design: str


@dataclass(frozen=True, slots=True)
class TableRow:
    """A table's row as the service reads it: a plain record, not an ORM instance (building
    one of those costs a move ~0.1 ms of SQLAlchemy's instrumentation)."""

    id: str
    created_by: str
    preset: str
    rules: dict[str, Any]
    invite_code: str
    status: str
    match_number: int
    version: int
    last_seq: int
    created_at: datetime
    rated: bool
    # The seat that asked for a rematch, until the other seat answers (migration 0010).
    rematch_offer: int | None = None
    # A casual table whose seat to move may ask LUNA for a hint (``app.service.hints``).
    hints: bool = False


@dataclass(slots=True)
class Loaded:
    """A table as read in one transaction: row, seats, and the current match's state."""

    table: TableRow
    seats: list[SeatInfo]
    state: MatchState | None
    # A clocked table's clock (``app.table.clock``), and when the match last moved.
    clock: dict[str, Any] | None = None
    moved_at: datetime | None = None

    def seat_of(self, player_id: str | None) -> int | None:
        for s in self.seats:
            if player_id is not None and s.player_id == player_id:
                return s.seat
        return None

    def seat_info(self, seat: int) -> SeatInfo | None:
        return next((s for s in self.seats if s.seat == seat), None)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event of the log with its per-table sequence number."""

    table_id: str
    seq: int
    match_number: int
    hand_number: int | None
    event: Event


# ``Change.rematch_offer``'s "leave the table's rematch offer as it is".
KEEP: Final = "keep"


@dataclass(slots=True)
class Change:
    """What one command does to a table; the pipeline writes it in one transaction."""

    events: list[Event]
    # The match's new state (None: unchanged); with ``new_match`` it starts the next match.
    state: MatchState | None = None
    new_match: bool = False
    status: str | None = None
    # Seats taken or changed (a bot's level), and seats left empty again.
    seats: list[SeatInfo] = field(default_factory=list)
    vacated: list[int] = field(default_factory=list)
    deck_designs: dict[int, str] = field(default_factory=dict)
    chat: tuple[str, str] | None = None  # (player_id, text)
    # Chat lines are log entries but not game state: they leave the version alone.
    bumps_version: bool = True
    # A rated match finished with a result: the ratings move in the same transaction, after
    # the table's writes (``app.service.ratings.rate_match``).
    rated_result: bool = False
    # Notifications to players who are away, written to the outbox in the same transaction
    # (``app.store.outbox``; only for players with a channel).
    notes: list[Note] = field(default_factory=list)
    # A clocked table's clock after the change (None: unchanged), and its next deadline.
    clock: ClockWrite | None = None
    # The seat now asking for a rematch, None once answered or started; KEEP: unchanged.
    rematch_offer: int | Literal["keep"] | None = "keep"


@dataclass(frozen=True, slots=True)
class ClockWrite:
    """A clock's new state and the deadline it implies (written with the change)."""

    state: dict[str, Any]
    deadline: datetime | None


@dataclass(frozen=True, slots=True)
class Committed:
    """What was written: the new version, the stored events and the table as it now is
    (``state_data``: the snapshot as written, when the change wrote one: its JSON text on the
    plain paths, which ``wire`` embeds as is)."""

    version: int
    stored: list[StoredEvent]
    after: Loaded
    state_data: dict[str, Any] | orjson.Fragment | None = None
    # Rows the change wrote to the notification outbox (only players with a channel get any):
    # the dispatcher is woken for these alone.
    notes_written: int = 0

    @property
    def last_seq(self) -> int:
        return self.stored[-1].seq


@dataclass(frozen=True, slots=True)
class Note:
    """A notification a change causes: written to the outbox with it (``Change.notes``).

    ``not_before``: deliver no earlier (a ``time_running_out`` notice); None: at once.
    """

    player_id: str
    kind: str
    table_id: str | None
    payload: dict[str, Any]
    message_id: str
    not_before: datetime | None = None

    @staticmethod
    def new(
        player_id: str,
        kind: str,
        table_id: str | None,
        payload: dict[str, Any],
        not_before: datetime | None = None,
    ) -> Note:
        return Note(player_id, kind, table_id, payload, f"msg_{secrets.token_hex(12)}", not_before)
