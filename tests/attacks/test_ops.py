"""Attacks on the deployment around the app: through nginx run from ``deploy/nginx.conf`` (a
forged ``X-Forwarded-For``, the metrics, slowloris, a body too large), and on what the app
itself shows anonymously."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.processes import Process
from tests.attacks.floods import forged_forwarded_for, many_spectators, slow_headers
from tests.attacks.harness import Canary, target
from tests.cluster.conftest import Nginx, start_nginx


@contextlib.contextmanager
def behind_nginx(tmp_path: Path, **env: str) -> Iterator[tuple[Process, Nginx]]:
    """One app (``env`` over the defaults) behind nginx."""
    with target(tmp_path, **env) as app:
        nginx = start_nginx(tmp_path, [int(app.url.rsplit(":", 1)[1])])
        try:
            yield app, nginx
        finally:
            nginx.stop()


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[Process, Nginx]]:
    with behind_nginx(tmp_path) as pair:
        yield pair


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[tuple[Process, Nginx]]:
    """Behind nginx, with a per-address limit low enough to meet: 5 requests/s."""
    with behind_nginx(tmp_path, RATE_LIMIT_IP="5/second") as pair:
        yield pair


def _clients(app: Process) -> set[str]:
    """Every client address in the app's access log."""
    return set(re.findall(r"client=([0-9.:a-f]+)", app.log.read_text()))


async def test_a_forged_forwarded_for_names_no_address(limited: tuple[Process, Nginx]) -> None:
    # The attacker is 127.0.0.1, the proxy's own address: before, nginx appended the real
    # address to the client's header and the app, trusting its proxy, took the forged one.
    app, nginx = limited
    counts = await forged_forwarded_for(nginx.url, 3.0)
    assert counts["sent"] >= 30, counts
    # One address, so the limit (5/s) meets it; before: 300 of 300 answered as 250 addresses.
    assert counts["limited"] >= 1, counts
    seen = _clients(app)
    assert not any(a.startswith("203.0.113.") for a in seen), seen


async def test_metrics_are_not_served_through_nginx(proxied: tuple[Process, Nginx]) -> None:
    app, nginx = proxied
    async with httpx.AsyncClient(timeout=5) as client:
        for path in ("/metrics", "//metrics", "/%6detrics", "/metrics/", "/metrics?x=1"):
            r = await client.get(nginx.url + path)
            assert r.status_code == 404, (path, r.status_code)
            assert "http_requests" not in r.text, path
        # The replica's own port (the internal network) still serves Prometheus.
        assert (await client.get(f"{app.url}/metrics")).status_code == 200


async def test_a_body_over_max_body_bytes_is_refused_by_nginx(
    proxied: tuple[Process, Nginx],
) -> None:
    app, nginx = proxied
    async with httpx.AsyncClient(base_url=nginx.url, timeout=5) as client:
        r = await client.post("/v1/players", content=b"x" * 9000)
        assert r.status_code == 413
        assert r.json()["code"] == "payload_too_large"
    # nginx answered (before: it passed up to 64 KB on, for the app to refuse).
    assert "status=413" not in app.log.read_text()


async def test_slow_headers_are_cut_and_the_canary_plays_on(
    proxied: tuple[Process, Nginx],
) -> None:
    _, nginx = proxied
    started = time.monotonic()
    async with Canary(nginx.url).running() as canary:
        # Headers must all arrive within client_header_timeout (5 s); before: 60 s.
        counts = await slow_headers(nginx.url, 8.0)
    assert counts["opened"] == counts["cut"], counts
    assert time.monotonic() - started < 12
    canary.assert_kept_playing()


async def test_one_address_holds_at_most_128_connections_through_nginx(
    proxied: tuple[Process, Nginx],
) -> None:
    # Before: nothing in nginx counted them (3,000 spectator sockets in 4.9 s).
    _, nginx = proxied
    async with Canary(nginx.url).running() as canary:
        counts = await many_spectators(nginx.url, 10.0)
    assert counts["opened"] == 128 and counts["refused"] == 160 - 128, counts
    canary.assert_kept_playing()
