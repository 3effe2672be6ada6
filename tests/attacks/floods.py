"""Floods an attacker could run from outside, each ``async def NAME(url, seconds) -> counts``:
bounded by ``seconds`` and a count, it stops by itself and says what it did and what it got.
The attack tests run them short beside a canary table; ``benchmarks/attacks.py`` runs each for
10 s and measures the canary's latency and the server's RSS growth.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx

# The settings a flood's server needs besides the defaults (``benchmarks/attacks.py`` reads them).
SERVER_ENV: dict[str, dict[str, str]] = {
    "slow_webhooks": {"WEBHOOK_ALLOW_HTTP": "true", "WEBHOOK_ALLOW_LOOPBACK": "true"},
}

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
