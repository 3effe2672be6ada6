"""A socket whose client does not keep up: how much may wait for it, and its 4008 close.

Shared by the sockets served through ASGI (``app.api.live.socket.Socket``) and the idle
spectators served below it (``app.api.live.parking.Parked``): both keep a bounded outbox, and close
with ``CLOSE_SLOW_CONSUMER`` after the first ``ws_send_queue`` messages when it is still full
``SEND_GRACE`` s after it filled, or ``OVERFLOW`` more were offered meanwhile."""

from __future__ import annotations

import asyncio
from typing import Final

from prometheus_client import Counter

from app.service.hub import QUEUE_LIMIT

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


class Graced:
    """The grace of a full outbox, for both kinds of socket: ``_full_since`` is when the outbox
    last filled (None: it is not full), ``_slow`` closes the socket with 4008."""

    __slots__ = ()
    closing: bool
    _full_since: float | None

    def _slow(self) -> None:
        raise NotImplementedError

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
