"""The notification outbox: its rows, written with the move that causes them, and every query
the dispatcher (``app.service.workers.dispatcher``) and the player's endpoints run on it.

A move's notes are inserted in the move's own transaction (``commits.commit_change``; a plain
move's on SQLite by the same statement on the driver, ``write_notes_sqlite``), or as one more
part of the plain move's single PostgreSQL statement (``commits._PLAIN_PG``), and only for a
player whose ``notification_settings`` row is ``active`` (has a channel) and, for
``your_turn``, whose reminders are not ``none``: the database decides, in the same statement,
so a move costs no extra round trip and a player without channels no row at all.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    delete,
    insert,
    literal,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.store.db import dump_json, sqlite_time
from app.store.models import Clock, NotificationSettings, OutboxRow
from app.table.model import Note
from app.table.time import utcnow

OUTBOX = cast(sa.Table, OutboxRow.__table__)
SETTINGS = cast(sa.Table, NotificationSettings.__table__)

# Reminder choices (``notification_settings.reminders``).
REMINDERS = ("each_turn", "digest", "none")


# The general path's insert: one row per note, only for a player it is for (see the module
# docstring). An executemany of INSERT ... SELECT ... FROM notification_settings.
_WANTED = and_(
    SETTINGS.c.player_id == bindparam("o_player_id"),
    SETTINGS.c.active == true(),
    or_(bindparam("o_kind") != "your_turn", SETTINGS.c.reminders != "none"),
)
_INSERT_NOTES = insert(OUTBOX).from_select(
    [
        "message_id",
        "player_id",
        "kind",
        "table_id",
        "payload",
        "status",
        "created_at",
        "next_at",
        "attempts",
        "channels_done",
    ],
    select(
        bindparam("o_message_id", type_=sa.String),
        SETTINGS.c.player_id,
        bindparam("o_kind", type_=sa.String),
        bindparam("o_table_id", type_=sa.String),
        bindparam("o_payload", type_=sa.JSON),
        literal("pending"),
        bindparam("o_created_at", type_=OUTBOX.c.created_at.type),
        bindparam("o_next_at", type_=OUTBOX.c.next_at.type),
        literal(0),
        bindparam("o_done", type_=sa.JSON),
    ).where(_WANTED),
)


def write_notes(conn: Connection, notes: list[Note], now: datetime) -> int:
    """Insert ``notes`` (those a player wants) in the transaction of ``conn``; how many rows
    were written (``len(notes)`` when the driver cannot say)."""
    if not notes:
        return 0
    result = conn.execute(
        _INSERT_NOTES,
        [
            {
                "o_message_id": n.message_id,
                "o_player_id": n.player_id,
                "o_kind": n.kind,
                "o_table_id": n.table_id,
                "o_payload": n.payload,
                "o_created_at": now,
                "o_next_at": n.not_before or now,
                "o_done": [],
            }
            for n in notes
        ],
    )
    written: int = result.rowcount
    # asyncpg's executemany cannot count (a wrong 0 would only delay the dispatcher's wake).
    if written < 0 or not conn.dialect.supports_sane_multi_rowcount:
        return len(notes)
    return written


# The same insert as SQLite's driver takes it, for the plain move's statements there
# (``commits._write_plain_sqlite``), which skip SQLAlchemy's per-statement work.
_INSERT_NOTES_SQLITE = (
    "INSERT INTO outbox (message_id, player_id, kind, table_id, payload, status, created_at,"
    " next_at, attempts, channels_done)"
    " SELECT ?, s.player_id, ?, ?, ?, 'pending', ?, ?, 0, '[]' FROM notification_settings s"
    " WHERE s.player_id = ? AND s.active = 1 AND (? != 'your_turn' OR s.reminders != 'none')"
)


def write_notes_sqlite(driver: sqlite3.Connection, notes: list[Note], stamp: str) -> int:
    """``write_notes`` on SQLite's own connection, inside its transaction: the rows it would
    write, with the values its column types would bind (JSON text by ``dump_json``, times as
    ``sqlite_time`` text; ``stamp`` is now's). How many rows were written."""
    if not notes:
        return 0
    cursor = driver.executemany(
        _INSERT_NOTES_SQLITE,
        [
            (
                n.message_id,
                n.kind,
                n.table_id,
                dump_json(n.payload),
                stamp,
                stamp if n.not_before is None else sqlite_time(n.not_before),
                n.player_id,
                n.kind,
            )
            for n in notes
        ],
    )
    return cursor.rowcount


# The same insert as one more part of the plain move's PostgreSQL statement (``commits._PLAIN_PG``
# appends it; its parameters are ``pg_arrays``), run only when the table's UPDATE matched.
PLAIN_PG_PART = """, o AS (
    INSERT INTO outbox (message_id, player_id, kind, table_id, payload, status, created_at,
        next_at, attempts, channels_done)
    SELECT n.message_id, n.player_id, n.kind, $1, n.payload::json, 'pending', $7,
        coalesce(n.next_at, $7), 0, '[]'::json
    FROM g, unnest($13::text[], $14::text[], $15::text[], $16::text[], $17::timestamptz[])
        AS n(message_id, player_id, kind, payload, next_at)
    JOIN notification_settings s ON s.player_id = n.player_id AND s.active
        AND (n.kind <> 'your_turn' OR s.reminders <> 'none')
    RETURNING 1
)"""


def pg_arrays(notes: list[Note], dump: Any) -> list[list[Any]]:
    """``PLAIN_PG_PART``'s five array parameters ($13..$17) for ``notes``."""
    return [
        [n.message_id for n in notes],
        [n.player_id for n in notes],
        [n.kind for n in notes],
        [dump(n.payload) for n in notes],
        [n.not_before for n in notes],
    ]


# A player's settings.


async def settings_of(session: AsyncSession, player_id: str) -> NotificationSettings | None:
    return await session.get(NotificationSettings, player_id, populate_existing=True)


async def settings_for_update(session: AsyncSession, player_id: str) -> NotificationSettings:
    """The player's settings row, created with the defaults when they have none."""
    row = await settings_of(session, player_id)
    if row is None:
        row = NotificationSettings(
            player_id=player_id,
            reminders="each_turn",
            digest_hours=24.0,
            webhook_url=None,
            webhook_secret=None,
            push=False,
            active=False,
            last_digest_at=None,
            lease_owner=None,
            lease_until=None,
            updated_at=utcnow(),
            webhook_failing_since=None,
            webhook_error=None,
            webhook_disabled_at=None,
        )
        session.add(row)
    return row


def refresh_active(row: NotificationSettings) -> None:
    """``active`` is whether the player has any channel (a webhook turned off for failing too
    long is none)."""
    webhook = bool(row.webhook_url) and row.webhook_disabled_at is None
    row.active = webhook or bool(row.push)
    row.updated_at = utcnow()


def webhook_healthy(row: NotificationSettings) -> None:
    """Forget the webhook's failures (a success, or a webhook registered again): on again."""
    row.webhook_failing_since = row.webhook_error = row.webhook_disabled_at = None
    refresh_active(row)


async def webhook_outcome(
    session: AsyncSession,
    player_id: str,
    *,
    ok: bool,
    error: str | None,
    now: datetime,
    disable_after: timedelta | None,
) -> bool:
    """Record a try of the player's webhook; True when this failure turns it off (every try
    has failed for ``disable_after``; None: never)."""
    row = await settings_of(session, player_id)
    if row is None or row.webhook_url is None:
        return False
    if ok:
        if row.webhook_failing_since is not None or row.webhook_disabled_at is not None:
            webhook_healthy(row)
        return False
    since = row.webhook_failing_since = row.webhook_failing_since or now
    row.webhook_error = error
    if disable_after is None or row.webhook_disabled_at is not None or now - since < disable_after:
        return False
    row.webhook_disabled_at = now
    refresh_active(row)
    return True


async def set_push_channel(session: AsyncSession, player_id: str, subscribed: bool) -> None:
    """The Web Push side's hook: the player has (or no longer has) a push subscription, so
    their notifications are (or are no longer) written to the outbox for it."""
    row = await settings_for_update(session, player_id)
    row.push = subscribed
    refresh_active(row)


async def deliveries(
    session: AsyncSession, player_id: str, status: str | None, limit: int
) -> list[OutboxRow]:
    """The player's notifications, newest first (only ``status`` ones if given)."""
    query = select(OutboxRow).where(OutboxRow.player_id == player_id)
    if status is not None:
        query = query.where(OutboxRow.status == status)
    rows = await session.execute(query.order_by(OutboxRow.id.desc()).limit(limit))
    return list(rows.scalars().all())


async def purge_finished(session: AsyncSession, before: datetime, limit: int = 5000) -> int:
    """Delete up to ``limit`` notifications finished (delivered, failed...) before
    ``before``; how many."""
    ids = (
        select(OUTBOX.c.id)
        .where(OUTBOX.c.finished_at < before, OUTBOX.c.status != "pending")
        .limit(limit)
        .scalar_subquery()
    )
    result = await session.execute(delete(OUTBOX).where(OUTBOX.c.id.in_(ids)))
    return int(getattr(result, "rowcount", 0))


# The dispatcher: which process delivers each player's notifications.


async def due_players(
    session: AsyncSession | AsyncConnection, now: datetime, limit: int = 100
) -> list[str]:
    """Players with a notification due whose settings no live lease covers."""
    query = (
        select(OUTBOX.c.player_id)
        .join(SETTINGS, SETTINGS.c.player_id == OUTBOX.c.player_id)
        .where(
            OUTBOX.c.status == "pending",
            OUTBOX.c.next_at <= now,
            or_(SETTINGS.c.lease_until.is_(None), SETTINGS.c.lease_until < now),
        )
        .distinct()
        .limit(limit)
    )
    return list((await session.execute(query)).scalars().all())


def claim_player(
    conn: Connection, player_id: str, owner: str, now: datetime, until: datetime
) -> Any:
    """Take or renew the lease of the player's notifications for ``owner`` unless another
    process holds it or it is held back until a retry (one conditional UPDATE, as
    ``leases.claim_bot_seat``): the player's settings row as it now is, or None."""
    return conn.execute(
        update(SETTINGS)
        .where(
            SETTINGS.c.player_id == player_id,
            or_(
                SETTINGS.c.lease_until.is_(None),
                SETTINGS.c.lease_owner == owner,
                SETTINGS.c.lease_until < now,
            ),
        )
        .values(lease_owner=owner, lease_until=until)
        .returning(*SETTINGS.c)
    ).one_or_none()


def release_player(
    conn: Connection, player_id: str, owner: str, hold_until: datetime | None
) -> None:
    """Give up ``owner``'s lease; with ``hold_until``, no process takes the player before then
    (their oldest notification waits for its retry, and the later ones keep their order)."""
    conn.execute(
        update(SETTINGS)
        .where(SETTINGS.c.player_id == player_id, SETTINGS.c.lease_owner == owner)
        .values(lease_owner=None if hold_until is None else "retry", lease_until=hold_until)
    )


def release_all(conn: Connection, owner: str) -> None:
    conn.execute(
        update(SETTINGS)
        .where(SETTINGS.c.lease_owner == owner)
        .values(lease_owner=None, lease_until=None)
    )


def pending_of(conn: Connection, player_id: str, limit: int) -> list[sa.Row[Any]]:
    """The player's pending notifications (rows of ``outbox``), oldest first."""
    query = (
        select(OUTBOX)
        .where(OUTBOX.c.player_id == player_id, OUTBOX.c.status == "pending")
        .order_by(OUTBOX.c.id)
        .limit(limit)
    )
    return list(conn.execute(query).all())


def finish(
    conn: Connection,
    row_ids: list[int],
    owner: str,
    player_id: str,
    *,
    status: str,
    now: datetime,
    channels_done: list[str] | None = None,
    error: str | None = None,
) -> bool:
    """Mark rows ``status`` (delivered, failed, stale, digested), pinned to ``owner``'s lease:
    False (nothing written) when another process took the player over."""
    values: dict[str, Any] = {"status": status, "finished_at": now, "last_error": error}
    if channels_done is not None:
        values["channels_done"] = channels_done
    result = conn.execute(
        update(OUTBOX)
        .where(OUTBOX.c.id.in_(row_ids), OUTBOX.c.status == "pending", _leased(player_id, owner))
        .values(**values)
    )
    return result.rowcount >= 1


def retry_later(
    conn: Connection,
    row_id: int,
    owner: str,
    player_id: str,
    *,
    next_at: datetime,
    channels_done: list[str],
    error: str,
) -> None:
    """Count a failed attempt; try again at ``next_at`` (pinned to the lease as ``finish``)."""
    conn.execute(
        update(OUTBOX)
        .where(OUTBOX.c.id == row_id, OUTBOX.c.status == "pending", _leased(player_id, owner))
        .values(
            attempts=OUTBOX.c.attempts + 1,
            next_at=next_at,
            channels_done=channels_done,
            last_error=error,
        )
    )


def postpone(conn: Connection, row_ids: list[int], next_at: datetime) -> None:
    """Hold rows until ``next_at`` (a digest player's your_turn notes until their digest)."""
    conn.execute(update(OUTBOX).where(OUTBOX.c.id.in_(row_ids)).values(next_at=next_at))


def digest_sent(conn: Connection, player_id: str, now: datetime) -> None:
    """The player's digest went out at ``now``: the next one waits ``digest_hours``."""
    conn.execute(
        update(SETTINGS).where(SETTINGS.c.player_id == player_id).values(last_digest_at=now)
    )


def _leased(player_id: str, owner: str) -> sa.ColumnElement[bool]:
    return (
        select(SETTINGS.c.player_id)
        .where(SETTINGS.c.player_id == player_id, SETTINGS.c.lease_owner == owner)
        .exists()
    )


async def clock_deadline(session: AsyncSession, table_id: str) -> datetime | None:
    """The table's pending deadline (``clocks.deadline``), if it has one."""
    query = select(Clock.deadline).where(Clock.table_id == table_id)
    return (await session.execute(query)).scalar_one_or_none()
