"""Bot decisions off the event loop: a process pool, and a budget that shrinks when they queue.

Every bot decision runs in a worker process (``concurrent.futures.ProcessPoolExecutor`` via
``loop.run_in_executor``): hard's search is CPU-bound for up to its budget, and in a thread it
would still hold the loop through the GIL, slowing every person's move served here. The
workers run at a lower CPU priority (``nice``), so on a busy machine the server's own process
comes first, and each ends within a second or so of its server's end, however that ends (a
server killed with SIGKILL cannot stop its pool).

The budget follows the queue: with ``pending`` decisions in flight and ``workers`` processes,
each new search gets ``workers / pending`` of the full budget (work and wall cap alike), so
a burst of bot turns is served in about the time one full search takes, well inside the bots'
pauses; with too little left for a search (``search.MIN_SAMPLES``) hard plays by its
judgements alone.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from app.bots import get_bot
from app.bots.search import Budget

T = TypeVar("T")


def _start_worker(niceness: int, server: int, idle: bool = False) -> None:
    """A worker's start: its lower priority (``idle``: the idle scheduling class, where the
    system has one: CPU only when nothing else wants it), and a watch that ends it with its
    server."""
    if niceness:
        os.nice(niceness)
    if idle and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    threading.Thread(
        target=_exit_with, args=(server,), name="exit-with-server", daemon=True
    ).start()


def _exit_with(server: int) -> None:
    """End this worker once the server process that started it is gone (killed with SIGKILL,
    say, which gives the pool no chance to stop its workers): it is then adopted by another."""
    while os.getppid() == server:
        time.sleep(EXIT_CHECK_SECONDS)
    os._exit(0)


# How often a worker looks whether its server is still there.
EXIT_CHECK_SECONDS = 1.0


def decide(
    level: str, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]], budget: Budget
) -> dict[str, Any]:
    """One bot decision (in a worker process): ``level``'s action for ``view`` and ``events``."""
    return get_bot(level, budget).choose(view, events)


class BotPool:
    """Worker processes that make the bots' decisions (see the module docstring)."""

    def __init__(
        self, workers: int, budget: Budget, niceness: int = 5, *, idle: bool = False
    ) -> None:
        self.workers = max(1, workers)
        self.budget = budget
        self.niceness = niceness
        self.idle = idle
        self.pending = 0
        # Decisions made, and those made with a lowered budget because others queued.
        self.decisions = 0
        self.lowered = 0
        self._executor: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # Spawned, not forked: the server process runs threads (database drivers) that a
            # fork would copy mid-lock.
            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(self.niceness, os.getpid(), self.idle),
            )
        return self._executor

    def budget_now(self) -> Budget:
        """The budget for a decision asked now, with ``pending`` others already in flight."""
        share = self.workers / (self.pending + 1)
        return self.budget if share >= 1 else self.budget.scaled(share)

    async def choose(
        self, level: str, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """``level``'s action for ``view`` and ``events``, decided in a worker process."""
        budget = self.budget_now()
        self.lowered += budget != self.budget
        self.pending += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self._pool(), decide, level, view, list(events), budget
            )
        finally:
            self.pending -= 1
            self.decisions += 1

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` in a worker process (a module-level function, its arguments and
        answer plain data): the pool's other jobs, such as hand reviews."""
        self.pending += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool(), work, *args)
        finally:
            self.pending -= 1

    def close(self) -> None:
        """Stop the workers (a decision in progress is abandoned)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
