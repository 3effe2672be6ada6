"""The channels a notification goes out on: a player's webhook, their Web Push subscriptions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Row

from app.service.delivery.webhooks import WebhookSender
from app.store.models import NotificationSettings


@dataclass(frozen=True, slots=True)
class Recipient:
    """A player's channels, as read when their lease was taken."""

    player_id: str
    reminders: str
    digest_hours: float
    webhook_url: str | None
    webhook_secret: str | None
    push: bool
    last_digest_at: datetime | None
    webhook_disabled: bool = False
    webhook_failing: bool = False  # failing since, or turned off: a success is news

    @staticmethod
    def of(row: NotificationSettings | Row[Any]) -> Recipient:
        """From the ORM row or a Core row of ``notification_settings`` (the claim's)."""
        return Recipient(
            row.player_id,
            row.reminders,
            row.digest_hours,
            row.webhook_url,
            row.webhook_secret,
            row.push,
            row.last_digest_at,
            row.webhook_disabled_at is not None,
            row.webhook_failing_since is not None or row.webhook_disabled_at is not None,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One notification on its way to a channel. ``data`` is what the player is told (with
    ``table_id``); ``message_id`` is the same on every retry."""

    message_id: str
    player_id: str
    kind: str
    data: dict[str, Any]
    created_at: datetime
    recipient: Recipient = field(compare=False)


class Channel(Protocol):
    """A way to reach a player. ``deliver`` raises (any exception) for a try to be retried."""

    name: str

    def wants(self, recipient: Recipient) -> bool:
        """Whether the player has this channel set up."""
        ...

    async def deliver(self, player_id: str, note: Message) -> None: ...


class WebhookChannel:
    """The player's webhook (``app.service.delivery.webhooks``)."""

    name = "webhook"

    def __init__(self, sender: WebhookSender) -> None:
        self.sender = sender

    def wants(self, recipient: Recipient) -> bool:
        return bool(recipient.webhook_url and recipient.webhook_secret) and not (
            recipient.webhook_disabled
        )

    async def deliver(self, player_id: str, note: Message) -> None:
        recipient = note.recipient
        assert recipient.webhook_url is not None and recipient.webhook_secret is not None
        await self.sender.post(
            recipient.webhook_url, recipient.webhook_secret, note.message_id, note.kind, note.data
        )


class PushDeliverer(Protocol):
    """What ``app.service.delivery.webpush.WebPushChannel`` offers: deliver one message to every
    push subscription of the player (dropping expired ones), raising for a try to be retried."""

    async def deliver(self, player_id: str, kind: str, payload: dict[str, Any]) -> None: ...


class PushChannel:
    """Web Push as a channel: adapts ``WebPushChannel.deliver(player_id, kind, payload)``.

    The hook for the Web Push side: build one with its ``WebPushChannel`` and pass it in
    ``Dispatcher(channels=...)`` (``app.main``); a subscription sets the player's ``push``
    flag with ``outbox.set_push_channel`` so their notes are written for it.
    """

    name = "webpush"

    def __init__(self, push: PushDeliverer) -> None:
        self.push = push

    def wants(self, recipient: Recipient) -> bool:
        return recipient.push

    async def deliver(self, player_id: str, note: Message) -> None:
        await self.push.deliver(player_id, note.kind, note.data)
