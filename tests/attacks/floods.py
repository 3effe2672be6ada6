"""Floods an attacker could run from outside, each ``async def NAME(url, seconds) -> counts``:
bounded by ``seconds`` and a count, it stops by itself and says what it did and what it got.
The attack tests run them short beside a canary table; ``benchmarks/attacks.py`` runs each for
10 s and measures the canary's latency and the server's RSS growth.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import socket
import struct
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.api.helpers import seated_table

# The settings a flood's server needs besides the defaults (``benchmarks/attacks.py`` reads them).
SERVER_ENV: dict[str, dict[str, str]] = {
    # Its 80 accounts come from one address: past the new players' limit, which is not what
    # this flood measures.
    "slow_webhooks": {
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOW_LOOPBACK": "true",
        "RATE_LIMIT_PLAYERS_IP": "",
    },
}
# The floods on the proxy: their ``url`` is nginx's, run from ``deploy/nginx.conf``.
BEHIND_NGINX = frozenset({"forged_forwarded_for", "slow_headers", "many_spectators"})

# Delivery (notifications): accounts whose webhooks never answer


@dataclass
class Hole:
    """A loopback listener that accepts connections, reads what comes and never answers:
    each webhook sent to it holds its delivery until the sender's timeout."""

    port: int = 0
    connections: int = 0
    _writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def _take(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Hole]:
        server = await asyncio.start_server(self._take, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()
            for writer in self._writers:
                writer.close()
            await server.wait_closed()


async def silent_webhook_accounts(
    client: httpx.AsyncClient, hole: Hole, accounts: int, until: float = math.inf
) -> dict[str, float]:
    """``accounts`` players with a webhook into ``hole``, each sent an ``opponent_joined``
    (one more player joins each one's table): as many deliveries that will never be answered.
    The target must allow such webhooks (``WEBHOOK_ALLOW_HTTP``, ``WEBHOOK_ALLOW_LOOPBACK``).
    No account is begun after ``until`` (``time.monotonic()``)."""
    counts = {"accounts": 0.0, "notes": 0.0, "refused": 0.0}
    joiner = await client.post("/v1/players", json={"name": "joiner"})
    if joiner.status_code != 201:
        counts["refused"] += 1
        return counts
    joins = {"Authorization": f"Bearer {joiner.json()['token']}"}
    for i in range(accounts):
        if time.monotonic() > until:
            break
        r = await client.post("/v1/players", json={"name": f"slow-{uuid.uuid4().hex[:6]}"})
        if r.status_code != 201:
            counts["refused"] += 1
            continue
        auth = {"Authorization": f"Bearer {r.json()['token']}"}
        url = f"http://127.0.0.1:{hole.port}/slow/{i}"
        r = await client.put("/v1/players/me/webhook", json={"url": url}, headers=auth)
        if r.status_code != 200:
            counts["refused"] += 1
            continue
        counts["accounts"] += 1
        r = await client.post("/v1/tables", json={}, headers=auth)
        if r.status_code != 201:
            counts["refused"] += 1
            continue
        r = await client.post(f"/v1/invites/{r.json()['invite_code']}", headers=joins)
        counts["notes" if r.status_code == 200 else "refused"] += 1
    return counts


async def slow_webhooks(url: str, seconds: float, accounts: int = 80) -> dict[str, float]:
    """Finding 9 of issue 24: up to ``accounts`` accounts whose webhooks never answer, each sent
    a notification, the listener held open for ``seconds``; counts of accounts, notes written,
    requests refused and the connections the deliveries opened to the listener."""
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=url, timeout=10) as client, Hole().open() as hole:
        counts = await silent_webhook_accounts(client, hole, accounts, deadline)
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))
        counts["connections"] = float(hole.connections)
    return counts


# Request bodies: JSON nested far deeper than any valid body

