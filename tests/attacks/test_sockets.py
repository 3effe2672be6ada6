"""Attacks on the sockets: control-frame floods.

Each runs against ``python -m app`` beside the canary table (``harness``), which must keep
playing, and the server's RSS must not grow by more than ``RSS_BUDGET`` meanwhile.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.attacks import floods
from tests.attacks.harness import Canary, rss_bytes, target

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
