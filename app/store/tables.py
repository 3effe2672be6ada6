"""Tables: players and tables created, a table loaded with its seats, match state and clock.

Each function runs on the session or connection it is given; ``load_table`` makes its own read.
The table handles (``TABLES``, ``SEATS``, ``CLOCKS``...) are shared with the other store modules.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.engine import Event, MatchState
from app.store.db import Database
from app.store.models import Clock, EventRow, Player, Seat, Snapshot, Table
from app.table.model import Loaded, SeatInfo, TableRow
from app.table.time import utcnow


async def add_player(
    session: AsyncSession, player_id: str, name: str, *, bot: bool = False
) -> Player:
    player = Player(id=player_id, name=name, created_at=utcnow(), bot=bot)
    session.add(player)
    return player


def storable(key: str) -> bool:
    """Whether ``key`` could name a row: ids are short and PostgreSQL cannot hold a NUL."""
    return len(key) <= KEY_MAX and "\x00" not in key


KEY_MAX = 64


async def table_id_by_invite(session: AsyncSession, code: str) -> str | None:
    if not storable(code):
        return None
    return (
        await session.execute(select(Table.id).where(Table.invite_code == code))
    ).scalar_one_or_none()


def _open_tables(player_id: str) -> sa.Select[int]:
    """The player's seats at tables not finished, found on ``ix_seats_player_open`` (the seats
    whose ``table_open`` holds: as many as their open tables, whatever their history) and
    checked against each table's status."""
    return (
        select(sa.func.count())
        .select_from(SEATS)
        .join(TABLES, TABLES.c.id == SEATS.c.table_id)
        .where(
            SEATS.c.player_id == player_id,
            SEATS.c.table_open,
            TABLES.c.status != "finished",
        )
    )


async def count_open_tables(session: AsyncSession, player_id: str) -> int:
    """How many tables not finished the player sits at."""
    return int((await session.execute(_open_tables(player_id))).scalar_one())


def open_tables(conn: Connection, player_id: str) -> int:
    """``count_open_tables`` in a write transaction, the player's row locked until its end
    (PostgreSQL; SQLite's writes are serialised already), so that two concurrent creations
    count each other."""
    conn.execute(select(Player.id).where(Player.id == player_id).with_for_update())
    return int(conn.execute(_open_tables(player_id)).scalar_one())


def add_table(
    conn: Connection,
    table: TableRow,
    seat0: SeatInfo,
    created: Event,
    clock: dict[str, Any] | None = None,
    *,
    seat1: tuple[SeatInfo, Event] | None = None,
) -> None:
    """A new table, its creator in seat 0, its first log entry (seq 1), and its clock if any;
    with ``seat1``, that seat taken too and its event at seq 2 (a tournament's pairing)."""
    taken = [(seat0, created)] if seat1 is None else [(seat0, created), seat1]
    row = {c.key: getattr(table, c.key) for c in TABLES.columns if c.key != "bot"}
    conn.execute(insert(TABLES), {**row, "bot": any(i.bot_level for i, _ in taken)})
    seats = [
        {
            "table_id": table.id,
            "seat": info.seat,
            "player_id": info.player_id,
            "bot_level": info.bot_level,
            "deck_design": info.deck_design,
            "joined_at": table.created_at,
            "bot_lease_owner": None,
            "bot_lease_until": None,
        }
        for info, _ in taken
    ]
    conn.execute(insert(SEATS), seats)
    now = utcnow()
    conn.execute(
        INSERT_EVENTS,
        [_event_values(table.id, i, 0, None, e, now=now) for i, (_, e) in enumerate(taken, 1)],
    )
    if clock is not None:
        conn.execute(insert(CLOCKS), {"table_id": table.id, "state": clock, "deadline": None})


def _table_row(table: Table) -> TableRow:
    return TableRow(
        table.id,
        table.created_by,
        table.preset,
        table.rules,
        table.invite_code,
        table.status,
        table.match_number,
        table.version,
        table.last_seq,
        table.created_at,
        table.rated,
        table.rematch_offer,
        table.hints,
    )


