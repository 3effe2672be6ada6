"""A connection to Redis for the bus, driven by the event loop's callbacks: RESP in and out.

The bus needs three commands, ``PUBLISH``, ``SUBSCRIBE`` and ``PING`` (and ``AUTH`` when the
URL has a password). Through redis-py's client each published commit cost a pipeline (its
objects, a connection checkout, a wait for the reply) and each received one a chain of
coroutines with a timeout: two to four times what the same bytes cost here (measured in
docs/performance.md, "Two processes"). A ``Link`` writes a command's bytes
(``hiredis.pack_command``) straight to the transport, and hiredis's parser, the one redis-py
uses, hands every reply of one read to ``on_reply`` in the same callback: no task, future or
timer per message.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any, cast

import hiredis
from redis.asyncio.connection import SSLConnection, parse_url

Reply = Any  # what hiredis parses: bytes, int, a list of them, or a ``hiredis.ReplyError``


class Link(asyncio.Protocol):
    """One connection: ``send`` / ``write`` never wait; ``lost`` says why it ended."""

    def __init__(self, on_reply: Callable[[Reply], None]) -> None:
        self.on_reply = on_reply
        # Called when the transport takes writes again after Redis fell behind.
        self.on_drain: Callable[[], None] | None = None
        self.lost: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.writable = True
        self.replies = 0  # how many replies arrived: the bus's sign of life
        self._reader = hiredis.Reader()
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio's, only alike.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._reader.feed(data)
        try:
            while (reply := self._reader.gets()) is not False:
                self.replies += 1
                self.on_reply(reply)
        except hiredis.ProtocolError as exc:
            self.close(f"ProtocolError: {exc}")

    def connection_lost(self, exc: Exception | None) -> None:
        self._end("ConnectionError: closed by redis" if exc is None else _reason(exc))

    def pause_writing(self) -> None:
        self.writable = False

    def resume_writing(self) -> None:
        self.writable = True
        if self.on_drain is not None:
            self.on_drain()

    def send(self, *args: bytes | str) -> None:
        """Write one command."""
        self.write(pack(*args))

    def write(self, data: bytes) -> None:
        """Write commands already packed (``pack``)."""
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def close(self, reason: str = "ConnectionError: closed") -> None:
        self._end(reason)
        if self._transport is not None:
            self._transport.close()

    def _end(self, reason: str) -> None:
        if not self.lost.done():
            self.lost.set_result(reason)


def pack(*args: bytes | str) -> bytes:
    """A command as RESP bytes, for ``Link.write``."""
    packed: bytes = hiredis.pack_command(args)  # type: ignore[arg-type]
    return packed


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def connect(url: str, on_reply: Callable[[Reply], None], timeout: float) -> Link:
    """A ``Link`` to the Redis of ``url`` (``redis://``, ``rediss://`` with the system's CAs,
    ``unix://``), authenticated if the URL says so; raises ``OSError``/``TimeoutError`` when
    Redis cannot be reached, ``ConnectionError`` when it refuses the password."""
    options: dict[str, Any] = dict(parse_url(url))
    loop = asyncio.get_running_loop()
    link: Link | None = None

    def factory() -> Link:
        nonlocal link
        link = Link(on_reply)
        return link

    try:
        async with asyncio.timeout(timeout):
            if "path" in options:
                await loop.create_unix_connection(factory, options["path"])
            else:
                secure = options.get("connection_class") is SSLConnection
                tls = ssl.create_default_context() if secure else None
                host, port = options.get("host", "localhost"), options.get("port", 6379)
                await loop.create_connection(factory, host, port, ssl=tls)
            assert link is not None
            if options.get("password"):
                await _authenticate(link, options)
    except BaseException:
        if link is not None:
            link.close()
        raise
    return link


async def _authenticate(link: Link, options: dict[str, Any]) -> None:
    answer: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
    on_reply, link.on_reply = link.on_reply, answer.set_result
    credentials = [options["username"]] if options.get("username") else []
    link.send(b"AUTH", *credentials, options["password"])
    try:
        reply = await answer
    finally:
        link.on_reply = on_reply
    if isinstance(reply, hiredis.ReplyError):
        raise ConnectionError(f"redis refused the password: {reply}")
