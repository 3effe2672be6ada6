"""The floods of the attack tests, each a coroutine ``NAME(url, seconds) -> counts`` that stops by
itself (bounded in time and in count), so that ``benchmarks/attacks.py`` can run each one longer
beside a canary table."""

from __future__ import annotations

import asyncio
import contextlib
import time
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

# --- ops: the proxy in front of the app (deploy/nginx.conf) ---------------------------------

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


async def many_spectators(url: str, seconds: float) -> dict[str, float]:
    """One address opens ``SPECTATORS`` anonymous sockets on one table and holds them; counts
    how many opened and how many were refused (HTTP 429 at the handshake)."""
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
    return counts
