"""A shared frame written straight to a socket's transport: one byte string for an audience.

A server's WebSocket frames are not masked (RFC 6455, 5.1), so the frame of a text message is
the same bytes for every socket it goes to. The table feed (``app.api.audiences``) frames each
event once per audience (``frame``) and each idle socket (``Socket`` in
``app.api.routes.live``) writes those bytes to its transport (``Wire.write``), skipping the
ASGI send path: the middlewares' wrappers, Starlette's ``WebSocket.send``, uvicorn's ``send``
and the websockets library framing the same text again, for every socket. At 10,000
spectators that path cost more CPU than the ``write`` itself.

Only where it is safe (else ``Wire.of`` gives None, or ``write`` says ``BUSY``, and the
message goes the ASGI way, which waits for a paused transport):

- the socket is served by uvicorn's ``websockets-sansio`` protocol (uvicorn's default when
  ``websockets`` is installed), and the ``send`` the access log middleware was handed is that
  protocol's own: nothing outside it rewrites a socket's messages (``app.api.access`` is the
  outermost middleware; Starlette's error middleware passes WebSocket scopes through, and
  those inside the access log leave ``websocket.send`` alone);
- the handshake is done with no extension negotiated (no per-message deflate);
- when written: the connection is open, no close was sent, the transport is not closing and
  not paused (its buffer under the high-water mark: a client that reads).

A written message counts in the access log's ``messages_out`` and its metric as any other.
A socket with a wire also lets go of its handshake's request and response, which uvicorn keeps
for the connection's life but never reads after the accept (``Wire.of``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Final

from websockets.protocol import State

try:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
except ImportError:  # pragma: no cover - uvicorn without websockets: always the ASGI way
    WebSocketsSansIOProtocol = None  # type: ignore[assignment, misc]

# ``scope["extensions"]`` key of a socket's ``Wire`` (set at its accept).
WIRE: Final = "ginrummy.wire"

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
            WebSocketsSansIOProtocol is None
            or type(protocol) is not WebSocketsSansIOProtocol
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

    def write(self, data: bytes) -> int:
        """Write the frame ``data`` (``frame``): ``SENT``, ``BUSY`` or ``CLOSED``."""
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
        self.counted()
        return SENT
