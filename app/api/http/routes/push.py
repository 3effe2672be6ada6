"""Web Push: the server's VAPID public key, and your browsers' push subscriptions (subscribe,
list, unsubscribe). ``app.service.delivery.webpush`` sends the notifications; without a VAPID key on
the server the key route says ``enabled: false`` and the others answer 404 ``push_disabled``."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.edge.request_body import StrictJSONRoute
from app.api.http.deps import CurrentActor
from app.api.http.schemas.common import error_responses
from app.api.http.schemas.push import PushKeyOut, PushSubscriptionIn, PushSubscriptionOut
from app.service.delivery.webpush import Subscription, WebPushChannel

router = APIRouter(prefix="/v1", tags=["push"], route_class=StrictJSONRoute)


def _push(request: Request) -> WebPushChannel:
    channel: WebPushChannel = request.app.state.webpush
    return channel


@router.get("/push/key", response_model=PushKeyOut)
async def push_key(request: Request) -> PushKeyOut:
    """Whether the server pushes, and the VAPID public key to subscribe with (``enabled:
    false``, no key, when the server has none: a page asks at every load, without an error)."""
    key = _push(request).public_key
    return PushKeyOut(enabled=key is not None, public_key=key)


@router.post(
    "/players/me/push-subscriptions",
    status_code=201,
    response_model=PushSubscriptionOut,
    responses=error_responses(401, 404, 413, 422),
)
async def subscribe(
    body: PushSubscriptionIn, request: Request, actor: CurrentActor
) -> PushSubscriptionOut:
    """Send your turns (and other notices) to this browser: the body is its
    ``PushSubscription.toJSON()``. The same endpoint again updates it (and keeps its id), also
    for another player: a browser's notifications go to whoever subscribed it last. 422
    ``invalid_push_subscription`` for an endpoint that is not https or is a private address,
    or keys that are not a P-256 point and a 16-byte secret."""
    row = await _push(request).subscribe(
        actor, Subscription(body.endpoint, body.keys.p256dh, body.keys.auth)
    )
    return PushSubscriptionOut.model_validate(row, from_attributes=True)


@router.get(
    "/players/me/push-subscriptions",
    response_model=list[PushSubscriptionOut],
    responses=error_responses(401, 404),
)
async def subscriptions(request: Request, actor: CurrentActor) -> list[PushSubscriptionOut]:
    """Your push subscriptions, oldest first (at most 10: a new one drops the oldest)."""
    return [
        PushSubscriptionOut.model_validate(row, from_attributes=True)
        for row in await _push(request).subscriptions(actor)
    ]


@router.delete(
    "/players/me/push-subscriptions/{subscription_id}",
    response_model=list[PushSubscriptionOut],
    responses=error_responses(401, 404, 422),
)
async def unsubscribe(
    subscription_id: str, request: Request, actor: CurrentActor
) -> list[PushSubscriptionOut]:
    """Stop pushing to that browser (404 ``push_subscription_not_found`` if it is not yours).
    Answers with the subscriptions you have left."""
    await _push(request).unsubscribe(actor, subscription_id)
    return await subscriptions(request, actor)
