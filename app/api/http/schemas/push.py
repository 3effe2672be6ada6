"""The bodies of Web Push subscriptions and the server's VAPID key."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.api.http.schemas.common import Body, _example

PUSH_ENDPOINT = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bH..."
PUSH_SUBSCRIPTION_EXAMPLE = {
    "id": "0d6f4c1b2a3e4f5a6b7c8d9e0f1a2b3c",
    "endpoint": PUSH_ENDPOINT,
    "created_at": "2026-11-30T12:00:00Z",
}


class PushKeys(Body):
    p256dh: str = Field(
        pattern=r"^B[A-Za-z0-9_-]{86}=?$",
        description="The browser's P-256 public key, base64url of its 65-byte uncompressed point "
        "(it must lie on the curve: 422 invalid_push_subscription otherwise).",
    )
    auth: str = Field(
        pattern=r"^[A-Za-z0-9_-]{22}(==)?$",
        description="The browser's 16-byte authentication secret, base64url.",
    )


class PushSubscriptionIn(Body):
    """A browser's ``PushSubscription.toJSON()``, as it is."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "endpoint": PUSH_ENDPOINT,
                    "expirationTime": None,
                    "keys": {
                        "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-"
                        "Ts1XbjhazAkj7I99e8QcYP7DkM",
                        "auth": "tBHItJI5svbpez7KI4CCXg",
                    },
                }
            ]
        },
    )

    endpoint: str = Field(
        min_length=1,
        max_length=1024,
        description="The push service's URL for this browser: https, not a private address.",
    )
    keys: PushKeys
    expirationTime: float | None = Field(  # noqa: N815  (the browser's own name)
        default=None,
        strict=True,
        description="Ignored: the push service says when it is gone (404/410).",
    )


class PushSubscriptionOut(BaseModel):
    """One of your push subscriptions (a browser or device that gets your notifications)."""

    model_config = _example(PUSH_SUBSCRIPTION_EXAMPLE)

    id: str
    endpoint: str
    created_at: datetime


class PushKeyOut(BaseModel):
    """Whether this server pushes, and the key to subscribe with. A server without a VAPID key
    says ``enabled: false`` here (its other push routes answer 404 ``push_disabled``), so a
    client learns push is off without an error."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "enabled": True,
                    "public_key": "BDd3_hVL9fZi9Ybo2UUzA284WG5FZR30_95YeZJsiApwXKpNcF1rRPF3foIiBHX"
                    "RdJI2Qhumhf6_LFTeZaNndIo",
                },
                {"enabled": False, "public_key": None},
            ]
        }
    )

    enabled: bool = Field(description="The server has a VAPID key: Web Push is on.")
    public_key: str | None = Field(
        description="The server's VAPID public key (uncompressed P-256 point, base64url): "
        "`applicationServerKey` of `PushManager.subscribe`; null when push is off."
    )
