"""Idle sockets served below ASGI: a socket that only watches or waits costs a few KB, not ~33.

An open socket served through ASGI keeps the whole call suspended for its life: uvicorn's
protocol object (a receive queue, events, keepalive timers, the scope), and about thirty
coroutines, from uvicorn's ``run_asgi`` through the middlewares, Starlette's router and our
endpoint down to the ``receive`` it waits on. ``benchmarks/socket_memory.py`` measured ~32 KB
of Python memory per idle spectator. A spectator needs none of it once it is live: its events
come from the table's feed (``app.api.live.audiences``), and what it sends is rare: a ``ping``, or a
move (refused to a spectator; played through the pipeline for a watcher who took a seat since).

So once a spectator's socket (no seat: anonymous, or a player watching a table they do not sit
at) is live and idle (its view or catch-up written, nothing queued or unread; see
``TableStream.stream``), it is *parked*: ``Wire.detach`` (``app.api.live.wire``) hands
its transport to a ``Parked``, which keeps the ``websockets`` connection that parses the client's
frames, and the ASGI call returns. The table's feed then offers the member's messages to the
``Parked`` instead of the ``Socket``: the same frames, the same audience, the same redaction.

A player's socket (``/v1/players/me/ws``) is parked so once accepted (``app.api.live.player``).
A parked socket serves its ``Tenant``: a table feed's member, or a player's notifications.

What a parked socket keeps of the guarantees of a socket served through ASGI (docs/protocol.md):

- every frame is written in order, straight to the transport while it takes them; while it is
  paused (a client that does not read) they wait in a bounded outbox, written together (one
  ``write``) when it resumes; the 4008 close (``app.api.live.backpressure``) as for any socket;
- the client's messages, answered as through ASGI (``client_in.ParkedAnswers``) after the socket's
  rate limit: ``pong``, a move's ``ack`` or ``error``; read no further while replies cannot be
  queued, nor while the transport is paused (a ping parsed meanwhile gets one pong, for the
  latest, when it resumes); pings and pongs count against the same limit, and one over it
  closes the socket with 4429 (as ``app.api.edge.protocols`` does through ASGI); a watcher who
  joins the table moves to its seat's audience and ``your_turn`` as any member does; a move on
  a player's socket gets ``not_a_table``;
- keepalive: one timer for all parked sockets (``Parking``), not two per socket: every
  ``ws_ping_interval`` s each gets a ping, and one that has not answered ``ws_ping_timeout`` s
  later is closed with 1011, as uvicorn does;
- a player socket's ``heartbeat`` (one timer for all: ``app.api.live.player.Heartbeats``);
- the server's shutdown closes it with 1012 (uvicorn's ``shutdown`` of each connection);
- its access log line and metrics at its close (``app.api.edge.access.WebSocketSession``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Final, Protocol

from websockets import protocol, streams
from websockets.frames import Frame, Opcode

from app.api.edge.protocols import ABORT_AFTER, CLOSE_TOO_MANY, FLOODS, finish
from app.api.live import client_out
from app.api.live.backpressure import (
    CLOSE_SLOW_CONSUMER,
    SLOW_REASON,
    Bounded,
)
from app.api.live.wire import Detached, frame
from app.service.rate_limits import SOCKET_MESSAGE, Allowance

if TYPE_CHECKING:
    from app.api.edge.access import WebSocketSession

log = logging.getLogger(__name__)

# Sockets pinged before the keepalive lets the loop run other work.
CHUNK: Final = 256
# Client messages read ahead of their answers before the socket stops reading.
INBOX: Final = 8
# How long a close waits for the client's close frame before closing the transport (uvicorn's).
CLOSE_TIMEOUT: Final = 10.0
CLOSE_GOING_AWAY: Final = 1012  # the server restarts (uvicorn's code at shutdown)
CLOSE_KEEPALIVE: Final = 1011
# A client's pong to a keepalive ping: 2 bytes of header, the mask, the 4 bytes of the ping.
PONG_SIZE: Final = 10
# Where the ``websockets`` parser waits between two frames (``Parked._pong``).
_PARSE: Final = protocol.Protocol.parse.__code__
_AT_EOF: Final = streams.StreamReader.at_eof.__code__


class Tenant(Protocol):
    """What a parked socket serves: its answers to the client, and what its close ends."""

    def answer(self, allowance: Allowance | None, raw: str | bytes) -> Awaitable[str]:
        """The encoded reply to a client's message (its raw text or bytes), counted against
        the socket's ``allowance`` (None: no limit)."""

    def leave(self) -> None:
        """The socket closed."""


