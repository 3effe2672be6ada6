"""The pairing worker: every process keeps the lobby moving; the database decides.

Each scan (every ``scan_interval`` seconds, at once after a seek posted here) it reads every
pool's open seeks, asks ``app.table.seeks.pairs`` whom to pair, and pairs them, several at once
(``Lobby.pair_seeks``: one transaction each; a seek another process took first makes it a
no-op); then it offers a bot to each live seek that waited its ``bot_after`` (once: a
conditional UPDATE). Beside it, every second, ``keep`` renews the live seeks of the players
holding a socket on this process (every third of the presence time; only those who have one,
read first) and expires the rows past
their time (``seeks.lapse``): its own loop, so a long pass never lets a seek lapse.

Every process scans; two that compute the same pair race on the seeks' rows and one wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Coroutine, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from app.service import seek_news as news
from app.service.lobby import Lobby
from app.store import seeks as store
from app.store.db import is_unavailable
from app.table.seeks import Waiting, pairs
from app.table.time import utcnow

log = logging.getLogger(__name__)

# Open seeks read per scan, and presence renewals per statement.
SCAN_LIMIT = 5000
RENEW_CHUNK = 500
LAPSE_EVERY = 1.0
# The shortest pause between two scans (seconds).
MIN_GAP = 0.1
# Pairings of one scan in flight at once.
PAIRING_AT_ONCE = 8


async def _guarded(work: Coroutine[Any, Any, object], what: str) -> None:
    """Run one pass; a failure is logged and the next pass tries again."""
    try:
        await work
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if is_unavailable(exc):
            log.warning("%s: the database is unavailable: %s", what, exc)
        else:
            log.exception("%s failed", what)


class PairingWorker:
    """Pairs the pools, keeps live seeks alive while their owners are here, offers bots."""

    def __init__(self, lobby: Lobby, *, scan_interval: float) -> None:
        self.lobby = lobby
        self.scan_interval = scan_interval
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._renewed = 0.0
        lobby.on_seek = self._wake.set

    async def start(self) -> None:
        # Presence in a loop of its own: a long pairing pass never lets a live seek lapse.
        self._tasks = [asyncio.create_task(self._run()), asyncio.create_task(self._keep())]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            # Cleared before the scan: a seek posted during it wakes the next one at once.
            self._wake.clear()
            await _guarded(self.scan(), "lobby scan")
            # Posts in a burst share one scan: each reads every open seek.
            await asyncio.sleep(min(MIN_GAP, self.scan_interval))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.scan_interval):
                    await self._wake.wait()

    async def _keep(self) -> None:
        while True:
            await _guarded(self.keep(), "lobby presence")
            await asyncio.sleep(LAPSE_EVERY)

    async def keep(self) -> None:
        """Renew the live seeks of the players here (every third of the presence time), and
        expire the rows past their time."""
        lobby = self.lobby
        db = lobby.db
        clock = time.monotonic()
        presence = lobby.caps.presence
        if clock - self._renewed >= presence / 3:
            self._renewed = clock
            present = lobby.hub.present()
            if present:
                # Those with a live seek only: a lobby of 10,000 sockets whose players seek
                # nothing costs one read, not 20 UPDATEs of 500 ids each.
                async with db.read() as session:
                    owners = await store.live_owners(session)
                present = [p for p in present if p in owners]
            until = utcnow() + timedelta(seconds=presence)
            for i in range(0, len(present), RENEW_CHUNK):
                await db.transact(
                    partial(store.renew, player_ids=present[i : i + RENEW_CHUNK], until=until)
                )
        now = utcnow()
        lapsed = await db.transact(lambda c: store.lapse(c, now))
        if lapsed:
            news.lapsed(lobby.hub, lapsed)

    async def scan(self) -> int:
        """One pairing pass; how many pairs it made."""
        lobby = self.lobby
        db = lobby.db
        now = utcnow()
        async with db.read() as session:
            rows = await store.waiting(session, now, SCAN_LIMIT)
            pools: dict[str, list[Waiting]] = defaultdict(list)
            for r in rows:
                pools[r.pool].append(
                    Waiting(r.id, r.player_id, r.rating, r.created_at, r.rating_min, r.rating_max)
                )
            crowded = [p for p in pools.values() if len({w.player_id for w in p}) > 1]
            players = sorted({w.player_id for pool in crowded for w in pool})
            since = now - timedelta(seconds=lobby.caps.avoid)
            avoid = await store.avoided(session, players, since) if players else set()
        todo = [pair for pool in crowded for pair in pairs(pool, now, lobby.caps.widening, avoid)]
        # Several at once: the pairs share no player, so their transactions wait for nothing
        # of each other's, and their round trips overlap.
        gate = asyncio.Semaphore(PAIRING_AT_ONCE)

        async def pair(first: Waiting, second: Waiting) -> bool:
            async with gate:
                return await lobby.pair_seeks(first, second)

        made = sum(await asyncio.gather(*(pair(a, b) for a, b in todo)))
        await self._offer_bots(rows, now)
        return made

    async def _offer_bots(self, rows: Sequence[Any], now: datetime) -> None:
        """Offer a bot to each live seek that waited its ``bot_after`` without a partner."""
        lobby = self.lobby
        for r in rows:
            if r.bot_after is None or r.bot_offered_at is not None or r.speed != "live":
                continue
            if (now - r.created_at).total_seconds() < r.bot_after:
                continue
            offered = await lobby.db.transact(partial(store.offer_bot, seek_id=r.id, now=now))
            if offered:
                news.bot_offered(lobby.hub, r.id, r.player_id, r.rating)
