"""uvicorn's HTTP and WebSocket protocols, with what they lack against a hostile client.

``python -m app`` (and the tests' servers) serve with ``uvicorn_options(settings)``: uvicorn's
own ``httptools`` and ``websockets-sansio`` protocols (its defaults with ``uvicorn[standard]``),
subclassed here, so everything else about them stays uvicorn's. (Under uvicorn's command line:
``--http app.api.edge.protocols:HttpProtocol --ws app.api.edge.protocols:WebSocketProtocol``, at the
settings' defaults.)

- ``HttpProtocol``: a connection must send a request's complete headers within
  ``http_header_timeout`` s of its opening (or, on a kept-alive connection, of the request's
  first byte), else it gets ``408`` and is closed. uvicorn has no such timeout: a client that
  sends headers a byte at a time (slowloris) held its connection, and a file descriptor, for
  as long as it liked, and never reached a rate limit (which needs the whole request).
- ``WebSocketProtocol``: a client's pings and pongs count against the socket's limit
  (``rate_limit_socket``, one ``Allowance`` with its messages, ``app.api.live.socket``); the
  first control frame over it closes the socket with ``CLOSE_TOO_MANY`` (after an ``error``,
  ``rate_limited``). uvicorn answers every ping at once, whatever the transport's state: a
  client that sent pings and never read grew the server's write buffer by 100+ MB. Here, while
  the transport's writes are paused (its buffer over the high-water mark) the socket is not
  read, so the client's own writes back up; a ping parsed meanwhile is answered once the
  buffer drains, by one pong for the latest (RFC 6455, 5.5.3 allows it).

These reach into uvicorn's classes (their attributes and methods, not only the documented
protocol interface): ``pyproject.toml`` pins uvicorn to the versions this was checked on.
``app.api.live.parking`` does the same for the sockets it serves below ASGI.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Final

from prometheus_client import Counter
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame
from websockets.http11 import Request
from websockets.protocol import State

from app.api.live import client_out
from app.service.rate_limits import SOCKET_MESSAGE, Allowance
from app.settings import Settings

# Close code of a socket whose client sent more than its limit allows (a control-frame flood),
# or that is one socket too many for its address or its player (``app.api.edge.occupancy``).
CLOSE_TOO_MANY: Final = 4429
# How long a closed abuser's connection may wait for its buffer to drain before it is dropped.
ABORT_AFTER: Final = 10.0
# ``scope["extensions"]`` key of a socket's ``Allowance``.
ALLOWANCE: Final = "ginrummy.allowance"

HEADER_TIMEOUTS = Counter(
    "ginrummy_http_header_timeouts_total",
    "Connections closed because they did not send a request's headers in time.",
)
FLOODS = Counter(
    "ginrummy_ws_control_floods_total",
    "Sockets closed with 4429 because their client sent more control frames than its limit.",
)

_TIMED_OUT: Final = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)


def finish(transport: asyncio.Transport) -> None:
    """End the connection of a socket closed for a flood once what was written (its close
    frame) has gone, without waiting for the client's close frame: a FIN after it, not a close,
    which with the client's frames unread would be a reset that drops them (the client would
    never learn why); the caller drops it after ``ABORT_AFTER`` s."""
    if transport.can_write_eof():
        transport.write_eof()
    else:
        transport.close()


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol with a timeout on each request's headers."""

    # (set by ``uvicorn_options``; under uvicorn's command line, the setting's default)
    header_timeout: ClassVar[float] = Settings.model_fields["http_header_timeout"].default
    _headers_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        # (uvicorn's own signature narrows asyncio's BaseTransport the same way)
        super().connection_made(transport)
        self._await_headers()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._await_headers()

    def on_headers_complete(self) -> None:
        self._headers_done()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        if self.header_timeout > 0 and self._headers_timer is None:
            self._headers_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _headers_done(self) -> None:
        if self._headers_timer is not None:
            self._headers_timer.cancel()
            self._headers_timer = None

    def _headers_late(self) -> None:
        self._headers_timer = None
        if self.transport.is_closing():
            return
        HEADER_TIMEOUTS.inc()
        self.transport.write(_TIMED_OUT)
        self.transport.close()


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol, counting control frames against the socket's
    limit and reading nothing while its writes are paused (see the module's docstring)."""

    # ``rate_limit_socket`` (as ``HttpProtocol.header_timeout``)
    rate: ClassVar[str] = Settings.model_fields["rate_limit_socket"].default

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.allowance = Allowance.of(self.rate)
        self.owed_pong: bytes | None = None  # the pong of the latest ping not yet answered
        self.cut = False  # closed for a flood: read no more

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope: dict[str, Any] | None = getattr(self, "scope", None)  # only for an upgrade
        if scope is not None and self.allowance is not None:
            scope["extensions"][ALLOWANCE] = self.allowance

    def handle_ping(self) -> None:
        if self._refused():
            return
        if not self.writable.is_set():
            pongs = self.conn.data_to_send()
            if pongs:
                self.owed_pong = pongs[-1]
            return
        super().handle_ping()

    def handle_pong(self, event: Frame) -> None:
        if not self._refused():
            super().handle_pong(event)

    def _refused(self) -> bool:
        """Count a control frame: True when it goes unanswered (after a close, or over the
        socket's limit: then the socket is closed)."""
        if self.close_sent or self.transport.is_closing():
            self.conn.data_to_send()  # a pong to a closing socket: dropped
            return True
        if self.allowance is None or self.allowance.take():
            return False
        FLOODS.inc()
        self.cut = True
        self.close_sent = True
        self.stop_keepalive()
        self.conn.data_to_send()
        self.queue.put_nowait(
            {"type": "websocket.disconnect", "code": CLOSE_TOO_MANY, "reason": SOCKET_MESSAGE}
        )
        self.transport.pause_reading()
        if self.conn.state is State.OPEN:
            self.conn.send_text(client_out.FLOODED.encode())
            self.conn.send_close(CLOSE_TOO_MANY, SOCKET_MESSAGE)
            self.transport.write(b"".join(self.conn.data_to_send()))
        finish(self.transport)
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = self.loop.call_later(ABORT_AFTER, self.transport.abort)
        return True

    def pause_writing(self) -> None:
        super().pause_writing()
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()
        owed, self.owed_pong = self.owed_pong, None
        if self.cut or self.transport.is_closing():
            return
        if owed is not None:
            self.transport.write(owed)
        if not self.read_paused:
            self.transport.resume_reading()

    async def receive(self) -> Any:
        # uvicorn resumes reading once the app has taken every message: not while paused here.
        message = await super().receive()
        if (self.cut or not self.writable.is_set()) and not self.transport.is_closing():
            self.transport.pause_reading()
        return message


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run``/``uvicorn.Config`` that serve the app."""
    http = type("HttpProtocol", (HttpProtocol,), {"header_timeout": settings.http_header_timeout})
    ws = type("WebSocketProtocol", (WebSocketProtocol,), {"rate": settings.rate_limit_socket})
    return {
        "http": http,
        "ws": ws,
        # No per-message deflate on WebSockets: the messages are small JSON, and compressing
        # each one for each recipient costs more CPU than the bytes it saves are worth here.
        "ws_per_message_deflate": False,
        "ws_max_size": settings.ws_max_message_bytes,
        "ws_ping_interval": settings.ws_ping_interval,
        "ws_ping_timeout": settings.ws_ping_timeout,
    }
