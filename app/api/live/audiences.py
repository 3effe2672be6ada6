"""A table's sockets in this process, by audience: one subscription, one task, shared frames.

Every socket of a table used to run its own stream task on its own hub subscription, waking for
every event and every second. Here a process keeps one ``Feed`` per table with sockets open
(``Feeds.join`` / ``leave``): one ``hub.table`` subscription and one task. The task takes each
committed event, fills any gap from the log once for the table, renders the event once per
audience (seat 0, seat 1, spectators: ``app.api.live.frames``), frames it once
(``app.api.live.wire``) and hands the same text and frame bytes to every socket of that audience
without waiting (``Outbox.offer``: written straight to an idle socket's transport, else each
socket's bounded outbox and writer, ``app.api.live.socket.Socket``). A slow socket therefore
never holds up the feed, the other sockets or the pipeline.

The guarantees of the stream stay per socket (``Member``): the first message is its ``view``
(or its catch-up), then every seq exactly once and in order. A member joins the feed *before*
its catch-up reads the store, so the events committed meanwhile wait in its ``pending`` list;
``Member.go_live`` sends them after the catch-up and only then the member takes frames straight
from the feed. One timer per process (``Feeds``) sends the heartbeat of each quiet table and
wakes a feed's task to read the log while the bus is degraded or after it reconnected. A feed
that falls too far behind (its subscription overflowed, or a gap larger than
``ws_resume_limit``) loads the table once and sends each member a fresh ``view``.

A member opened with a token is held by it (``Tokens.hold``) from its join to its leave, on
whichever socket serves it (through ASGI or parked): the token's revocation, in any process,
ends it with an ``error`` (``token_revoked``) and close code 4401.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Protocol

from prometheus_client import Counter, Gauge

from app.api.live import client_out
from app.api.live.fanout import Batch, Direct, Ready, fan_out, take_if_in_step
from app.api.live.frames import Frames
from app.api.live.wire import frame
from app.bus.hub import POLL_INTERVAL, QUEUE_LIMIT, Notification, Subscription
from app.service.pipeline import TableService
from app.settings import Settings
from app.table.commands import Actor, seat_of
from app.table.model import Loaded, StoredEvent

log = logging.getLogger(__name__)

# How often the process's feed timer looks at the bus's health and the quiet tables (seconds;
# ``hub.POLL_INTERVAL`` while the bus is degraded, the heartbeat if that is shorter).
AWAKE = 1.0
# Sockets a feed sends one message to before it lets the loop run other work.
CHUNK = 128
# A socket whose token was revoked: its last message, then this close.
CLOSE_REVOKED = 4401
REVOKED_REASON = "token revoked"

GAP_FILLS = Counter(
    "ginrummy_ws_gap_fills_total",
    "Times a table feed read missing events from the log (a gap, a bus reconnect, polling)",
)
FEEDS = Gauge("ginrummy_ws_table_feeds", "Tables with sockets open in this process")


class Outbox(Protocol):
    """Where a member's messages go: a socket's bounded outbox (never waits)."""

    def offer(self, message: str, framed: bytes | None = None) -> None: ...

    def offer_many(self, messages: list[str], framed: bytes) -> None:
        """``messages`` in order; ``framed``: their frames joined (one write where it can)."""

    def end(self, code: int, reason: str, last: str | None = None) -> None:
        """Close with ``code``: nothing queued is sent but ``last``; nothing more is read."""


class Member:
    """One socket's place in a table's feed: its audience and the last seq it was given."""

    __slots__ = (
        "actor",
        "behind",
        "direct",
        "feed",
        "last",
        "notes",
        "outbox",
        "pending",
        "seat",
        "token",
    )

    def __init__(
        self,
        outbox: Outbox,
        actor: Actor | None,
        notes: Subscription[Notification] | None,
        token: str | None = None,
    ) -> None:
        self.outbox = outbox
        self.actor = actor
        self.notes = notes
        self.token = token  # the hash of the token the socket was opened with
        self.seat: int | None = None
        self.last = 0
        # Events published while the member catches up; None once it takes frames live.
        self.pending: list[StoredEvent] | None = []
        self.behind = False  # more than ``QUEUE_LIMIT`` pending: only a fresh view will do
        self.feed: Feed | None = None
        # The outbox again where the feed may write to its transport itself (``Direct``).
        self.direct: Direct | None = None

    def joined_as(self, stored: StoredEvent) -> bool:
        """Whether ``stored`` seats this member's player (it moves to that seat's audience)."""
        event = stored.event
        return (
            self.actor is not None
            and event.type == "player_joined"
            and event.public["player"]["id"] == self.actor.player_id
        )

    def give(self, stored: StoredEvent, frames: Frames) -> None:
        """Send ``stored`` in this member's own rendering (catch-up, pending, its own gap)."""
        if stored.seq <= self.last:
            return
        if self.joined_as(stored):
            self.seat = int(stored.event.public["seat"])
        self.outbox.offer(frames.event(stored, self.seat))
        self.last = stored.seq

    def revoked(self) -> None:
        """The member's token was revoked (``Tokens.hold``): its socket is closed, 4401."""
        self.outbox.end(CLOSE_REVOKED, REVOKED_REASON, client_out.TOKEN_REVOKED)

    def turn_notes(self, table_id: str) -> None:
        """Forward the ``your_turn`` of this table that reached the player's subscription."""
        while self.notes is not None and (note := self.notes.get_nowait()) is not None:
            if note.type == "your_turn" and note.table_id == table_id:
                self.outbox.offer(client_out.note(note))


