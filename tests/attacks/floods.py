"""The attacks as reusable floods: each ``async def NAME(url, seconds) -> dict[str, float]`` runs
from this machine's default address (``127.0.0.1``) for at most ``seconds`` and a bounded count,
stops by itself and returns counts of what it did and what it got. The tests in this folder run
each for a second or three beside a canary table; ``benchmarks/attacks.py`` runs each for 10 s
and measures the server's RSS growth and the canary's p99."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter

import httpx

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
