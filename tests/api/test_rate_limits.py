"""Rate limits: shared by two real server processes through Redis, per token and per address on
HTTP (429 with Retry-After), per socket on WebSocket messages, and never a failure for Redis."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.api.conftest import _free_port, pg_database, sqlite_only, start_server
from tests.api.helpers import new_player, seated_table
from tests.api.processes import processes

REDIS = "redis://127.0.0.1:6379/0"


async def clear_of_a_window_edge(margin: float = 15.0) -> None:
    """Start where no minute's edge falls in the next ``margin`` seconds.

    The HTTP limits are sliding window counters (``limits``): the previous fixed window, aligned
    on the clock's minutes, is weighed by the part of it still inside the window, so hits made
    just before an edge count for a little less than one after it, and a test counting exactly
    to a per-minute limit across an edge would see one more request let through.
    """
    left = 60 - time.time() % 60
    if left < margin:
        await asyncio.sleep(left + 0.2)


@pytest.fixture(scope="module")
def postgresql_url() -> Iterator[str]:
    with pg_database("ginrummy_limits") as url:
        yield url


async def test_limits_hold_across_two_processes_sharing_redis(
    postgresql_url: str, tmp_path: Path
) -> None:
    env = {
        "DATABASE_URL": postgresql_url,
        "REDIS_URL": REDIS,
        "REDIS_PREFIX": f"test-{uuid.uuid4().hex}",
        "RATE_LIMIT_TOKEN": "10/minute",
        "RATE_LIMIT_IP": "25/minute",
    }
    with processes(tmp_path, 2, **env) as (a, b):
        clients = [httpx.AsyncClient(base_url=p.url, timeout=30) for p in (a, b)]
        try:
            await clear_of_a_window_edge()
            player = await new_player(clients[0])  # the address's first request
            by_token = []
            for client in itertools.islice(itertools.cycle(clients), 12):
                r = await client.get("/v1/players/me", headers=player.auth)
                by_token.append((client.base_url.port, r.status_code))
            # 10 between the two processes, half through each, then refused by either.
            assert [s for _, s in by_token] == [200] * 10 + [429] * 2
            assert {port for port, s in by_token if s == 200} == {a_port(a.url), a_port(b.url)}
            r = await clients[1].get("/v1/players/me", headers=player.auth)
            assert r.status_code == 429
            assert r.json() == {
                "code": "rate_limited",
                "message": "too many requests for this token",
            }
            assert 1 <= int(r.headers["Retry-After"]) <= 60
            # The address: 1 + 10 requests counted so far (refused ones count for nothing).
            anonymous = []
            for client in itertools.islice(itertools.cycle(clients), 16):
                anonymous.append((await client.get("/v1/tables/none")).status_code)
            assert anonymous == [404] * 14 + [429] * 2
            r = await clients[0].get("/v1/tables/none")
            assert r.json()["message"] == "too many requests from this address"
            # Health and metrics are never limited.
            for client in clients:
                assert (await client.get("/livez")).status_code == 200
                metrics = (await client.get("/metrics")).text
                assert 'ginrummy_rate_limited_total{limit="token"}' in metrics
                # Refused before routing, labelled by its route all the same.
                refused_here = 'method="GET",route="/v1/players/me",status="429"'
                assert refused_here in metrics
        finally:
            for client in clients:
                await client.aclose()


def a_port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@sqlite_only
async def test_a_socket_over_its_limit_gets_an_error_message(database_url: str) -> None:
    server = start_server(database_url, rate_limit_socket="5/minute")
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, (p0, _) = await seated_table(client)
        url = server.url.replace("http://", "ws://") + f"/v1/tables/{table_id}/ws?token={p0.token}"
        async with connect(url, proxy=None) as ws:
            for i in range(7):
                await ws.send(orjson.dumps({"type": "ping", "id": str(i)}).decode())
            replies: list[dict[str, str]] = []
            while len(replies) < 7:
                message = orjson.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] in ("pong", "error"):
                    replies.append(message)
        assert [m["type"] for m in replies] == ["pong"] * 5 + ["error"] * 2
        assert replies[-1]["code"] == "rate_limited"
    finally:
        server.stop()


@sqlite_only
async def test_a_redis_that_does_not_answer_never_fails_a_request(database_url: str) -> None:
    """Limits fall back to this process's memory: still enforced, never a 500."""
    server = start_server(
        database_url,
        redis_url=f"redis://127.0.0.1:{_free_port()}/0",
        rate_limit_token="3/minute",
        rate_limit_ip="",
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            player = await new_player(client)
            await clear_of_a_window_edge()
            codes = [
                (await client.get("/v1/players/me", headers=player.auth)).status_code
                for _ in range(4)
            ]
            assert codes == [200, 200, 200, 429]
            metrics = (await client.get("/metrics")).text
            assert 'ginrummy_redis_errors_total{component="rate_limits"}' in metrics
    finally:
        server.stop()


@sqlite_only
async def test_a_websocket_handshake_over_a_limit_is_refused_with_429(database_url: str) -> None:
    server = start_server(database_url, rate_limit_token="3/minute", rate_limit_ip="")
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            player = await new_player(client)  # no token: not counted against it
        url = server.url.replace("http://", "ws://") + f"/v1/players/me/ws?token={player.token}"
        await clear_of_a_window_edge()
        for _ in range(3):
            async with connect(url, proxy=None):
                pass
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, proxy=None):
                pass
        response = refused.value.response
        assert response.status_code == 429
        assert 1 <= int(response.headers["Retry-After"]) <= 60
        assert orjson.loads(response.body)["code"] == "rate_limited"
    finally:
        server.stop()
