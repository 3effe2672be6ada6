"""An audience's sockets written straight: one ``transport.write`` each, and nothing else.

The table feed (``app.api.live.audiences``) hands each event to every socket of an audience. At
10,000 spectators that loop runs 10,000 times per event, and each write costs ~8-10 µs of
system call (``benchmarks/socket_floor.py``), so what the loop does besides the write is what
the fan-out costs above that floor. For a parked socket (``app.api.live.parking.Parked``) the
feed keeps, per audience, a flat list of the members in step with the audience (every seq up to
``Ready.last``) whose transport takes frames: for them the loop reads two flags, writes the
audience's joined frames and counts them on the socket; their ``Member.last`` and their
session's count of messages catch up when they leave the list (``Ready.drop``), and the route's
metric is counted once per audience and event. One found paused or closing leaves the list there
and gets the event through its bounded outbox (the feed's ``demote``), as does any member not on
it; the feed takes members back once they are in step (``Ready.take``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Protocol

from prometheus_client import Counter

from app.table.model import StoredEvent

if TYPE_CHECKING:
    from app.api.edge.access import WebSocketSession
    from app.api.live.audiences import Feed, Member


class Direct(Protocol):
    """An outbox whose transport the feed writes an audience's shared frame to itself, with
    no call into the outbox (a parked socket, ``app.api.live.parking.Parked``): while it is
    ``writable`` (its transport not paused) and not ``closing``, nothing waits in it (what
    waited is written when the transport resumes, before anything else), so a frame written
    straight goes out in order, as ``offer`` would have written it. ``straight`` counts the
    messages so written that ``session`` has not counted yet (``Ready.drop``)."""

    writable: bool
    closing: bool
    transport: asyncio.Transport
    session: WebSocketSession
    straight: int


class Ready:
    """The members of one audience whose sockets take its frames straight (``Direct``), all
    with every seq up to ``last``: each frame goes to each of them with one ``transport.write``
    and nothing else of theirs is touched (a member's ``last`` and its session's count catch
    up when it leaves this, ``drop``)."""

    __slots__ = ("counter", "dropped", "last", "sockets", "writing")

    def __init__(self) -> None:
        self.sockets: dict[Member, Direct] = {}
        self.last = 0
        # Their route's count of messages out: one for all (a member with another stays out).
        self.counter: Counter | None = None
        self.writing = False  # a fan-out over ``sockets`` is under way (``write``)
        self.dropped: list[Member] = []  # those that left it meanwhile

    def take(self, member: Member, direct: Direct) -> None:
        """Write to ``member`` (in step: its ``last`` is ``self.last``) straight from now on,
        unless its messages count under another route than the others'."""
        counters = direct.session.counters
        if counters is None:
            return
        if not self.sockets:
            self.counter = counters[1]
        elif counters[1] is not self.counter:
            return
        self.sockets[member] = direct

    def drop(self, member: Member) -> None:
        """``member`` is no longer written straight: its ``last`` and its session's count of
        messages catch up with what was written to it."""
        direct = self.sockets.pop(member, None)
        if direct is None:
            return
        member.last = self.last
        direct.session.outgoing += direct.straight
        direct.straight = 0
        if self.writing:
            self.dropped.append(member)  # the fan-out under way writes it no more

    async def write(
        self,
        framed: bytes,
        count: int,
        last: int,
        chunk: int,
        demote: Callable[[Member], None],
    ) -> int:
        """``framed`` (``count`` messages, up to seq ``last``) to each socket, the loop given
        back every ``chunk`` sockets; one that no longer takes frames is dropped and handed to
        ``demote`` (its outbox). How many were written straight."""
        directs = list(self.sockets.items())
        written = 0
        self.writing = True
        try:
            at = 0
            while at < len(directs):
                if at:
                    await asyncio.sleep(0)
                    if self.dropped:
                        directs = self._without_dropped(directs, at, last)
                for member, direct in directs[at : at + chunk]:
                    if direct.writable and not direct.closing:
                        direct.transport.write(framed)
                        direct.straight += count
                        written += 1
                    else:
                        self.drop(member)
                        demote(member)
                at += chunk
        finally:
            self.writing = False
            self.dropped.clear()
        self.last = last
        if written and self.counter is not None:
            self.counter.inc(written * count)
        return written

    def _without_dropped(
        self, directs: list[tuple[Member, Direct]], at: int, last: int
    ) -> list[tuple[Member, Direct]]:
        """``directs`` but those whose members left while the loop was given back, from ``at``
        on (those before ``at`` have had the frames up to ``last``)."""
        gone = {id(member.direct) for member in self.dropped}
        rest = directs[at:]
        waiting = {id(direct) for _, direct in rest}
        for member in self.dropped:
            if id(member.direct) not in waiting:
                member.last = max(member.last, last)
        self.dropped.clear()
        return directs[:at] + [pair for pair in rest if id(pair[1]) not in gone]


