"""The deadline runner: acts on every due clock (``app.table.clock``) through the pipeline."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from app.bots import get_bot
from app.engine import Action, RuleError
from app.errors import ServiceError
from app.store import leases
from app.store.db import is_unavailable
from app.table.clock import TimeUp
from app.table.commands import Actor
from app.table.model import Loaded
from app.table.time import utcnow

if TYPE_CHECKING:
    from app.service.pipeline import TableService

log = logging.getLogger(__name__)

# Actions a person takes when they choose to: the autoplay bot never does them.
NOT_FOR_BOTS = frozenset({"resign", "next_hand"})
# The deadline runner: due tables read per scan, fired at most this many at once, and the
# shortest sleep before the next deadline.
DUE_BATCH = 100
FIRING = 8
MIN_WAIT = 0.005


CLOCK_ACTOR = Actor("clock", "clock")


class DeadlineRunner:
    """Acts on every due deadline, in whichever process leases it first.

    Every ``scan_interval`` seconds it reads the due clocks no live lease covers (an indexed
    query), leases each (``leases.claim_clock``), loads the table and submits ``TimeUp`` pinned to
    the version it saw: a move that lands meanwhile makes it stale, and it looks again. A
    crashed process's lease expires after ``lease_seconds``; the deadline is in the database,
    so a restart loses none.
    """

    def __init__(
        self, service: TableService, *, scan_interval: float, lease_seconds: float
    ) -> None:
        self.service = service
        self.scan_interval = scan_interval
        self.lease = timedelta(seconds=lease_seconds)
        self.owner = leases.owner_id()
        self.applied = 0
        self._task: asyncio.Task[None] | None = None
        self._firing = asyncio.Semaphore(FIRING)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._scan())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _scan(self) -> None:
        while True:
            wait = self.scan_interval
            due: list[str] = []
            try:
                async with self.service.db.scan() as conn:
                    now = utcnow()
                    due = await leases.due_clocks(conn, now, DUE_BATCH)
                    upcoming = await leases.next_deadline(conn, now)
                # Each due table on its own, several at once: one slow commit holds no other.
                results = await asyncio.gather(
                    *(self._fire_bounded(table_id) for table_id in due), return_exceptions=True
                )
                for result in results:
                    if isinstance(result, Exception) and is_unavailable(result):
                        log.warning("timeout not applied: the database is unavailable: %s", result)
                    elif isinstance(result, Exception):
                        log.error("timeout failed", exc_info=result)
                if upcoming is not None:
                    # Wake at the next deadline itself, not up to a scan interval after it; the
                    # interval still bounds the wait (another process may set a nearer one).
                    ahead = (upcoming - utcnow()).total_seconds()
                    wait = min(self.scan_interval, max(MIN_WAIT, ahead))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # An outage (a restart, terminated backends): the next scan tries again.
                if is_unavailable(exc):
                    log.warning("deadline scan: the database is unavailable: %s", exc)
                else:
                    log.exception("deadline scan failed")
            # A full batch: more are due already, look again at once.
            await asyncio.sleep(0 if len(due) >= DUE_BATCH else wait)

    async def _fire_bounded(self, table_id: str) -> None:
        async with self._firing:
            await self._fire(table_id)

    async def _fire(self, table_id: str) -> None:
        now = utcnow()
        async with self.service.db.write() as session:
            if not await leases.claim_clock(session, table_id, self.owner, now, now + self.lease):
                return
        loaded = await self.service.load(table_id)
        clock = loaded.clock
        if clock is None or clock["seat"] is None:
            return
        seat = int(clock["seat"])
        action = None
        if clock["policy"] == "autoplay":
            action = await self._bot_move(loaded, seat, str(clock["autoplay_level"]))
            if action is None:
                return
        try:
            await self.service.submit(
                table_id, CLOCK_ACTOR, TimeUp(seat, action), expected_version=loaded.table.version
            )
            self.applied += 1
        except (ServiceError, RuleError) as exc:
            # Stale or not due: the person moved first; the next scan sees the new clock.
            log.info("timeout at %s not applied: %s", table_id, exc.code)

    async def _bot_move(self, loaded: Loaded, seat: int, level: str) -> Action | None:
        """The autoplay bot's move for ``seat``, from exactly the view its person would see."""
        info = loaded.seat_info(seat)
        if info is None or info.player_id is None:
            return None
        person = Actor(info.player_id, info.player_name or "")
        view = self.service.render(loaded, person)["game"]
        if not set(view["legal"]["actions"]) - NOT_FOR_BOTS:
            return None
        events = await self.service.match_events(loaded, seat)
        return Action.from_dict(get_bot(level).choose(view, events))
