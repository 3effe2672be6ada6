"""The SDK's tests play against a real server: one uvicorn on a SQLite file for the session
(webhooks to loopback allowed, notifications scanned often), or ``python -m app`` processes
where a test restarts the server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.conftest import Server, start_server

SETTINGS: dict[str, object] = {
    "webhook_allow_http": True,
    "webhook_allow_loopback": True,
    "notify_scan_interval": 0.1,
    "notify_backoff_base": 0.2,
    "notify_backoff_max": 1.0,
    "ws_heartbeat": 1.0,
}


@pytest.fixture(scope="session")
def sdk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("sdk") / "sdk.db"
    running = start_server(f"sqlite+aiosqlite:///{db}", **SETTINGS)
    yield running
    running.stop()
