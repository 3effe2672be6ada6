"""Rate limits shared by every process of a deployment, counted by the ``limits`` library.

One ``RateLimits`` per process holds the named limits:

- ``token`` and ``ip``: HTTP requests per bearer token and per client address (the
  ``app.api.edge.ratelimit`` middleware), a sliding window counter each;
- ``chat``: chat lines per player, a moving window (exactly "at most N in any W seconds");
  ``chat_ip`` the same per client address, so fresh players from one address share one;
- ``players_ip``: new players per client address, a moving window (exact, as it is low);
- ``socket``: frames per WebSocket connection (its messages, pings and pongs), counted by the
  connection itself (``Allowance``): a connection lives on one process, so sharing its count
  would only add a Redis round trip to every frame, and a control frame is answered where it is
  parsed, with no ``await`` to spare.

With ``redis_url`` the others are counted in Redis, so N processes enforce one limit between
them; without it, in memory. Each process counts a limit of N hits in batches of N/100 (at
least 1: limits under 200 are exact), so a request costs a Redis round trip once per batch
rather than every time (a round trip costs about as much CPU as a move); in exchange a key may
get up to one batch more per process and window than its limit.

A limit is never the reason a move fails: while Redis does not answer, the limits are counted
in this process's memory and Redis is tried again after ``REDIS_RETRY`` seconds.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Literal, NoReturn

from limits import RateLimitItem, RateLimitItemPerSecond, parse
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import (
    MovingWindowRateLimiter,
    RateLimiter,
    SlidingWindowCounterRateLimiter,
)
from limits.errors import StorageError
from redis.asyncio import ConnectionPool

from app.errors import RateLimitedError
from app.metrics import RATE_LIMITED, REDIS_ERRORS
from app.settings import Settings

log = logging.getLogger(__name__)

# How long a limit check waits for Redis, and how long after a failure it counts locally.
REDIS_TIMEOUT = 0.5
REDIS_RETRY = 1.0
# A limit of N is counted in batches of N // BATCH_DIVISOR hits (at least 1).
BATCH_DIVISOR = 100
# Batches kept before the stale ones are swept.
SWEEP_AT = 10000

LimitName = Literal["token", "ip", "chat", "chat_ip", "players_ip", "challenges"]


@dataclass(frozen=True, slots=True)
class Limit:
    """One named limit: its rate (None: off), how it counts, and whether Redis shares it."""

    item: RateLimitItem | None
    moving: bool
    shared: bool
    message: str

    # Hits counted in the storage at once: 1% of the limit (exact for limits under 200).
    batch: int = 1

    @classmethod
    def of(cls, item: RateLimitItem | None, moving: bool, shared: bool, message: str) -> Limit:
        batch = 1 if item is None else max(1, item.amount // BATCH_DIVISOR)
        return cls(item, moving, shared, message, batch)


def _rate(notation: str) -> RateLimitItem | None:
    return parse(notation) if notation.strip() else None


SOCKET_MESSAGE = "too many messages on this socket"


class Allowance:
    """One WebSocket connection's count against ``rate_limit_socket``: a sliding window counter
    as the ``limits`` library's (the last window's hits weighted by how much of it still
    overlaps, plus this window's), kept in the connection's own object and counted without
    waiting, so a ping or a pong is counted where the connection parses it."""

    __slots__ = ("_current", "_previous", "_window", "amount", "expiry")

    def __init__(self, item: RateLimitItem) -> None:
        self.amount = item.amount
        self.expiry = float(item.get_expiry())
        self._window = 0  # the number of the current window (time // expiry)
        self._current = 0  # hits in it
        self._previous = 0  # hits in the one before

    @classmethod
    def of(cls, notation: str) -> Allowance | None:
        """A fresh allowance at the rate ``notation`` (None: no limit)."""
        item = _rate(notation)
        return None if item is None else cls(item)

    def take(self) -> bool:
        """Count one frame if it fits (True); False, uncounted, when over the limit."""
        now = time.monotonic()
        window, into = divmod(now, self.expiry)
        if window != self._window:
            self._previous = self._current if window == self._window + 1 else 0
            self._current = 0
            self._window = int(window)
        weight = 1.0 - into / self.expiry
        if self._previous * weight + self._current + 1 > self.amount:
            RATE_LIMITED.labels("socket").inc()
            return False
        self._current += 1
        return True

    def hit(self) -> None:
        """Count one message; ``RateLimitedError`` when over the limit."""
        if not self.take():
            retry = self.expiry - time.monotonic() % self.expiry
            raise RateLimitedError("rate_limited", SOCKET_MESSAGE, retry)


class RateLimits:
    """The named limits of one process over one storage (Redis, or memory)."""

    def __init__(self, limits: dict[LimitName, Limit], redis_url: str | None, prefix: str) -> None:
        self.limits = limits
        self._local: Storage = MemoryStorage()
        self._redis: RedisStorage | None = None
        self._pool: ConnectionPool | None = None
        if redis_url is not None:
            # Our pool: a limit check waits at most REDIS_TIMEOUT and is never retried.
            self._pool = ConnectionPool.from_url(
                redis_url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
            )
            self._redis = RedisStorage(
                f"async+{redis_url}",
                implementation="redispy",
                key_prefix=f"{prefix}:limits",
                wrap_exceptions=True,
                connection_pool=self._pool,  # type: ignore[arg-type]
            )
        self._strategies: dict[tuple[int, bool], RateLimiter] = {}
        # Per (limit, key): hits not yet counted in the storage and since when; until when it
        # is refused; and whether it is counted hit by hit (it was refused).
        self._pending: dict[tuple[LimitName, str], list[float]] = {}
        self._blocked: dict[tuple[LimitName, str], float] = {}
        self._strict: set[tuple[LimitName, str]] = set()
        self._redis_down_until = 0.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimits:
        chat_count, chat_window = settings.chat_rate_count, settings.chat_rate_window
        limits: dict[LimitName, Limit] = {
            "token": Limit.of(
                _rate(settings.rate_limit_token), False, True, "too many requests for this token"
            ),
            "ip": Limit.of(
                _rate(settings.rate_limit_ip), False, True, "too many requests from this address"
            ),
            "chat": Limit.of(
                RateLimitItemPerSecond(chat_count, max(1, math.ceil(chat_window))),
                True,
                True,
                f"at most {chat_count} chat lines per {chat_window:g} s",
            ),
            "chat_ip": Limit.of(
                _rate(settings.rate_limit_chat_ip),
                True,
                True,
                "too many chat lines from this address",
            ),
            "players_ip": Limit.of(
                _rate(settings.rate_limit_players_ip),
                True,
                True,
                "too many new players from this address",
            ),
            "challenges": Limit.of(
                _rate(settings.rate_limit_challenges),
                True,
                True,
                "too many challenges sent: wait before the next",
            ),
        }
        return cls(limits, settings.redis_url, settings.redis_prefix)

    def enabled(self, name: LimitName) -> bool:
        return self.limits[name].item is not None

    async def hit(self, name: LimitName, key: str) -> None:
        """Count one hit of ``key`` against limit ``name``; ``RateLimitedError`` when over it.

        Hits are counted in the storage a batch at a time (``Limit.batch``): a request costs no
        round trip to Redis but once per batch. A key refused once is counted hit by hit until
        the storage lets one through again, so a client over its limit stays refused.
        """
        limit = self.limits[name]
        item = limit.item
        if item is None:
            return
        slot = (name, key)
        now = time.time()
        blocked = self._blocked.get(slot)
        if blocked is not None:
            if now < blocked:
                self._refuse(name, limit, blocked)
            del self._blocked[slot]
        pending = self._pending.get(slot)
        if pending is None or pending[1] <= now - item.get_expiry():
            if len(self._pending) >= SWEEP_AT:
                self._sweep(now)
            pending = self._pending[slot] = [0, now]
        pending[0] += 1
        if pending[0] < limit.batch and slot not in self._strict:
            return
        del self._pending[slot]
        reset = await self._count(limit, item, name, key, int(pending[0]))
        if reset is None:
            self._strict.discard(slot)
            return
        self._blocked[slot] = reset
        self._strict.add(slot)
        self._refuse(name, limit, reset)

    async def _count(
        self, limit: Limit, item: RateLimitItem, name: str, key: str, cost: int
    ) -> float | None:
        """Add ``cost`` hits in the storage: None if they fit, else when the limit frees up."""
        if limit.shared and self._redis is not None and time.monotonic() >= self._redis_down_until:
            strategy = self._strategy(self._redis, limit.moving)
            try:
                if await strategy.hit(item, name, key, cost=cost):
                    return None
                return (await strategy.get_window_stats(item, name, key)).reset_time
            except StorageError as exc:
                self._redis_failed(exc)
        strategy = self._strategy(self._local, limit.moving)
        if await strategy.hit(item, name, key, cost=cost):
            return None
        return (await strategy.get_window_stats(item, name, key)).reset_time

    def _sweep(self, now: float) -> None:
        """Forget the batches older than their window and the refusals that are over."""
        for slot, (_, since) in list(self._pending.items()):
            item = self.limits[slot[0]].item
            if item is None or since <= now - item.get_expiry():
                del self._pending[slot]
        self._blocked = {s: until for s, until in self._blocked.items() if until > now}
        self._strict &= self._pending.keys() | self._blocked.keys()

    def _refuse(self, name: LimitName, limit: Limit, reset_time: float) -> NoReturn:
        RATE_LIMITED.labels(name).inc()
        raise RateLimitedError("rate_limited", limit.message, max(0.0, reset_time - time.time()))

    def _redis_failed(self, exc: StorageError) -> None:
        REDIS_ERRORS.labels("rate_limits").inc()
        if time.monotonic() >= self._redis_down_until:
            log.warning("rate limits counted in this process: Redis failed (%s)", exc.storage_error)
        self._redis_down_until = time.monotonic() + REDIS_RETRY

    def _strategy(self, storage: Storage, moving: bool) -> RateLimiter:
        key = (id(storage), moving)
        strategy = self._strategies.get(key)
        if strategy is None:
            cls = MovingWindowRateLimiter if moving else SlidingWindowCounterRateLimiter
            strategy = self._strategies[key] = cls(storage)
        return strategy

    async def close(self) -> None:
        """Close the connections to Redis."""
        if self._pool is not None:
            await self._pool.aclose()

    async def check_redis(self) -> None:
        """Raise unless Redis answers a PING (for readiness); nothing to check without it."""
        if self._redis is not None and not await self._redis.check():
            REDIS_ERRORS.labels("readiness").inc()
            raise ConnectionError("redis does not answer")
