"""The event log and the finished matches, as read back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, tuple_, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.engine import Event
from app.store.models import EventRow, FinishedMatch, Player
from app.table.model import StoredEvent


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


async def match_events(session: AsyncSession, table_id: str, match: int) -> list[StoredEvent]:
    """The logged events of one match so far (every hand), oldest first."""
    query = select(EventRow).where(EventRow.table_id == table_id, EventRow.match_number == match)
    rows = (await session.execute(query.order_by(EventRow.seq))).scalars().all()
    return [_stored(r) for r in rows]


async def hand_rows(
    session: AsyncSession, table_id: str, match: int, hand: int
) -> Sequence[EventRow]:
    """Every logged event of one hand, oldest first (secret columns included)."""
    query = select(EventRow).where(
        EventRow.table_id == table_id, EventRow.match_number == match, EventRow.hand_number == hand
    )
    return (await session.execute(query.order_by(EventRow.seq))).scalars().all()


def _order(match: Any) -> tuple[Any, Any, Any]:
    """What orders a player's finished matches, of a row or of the model (or an alias of it)."""
    return (match.finished_at, match.table_id, match.match_number)


def _newest_first(match: Any) -> list[Any]:
    return [column.desc() for column in _order(match)]


async def finished_matches(
    session: AsyncSession,
    player_id: str,
    *,
    limit: int | None = None,
    before: FinishedMatch | None = None,
) -> list[tuple[FinishedMatch, dict[int, Player]]]:
    """The player's finished matches, newest first (by finish time, then table id and match
    number, so the order is total), with both seats' players: at most ``limit``, and only those
    after ``before`` in that order (a keyset page). Each seat is walked on its own index,
    (seat's player, finished at, table id, match number), from ``before`` on: a page reads its
    own rows, however many matches the player has."""
    sides = []
    for seat in (FinishedMatch.seat0_player_id, FinishedMatch.seat1_player_id):
        side = select(FinishedMatch).where(seat == player_id)
        if before is not None:
            side = side.where(tuple_(*_order(FinishedMatch)) < tuple_(*_order(before)))
        sides.append(select(side.order_by(*_newest_first(FinishedMatch)).limit(limit).subquery()))
    match = aliased(FinishedMatch, union_all(*sides).subquery())
    query = select(match).order_by(*_newest_first(match)).limit(limit)
    matches = (await session.execute(query)).scalars().all()
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
