"""A figure read from the database at most once every ``max_age`` seconds, however often it is
asked for: the ``/metrics`` gauges that count rows across the whole database.

``get`` answers with the last figure at once. When that figure is older than ``max_age`` it
also starts one refresh behind the answer (stale while it revalidates), so a scrape never waits
for the count, and any number of scrapers cost the database one count per ``max_age``. Only the
first ``get`` (nothing counted yet) waits for it; ``max_age`` 0 counts at every ``get``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Sampled:
    def __init__(
        self,
        read: Callable[[], Awaitable[int]],
        max_age: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self.max_age = max_age
        self._clock = clock
        self._value: int | None = None
        self._at = 0.0
        self._refresh: asyncio.Task[None] | None = None
        self._first = asyncio.Lock()

    async def get(self) -> int:
        """The last figure read (waiting for the first); a refresh started when it is stale.
        A failed first read raises; a failed refresh is logged and the last figure kept."""
        if self._value is None or self.max_age <= 0:
            async with self._first:  # concurrent first scrapes share one count
                if self._value is None or self.max_age <= 0:
                    await self._update()
            assert self._value is not None
            return self._value
        if self._clock() - self._at >= self.max_age and self._refresh is None:
            self._refresh = asyncio.create_task(self._background())
        return self._value

    async def _update(self) -> None:
        began = self._clock()
        self._value = await self._read()
        self._at = began

    async def _background(self) -> None:
        try:
            await self._update()
        except Exception as exc:
            log.warning("refreshing a sampled figure failed: %s", exc)
        finally:
            self._refresh = None

    async def close(self) -> None:
        """Waits for a refresh under way (the database is about to close)."""
        if self._refresh is not None:
            await asyncio.gather(self._refresh, return_exceptions=True)
