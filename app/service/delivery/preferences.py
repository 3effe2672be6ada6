"""A player's notification preferences: reminders, their webhook, its test, the deliveries."""

from __future__ import annotations

import time
import uuid
from datetime import datetime
from typing import Any

from app.errors import ConflictError, InvalidError
from app.service.delivery.webhooks import Targets, WebhookSender, check_target, new_secret
from app.store import Database
from app.store import outbox as store
from app.store.models import NotificationSettings
from app.table.time import utcnow


class Preferences:
    """A player's notification settings and deliveries, for the ``/v1/players/me`` routes."""

    def __init__(self, db: Database, targets: Targets, sender: WebhookSender) -> None:
        self.db = db
        self.targets = targets
        self.sender = sender

    async def get(self, player_id: str) -> dict[str, Any]:
        async with self.db.read() as session:
            row = await store.settings_of(session, player_id)
        return _settings_json(row)

    async def update(
        self, player_id: str, reminders: str | None, digest_hours: float | None
    ) -> dict[str, Any]:
        if reminders is not None and reminders not in store.REMINDERS:
            raise InvalidError("invalid_reminders", f"reminders is one of {store.REMINDERS}")
        async with self.db.write() as session:
            row = await store.settings_for_update(session, player_id)
            if reminders is not None:
                row.reminders = reminders
            if digest_hours is not None:
                row.digest_hours = digest_hours
            store.refresh_active(row)
            return _settings_json(row)

    async def set_webhook(self, player_id: str, url: str, rotate: bool) -> dict[str, Any]:
        """Register (or change) the player's webhook; its secret is new the first time or with
        ``rotate``, and is returned only here."""
        await check_target(url, self.targets)
        async with self.db.write() as session:
            row = await store.settings_for_update(session, player_id)
            row.webhook_url = url
            if rotate or row.webhook_secret is None:
                row.webhook_secret = new_secret()
            store.webhook_healthy(row)  # on, with no failures: a new start
            return {**_settings_json(row), "webhook_secret": row.webhook_secret}

    async def test_webhook(self, player_id: str) -> dict[str, Any]:
        """POST a signed ``ping`` to the player's webhook now (also when it is turned off) and
        say how it went; a success turns a webhook that was turned off back on."""
        async with self.db.read() as session:
            row = await store.settings_of(session, player_id)
            url, secret = (None, None) if row is None else (row.webhook_url, row.webhook_secret)
        if url is None or secret is None:
            raise ConflictError("no_webhook", "register a webhook first (PUT /webhook)")
        message_id = f"msg_ping_{uuid.uuid4().hex[:24]}"
        started = time.perf_counter()
        error: str | None = None
        try:
            await self.sender.post(url, secret, message_id, "ping", {"player_id": player_id})
        except Exception as exc:
            error = str(exc)[:500] or type(exc).__name__
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        if error is None:
            async with self.db.write() as session:
                await store.webhook_outcome(
                    session, player_id, ok=True, error=None, now=utcnow(), disable_after=None
                )
        return {
            "delivered": error is None,
            "message_id": message_id,
            "error": error,
            "elapsed_ms": elapsed,
        }

    async def delete_webhook(self, player_id: str) -> dict[str, Any]:
        async with self.db.write() as session:
            row = await store.settings_for_update(session, player_id)
            row.webhook_url = row.webhook_secret = None
            store.webhook_healthy(row)
            return _settings_json(row)

    async def deliveries(
        self, player_id: str, status: str | None, limit: int
    ) -> list[dict[str, Any]]:
        async with self.db.read() as session:
            rows = await store.deliveries(session, player_id, status, limit)
        return [
            {
                "message_id": r.message_id,
                "kind": r.kind,
                "table_id": r.table_id,
                "status": r.status,
                "attempts": r.attempts,
                "channels": r.channels_done,
                "created_at": r.created_at.isoformat(),
                "next_at": r.next_at.isoformat() if r.status == "pending" else None,
                "finished_at": None if r.finished_at is None else r.finished_at.isoformat(),
                "last_error": r.last_error,
                "data": r.payload,
            }
            for r in rows
        ]


def _settings_json(row: NotificationSettings | None) -> dict[str, Any]:
    if row is None:
        return {
            "reminders": "each_turn",
            "digest_hours": 24.0,
            "webhook_url": None,
            "push": False,
            "active": False,
            "webhook_failing_since": None,
            "webhook_error": None,
            "webhook_disabled_at": None,
        }
    return {
        "reminders": row.reminders,
        "digest_hours": row.digest_hours,
        "webhook_url": row.webhook_url,
        "push": row.push,
        "active": row.active,
        "webhook_failing_since": _iso(row.webhook_failing_since),
        "webhook_error": row.webhook_error,
        "webhook_disabled_at": _iso(row.webhook_disabled_at),
    }


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()
