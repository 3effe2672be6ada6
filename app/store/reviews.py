"""Hand reviews: read one, read a match's, keep a new one (once: a second writer's is dropped)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.db import Database
from app.store.models import Review


async def review_of(session: AsyncSession, table_id: str, match: int, hand: int) -> Review | None:
    return await session.get(Review, (table_id, match, hand))


async def reviews_of_match(session: AsyncSession, table_id: str, match: int) -> Sequence[Review]:
    """The match's reviewed hands, in hand order."""
    query = (
        select(Review)
        .where(Review.table_id == table_id, Review.match_number == match)
        .order_by(Review.hand_number)
    )
    return (await session.execute(query)).scalars().all()


async def reviews_of_tables(
    session: AsyncSession, keys: Sequence[tuple[str, int]]
) -> Sequence[Review]:
    """The reviewed hands of these (table, match) pairs."""
    if not keys:
        return []
    tables = sorted({t for t, _ in keys})
    rows = (await session.execute(select(Review).where(Review.table_id.in_(tables)))).scalars()
    wanted = set(keys)
    return [r for r in rows if (r.table_id, r.match_number) in wanted]


async def keep(
    db: Database,
    table_id: str,
    match: int,
    hand: int,
    *,
    samples: int,
    cpu_seconds: float,
    data: dict[str, Any],
    now: datetime,
) -> None:
    """Store a computed review; one already there (another process's) is kept instead."""
    try:
        async with db.write() as session:
            session.add(
                Review(
                    table_id=table_id,
                    match_number=match,
                    hand_number=hand,
                    samples=samples,
                    cpu_seconds=cpu_seconds,
                    data=data,
                    created_at=now,
                )
            )
    except IntegrityError:
        return
