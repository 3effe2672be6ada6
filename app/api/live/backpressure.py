"""A socket whose client does not keep up: how much may wait for it, and its 4008 close.

Shared by the sockets served through ASGI (``app.api.live.socket.Socket``) and the idle
spectators served below it (``app.api.live.parking.Parked``): both are a ``Bounded`` outbox,
which closes with ``CLOSE_SLOW_CONSUMER`` after the first ``ws_send_queue`` messages when it is
still full ``SEND_GRACE`` s after it filled, or ``OVERFLOW`` more were offered meanwhile."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final, Generic, TypeVar

from prometheus_client import Counter

from app.bus.hub import QUEUE_LIMIT

CLOSE_SLOW_CONSUMER: Final = 4008
SLOW_REASON: Final = "slow consumer: reconnect with since"
# How long a socket's outbox may stay full before the client is a slow consumer (seconds): a
# burst the client reads drains well within it.
SEND_GRACE: Final = 5.0
# Messages the table's feed may add past a full outbox (it never waits) before the client counts
# as slow at once: as far behind as a hub subscription may fall.
OVERFLOW: Final = QUEUE_LIMIT

SLOW_CONSUMERS = Counter(
    "ginrummy_ws_slow_consumers_total", "Sockets closed because the client did not keep up"
)


# What an outbox queues: a message, or the close that ends it.
Q = TypeVar("Q")


class Bounded(Generic[Q]):
    """A socket's bounded outbox, for both kinds of socket: a message is sent at once while
    nothing waits and the transport takes it, else queued in ``_box`` (None: nothing waits);
    ``_full_since`` is when the box last filled (None: it is not full); past the grace, or
    ``OVERFLOW`` more, ``_slow`` closes the socket with 4008. Each kind says how it sends, what
    it queues and how its queue drains."""

    __slots__ = ("_box", "_full_since", "closing", "queue_limit")
    closing: bool
    queue_limit: int
    _box: deque[Q] | None
    _full_since: float | None

    def _send_now(self, message: str, framed: bytes | None) -> bool:
        """Send ``message`` (``framed``: its frame) if the transport takes it now; True: done
        with it (sent, or the client is gone), False: queue it."""
        raise NotImplementedError

    def _send_many_now(self, messages: list[str], framed: bytes) -> bool:
        """``_send_now`` for ``messages``, their frames joined in ``framed``."""
        raise NotImplementedError

    def _queued(self, message: str, framed: bytes | None) -> Q:
        """What the box keeps of ``message``."""
        raise NotImplementedError

    def _slow_close(self) -> Q:
        """The 4008 close, as the box keeps it."""
        raise NotImplementedError

    def _drain(self) -> None:
        """The box has something: see that it is written."""
        raise NotImplementedError

    def _drain_closing(self) -> None:
        """The box ends with a close: wake whoever waits for room, see that it is written."""
        raise NotImplementedError

    def offer(self, message: str, framed: bytes | None = None) -> None:
        """Send or queue an encoded message without waiting (shared by every socket of an
        audience: see ``Frames``; ``framed``: its frame, ``app.api.live.wire.frame``, shared
        too). A box still full ``SEND_GRACE`` s after it filled closes the socket with 4008
        after the first ``queue_limit`` messages (``_check``)."""
        if self.closing:
            return
        box = self._box
        if box is None:
            if self._send_now(message, framed):
                return
            box = self._box = deque()
        box.append(self._queued(message, framed))
        size = len(box)
        if size >= self.queue_limit:
            if size > self.queue_limit + OVERFLOW:
                self._slow()
                return
            if self._full_since is None:
                loop = asyncio.get_running_loop()
                self._full_since = loop.time()
                loop.call_later(SEND_GRACE, self._check)
        self._drain()

    def offer_many(self, messages: list[str], framed: bytes) -> None:
        """``messages`` in order: their joined frames ``framed`` at once while nothing waits
        and the transport takes them, else each as ``offer`` does."""
        if not self.closing and self._box is None and self._send_many_now(messages, framed):
            return
        for message in messages:
            self.offer(message)

    def _slow(self) -> None:
        """Close with 4008 after the first ``queue_limit`` messages queued."""
        self.closing = True
        SLOW_CONSUMERS.inc()
        box = self._box
        if box is None:
            box = self._box = deque()
        while len(box) > self.queue_limit:
            box.pop()
        box.append(self._slow_close())
        self._drain_closing()

    def _check(self) -> None:
        """The grace of a full outbox ran out: still full, the client is a slow consumer."""
        if self.closing or self._full_since is None:
            return
        loop = asyncio.get_running_loop()
        remaining = self._full_since + SEND_GRACE - loop.time()
        if remaining > 0.001:
            loop.call_later(remaining, self._check)
            return
        self._slow()
