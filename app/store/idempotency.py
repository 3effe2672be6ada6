"""Idempotency: responses kept under a client's Idempotency-Key, replayed for a retry."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import Connection, delete, insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import IdempotencyKey
from app.table.time import utcnow


async def idempotent_response(
    session: AsyncSession, player_id: str, key: str
) -> IdempotencyKey | None:
    return await session.get(IdempotencyKey, (player_id, key))


def save_idempotent(
    conn: Connection,
    player_id: str,
    key: str,
    *,
    fingerprint: str,
    status_code: int,
    body: dict[str, Any],
) -> None:
    """Keep a response under its key (IntegrityError when the key is already taken)."""
    conn.execute(
        insert(cast(sa.Table, IdempotencyKey.__table__)),
        {
            "player_id": player_id,
            "key": key,
            "fingerprint": fingerprint,
            "status_code": status_code,
            "body": body,
            "created_at": utcnow(),
        },
    )


async def purge_idempotent(session: AsyncSession, before: datetime) -> int:
    """Forget the responses saved under Idempotency-Keys before ``before``; how many."""
    result = await session.execute(
        delete(IdempotencyKey)
        .where(IdempotencyKey.created_at < before)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0))
