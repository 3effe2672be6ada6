"""What every attack test stands on: a real server process and a canary table beside the attack.

An attack test starts ``python -m app`` (``target``), plays a canary table on it from another
loopback address (``127.0.0.2``, so per-address limits aimed at the attacker on ``127.0.0.1``
never touch it), runs its flood, and then asks the canary whether the table kept playing: how
many moves, their worst and 99th-percentile latency. ``benchmarks/attacks.py`` runs the same
floods for longer and prints the same figures with the server's RSS growth.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.api.helpers import Player, play_until, seated_table, step
from tests.api.processes import Process, start_process, stop

# The canary's own address: a loopback address other than the attacker's.
CANARY_ADDRESS = "127.0.0.2"


def rss_bytes(pid: int) -> int:
    """The resident set size of process ``pid``, from ``/proc``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


@contextlib.contextmanager
def target(tmp_path: Path, **env: str) -> Iterator[Process]:
    """A ``python -m app`` on a fresh SQLite file with ``env`` over the defaults."""
    database = f"sqlite+aiosqlite:///{tmp_path / 'attack.db'}"
    process = start_process(tmp_path / "server.log", DATABASE_URL=database, **env)
    try:
        yield process
    finally:
        stop(process)


def canary_client(url: str, timeout: float = 30.0) -> httpx.AsyncClient:
    """An HTTP client bound to ``CANARY_ADDRESS``."""
    transport = httpx.AsyncHTTPTransport(local_address=CANARY_ADDRESS)
    return httpx.AsyncClient(base_url=url, transport=transport, timeout=timeout)


@dataclass
class Canary:
    """Two players at a table of their own, moving every ``think`` seconds, timing each move."""

    url: str
    think: float = 0.05
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def moves(self) -> int:
        return len(self.latencies)

    @property
    def worst(self) -> float:
        return max(self.latencies, default=math.inf)

    def percentile(self, q: float) -> float:
        """The ``q``-quantile (0..1) of the move latencies, in seconds (inf with none)."""
        if not self.latencies:
            return math.inf
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]

    def summary(self) -> str:
        return (
            f"canary: {self.moves} moves, p99 {self.percentile(0.99) * 1000:.1f} ms, "
            f"worst {self.worst * 1000:.1f} ms, errors {self.errors[:3]}"
        )

    async def _play(self, client: httpx.AsyncClient, table_id: str, players: list[Player]) -> None:
        view = None
        while True:
            started = time.monotonic()
            try:
                result = await step(client, table_id, players, view)
            except (AssertionError, httpx.HTTPError) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
                view = None
                await asyncio.sleep(self.think)
                continue
            self.latencies.append(time.monotonic() - started)
            view = result["table"]
            if view["game"]["match"]["status"] == "finished":
                table_id, players = await seated_table(client)
                view = None
            await asyncio.sleep(self.think)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Canary]:
        """Seat the canary table, play it in the background while the block runs."""
        async with canary_client(self.url) as client:
            table_id, players = await seated_table(client)
            # A first move before the attack, so the table is warm and its players known.
            await step(client, table_id, players)
            task = asyncio.create_task(self._play(client, table_id, players))
            try:
                yield self
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def assert_kept_playing(self, *, min_moves: int = 5, worst: float = 2.0) -> None:
        """The table kept moving during the attack: at least ``min_moves``, none slower than
        ``worst`` seconds (today's floods stalled a move for 5-10 s), and no move refused."""
        assert not self.errors, self.summary()
        assert self.moves >= min_moves, self.summary()
        assert self.worst <= worst, self.summary()


__all__ = ["CANARY_ADDRESS", "Canary", "canary_client", "play_until", "rss_bytes", "target"]
