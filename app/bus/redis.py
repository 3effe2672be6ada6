"""The bus across processes: each commit reaches the listeners of the processes that listen to it.

``RedisBus`` is a ``Hub`` (the in-process fan-out) that also carries each commit over Redis pub/sub,
on one channel per thing a process may listen to: ``{redis_prefix}:table:{table_id}`` (the stored
events of that table, unredacted: Redis is inside the trust boundary, like PostgreSQL, and the
table as committed, ``app.bus.message.wire``: its row, seats and snapshot, so a process that
caches the table updates its copy instead of loading it), ``{redis_prefix}:player:{player_id}``
(that player's notifications; ``LOBBY``'s news goes to ``...:player:lobby``) and
``{redis_prefix}:event:{type}`` (the events of a type the workers watch across tables, ``watched``:
the bot runner's ``bot_seated`` / ``match_started``, the tournaments' ``match_over`` /
``match_aborted``; a commit publishes these only for the types it has). Each message is two JSON
lines: the committing process's id and the time, then the body (``app.bus.channels``).

A process subscribes to a channel while a subscription to its table, player or type is open in
its hub (a table feed with sockets, the bot runner driving a table, a player's socket, a worker
watching types), on its one subscribed connection, and leaves it (``UNSUBSCRIBE``) with the last
one: it receives nothing about the tables and players it does not serve, whichever replica a
proxy sends their requests to (``ginrummy_bus_foreign_messages_total`` counts what it would, 0).
Redis answers subscriptions in order, so ``await subscribed()`` returns once every one asked for
so far is in place: a listener awaits it between subscribing and reading the log, and nothing
committed in between is lost. The process's own commits reach its listeners straight away (the
copy Redis sends back is skipped before it is parsed). Its table cache keeps the tables it
committed or loaded without a subscription of their own: a copy another process moved on since
is caught by the version guard (``TableService._decide``), and one listened to here is kept up
to date by the table's messages.

A commit's player messages are published before its table's, so a table socket's ``your_turn``
(which a feed forwards after the table's events) is already there when the events arrive.

Pub/sub is fire-and-forget, and PostgreSQL already keeps the numbered log, so nothing here
tries to be reliable: a listener that sees a seq jump, or a change of ``epoch``, or a degraded
``health()``, reads the log (``TableService.log_since``) — see ``app.api.live.audiences``.

Revoked tokens go on ``{redis_prefix}:revoke`` (a JSON list of token hashes), and each process's
hello (``_hello``) on ``{redis_prefix}:bus``: every process subscribes to both. Each process's
token cache evicts the revoked ones (``app.service.tokens``); a revocation lost while Redis is
down is covered by the cache's short lifetime.

Redis down: commits still apply and still reach this process's listeners; messages for the
others are dropped (counted); ``health()`` names the problem, and listeners poll the log every
``hub.POLL_INTERVAL`` s. The listener task reconnects every ``retry`` s, subscribes again to
every channel listened to here; once subscribed it bumps ``epoch`` and ``health()`` is None.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Iterable

import hiredis
import orjson
from prometheus_client import Counter, Gauge, Histogram

from app.bus.channels import (
    PLAYER,
    TABLE,
    TYPE,
    commit_messages,
    read_events,
    read_notes,
    read_table,
    route,
)
from app.bus.hub import Hub, Notification, Subscription
from app.bus.redis_link import Link, Reply, connect, pack
from app.table.model import Committed, StoredEvent

log = logging.getLogger(__name__)

BUS_DEGRADED = Gauge("ginrummy_bus_degraded", "1 while the Redis bus is unavailable")
BUS_OUTAGES = Counter("ginrummy_bus_outages_total", "Times the Redis bus became unavailable")
BUS_PUBLISHED = Counter("ginrummy_bus_published_total", "Commits published to Redis")
BUS_DROPPED = Counter(
    "ginrummy_bus_dropped_total", "Commits not published to Redis (it was down; others poll)"
)
BUS_RECEIVED = Counter("ginrummy_bus_received_total", "Commits of other processes received")
BUS_SKIPPED = Counter(
    "ginrummy_bus_skipped_total",
    "Messages of other processes received on a channel this process was leaving (sent before "
    "Redis took its UNSUBSCRIBE; not decoded)",
)
BUS_FOREIGN = Counter(
    "ginrummy_bus_foreign_messages_total",
    "Messages of other processes received about a table, player or event type this process "
    "does not listen to (and was not leaving): 0 unless the bus subscribes too widely",
)
BUS_LAG = Histogram(
    "ginrummy_bus_delivery_seconds",
    "From a commit's publication by one process to its delivery in another",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)

# Commits waiting to be published; beyond this (Redis too slow) the oldest are dropped.
OUTBOX_LIMIT = 10000
# Seconds of silence after which the listener pings Redis, and the wait for any answer.
PING_AFTER = 1.0
# The wait for a connection to Redis (and its AUTH).
SOCKET_TIMEOUT = 2.0


class RedisBus(Hub):
    """A ``Hub`` whose commits also reach the hubs of the other processes that listen to them.

    Two connections (``app.bus.redis_link``): one subscribed, whose messages are handled in
    the callback that reads them, and one that publishes: the commits of one pass of the event
    loop go out in one write, without waiting for Redis's answers. ``watched``: the event types
    carried on their own channels, for ``tables(types)`` subscribers across tables.
    """

    def __init__(
        self, url: str, prefix: str, *, retry: float = 0.5, watched: Iterable[str] = ()
    ) -> None:
        super().__init__()
        self.url = url
        self.channel = f"{prefix}:bus"  # the processes' hellos (``_hello``)
        # Revoked tokens' hashes (a JSON list), for every process's token cache.
        self.revocations = f"{prefix}:revoke"
        self._channel, self._revocations = self.channel.encode(), self.revocations.encode()
        self._prefix = f"{prefix}:".encode()
        self._table_at = self._prefix + TABLE
        self._player_at = self._prefix + PLAYER
        self._type_at = self._prefix + TYPE
        self.watched = frozenset(watched)
        self.origin = uuid.uuid4().hex
        # How this process's own messages begin (``_head`` writes the origin first): they
        # come back from Redis and are skipped before they are parsed.
        self._mine = orjson.dumps({"o": self.origin})[:-1]
        self.retry = retry
        # Each commit's PUBLISH commands, packed, and how many they are (each gets an answer).
        self._outbox: deque[tuple[bytes, int]] = deque()
        self._first: list[bytes] = []  # hellos and revocations, before any commit
        self._flushing = False
        self._publisher: Link | None = None
        self._written = 0  # commands written on the publishing link (each gets an answer)
        self._subscriber: Link | None = None
        # On the subscribed link: the channel replies asked for and those answered (Redis
        # answers in order), the waiters of ``subscribed`` (with the count each waits for),
        # and the channels left whose ``UNSUBSCRIBE`` Redis has not answered yet.
        self._subs_asked = 0
        self._subs_answered = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._leaving: dict[bytes, int] = {}
        self._problem: str | None = "redis: not connected yet"
        self._outage = False  # an outage was logged and counted, and has not ended yet
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Subscribe (waiting up to a few seconds: a process that starts with Redis down
        starts degraded) and start publishing."""
        BUS_DEGRADED.set(1)
        self._tasks = [
            asyncio.create_task(self._listen()),
            asyncio.create_task(self._publish()),
        ]
        deadline = time.monotonic() + 2 * SOCKET_TIMEOUT
        while self._problem is not None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def health(self) -> str | None:
        """None while subscribed to Redis; else the reason (events of other processes then
        arrive by polling the log)."""
        return self._problem

    # Listening: a channel per table, player and watched type with a subscriber here.

    def tables(self, types: Iterable[str]) -> Subscription[StoredEvent]:
        """Every table's events of these ``types``: only ``watched`` ones cross processes."""
        wanted = list(types)
        unwatched = set(wanted) - self.watched
        if unwatched:
            raise ValueError(f"event types not carried between processes: {sorted(unwatched)}")
        return super().tables(wanted)

    def _watch_table(self, table_id: str, listening: bool) -> None:
        self._follow(self._table_at + table_id.encode(), listening)

    def _watch_type(self, event_type: str, listening: bool) -> None:
        self._follow(self._type_at + event_type.encode(), listening)

    def _watch_player(self, player_id: str, listening: bool) -> None:
        self._follow(self._player_at + player_id.encode(), listening)

    def _follow(self, channel: bytes, listening: bool) -> None:
        """Subscribe to ``channel`` or leave it, now (without a connection, the next one
        subscribes to what is listened to then)."""
        link = self._subscriber
        if link is None:
            return
        if listening:
            link.send(b"SUBSCRIBE", channel)
        else:
            link.send(b"UNSUBSCRIBE", channel)
            self._leaving[channel] = self._leaving.get(channel, 0) + 1
        self._subs_asked += 1

    def _listened(self) -> list[bytes]:
        """Every channel something here listens to."""
        return [
            *(self._table_at + t.encode() for t in self._tables),
            *(self._type_at + t.encode() for t in self._types),
            *(self._player_at + p.encode() for p in self._players),
        ]

    async def subscribed(self) -> None:
        """Return once Redis took every subscription asked for so far (at once while the bus
        is degraded: listeners read the log then, and again once it is back)."""
        if self._problem is not None or self._subs_answered >= self._subs_asked:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((self._subs_asked, waiter))
        await waiter

    def _release(self, everyone: bool = False) -> None:
        """Wake the waiters of ``subscribed`` whose subscriptions Redis took (or all)."""
        kept = []
        for asked, waiter in self._waiters:
            if everyone or asked <= self._subs_answered:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                kept.append((asked, waiter))
        self._waiters = kept

    # Publishing.

    def deliver(
        self,
        events: list[StoredEvent],
        notes: list[Notification],
        committed: Committed | None = None,
    ) -> None:
        super().deliver(events, notes, committed)
        if len(self._outbox) >= OUTBOX_LIMIT:
            self._outbox.popleft()
            BUS_DROPPED.inc()
        messages = commit_messages(self.origin, events, notes, committed, self.watched)
        commands = [pack(b"PUBLISH", self._prefix + channel, m) for channel, m in messages]
        self._outbox.append((b"".join(commands), len(commands)))
        self._schedule()

    def revoke(self, token_hashes: list[str]) -> None:
        super().revoke(token_hashes)
        self._first.append(pack(b"PUBLISH", self._revocations, orjson.dumps(token_hashes)))
        self._schedule()

    def _schedule(self) -> None:
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write what waits, in commit order, in one write; while Redis is down, drop it
        (the others poll the log)."""
        self._flushing = False
        if not self._outbox and not self._first:
            return
        if self._problem is not None:
            BUS_DROPPED.inc(len(self._outbox))
        else:
            link = self._publisher
            if link is None or not link.writable:
                return  # kept (up to OUTBOX_LIMIT) until the link connects or drains
            link.write(b"".join([*self._first, *(c for c, _ in self._outbox)]))
            self._written += len(self._first) + sum(n for _, n in self._outbox)
            BUS_PUBLISHED.inc(len(self._outbox))
        self._first.clear()
        self._outbox.clear()

    def _down(self, reason: str) -> None:
        if not self._outage:
            self._outage = True
            log.warning("bus degraded: %s", reason)
            BUS_OUTAGES.inc()
            BUS_DEGRADED.set(1)
        self._problem = reason
        self._release(everyone=True)

    def _up(self) -> None:
        if self._outage:
            self._outage = False
            # A warning too: the end of an outage belongs next to its start in the log.
            log.warning("bus connected to redis again")
        self._problem = None
        self.epoch += 1
        BUS_DEGRADED.set(0)
        self._hello()

    def _hello(self) -> None:
        """Tell the others that what this process published may have been lost: what it
        committed while it could not publish was dropped, and a process that reconnected first
        has stopped polling the log. Each of them takes this as a new epoch (its listeners
        read the log once)."""
        hello = orjson.dumps({"o": self.origin, "hello": self.epoch})
        self._first.append(pack(b"PUBLISH", self._channel, hello))
        self._schedule()

    # Receiving.

    async def _listen(self) -> None:
        while True:
            try:
                link = await connect(self.url, self._received, SOCKET_TIMEOUT)
                # What is listened to here, then the two channels of every process: once
                # Redis confirms the last of them, it has taken them all (``_up``).
                channels = [*self._listened(), self._revocations, self._channel]
                self._subscriber = link
                self._subs_asked, self._subs_answered, self._leaving = len(channels), 0, {}
                try:
                    link.send(b"SUBSCRIBE", *channels)
                    reason = await self._watch(link)
                finally:
                    self._subscriber = None
                    link.close()
                self._down(f"redis: {reason}")
            except (OSError, TimeoutError) as exc:
                self._down(f"redis: {type(exc).__name__}: {exc}")
            await asyncio.sleep(self.retry)

    async def _watch(self, link: Link) -> str:
        """Ping Redis after each silence of ``PING_AFTER`` s; the reason the subscription ended
        (the connection lost, or a ping unanswered for as long)."""
        heard, pinged = link.replies, False
        while True:
            await asyncio.wait([link.lost], timeout=PING_AFTER)
            if link.lost.done():
                return link.lost.result()
            if link.replies != heard:
                heard, pinged = link.replies, False
            elif pinged:
                return "ConnectionError: no answer to ping"
            else:
                link.send(b"PING")
                pinged = True

    def _received(self, reply: Reply) -> None:
        """A reply on the subscribed connection: the other processes' commits go to this hub
        (a message this release cannot read is logged and skipped, never the end of the bus)."""
        if isinstance(reply, hiredis.ReplyError):
            # Refused (not subscribed, or no longer): start again, degraded meanwhile.
            if self._subscriber is not None:
                self._subscriber.close(f"ReplyError: {reply}")
            return
        kind, channel, data = reply[0], reply[1], reply[2] if len(reply) > 2 else None
        if kind in (b"subscribe", b"unsubscribe"):
            self._subs_answered += 1
            if kind == b"unsubscribe" and channel in self._leaving:
                self._leaving[channel] -= 1
                if not self._leaving[channel]:
                    del self._leaving[channel]
            if kind == b"subscribe" and channel == self._channel:
                self._up()
            self._release()
        elif kind != b"message" or not isinstance(data, bytes):
            return  # a pong
        elif channel == self._revocations:
            # Its own too: harmless, the hashes are gone from its cache already.
            Hub.revoke(self, orjson.loads(data))
        elif not data.startswith(self._mine):
            try:
                self._remote(channel, data)
            except Exception:
                log.exception("bus message not understood; listeners fill any gap from the log")

    def _remote(self, channel: bytes, data: bytes) -> None:
        """Another process's message on ``channel``: to the listeners of its table, player
        or event type here."""
        head, raw = route(data)
        if channel == self._channel:
            if "hello" in head:
                self.epoch += 1  # another process is back (``_up``)
            return
        BUS_RECEIVED.inc()
        BUS_LAG.observe(max(0.0, time.time() - head["t"]))
        if channel.startswith(self._table_at):
            table_id = channel[len(self._table_at) :].decode()
            if table_id not in self._tables:
                self._stray(channel)
                # A copy cached here is stale, and nothing here keeps it up to date.
                for callback in self._remote_callbacks:
                    callback(table_id, None)
                return
            events, table = read_table(raw)
            # Caches first: a listener woken by these events may act on the table.
            state = table if table is not None and table.table_id == table_id else None
            for callback in self._remote_callbacks:
                callback(table_id, state)
            self.to_tables(events)
        elif channel.startswith(self._player_at):
            if channel[len(self._player_at) :].decode() not in self._players:
                self._stray(channel)
                return
            self.notify(read_notes(raw))
        elif channel.startswith(self._type_at):
            if channel[len(self._type_at) :].decode() not in self._types:
                self._stray(channel)
                return
            self.to_types(read_events(raw))
        else:
            self._stray(channel)

    def _stray(self, channel: bytes) -> None:
        """A message nothing here listens to: the tail of a channel being left, or foreign."""
        if channel in self._leaving:
            BUS_SKIPPED.inc()
        else:
            BUS_FOREIGN.inc()

    async def _publish(self) -> None:
        """Keep the publishing connection open; after it was lost, say hello again (what was
        written on it may not have reached Redis)."""
        lost = False
        while True:
            try:
                link = await connect(self.url, self._answered, SOCKET_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                if not lost:
                    log.warning("bus cannot publish: redis: %s: %s", type(exc).__name__, exc)
                lost = True
                await asyncio.sleep(self.retry)
                continue
            link.on_drain = self._flush
            self._publisher, self._written = link, 0
            if lost and self._problem is None:
                self._hello()
            self._schedule()
            try:
                reason = await self._watch_publisher(link)
            finally:
                self._publisher = None
                link.close()
            log.warning("bus publishing connection lost: %s", reason)
            lost = True
            await asyncio.sleep(self.retry)

    async def _watch_publisher(self, link: Link) -> str:
        """The reason the publishing link ended: lost, or silent (a command written a whole
        ``PING_AFTER`` s ago still unanswered: a connection that died without closing, or a
        Redis that stopped answering; commits would pile up unseen)."""
        owed = 0
        while True:
            await asyncio.wait([link.lost], timeout=PING_AFTER)
            if link.lost.done():
                return link.lost.result()
            if link.replies < owed:
                return f"ConnectionError: no answer to PUBLISH for {PING_AFTER:g} s"
            owed = self._written

    def _answered(self, reply: Reply) -> None:
        if isinstance(reply, hiredis.ReplyError):
            BUS_DROPPED.inc()
            log.warning("bus publish refused: %s", reply)
