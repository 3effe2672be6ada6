"""The bot ladder's rows: a standing tournament (``LADDER_ID``, format ``ladder``) whose
entrants are the bot accounts that said they are available, and the built-in levels as anchors.

Its scheduler is the tournaments' (``app.service.workers.tournaments``), under the same lease
(``store.tournaments.claim``); a bot account is available while ``available_until`` is ahead.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import (
    FinishedMatch,
    Rating,
    Table,
    TournamentEntrant,
    TournamentPairing,
)
from app.store.tournaments import ENTRANTS, TOURNAMENTS

LADDER_ID = "ladder"


async def ensure(
    session: AsyncSession, values: dict[str, Any], anchors: list[dict[str, Any]]
) -> None:
    """Make the ladder's row and its anchors unless they exist (concurrent callers: one wins)."""
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    await session.execute(insert(TOURNAMENTS).values(values).on_conflict_do_nothing())
    for anchor in anchors:
        await session.execute(insert(ENTRANTS).values(anchor).on_conflict_do_nothing())


async def entry(session: AsyncSession, player_id: str) -> TournamentEntrant | None:
    return await session.get(TournamentEntrant, (LADDER_ID, player_id), populate_existing=True)


async def available(session: AsyncSession, now: datetime) -> Sequence[TournamentEntrant]:
    """The bot accounts available now, first come first."""
    query = (
        select(TournamentEntrant)
        .where(
            TournamentEntrant.tournament_id == LADDER_ID,
            TournamentEntrant.player_id.is_not(None),
            TournamentEntrant.available_until > now,
        )
        .order_by(TournamentEntrant.joined_at, TournamentEntrant.entrant_id)
    )
    return (await session.execute(query)).scalars().all()


async def games(session: AsyncSession) -> dict[str, int]:
    """Ladder matches finished, per entrant."""
    counts: dict[str, int] = {}
    for column in (TournamentPairing.seat0, TournamentPairing.seat1):
        query = (
            select(column, func.count())
            .where(
                TournamentPairing.tournament_id == LADDER_ID,
                TournamentPairing.status == "finished",
            )
            .group_by(column)
        )
        for entrant, n in (await session.execute(query)).all():
            if entrant is not None:
                counts[entrant] = counts.get(entrant, 0) + int(n)
    return counts


async def ratings(
    session: AsyncSession, player_ids: Sequence[str], category: str
) -> dict[str, Rating]:
    if not player_ids:
        return {}
    query = select(Rating).where(Rating.player_id.in_(player_ids), Rating.category == category)
    return {r.player_id: r for r in (await session.execute(query)).scalars().all()}


async def ended_unrecorded(session: AsyncSession, table_ids: Sequence[str]) -> list[str]:
    """Of these tables, those whose match ended without a finished match (aborted: a seat's
    time ran out before its first move), so their pairing takes no result."""
    if not table_ids:
        return []
    recorded = select(FinishedMatch.table_id).where(FinishedMatch.table_id.in_(table_ids))
    query = select(Table.id).where(
        Table.id.in_(table_ids), Table.status == "finished", Table.id.not_in(recorded)
    )
    return list((await session.execute(query)).scalars().all())


async def playing_at(session: AsyncSession, entrant_id: str) -> str | None:
    """The ladder table the entrant plays at now (None: idle)."""
    query = select(TournamentPairing.table_id).where(
        TournamentPairing.tournament_id == LADDER_ID,
        TournamentPairing.status == "playing",
        (TournamentPairing.seat0 == entrant_id) | (TournamentPairing.seat1 == entrant_id),
    )
    return (await session.execute(query.limit(1))).scalar_one_or_none()


async def current(session: AsyncSession) -> list[TournamentPairing]:
    """The ladder's pairings a look needs, whatever its history: those being played and each
    entrant's latest (its last opponent), in order."""
    latest: set[int] = set()
    for column in (TournamentPairing.seat0, TournamentPairing.seat1):
        highest = (
            select(func.max(TournamentPairing.number))
            .where(TournamentPairing.tournament_id == LADDER_ID, column.is_not(None))
            .group_by(column)
        )
        latest |= {int(n) for n in (await session.execute(highest)).scalars().all()}
    query = (
        select(TournamentPairing)
        .where(
            TournamentPairing.tournament_id == LADDER_ID,
            (TournamentPairing.status == "playing") | TournamentPairing.number.in_(latest),
        )
        .order_by(TournamentPairing.number)
        .execution_options(populate_existing=True)
    )
    return list((await session.execute(query)).scalars().all())