class Feed:
    """One table's sockets in this process, by audience, fed by one subscription and task."""

    def __init__(self, feeds: Feeds, table_id: str) -> None:
        self.feeds = feeds
        self.table_id = table_id
        self.hub = feeds.service.hub
        # Subscribed before any member reads the store: nothing falls between the two.
        self.sub: Subscription[StoredEvent] = self.hub.table(table_id)
        self.epoch = self.hub.epoch
        self.audiences: dict[int | None, set[Member]] = {0: set(), 1: set(), None: set()}
        # Of each audience, the members written straight (``_write``).
        self.ready: dict[int | None, Ready] = {0: Ready(), 1: Ready(), None: Ready()}
        self.joining: set[Member] = set()
        self.last: int | None = None  # the newest seq handed to the live members
        # A table state at least as new as ``last``, for the views of members that join.
        self.loaded: Loaded | None = None
        self.quiet_since = time.monotonic()  # when the feed last sent an event
        self.woken = False  # a wake-up from ``tick`` not yet taken by the task
        # Events handed to the live members but not sent yet: those that arrived together
        # (one commit's, or a burst while a fan-out ran) go to each socket in one write.
        self.batch: list[StoredEvent] = []
        self.batching = False
        self.flushing = False  # a fan-out is under way (no heartbeat meanwhile)
        self.task = asyncio.create_task(self._run())

    def members(self) -> int:
        return len(self.joining) + sum(len(m) for m in self.audiences.values())

    # Members.

    def add(self, member: Member) -> None:
        member.feed = self
        self.joining.add(member)

    def discard(self, member: Member) -> None:
        self.joining.discard(member)
        self._unready(member)
        self.audiences[member.seat].discard(member)

    def parked(self, member: Member) -> None:
        """``member``'s socket now takes frames straight (``Member.direct``): from the next
        event on if it is in step with its audience's others (``Ready``)."""
        ready = self.ready[member.seat]
        if not ready.sockets and not self.flushing:
            ready.last = member.last  # the first of its audience: the next batch follows it
        take_if_in_step(self, ready, self.audiences[member.seat], member)

    def _unready(self, member: Member) -> None:
        """``member`` is no longer written straight (``Ready.drop``)."""
        self.ready[member.seat].drop(member)

    async def snapshot(self) -> Loaded:
        """The table for a joining member's view: the one the feed holds while no event came
        after it, else a fresh load (kept for the next ones)."""
        # Every commit from here on reaches the feed (the bus has its table's channel), so
        # what the member reads next from the store leaves no gap before the feed's events.
        await self.hub.subscribed()
        loaded = self.loaded
        if loaded is None or self.last is None or loaded.table.last_seq < self.last:
            loaded = await self.feeds.service.load(self.table_id)
            if self.last is None or loaded.table.last_seq >= self.last:
                self.loaded = loaded
        return loaded

    async def go_live(self, member: Member) -> bool:
        """Send ``member`` what was published during its catch-up, then let it take frames
        from the feed. False: it fell too far behind meanwhile (a fresh view is needed)."""
        frames = self.feeds.frames
        while member.pending and not member.behind:
            batch, member.pending = member.pending, []
            for stored in batch:
                gap = stored.seq > member.last + 1
                if gap and not await self._fill_member(member, stored.seq - 1):
                    return False
                member.give(stored, frames)
        if member.behind:
            return False
        # No await from the last check to here: no event can slip between pending and live.
        member.pending = None
        self.joining.discard(member)
        self.audiences[member.seat].add(member)
        if self.last is None:
            self.last = member.last
        member.turn_notes(self.table_id)
        return True

    async def _fill_member(self, member: Member, upto: int) -> bool:
        limit = self.feeds.settings.ws_resume_limit
        wanted = min(upto - member.last, limit + 1)
        backlog = await self.feeds.service.log_since(self.table_id, member.last, wanted)
        if len(backlog) > limit:
            return False
        if backlog:
            GAP_FILLS.inc()
        for stored in backlog:
            member.give(stored, self.feeds.frames)
        return True

    # The task.

    async def _run(self) -> None:
        while True:
            item = await self.sub.get()
            sent = self.last
            try:
                if item is None and self.sub.overflowed:
                    await self._resync()
                    continue
                # Else None is ``tick`` waking the task: the bus is degraded or reconnected.
                if self.hub.health() is not None or self.hub.epoch != self.epoch:
                    # Other processes' events may be missing: read the log once.
                    self.epoch = self.hub.epoch
                    if self.last is not None:
                        await self._fill(None)
                self.batching = True
                try:
                    while item is not None:
                        await self._deliver(item)
                        item = self.sub.get_nowait()  # may take a wake-up: the log was just read
                finally:
                    self.batching = False
                await self._flush()
                # The pipeline notifies right after it publishes: the turn is already here.
                for seat in (0, 1):
                    for member in self.audiences[seat]:
                        member.turn_notes(self.table_id)
            except ResyncError:
                await self._resync()
            except Exception:
                log.exception("table feed failed; its sockets get a fresh view")
                await asyncio.sleep(AWAKE)
                with contextlib.suppress(Exception):
                    await self._resync()
            finally:
                self.woken = False  # the next tick may wake it again
                if self.last != sent:
                    self.quiet_since = time.monotonic()

    def tick(self, now: float, degraded: bool) -> None:
        """The process's timer (``Feeds``): wake the task to read the log while the bus is
        degraded or after it reconnected (once until the task has run); the heartbeat of a
        quiet table."""
        if (degraded or self.hub.epoch != self.epoch) and not self.woken:
            self.woken = True
            self.sub.wake()
        heartbeat = self.feeds.settings.ws_heartbeat
        if heartbeat and now - self.quiet_since >= heartbeat and not self.flushing:
            self._heartbeat()
            self.quiet_since = now

    async def _deliver(self, stored: StoredEvent) -> None:
        for member in self.joining:
            if member.pending is not None and not member.behind:
                member.pending.append(stored)
                if len(member.pending) > QUEUE_LIMIT:
                    member.behind = True  # go_live sees it: a fresh view
                    member.pending.clear()
        if self.last is not None:
            if stored.seq <= self.last:
                return
            if stored.seq > self.last + 1:
                await self._fill(stored.seq - 1)
        await self._fan_out(stored)

    async def _fill(self, upto: int | None) -> None:
        """Hand the live members the logged events after ``last`` (up to ``upto``, or all)."""
        assert self.last is not None
        limit = self.feeds.settings.ws_resume_limit
        wanted = limit + 1 if upto is None else min(upto - self.last, limit + 1)
        backlog = await self.feeds.service.log_since(self.table_id, self.last, wanted)
        if len(backlog) > limit:
            raise ResyncError
        if backlog:
            GAP_FILLS.inc()
        for stored in backlog:
            if stored.seq > self.last:
                await self._fan_out(stored)

    async def _fan_out(self, stored: StoredEvent) -> None:
        """Hand ``stored`` to the live members: with the batch (sent by ``_flush``) while the
        feed takes what has arrived, else at once."""
        if stored.event.type == "player_joined":
            await self._flush()  # what came before it, to the audiences as they were
            for member in [m for m in self.audiences[None] if m.joined_as(stored)]:
                self._unready(member)
                self.audiences[None].discard(member)
                member.seat = int(stored.event.public["seat"])
                self.audiences[member.seat].add(member)
        self.batch.append(stored)
        self.last = stored.seq
        if not self.batching:
            await self._flush()

    async def _flush(self) -> None:
        """The one rendering of each batched event per audience, to each live member of it:
        every event of the batch in one write per socket (``_write``)."""
        batch, self.batch = self.batch, []
        if not batch:
            return
        frames = self.feeds.frames
        stale: list[Member] = []
        self.flushing = True
        try:
            for seat, members in list(self.audiences.items()):
                if not members:
                    continue
                messages = [frames.event(stored, seat) for stored in batch]
                shared = Batch(batch, messages, [frame(m) for m in messages])
                await fan_out(self, seat, shared, stale, CHUNK)
        finally:
            self.flushing = False
        if stale:
            self.feeds.resync_later(self, stale)

    def _heartbeat(self) -> None:
        rendered: dict[int, tuple[str, bytes]] = {}
        for seat, members in self.audiences.items():
            ready = self.ready[seat]
            for member in members:
                last = ready.last if member in ready.sockets else member.last
                message = rendered.get(last)
                if message is None:
                    beat = client_out.heartbeat(last)
                    message = rendered[last] = (beat, frame(beat))
                member.outbox.offer(*message)

    async def _resync(self, only: list[Member] | None = None) -> None:
        """A fresh ``view`` for the live members (``only`` these): the feed or they fell too
        far behind to fill from the log."""
        if only is None:
            self.batch = []  # the fresh views supersede what was not sent yet
            # The new subscription before the old one closes: the bus never leaves the
            # table's channel meanwhile; both before the load, as a member does.
            old, self.sub = self.sub, self.hub.table(self.table_id)
            old.close()
            self.epoch = self.hub.epoch
            await self.hub.subscribed()
        loaded = await self.feeds.service.load(self.table_id)
        head = loaded.table.last_seq
        members = only or [m for ms in self.audiences.values() for m in ms]
        framed: dict[str, bytes] = {}  # each audience's view framed once
        for member in members:
            self._unready(member)
            self.audiences[member.seat].discard(member)
            member.seat = seat_of(loaded, member.actor)
            self.audiences[member.seat].add(member)
            view = self.feeds.frames.view(self.feeds.service, loaded, member.actor)
            wire = framed.get(view)
            if wire is None:
                wire = framed[view] = frame(view)
            member.outbox.offer(view, wire)
            member.last = head
        if only is None:
            self.last = head
            self.loaded = loaded

    async def resync(self, members: list[Member]) -> None:
        live = [m for m in members if m.feed is self and m.pending is None]
        if live:
            await self._resync(live)


