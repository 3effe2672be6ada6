"""A shared frame written straight to a socket's transport: one byte string for an audience.

A server's WebSocket frames are not masked (RFC 6455, 5.1), so the frame of a text message is
the same bytes for every socket it goes to. The table feed (``app.api.live.audiences``) frames each
event once per audience (``frame``) and each idle socket (``Socket`` in
``app.api.live.socket``) writes those bytes to its transport (``Wire.write``), skipping the
ASGI send path: the middlewares' wrappers, Starlette's ``WebSocket.send``, uvicorn's ``send``
and the websockets library framing the same text again, for every socket. At 10,000
spectators that path cost more CPU than the ``write`` itself.

Only where it is safe (else ``Wire.of`` gives None, or ``write`` says ``BUSY``, and the
message goes the ASGI way, which waits for a paused transport):

- the socket is served by uvicorn's ``websockets-sansio`` protocol (uvicorn's default when
  ``websockets`` is installed) as ``app.api.edge.protocols.WebSocketProtocol`` extends it, and the
  ``send`` the access log middleware was handed is that
  protocol's own: nothing outside it rewrites a socket's messages (``app.api.edge.access`` is the
  outermost middleware; Starlette's error middleware passes WebSocket scopes through, and
  those inside the access log leave ``websocket.send`` alone);
- the handshake is done with no extension negotiated (no per-message deflate);
- when written: the connection is open, no close was sent, the transport is not closing and
  not paused (its buffer under the high-water mark: a client that reads).

A written message counts in the access log's ``messages_out`` and its metric as any other.
A socket with a wire also lets go of its handshake's request and response, which uvicorn keeps
for the connection's life but never reads after the accept (``Wire.of``).

``Wire.detach`` goes one step further for an idle spectator (``app.api.live.parking``): the
transport is handed to a protocol object of ours, with the ``websockets`` connection that parses
the client's frames, and the ASGI call returns, so the coroutines of the whole ASGI stack and
uvicorn's protocol object (its queue, events, timers and scope) are freed. uvicorn's protocol is
left with a transport that does nothing, so the end of its ASGI call closes nothing, and it is
marked disconnected, so nothing can be sent through it any more.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable
from typing import Any, Final, NamedTuple, TypeVar

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import Protocol, State
from websockets.server import ServerProtocol

from app.api.edge.protocols import WebSocketProtocol
from app.service.rate_limits import Allowance

# ``scope["extensions"]`` key of a socket's ``Wire`` (set at its accept).
WIRE: Final = "ginrummy.wire"

P = TypeVar("P", bound=asyncio.Protocol)

# What ``Wire.write`` did.
SENT: Final = 0  # written
BUSY: Final = 1  # not written: the transport is paused (send it the ASGI way, which waits)
CLOSED: Final = 2  # not written: the connection is closing or closed


def frame(message: str) -> bytes:
    """The unmasked, final text frame of ``message`` (RFC 6455, 5.2), as any socket sends it."""
    data = message.encode()
    size = len(data)
    if size < 126:
        return bytes((0x81, size)) + data
    if size < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, size) + data
    return struct.pack("!BBQ", 0x81, 127, size) + data


class Wire:
    """One socket's transport, reached from uvicorn's protocol object, for shared frames."""

    __slots__ = ("counted", "protocol")

    def __init__(self, protocol: Any, counted: Callable[[], None]) -> None:
        self.protocol = protocol
        self.counted = counted  # the access log's count of messages sent

    @classmethod
    def of(cls, send: Callable[..., Any], counted: Callable[[], None]) -> Wire | None:
        """The wire of the server's own ``send`` after the accept; None for any other."""
        protocol = getattr(send, "__self__", None)
        if (
            not isinstance(protocol, WebSocketProtocol)
            or getattr(send, "__func__", None) is not WebSocketsSansIOProtocol.send
            or not protocol.handshake_complete
            or protocol.initial_response is not None
            or protocol.conn.extensions
        ):
            return None
        # The handshake's request and response (their headers: ~5 KB) are read only until
        # the handshake completes (``handle_connect`` and ``send`` before the accept's end).
        for handshake in ("request", "response"):
            setattr(protocol, handshake, None)
        return cls(protocol, counted)

    def write(self, data: bytes, messages: int = 1) -> int:
        """Write the frame ``data`` (``frame``; or ``messages`` frames joined): ``SENT``,
        ``BUSY`` or ``CLOSED``."""
        protocol = self.protocol
        transport = protocol.transport
        if (
            protocol.close_sent
            or protocol.disconnected
            or protocol.conn.state is not State.OPEN
            or transport.is_closing()
        ):
            return CLOSED
        if not protocol.writable.is_set():
            return BUSY
        transport.write(data)
        for _ in range(messages):
            self.counted()
        return SENT

    def detach(self, make: Callable[[Detached], P]) -> P | None:
        """Hand this socket's transport to the protocol ``make`` returns; None (nothing
        changed) unless the socket is open and idle: nothing received and unread, nothing
        waiting to be written, no close under way."""
        old = self.protocol
        transport = old.transport
        conn: ServerProtocol = old.conn
        if (
            old.close_sent
            or old.disconnected
            or old.close_timer is not None
            or old.read_paused
            or old.frames
            or not old.queue.empty()
            or not old.writable.is_set()
            or conn.state is not State.OPEN
            or conn.current_size is not None
            or transport.is_closing()
        ):
            return None
        if not conn.reader.buffer:
            # The handshake's parser keeps the request (its headers) in its frame: a parser of
            # frames alone, as the handshake's hands over to, without it.
            conn.parser = Protocol.parse(conn)
            next(conn.parser)
        connections: set[Any] = old.connections
        protocol = make(
            Detached(
                transport, conn, connections, old.ping_interval, old.ping_timeout, old.allowance
            )
        )
        old.stop_keepalive()
        transport.set_protocol(protocol)
        # uvicorn's shutdown closes what is in this set; the new protocol answers it.
        connections.discard(old)
        connections.add(protocol)
        old.transport = _NOWHERE
        old.disconnected = True
        old.close_sent = True
        return protocol


class Detached(NamedTuple):
    """What a socket served below ASGI keeps of uvicorn's (``Wire.detach``)."""

    transport: asyncio.Transport
    conn: ServerProtocol
    connections: set[Any]  # uvicorn's open connections (for its graceful shutdown)
    ping_interval: float | None
    ping_timeout: float | None
    allowance: Allowance | None  # the socket's count against its limit (``app.api.edge.protocols``)


class _Nowhere:
    """The transport left to uvicorn's protocol of a detached socket: it does nothing."""

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return True


_NOWHERE: Final = _Nowhere()
