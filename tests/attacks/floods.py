"""The floods of the attack tests, each a coroutine ``NAME(url, seconds) -> counts``.

Each runs from ``127.0.0.1`` against the server at ``url`` for at most ``seconds`` (and a
bounded count), stops by itself, and returns what it did and what it got, so a test can assert
on it and ``benchmarks/attacks.py`` can run it longer beside the canary.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
import time
from urllib.parse import urlsplit

import httpx

from tests.api.helpers import seated_table

# The attacker's address (the canary plays from another: ``harness.CANARY_ADDRESS``).
ATTACKER_ADDRESS = "127.0.0.1"


# Sockets: control-frame floods, many sockets, slowloris (``test_sockets.py``).

PING: int = 0x9
PONG: int = 0xA
CLOSE: int = 0x8
TEXT: int = 0x1
# Frames written per ``write`` by a flood: an attacker batches.
BATCH = 64
# A flood whose writes have not gone for this long is held back by the server: it stops.
HELD = 1.0


def masked(opcode: int, payload: bytes) -> bytes:
    """A client's final frame (RFC 6455, 5.2) of ``opcode``, masked with a zero key (valid and
    free to compute); ``payload`` of at most 125 bytes."""
    assert len(payload) <= 125
    return bytes((0x80 | opcode, 0x80 | len(payload))) + b"\0\0\0\0" + payload


class RawSocket:
    """A WebSocket client on a bare non-blocking socket: it reads only when told to, and what
    the server sent before it closed can still be read after a failed write (a stream's
    transport would drop it)."""

    def __init__(self, sock: socket.socket, buffer: bytes) -> None:
        self.sock = sock
        self.buffer = bytearray(buffer)  # read and not yet parsed
        self.errors: list[str] = []  # the ``code`` of each ``error`` message read
        self.close_code: int | None = None

    @classmethod
    async def open(
        cls, url: str, path: str, address: str = ATTACKER_ADDRESS, headers: str = ""
    ) -> RawSocket:
        """Connect from ``address`` and complete the handshake of ``path`` with ``headers``
        (lines, each ending in CRLF) besides its own: 101, or an AssertionError naming the
        status."""
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        loop = asyncio.get_running_loop()
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.bind((address, 0))
            await loop.sock_connect(sock, (host, port))
            await loop.sock_sendall(
                sock,
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                f"Sec-WebSocket-Version: 13\r\n{headers}\r\n".encode(),
            )
            received = b""
            async with asyncio.timeout(10):
                while b"\r\n\r\n" not in received:
                    chunk = await loop.sock_recv(sock, 65536)
                    if not chunk:
                        raise ConnectionError("closed in the handshake")
                    received += chunk
        except BaseException:
            sock.close()
            raise
        head, _, rest = received.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            sock.close()
            raise AssertionError(head.split(b"\r\n", 1)[0].decode())
        return cls(sock, rest)

    async def _exactly(self, size: int) -> bytes:
        loop = asyncio.get_running_loop()
        while len(self.buffer) < size:
            chunk = await loop.sock_recv(self.sock, 1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def frame(self) -> tuple[int, bytes]:
        """The next frame from the server (unmasked): its opcode and payload."""
        head = await self._exactly(2)
        size = head[1] & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", await self._exactly(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", await self._exactly(8))
        return head[0] & 0x0F, await self._exactly(size)

    async def message(self, timeout: float = 10.0) -> dict[str, object] | None:
        """The next text message (control frames skipped); None at a close or the end."""
        async with asyncio.timeout(timeout):
            while self.close_code is None:
                try:
                    opcode, payload = await self.frame()
                except OSError:
                    return None
                if opcode == CLOSE:
                    self.close_code = struct.unpack("!H", payload[:2])[0] if payload else 1005
                elif opcode == TEXT:
                    message: dict[str, object] = json.loads(payload)
                    if message.get("type") == "error":
                        self.errors.append(str(message.get("code")))
                    return message
        return None

    async def closed(self, timeout: float = 10.0) -> int | None:
        """Read until the server's close frame: its code (None: the connection ended or
        ``timeout`` passed without one)."""
        with contextlib.suppress(TimeoutError):
            while self.close_code is None and await self.message(timeout) is not None:
                pass
        return self.close_code

    async def flood(self, frame: bytes, seconds: float, count: int) -> int:
        """Write ``frame`` over and over, never reading, for ``seconds`` or ``count`` frames,
        or until a write has waited ``HELD`` s (the server stopped reading); how many were
        written."""
        loop = asyncio.get_running_loop()
        sent = 0
        batch = frame * BATCH
        deadline = time.monotonic() + seconds
        while sent < count and (left := deadline - time.monotonic()) > 0:
            try:
                await asyncio.wait_for(loop.sock_sendall(self.sock, batch), min(left, HELD))
            except (TimeoutError, OSError):
                break
            sent += BATCH
        return sent

    def close(self) -> None:
        self.sock.close()


async def _table(url: str) -> tuple[str, str]:
    """A new table of two new players, from the attacker's address: (its id, seat 0's token)."""
    transport = httpx.AsyncHTTPTransport(local_address=ATTACKER_ADDRESS)
    async with httpx.AsyncClient(base_url=url, transport=transport, timeout=30) as client:
        table_id, players = await seated_table(client)
    return table_id, players[0].token


async def _control_flood(
    url: str, seconds: float, opcode: int, seated: bool, count: int
) -> dict[str, float]:
    table_id, token = await _table(url)
    path = f"/v1/tables/{table_id}/ws" + (f"?token={token}" if seated else "")
    socket = await RawSocket.open(url, path)
    try:
        await asyncio.sleep(0.3)  # live and idle: a spectator's socket is parked by now
        started = time.monotonic()
        sent = await socket.flood(masked(opcode, os.urandom(125)), seconds, count)
        elapsed = time.monotonic() - started
        code = await socket.closed(timeout=2)
    finally:
        socket.close()
    return {
        "frames": sent,
        "seconds": round(elapsed, 2),
        "close_code": code or 0,
        "rate_limited": socket.errors.count("rate_limited"),
    }


async def ping_flood_spectator(
    url: str, seconds: float, *, count: int = 2_000_000
) -> dict[str, float]:
    """125-byte pings on a spectator's socket, never reading the pongs."""
    return await _control_flood(url, seconds, PING, False, count)


