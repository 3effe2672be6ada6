"""Repository functions: every query the service runs, each on a session it is given.

``commit`` is the one write path of a table: a version-guarded UPDATE of the table row first
(so SQLite takes its write lock before any read of this transaction), then the events with
their contiguous seqs, the snapshot, seats, chat and the finished-match record — in one
transaction (``commit_change``), or for a plain move on PostgreSQL in one statement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection, bindparam, delete, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.engine import Event, MatchState
from app.store import outbox
from app.store.db import Database, dump_json
from app.store.models import (
    ChatMessage,
    Clock,
    EventRow,
    FinishedMatch,
    IdempotencyKey,
    Player,
    Seat,
    Snapshot,
    Table,
)
from app.table.model import Change, Committed, Loaded, SeatInfo, StoredEvent, TableRow
from app.table.project import committed, finishes, planned_events
from app.table.time import utcnow

T = TypeVar("T")


class VersionConflictError(Exception):
    """The table changed since it was loaded; nothing was written."""


async def add_player(session: AsyncSession, player_id: str, name: str) -> Player:
    player = Player(id=player_id, name=name, created_at=utcnow())
    session.add(player)
    return player


def _storable(key: str) -> bool:
    """Whether ``key`` could name a row: ids are short and PostgreSQL cannot hold a NUL."""
    return len(key) <= KEY_MAX and "\x00" not in key


KEY_MAX = 64


async def table_id_by_invite(session: AsyncSession, code: str) -> str | None:
    if not _storable(code):
        return None
    return (
        await session.execute(select(Table.id).where(Table.invite_code == code))
    ).scalar_one_or_none()


def _open_tables(player_id: str) -> sa.Select[int]:
    return (
        select(sa.func.count())
        .select_from(_SEAT_TABLE)
        .join(_TABLES, _TABLES.c.id == _SEAT_TABLE.c.table_id)
        .where(_SEAT_TABLE.c.player_id == player_id, _TABLES.c.status != "finished")
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
) -> None:
    """A new table, its creator in seat 0, its first log entry (seq 1), and its clock if any."""
    conn.execute(insert(_TABLES), {c.key: getattr(table, c.key) for c in _TABLES.columns})
    seat = {
        "table_id": table.id,
        "seat": seat0.seat,
        "player_id": seat0.player_id,
        "bot_level": seat0.bot_level,
        "deck_design": seat0.deck_design,
        "joined_at": table.created_at,
        "bot_lease_owner": None,
        "bot_lease_until": None,
    }
    conn.execute(insert(_SEAT_TABLE), seat)
    conn.execute(_INSERT_EVENTS, [_event_values(table.id, 1, 0, None, created, now=utcnow())])
    if clock is not None:
        conn.execute(insert(_CLOCKS), {"table_id": table.id, "state": clock, "deadline": None})


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
    )


async def load(session: AsyncSession, table_id: str) -> Loaded | None:
    """The table, its seats and its current match state, or None for an unknown table."""
    if not _storable(table_id):
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
        await session.execute(select(_CLOCKS.c.state).where(_CLOCKS.c.table_id == table_id))
    ).scalar_one_or_none()
    return Loaded(table, seats, state, clock, moved_at)


# A table, its seats (with the players' names) and its current snapshot in one statement: one
# round trip and one moment (a single statement sees one snapshot even in READ COMMITTED), where
# the ORM took four statements inside BEGIN/COMMIT. JSON comes back as text for orjson. It must
# read everything ``load`` reads (the clock and when the match last moved included).
_LOAD_PG = """
SELECT t.id, t.created_by, t.preset, t.rules::text, t.invite_code, t.status, t.match_number,
    t.version, t.last_seq, t.created_at, t.rated,
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
    if not _storable(table_id):
        return None
    row = await db.fetchrow_driver(_LOAD_PG, table_id)
    if row is None:
        return None
    (id_, created_by, preset, rules, invite_code, status, match_number, version, last_seq,
     created_at, rated, seats_json, state_json, moved_at, clock_json) = row  # fmt: skip
    table = TableRow(
        id_, created_by, preset, orjson.loads(rules), invite_code, status, match_number,
        version, last_seq, created_at, rated,
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


async def commit(
    db: Database,
    loaded: Loaded,
    change: Change,
    also: Callable[[Connection, Committed], T] | None = None,
) -> tuple[Committed, T | None]:
    """Write ``change`` if the table is still at the loaded version; else VersionConflictError.

    ``also(connection, committed)`` runs in the same transaction (an idempotent response is
    saved there) and its result comes back with the commit. A plain move on PostgreSQL (events
    and the snapshot, nothing else) is one statement (``_commit_plain``); on SQLite its
    statements go straight to the driver (``_commit_plain_sqlite``); everything else is
    ``commit_change`` in ``Database.transact``.
    """
    plain = _plain(loaded, change)
    if also is None and not db.is_sqlite and plain:
        return await _commit_plain(db, loaded, change), None
    write = _commit_plain_sqlite if db.is_sqlite and plain else commit_change

    def work(conn: Connection) -> tuple[Committed, T | None]:
        committed = write(conn, loaded, change)
        return committed, None if also is None else also(conn, committed)

    return await db.transact(work)


def commit_change(conn: Connection, loaded: Loaded, change: Change) -> Committed:
    """``commit``'s general case: Core statements on the transaction's connection.

    No ORM unit of work, and the hot statements are built once, so a move costs no statement
    construction.
    """
    table = loaded.table
    n = len(change.events)
    match_number = table.match_number + (1 if change.new_match else 0)
    row = conn.execute(
        _GUARDED_UPDATE,
        {
            "g_id": table.id,
            "g_version": table.version,
            "g_bump": 1 if change.bumps_version else 0,
            "g_events": n,
            "g_new_match": 1 if change.new_match else 0,
            "g_status": change.status,
        },
    ).one_or_none()
    if row is None:
        raise VersionConflictError(table.id)
    version, last_seq = row
    first = last_seq - n + 1
    now = utcnow()
    planned = planned_events(loaded, change)
    conn.execute(
        _INSERT_EVENTS,  # one executemany
        [
            {
                "table_id": table.id,
                "seq": first + i,
                "match_number": match_number,
                "hand_number": hand,
                "type": event.type,
                "data": event.to_dict(),
                "secret": secret,
                "created_at": now,
            }
            for i, (event, hand, secret) in enumerate(planned)
        ],
    )
    state_data = None if change.state is None else change.state.to_dict()
    if change.state is not None:
        snapshot = {
            "version": version,
            "last_seq": last_seq,
            "state": state_data,
            "updated_at": now,
        }
        if change.new_match:
            snapshot.update(table_id=table.id, match_number=match_number)
            conn.execute(_INSERT_SNAPSHOT, snapshot)
        else:
            snapshot.update(s_table_id=table.id, s_match_number=match_number)
            conn.execute(_UPDATE_SNAPSHOT, snapshot)
        if finishes(loaded, change) and change.state.winner is not None:
            # An aborted match (no winner: no first move) is no result: nothing to record.
            _record_finished(conn, loaded, match_number, change.state, now)
    for info in change.seats:
        values = {
            "player_id": info.player_id,
            "bot_level": info.bot_level,
            "deck_design": info.deck_design,
        }
        if loaded.seat_info(info.seat) is not None:
            conn.execute(_SEAT_TABLE.update().where(*_seat_is(table.id, info.seat)), values)
        else:
            conn.execute(
                insert(_SEAT_TABLE),
                {"table_id": table.id, "seat": info.seat, "joined_at": now, **values},
            )
    if change.vacated:
        conn.execute(
            delete(_SEAT_TABLE).where(
                _SEAT_TABLE.c.table_id == table.id, _SEAT_TABLE.c.seat.in_(change.vacated)
            )
        )
    for seat_number, design in change.deck_designs.items():
        conn.execute(
            _SEAT_TABLE.update().where(*_seat_is(table.id, seat_number)),
            {"deck_design": design},
        )
    if change.chat is not None:
        player_id, text = change.chat
        conn.execute(
            insert(cast(sa.Table, ChatMessage.__table__)),
            {
                "table_id": table.id,
                "seq": first,
                "player_id": player_id,
                "text": text,
                "created_at": now,
            },
        )
    if change.clock is not None:
        conn.execute(
            update(_CLOCKS)
            .where(_CLOCKS.c.table_id == table.id)
            .values(
                state=change.clock.state,
                deadline=change.clock.deadline,
                lease_owner=None,
                lease_until=None,
            )
        )
    written = outbox.write_notes(conn, change.notes, now)
    return committed(
        loaded, change, planned, version, last_seq, now=now, state_data=state_data, notes=written
    )


def _plain(loaded: Loaded, change: Change) -> bool:
    """A move that writes only its events and the match's next snapshot."""
    return bool(
        change.events
        and change.state is not None
        and not change.new_match
        and not change.seats
        and not change.vacated
        and not change.deck_designs
        and change.chat is None
        and not change.rated_result
        and change.clock is None
        and not finishes(loaded, change)
    )


# ``commit_change``'s statements for a plain move, as one PostgreSQL statement: one round trip
# and no BEGIN/COMMIT (a statement is atomic on its own), where the transaction costs five.
# Each later part runs only if the guarded UPDATE matched.
_PLAIN_PG = """
WITH g AS (
    UPDATE tables SET version = version + $3, last_seq = last_seq + $4,
        status = coalesce($5, status)
    WHERE id = $1 AND version = $2
    RETURNING version, last_seq
), e AS (
    INSERT INTO events
        (table_id, seq, match_number, hand_number, type, data, secret, created_at)
    SELECT $1, g.last_seq - $4 + e.ord, $6, e.hand, e.type, e.data::json, e.secret::json, $7
    FROM g, unnest($8::int[], $9::text[], $10::text[], $11::text[])
        WITH ORDINALITY AS e(hand, type, data, secret, ord)
), s AS (
    UPDATE snapshots SET version = g.version, last_seq = g.last_seq, state = $12::json,
        updated_at = $7
    FROM g WHERE snapshots.table_id = $1 AND snapshots.match_number = $6
)"""
_PLAIN_PG_NOTES = (
    _PLAIN_PG
    + outbox.PLAIN_PG_PART
    + "\nSELECT version, last_seq, (SELECT count(*) FROM o) FROM g\n"
)
_PLAIN_PG += "\nSELECT version, last_seq, 0 FROM g\n"


async def _commit_plain(db: Database, loaded: Loaded, change: Change) -> Committed:
    table = loaded.table
    assert change.state is not None
    planned = planned_events(loaded, change)
    now = utcnow()
    notes = outbox.pg_arrays(change.notes, dump_json) if change.notes else []
    state_text = dump_json(change.state.to_dict())
    row = await db.fetchrow_driver(
        _PLAIN_PG_NOTES if notes else _PLAIN_PG,
        table.id,
        table.version,
        1 if change.bumps_version else 0,
        len(planned),
        change.status,
        table.match_number,
        now,
        [hand for _, hand, _ in planned],
        [event.type for event, _, _ in planned],
        [dump_json(event.to_dict()) for event, _, _ in planned],
        [None if secret is None else dump_json(secret) for _, _, secret in planned],
        state_text,
        *notes,
    )
    if row is None:
        raise VersionConflictError(table.id)
    version, last_seq, written = row
    state_data = orjson.Fragment(state_text)
    return committed(
        loaded, change, planned, version, last_seq, now=now, state_data=state_data, notes=written
    )


# ``commit_change``'s statements for a plain move, as SQLite's driver takes them.
_PLAIN_SQLITE_TABLE = (
    "UPDATE tables SET version = version + ?, last_seq = last_seq + ?,"
    " status = coalesce(?, status) WHERE id = ? AND version = ? RETURNING version, last_seq"
)
_PLAIN_SQLITE_EVENTS = (
    "INSERT INTO events (table_id, seq, match_number, hand_number, type, data, secret,"
    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_PLAIN_SQLITE_SNAPSHOT = (
    "UPDATE snapshots SET version = ?, last_seq = ?, state = ?, updated_at = ?"
    " WHERE table_id = ? AND match_number = ?"
)


def _commit_plain_sqlite(conn: Connection, loaded: Loaded, change: Change) -> Committed:
    """A plain move on SQLite, in the transaction of ``conn``: ``commit_change``'s three
    statements on the driver's own connection (SQLAlchemy's per-statement work cost more CPU
    than SQLite's), with the values its column types would bind: JSON text by ``dump_json``
    (``None`` as ``null``, as the JSON type writes it), timestamps as SQLite's ``DATETIME``
    text in UTC (``sqlite_time``). The notifications still go through ``outbox``. The write
    lock is held already (the transaction began ``IMMEDIATE``): no statement here waits for
    it or meets ``SQLITE_BUSY``."""
    table = loaded.table
    assert change.state is not None
    driver = conn.connection.driver_connection
    assert driver is not None
    n = len(change.events)
    row = driver.execute(
        _PLAIN_SQLITE_TABLE,
        (1 if change.bumps_version else 0, n, change.status, table.id, table.version),
    ).fetchone()
    if row is None:
        raise VersionConflictError(table.id)
    version, last_seq = row
    first = last_seq - n + 1
    now = utcnow()
    stamp = sqlite_time(now)
    planned = planned_events(loaded, change)
    driver.executemany(
        _PLAIN_SQLITE_EVENTS,
        [
            (
                table.id,
                first + i,
                table.match_number,
                hand,
                event.type,
                dump_json(event.to_dict()),
                dump_json(secret),
                stamp,
            )
            for i, (event, hand, secret) in enumerate(planned)
        ],
    )
    state_text = dump_json(change.state.to_dict())
    driver.execute(
        _PLAIN_SQLITE_SNAPSHOT,
        (version, last_seq, state_text, stamp, table.id, table.match_number),
    )
    state_data = orjson.Fragment(state_text)
    written = outbox.write_notes(conn, change.notes, now)
    return committed(
        loaded, change, planned, version, last_seq, now=now, state_data=state_data, notes=written
    )


def sqlite_time(moment: datetime) -> str:
    """``moment`` as SQLAlchemy's SQLite ``DATETIME`` stores it (``UTCDateTime``: in UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _seat_is(table_id: str, seat: int) -> tuple[sa.ColumnElement[bool], ...]:
    return (_SEAT_TABLE.c.table_id == table_id, _SEAT_TABLE.c.seat == seat)


# The write path's statements, built once (see ``commit_change``).
_TABLES = cast(sa.Table, Table.__table__)
_EVENTS = cast(sa.Table, EventRow.__table__)
_SNAPSHOTS = cast(sa.Table, Snapshot.__table__)
_GUARDED_UPDATE = (
    update(_TABLES)
    .where(_TABLES.c.id == bindparam("g_id"), _TABLES.c.version == bindparam("g_version"))
    .values(
        version=_TABLES.c.version + bindparam("g_bump"),
        last_seq=_TABLES.c.last_seq + bindparam("g_events"),
        match_number=_TABLES.c.match_number + bindparam("g_new_match"),
        status=sa.func.coalesce(bindparam("g_status", type_=sa.String), _TABLES.c.status),
    )
    .returning(_TABLES.c.version, _TABLES.c.last_seq)
)
_SEAT_TABLE = cast(sa.Table, Seat.__table__)
_CLOCKS = cast(sa.Table, Clock.__table__)
_INSERT_EVENTS = insert(_EVENTS)
_INSERT_SNAPSHOT = insert(_SNAPSHOTS)
_UPDATE_SNAPSHOT = update(_SNAPSHOTS).where(
    _SNAPSHOTS.c.table_id == bindparam("s_table_id"),
    _SNAPSHOTS.c.match_number == bindparam("s_match_number"),
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


def _record_finished(
    conn: Connection, loaded: Loaded, match: int, state: MatchState, now: datetime
) -> None:
    players = [loaded.seat_info(s) for s in (0, 1)]
    assert state.winner is not None and state.finish_reason is not None
    assert state.final_scores is not None
    conn.execute(
        insert(cast(sa.Table, FinishedMatch.__table__)),
        {
            "table_id": loaded.table.id,
            "match_number": match,
            "seat0_player_id": players[0].player_id if players[0] else None,
            "seat1_player_id": players[1].player_id if players[1] else None,
            "seat0_bot_level": players[0].bot_level if players[0] else None,
            "seat1_bot_level": players[1].bot_level if players[1] else None,
            "winner": state.winner,
            "reason": state.finish_reason,
            "scores": list(state.scores),
            "final_scores": list(state.final_scores),
            "finished_at": now,
        },
    )


async def events_since(
    session: AsyncSession, table_id: str, since: int, limit: int | None = None
) -> list[StoredEvent]:
    """The log of ``table_id`` after seq ``since``, oldest first (at most ``limit`` rows)."""
    query = (
        select(EventRow)
        .where(EventRow.table_id == table_id, EventRow.seq > since)
        .order_by(EventRow.seq)
    )
    if limit is not None:
        query = query.limit(limit)
    rows = (await session.execute(query)).scalars().all()
    return [_stored(r) for r in rows]


def _stored(row: EventRow) -> StoredEvent:
    return StoredEvent(
        row.table_id, row.seq, row.match_number, row.hand_number, Event.from_dict(row.data)
    )


async def hand_events(
    session: AsyncSession, table_id: str, match: int, hand: int
) -> list[StoredEvent]:
    """The logged events of one hand so far, oldest first."""
    return [_stored(r) for r in await hand_rows(session, table_id, match, hand)]


async def hand_rows(
    session: AsyncSession, table_id: str, match: int, hand: int
) -> Sequence[EventRow]:
    """Every logged event of one hand, oldest first (secret columns included)."""
    query = select(EventRow).where(
        EventRow.table_id == table_id, EventRow.match_number == match, EventRow.hand_number == hand
    )
    return (await session.execute(query.order_by(EventRow.seq))).scalars().all()


async def finished_matches(
    session: AsyncSession, player_id: str
) -> list[tuple[FinishedMatch, dict[int, Player]]]:
    """The player's finished matches, newest first, with both seats' players."""
    matches = (
        (
            await session.execute(
                select(FinishedMatch)
                .where(
                    or_(
                        FinishedMatch.seat0_player_id == player_id,
                        FinishedMatch.seat1_player_id == player_id,
                    )
                )
                .order_by(FinishedMatch.finished_at.desc())
            )
        )
        .scalars()
        .all()
    )
    ids = {pid for m in matches for pid in (m.seat0_player_id, m.seat1_player_id) if pid}
    players = (
        {
            p.id: p
            for p in (await session.execute(select(Player).where(Player.id.in_(ids)))).scalars()
        }
        if ids
        else {}
    )
    out = []
    for m in matches:
        seats = {
            s: players[pid]
            for s, pid in ((0, m.seat0_player_id), (1, m.seat1_player_id))
            if pid in players
        }
        out.append((m, seats))
    return out


async def idempotent_response(
    session: AsyncSession, player_id: str, key: str
) -> IdempotencyKey | None:
    return await session.get(IdempotencyKey, (player_id, key))


def save_idempotent(
    conn: Connection,
    player_id: str,
    key: str,
    *,
    fingerprint: str,
    status_code: int,
    body: dict[str, Any],
) -> None:
    """Keep a response under its key (IntegrityError when the key is already taken)."""
    conn.execute(
        insert(cast(sa.Table, IdempotencyKey.__table__)),
        {
            "player_id": player_id,
            "key": key,
            "fingerprint": fingerprint,
            "status_code": status_code,
            "body": body,
            "created_at": utcnow(),
        },
    )


async def purge_idempotent(session: AsyncSession, before: datetime) -> int:
    """Forget the responses saved under Idempotency-Keys before ``before``; how many."""
    result = await session.execute(
        delete(IdempotencyKey)
        .where(IdempotencyKey.created_at < before)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0))


# Bot seats: which server process acts for each (``app.service.bots``).


async def claim_bot_seat(
    session: AsyncSession, table_id: str, owner: str, now: datetime, until: datetime
) -> bool:
    """Take or renew the lease of the table's bot seat for ``owner`` unless another holds it.

    One conditional UPDATE: atomic on SQLite (one writer) and on PostgreSQL (a concurrent
    claimer waits for the row lock, then re-checks the condition and finds the lease taken).
    """
    result = await session.execute(
        update(Seat)
        .where(
            Seat.table_id == table_id,
            Seat.bot_level.is_not(None),
            or_(
                Seat.bot_lease_owner.is_(None),
                Seat.bot_lease_owner == owner,
                Seat.bot_lease_until < now,
            ),
        )
        .values(bot_lease_owner=owner, bot_lease_until=until)
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


async def release_bot_seats(session: AsyncSession, owner: str, table_id: str | None = None) -> None:
    """Give up ``owner``'s leases (of one table, or all of them)."""
    query = update(Seat).where(Seat.bot_lease_owner == owner)
    if table_id is not None:
        query = query.where(Seat.table_id == table_id)
    await session.execute(
        query.values(bot_lease_owner=None, bot_lease_until=None).execution_options(
            synchronize_session=False
        )
    )


async def unleased_bot_tables(session: AsyncSession | AsyncConnection, now: datetime) -> list[str]:
    """Tables in a match with a bot seat whose lease is free or expired."""
    query = (
        select(Seat.table_id)
        .join(Table, Table.id == Seat.table_id)
        .where(
            Seat.bot_level.is_not(None),
            Table.status == "playing",
            or_(Seat.bot_lease_owner.is_(None), Seat.bot_lease_until < now),
        )
    )
    return list((await session.execute(query)).scalars().all())


async def tables_in_play(session: AsyncSession) -> int:
    """How many tables have a match being played."""
    query = select(sa.func.count()).select_from(Table).where(Table.status == "playing")
    return int((await session.execute(query)).scalar_one())


# Clocks: which server process acts on each due deadline (``app.service.workers.deadlines``).


async def due_clocks(
    session: AsyncSession | AsyncConnection, now: datetime, limit: int = 100
) -> list[str]:
    """Tables whose deadline has passed and whose clock no live lease covers, earliest first."""
    query = (
        select(_CLOCKS.c.table_id)
        .where(
            _CLOCKS.c.deadline <= now,
            or_(_CLOCKS.c.lease_owner.is_(None), _CLOCKS.c.lease_until < now),
        )
        .order_by(_CLOCKS.c.deadline)
        .limit(limit)
    )
    return list((await session.execute(query)).scalars().all())


async def next_deadline(session: AsyncSession | AsyncConnection, now: datetime) -> datetime | None:
    """The earliest deadline after ``now`` (the deadline runner sleeps until it, or less)."""
    query = select(sa.func.min(_CLOCKS.c.deadline)).where(_CLOCKS.c.deadline > now)
    found: datetime | None = (await session.execute(query)).scalar_one_or_none()
    if found is not None and found.tzinfo is None:
        found = found.replace(tzinfo=UTC)  # SQLite keeps no zone (written as UTC)
    return found


async def claim_clock(
    session: AsyncSession, table_id: str, owner: str, now: datetime, until: datetime
) -> bool:
    """Take the lease of a due clock for ``owner`` unless another process holds it (one
    conditional UPDATE, as ``claim_bot_seat``)."""
    result = await session.execute(
        update(_CLOCKS)
        .where(
            _CLOCKS.c.table_id == table_id,
            _CLOCKS.c.deadline <= now,
            or_(
                _CLOCKS.c.lease_owner.is_(None),
                _CLOCKS.c.lease_owner == owner,
                _CLOCKS.c.lease_until < now,
            ),
        )
        .values(lease_owner=owner, lease_until=until)
    )
    return bool(getattr(result, "rowcount", 0) == 1)
