"""Group commit: the plain moves of different tables that ask to commit in the same pass of the
event loop are written together: by one statement on PostgreSQL, in one transaction on SQLite.

A plain move (its events, the next snapshot and its notifications, nothing else:
``commits._plain``) is one statement already (``commits._PLAIN_PG``). At capacity, many tables
commit in the same pass of the loop, and each statement costs the server the same fixed work
whatever it carries: the pool checkout and return, asyncpg's bind and execute, a socket write
and read, the loop's wake-up for the answer. ``GroupCommit`` queues each such commit, and at the
next pass of the loop sends everything queued as one statement (``_GROUP_PG``): the same writes,
each table's under its own version guard, each part only for the tables whose guard matched. A
table whose guard did not match gets ``VersionConflictError`` and nothing of it is written,
whatever the others did; the others commit. One statement is atomic, so a crash writes all of
a group or none of it, and every caller is answered only once its write is durable.

On SQLite each plain move is three statements on the driver (``commits._write_plain_sqlite``),
run in the loop (its events' plan, its snapshot's text and what it made are worked out outside
the transaction, as on PostgreSQL); what a group saves there is the transaction around them
(the write gate, BEGIN IMMEDIATE and COMMIT), once per group instead of once per move. A move
whose guard fails raises before it writes anything, so the others' statements in the same
transaction stand.

A table is in a group at most once (the pipeline commits one change per table at a time in a
process; a second would wait for the next group). A commit whose caller was cancelled before
its group was sent is left out of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Self

import orjson
from sqlalchemy import Connection

from app.engine import Event
from app.store.conflict import VersionConflictError
from app.store.db import Database, dump_json
from app.table.model import Change, Committed, Loaded
from app.table.project import committed, planned_events
from app.table.time import utcnow

# ``commits._PLAIN_PG_NOTES`` for many tables: the input rows ``i`` (one per table, ``k`` its
# place in the group), the guarded UPDATE of each, and the events, snapshots and outbox rows of
# the tables it matched, joined on ``k`` (the outbox rows counted by table: a table is in a
# group once).
_GROUP_PG = """
WITH i AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::int[],
        $7::text[]) WITH ORDINALITY AS i(id, version, bump, n, status, match_number, state, k)
), g AS (
    UPDATE tables t SET version = t.version + i.bump, last_seq = t.last_seq + i.n,
        status = coalesce(i.status, t.status)
    FROM i WHERE t.id = i.id AND t.version = i.version
    RETURNING i.k, i.id, i.n, i.match_number, i.state, t.version, t.last_seq
), e AS (
    INSERT INTO events
        (table_id, seq, match_number, hand_number, type, data, secret, created_at)
    SELECT g.id, g.last_seq - g.n + e.ord, g.match_number, e.hand, e.type, e.data::json,
        e.secret::json, $8
    FROM unnest($9::int[], $10::int[], $11::int[], $12::text[], $13::text[], $14::text[])
        AS e(k, ord, hand, type, data, secret)
    JOIN g ON g.k = e.k
), s AS (
    UPDATE snapshots SET version = g.version, last_seq = g.last_seq, state = g.state::json,
        updated_at = $8
    FROM g WHERE snapshots.table_id = g.id AND snapshots.match_number = g.match_number
), o AS (
    INSERT INTO outbox (message_id, player_id, kind, table_id, payload, status, created_at,
        next_at, attempts, channels_done)
    SELECT n.message_id, n.player_id, n.kind, g.id, n.payload::json, 'pending', $8,
        coalesce(n.next_at, $8), 0, '[]'::json
    FROM unnest($15::int[], $16::text[], $17::text[], $18::text[], $19::text[],
        $20::timestamptz[]) AS n(k, message_id, player_id, kind, payload, next_at)
    JOIN g ON g.k = n.k
    JOIN notification_settings s ON s.player_id = n.player_id AND s.active
        AND (n.kind <> 'your_turn' OR s.reminders <> 'none')
    RETURNING table_id
)
SELECT g.k, g.version, g.last_seq, (SELECT count(*) FROM o WHERE o.table_id = g.id) FROM g
"""

Planned = list[tuple[Event, int | None, dict[str, Any] | None]]


@dataclass
class PlainMove:
    """A plain move ready to write: its table as loaded, the change, its events' plan and its
    snapshot's text (worked out before the write, outside any lock)."""

    loaded: Loaded
    change: Change
    planned: Planned
    state_text: str

    @classmethod
    def of(cls, loaded: Loaded, change: Change) -> Self:
        assert change.state is not None
        planned = planned_events(loaded, change)
        return cls(loaded, change, planned, dump_json(change.state.to_dict()))

    def made(self, version: int, last_seq: int, notes: int, *, now: datetime) -> Committed:
        """What this move made once written at ``version`` up to ``last_seq`` (``notes``: the
        outbox rows written)."""
        return committed(
            self.loaded,
            self.change,
            self.planned,
            version,
            last_seq,
            now=now,
            state_data=orjson.Fragment(self.state_text),
            notes=notes,
        )


# SQLite: one plain move's statements in the group's transaction, at a time: the table's
# version and last seq once written, and the notes written.
WriteOne = Callable[[Connection, PlainMove, datetime], tuple[int, int, int]]


def _future() -> asyncio.Future[Committed]:
    return asyncio.get_running_loop().create_future()


@dataclass
class _Pending(PlainMove):
    done: asyncio.Future[Committed] = field(default_factory=_future, repr=False)


