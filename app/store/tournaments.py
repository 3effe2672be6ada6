"""Tournaments: their rows, entrants and pairings, and the scheduler's lease of each.

The scheduler's writes are pinned to its lease: a round (or an arena's batch of pairings) is
inserted in the transaction of one conditional UPDATE that moves ``tournaments.round`` from the
round it saw to the next, and only while the writer holds the lease. Two schedulers can then
never pair the same round twice, nor a dead one's last pairing go missing (it is in the database
with its table's id before any table is made).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.store.models import (
    FinishedMatch,
    Player,
    Rating,
    Tournament,
    TournamentEntrant,
    TournamentPairing,
)
from app.store.tables import storable

TOURNAMENTS = cast(sa.Table, Tournament.__table__)
ENTRANTS = cast(sa.Table, TournamentEntrant.__table__)
PAIRINGS = cast(sa.Table, TournamentPairing.__table__)
ACTIVE = ("upcoming", "running")


def values_of(row: Tournament) -> dict[str, Any]:
    """A tournament's row as plain values, by column."""
    return {c.key: getattr(row, c.key) for c in TOURNAMENTS.columns}


async def add(session: AsyncSession, values: dict[str, Any]) -> None:
    await session.execute(insert(TOURNAMENTS), values)


async def get(session: AsyncSession, tournament_id: str) -> Tournament | None:
    if not storable(tournament_id):
        return None
    return await session.get(Tournament, tournament_id, populate_existing=True)


async def get_for_update(session: AsyncSession, tournament_id: str) -> Tournament | None:
    """The row, locked until the transaction ends (PostgreSQL; SQLite serialises writes)."""
    if not storable(tournament_id):
        return None
    query = select(Tournament).where(Tournament.id == tournament_id).with_for_update()
    return (
        await session.execute(query.execution_options(populate_existing=True))
    ).scalar_one_or_none()


async def listing(
    session: AsyncSession, status: str, offset: int, limit: int
) -> Sequence[Tournament]:
    """Tournaments of one status: upcoming soonest first, the others latest first."""
    order = Tournament.starts_at if status == "upcoming" else Tournament.starts_at.desc()
    query = (
        select(Tournament)
        .where(Tournament.status == status, Tournament.format != "ladder")  # the bot ladder's own
        .order_by(order, Tournament.id)
    )
    return (await session.execute(query.offset(offset).limit(limit))).scalars().all()


async def open_by(session: AsyncSession, organiser_id: str) -> int:
    """How many tournaments not finished the player organises."""
    query = select(func.count()).where(
        Tournament.organiser_id == organiser_id, Tournament.status.in_(ACTIVE)
    )
    return int((await session.execute(query)).scalar_one())


async def entrants(session: AsyncSession, tournament_id: str) -> Sequence[TournamentEntrant]:
    query = (
        select(TournamentEntrant)
        .where(TournamentEntrant.tournament_id == tournament_id)
        .order_by(TournamentEntrant.joined_at, TournamentEntrant.entrant_id)
        .execution_options(populate_existing=True)
    )
    return (await session.execute(query)).scalars().all()


async def counts(session: AsyncSession, ids: Sequence[str]) -> dict[str, int]:
    """Each tournament's entrants not withdrawn."""
    query = (
        select(TournamentEntrant.tournament_id, func.count())
        .where(TournamentEntrant.tournament_id.in_(ids), TournamentEntrant.withdrawn.is_(False))
        .group_by(TournamentEntrant.tournament_id)
    )
    return {t: int(n) for t, n in (await session.execute(query)).all()}


async def pairings(session: AsyncSession, tournament_id: str) -> Sequence[TournamentPairing]:
    query = (
        select(TournamentPairing)
        .where(TournamentPairing.tournament_id == tournament_id)
        .order_by(TournamentPairing.number)
        .execution_options(populate_existing=True)
    )
    return (await session.execute(query)).scalars().all()


async def add_entrant(session: AsyncSession, values: dict[str, Any]) -> None:
    await session.execute(insert(ENTRANTS), values)


