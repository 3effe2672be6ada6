"""The in-process publish seam: the pipeline publishes here after each commit; WebSockets listen.

Interfaces for transport code (the WebSocket endpoints):

- ``hub.table(table_id)`` -> ``Subscription[StoredEvent]``: every event committed at that table
  from now on, in seq order (the pipeline publishes under the table's lock, after the commit).
  Each item is a ``StoredEvent(table_id, seq, match_number, hand_number, event)``; redact it per
  recipient with ``item.event.for_recipient(seat_or_None)`` — never send ``event.to_dict()``.
- ``hub.tables(types)`` -> ``Subscription[StoredEvent]``: every table's events of these types
  (the bot runner watches ``bot_seated`` and ``match_started`` for tables it may have to drive).
- ``hub.player(player_id)`` -> ``Subscription[Notification]``: that player's notifications
  across all tables (``your_turn``, ``opponent_joined``, ``match_finished``,
  ``rematch_offered``).
- Use a subscription as ``async with hub.table(tid) as sub: async for item in sub: ...``.
  Subscribe *before* reading the backlog from the store (``TableService.events_since``), await
  ``hub.subscribed()`` between the two, and drop items whose seq you already sent, so nothing
  falls between the two.
- A subscriber that falls ``QUEUE_LIMIT`` items behind is marked ``overflowed`` and its
  iteration stops; it must resync from the store (events since its last seq, or a full view).

The ``Hub`` is the in-process bus (no ``REDIS_URL``): it sees this process's commits only.
``app.bus.redis.RedisBus`` extends it to every process on one Redis. Both offer, besides the
subscriptions: ``deliver(events, notes)`` (what the pipeline calls after each commit),
``start()`` / ``stop()``, ``health() -> str | None`` (None: live; else why events from other
processes may be late, and listeners should read the log every ``POLL_INTERVAL`` s) and
``epoch`` (bumped each time the bus (re)connects: a listener that saw another epoch reads the
log once, since messages may have been lost meanwhile), ``on_remote(callback)`` (called with
the table id of each commit another process made at a table listened to here, and the table as
it committed it, a ``app.bus.message.Sent``, or None: the pipeline's table cache takes it, or
drops its copy; see ``TableService``), ``await subscribed()`` (once it returns, every
subscription made before hears the other processes' commits: a listener awaits it between
subscribing and reading the log), and
``revoke(token_hashes)`` / ``on_revoke(callback)`` (a revoked token leaves every process's token
cache: ``app.service.tokens``).

A process hears only what it listens to: ``RedisBus`` subscribes to a table's, player's or event
type's channel while a subscription to it is open here, and leaves it with the last one.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, TypeVar

from app.bus.message import Sent
from app.table.model import Committed, StoredEvent

T = TypeVar("T")

QUEUE_LIMIT = 1000
# The lobby's listeners subscribe as this "player" (no player's id: those are 32 hex digits):
# the lobby's news (``seek_added``, ``seek_removed``) reaches them on every process.
LOBBY = "lobby"
# How often a listener reads the log while the bus is degraded (seconds).
POLL_INTERVAL = 0.5


@dataclass(frozen=True, slots=True)
class Notification:
    """A message for one player about one of their tables."""

    player_id: str
    type: str
    table_id: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The message; one about no table (the lobby's) has no ``table_id``."""
        if not self.table_id:
            return {"type": self.type, **self.data}
        return {"type": self.type, "table_id": self.table_id, **self.data}