# One deep body: JSON arrays nested this many levels inside an object (about 2 KB), under
# orjson's own limit of 1024 levels.
DEEP_LEVELS = 1000
DEEP_BODY = b'{"name": ' + b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS + b"}"
# Each kind of route that reads a JSON body: anonymous creation, a move (its fast lane hands
# an odd body to the route), an authenticated change (the body is read before the token).
DEEP_TARGETS = (
    ("POST", "/v1/players"),
    ("POST", "/v1/tables/3c9d1f0e2b7a4e5d8c6b0a1f2e3d4c5b/moves/discard"),
    ("POST", "/v1/tables"),
    ("PUT", "/v1/players/me/webhook"),
)
# Deep bodies a second, and at most this many in all.
DEEP_RATE = 50
DEEP_MAX = 2000


async def deep_bodies(url: str, seconds: float) -> dict[str, float]:
    """Finding 1 of issue 24: JSON bodies nested ``DEEP_LEVELS`` deep, ``DEEP_RATE`` a second
    from four clients at once, to the routes of ``DEEP_TARGETS`` in turn; counts of what was
    ``sent``, each answer's ``status_<n>`` and ``code_<code>``, and ``failed`` (no answer)."""
    counts: dict[str, float] = {"sent": 0.0}
    headers = {"Content-Type": "application/json"}
    started = time.monotonic()
    total = min(DEEP_MAX, max(1, round(seconds * DEEP_RATE)))

    def count(key: str) -> None:
        counts[key] = counts.get(key, 0.0) + 1

    async def worker(client: httpx.AsyncClient, first: int, step: int) -> None:
        for i in range(first, total, step):
            # Paced: body i leaves at i / DEEP_RATE seconds, whichever client sends it.
            await asyncio.sleep(max(0.0, started + i / DEEP_RATE - time.monotonic()))
            if time.monotonic() >= started + seconds:
                return
            method, path = DEEP_TARGETS[i % len(DEEP_TARGETS)]
            count("sent")
            try:
                r = await client.request(method, path, content=DEEP_BODY, headers=headers)
            except httpx.HTTPError:
                count("failed")
                continue
            count(f"status_{r.status_code}")
            try:
                count(f"code_{r.json().get('code')}")
            except ValueError:
                count("code_none")

    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        await asyncio.gather(*(worker(client, k, 4) for k in range(4)))
    return counts


# Identity: mass creation of players, tables and chat lines.

# At most this many of each creation the flood tries; at most this many pairs chat.
CREATION_COUNT = 2000
CHAT_PAIRS = 25


async def creation(url: str, seconds: float) -> dict[str, float]:
    """Create players as fast as the server answers, then tables for one of them, then have
    the others chat in pairs, each phase a third of ``seconds``: what was created and what
    refused (``players_ip``, ``max_open_tables``, ``chat_ip``)."""
    counts: Counter[str] = Counter()
    phase = seconds / 3
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:

        async def players(until: float) -> list[str]:
            tokens: list[str] = []
            while time.monotonic() < until and counts["players_tried"] < CREATION_COUNT:
                counts["players_tried"] += 1
                r = await client.post("/v1/players", json={"name": f"f-{uuid.uuid4().hex[:6]}"})
                if r.status_code == 201:
                    counts["players_created"] += 1
                    tokens.append(r.json()["token"])
                else:
                    counts[f"players_{r.status_code}"] += 1
            return tokens

        async def tables(token: str, until: float) -> None:
            auth = {"Authorization": f"Bearer {token}"}
            while time.monotonic() < until and counts["tables_tried"] < CREATION_COUNT:
                counts["tables_tried"] += 1
                r = await client.post("/v1/tables", json={}, headers=auth)
                key = "tables_created" if r.status_code == 201 else f"tables_{r.status_code}"
                counts[key] += 1

        async def chat(pair: list[str], until: float) -> None:
            auths = [{"Authorization": f"Bearer {t}"} for t in pair]
            r = await client.post("/v1/tables", json={}, headers=auths[0])
            if r.status_code != 201:
                counts[f"chat_table_{r.status_code}"] += 1
                return
            table = r.json()
            r = await client.post(f"/v1/invites/{table['invite_code']}", headers=auths[1])
            if r.status_code != 200:
                counts[f"chat_join_{r.status_code}"] += 1
                return
            for line in range(5):
                for auth in auths:
                    if time.monotonic() >= until:
                        return
                    body = {"text": f"line {line}"}
                    r = await client.post(
                        f"/v1/tables/{table['table_id']}/chat", json=body, headers=auth
                    )
                    key = "chat_sent" if r.status_code == 200 else f"chat_{r.status_code}"
                    counts[key] += 1

        started = time.monotonic()
        # Four at once: more than one request in flight, as a script would.
        made = await asyncio.gather(*(players(started + phase) for _ in range(4)))
        tokens = [t for batch in made for t in batch]
        if tokens:
            await asyncio.gather(*(tables(tokens[0], started + 2 * phase) for _ in range(4)))
        pairs = [tokens[i : i + 2] for i in range(1, len(tokens) - 1, 2)][:CHAT_PAIRS]
        await asyncio.gather(*(chat(pair, started + seconds) for pair in pairs))
    return {key: float(value) for key, value in counts.items()}


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


