"""The pairing worker: every process keeps the lobby moving; the database decides.

Each scan (every ``scan_interval`` seconds, at once after a seek posted here) it:

1. renews the live seeks of the players holding a socket on this process (every third of the
   presence time), and expires the rows past their time (``seeks.lapse``; about once a second);
2. reads every pool's open seeks, asks ``app.table.seeks.pairs`` whom to pair, and pairs each
   (``Lobby.pair_seeks``: one transaction; a seek another process took first makes it a no-op);
3. offers a bot to a live seek that waited its ``bot_after`` (once: a conditional UPDATE).

Every process scans; two that compute the same pair race on the seeks' rows and one wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

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


class PairingWorker:
    """Pairs the pools, keeps live seeks alive while their owners are here, offers bots."""

    def __init__(self, lobby: Lobby, *, scan_interval: float) -> None:
        self.lobby = lobby
        self.scan_interval = scan_interval
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._renewed = 0.0
        self._lapsed = 0.0
        lobby.on_seek = self._wake.set

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                await self.scan()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_unavailable(exc):
                    log.warning("lobby scan: the database is unavailable: %s", exc)
                else:
                    log.exception("lobby scan failed")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.scan_interval):
                    await self._wake.wait()
            self._wake.clear()

    async def scan(self) -> int:
        """One pass; how many pairs it made."""
        lobby = self.lobby
        db = lobby.db
        clock = time.monotonic()
        presence = lobby.caps.presence
        if clock - self._renewed >= presence / 3:
            self._renewed = clock
            present = lobby.hub.present()
            until = utcnow() + timedelta(seconds=presence)
            for i in range(0, len(present), RENEW_CHUNK):
                await db.transact(
                    partial(store.renew, player_ids=present[i : i + RENEW_CHUNK], until=until)
                )
        if clock - self._lapsed >= LAPSE_EVERY:
            self._lapsed = clock
            now = utcnow()
            lapsed = await db.transact(lambda c: store.lapse(c, now))
            if lapsed:
                lobby.lapsed(lapsed)
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
        made = 0
        for pool in crowded:
            for first, second in pairs(pool, now, lobby.caps.widening, avoid):
                made += await lobby.pair_seeks(first, second)
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
                lobby.bot_offered(r.id, r.player_id, r.rating)
