"""A rotated or revoked token is refused by another server process: over the Redis bus at once,
and without Redis once ``token_cache_seconds`` has passed (a socket it opened there then acts no
more: its next move ends it)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.api.conftest import pg_database
from tests.api.processes import processes
from tests.waiting import wait_for


def _me(url: str, token: str) -> int:
    r = httpx.get(f"{url}/v1/players/me", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return r.status_code


def _refused_within(url: str, token: str, seconds: float) -> float:
    """Poll until ``url`` refuses ``token``; the time it took (fails after ``seconds``)."""
    started = time.monotonic()
    wait_for(lambda: _me(url, token) == 401, timeout=seconds, what=f"{url} to refuse the token")
    return time.monotonic() - started


def _rotate_and_revoke(a: str, b: str, seconds: float) -> None:
    token = httpx.post(f"{a}/v1/players", json={"name": "Ada"}, timeout=30).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert _me(b, token) == 200  # now in b's token cache
    r = httpx.post(f"{a}/v1/players/me/tokens/rotate", headers=auth, timeout=30)
    assert r.status_code == 201, r.text
    rotated = r.json()["token"]
    _refused_within(b, token, seconds)
    assert _me(b, rotated) == 200

    rauth = {"Authorization": f"Bearer {rotated}"}
    r = httpx.post(f"{a}/v1/players/me/tokens", json={"label": "x"}, headers=rauth, timeout=30)
    other = r.json()
    assert _me(b, other["token"]) == 200
    r = httpx.delete(f"{a}/v1/players/me/tokens/{other['id']}", headers=rauth, timeout=30)
    assert r.status_code == 200, r.text
    _refused_within(b, other["token"], seconds)
    assert _me(b, rotated) == 200


async def _socket_acts_no_more(a: str, b: str, cache_seconds: float) -> None:
    """A seat's socket on ``b``, its token revoked on ``a``: once ``b``'s cache let go of the
    token, the socket's next move is refused and ends it (4401)."""
    async with httpx.AsyncClient(timeout=30) as client:
        p0, p1 = [
            (await client.post(f"{a}/v1/players", json={"name": n})).json() for n in ("Ada", "Bo")
        ]
        auth0, auth1 = ({"Authorization": f"Bearer {p['token']}"} for p in (p0, p1))
        table = (await client.post(f"{a}/v1/tables", json={}, headers=auth0)).json()
        await client.post(f"{a}/v1/invites/{table['invite_code']}", headers=auth1)
        url = b.replace("http", "ws", 1) + f"/v1/tables/{table['table_id']}/ws?token={p0['token']}"
        async with connect(url, proxy=None) as ws:
            assert json.loads(await ws.recv())["type"] == "view"
            (token,) = (await client.get(f"{a}/v1/players/me/tokens", headers=auth0)).json()
            r = await client.delete(f"{a}/v1/players/me/tokens/{token['id']}", headers=auth0)
            assert r.status_code == 200, r.text
            await asyncio.sleep(cache_seconds + 0.5)
            await ws.send(json.dumps({"type": "move", "kind": "pass", "id": "m1"}))
            messages = []
            try:
                async with asyncio.timeout(10):
                    while True:
                        messages.append(json.loads(await ws.recv()))
            except ConnectionClosed:
                pass
            except TimeoutError:
                raise AssertionError(f"the socket still acts: {messages}") from None
            assert ws.close_code == 4401, (ws.close_code, messages)
            assert [m["code"] for m in messages if m["type"] == "error"] == ["token_revoked"]


def test_the_bus_carries_revocations_to_another_process(tmp_path: Path) -> None:
    # The cache would keep a token for ten minutes: only the bus can explain a quick refusal.
    with (
        pg_database("ginrummy_tokens") as url,
        processes(
            tmp_path,
            2,
            DATABASE_URL=url,
            REDIS_URL="redis://127.0.0.1:6379/0",
            REDIS_PREFIX=f"test-{uuid.uuid4().hex}",
            TOKEN_CACHE_SECONDS="600",
        ) as (a, b),
    ):
        _rotate_and_revoke(a.url, b.url, seconds=10)


def test_without_redis_the_cache_lifetime_bounds_a_revocation(tmp_path: Path) -> None:
    with (
        pg_database("ginrummy_tokens") as url,
        processes(tmp_path, 2, DATABASE_URL=url, TOKEN_CACHE_SECONDS="2") as (a, b),
    ):
        _rotate_and_revoke(a.url, b.url, seconds=20)
        asyncio.run(_socket_acts_no_more(a.url, b.url, cache_seconds=2))
