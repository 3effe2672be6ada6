"""The bus across processes: each commit of any process reaches the listeners of every process.

``RedisBus`` is a ``Hub`` (the in-process fan-out) that also carries each commit over Redis pub/sub,
on one channel ``{redis_prefix}:bus``, as one message of two JSON lines. The first, short, routes
it: the committing process's id, the time, the tables, event types and players the commit concerns.
The second carries it: the stored events (unredacted: Redis is inside the trust boundary, like
PostgreSQL), the notifications and the table as committed (``app.bus.message.wire``: its row, seats
and snapshot, so a process that caches the table updates its copy instead of loading it from the
database). Every process delivers the messages of the others to its own hub, and its own commits
straight away (it skips its own messages when they come back). A process reads the second line only
when its hub ``listens`` to the commit (a socket on that table or player, the bot runner's event
types), and drops its cached copy of a table nobody listens to here: with a proxy that sends a
table's requests and sockets to one process (``deploy/nginx.conf``), most commits concern no other
process, which then pays for reading one short line.

Pub/sub is fire-and-forget, and PostgreSQL already keeps the numbered log, so nothing here
tries to be reliable: a listener that sees a seq jump, or a change of ``epoch``, or a degraded
``health()``, reads the log (``TableService.log_since``) — see ``app.api.live.audiences``.

Revoked tokens go on a second channel, ``{redis_prefix}:revoke`` (a JSON list of token hashes):
each process's token cache evicts them (``app.service.tokens``); a revocation lost while Redis
is down is covered by the cache's short lifetime.

Redis down: commits still apply and still reach this process's listeners; messages for the
others are dropped (counted); ``health()`` names the problem, and listeners poll the log every
``hub.POLL_INTERVAL`` s. The listener task reconnects every ``retry`` s; once subscribed again
it bumps ``epoch`` and ``health()`` is None.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from typing import Any

import hiredis
import orjson
from prometheus_client import Counter, Gauge, Histogram

from app.bus.hub import Hub, Notification
from app.bus.message import Sent, wire
from app.bus.redis_link import Link, Reply, connect, pack
from app.engine import Event
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
    "Commits of other processes received that nothing in this process listens to (not decoded)",
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


def encode(
    origin: str,
    events: list[StoredEvent],
    notes: list[Notification],
    committed: Committed | None = None,
) -> bytes:
    """One commit as a bus message: its route, a newline, its body (orjson writes no raw
    newline inside a document)."""
    tables = {s.table_id for s in events}
    if committed is not None:
        tables.add(committed.after.table.id)
    route = {
        "o": origin,
        "t": time.time(),
        "tables": sorted(tables),
        "types": sorted({s.event.type for s in events}),
        "players": sorted({n.player_id for n in notes}),
    }
    body = {
        "e": [
            [s.table_id, s.seq, s.match_number, s.hand_number, s.event.to_dict()] for s in events
        ],
        "n": [[n.player_id, n.type, n.table_id, n.data] for n in notes],
        "a": None if committed is None else wire(committed),
    }
    return orjson.dumps(route) + b"\n" + orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


def route(raw: bytes) -> tuple[dict[str, Any], bytes]:
    """A bus message's route (its first line, parsed) and its body, not yet parsed."""
    head, _, body = raw.partition(b"\n")
    parsed: dict[str, Any] = orjson.loads(head)
    return parsed, body


def read_body(raw: bytes) -> tuple[list[StoredEvent], list[Notification], Sent | None]:
    """A bus message's second line: (events, notifications, the table as committed, if sent)."""
    body: dict[str, Any] = orjson.loads(raw)
    events = [StoredEvent(t, s, m, h, Event.from_dict(e)) for t, s, m, h, e in body["e"]]
    notes = [Notification(p, kind, t, d) for p, kind, t, d in body["n"]]
    table = body.get("a")
    sent = Sent(table) if isinstance(table, list) and len(table) == Sent.FIELDS else None
    return events, notes, sent


class RedisBus(Hub):
    """A ``Hub`` whose commits also reach the hubs of every other process on the same Redis.

    Two connections (``app.bus.redis_link``): one subscribed, whose messages are handled in
    the callback that reads them, and one that publishes: the commits of one pass of the event
    loop go out in one write, without waiting for Redis's answers.
    """

    def __init__(self, url: str, prefix: str, *, retry: float = 0.5) -> None:
        super().__init__()
        self.url = url
        self.channel = f"{prefix}:bus"
        # Revoked tokens' hashes (a JSON list), for every process's token cache.
        self.revocations = f"{prefix}:revoke"
        self._channel, self._revocations = self.channel.encode(), self.revocations.encode()
        self.origin = uuid.uuid4().hex
        # How this process's own messages begin (``encode`` writes the origin first): they
        # come back from Redis and are skipped before they are parsed.
        self._mine = orjson.dumps({"o": self.origin})[:-1]
        self.retry = retry
        # PUBLISH commands, packed, waiting for the next write: the commits, and before them
        # the revocations and hellos.
        self._outbox: deque[bytes] = deque()
        self._first: list[bytes] = []
        self._flushing = False  # a write is scheduled for this pass of the loop
        self._publisher: Link | None = None
        self._written = 0  # commands written on the publishing link (each gets an answer)
        self._subscriber: Link | None = None
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
        message = encode(self.origin, events, notes, committed)
        self._outbox.append(pack(b"PUBLISH", self._channel, message))
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
            link.write(b"".join([*self._first, *self._outbox]))
            self._written += len(self._first) + len(self._outbox)
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

    async def _listen(self) -> None:
        while True:
            try:
                link = await connect(self.url, self._received, SOCKET_TIMEOUT)
                self._subscriber = link
                try:
                    link.send(b"SUBSCRIBE", self._channel, self._revocations)
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
        if kind == b"subscribe":
            if channel == self._channel:
                self._up()
        elif kind != b"message" or not isinstance(data, bytes):
            return  # a pong
        elif channel == self._revocations:
            # Its own too: harmless, the hashes are gone from its cache already.
            Hub.revoke(self, orjson.loads(data))
        elif not data.startswith(self._mine):
            if len(data) < 100 and b'"hello":' in data:
                self.epoch += 1  # another process is back (``_up``)
                return
            try:
                self._remote_commit(data)
            except Exception:
                log.exception("bus message not understood; listeners fill any gap from the log")

    def _remote_commit(self, data: bytes) -> None:
        head, raw = route(data)
        if head["o"] == self.origin:
            return
        BUS_RECEIVED.inc()
        BUS_LAG.observe(max(0.0, time.time() - head["t"]))
        # A cached copy of a table nobody here listens to is dropped rather than kept up to
        # date: the next commits there are then not even read (a request for it loads it).
        tables: list[str] = head["tables"]
        listened = [t for t in tables if self.listened(t)]
        for table_id in tables:
            if table_id not in listened:
                for callback in self._remote:
                    callback(table_id, None)
        if not self.listens(listened, head["types"], head["players"]):
            BUS_SKIPPED.inc()
            return
        events, notes, table = read_body(raw)
        # Caches first: a listener woken by these events may act on the table.
        for table_id in listened:
            state = table if table and table.table_id == table_id else None
            for callback in self._remote:
                callback(table_id, state)
        Hub.deliver(self, events, notes)

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
