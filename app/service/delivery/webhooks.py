"""Webhooks: a player's HTTPS endpoint, POSTed each notification signed as the Standard
Webhooks specification says (https://www.standardwebhooks.com), with a guard against SSRF.

Each request carries ``webhook-id`` (the notification's ``message_id``: the same on every
retry, so a receiver can drop duplicates), ``webhook-timestamp`` (Unix seconds) and
``webhook-signature`` (``v1,`` + base64 of HMAC-SHA256 over ``{id}.{timestamp}.{body}`` keyed
with the player's secret, ``whsec_`` + base64), computed by the ``standardwebhooks`` library.
The body is ``{"type", "timestamp", "data"}`` as the specification suggests.

SSRF guard: the URL must be ``https`` (``http`` only when a setting allows it), and its host
must resolve only to public addresses unless a setting allows private or loopback ones (an
address embedding an IPv4 one judged as that one: ``app.service.delivery.egress.refused``). At
registration ``check_target`` resolves the host; a host that does not resolve and one that
resolves to an address refused get the same answer (``webhook_url_refused``, one message), so
registration tells nothing about the operator's internal DNS. On each request the client's
resolver (``app.service.delivery.egress.GuardedResolver``) keeps only the allowed addresses and the
connection goes to those, so a DNS answer that changes after the check (rebinding) cannot lead
the request inside the network; a redirect is never followed (``egress.refuse_redirects``).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

import aiohttp
import orjson
from standardwebhooks.webhooks import Webhook

from app.errors import InvalidError
from app.service.delivery.egress import (
    Address,
    EndpointRefusedError,
    GuardedResolver,
    RedirectRefusedError,
    address_of,
    literal_host,
    refuse_redirects,
    refused,
)

log = logging.getLogger(__name__)

# Webhook secrets: 24 random bytes, written as the specification's ``whsec_`` + base64.
SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


@dataclass(frozen=True, slots=True)
class Targets:
    """Which webhook targets are allowed (settings ``webhook_allow_http``, ``..._private``,
    ``..._loopback``)."""

    allow_http: bool = False
    allow_private: bool = False
    allow_loopback: bool = False


class DeliveryError(Exception):
    """A delivery that did not succeed; the dispatcher retries it (with backoff) while it may."""


def _refused(address: Address, targets: Targets) -> bool:
    return refused(address, loopback=targets.allow_loopback, private=targets.allow_private)


def _parse(url: str, targets: Targets) -> tuple[str, int]:
    """``url``'s host and port: InvalidError ``webhook_url_invalid`` unless it is an absolute
    URL of an allowed scheme without credentials."""
    if len(url) > 2000:
        raise InvalidError("webhook_url_invalid", "a webhook URL is at most 2000 characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidError("webhook_url_invalid", f"not a URL: {exc}") from None
    allowed = ("https", "http") if targets.allow_http else ("https",)
    if parts.scheme not in allowed or not parts.hostname:
        raise InvalidError(
            "webhook_url_invalid", f"a webhook URL is an absolute {' or '.join(allowed)} URL"
        )
    if parts.username or parts.password:
        raise InvalidError("webhook_url_invalid", "a webhook URL carries no credentials")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


# The one answer to a host that does not resolve or resolves to an address refused: which of
# the two, or which address, would map the operator's internal DNS for whoever asks.
REFUSED = "webhook_url_refused"
REFUSED_MESSAGE = "webhook URL refused: its host must resolve, and only to public addresses"


def _refused_error(host: str, why: str) -> InvalidError:
    # The host only: the URL's path and query may hold the receiver's own secret.
    log.debug("webhook host %r refused: %s", host, why)
    return InvalidError(REFUSED, REFUSED_MESSAGE)


async def check_target(url: str, targets: Targets) -> None:
    """InvalidError ``webhook_url_refused`` unless ``url`` may be POSTed (module docstring)."""
    host, port = _parse(url, targets)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise _refused_error(host, f"does not resolve ({exc})") from None
    for info in infos:
        address = address_of(str(info[4][0]))
        if _refused(address, targets):
            raise _refused_error(host, f"resolves to {address}")


def body(kind: str, data: dict[str, object], at: datetime) -> bytes:
    """The JSON a webhook POSTs for one notification."""
    return orjson.dumps({"type": kind, "timestamp": at.isoformat(), "data": data})


def signed_headers(secret: str, message_id: str, at: datetime, payload: bytes) -> dict[str, str]:
    """The Standard Webhooks headers for ``payload`` sent at ``at``."""
    at = at.astimezone(UTC)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, at, payload.decode()),
        "content-type": "application/json",
        "user-agent": "ginrummy-webhooks/1",
    }


class WebhookSender:
    """POSTs signed notifications with one pooled aiohttp client whose resolver refuses what
    ``targets`` does not allow; any answer but 2xx, a timeout or a connection error is a
    ``DeliveryError``."""

    def __init__(self, targets: Targets, timeout: float) -> None:
        self.targets = targets
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        # Made on first use, inside the event loop it will run on.
        if self._session is None:
            targets = self.targets
            resolver = GuardedResolver(lambda address: not _refused(address_of(address), targets))
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(resolver=resolver, limit_per_host=20),
                timeout=self.timeout,
                trust_env=False,
                skip_auto_headers=("User-Agent",),
                middlewares=(refuse_redirects,),
            )
        return self._session

    async def post(
        self, url: str, secret: str, message_id: str, kind: str, data: dict[str, object]
    ) -> None:
        try:
            host, _ = _parse(url, self.targets)
            literal = literal_host(host)
            if literal is not None and _refused(literal, self.targets):
                raise _refused_error(host, "a literal")  # no resolver is asked about a literal
        except InvalidError as exc:
            raise DeliveryError(exc.code) from None
        now = datetime.now(UTC)
        payload = body(kind, data, now)
        headers = signed_headers(secret, message_id, now, payload)
        try:
            # A 3xx raises RedirectRefusedError (the session's middleware): never followed.
            async with self._http().post(url, data=payload, headers=headers) as response:
                status = response.status
                await response.read()
        except RedirectRefusedError as exc:
            raise DeliveryError(str(exc)) from None
        except aiohttp.ClientConnectorError as exc:
            # A name that no longer resolves says no more than one refused (check_target).
            if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(
                exc.os_error, EndpointRefusedError
            ):
                raise DeliveryError(REFUSED) from None
            raise DeliveryError(f"{type(exc).__name__}: {exc}"[:300]) from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise DeliveryError(f"{type(exc).__name__}: {exc}"[:300]) from None
        if not 200 <= status < 300:
            raise DeliveryError(f"HTTP {status}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