async def load(session: AsyncSession, table_id: str) -> Loaded | None:
    """The table, its seats and its current match state, or None for an unknown table."""
    if not storable(table_id):
        return None
    row = await session.get(Table, table_id, populate_existing=True)
    if row is None:
        return None
    table = _table_row(row)
    rows = (
        await session.execute(
            select(Seat, Player.name)
            .outerjoin(Player, Seat.player_id == Player.id)
            .where(Seat.table_id == table_id)
            .order_by(Seat.seat)
        )
    ).all()
    seats = [SeatInfo(s.seat, s.player_id, name, s.bot_level, s.deck_design) for s, name in rows]
    state = None
    moved_at = None
    if table.match_number:
        snap = await session.get(Snapshot, (table_id, table.match_number), populate_existing=True)
        if snap is not None:
            state, moved_at = MatchState.from_dict(snap.state), snap.updated_at
    clock = (
        await session.execute(select(CLOCKS.c.state).where(CLOCKS.c.table_id == table_id))
    ).scalar_one_or_none()
    return Loaded(table, seats, state, clock, moved_at)


# A table, its seats (with the players' names) and its current snapshot in one statement: one
# round trip and one moment (a single statement sees one snapshot even in READ COMMITTED), where
# the ORM took four statements inside BEGIN/COMMIT. JSON comes back as text for orjson. It must
# read everything ``load`` reads (the clock and when the match last moved included).
_LOAD_PG = """
SELECT t.id, t.created_by, t.preset, t.rules::text, t.invite_code, t.status, t.match_number,
    t.version, t.last_seq, t.created_at, t.rated, t.rematch_offer, t.hints,
    (SELECT json_agg(json_build_array(s.seat, s.player_id, p.name, s.bot_level, s.deck_design)
        ORDER BY s.seat)::text
     FROM seats s LEFT JOIN players p ON p.id = s.player_id WHERE s.table_id = t.id),
    n.state::text, n.updated_at,
    (SELECT c.state::text FROM clocks c WHERE c.table_id = t.id)
FROM tables t
LEFT JOIN snapshots n ON n.table_id = t.id AND n.match_number = t.match_number
WHERE t.id = $1
"""


async def load_table(db: Database, table_id: str) -> Loaded | None:
    """``load`` in its own read: on PostgreSQL one statement straight on the driver (a table
    that another process moved is loaded again before every move it makes here)."""
    if db.is_sqlite:
        async with db.read() as session:
            return await load(session, table_id)
    if not storable(table_id):
        return None
    row = await db.fetchrow_driver(_LOAD_PG, table_id)
    if row is None:
        return None
    (id_, created_by, preset, rules, invite_code, status, match_number, version, last_seq,
     created_at, rated, offer, hints, seats_json, state_json, moved_at,
     clock_json) = row  # fmt: skip
    table = TableRow(
        id_, created_by, preset, orjson.loads(rules), invite_code, status, match_number,
        version, last_seq, created_at, rated, offer, hints,
    )  # fmt: skip
    seats = [SeatInfo(*s) for s in orjson.loads(seats_json)] if seats_json else []
    state = None
    if match_number and state_json is not None:
        state = MatchState.from_dict(orjson.loads(state_json))
    else:
        moved_at = None
    clock = orjson.loads(clock_json) if clock_json is not None else None
    return Loaded(table, seats, state, clock, moved_at)


async def load_match_state(session: AsyncSession, table_id: str, match: int) -> MatchState | None:
    snap = await session.get(Snapshot, (table_id, match))
    return None if snap is None else MatchState.from_dict(snap.state)


async def tables_in_play(session: AsyncSession) -> int:
    """How many tables have a match being played."""
    query = select(sa.func.count()).select_from(Table).where(Table.status == "playing")
    return int((await session.execute(query)).scalar_one())


# The tables' handles and the statements built once (see ``commits.commit_change``).
TABLES = cast(sa.Table, Table.__table__)
EVENTS = cast(sa.Table, EventRow.__table__)
SNAPSHOTS = cast(sa.Table, Snapshot.__table__)
SEATS = cast(sa.Table, Seat.__table__)
CLOCKS = cast(sa.Table, Clock.__table__)
INSERT_EVENTS = insert(EVENTS)
INSERT_SNAPSHOT = insert(SNAPSHOTS)
UPDATE_SNAPSHOT = update(SNAPSHOTS).where(
    SNAPSHOTS.c.table_id == bindparam("s_table_id"),
    SNAPSHOTS.c.match_number == bindparam("s_match_number"),
)


def _event_values(
    table_id: str,
    seq: int,
    match: int,
    hand: int | None,
    event: Event,
    *,
    now: datetime,
    secret: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One row of the events table, for a Core insert."""
    return {
        "table_id": table_id,
        "seq": seq,
        "match_number": match,
        "hand_number": hand,
        "type": event.type,
        "data": event.to_dict(),
        "secret": secret,
        "created_at": now,
    }
