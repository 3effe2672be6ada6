"""The messages on the bus's Redis channels: which channels a commit goes to, and their form.

A channel's name is the deployment's prefix, then ``table:{table_id}``, ``player:{player_id}``
or ``event:{type}`` (``app.bus.redis``). A message is two JSON lines: the committing process's
id and the time (``route``), then the body: a table's events and the table as committed
(``app.bus.message.wire``), a player's notifications, or a watched type's events.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import orjson

from app.bus.hub import Notification
from app.bus.message import Sent, wire
from app.engine import Event
from app.table.model import Committed, StoredEvent

# What follows the prefix in each kind of channel's name.
TABLE, PLAYER, TYPE = b"table:", b"player:", b"event:"


def commit_messages(
    origin: str,
    events: list[StoredEvent],
    notes: list[Notification],
    committed: Committed | None,
    watched: frozenset[str],
) -> list[tuple[bytes, bytes]]:
    """One commit's (channel after the prefix, message): each player's notifications, then
    each table's events (with the table as committed), then the events of each ``watched``
    type. The players' first: a table socket's ``your_turn`` is there when the events come."""
    head = orjson.dumps({"o": origin, "t": time.time()}) + b"\n"
    out: list[tuple[bytes, bytes]] = []
    players: dict[str, list[Notification]] = {}
    for note in notes:
        players.setdefault(note.player_id, []).append(note)
    for player_id, theirs in players.items():
        said = {"n": [[n.player_id, n.type, n.table_id, n.data] for n in theirs]}
        out.append((PLAYER + player_id.encode(), head + _dumps(said)))
    tables: dict[str, list[StoredEvent]] = {}
    if committed is not None:
        tables[committed.after.table.id] = []
    types: dict[str, list[StoredEvent]] = {}
    for stored in events:
        tables.setdefault(stored.table_id, []).append(stored)
        if stored.event.type in watched:
            types.setdefault(stored.event.type, []).append(stored)
    for table_id, at_table in tables.items():
        table = None
        if committed is not None and committed.after.table.id == table_id:
            table = wire(committed)
        body = {"e": _events(at_table), "a": table}
        out.append((TABLE + table_id.encode(), head + _dumps(body)))
    for event_type, of_type in types.items():
        out.append((TYPE + event_type.encode(), head + _dumps({"e": _events(of_type)})))
    return out


def _dumps(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


def _events(events: Iterable[StoredEvent]) -> list[list[Any]]:
    return [[s.table_id, s.seq, s.match_number, s.hand_number, s.event.to_dict()] for s in events]


def _stored(rows: list[list[Any]]) -> list[StoredEvent]:
    return [StoredEvent(t, s, m, h, Event.from_dict(e)) for t, s, m, h, e in rows]


def route(raw: bytes) -> tuple[dict[str, Any], bytes]:
    """A bus message's first line (parsed) and its body, not yet parsed."""
    head, _, body = raw.partition(b"\n")
    parsed: dict[str, Any] = orjson.loads(head)
    return parsed, body


def read_table(raw: bytes) -> tuple[list[StoredEvent], Sent | None]:
    """A table message's body: (its events, the table as committed, if sent)."""
    body: dict[str, Any] = orjson.loads(raw)
    table = body.get("a")
    sent = Sent(table) if isinstance(table, list) and len(table) == Sent.FIELDS else None
    return _stored(body["e"]), sent


def read_notes(raw: bytes) -> list[Notification]:
    """A player message's body: the notifications."""
    body: dict[str, Any] = orjson.loads(raw)
    return [Notification(p, kind, t, d) for p, kind, t, d in body["n"]]


def read_events(raw: bytes) -> list[StoredEvent]:
    """An event type's message body: the events."""
    body: dict[str, Any] = orjson.loads(raw)
    return _stored(body["e"])