async def ping_flood_seated(
    url: str, seconds: float, *, count: int = 2_000_000
) -> dict[str, float]:
    """125-byte pings on a seated player's socket, never reading the pongs."""
    return await _control_flood(url, seconds, PING, True, count)


async def pong_flood(url: str, seconds: float, *, count: int = 2_000_000) -> dict[str, float]:
    """Unsolicited 125-byte pongs on a spectator's socket."""
    return await _control_flood(url, seconds, PONG, False, count)


async def _swarm(url: str, seconds: float, path: str, count: int) -> dict[str, float]:
    """Open up to ``count`` sockets on ``path``, hold those the server keeps until ``seconds``
    have passed, then close them all."""
    deadline = time.monotonic() + seconds
    held: list[RawSocket] = []
    refused = codes = failed = 0
    try:
        for _ in range(count):
            if time.monotonic() >= deadline:
                break
            try:
                socket = await RawSocket.open(url, path)
            except (AssertionError, OSError, TimeoutError):
                failed += 1
                continue
            first = await socket.message()
            if first is not None and first.get("code") == "too_many_sockets":
                refused += 1
                codes += await socket.closed() == 4429
                socket.close()
            else:
                held.append(socket)
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
    finally:
        for socket in held:
            socket.close()
    return {"held": len(held), "refused": refused, "closed_4429": codes, "failed": failed}


async def socket_swarm(url: str, seconds: float, *, count: int = 3000) -> dict[str, float]:
    """Spectator sockets on one table from one address, as many as the server keeps."""
    table_id, _ = await _table(url)
    return await _swarm(url, seconds, f"/v1/tables/{table_id}/ws", count)


async def token_swarm(url: str, seconds: float, *, count: int = 2000) -> dict[str, float]:
    """One player's sockets on their table with one token, as many as the server keeps."""
    table_id, token = await _table(url)
    return await _swarm(url, seconds, f"/v1/tables/{table_id}/ws?token={token}", count)


async def slowloris(url: str, seconds: float, *, count: int = 1500) -> dict[str, float]:
    """``count`` connections that send a request's headers a few bytes every half second and
    never finish them; how many the server closed, and when the first was."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    started = time.monotonic()
    closed: list[float] = []

    async def held(reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.read()  # what the server answers, to its end
        closed.append(time.monotonic() - started)

    writers: list[asyncio.StreamWriter] = []
    watchers: list[asyncio.Task[None]] = []
    try:
        for _ in range(count):
            if time.monotonic() - started >= seconds:
                break
            try:
                reader, writer = await asyncio.open_connection(
                    host, port, local_addr=(ATTACKER_ADDRESS, 0)
                )
            except OSError:
                break
            writer.write(f"GET /v1/tables HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
            writers.append(writer)
            watchers.append(asyncio.create_task(held(reader)))
        tick = 0
        while time.monotonic() - started < seconds:
            await asyncio.sleep(0.5)
            tick += 1
            for writer in writers:
                if not writer.transport.is_closing():
                    writer.write(f"X-{tick}: a\r\n".encode())
    finally:
        for writer in writers:
            writer.transport.abort()
        for watcher in watchers:
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    return {
        "connections": len(writers),
        "closed_by_server": len(closed),
        "first_close_s": round(min(closed, default=0.0), 2),
    }