# The proxy in front of the app (deploy/nginx.conf): forged addresses, slow headers, many sockets

FORGED_REQUESTS = 300
SLOW_CONNECTIONS = 50
SPECTATORS = 160


async def forged_forwarded_for(url: str, seconds: float) -> dict[str, float]:
    """Requests each naming a different client address in ``X-Forwarded-For`` (from
    203.0.113.0/24, TEST-NET-3), as if each came from another client: a per-address limit that
    believed the header would let every one through."""
    counts = {"sent": 0.0, "limited": 0.0, "answered": 0.0}
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        for n in range(FORGED_REQUESTS):
            if time.monotonic() > deadline:
                break
            forged = {"X-Forwarded-For": f"203.0.113.{n % 250 + 1}"}
            r = await client.get("/v1/players/me", headers=forged)
            counts["sent"] += 1
            counts["limited" if r.status_code == 429 else "answered"] += 1
    return counts


async def slow_headers(url: str, seconds: float) -> dict[str, float]:
    """Slowloris: connections that send a request's headers a byte every half second and never
    finish them; counts how many the server cut within ``seconds``."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    counts = {"opened": 0.0, "cut": 0.0, "open_at_end": 0.0}

    async def one() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        counts["opened"] += 1
        try:
            writer.write(b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            while True:
                await asyncio.sleep(0.5)
                writer.write(b"a")
                await writer.drain()
                # A server that timed the request out answers (408) or closes: either is a cut.
                try:
                    async with asyncio.timeout(0.01):
                        await reader.read(1024)
                except TimeoutError:
                    continue
                raise ConnectionResetError
        except OSError:
            counts["cut"] += 1
        finally:
            writer.close()

    tasks = [asyncio.create_task(one()) for _ in range(SLOW_CONNECTIONS)]
    await asyncio.wait(tasks, timeout=seconds)
    for task in tasks:
        if not task.done():
            counts["open_at_end"] += 1
            task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return counts


async def many_spectators(url: str, seconds: float, hold: float = 2.0) -> dict[str, float]:
    """One address opens ``SPECTATORS`` anonymous sockets on one table (for ``seconds`` at
    most) and holds them ``hold`` seconds more, so a canary plays while they are all open
    however quickly they opened; counts how many opened and how many were refused (HTTP 429
    at the handshake)."""
    counts = {"opened": 0.0, "refused": 0.0, "failed": 0.0}
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        r = await client.post("/v1/players", json={"name": "Host"})
        token = r.json()["token"]
        r = await client.post("/v1/tables", json={}, headers={"Authorization": f"Bearer {token}"})
        path = f"/v1/tables/{r.json()['table_id']}/ws"
    ws_url = url.replace("http://", "ws://", 1) + path
    deadline = time.monotonic() + seconds
    async with contextlib.AsyncExitStack() as sockets:
        for _ in range(SPECTATORS):
            if time.monotonic() > deadline:
                break
            try:
                await sockets.enter_async_context(connect(ws_url, open_timeout=5))
                counts["opened"] += 1
            except InvalidStatus as exc:
                counts["refused" if exc.response.status_code == 429 else "failed"] += 1
            except (OSError, TimeoutError):
                counts["failed"] += 1
        await asyncio.sleep(hold)
    return counts
