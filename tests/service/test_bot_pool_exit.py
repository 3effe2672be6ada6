"""A bot worker process does not outlive its server: a server killed with SIGKILL (which
gives the pool no chance to stop its workers) leaves no worker behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]

# A stand-in server: a BotPool with two workers, both started (one decision each, at once),
# whose pids it prints before it waits to be killed.
SERVER = """
import asyncio, sys
from app.bots.search import Budget
from app.engine import make_ruleset, new_match
from app.engine.views import seat_view
from app.service.workers.bot_pool import BotPool

async def main():
    pool = BotPool(2, Budget(0), niceness=0)
    state, events = new_match(make_ruleset("standard"), "exit")
    view = seat_view(state, state.hand.turn)
    await asyncio.gather(*(pool.choose("easy", view, []) for _ in range(4)))
    print(" ".join(str(pid) for pid in pool._pool()._processes), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def test_the_workers_end_with_a_server_killed_by_sigkill() -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        workers = [int(pid) for pid in server.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(pid) for pid in workers)
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        wait_for(
            lambda: not [pid for pid in workers if _alive(pid)],
            timeout=10,
            what="the workers to exit (a worker outlived its server)",
        )
    finally:
        server.kill()
        server.wait()