class GroupCommit:
    """The plain moves of one ``Database``, written a group per pass of the loop (SQLite: each
    by ``write_one`` in the group's transaction)."""

    def __init__(self, db: Database, write_one: WriteOne | None = None) -> None:
        assert db.is_sqlite == (write_one is not None)
        self.db = db
        self._write_one = write_one
        self._queued: list[_Pending] = []
        # The loop a send is scheduled on, if any: a loop that stopped with one pending (a
        # process's shutdown, a test's loop) leaves it behind, and the next loop starts afresh.
        self._scheduled: asyncio.AbstractEventLoop | None = None
        self._writing: set[asyncio.Task[None]] = set()
        # How many commits each statement carried (``benchmarks``, tests).
        self.groups = 0
        self.commits = 0

    async def commit(self, loaded: Loaded, change: Change) -> Committed:
        """Write the plain move ``change`` of ``loaded`` with the others of this pass of the
        loop; ``VersionConflictError`` if its table is no longer at the loaded version."""
        loop = asyncio.get_running_loop()
        pending = _Pending.of(loaded, change)
        if self._scheduled is not loop:
            if self._scheduled is not None:  # left behind by a loop that stopped
                self._queued = [p for p in self._queued if p.done.get_loop() is loop]
            self._scheduled = loop
            loop.call_soon(self._send)
        self._queued.append(pending)
        return await pending.done

    def _send(self) -> None:
        """Send what is queued as one group (a table's second commit waits for the next)."""
        self._scheduled = None
        group: list[_Pending] = []
        later: list[_Pending] = []
        tables: set[str] = set()
        for pending in self._queued:
            if pending.done.done():  # its caller was cancelled: it is not sent
                continue
            table_id = pending.loaded.table.id
            (later if table_id in tables else group).append(pending)
            tables.add(table_id)
        self._queued = later
        if later:
            self._scheduled = loop = asyncio.get_running_loop()
            loop.call_soon(self._send)
        if group:
            task = asyncio.create_task(self._write(group))
            self._writing.add(task)
            task.add_done_callback(self._writing.discard)

    async def _write(self, group: list[_Pending]) -> None:
        """Write ``group`` and answer each of its callers: its commit, or why not."""
        try:
            if self._write_one is None:
                results = await self._statement(group)
            else:
                results = await self._transaction(group, self._write_one)
        except BaseException as exc:
            for pending in group:
                if not pending.done.done():
                    pending.done.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self.groups += 1
        self.commits += len(group)
        for pending, result in zip(group, results, strict=True):
            if pending.done.done():
                continue
            if isinstance(result, VersionConflictError):
                pending.done.set_exception(result)
            else:
                pending.done.set_result(result)

    async def _statement(self, group: list[_Pending]) -> list[Committed | VersionConflictError]:
        """PostgreSQL: ``group`` in one statement."""
        now = utcnow()
        rows = await self.db.fetch_driver(_GROUP_PG, *_parameters(group, now))
        by_place = {k: (version, last_seq, notes) for k, version, last_seq, notes in rows}
        out: list[Committed | VersionConflictError] = []
        for k, pending in enumerate(group, 1):
            written = by_place.get(k)
            if written is None:
                out.append(VersionConflictError(pending.loaded.table.id))
                continue
            out.append(pending.made(*written, now=now))
        return out

    async def _transaction(
        self, group: list[_Pending], write_one: WriteOne
    ) -> list[Committed | VersionConflictError]:
        """SQLite: ``group`` in one transaction, each move by ``write_one`` (what each made
        is worked out after, outside the write lock)."""
        now = utcnow()

        def work(conn: Connection) -> list[tuple[int, int, int] | VersionConflictError]:
            out: list[tuple[int, int, int] | VersionConflictError] = []
            for pending in group:
                try:
                    out.append(write_one(conn, pending, now))
                except VersionConflictError as exc:  # nothing of it was written
                    out.append(exc)
            return out

        written = await self.db.transact(work)
        return [
            one if isinstance(one, VersionConflictError) else p.made(*one, now=now)
            for p, one in zip(group, written, strict=True)
        ]


def _parameters(group: list[_Pending], now: datetime) -> list[Any]:
    """``_GROUP_PG``'s twenty parameters for ``group``."""
    tables: list[list[Any]] = [[], [], [], [], [], [], []]
    events: list[list[Any]] = [[], [], [], [], [], []]
    notes: list[list[Any]] = [[], [], [], [], [], []]
    for k, pending in enumerate(group, 1):
        table, change = pending.loaded.table, pending.change
        for column, value in zip(
            tables,
            (
                table.id,
                table.version,
                1 if change.bumps_version else 0,
                len(pending.planned),
                change.status,
                table.match_number,
                pending.state_text,
            ),
            strict=True,
        ):
            column.append(value)
        for ord_, (event, hand, secret) in enumerate(pending.planned, 1):
            events[0].append(k)
            events[1].append(ord_)
            events[2].append(hand)
            events[3].append(event.type)
            events[4].append(dump_json(event.to_dict()))
            events[5].append(None if secret is None else dump_json(secret))
        for note in change.notes:
            notes[0].append(k)
            notes[1].append(note.message_id)
            notes[2].append(note.player_id)
            notes[3].append(note.kind)
            notes[4].append(dump_json(note.payload))
            notes[5].append(note.not_before)
    return [*tables, now, *events, *notes]
