"""Web Push (RFC 8030) with VAPID (RFC 8292): "your turn" reaches a browser whose tab is closed.

A browser subscribes through its push service (``PushManager.subscribe`` with our VAPID public
key) and hands the server its ``PushSubscription``: an endpoint URL at that push service and
the keys a payload is encrypted to (aes128gcm, RFC 8291). ``WebPushChannel.deliver`` POSTs an
encrypted JSON payload (``{"kind": ..., **payload}``) to every subscription of a player with
``pywebpush``'s asyncio client (aiohttp: nothing blocks the event loop), signed with the
server's VAPID key. The notification dispatcher (the durable outbox) calls ``deliver``:

- a push service answering 404 or 410 says the subscription is gone: its row is deleted;
- 429, a 5xx, a timeout or a connection error raise ``PushRetryableError`` (the dispatcher
  tries again later; a subscription that got it the first time gets it again, and the
  notification's tag, the table, makes the browser replace the first one rather than add one);
- any other answer (400, 403: a key that no longer matches, 413) is logged and not retried.

An endpoint is a URL a player chose, so by default the server refuses ``http:`` endpoints and
any that are or resolve to a private, loopback or link-local address, or one embedding such an
IPv4 address (``app.service.delivery.egress.refused``; checked when the subscription is stored and
again on each connection, by the resolver, so a DNS name cannot move inside the network later);
``push_allow_private`` admits them for local tests. A redirect is never followed
(``egress.refuse_redirects``). An endpoint refused when sending, one whose name no longer
resolves (the same answer: which of the two would tell the operator's DNS apart) and a redirect
raise ``PushRefusedError``: a failed delivery, recorded and tried again like any other.

``on_subscribed(session, player_id, subscribed)`` is told, in the transaction that stored or
deleted a subscription (by the player, or dropped after a 404/410), whether the player has one
left: the outbox's hook (``app.store.outbox.set_push_channel``) writes notifications for push
only for players who have.

Without ``vapid_private_key`` Web Push is off: ``enabled`` is False, the key route says so,
the others answer 404 ``push_disabled`` and ``deliver`` does nothing.
``python -m app.service.delivery.webpush`` prints a new key as the environment line to set.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson
from aiohttp.resolver import DefaultResolver
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid
from pywebpush import WebPushException, webpush_async
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import InvalidError, NotFoundError
from app.service.delivery.egress import (
    EndpointRefusedError,
    GuardedResolver,
    RedirectRefusedError,
    address_of,
    literal_host,
    refuse_redirects,
    refused,
)
from app.settings import Settings
from app.store import Database
from app.store import push as store
from app.store.models import PushSubscription
from app.table.commands import Actor

log = logging.getLogger(__name__)

# A player's subscriptions kept at most (one per browser or device); the oldest go first.
SUBSCRIPTIONS_PER_PLAYER = 10
# Push services take 4096 bytes of encrypted body; aes128gcm adds 86 bytes of header and 17 of
# padding delimiter and tag. A larger payload is cut to its kind and table.
MAX_PAYLOAD = 3800
# Notifications someone is waiting for: delivered at once even to a device saving battery.
URGENT = frozenset({"your_turn", "time_running_out"})


class PushRetryableError(Exception):
    """A push service did not take a notification this time (5xx, 429, timeout, connection):
    deliver it again later, after ``retry_after`` seconds when the service said so."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PushRefusedError(Exception):
    """A subscription not sent to: its endpoint is refused or no longer resolves, or its push
    service answered a redirect (module docstring)."""


def b64url_decode(value: str) -> bytes:
    """Base64url with or without its padding (binascii.Error when it is not)."""
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_address(address: str) -> bool:
    """Whether ``address`` (an IP literal) is one a request may go to from the server."""
    return not refused(address_of(address))


def load_vapid(private_key: str) -> Vapid:
    """The VAPID key of ``vapid_private_key``: base64url of the raw 32 bytes, base64url DER, or
    PEM (ValueError when it is none of them)."""
    text = private_key.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_private_key(text.encode(), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey):
                raise ValueError("not an elliptic-curve key")
            vapid = Vapid(key)
        else:
            vapid = Vapid.from_string(text)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ValueError(f"VAPID_PRIVATE_KEY is not a P-256 private key: {exc}") from exc
    if not isinstance(vapid.private_key.curve, ec.SECP256R1):
        raise ValueError("VAPID_PRIVATE_KEY must be a P-256 (prime256v1) key")
    return vapid


def new_private_key() -> str:
    """A new VAPID private key, as ``vapid_private_key`` takes it."""
    key = ec.generate_private_key(ec.SECP256R1())
    return b64url(key.private_numbers().private_value.to_bytes(32, "big"))


