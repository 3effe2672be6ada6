"""Seeks and challenges: the lobby's rows, and the conditional UPDATEs that decide pairings.

A seek leaves ``open`` once, by one conditional UPDATE (``claim``, ``close``): two processes
racing for it find one row changed between them, whatever the database (PostgreSQL re-checks
the condition after waiting for the row's lock; SQLite has one writer). Writes take the
transaction's ``Connection``; reads an ``AsyncSession``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import Connection, and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import FinishedMatch, Player, Seek, Snapshot, Table
from app.store.tables import SEATS

SEEKS = cast(sa.Table, Seek.__table__)
PLAYERS = cast(sa.Table, Player.__table__)
TABLES = cast(sa.Table, Table.__table__)
SNAPSHOTS = cast(sa.Table, Snapshot.__table__)
FINISHED = cast(sa.Table, FinishedMatch.__table__)

# A row of ``SEEKS`` with its owner's name and bot flag, and the target's name.
_TARGET = PLAYERS.alias("target")
_ROW = (
    select(SEEKS, PLAYERS.c.name, PLAYERS.c.bot, _TARGET.c.name.label("target_name"))
    .join(PLAYERS, PLAYERS.c.id == SEEKS.c.player_id)
    .outerjoin(_TARGET, _TARGET.c.id == SEEKS.c.target_id)
)


# Why a player's other live seeks close when a pairing takes them (``close_live``).
ELSEWHERE = "paired_elsewhere"


def _alive(now: datetime) -> sa.ColumnElement[bool]:
    """Open, not expired, and (live seeks) renewed by the owner's presence."""
    return and_(
        SEEKS.c.status == "open",
        SEEKS.c.expires_at > now,
        or_(SEEKS.c.speed != "live", SEEKS.c.mode != "seek", SEEKS.c.alive_until >= now),
    )


def add(conn: Connection, values: dict[str, Any]) -> None:
    conn.execute(insert(SEEKS), values)


async def get(session: AsyncSession, seek_id: str) -> Any | None:
    return (await session.execute(_ROW.where(SEEKS.c.id == seek_id))).one_or_none()


async def get_many(session: AsyncSession, seek_ids: Sequence[str]) -> dict[str, Any]:
    """Several rows in one statement, by id."""
    rows = (await session.execute(_ROW.where(SEEKS.c.id.in_(list(seek_ids))))).all()
    return {r.id: r for r in rows}


def get_now(conn: Connection, seek_id: str) -> Any | None:
    """``get`` in a write transaction."""
    return conn.execute(_ROW.where(SEEKS.c.id == seek_id)).one_or_none()


async def listed(session: AsyncSession, now: datetime, limit: int) -> Sequence[Any]:
    """The lobby: open seeks, oldest first."""
    query = _ROW.where(SEEKS.c.mode == "seek", _alive(now)).order_by(SEEKS.c.created_at)
    return (await session.execute(query.limit(limit))).all()


async def mine(session: AsyncSession, player_id: str, now: datetime) -> Sequence[Any]:
    """A player's open seeks and challenges, and the challenges open to them."""
    query = _ROW.where(
        or_(SEEKS.c.player_id == player_id, SEEKS.c.target_id == player_id), _alive(now)
    ).order_by(SEEKS.c.created_at)
    return (await session.execute(query)).all()


def count_open(conn: Connection, player_id: str, now: datetime) -> int:
    """The player's open seeks and challenges (their row locked first: ``lock_players``)."""
    query = (
        select(sa.func.count())
        .select_from(SEEKS)
        .where(SEEKS.c.player_id == player_id, _alive(now))
    )
    return int(conn.execute(query).scalar_one())


def lock_players(conn: Connection, player_ids: Sequence[str]) -> dict[str, Any]:
    """The players' rows, locked for this transaction in id order (PostgreSQL; SQLite's
    writers are serialised already): two pairings of one player wait for each other."""
    rows = conn.execute(
        select(PLAYERS.c.id, PLAYERS.c.name, PLAYERS.c.bot)
        .where(PLAYERS.c.id.in_(sorted(set(player_ids))))
        .order_by(PLAYERS.c.id)
        .with_for_update()
    ).all()
    return {row.id: row for row in rows}


