"""The bus's message form of a committed table: what the processes that cache it receive."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.engine import MatchState
from app.table.model import Committed, Loaded, SeatInfo, TableRow


def wire(committed: Committed) -> list[Any]:
    """The table as it now is, as the bus carries it to the processes that cache it: the
    row's columns, the seats, the match's snapshot, the clock and when the match last
    moved (``Sent``: everything ``Loaded`` holds)."""
    after = committed.after
    t = after.table
    state = committed.state_data
    if state is None and after.state is not None:
        state = after.state.to_dict()
    return [
        t.id, t.created_by, t.preset, t.rules, t.invite_code, t.status, t.match_number,
        t.version, t.last_seq, t.created_at.isoformat(), t.rated, t.rematch_offer, t.hints,
        [[s.seat, s.player_id, s.player_name, s.bot_level, s.deck_design] for s in after.seats],
        state, after.clock, None if after.moved_at is None else after.moved_at.isoformat(),
    ]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Sent:
    """A table as another process committed it (``wire``), decoded only if used.

    ``order`` is (version, last_seq): both only grow, and each commit grows one, so of two
    states of one table the larger ``order`` is the later one.
    """

    data: list[Any]

    # How many fields ``wire`` sends: a message with another count (another release's)
    # is not taken (the cached copy is dropped and the table loaded when next used).
    FIELDS = 17

    @property
    def table_id(self) -> str:
        return str(self.data[0])

    @property
    def order(self) -> tuple[int, int]:
        return self.data[7], self.data[8]

    def loaded(self) -> Loaded:
        (id_, created_by, preset, rules, invite_code, status, match_number, version, last_seq,
         created_at, rated, offer, hints, seats, state, clock, moved_at) = self.data  # fmt: skip
        table = TableRow(
            id_, created_by, preset, rules, invite_code, status, match_number, version,
            last_seq, datetime.fromisoformat(created_at), rated, offer, hints,
        )  # fmt: skip
        loaded_state = None if state is None else MatchState.from_dict(state)
        moved = None if moved_at is None else datetime.fromisoformat(moved_at)
        return Loaded(table, [SeatInfo(*seat) for seat in seats], loaded_state, clock, moved)