class Batch(NamedTuple):
    """Events for one audience, sent together: their messages, each framed."""

    events: list[StoredEvent]
    messages: list[str]
    each: list[bytes]

    @property
    def framed(self) -> bytes:
        """Their frames joined: one write for the whole batch."""
        return self.each[0] if len(self.each) == 1 else b"".join(self.each)


async def fan_out(
    feed: Feed, seat: int | None, batch: Batch, stale: list[Member], chunk: int
) -> None:
    """``batch`` to the audience ``seat`` of ``feed``. Its members written straight
    (``Ready``) get the frames joined (framed once for the audience) with one
    ``transport.write`` each, and nothing else is done for them: this runs for every socket of
    a big audience for every event. One whose transport no longer takes frames (paused,
    closing) leaves them and gets the batch through its outbox, as every other member does
    (``give``); those in step with a ``Direct`` that takes frames join them after. The loop is
    given back every ``chunk`` sockets, so requests (the players' moves) go between."""
    members = feed.audiences[seat]
    ready = feed.ready[seat]
    first, last = batch.events[0].seq, batch.events[-1].seq
    framed = batch.framed  # for the whole audience
    if ready.sockets and ready.last != first - 1:
        for member in list(ready.sockets):  # never by construction: each its own way
            ready.drop(member)
    ready.last = first - 1
    others = list(members.difference(ready.sockets)) if len(ready.sockets) < len(members) else []
    wrote = await ready.write(
        framed,
        len(batch.messages),
        last,
        chunk,
        lambda member: give(feed, member, batch, framed, stale),
    )
    for start in range(0, len(others), chunk):
        if start or wrote:
            await asyncio.sleep(0)
        for member in others[start : start + chunk]:
            give(feed, member, batch, framed, stale)
    for member in others:
        take_if_in_step(feed, ready, members, member)


def take_if_in_step(feed: Feed, ready: Ready, members: set[Member], member: Member) -> None:
    """Write to ``member`` straight from now on if it can be: a ``Direct`` that takes frames,
    every seq up to ``ready.last``, live in this audience (``members``) of ``feed``."""
    direct = member.direct
    if (
        direct is None
        or member.last != ready.last
        or member.feed is not feed
        or member.pending is not None
        or member not in members
        or member in ready.sockets
        or not direct.writable
        or direct.closing
    ):
        return
    ready.take(member, direct)


def give(feed: Feed, member: Member, batch: Batch, framed: bytes, stale: list[Member]) -> None:
    """``batch`` through ``member``'s outbox: what it lacks of it, in order (``stale``: those
    it cannot be given in order, for a fresh view)."""
    first, last = batch.events[0].seq, batch.events[-1].seq
    if member.last == first - 1:
        if len(batch.messages) == 1:
            member.outbox.offer(batch.messages[0], framed)
        else:
            member.outbox.offer_many(batch.messages, framed)
        member.last = last
    elif member.last < last:
        for stored, message, data in zip(batch.events, batch.messages, batch.each, strict=True):
            if stored.seq == member.last + 1:
                member.outbox.offer(message, data)
                member.last = stored.seq
            elif stored.seq > member.last and member.feed is feed and member.pending is None:
                stale.append(member)  # never by construction; a view puts it right
                break
