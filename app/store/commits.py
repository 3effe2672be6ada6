"""Commits: the one write path of a table, guarded by its version.

``commit`` is a version-guarded UPDATE of the table row first (so SQLite takes its write lock
before any read of this transaction), then the events with their contiguous seqs, the snapshot,
seats (and whether their table is open), chat and the finished-match record — in one
transaction (``commit_change``), or for a plain move on PostgreSQL in one statement.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar, cast
from weakref import WeakKeyDictionary

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection, bindparam, delete, insert, update

from app.engine import MatchState
from app.store import outbox
from app.store.conflict import VersionConflictError
from app.store.db import Database, dump_json, sqlite_time
from app.store.group_commit import GroupCommit, PlainMove
from app.store.models import ChatMessage, FinishedMatch
from app.store.tables import CLOCKS, INSERT_EVENTS, INSERT_SNAPSHOT, SEATS, TABLES, UPDATE_SNAPSHOT
from app.table.model import KEEP, Change, Committed, Loaded
from app.table.project import committed, finishes, planned_events
from app.table.time import utcnow

T = TypeVar("T")

__all__ = ["VersionConflictError", "commit", "commit_change"]

# Each PostgreSQL database's group commit (``app.store.group_commit``), made on first use.
_GROUPS: WeakKeyDictionary[Database, GroupCommit] = WeakKeyDictionary()


async def commit(
    db: Database,
    loaded: Loaded,
    change: Change,
    also: Callable[[Connection, Committed], T] | None = None,
) -> tuple[Committed, T | None]:
    """Write ``change`` if the table is still at the loaded version; else VersionConflictError.

    ``also(connection, committed)`` runs in the same transaction (an idempotent response is
    saved there) and its result comes back with the commit. A plain move (events, the snapshot
    and its notes, nothing else) is one statement on PostgreSQL (``_commit_plain``); on SQLite
    its statements go straight to the driver (``_commit_plain_sqlite``); with
    ``Database.group_commit`` the plain moves of one pass of the loop go together
    (``app.store.group_commit``). Everything else is ``commit_change`` in
    ``Database.transact``.
    """
    plain = _plain(loaded, change)
    if also is None and plain and db.group_commit:
        group = _GROUPS.get(db)
        if group is None:
            write_one = _write_plain_sqlite if db.is_sqlite else None
            group = _GROUPS[db] = GroupCommit(db, write_one)
        return await group.commit(loaded, change), None
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
            "g_offer_set": 0 if change.rematch_offer == KEEP else 1,
            "g_offer": None if change.rematch_offer == KEEP else change.rematch_offer,
        },
    ).one_or_none()
    if row is None:
        raise VersionConflictError(table.id)
    version, last_seq = row
    first = last_seq - n + 1
    now = utcnow()
    planned = planned_events(loaded, change)
    conn.execute(
        INSERT_EVENTS,  # one executemany
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
            conn.execute(INSERT_SNAPSHOT, snapshot)
        else:
            snapshot.update(s_table_id=table.id, s_match_number=match_number)
            conn.execute(UPDATE_SNAPSHOT, snapshot)
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
            conn.execute(SEATS.update().where(*_seat_is(table.id, info.seat)), values)
        else:
            conn.execute(
                insert(SEATS),
                {"table_id": table.id, "seat": info.seat, "joined_at": now, **values},
            )
        if info.bot_level is not None:
            # The bot runner finds the table by this flag (``leases.unleased_bot_tables``).
            conn.execute(_MARK_BOT, {"m_id": table.id})
    if change.vacated:
        conn.execute(
            delete(SEATS).where(SEATS.c.table_id == table.id, SEATS.c.seat.in_(change.vacated))
        )
    if _flips_finished(loaded, change):
        conn.execute(_SEATS_OPEN, {"o_id": table.id, "o_open": change.status != "finished"})
    for seat_number, design in change.deck_designs.items():
        conn.execute(
            SEATS.update().where(*_seat_is(table.id, seat_number)),
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
            update(CLOCKS)
            .where(CLOCKS.c.table_id == table.id)
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
        and change.rematch_offer == KEEP
        and not finishes(loaded, change)
        and not _flips_finished(loaded, change)
    )


def _flips_finished(loaded: Loaded, change: Change) -> bool:
    """Whether ``change`` finishes the table or opens a finished one again (a rematch): its
    seats' ``table_open`` follows (``commit_change``)."""
    return change.status is not None and (change.status == "finished") != (
        loaded.table.status == "finished"
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
    """A plain move on SQLite, in the transaction of ``conn`` (``_write_plain_sqlite``), and
    what it made."""
    move = PlainMove.of(loaded, change)
    now = utcnow()
    return move.made(*_write_plain_sqlite(conn, move, now), now=now)


def _write_plain_sqlite(conn: Connection, move: PlainMove, now: datetime) -> tuple[int, int, int]:
    """A plain move's writes on SQLite, in the transaction of ``conn``: ``commit_change``'s
    three statements on the driver's own connection (SQLAlchemy's per-statement work cost more
    CPU than SQLite's), with the values its column types would bind: JSON text by ``dump_json``
    (``None`` as ``null``, as the JSON type writes it), timestamps as SQLite's ``DATETIME``
    text in UTC (``sqlite_time``); the notifications by ``outbox.write_notes_sqlite``. The write
    lock is held already (the transaction began ``IMMEDIATE``): no statement here waits for
    it or meets ``SQLITE_BUSY``. The table's version and last seq once written, and how many
    notifications were."""
    loaded, change, planned = move.loaded, move.change, move.planned
    table = loaded.table
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
    stamp = sqlite_time(now)
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
    driver.execute(
        _PLAIN_SQLITE_SNAPSHOT,
        (version, last_seq, move.state_text, stamp, table.id, table.match_number),
    )
    return version, last_seq, outbox.write_notes_sqlite(driver, change.notes, stamp)


def _seat_is(table_id: str, seat: int) -> tuple[sa.ColumnElement[bool], ...]:
    return (SEATS.c.table_id == table_id, SEATS.c.seat == seat)


_SEATS_OPEN = (
    update(SEATS)
    .where(SEATS.c.table_id == bindparam("o_id"))
    .values(table_open=bindparam("o_open"))
)
_MARK_BOT = update(TABLES).where(TABLES.c.id == bindparam("m_id")).values(bot=True)

_GUARDED_UPDATE = (
    update(TABLES)
    .where(TABLES.c.id == bindparam("g_id"), TABLES.c.version == bindparam("g_version"))
    .values(
        version=TABLES.c.version + bindparam("g_bump"),
        last_seq=TABLES.c.last_seq + bindparam("g_events"),
        match_number=TABLES.c.match_number + bindparam("g_new_match"),
        status=sa.func.coalesce(bindparam("g_status", type_=sa.String), TABLES.c.status),
        rematch_offer=sa.case(
            (
                bindparam("g_offer_set", type_=sa.Integer) == 1,
                bindparam("g_offer", type_=sa.Integer),
            ),
            else_=TABLES.c.rematch_offer,
        ),
    )
    .returning(TABLES.c.version, TABLES.c.last_seq)
)


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