async def set_entrant(
    session: AsyncSession, tournament_id: str, entrant_id: str, **values: Any
) -> bool:
    result = await session.execute(
        update(ENTRANTS)
        .where(ENTRANTS.c.tournament_id == tournament_id, ENTRANTS.c.entrant_id == entrant_id)
        .values(**values)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


async def due(session: AsyncSession | AsyncConnection, now: datetime) -> list[str]:
    """Tournaments a scheduler has work in: running, or upcoming and due to start (by time;
    one the organiser started early is running already), whose lease is free or expired."""
    query = select(TOURNAMENTS.c.id, TOURNAMENTS.c.lease_owner).where(
        or_(
            TOURNAMENTS.c.status == "running",
            (TOURNAMENTS.c.status == "upcoming") & (TOURNAMENTS.c.starts_at <= now),
        )
    )
    return [row.id for row in (await session.execute(query)).all()]


async def claim(
    session: AsyncSession, tournament_id: str, owner: str, now: datetime, until: datetime
) -> bool:
    """Take or renew the scheduler's lease of a tournament not finished (one conditional
    UPDATE, as ``leases.claim_bot_seat``)."""
    result = await session.execute(
        update(TOURNAMENTS)
        .where(
            TOURNAMENTS.c.id == tournament_id,
            TOURNAMENTS.c.status.in_(ACTIVE),
            or_(
                TOURNAMENTS.c.lease_owner.is_(None),
                TOURNAMENTS.c.lease_owner == owner,
                TOURNAMENTS.c.lease_until < now,
            ),
        )
        .values(lease_owner=owner, lease_until=until)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


async def release(session: AsyncSession, owner: str) -> None:
    await session.execute(
        update(TOURNAMENTS)
        .where(TOURNAMENTS.c.lease_owner == owner)
        .values(lease_owner=None, lease_until=None)
    )


async def advance(
    session: AsyncSession,
    tournament_id: str,
    owner: str | None,
    seen_round: int,
    values: dict[str, Any],
) -> bool:
    """Move the tournament on from ``seen_round`` (``values``: the new ``round``, status...)
    if it is still there and ``owner`` holds its lease (None: the organiser's own request,
    which no scheduler lease stops but the round guard still orders); False otherwise."""
    query = update(TOURNAMENTS).where(
        TOURNAMENTS.c.id == tournament_id, TOURNAMENTS.c.round == seen_round
    )
    if owner is not None:
        query = query.where(TOURNAMENTS.c.lease_owner == owner)
    result = await session.execute(query.values(**values))
    return bool(getattr(result, "rowcount", 0) == 1)


async def next_number(session: AsyncSession, tournament_id: str) -> int:
    query = select(func.coalesce(func.max(PAIRINGS.c.number), 0)).where(
        PAIRINGS.c.tournament_id == tournament_id
    )
    return int((await session.execute(query)).scalar_one()) + 1


async def add_pairings(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await session.execute(insert(PAIRINGS), rows)


async def settle(
    session: AsyncSession,
    tournament_id: str,
    number: int,
    *,
    status: str,
    winner: str | None,
    now: datetime,
) -> bool:
    """Record a pairing's result, once: only a pairing still being played takes one."""
    result = await session.execute(
        update(PAIRINGS)
        .where(
            PAIRINGS.c.tournament_id == tournament_id,
            PAIRINGS.c.number == number,
            PAIRINGS.c.status == "playing",
        )
        .values(status=status, winner=winner, finished_at=now)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


async def entered(session: AsyncSession, player_id: str) -> list[str]:
    """The tournaments not finished the player is entered in (not withdrawn)."""
    query = (
        select(TournamentEntrant.tournament_id)
        .join(Tournament, Tournament.id == TournamentEntrant.tournament_id)
        .where(
            TournamentEntrant.player_id == player_id,
            TournamentEntrant.withdrawn.is_(False),
            Tournament.status.in_(ACTIVE),
        )
    )
    return list((await session.execute(query)).scalars().all())


async def rating_row(session: AsyncSession, player_id: str, category: str) -> Rating | None:
    """The player's stored rating in ``category`` (None: never rated)."""
    query = select(Rating).where(Rating.player_id == player_id, Rating.category == category)
    return (await session.execute(query)).scalar_one_or_none()


async def finished_results(session: AsyncSession, table_ids: Sequence[str]) -> dict[str, int]:
    """The winning seat of the first match of each of these tables that has finished."""
    if not table_ids:
        return {}
    query = select(FinishedMatch.table_id, FinishedMatch.winner).where(
        FinishedMatch.table_id.in_(table_ids), FinishedMatch.match_number == 1
    )
    return {t: int(w) for t, w in (await session.execute(query)).all()}


async def player_name(session: AsyncSession, player_id: str) -> str | None:
    return (
        await session.execute(select(Player.name).where(Player.id == player_id))
    ).scalar_one_or_none()


async def is_bot(session: AsyncSession, player_id: str) -> bool:
    """Whether the player is a bot account (``players.bot``)."""
    query = select(Player.bot).where(Player.id == player_id)
    return bool((await session.execute(query)).scalar())