class ResyncError(Exception):
    """Too far behind to fill from the log: fresh views."""


class Feeds:
    """The table feeds of this process (``app.state.feeds``)."""

    def __init__(self, service: TableService, settings: Settings, frames: Frames) -> None:
        self.service = service
        self.settings = settings
        self.frames = frames
        self._feeds: dict[str, Feed] = {}
        self._later: set[asyncio.Task[None]] = set()
        self._timer: asyncio.Task[None] | None = None

    def join(self, table_id: str, member: Member) -> Feed:
        """Register ``member`` (catching up) with the table's feed, started if need be."""
        feed = self._feeds.get(table_id)
        if feed is None:
            feed = self._feeds[table_id] = Feed(self, table_id)
            FEEDS.inc()
            if self._timer is None:
                self._timer = asyncio.create_task(self._ticks())
        feed.add(member)
        if member.token is not None:
            self.service.tokens.hold(member.token, member)
        return feed

    async def _ticks(self) -> None:
        """One timer for every feed of the process, while there are feeds: a feed's task
        waits for its next event only, where each waited at most a second (a timer per table,
        rescheduled at every event)."""
        heartbeat = self.settings.ws_heartbeat
        hub = self.service.hub
        try:
            while self._feeds:
                degraded = hub.health() is not None
                await asyncio.sleep(POLL_INTERVAL if degraded else min(heartbeat or AWAKE, AWAKE))
                now = time.monotonic()
                degraded = hub.health() is not None
                for feed in list(self._feeds.values()):
                    feed.tick(now, degraded)
        finally:
            self._timer = None

    def leave(self, member: Member) -> None:
        """Unregister ``member``; the feed of its table stops with its last member."""
        feed = member.feed
        if feed is None:
            return
        member.feed = None
        feed.discard(member)
        if member.token is not None:
            self.service.tokens.release(member.token, member)
        if member.notes is not None:
            member.notes.close()
        if not feed.members() and self._feeds.get(feed.table_id) is feed:
            del self._feeds[feed.table_id]
            FEEDS.dec()
            feed.sub.close()
            feed.task.cancel()

    def resync_later(self, feed: Feed, members: list[Member]) -> None:
        task = asyncio.create_task(feed.resync(members))
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    def feed_of(self, table_id: str) -> Feed | None:
        return self._feeds.get(table_id)
