"""Reads behind a player's statistics: the events of their finished matches that sum a hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import EventRow

# A hand's result, and the knock that ended it (its deadwood).
HAND_EVENTS = ("hand_over", "knocked")


async def hand_results(
    session: AsyncSession, matches: Sequence[tuple[str, int]]
) -> list[tuple[str, int, str, dict[str, Any]]]:
    """(table id, match number, type, public part) of each ``HAND_EVENTS`` event of these
    matches, in log order."""
    if not matches:
        return []
    wanted = set(matches)
    query = (
        select(EventRow.table_id, EventRow.match_number, EventRow.type, EventRow.data)
        .where(EventRow.table_id.in_(sorted({t for t, _ in matches})))
        .where(EventRow.type.in_(HAND_EVENTS))
        .order_by(EventRow.table_id, EventRow.seq)
    )
    return [
        (t, m, kind, data["public"])
        for t, m, kind, data in (await session.execute(query)).all()
        if (t, m) in wanted
    ]
