"""Notifications to a player who is away (docs/notifications.md): reminder choice, webhook, and
the list of deliveries (with the failed ones and why)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import CurrentActor
from app.api.http.schemas.common import Body, error_responses
from app.service.delivery.preferences import Preferences

router = APIRouter(prefix="/v1/players/me", tags=["notifications"], route_class=StrictJSONRoute)


def get_preferences(request: Request) -> Preferences:
    preferences: Preferences = request.app.state.preferences
    return preferences


PreferencesDep = Annotated[Preferences, Depends(get_preferences)]


class NotificationSettingsOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "reminders": "each_turn",
                    "digest_hours": 24.0,
                    "webhook_url": "https://bots.example.com/ginrummy",
                    "push": False,
                    "active": True,
                    "webhook_failing_since": None,
                    "webhook_error": None,
                    "webhook_disabled_at": None,
                }
            ]
        }
    )

    reminders: Literal["each_turn", "digest", "none"] = Field(
        description="each_turn: every your_turn; digest: one your_turn_digest per digest_hours; "
        "none: no your_turn (other notifications still go)"
    )
    digest_hours: float
    webhook_url: str | None
    push: bool = Field(description="the player has Web Push subscriptions")
    active: bool = Field(description="the player has a channel: notifications are written")
    webhook_failing_since: str | None = Field(
        description="every try of the webhook has failed since then (null after a success)"
    )
    webhook_error: str | None = Field(description="the webhook's last failure while failing")
    webhook_disabled_at: str | None = Field(
        description="the webhook was turned off then, after failing for "
        "NOTIFY_WEBHOOK_DISABLE_SECONDS; PUT /webhook or a test ping that succeeds turns it on"
    )


class NotificationSettingsIn(Body):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"reminders": "digest", "digest_hours": 6}]}
    )

    reminders: Literal["each_turn", "digest", "none"] | None = None
    digest_hours: float | None = Field(default=None, ge=0.25, le=24 * 7)


class WebhookIn(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"url": "https://bots.example.com/ginrummy"}]},
    )

    url: str = Field(min_length=1, max_length=2000)
    rotate_secret: bool = Field(
        default=False, description="issue a new secret (the first registration always does)"
    )


class WebhookOut(NotificationSettingsOut):
    webhook_secret: str = Field(
        description="the Standard Webhooks signing secret (whsec_ + base64); shown only here"
    )


class WebhookTestOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "delivered": False,
                    "message_id": "msg_ping_5f0c2b1e9d8a4c7b6e3f2a1d",
                    "error": "HTTP 503",
                    "elapsed_ms": 41.7,
                }
            ]
        }
    )

    delivered: bool = Field(description="the webhook answered 2xx")
    message_id: str = Field(description="the ping's webhook-id")
    error: str | None = Field(description="why it was not delivered")
    elapsed_ms: float


class DeliveryOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "message_id": "msg_ee89cc6ce1a35f7ec7aa5d5e",
                    "kind": "opponent_joined",
                    "table_id": "acb4c8970e8d4e45a99dfa68c2f6a9df",
                    "status": "failed",
                    "attempts": 21,
                    "channels": [],
                    "created_at": "2026-11-30T16:45:15.416862+00:00",
                    "next_at": None,
                    "finished_at": "2026-12-01T16:45:16.002113+00:00",
                    "last_error": "webhook: HTTP 503",
                    "data": {"player": {"id": "3cfe9fcbf9b04ea8848383fa915650d9", "name": "Bo"}},
                }
            ]
        }
    )

    message_id: str = Field(description="the webhook-id header: the same on every retry")
    kind: str
    table_id: str | None
    status: Literal["pending", "delivered", "failed", "digested", "skipped", "stale"]
    attempts: int
    channels: list[str] = Field(description="the channels that have it")
    created_at: str
    next_at: str | None = Field(description="when a pending one is tried (again)")
    finished_at: str | None
    last_error: str | None
    data: dict[str, Any]


@router.get(
    "/notifications", response_model=NotificationSettingsOut, responses=error_responses(401)
)
async def notification_settings(actor: CurrentActor, preferences: PreferencesDep) -> dict[str, Any]:
    """Your reminder choice and channels."""
    return await preferences.get(actor.player_id)


@router.put(
    "/notifications",
    response_model=NotificationSettingsOut,
    responses=error_responses(401, 413, 422),
)
async def update_notification_settings(
    body: NotificationSettingsIn, actor: CurrentActor, preferences: PreferencesDep
) -> dict[str, Any]:
    """Choose reminders: ``each_turn``, ``digest`` (every ``digest_hours``) or ``none``."""
    return await preferences.update(actor.player_id, body.reminders, body.digest_hours)


@router.put("/webhook", response_model=WebhookOut, responses=error_responses(401, 413, 422))
async def set_webhook(
    body: WebhookIn, actor: CurrentActor, preferences: PreferencesDep
) -> dict[str, Any]:
    """Register your webhook: an https URL whose host resolves only to public addresses (422
    ``webhook_url_refused`` otherwise). Notifications are POSTed to it signed as Standard
    Webhooks says, with the secret in this answer."""
    return await preferences.set_webhook(actor.player_id, body.url, body.rotate_secret)


@router.delete("/webhook", response_model=NotificationSettingsOut, responses=error_responses(401))
async def delete_webhook(actor: CurrentActor, preferences: PreferencesDep) -> dict[str, Any]:
    """Stop webhooks; notifications written before still go to your other channels."""
    return await preferences.delete_webhook(actor.player_id)


@router.post("/webhook/test", response_model=WebhookTestOut, responses=error_responses(401, 409))
async def test_webhook(actor: CurrentActor, preferences: PreferencesDep) -> dict[str, Any]:
    """POST a signed ``ping`` (``{"type": "ping", "data": {"player_id"}}``) to your webhook now
    and say whether it answered 2xx; 409 ``no_webhook`` without one. A ping that succeeds turns
    a webhook that was turned off for failing back on."""
    return await preferences.test_webhook(actor.player_id)


@router.get(
    "/notifications/deliveries",
    response_model=list[DeliveryOut],
    responses=error_responses(401, 422),
)
async def notification_deliveries(
    actor: CurrentActor,
    preferences: PreferencesDep,
    status: Annotated[
        Literal["pending", "delivered", "failed", "digested", "skipped", "stale"] | None, Query()
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[dict[str, Any]]:
    """Your notifications, newest first: pending (with the next try), delivered, or failed
    after the retries (with the last error)."""
    return await preferences.deliveries(actor.player_id, status, limit)
