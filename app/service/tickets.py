"""Socket tickets: a short-lived, single-use stand-in for a bearer token in a WebSocket URL.

Browsers cannot set headers on a WebSocket upgrade, so a token would have to ride in the URL,
where proxies and logs see it. Instead a client asks ``POST /v1/ws-tickets`` (with its bearer
token) for a ticket and opens the socket with ``?ticket=``: the ticket names the player for
``ttl`` seconds and opens one socket only. Only its SHA-256 is stored, with the hash of the
token it was issued with (never the token): in Redis with ``redis_url`` (so any process can
redeem it, exactly once: ``GETDEL``), else in this process. Redeeming a ticket gives that
token's hash, which the socket then resolves like a token (``Tokens.resolve``): a ticket dies
with its token, and the socket it opens ends when the token is revoked.
"""

from __future__ import annotations

import hashlib
import secrets
import time

from redis.asyncio import Redis

from app.errors import UnauthenticatedError
from app.service.lru import LRU

# Tickets waiting to be redeemed in one process at most (the oldest forgotten first).
LOCAL_TICKETS = 65536


def _refused() -> UnauthenticatedError:
    return UnauthenticatedError("invalid_ticket", "unknown, used or expired socket ticket")


def _key(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


class Tickets:
    """Issue and redeem tickets; in process (one server) or in Redis (``redis_url``)."""

    def __init__(self, ttl: float, redis_url: str | None = None, prefix: str = "ginrummy") -> None:
        self.ttl = ttl
        self._prefix = f"{prefix}:ticket:"
        self._redis: Redis | None = None if redis_url is None else Redis.from_url(redis_url)
        self._local: LRU[str, tuple[float, str]] = LRU(LOCAL_TICKETS)

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()

    async def issue(self, token_hash: str) -> str:
        """A new ticket standing for the token of hash ``token_hash``, valid for ``ttl``
        seconds and one socket."""
        ticket = secrets.token_urlsafe(24)
        key = _key(ticket)
        if self._redis is None:
            self._local.put(key, (time.monotonic() + self.ttl, token_hash))
        else:
            await self._redis.set(self._prefix + key, token_hash, px=max(1, int(self.ttl * 1000)))
        return ticket

    async def redeem(self, ticket: str) -> str:
        """The hash of the token a ticket stands for, once (``invalid_ticket`` when unknown,
        used or expired)."""
        key = _key(ticket)
        if self._redis is None:
            found = self._local.get(key)
            self._local.pop(key)
            if found is None or found[0] < time.monotonic():
                raise _refused()
            return found[1]
        raw = await self._redis.getdel(self._prefix + key)
        # A ticket of an older server (a JSON list naming the player) is refused as well.
        if raw is None or len(raw) != 64:
            raise _refused()
        return raw.decode() if isinstance(raw, bytes) else raw
