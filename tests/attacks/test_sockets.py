"""Attacks on the sockets: control-frame floods, too many sockets, headers that never end.

Each runs against ``python -m app`` beside the canary table (``harness``), which must keep
playing, and the server's RSS must not grow by more than ``RSS_BUDGET`` meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.attacks import floods
from tests.attacks.floods import RawSocket
from tests.attacks.harness import CANARY_ADDRESS, Canary, rss_bytes, target

RSS_BUDGET = 20 * 1024 * 1024
# How long each flood runs here (the benchmark runs them for 10 s).
SECONDS = 3.0

Flood = Callable[..., Awaitable[dict[str, float]]]


async def _beside_canary(
    url: str, pid: int, flood: Awaitable[dict[str, float]]
) -> dict[str, float]:
    """Run ``flood`` while the canary plays; assert the canary kept playing and the RSS budget."""
    before = rss_bytes(pid)
    async with Canary(url).running() as canary:
        result = await flood
        grown = rss_bytes(pid) - before
    canary.assert_kept_playing()
    assert grown < RSS_BUDGET, (f"RSS grew {grown / 2**20:.1f} MB", result, canary.summary())
    return result


@pytest.mark.parametrize(
    "flood", [floods.ping_flood_spectator, floods.ping_flood_seated, floods.pong_flood]
)
async def test_a_control_frame_flood_is_closed_with_4429(tmp_path: Path, flood: Flood) -> None:
    """Pings or pongs count against the socket's limit: the first over it closes the socket
    with 4429, after an ``error`` ``rate_limited``."""
    with target(tmp_path, RATE_LIMIT_SOCKET="3000/minute") as server:
        result = await _beside_canary(
            server.url, server.process.pid, flood(server.url, SECONDS, count=200_000)
        )
    assert result["close_code"] == 4429, result
    assert result["rate_limited"] == 1, result


@pytest.mark.parametrize("flood", [floods.ping_flood_spectator, floods.ping_flood_seated])
async def test_a_ping_flood_that_never_reads_is_held_back_by_tcp(
    tmp_path: Path, flood: Flood
) -> None:
    """With no limit on the socket, a client that sends pings and never reads their pongs is
    read no further once the server's write buffer is full: its own writes stop, and the
    server's memory stays put."""
    with target(tmp_path, RATE_LIMIT_SOCKET="") as server:
        result = await _beside_canary(
            server.url, server.process.pid, flood(server.url, SECONDS, count=2_000_000)
        )
    # A few MB fit in the two kernels' buffers on loopback; 125-byte pings at loopback speed
    # for 3 s are well over a million when nothing holds them back.
    assert result["frames"] < 200_000, result


async def test_sockets_from_one_address_are_capped(tmp_path: Path) -> None:
    """``WS_MAX_PER_ADDRESS`` open sockets from one address; one more is refused with
    ``too_many_sockets`` and 4429; another address still gets in; a closed one frees its
    place (a parked spectator's too)."""
    with target(tmp_path, WS_MAX_PER_ADDRESS="10", WS_MAX_PER_PLAYER="0") as server:
        url = server.url
        result = await _beside_canary(
            url, server.process.pid, floods.socket_swarm(url, SECONDS, count=15)
        )
        assert result == {"held": 10, "refused": 5, "closed_4429": 5, "failed": 0}, result
        table_id, _ = await floods._table(url)
        path = f"/v1/tables/{table_id}/ws"
        sockets = [await RawSocket.open(url, path) for _ in range(10)]
        try:
            assert all([(await s.message() or {}).get("type") == "view" for s in sockets])
            refused = await RawSocket.open(url, path)
            assert (await refused.message() or {}).get("code") == "too_many_sockets"
            assert await refused.closed() == 4429
            refused.close()
            other = await RawSocket.open(url, path, address=CANARY_ADDRESS)
            assert (await other.message() or {}).get("type") == "view"
            other.close()
            await asyncio.sleep(0.5)  # parked by now: its end is the parked socket's
            sockets.pop().close()
            await asyncio.sleep(0.2)
            again = await RawSocket.open(url, path)
            assert (await again.message() or {}).get("type") == "view"
            sockets.append(again)
        finally:
            for socket in sockets:
                socket.close()


async def test_the_address_counted_is_the_one_the_server_trusts(tmp_path: Path) -> None:
    """Behind a trusted proxy (``FORWARDED_ALLOW_IPS``) the address counted is the client its
    ``X-Forwarded-For`` names; from anyone else the header changes nothing."""
    with target(tmp_path, WS_MAX_PER_ADDRESS="2", FORWARDED_ALLOW_IPS="127.0.0.1") as server:
        url = server.url
        table_id, _ = await floods._table(url)
        path = f"/v1/tables/{table_id}/ws"

        async def first(address: str, forwarded: str) -> object:
            socket = await RawSocket.open(
                url, path, address=address, headers=f"X-Forwarded-For: {forwarded}\r\n"
            )
            opened.append(socket)
            return (await socket.message() or {}).get("type")

        opened: list[RawSocket] = []
        try:
            # Through the trusted proxy (127.0.0.1): two clients, two places each.
            for client in ("203.0.113.1", "203.0.113.2"):
                assert [await first("127.0.0.1", client) for _ in range(3)] == [
                    "view",
                    "view",
                    "error",
                ]
            # 127.0.0.2 is no trusted proxy: its own address is counted, whatever it says.
            kinds = [await first(CANARY_ADDRESS, f"203.0.113.{i}") for i in range(10, 13)]
            assert kinds == ["view", "view", "error"], kinds
        finally:
            for socket in opened:
                socket.close()


async def test_sockets_of_one_player_are_capped(tmp_path: Path) -> None:
    """``WS_MAX_PER_PLAYER`` open sockets for one player (one token); one more: 4429."""
    with target(tmp_path, WS_MAX_PER_PLAYER="5", WS_MAX_PER_ADDRESS="0") as server:
        result = await _beside_canary(
            server.url, server.process.pid, floods.token_swarm(server.url, SECONDS, count=8)
        )
    assert result == {"held": 5, "refused": 3, "closed_4429": 3, "failed": 0}, result


async def test_headers_that_never_end_are_cut(tmp_path: Path) -> None:
    """A connection that has not sent a request's whole headers ``HTTP_HEADER_TIMEOUT`` s
    after it opened is closed (slowloris): all of them, soon after the timeout."""
    with target(tmp_path, HTTP_HEADER_TIMEOUT="1") as server:
        result = await _beside_canary(
            server.url, server.process.pid, floods.slowloris(server.url, SECONDS, count=50)
        )
    assert result["connections"] == 50, result
    assert result["closed_by_server"] == 50, result
    assert 0.9 <= result["first_close_s"] <= 2.0, result