def games_at_once(conn: Connection, player_id: str, speed: str, idle_since: datetime) -> int:
    """The player's lobby tables of ``speed`` not finished; a live one counts while it moved
    after ``idle_since``."""
    query = (
        select(sa.func.count())
        .select_from(SEEKS)
        .join(TABLES, TABLES.c.id == SEEKS.c.table_id)
        .outerjoin(
            SNAPSHOTS,
            and_(
                SNAPSHOTS.c.table_id == TABLES.c.id,
                SNAPSHOTS.c.match_number == TABLES.c.match_number,
            ),
        )
        .where(
            SEEKS.c.player_id == player_id,
            SEEKS.c.status == "paired",
            SEEKS.c.speed == speed,
            TABLES.c.status != "finished",
        )
    )
    if speed == "live":
        moved = sa.func.coalesce(SNAPSHOTS.c.updated_at, SEEKS.c.closed_at)
        query = query.where(moved > idle_since)
    return int(conn.execute(query).scalar_one())


def claim(
    conn: Connection, seek_id: str, table_id: str, opponent_id: str | None, now: datetime
) -> bool:
    """Pair the seek with ``table_id`` if it is still open and alive: the one conditional
    UPDATE that makes a seek paired once."""
    result = conn.execute(
        update(SEEKS)
        .where(SEEKS.c.id == seek_id, _alive(now))
        .values(status="paired", table_id=table_id, opponent_id=opponent_id, closed_at=now)
    )
    return bool(result.rowcount == 1)


def close(
    conn: Connection,
    seek_id: str,
    status: str,
    reason: str | None,
    now: datetime,
    *,
    player_id: str | None = None,
    target_id: str | None = None,
) -> bool:
    """Close an open seek as ``status`` (cancelled, declined...), only by its owner or its
    target when given; whether it was open."""
    query = update(SEEKS).where(SEEKS.c.id == seek_id, SEEKS.c.status == "open")
    if player_id is not None:
        query = query.where(SEEKS.c.player_id == player_id)
    if target_id is not None:
        query = query.where(SEEKS.c.target_id == target_id)
    result = conn.execute(query.values(status=status, reason=reason, closed_at=now))
    return bool(result.rowcount == 1)


def close_live(
    conn: Connection, player_ids: Sequence[str], keep: Sequence[str], now: datetime
) -> list[tuple[str, str]]:
    """Cancel the players' other open live seeks and challenges (they are now at a live
    table): (seek id, owner) of each."""
    rows = conn.execute(
        update(SEEKS)
        .where(
            SEEKS.c.player_id.in_(list(player_ids)),
            SEEKS.c.status == "open",
            SEEKS.c.speed == "live",
            SEEKS.c.id.not_in(list(keep)),
        )
        .values(status="cancelled", reason=ELSEWHERE, closed_at=now)
        .returning(SEEKS.c.id, SEEKS.c.player_id)
    ).all()
    return [(r.id, r.player_id) for r in rows]


def lapse(conn: Connection, now: datetime) -> list[tuple[str, str, str]]:
    """Expire the open rows past their time, and the live seeks nobody's presence renewed:
    (seek id, owner, mode) of each. A row another transaction holds (being paired) is
    skipped, never waited for: this many-row UPDATE then takes its locks without a cycle."""
    due = _unlocked(
        or_(
            SEEKS.c.expires_at <= now,
            and_(SEEKS.c.speed == "live", SEEKS.c.mode == "seek", SEEKS.c.alive_until < now),
        )
    )
    rows = conn.execute(
        update(SEEKS)
        .where(SEEKS.c.id.in_(due), SEEKS.c.status == "open")
        .values(status="expired", closed_at=now)
        .returning(SEEKS.c.id, SEEKS.c.player_id, SEEKS.c.mode)
    ).all()
    return [(r.id, r.player_id, r.mode) for r in rows]


def _unlocked(*conditions: sa.ColumnElement[bool]) -> sa.Select[tuple[str]]:
    """The ids of the open seeks meeting ``conditions`` that no other transaction holds
    (PostgreSQL's ``SKIP LOCKED``; SQLite has one writer, nothing to skip)."""
    return (
        select(SEEKS.c.id)
        .where(SEEKS.c.status == "open", *conditions)
        .with_for_update(skip_locked=True)
    )


