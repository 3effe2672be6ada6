"""Leases: which server process acts for each bot seat and each due clock.

A lease is one conditional UPDATE naming its owner (``owner_id``: host, process and a random
part, so two processes on one host, or a restarted one, never share it) until a time; a crashed
process's leases expire.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.store.models import Seat, Table
from app.store.tables import CLOCKS


def owner_id() -> str:
    """A lease owner's name for this process: unique per worker, readable in the tables."""
    return f"{socket.gethostname()[:24]}/{os.getpid()}/{uuid.uuid4().hex[:16]}"


# Bot seats: which server process acts for each (``app.service.workers.bots``).


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
    # Both seats at a table of two bots: they are claimed and released together.
    return bool(getattr(result, "rowcount", 0) >= 1)


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
    """Tables in a match with a bot seat whose lease is free or expired.

    First the bot tables being played (``ix_tables_bot_playing``: none is finished), then their
    bot seats by key: two statements, where one join let the planner hash every bot seat
    (it cannot know how few bot tables are in play, and guessed thousands)."""
    playing = select(Table.id).where(Table.bot, Table.status == "playing")
    ids = list((await session.execute(playing)).scalars().all())
    if not ids:
        return []
    query = select(Seat.table_id).where(
        Seat.table_id.in_(ids),
        Seat.bot_level.is_not(None),
        or_(Seat.bot_lease_owner.is_(None), Seat.bot_lease_until < now),
    )
    return list((await session.execute(query)).scalars().all())


# Clocks: which server process acts on each due deadline (``app.service.workers.deadlines``).


async def due_clocks(
    session: AsyncSession | AsyncConnection, now: datetime, limit: int = 100
) -> list[str]:
    """Tables whose deadline has passed and whose clock no live lease covers, earliest first."""
    query = (
        select(CLOCKS.c.table_id)
        .where(
            CLOCKS.c.deadline <= now,
            or_(CLOCKS.c.lease_owner.is_(None), CLOCKS.c.lease_until < now),
        )
        .order_by(CLOCKS.c.deadline)
        .limit(limit)
    )
    return list((await session.execute(query)).scalars().all())


async def next_deadline(session: AsyncSession | AsyncConnection, now: datetime) -> datetime | None:
    """The earliest deadline after ``now`` (the deadline runner sleeps until it, or less)."""
    query = select(sa.func.min(CLOCKS.c.deadline)).where(CLOCKS.c.deadline > now)
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
        update(CLOCKS)
        .where(
            CLOCKS.c.table_id == table_id,
            CLOCKS.c.deadline <= now,
            or_(
                CLOCKS.c.lease_owner.is_(None),
                CLOCKS.c.lease_owner == owner,
                CLOCKS.c.lease_until < now,
            ),
        )
        .values(lease_owner=owner, lease_until=until)
    )
    return bool(getattr(result, "rowcount", 0) == 1)
