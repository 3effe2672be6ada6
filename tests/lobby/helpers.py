"""The lobby over HTTP and sockets: seeks posted, notifications awaited."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests.api.helpers import JSON, Player

LIVE = {"preset": "standard", "clock": {"control": "bank", "seconds": 300, "bonus": 5}}
CORRESPONDENCE = {"preset": "standard", "clock": {"control": "per_move", "seconds": 259200}}


def ws_url(base: str, path: str, player: Player | None) -> str:
    url = base.replace("http://", "ws://") + path
    return url if player is None else f"{url}?token={player.token}"


@asynccontextmanager
async def socket(
    base: str, player: Player | None, path: str = "/v1/players/me/ws"
) -> AsyncIterator[ClientConnection]:
    async with connect(ws_url(base, path, player), proxy=None) as ws:
        yield ws


async def message(ws: ClientConnection, kind: str, timeout: float = 30) -> JSON:
    """The next message of type ``kind`` (others skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            found: JSON = json.loads(await ws.recv())
            if found["type"] == kind:
                return found


async def post_seek(client: httpx.AsyncClient, player: Player, **body: Any) -> JSON:
    r = await client.post("/v1/seeks", json=body, headers=player.auth)
    assert r.status_code == 201, r.text
    seek: JSON = r.json()
    return seek


async def seek(client: httpx.AsyncClient, seek_id: str, kind: str = "seeks") -> JSON:
    r = await client.get(f"/v1/{kind}/{seek_id}")
    assert r.status_code == 200, r.text
    found: JSON = r.json()
    return found
