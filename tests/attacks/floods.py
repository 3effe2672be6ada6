"""The attacks as reusable floods: ``async def NAME(url, seconds) -> dict[str, float]``.

Each flood runs against the server at ``url`` from ``127.0.0.1`` for at most ``seconds`` and a
bounded count, stops by itself, and returns counts of what it did and what it got. The tests in
``tests/attacks/`` run each for a second or two beside a canary table; ``benchmarks/attacks.py``
runs each for longer and measures the server's RSS growth and the canary's move latency.
"""

from __future__ import annotations

import asyncio
import time

import httpx

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