class Parking:
    """This process's parked sockets, and their one keepalive."""

    def __init__(self, queue_limit: int) -> None:
        self.queue_limit = queue_limit
        self.sockets: set[Parked] = set()
        self.ping: bytes | None = None  # this round's ping payload
        self._keepalive: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def park(self, detached: Detached, tenant: Tenant, session: WebSocketSession) -> Parked:
        parked = Parked(self, detached, tenant, session)
        self.sockets.add(parked)
        interval, timeout = detached.ping_interval, detached.ping_timeout
        if self._keepalive is None and interval:
            self._keepalive = asyncio.create_task(self._pings(interval, timeout))
        return parked

    def spawn(self, work: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _pings(self, interval: float, timeout: float | None) -> None:
        """A ping to each parked socket; ``timeout`` s later, those that did not answer are
        closed; the next round ``interval`` s after the last (``timeout`` s if longer): uvicorn's
        keepalive, with one timer for all."""
        wait = interval
        while True:
            await asyncio.sleep(wait)
            payload = self.ping = struct.pack("!I", random.getrandbits(32))
            ping = bytes((0x89, len(payload))) + payload
            pinged = list(self.sockets)
            for count, parked in enumerate(pinged, 1):
                parked.send_ping(ping)
                if not count % CHUNK:
                    await asyncio.sleep(0)
            if timeout is None:
                continue
            await asyncio.sleep(timeout)
            for parked in pinged:
                if parked.pinged:
                    parked.keepalive_timeout()
            wait = max(0.0, interval - timeout)

    def close(self) -> None:
        """The app stops: no more pings."""
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None


class Parked(Bounded[bytes | None], asyncio.Protocol):
    """One idle socket's connection, served without ASGI (see the module's docstring): the
    ``asyncio`` protocol of its transport, and its tenant's outbox."""

    __slots__ = (
        "_allowance",
        "_close_timer",
        "_inbox",
        "_owed_pong",
        "_partial",
        "_partial_text",
        "_reader",
        "_room",
        "conn",
        "connections",
        "parking",
        "pinged",
        "session",
        "straight",
        "tenant",
        "transport",
        "writable",
    )

    def __init__(
        self,
        parking: Parking,
        detached: Detached,
        tenant: Tenant,
        session: WebSocketSession,
    ) -> None:
        self.parking = parking
        self.queue_limit = parking.queue_limit
        self.transport = detached.transport
        self.conn = detached.conn
        self.connections = detached.connections
        self.tenant = tenant
        self.session = session
        self.straight = 0  # messages the feed wrote itself, not yet in the session's count
        self.writable = True  # the transport is not paused
        self.closing = False  # a close was sent, or the connection is lost
        self.pinged = False  # a keepalive ping awaits its pong
        # Frames waiting for a paused transport; None when there are none. A ``None`` in it
        # is the 4008 close.
        self._box: deque[bytes | None] | None = None
        self._full_since: float | None = None
        self._inbox: list[str | bytes] | None = None  # client messages not yet answered
        self._partial: list[bytes] | None = None  # a fragmented message's frames so far
        self._partial_text = False
        self._reader: asyncio.Task[None] | None = None  # answers the inbox
        self._room: asyncio.Future[None] | None = None  # the reader waits for outbox room
        self._allowance = detached.allowance
        self._owed_pong: bytes | None = None  # the pong of the latest ping while paused
        self._close_timer: asyncio.TimerHandle | None = None

    # The member's outbox (the table's feed).

    def _send_now(self, message: str, framed: bytes | None) -> bool:
        """Written at once while the transport is not paused."""
        if not self.writable:
            return False
        self.transport.write(frame(message) if framed is None else framed)
        self.session.sent()
        return True

    def _send_many_now(self, messages: list[str], framed: bytes) -> bool:
        if not self.writable:
            return False
        self.transport.write(framed)
        for _ in messages:
            self.session.sent()
        return True

    def _queued(self, message: str, framed: bytes | None) -> bytes | None:
        return frame(message) if framed is None else framed

    def _slow_close(self) -> bytes | None:
        return None

    def _drain(self) -> None:
        """Nothing to do: the box is written when the transport resumes (``_flush``)."""

    def _drain_closing(self) -> None:
        self._wake()
        if self.writable:
            self._flush()

    def end(self, code: int, reason: str, last: str | None = None) -> None:
        """Close with ``code`` now: nothing queued is sent but ``last``; nothing more is read
        (a token's revocation: ``Member.revoked``)."""
        if self.closing:
            return
        self._box = None
        self._full_since = None
        self._inbox = None
        if last is not None and not self.transport.is_closing():
            self.transport.write(frame(last))
            self.session.sent()
        self._close(code, reason)
        self._wake()

    def _flush(self) -> None:
        """Write what waited, in one ``write``; then the 4008 close, if it is next."""
        box, self._box = self._box, None
        self._full_since = None
        if not box:
            return
        frames: list[bytes] = []
        slow = False
        for data in box:
            if data is None:
                slow = True
                break
            frames.append(data)
        if frames:
            self.transport.write(b"".join(frames))
            for _ in frames:
                self.session.sent()
        if slow:
            self._close(CLOSE_SLOW_CONSUMER, SLOW_REASON)
        self._wake()

    def _wake(self) -> None:
        room, self._room = self._room, None
        if room is not None and not room.done():
            room.set_result(None)

    def _close(self, code: int, reason: str = "") -> None:
        """Send a close frame; the transport closes on the client's answer, or after
        ``CLOSE_TIMEOUT``."""
        self.closing = True
        if self.session.code is None:
            self.session.code = code
        if self.transport.is_closing():
            return
        self.conn.send_close(code, reason)
        self._write_conn()
        self.transport.resume_reading()  # for the client's answer (paused by a full inbox)
        self._close_timer = asyncio.get_running_loop().call_later(
            CLOSE_TIMEOUT, self.transport.close
        )

    def _pongs(self) -> None:
        """Write the pongs to the client's pings (and a protocol error's close frame); while
        the transport is paused, keep only the latest pong (RFC 6455, 5.5.3), written when it
        resumes."""
        data = self.conn.data_to_send()
        if not data or self.transport.is_closing():
            return
        if self.writable or self.conn.parser_exc is not None:
            self.transport.write(b"".join(data))
        elif not self.closing:
            self._owed_pong = data[-1]

    def _flooded(self) -> None:
        """More control frames than the socket's limit: an ``error``, the 4429 close, and the
        connection closed without waiting for the client's answer (dropped after
        ``ABORT_AFTER`` s if it reads nothing)."""
        FLOODS.inc()
        self.closing = True
        self._box = None
        self._inbox = None
        if self.session.code is None:
            self.session.code = CLOSE_TOO_MANY
        self.transport.pause_reading()
        self.conn.data_to_send()  # the pongs not yet written: dropped
        self.conn.send_text(client_out.FLOODED.encode())
        self.conn.send_close(CLOSE_TOO_MANY, SOCKET_MESSAGE)
        self._write_conn()
        finish(self.transport)
        self._close_timer = asyncio.get_running_loop().call_later(ABORT_AFTER, self.transport.abort)

    def _write_conn(self) -> None:
        """What the ``websockets`` connection has to send (pongs, close frames)."""
        data = b"".join(self.conn.data_to_send())
        if data and not self.transport.is_closing():
            self.transport.write(data)

    # Keepalive (``Parking``).

    def send_ping(self, ping: bytes) -> None:
        if self.closing or self.transport.is_closing():
            return
        self.pinged = True
        self.transport.write(ping)

    def keepalive_timeout(self) -> None:
        if self.closing or self.transport.is_closing():
            return
        self.closing = True
        if self.session.code is None:
            self.session.code = CLOSE_KEEPALIVE
        self.conn.fail(CLOSE_KEEPALIVE, "keepalive ping timeout")
        self._write_conn()
        self.transport.close()

    # The transport's protocol.

    def data_received(self, data: bytes) -> None:
        if len(data) == PONG_SIZE and self._pong(data):
            return
        conn = self.conn
        conn.receive_data(data)
        for event in conn.events_received():
            if not isinstance(event, Frame):
                continue  # no handshake after the handshake
            opcode = event.opcode
            if opcode is Opcode.PING or opcode is Opcode.PONG:
                if self.closing:
                    continue
                if self._allowance is not None and not self._allowance.take():
                    self._flooded()
                    return
                if opcode is Opcode.PONG and bytes(event.data) == self.parking.ping:
                    self.pinged = False
            elif opcode is Opcode.TEXT or opcode is Opcode.BINARY:
                if event.fin:
                    self._received(event.data, opcode is Opcode.TEXT)
                else:
                    self._partial = [bytes(event.data)]
                    self._partial_text = opcode is Opcode.TEXT
            elif opcode is Opcode.CONT and self._partial is not None:
                self._partial.append(bytes(event.data))
                if event.fin:
                    parts, self._partial = self._partial, None
                    self._received(b"".join(parts), self._partial_text)
            elif opcode is Opcode.CLOSE:
                # The client's close (``websockets`` answers it), or its answer to ours.
                self.closing = True
                rcvd = conn.close_rcvd
                if self.session.code is None:
                    self.session.code = 1005 if rcvd is None else rcvd.code
                self._write_conn()
                self.transport.close()
                return
        self._pongs()
        if conn.parser_exc is not None:  # a protocol error: its close frame was just written
            self.closing = True
            if self.session.code is None and conn.close_sent is not None:
                self.session.code = conn.close_sent.code
            self.transport.close()

    def _pong(self, data: bytes) -> bool:
        """Take the pong to this round's ping, alone in ``data``, without the ``websockets``
        parser (which ignores a pong, at several times the cost), while it waits for a frame's
        first byte (so its stream stays whole); False: it parses ``data``."""
        ping, parser = self.parking.ping, self.conn.parser
        if (
            ping is None
            or data[:2] != b"\x8a\x84"  # FIN, pong; masked, 4 bytes
            or self.closing
            or self.conn.reader.buffer
            or getattr(parser, "gi_code", None) is not _PARSE
            or getattr(getattr(parser, "gi_yieldfrom", None), "gi_code", None) is not _AT_EOF
            or (int.from_bytes(data[2:6]) ^ int.from_bytes(data[6:10])).to_bytes(4) != ping
        ):
            return False
        if self._allowance is not None and not self._allowance.take():
            self._flooded()
            return True
        self.pinged = False
        return True

    def _received(self, data: bytes | bytearray | memoryview, is_text: bool) -> None:
        if self.closing:
            return
        try:
            message: str | bytes = bytes(data).decode() if is_text else bytes(data)
        except UnicodeDecodeError:
            self._close(1007, "invalid UTF-8")
            return
        self.session.received()
        if self._inbox is None:
            self._inbox = []
        self._inbox.append(message)
        if len(self._inbox) >= INBOX:
            self.transport.pause_reading()
        if self._reader is None:
            self._reader = self.parking.spawn(self._answer())

    async def _answer(self) -> None:
        """Answer the client's messages in order; wait while the outbox is full."""
        try:
            while self._inbox and not self.closing:
                while self._box is not None and len(self._box) >= self.queue_limit:
                    self._room = asyncio.get_running_loop().create_future()
                    await self._room
                    if self.closing:
                        return
                message = self._inbox.pop(0)
                if len(self._inbox) == INBOX - 1:
                    self._resume_reading()
                reply = await self.tenant.answer(self._allowance, message)
                self.offer(reply)
        except Exception:
            log.exception("a parked socket's reply failed")
            self._close(1011)
        finally:
            self._reader = None
            if not self._inbox:
                self._inbox = None

    def _resume_reading(self) -> None:
        """Read again, unless the inbox is full, the transport paused or the socket closing."""
        if (
            self.writable
            and not self.closing
            and (self._inbox is None or len(self._inbox) < INBOX)
            and not self.transport.is_closing()
        ):
            self.transport.resume_reading()

    def pause_writing(self) -> None:
        # A client that does not read is read no further: its own writes back up instead of
        # the answers to them piling up here.
        self.writable = False
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.writable = True
        owed, self._owed_pong = self._owed_pong, None
        if owed is not None and not self.closing and not self.transport.is_closing():
            self.transport.write(owed)
        if self._box is not None:
            self._flush()
        self._resume_reading()

    def eof_received(self) -> bool | None:
        """The client shut its side: nothing more is written (the transport closes itself)."""
        self.closing = True
        self.conn.receive_eof()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self._box = None
        self._inbox = None
        self._wake()
        if self._close_timer is not None:
            self._close_timer.cancel()
            self._close_timer = None
        if self._reader is not None:
            self._reader.cancel()
        self.parking.sockets.discard(self)
        self.connections.discard(self)
        self.tenant.leave()
        self.session.finish()

    def shutdown(self) -> None:
        """The server stops (uvicorn's graceful shutdown): a close, then the transport."""
        if not self.closing:
            self._close(CLOSE_GOING_AWAY)
        self.transport.close()
