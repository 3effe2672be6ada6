"""Idempotency-Key responses expire: older than the TTL they are purged (a real SQLite file)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text

from app.service.pipeline import Idempotency, TableService


async def test_only_responses_older_than_the_ttl_are_purged(service: TableService) -> None:
    actor, _ = await service.create_player("Ada")
    old_key, new_key = Idempotency("old", "f1"), Idempotency("new", "f2")
    old = await service.create_table(actor, "standard", {}, idempotency=old_key)
    new = await service.create_table(actor, "standard", {}, idempotency=new_key)
    async with service.db.write() as session:
        await session.execute(
            text("UPDATE idempotency_keys SET created_at = '2000-01-01 00:00:00' WHERE key = 'old'")
        )

    assert await service.purge_idempotency_keys(timedelta(hours=24)) == 1

    # The fresh key still replays its first response; the purged one creates a new table.
    replay = await service.create_table(actor, "standard", {}, idempotency=new_key)
    assert replay.replayed and replay.body == new.body
    again = await service.create_table(actor, "standard", {}, idempotency=old_key)
    assert not again.replayed and again.body["table_id"] != old.body["table_id"]
    assert await service.purge_idempotency_keys(timedelta(hours=24)) == 0
