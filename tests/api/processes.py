"""Real server processes: ``python -m app`` as an operator runs it, configured by environment."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.api.conftest import _free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Process:
    """One ``python -m app`` on a free port; its stdout and stderr go to ``log``."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()


def start_process(log: Path, **env: str) -> Process:
    """Start ``python -m app`` with ``env`` over the test's environment (on ``env["PORT"]``,
    else a free port); wait for ``/livez``."""
    port = int(env.pop("PORT", "0")) or _free_port()
    environment = {
        **os.environ,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "PUBLIC_URL": f"http://127.0.0.1:{port}",
        "BOT_DRAW_DELAY": "0",
        "BOT_DISCARD_DELAY": "0",
        **env,
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=environment, stdout=out, stderr=out
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, f"the server exited: {log.read_text()}"
        assert time.monotonic() < deadline, f"the server did not start: {log.read_text()}"
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/livez", timeout=2).status_code == 200:
                return Process(url, process, log)
        time.sleep(0.1)


def stop(process: Process) -> None:
    """SIGTERM, and wait for a clean exit (uvicorn finishes its lifespan)."""
    process.process.terminate()
    try:
        process.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.process.kill()
        process.process.wait()


@contextlib.contextmanager
def processes(tmp_path: Path, count: int, **env: str) -> Iterator[list[Process]]:
    """``count`` processes with the same ``env``, the first one migrating the database."""
    started: list[Process] = []
    try:
        for i in range(count):
            migrate = "true" if i == 0 else "false"
            log = tmp_path / f"server{i}.log"
            started.append(start_process(log, MIGRATE_ON_START=migrate, **env))
        yield started
    finally:
        for process in started:
            stop(process)
