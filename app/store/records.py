"""Reads behind match records: a finished match's row, its whole log, its players' names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import EventRow, FinishedMatch, Player
from app.store.tables import storable


async def finished_match(session: AsyncSession, table_id: str, match: int) -> FinishedMatch | None:
    if not storable(table_id):
        return None
    return await session.get(FinishedMatch, (table_id, match))


async def match_rows(session: AsyncSession, table_id: str, match: int) -> Sequence[EventRow]:
    """Every logged event of one match, oldest first (secret columns included)."""
    query = (
        select(EventRow)
        .where(EventRow.table_id == table_id, EventRow.match_number == match)
        .order_by(EventRow.seq)
    )
    return (await session.execute(query)).scalars().all()


async def names(session: AsyncSession, player_ids: Iterable[str | None]) -> dict[str, str]:
    """Player id -> name for the given ids (None skipped)."""
    ids = {p for p in player_ids if p}
    if not ids:
        return {}
    rows = await session.execute(select(Player.id, Player.name).where(Player.id.in_(ids)))
    return {row[0]: row[1] for row in rows}