class Subscription(Generic[T]):
    """A queue of published items for one listener; iterate it, close it when done."""

    def __init__(
        self,
        registry: dict[str, set[Subscription[T]]],
        *keys: str,
        watch: Callable[[str, bool], object] | None = None,
    ) -> None:
        self._registry = registry
        self._keys = keys
        # Told (key, True) when a key gets its first subscriber here, (key, False) when it
        # loses its last: the bus then subscribes to its channel, or leaves it.
        self._watch = watch
        # Unbounded underneath: the limit is enforced in ``put`` so that the end-of-stream
        # marker always fits and the items kept are a gapless prefix of what was published.
        self._queue: asyncio.Queue[T | None] = asyncio.Queue()
        self.overflowed = False
        for key in keys:
            first = key not in registry
            registry[key].add(self)
            if first and watch is not None:
                watch(key, True)

    def put(self, item: T) -> None:
        """Queue ``item``; past ``QUEUE_LIMIT`` waiting items, stop here and mark the overflow.

        Items after the limit are dropped, never older ones, so a listener that resyncs from
        the last seq it received loses nothing.
        """
        if self.overflowed:
            return
        if self._queue.qsize() >= QUEUE_LIMIT:
            self.overflowed = True
            self._queue.put_nowait(None)
            return
        self._queue.put_nowait(item)

    async def get(self) -> T | None:
        """The next item, or None once the subscription overflowed or closed."""
        if self.overflowed and self._queue.empty():
            return None
        return await self._queue.get()

    def get_nowait(self) -> T | None:
        """An item already queued, or None when there is none (never waits)."""
        if self._queue.empty():
            return None
        return self._queue.get_nowait()

    def wake(self) -> None:
        """Make the listener's next ``get`` return None (after the items already queued)
        without closing or overflowing: a timer's wake-up; ``overflowed`` tells them apart."""
        self._queue.put_nowait(None)

    def close(self) -> None:
        for key in self._keys:
            subs = self._registry.get(key)
            if subs is not None:
                subs.discard(self)
                if not subs:
                    del self._registry[key]
                    if self._watch is not None:
                        self._watch(key, False)
        self._queue.put_nowait(None)

    def __aiter__(self) -> AsyncIterator[T]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[T]:
        while (item := await self.get()) is not None:
            yield item

    async def __aenter__(self) -> Subscription[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Hub:
    """Fan-out of committed table events and player notifications to in-process listeners."""

    def __init__(self) -> None:
        self._tables: dict[str, set[Subscription[StoredEvent]]] = defaultdict(set)
        # ``tables(types)`` subscribers, by event type.
        self._types: dict[str, set[Subscription[StoredEvent]]] = defaultdict(set)
        self._players: dict[str, set[Subscription[Notification]]] = defaultdict(set)
        self.epoch = 0
        # Called for each commit another process made (see ``on_remote``).
        self._remote_callbacks: list[Callable[[str, Sent | None], object]] = []
        # Called with the hashes of revoked tokens, from any process (see ``on_revoke``).
        self._revoked: list[Callable[[list[str]], object]] = []

    def on_remote(self, callback: Callable[[str, Sent | None], object]) -> None:
        """Call ``callback(table_id, sent)`` for each commit of another process: ``sent`` is
        the table as it committed it, or None (from a process that sent none, or at a table
        nobody listens to here): a cache of that table here is stale. In process: never."""
        self._remote_callbacks.append(callback)

    async def subscribed(self) -> None:
        """Return once every subscription made here so far hears the other processes' commits
        (in process: at once). Await it after subscribing and before reading the log: what is
        committed from then on reaches the subscription."""

    def _watch_table(self, table_id: str, listening: bool) -> None:
        """A table got its first subscriber here, or lost its last (in process: nothing)."""

    def _watch_type(self, event_type: str, listening: bool) -> None:
        """An event type got its first ``tables(types)`` subscriber here, or lost its last."""

    def _watch_player(self, player_id: str, listening: bool) -> None:
        """A player (or ``LOBBY``) got their first subscriber here, or lost their last."""

    def on_revoke(self, callback: Callable[[list[str]], object]) -> None:
        """Call ``callback(token_hashes)`` for each revocation made by any process."""
        self._revoked.append(callback)

    def revoke(self, token_hashes: list[str]) -> None:
        """Tell every process's token cache that these tokens are revoked."""
        for callback in self._revoked:
            callback(token_hashes)

    async def start(self) -> None:
        """Nothing to connect in process."""

    async def stop(self) -> None:
        """Nothing to disconnect in process."""

    def health(self) -> str | None:
        """None: every commit reaches every listener at once. In process, always."""
        return None

    def deliver(
        self,
        events: list[StoredEvent],
        notes: list[Notification],
        committed: Committed | None = None,
    ) -> None:
        """One commit's events, then its notifications (the pipeline calls this after commit,
        with the ``committed`` table, which a bus carries to the other processes' caches)."""
        self.publish(events)
        self.notify(notes)

    def table(self, table_id: str) -> Subscription[StoredEvent]:
        return Subscription(self._tables, table_id, watch=self._watch_table)

    def tables(self, types: Iterable[str]) -> Subscription[StoredEvent]:
        """Every table's events of these ``types``."""
        return Subscription(self._types, *types, watch=self._watch_type)

    def player(self, player_id: str) -> Subscription[Notification]:
        return Subscription(self._players, player_id, watch=self._watch_player)

    def present(self) -> list[str]:
        """The players with a socket open on this process (a subscription to their
        notifications: the player socket, a table socket, the lobby socket with a token)."""
        return [p for p in self._players if p != LOBBY]

    def publish(self, events: Iterable[StoredEvent]) -> None:
        """Hand committed events to every subscriber of their table and of their type."""
        for item in events:
            for sub in list(self._tables.get(item.table_id, ())):
                sub.put(item)
            for sub in list(self._types.get(item.event.type, ())):
                sub.put(item)

    def to_tables(self, events: Iterable[StoredEvent]) -> None:
        """Hand events to the subscribers of their table only (another process's commit,
        as its table's channel carried it)."""
        for item in events:
            for sub in list(self._tables.get(item.table_id, ())):
                sub.put(item)

    def to_types(self, events: Iterable[StoredEvent]) -> None:
        """Hand events to the ``tables(types)`` subscribers of their type only (another
        process's commit, as its type's channel carried it)."""
        for item in events:
            for sub in list(self._types.get(item.event.type, ())):
                sub.put(item)

    def notify(self, notifications: Iterable[Notification]) -> None:
        for note in notifications:
            for sub in list(self._players.get(note.player_id, ())):
                sub.put(note)