async def live_owners(session: AsyncSession) -> set[str]:
    """The players with an open live seek or challenge (the only ones ``renew`` changes)."""
    query = select(SEEKS.c.player_id).where(SEEKS.c.status == "open", SEEKS.c.speed == "live")
    return set((await session.execute(query.distinct())).scalars())


def renew(conn: Connection, player_ids: Sequence[str], until: datetime) -> int:
    """Keep the open live seeks of these players (connected to this process) alive; a seek
    being paired meanwhile is skipped (as in ``lapse``)."""
    held = _unlocked(SEEKS.c.player_id.in_(list(player_ids)), SEEKS.c.speed == "live")
    result = conn.execute(
        update(SEEKS)
        .where(SEEKS.c.id.in_(held), SEEKS.c.status == "open")
        .values(alive_until=until)
    )
    return int(result.rowcount)


async def waiting(session: AsyncSession, now: datetime, limit: int) -> Sequence[Any]:
    """Every pool's open seeks, for the matcher."""
    query = select(
        SEEKS.c.id,
        SEEKS.c.player_id,
        SEEKS.c.pool,
        SEEKS.c.rating,
        SEEKS.c.rating_min,
        SEEKS.c.rating_max,
        SEEKS.c.created_at,
        SEEKS.c.speed,
        SEEKS.c.bot_after,
        SEEKS.c.bot_offered_at,
    ).where(SEEKS.c.mode == "seek", _alive(now))
    return (await session.execute(query.order_by(SEEKS.c.created_at).limit(limit))).all()


def offer_bot(conn: Connection, seek_id: str, now: datetime) -> bool:
    """Mark the seek's bot offer as made, once."""
    result = conn.execute(
        update(SEEKS)
        .where(SEEKS.c.id == seek_id, SEEKS.c.status == "open", SEEKS.c.bot_offered_at.is_(None))
        .values(bot_offered_at=now)
    )
    return bool(result.rowcount == 1)


async def avoided(
    session: AsyncSession, player_ids: Sequence[str], since: datetime
) -> set[frozenset[str]]:
    """Pairs of these players who should not meet again yet: a challenge declined between
    them, or a lobby table between them that ended with no result (aborted), since ``since``."""
    ids = list(player_ids)
    declined = select(SEEKS.c.player_id, SEEKS.c.target_id).where(
        SEEKS.c.status == "declined",
        SEEKS.c.closed_at > since,
        or_(SEEKS.c.player_id.in_(ids), SEEKS.c.target_id.in_(ids)),
    )
    result = FINISHED.c.table_id == TABLES.c.id
    aborted = (
        select(SEEKS.c.player_id, SEEKS.c.opponent_id)
        .join(TABLES, TABLES.c.id == SEEKS.c.table_id)
        .where(
            SEEKS.c.player_id.in_(ids),
            SEEKS.c.status == "paired",
            SEEKS.c.opponent_id.is_not(None),
            SEEKS.c.closed_at > since,
            TABLES.c.status == "finished",
            ~sa.exists().where(result),
        )
    )
    pairs: set[frozenset[str]] = set()
    for query in (declined, aborted):
        for a, b in (await session.execute(query)).all():
            if a and b:
                pairs.add(frozenset((a, b)))
    return pairs


async def players_named(session: AsyncSession, name: str, limit: int = 2) -> list[tuple[str, str]]:
    """Players whose name is ``name`` in any case: (id, name)."""
    query = (
        select(PLAYERS.c.id, PLAYERS.c.name)
        .where(sa.func.lower(PLAYERS.c.name) == name.lower())
        .limit(limit)
    )
    return [(r.id, r.name) for r in (await session.execute(query)).all()]


async def player(session: AsyncSession, player_id: str) -> Any | None:
    query = select(PLAYERS.c.id, PLAYERS.c.name, PLAYERS.c.bot).where(PLAYERS.c.id == player_id)
    return (await session.execute(query)).one_or_none()


def mark_bot(conn: Connection, player_id: str) -> bool:
    """Mark a player as a bot account unless they ever sat at a table (True: marked now or
    before)."""
    seated = select(SEATS.c.table_id).where(SEATS.c.player_id == player_id).exists()
    result = conn.execute(
        update(PLAYERS).where(PLAYERS.c.id == player_id, ~seated).values(bot=True)
    )
    if result.rowcount == 1:
        return True
    return bool(conn.execute(select(PLAYERS.c.bot).where(PLAYERS.c.id == player_id)).scalar())
