"""The bot runner: plays the bot seats of the tables through the one command pipeline.

A bot sees exactly what its seat's API client sees: the table view ``TableService.render``
gives its seat and the current match's events (every hand so far) redacted for that seat. It
answers with one action that goes through ``TableService.submit`` as ``Actor.bot(seat,
level)``, pinned with ``expected_version`` to the version it decided on: a move decided on a
table that changed meanwhile is refused as stale, dropped, and the bot looks again.

When a bot may act (its turn, in the view's legal actions) it first pauses like a person
(``bot_draw_delay`` before drawing or taking the upcard, ``bot_discard_delay`` before discarding
or knocking), so a player sees what it took before what it threw. It never deals the next hand
nor starts a rematch: either seat may do both, so it never holds them up, and the person decides
when they have read the result. At a table of two bots (a tournament pairs them), the bots
play both seats through one lease, and deal the next hand themselves.

Exactly one actor per bot seat, across any number of server processes on one database:

- a process acts for a table's bot only while it holds the seat's lease (``seats.bot_lease_owner``
  / ``bot_lease_until``), taken and renewed by one conditional UPDATE (``leases.claim_bot_seat``)
  before every look at the table; another process's live lease makes it back off;
- and every move is pinned to the version it was decided on, so even a process that lost its
  lease without noticing (a pause longer than the lease) can never apply a move twice or late.

How work is found: the bus (``Hub.tables(WAKE_EVENTS)``; with Redis, these events of every
process's commits, on their own channels: ``RedisBus(watched=...)``) reports a bot seated or a
match started at once; each process also scans the database every
``bot_scan_interval`` seconds for tables in a match whose bot seat no live lease covers (a
restart, a crashed process) and at start, so a bot whose turn it was acts after a restart. The
lease holder hears every move of its table through the bus, whichever process took it, so the
bot acts within its pause; it also looks again every ``bot_scan_interval`` seconds (renewing
its lease, and covering a degraded bus). It lets the lease go when the match ends, and all its
leases when it stops; a crashed process's leases expire after ``bot_lease_seconds``, so another
process takes its bots over within ``bot_lease_seconds + bot_scan_interval`` (2.5 s by default;
the lease is renewed at least every ``bot_scan_interval`` plus a bot's pause).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import Any

from app.bus.hub import Subscription
from app.engine import Action, RuleError
from app.errors import NotFoundError, ServiceError
from app.service.pipeline import TableService
from app.service.workers.bot_pool import BotPool
from app.store import leases
from app.store.db import is_unavailable
from app.table.commands import Actor, Play
from app.table.model import Loaded, StoredEvent
from app.table.time import utcnow

log = logging.getLogger(__name__)

# Actions a person takes when they choose to: a bot never does them by itself.
NOT_FOR_BOTS = frozenset({"resign", "next_hand"})
# What no bot does when two bots play each other.
ALONE = frozenset({"resign"})
# Events after which a table may have a bot to drive.
WAKE_EVENTS = frozenset({"bot_seated", "match_started"})


class BotRunner:
    """Drives every bot seat this process holds the lease of (see the module docstring)."""

    def __init__(
        self,
        service: TableService,
        *,
        draw_delay: float,
        discard_delay: float,
        scan_interval: float,
        lease_seconds: float,
        pool: BotPool,
    ) -> None:
        self.service = service
        self.pool = pool
        self.draw_delay = draw_delay
        self.discard_delay = discard_delay
        self.scan_interval = scan_interval
        self.lease = timedelta(seconds=lease_seconds)
        # Host and pid first: an operator reading ``seats.bot_lease_owner`` sees who drives.
        self.owner = leases.owner_id()
        # Moves this process applied, and moves it dropped because the table had moved on.
        self.moves = 0
        self.stale = 0
        self._tables: dict[str, asyncio.Task[None]] = {}
        self._loops: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Watch this process's hub and scan the database (at once, then periodically)."""
        self._loops = [
            asyncio.create_task(self._watch()),
            asyncio.create_task(self._scan()),
        ]

    async def stop(self) -> None:
        """Stop every bot of this process and give up its leases for another to take."""
        tasks = [*self._loops, *self._tables.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            async with self.service.db.write() as session:
                await leases.release_bot_seats(session, self.owner)

    def drive(self, table_id: str) -> None:
        """Make sure a task drives this table's bot (it ends at once if another process does)."""
        if table_id not in self._tables:
            self._tables[table_id] = asyncio.create_task(self._drive(table_id))

    async def _watch(self) -> None:
        while True:  # a fresh subscription after an overflow; the scan covers the gap
            async with self.service.hub.tables(WAKE_EVENTS) as events:
                async for item in events:
                    self.drive(item.table_id)

    async def _scan(self) -> None:
        while True:
            try:
                async with self.service.db.scan() as conn:
                    due = await leases.unleased_bot_tables(conn, utcnow())
            except Exception as exc:
                if is_unavailable(exc):
                    log.warning("bot scan: the database is unavailable: %s", exc)
                else:
                    log.exception("bot scan failed")
                due = []
            for table_id in due:
                self.drive(table_id)
            await asyncio.sleep(self.scan_interval)

    async def _claim(self, table_id: str) -> bool:
        now = utcnow()
        async with self.service.db.write() as session:
            return await leases.claim_bot_seat(session, table_id, self.owner, now, now + self.lease)

    async def _drive(self, table_id: str) -> None:
        try:
            # Most matches that start have no bot: look (one read) before claiming, which
            # writes twice in every process. A bot seated meanwhile is found by its event or
            # the next scan.
            loaded = await self.service.load(table_id)
            if all(s.bot_level is None for s in loaded.seats):
                return
            while not await self._drive_subscribed(table_id):
                pass
        except NotFoundError:
            pass
        except Exception:
            log.exception("bot of table %s failed", table_id)
        finally:
            self._tables.pop(table_id, None)

    async def _drive_subscribed(self, table_id: str) -> bool:
        """Play the table's bot until the match ends (True) or the subscription overflows."""
        # Subscribed before each load, so no change falls between a look and the wait.
        async with self.service.hub.table(table_id) as changes:
            await self.service.hub.subscribed()
            while not changes.overflowed:
                if not await self._claim(table_id):
                    return True  # another process acts for this bot
                loaded = await self.service.load(table_id)
                state = loaded.state
                if state is None or state.status != "playing":
                    break
                bots = [s for s in loaded.seats if s.bot_level is not None]
                if not bots:
                    break
                # With no person at the table (a tournament's pairing of two bots), a bot
                # deals the next hand: nobody else would.
                not_for = NOT_FOR_BOTS if any(s.player_id for s in loaded.seats) else ALONE
                for bot in bots:
                    assert bot.bot_level is not None
                    actor = Actor.bot(bot.seat, bot.bot_level)
                    view = self.service.render(loaded, actor)["game"]
                    actions = set(view["legal"]["actions"]) - not_for
                    if actions:
                        await self._act(loaded, actor, bot.bot_level, view, actions)
                        break
                else:
                    await self._changed(changes)
            else:
                return False
        async with self.service.db.write() as session:
            await leases.release_bot_seats(session, self.owner, table_id)
        return True

    async def _act(
        self, loaded: Loaded, actor: Actor, level: str, view: dict[str, Any], actions: set[str]
    ) -> None:
        """Pause while deciding on ``loaded``; submit pinned to its version; drop a stale move."""
        seat = view["you"]
        events = await self.service.match_events(loaded, seat)
        # The bot thinks during its pause, in a worker process (app.service.workers.bot_pool).
        _, action = await asyncio.gather(
            asyncio.sleep(self.discard_delay if "discard" in actions else self.draw_delay),
            self.pool.choose(level, view, events),
        )
        try:
            await self.service.submit(
                loaded.table.id,
                actor,
                Play(Action.from_dict(action)),
                expected_version=loaded.table.version,
            )
            self.moves += 1
        except (ServiceError, RuleError) as exc:
            # Stale: the table moved on during the pause (a resignation); look again. Anything
            # else would be a bug in a bot: say so, and wait for the table to change.
            if exc.code == "stale_version":
                self.stale += 1
            else:
                log.error("bot %s at %s refused: %s", level, loaded.table.id, exc.code)
                await asyncio.sleep(self.scan_interval)

    async def _changed(self, changes: Subscription[StoredEvent]) -> None:
        """Wait for an event of the table here, or ``scan_interval`` (another process's)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.scan_interval):
                await changes.get()
        while changes.get_nowait() is not None:
            pass
