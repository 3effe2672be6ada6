"""What a Change does to a table: its events' hand numbers and secrets, and the table after.

The store writes by these (``app.store.tables``), and the pipeline decides a change's
notifications on ``project`` before anything is written.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

import orjson

from app.engine import Event
from app.table.model import KEEP, Change, Committed, Loaded, StoredEvent, TableRow

# Events about the table itself, not about a hand.
TABLE_EVENTS = frozenset(
    {
        "table_created",
        "player_joined",
        "bot_seated",
        "bot_removed",
        "deck_chosen",
        "match_started",
        "rematch_offered",
        "rematch_declined",
        "chat",
    }
)


def planned_events(
    loaded: Loaded, change: Change
) -> list[tuple[Event, int | None, dict[str, Any] | None]]:
    """Each event of ``change`` with its hand number and its secret part (stored, never sent)."""
    previous_hand = loaded.state.hand.number if loaded.state and not change.new_match else None
    out: list[tuple[Event, int | None, dict[str, Any] | None]] = []
    for event in change.events:
        hand = event.public.get("hand_number") if event.type == "hand_started" else None
        if hand is None and event.type not in TABLE_EVENTS:
            hand = previous_hand
        secret = None
        if event.type == "hand_started" and change.state is not None:
            # The deal's stock order, top first: only ever served by the finished-hand history.
            secret = {"stock": change.state.hand.to_dict()["stock"][::-1]}
        out.append((event, hand, secret))
    return out


def finishes(loaded: Loaded, change: Change) -> bool:
    """Whether ``change`` ends the match being played (a finished-match record is due)."""
    state = change.state
    was_playing = loaded.state is not None and loaded.state.status == "playing"
    return bool(state and state.status == "finished" and was_playing and not change.new_match)


def committed(
    loaded: Loaded,
    change: Change,
    planned: list[tuple[Event, int | None, dict[str, Any] | None]],
    version: int,
    last_seq: int,
    *,
    now: datetime,
    state_data: dict[str, Any] | orjson.Fragment | None,
    notes: int = 0,
) -> Committed:
    """What ``change`` made of ``loaded`` once written at ``version`` up to ``last_seq``
    (``notes``: the outbox rows it wrote)."""
    table = loaded.table
    match_number = table.match_number + (1 if change.new_match else 0)
    first = last_seq - len(planned) + 1
    stored = [
        StoredEvent(table.id, first + i, match_number, hand, event)
        for i, (event, hand, _) in enumerate(planned)
    ]
    offer = table.rematch_offer if change.rematch_offer == KEEP else change.rematch_offer
    after = TableRow(
        table.id, table.created_by, table.preset, table.rules, table.invite_code,
        change.status or table.status, match_number, version, last_seq, table.created_at,
        table.rated, offer, table.hints,
    )  # fmt: skip
    by_seat = {s.seat: s for s in [*loaded.seats, *change.seats] if s.seat not in change.vacated}
    designs = change.deck_designs
    seats = [
        replace(s, deck_design=designs[s.seat]) if s.seat in designs else s
        for _, s in sorted(by_seat.items())
    ]
    state = loaded.state if change.state is None else change.state
    clock = loaded.clock if change.clock is None else change.clock.state
    moved_at = loaded.moved_at if change.state is None else now
    after_loaded = Loaded(after, seats, state, clock, moved_at)
    return Committed(version, stored, after_loaded, state_data, notes)


def project(loaded: Loaded, change: Change, now: datetime) -> Loaded:
    """The table as ``change`` would leave it (its version and seqs as loaded): what the
    notifications of a change are decided on before it is written."""
    table = loaded.table
    planned = planned_events(loaded, change)
    return committed(
        loaded, change, planned, table.version, table.last_seq, now=now, state_data=None
    ).after