# Told, in the same transaction, whether a player has any push subscription left after one was
# stored or deleted (the outbox writes notifications for push only for those who have one).
SubscribedHook = Callable[[AsyncSession, str, bool], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Subscription:
    """A browser's ``PushSubscription`` as it arrives (``endpoint``, ``keys.p256dh``,
    ``keys.auth``)."""

    endpoint: str
    p256dh: str
    auth: str


class WebPushChannel:
    """Players' push subscriptions, and delivery to them; one per app (``app.state.webpush``)."""

    def __init__(
        self, db: Database, settings: Settings, *, on_subscribed: SubscribedHook | None = None
    ) -> None:
        self.db = db
        self.on_subscribed = on_subscribed
        self.ttl = settings.push_ttl_seconds
        self.timeout = settings.push_timeout
        self.allow_private = settings.push_allow_private
        self.vapid: Vapid | None = None
        self.public_key: str | None = None
        self.subject = settings.vapid_subject or settings.public_url.rstrip("/")
        self._session: aiohttp.ClientSession | None = None
        if settings.vapid_private_key:
            self.vapid = load_vapid(settings.vapid_private_key)
            self.public_key = b64url(
                self.vapid.public_key.public_bytes(
                    serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
                )
            )
            if not self.subject.startswith(("mailto:", "https://")):
                raise ValueError(
                    "VAPID_SUBJECT (or PUBLIC_URL when it is unset) must be a mailto: or "
                    f"https: URL for Web Push, not {self.subject!r}"
                )

    @property
    def enabled(self) -> bool:
        return self.vapid is not None

    def require(self) -> str:
        """The VAPID public key; 404 ``push_disabled`` when this server has none."""
        if self.public_key is None:
            raise NotFoundError("push_disabled", "Web Push is not configured on this server")
        return self.public_key

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            resolver = DefaultResolver() if self.allow_private else GuardedResolver(public_address)
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(resolver=resolver, limit_per_host=20),
                middlewares=(refuse_redirects,),
            )
        return self._session

    # Subscriptions

    def check_endpoint(self, endpoint: str) -> None:
        """InvalidError unless ``endpoint`` is a URL the server may POST to."""
        try:
            url = urlsplit(endpoint)
            host = url.hostname
            url.port  # noqa: B018  (raises ValueError for a port that is not a number)
        except ValueError as exc:
            raise _invalid(f"endpoint is not a URL: {exc}") from exc
        schemes = ("https", "http") if self.allow_private else ("https",)
        if url.scheme not in schemes or not host:
            raise _invalid(f"endpoint must be an {' or '.join(schemes)} URL with a host")
        if url.username is not None or url.password is not None:
            raise _invalid("endpoint must not carry a user name or password")
        if self.allow_private:
            return
        # A name: its addresses are checked on every connection (GuardedResolver).
        literal = literal_host(host)
        if literal is not None and refused(literal):
            raise _invalid("endpoint refused: it must be a public address")

    def check(self, subscription: Subscription) -> None:
        """InvalidError ``invalid_push_subscription`` unless it is a subscription we can use."""
        self.check_endpoint(subscription.endpoint)
        try:
            point = b64url_decode(subscription.p256dh)
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        except (ValueError, binascii.Error) as exc:
            raise _invalid("keys.p256dh is not a P-256 public key (base64url)") from exc
        if len(point) != 65:
            raise _invalid("keys.p256dh is not an uncompressed P-256 point (65 bytes)")
        try:
            secret = b64url_decode(subscription.auth)
        except (ValueError, binascii.Error) as exc:
            raise _invalid("keys.auth is not base64url") from exc
        if len(secret) != 16:
            raise _invalid("keys.auth must be 16 bytes (base64url)")

    async def subscribe(self, actor: Actor, subscription: Subscription) -> PushSubscription:
        """Store ``subscription`` for ``actor`` (the same endpoint again: updated in place)."""
        self.require()
        self.check(subscription)
        async with self.db.write() as session:
            before = await store.owner(session, subscription.endpoint)
            row = await store.upsert(
                session,
                uuid.uuid4().hex,
                actor.player_id,
                endpoint=subscription.endpoint,
                p256dh=subscription.p256dh,
                auth=subscription.auth,
            )
            await store.trim(session, actor.player_id, SUBSCRIPTIONS_PER_PLAYER)
            await self._changed(session, actor.player_id)
            if before is not None and before != actor.player_id:
                await self._changed(session, before)
        return row

    async def _changed(self, session: AsyncSession, player_id: str) -> None:
        if self.on_subscribed is not None:
            left = await store.of_player(session, player_id)
            await self.on_subscribed(session, player_id, bool(left))

    async def subscriptions(self, actor: Actor) -> list[PushSubscription]:
        self.require()
        async with self.db.read() as session:
            return await store.of_player(session, actor.player_id)

    async def unsubscribe(self, actor: Actor, subscription_id: str) -> None:
        """Forget one of the actor's subscriptions (404 ``push_subscription_not_found``)."""
        self.require()
        async with self.db.write() as session:
            removed = await store.remove(session, actor.player_id, subscription_id)
            if removed:
                await self._changed(session, actor.player_id)
        if not removed:
            raise NotFoundError("push_subscription_not_found", "you have no such subscription")

    # Delivery

    async def deliver(self, player_id: str, kind: str, payload: dict[str, Any]) -> None:
        """Push ``{"kind": kind, **payload}`` to every subscription of ``player_id``.

        Returns once each push service took it, or said the subscription is gone (deleted);
        raises ``PushRefusedError`` if one was not sent to (refused, a redirect), else
        ``PushRetryableError`` if any could not take it now. Nothing when push is off or the
        player has no subscription.
        """
        if self.vapid is None:
            return
        async with self.db.read() as session:
            rows = await store.of_player(session, player_id)
        if not rows:
            return
        data = orjson.dumps({"kind": kind, **payload})
        if len(data) > MAX_PAYLOAD:
            data = orjson.dumps({"kind": kind, "table_id": payload.get("table_id")})
        headers: dict[str, str | int | float] = {"Urgency": "high" if kind in URGENT else "normal"}
        table_id = payload.get("table_id")
        if isinstance(table_id, str) and 0 < len(table_id) <= 32 and table_id.isalnum():
            # A newer notice of the same table replaces one still waiting at the push service.
            headers["Topic"] = table_id
        outcomes = await asyncio.gather(
            *(self._send(row, data.decode(), headers) for row in rows), return_exceptions=True
        )
        gone = [row.id for row, outcome in zip(rows, outcomes, strict=True) if outcome is _GONE]
        if gone:
            async with self.db.write() as session:
                await store.remove_ids(session, gone)
                await self._changed(session, player_id)
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        for failure in failures:
            if not isinstance(failure, PushRetryableError):
                raise failure
        if failures:
            waits = [f.retry_after for f in failures if isinstance(f, PushRetryableError)]
            raise PushRetryableError(
                f"{len(failures)} of {len(rows)} push subscriptions failed: {failures[0]}",
                max((w for w in waits if w is not None), default=None),
            )

    async def _send(
        self, row: PushSubscription, data: str, headers: dict[str, str | int | float]
    ) -> object:
        """POST to one subscription: None when taken or refused for good, ``_GONE`` when the
        subscription no longer exists; ``PushRetryableError`` to try again later,
        ``PushRefusedError`` when not sent to."""
        assert self.vapid is not None
        host = urlsplit(row.endpoint).hostname or "?"
        try:
            self.check_endpoint(row.endpoint)
            response = await webpush_async(
                {"endpoint": row.endpoint, "keys": {"p256dh": row.p256dh, "auth": row.auth}},
                data=data,
                vapid_private_key=self.vapid,
                vapid_claims={"sub": self.subject},
                ttl=self.ttl,
                headers=dict(headers),
                timeout=self.timeout,
                aiohttp_session=self._http(),
            )
            if isinstance(response, aiohttp.ClientResponse):
                response.release()
            return None
        except WebPushException as exc:
            status = exc.status_code
            if status in (404, 410):
                log.info("push subscription %s gone (%s from %s): dropped", row.id, status, host)
                return _GONE
            if status is None or status == 429 or status >= 500:
                raise PushRetryableError(
                    f"{host} answered {status}", _seconds(exc.retry_after)
                ) from exc
            log.warning("push to %s refused for good: %s", host, status)
            return None
        except RedirectRefusedError as exc:
            raise PushRefusedError(f"{host}: {exc}") from None
        except InvalidError as exc:
            log.debug("push subscription %s not sent: %s", row.id, exc.message)
            raise PushRefusedError(f"{host}: refused") from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(
                exc.os_error, EndpointRefusedError
            ):
                log.debug("push subscription %s not sent: %s", row.id, exc.os_error)
                raise PushRefusedError(f"{host}: refused") from None
            raise PushRetryableError(f"{host}: {exc}") from exc
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise PushRetryableError(f"{host}: {type(exc).__name__} {exc}") from exc


_GONE = object()


def _seconds(retry_after: str | None) -> float | None:
    """A ``Retry-After`` in seconds (an HTTP date is left to the dispatcher's backoff)."""
    try:
        return None if retry_after is None else max(0.0, float(retry_after))
    except ValueError:
        return None


def _invalid(message: str) -> InvalidError:
    return InvalidError("invalid_push_subscription", message)


if __name__ == "__main__":
    key = new_private_key()
    public = b64url(
        load_vapid(key).public_key.public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
    )
    print(f"VAPID_PRIVATE_KEY={key}")
    print(f"# public key (GET /v1/push/key answers it): {public}")
