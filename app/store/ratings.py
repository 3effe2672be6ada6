"""Ratings: read and write each player's rating per category, its changes, the leaderboard.

The writes run on the connection of a table's commit (``commits.commit``): a finished rated
match and the ratings it moves are one transaction. ``ratings_for_update`` locks the players'
rows on PostgreSQL (SQLite's writer already holds the database), so two matches of the same
player ending at once in two processes apply one after the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import Connection, func, insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.store.models import FinishedMatch, Player, Rating, RatingChange

_RATINGS = cast(sa.Table, Rating.__table__)
_CHANGES = cast(sa.Table, RatingChange.__table__)


def ratings_for_update(
    conn: Connection, player_ids: Sequence[str], category: str
) -> dict[str, Any]:
    """The current rating rows of these players in ``category`` (absent: never rated), locked
    for this transaction in id order."""
    rows = conn.execute(
        select(_RATINGS)
        .where(_RATINGS.c.player_id.in_(sorted(player_ids)), _RATINGS.c.category == category)
        .order_by(_RATINGS.c.player_id)
        .with_for_update()
    ).all()
    return {row.player_id: row for row in rows}


def save_rating(conn: Connection, values: dict[str, Any], *, exists: bool) -> None:
    """Insert or update one player's rating row (``values`` has every column)."""
    if exists:
        conn.execute(
            update(_RATINGS).where(
                _RATINGS.c.player_id == values["player_id"],
                _RATINGS.c.category == values["category"],
            ),
            values,
        )
    else:
        conn.execute(insert(_RATINGS), values)


def add_change(conn: Connection, values: dict[str, Any]) -> None:
    """Record one match's change to one player's rating; IntegrityError if already there."""
    conn.execute(insert(_CHANGES), values)


async def player(session: AsyncSession, player_id: str) -> Player | None:
    return await session.get(Player, player_id)


async def ratings_of(session: AsyncSession, player_id: str) -> Sequence[Rating]:
    query = select(Rating).where(Rating.player_id == player_id).order_by(Rating.category)
    return (await session.execute(query)).scalars().all()


async def changes_of(
    session: AsyncSession, player_id: str, limit: int | None
) -> Sequence[RatingChange]:
    """The player's rating changes, newest first (at most ``limit``)."""
    query = (
        select(RatingChange)
        .where(RatingChange.player_id == player_id)
        .order_by(RatingChange.created_at.desc())
        .limit(limit)
    )
    return (await session.execute(query)).scalars().all()


async def changes_in(
    session: AsyncSession, player_id: str, matches: Sequence[tuple[str, int]]
) -> Sequence[RatingChange]:
    """The player's rating changes in the given (table id, match number) matches, by their
    keys."""
    if not matches:
        return []
    query = select(RatingChange).where(
        RatingChange.player_id == player_id,
        tuple_(RatingChange.table_id, RatingChange.match_number).in_(matches),
    )
    return (await session.execute(query)).scalars().all()


async def record_of(session: AsyncSession, player_id: str) -> tuple[int, int]:
    """(won, lost) over the player's finished matches, rated or not: four counts, each on a
    seat's ``ix_finished_matches_seat*_record`` alone (its entries, never the rows)."""
    counts = []
    for seat, column in enumerate((FinishedMatch.seat0_player_id, FinishedMatch.seat1_player_id)):
        mine = select(func.count()).where(column == player_id)
        counts += [
            mine.scalar_subquery(),
            mine.where(FinishedMatch.winner == seat).scalar_subquery(),
        ]
    total0, won0, total1, won1 = counts
    row = (await session.execute(select(total0 + total1, won0 + won1))).one()
    total, wins = int(row[0]), int(row[1])
    return wins, total - wins


async def leaderboard(
    session: AsyncSession,
    category: str,
    *,
    max_deviation: float,
    since: datetime,
    offset: int,
    limit: int,
    after: tuple[float, str] | None = None,
) -> list[tuple[Rating, str]]:
    """One page of the category's settled and recently active players, best first (by rating,
    then player id), with their names: ``offset`` entries skipped, or those after the entry
    (rating, player id) ``after`` (a keyset: no entry before it is walked). The page is found
    on ``ix_ratings_leaderboard`` alone, walked backwards (it holds the filter's columns too),
    and only its rows are joined to their players."""
    ranked = select(Rating).where(
        Rating.category == category,
        Rating.deviation <= max_deviation,
        Rating.last_played_at >= since,
    )
    if after is not None:
        ranked = ranked.where(tuple_(Rating.rating, Rating.player_id) < tuple_(*after))
    page = (
        ranked.order_by(Rating.rating.desc(), Rating.player_id.desc())
        .offset(offset)
        .limit(limit)
        .subquery()
    )
    row = aliased(Rating, page)
    query = (
        select(row, Player.name)
        .join(Player, Player.id == row.player_id)
        .order_by(row.rating.desc(), row.player_id.desc())
    )
    return [(row[0], row[1]) for row in await session.execute(query)]
