"""The players' Web Push subscriptions (``models.PushSubscription``), one row per endpoint."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.store.models import PushSubscription
from app.table.time import utcnow


async def upsert(
    session: AsyncSession,
    subscription_id: str,
    player_id: str,
    *,
    endpoint: str,
    p256dh: str,
    auth: str,
) -> PushSubscription:
    """Store the subscription of ``endpoint`` for ``player_id``; an endpoint already stored (the
    same browser subscribing again, maybe as another player) keeps its id and takes the new
    player and keys. One statement: two processes storing one endpoint at once both succeed."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    values = insert(PushSubscription).values(
        id=subscription_id,
        player_id=player_id,
        endpoint=endpoint,
        p256dh=p256dh,
        auth=auth,
        created_at=utcnow(),
    )
    statement = values.on_conflict_do_update(
        index_elements=[PushSubscription.endpoint],
        set_={"player_id": player_id, "p256dh": p256dh, "auth": auth},
    ).returning(PushSubscription)
    result = await session.execute(statement, execution_options={"populate_existing": True})
    row: PushSubscription = result.scalar_one()
    return row


async def owner(session: AsyncSession, endpoint: str) -> str | None:
    """The player the subscription of ``endpoint`` belongs to, if it is stored."""
    found = await session.scalar(
        select(PushSubscription.player_id).where(PushSubscription.endpoint == endpoint)
    )
    return None if found is None else str(found)


async def of_player(session: AsyncSession, player_id: str) -> list[PushSubscription]:
    """The player's subscriptions, oldest first."""
    rows = await session.execute(
        select(PushSubscription)
        .where(PushSubscription.player_id == player_id)
        .order_by(PushSubscription.created_at, PushSubscription.id)
    )
    return list(rows.scalars())


async def remove(session: AsyncSession, player_id: str, subscription_id: str) -> bool:
    """Delete the player's subscription ``subscription_id``; False when they have no such one."""
    if len(subscription_id) > 32 or "\x00" in subscription_id:
        return False
    row = (
        await session.execute(
            delete(PushSubscription)
            .where(PushSubscription.id == subscription_id, PushSubscription.player_id == player_id)
            .returning(PushSubscription.id)
        )
    ).first()
    return row is not None


async def remove_ids(session: AsyncSession, subscription_ids: Sequence[str]) -> None:
    """Delete these subscriptions (the push service said they are gone)."""
    await session.execute(delete(PushSubscription).where(PushSubscription.id.in_(subscription_ids)))


async def trim(session: AsyncSession, player_id: str, keep: int) -> None:
    """Delete the player's oldest subscriptions beyond the newest ``keep``."""
    rows = await of_player(session, player_id)
    if len(rows) > keep:
        await remove_ids(session, [r.id for r in rows[: len(rows) - keep]])
