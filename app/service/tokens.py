"""Bearer tokens: issue, resolve (through a short-lived in-process cache), list, rotate, revoke.

A token is 32 random bytes (URL-safe base64); only its SHA-256 is stored (``app.store.tokens``).
Resolving a token costs a database read, so each process keeps what it resolved for at most
``cache_seconds`` (and never past the token's expiry). A revocation (``DELETE``, or the old
token of a rotation) evicts it here at once and is broadcast on the bus (``Hub.revoke``): other
processes evict it as soon as the message arrives (milliseconds over Redis). If that message is
lost (Redis down), an entry still dies ``cache_seconds`` after it was resolved: that is the
worst case for a revoked token to stop working everywhere. A refused token (unknown, revoked,
expired) is remembered as long, so a client repeating one costs no database read; one lookup
of a token costs one statement whatever it finds.

A revocation also ends what the token opened: each process keeps the live holders of a token
(its sockets, ``hold`` / ``release``) and tells each of them (``Holder.revoked``) when the
token is revoked here or on the bus. A revoked token's hash is remembered (``REVOKED_KEPT`` of
them): a resolution that was already reading the database when the revocation came, or a
socket that registers just after it, is refused rather than let through.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from app.bus.hub import Hub
from app.errors import NotFoundError, UnauthenticatedError
from app.metrics import TOKEN_LOOKUPS
from app.service.lru import LRU
from app.store import Database
from app.store import tokens as store
from app.store.models import Token
from app.table.commands import Actor
from app.table.time import utcnow

# Resolved tokens a process keeps at most (least recently used forgotten first), and refused
# ones (unknown, revoked, expired: about 300 bytes each, 2.5 MB at most).
CACHE_SIZE = 65536
# Hashes of revoked tokens a process remembers: a revoked token is gone from the database, so
# one is needed only while a resolution or a socket's registration races its revocation.
REVOKED_KEPT = 8192
REFUSED_CACHE_SIZE = 8192
# The lookups' counters, bound once: a label's lookup costs twice its increment.
_FROM_CACHE = TOKEN_LOOKUPS.labels("cache")
_FROM_DATABASE = TOKEN_LOOKUPS.labels("database")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_secret() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class Issued:
    """A new token: its secret (shown once) and its row."""

    secret: str
    token: Token


class Holder(Protocol):
    """What a token opened and must end with it (a socket)."""

    def revoked(self) -> None:
        """The token was revoked: end now (called once, from the event loop)."""


@dataclass(frozen=True, slots=True)
class _Resolved:
    actor: Actor
    until: float  # time.monotonic() after which the token is resolved afresh


@dataclass(frozen=True, slots=True)
class _Refused:
    code: str  # ``unauthorized`` or ``token_expired``
    until: float


_REFUSALS = {
    "unauthorized": "unknown or revoked token",
    "token_expired": "this token has expired",
}


class Tokens:
    """The tokens of every player, over one Database; revocations go out on ``hub``."""

    def __init__(
        self,
        db: Database,
        hub: Hub,
        *,
        cache_seconds: float = 30.0,
        lifetime: timedelta | None = None,
    ) -> None:
        self.db = db
        self.hub = hub
        self.cache_seconds = cache_seconds
        self.lifetime = lifetime
        self._cache: LRU[str, _Resolved] = LRU(CACHE_SIZE)
        # The hashes of tokens revoked since this process started (the most recent ones).
        self._revoked: LRU[str, bool] = LRU(REVOKED_KEPT)
        self._holders: dict[str, set[Holder]] = {}
        self._refused: LRU[str, _Refused] = LRU(REFUSED_CACHE_SIZE)
        hub.on_revoke(self._evict)

    def _evict(self, digests: list[str]) -> None:
        for digest in digests:
            self._cache.pop(digest)
            self._revoked.put(digest, True)
            for holder in self._holders.pop(digest, ()):
                holder.revoked()

    def hold(self, digest: str, holder: Holder) -> None:
        """Keep ``holder`` until ``release``: it is told when the token of hash ``digest`` is
        revoked, here or in any other process; at once when it already was."""
        if self._revoked.get(digest):
            holder.revoked()
            return
        self._holders.setdefault(digest, set()).add(holder)

    def release(self, digest: str, holder: Holder) -> None:
        """``holder`` ended: forget it."""
        holders = self._holders.get(digest)
        if holders is not None:
            holders.discard(holder)
            if not holders:
                del self._holders[digest]

    def _expiry(self) -> datetime | None:
        return None if self.lifetime is None else utcnow() + self.lifetime

    async def add(self, session: AsyncSession, player_id: str, label: str | None = None) -> Issued:
        """A new token for ``player_id`` in ``session``'s transaction."""
        secret = new_secret()
        token = await store.add(
            session,
            uuid.uuid4().hex,
            player_id,
            hash_token(secret),
            label=label,
            expires_at=self._expiry(),
        )
        return Issued(secret, token)

    async def issue(self, player_id: str, label: str | None = None) -> Issued:
        """A new token for ``player_id`` (their other tokens stay valid)."""
        async with self.db.write() as session:
            return await self.add(session, player_id, label)

    async def authenticate(self, secret: str | None) -> Actor:
        """The player holding ``secret``; UnauthenticatedError when missing, unknown, revoked
        or expired."""
        if not secret:
            raise UnauthenticatedError("unauthorized", "a bearer token is required")
        return await self.resolve(hash_token(secret))

    async def resolve(self, digest: str) -> Actor:
        """The player holding the token of hash ``digest`` (as ``authenticate``)."""
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached.until > now:
            _FROM_CACHE.inc()
            return cached.actor
        if self._revoked.get(digest):
            raise UnauthenticatedError("unauthorized", "unknown or revoked token")
        refused = self._refused.get(digest)
        if refused is not None and refused.until > now:
            _FROM_CACHE.inc()
            raise UnauthenticatedError(refused.code, _REFUSALS[refused.code])
        _FROM_DATABASE.inc()
        resolved = await store.resolve(self.db, digest, utcnow())
        if resolved is None or not resolved.live:
            # A refusal is final: a revoked or expired token never comes back, and a token
            # issued later has a secret nobody could present before (32 random bytes). So
            # remembering it cannot refuse a token that works, here or on another process.
            self._cache.pop(digest)
            code = "unauthorized" if resolved is None else "token_expired"
            self._refused.put(digest, _Refused(code, now + self.cache_seconds))
            raise UnauthenticatedError(code, _REFUSALS[code])
        until = now + self.cache_seconds
        if resolved.expires_at is not None:
            until = min(until, now + (resolved.expires_at - utcnow()).total_seconds())
        actor = Actor(resolved.player_id, resolved.name)
        if self._revoked.get(digest):  # revoked while the database was read
            raise UnauthenticatedError("unauthorized", "unknown or revoked token")
        self._cache.put(digest, _Resolved(actor, until))
        return actor

    async def check(self, digest: str) -> None:
        """Resolve the token of hash ``digest`` again (as ``resolve``): when it is no longer
        live, what it holds in this process ends (a revocation whose message was lost) and
        ``UnauthenticatedError`` is raised."""
        try:
            await self.resolve(digest)
        except UnauthenticatedError:
            self._evict([digest])
            raise

    async def list(self, actor: Actor) -> list[Token]:
        async with self.db.read() as session:
            return await store.of_player(session, actor.player_id)

    async def rotate(self, secret: str | None) -> Issued:
        """A new token in place of ``secret`` (same label), which is revoked."""
        actor = await self.authenticate(secret)
        assert secret is not None
        digest = hash_token(secret)
        async with self.db.write() as session:
            found = await store.by_hash(session, digest)
            if found is None:  # revoked meanwhile
                raise UnauthenticatedError("unauthorized", "unknown or revoked token")
            old = found[0]
            await store.remove(session, actor.player_id, old.id)
            issued = await self.add(session, actor.player_id, old.label)
        self._evict([digest])
        self.hub.revoke([digest])
        return issued

    async def revoke(self, actor: Actor, token_id: str) -> None:
        """Revoke the actor's token ``token_id`` (404 ``token_not_found`` when not theirs)."""
        async with self.db.write() as session:
            digest = await store.remove(session, actor.player_id, token_id)
        if digest is None:
            raise NotFoundError("token_not_found", "you have no such token")
        self._evict([digest])
        self.hub.revoke([digest])
