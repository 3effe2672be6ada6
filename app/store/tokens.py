"""A player's bearer tokens: only each token's SHA-256 is stored (``models.Token``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, String, bindparam, delete, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.base import UTCDateTime
from app.store.db import Database
from app.store.models import Player, Token
from app.table.time import utcnow

# ``resolve``: a token's player and whether it is live, a live one's use recorded, in one
# statement (no transaction): an unknown or expired token costs one read too.
_RESOLVE = """
UPDATE tokens SET last_used_at = CASE
    WHEN expires_at IS NULL OR expires_at > {now} THEN {now} ELSE last_used_at END
WHERE token_hash = {digest}
RETURNING player_id, (SELECT name FROM players WHERE players.id = tokens.player_id), expires_at
"""
_RESOLVE_PG = _RESOLVE.format(digest="$1", now="$2")
_RESOLVE_CORE = (
    text(_RESOLVE.format(digest=":digest", now=":now"))
    .bindparams(bindparam("now", type_=UTCDateTime()))
    .columns(player_id=String(), name=String(), expires_at=UTCDateTime())
)


@dataclass(frozen=True, slots=True)
class Resolved:
    """What ``resolve`` found for a token: its player, its expiry, whether it is live."""

    player_id: str
    name: str
    expires_at: datetime | None
    live: bool


async def add(
    session: AsyncSession,
    token_id: str,
    player_id: str,
    token_hash: str,
    *,
    label: str | None = None,
    expires_at: datetime | None = None,
) -> Token:
    token = Token(
        id=token_id,
        player_id=player_id,
        token_hash=token_hash,
        label=label,
        created_at=utcnow(),
        expires_at=expires_at,
    )
    session.add(token)
    return token


async def by_hash(session: AsyncSession, token_hash: str) -> tuple[Token, Player] | None:
    """The token with this hash and its player (expired or not: the caller decides)."""
    row = (
        await session.execute(
            select(Token, Player)
            .join(Player, Player.id == Token.player_id)
            .where(Token.token_hash == token_hash)
        )
    ).first()
    return None if row is None else (row[0], row[1])


async def resolve(db: Database, token_hash: str, now: datetime) -> Resolved | None:
    """The token with this hash (``live`` unless it expired by ``now``), a live one's
    ``last_used_at`` set to ``now``; None for a token unknown or revoked.

    One statement: on PostgreSQL straight on the driver (one round trip), on SQLite in one
    write transaction. A token is resolved afresh per process every ``token_cache_seconds``.
    """
    row: Any
    if db.is_sqlite:

        def work(conn: Connection) -> Any:
            return conn.execute(_RESOLVE_CORE, {"digest": token_hash, "now": now}).first()

        row = await db.transact(work)
    else:
        row = await db.fetchrow_driver(_RESOLVE_PG, token_hash, now)
    if row is None:
        return None
    # Live or not is decided here, on the expiry the statement returned, with the same ``now``
    # (SQLite 3.40 evaluates ``expires_at IS NULL`` in this RETURNING clause as false).
    expires_at: datetime | None = row[2]
    return Resolved(str(row[0]), str(row[1]), expires_at, expires_at is None or expires_at > now)


async def of_player(session: AsyncSession, player_id: str) -> list[Token]:
    """The player's tokens, oldest first."""
    rows = await session.execute(
        select(Token).where(Token.player_id == player_id).order_by(Token.created_at, Token.id)
    )
    return list(rows.scalars())


async def used(session: AsyncSession, token_id: str, when: datetime) -> None:
    await session.execute(update(Token).where(Token.id == token_id).values(last_used_at=when))


async def remove(session: AsyncSession, player_id: str, token_id: str) -> str | None:
    """Delete the player's token ``token_id``; its hash, or None when they have no such token."""
    if len(token_id) > 32 or "\x00" in token_id:
        return None
    row = (
        await session.execute(
            delete(Token)
            .where(Token.id == token_id, Token.player_id == player_id)
            .returning(Token.token_hash)
        )
    ).first()
    return None if row is None else str(row[0])
