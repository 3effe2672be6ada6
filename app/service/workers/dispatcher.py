"""The notification dispatcher: delivers the outbox (``app.store.outbox``) to each player's
channels (a webhook, Web Push), in order per player, across any number of server processes.

Exactly one process delivers a player's notifications at a time, the bot seats' way
(``app.service.workers.bots``): a process takes the player's lease
(``notification_settings.lease_owner`` / ``lease_until``) with one conditional UPDATE
(``outbox.claim_player``) before it reads their pending rows, and every row it marks is pinned to
that lease (``outbox.finish``): a process that lost its lease without noticing writes nothing.
Delivery is at least once: a process killed between a send and its mark sends again after the lease
expires (the ``webhook-id`` is the same on every try, so a receiver drops the duplicate); a
notification is never lost (it is in the database from the move's own commit until it is marked).

How work is found: after a commit that wrote notes the pipeline hands this process's
dispatcher the players they are due to now (``TableService.on_notes``), which it serves at once
without a scan (a player whose round is under way is served again after it); and each process
scans for due rows every ``notify_scan_interval`` seconds (a restart, another process's commit,
a retry or a scheduled note coming due).

Order and retries: a player's rows go out oldest first. A row that fails on a channel (any
answer but 2xx, a timeout, a refused connection) is tried again after ``notify_backoff_base``
seconds, doubling up to ``notify_backoff_max``, for ``notify_retry_seconds`` after it was
written; then it is marked ``failed`` (``GET /v1/me/notifications/deliveries``) and the next one
goes. While it waits, the player's later rows wait behind it (their lease is held until the
retry), so order holds. A channel that already has a row is not sent it again on a retry.

Shares: a round holds one of ``notify_concurrency`` slots (the claim, the sends, the record).
A send still unanswered after ``notify_slow_seconds`` gives its slot up and goes on in the slow
lane, where at most ``notify_slow_slots`` sends wait at once (each for at most its channel's
own timeout, ``webhook_timeout`` or ``push_timeout``); a slow send that finds the lane full is
cut short, a failure retried like any other. So targets that are slow or never answer, however
many accounts or hosts they come from, hold a slot for ``notify_slow_seconds`` each at most,
and a quick target waits behind them for about that long, not for their timeouts.

Reminders (``notification_settings.reminders``): ``each_turn`` sends every ``your_turn``;
``none`` writes none; ``digest`` holds them and sends one ``your_turn_digest`` at most every
``digest_hours`` hours, listing the tables where it became the player's turn since the last one
(the first goes out at once). Other kinds always go at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row

from app.service.delivery.channels import Channel, Message, Recipient, WebhookChannel
from app.store import Database, leases
from app.store import outbox as store
from app.store.db import is_unavailable
from app.table.time import utcnow

log = logging.getLogger(__name__)


class Dispatcher:
    """Delivers the outbox in this process (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        channels: list[Channel],
        *,
        scan_interval: float,
        lease_seconds: float,
        retry_seconds: float,
        backoff_base: float,
        backoff_max: float,
        webhook_disable_seconds: float = 0.0,
        keep_days: float = 0.0,
        concurrency: int = 64,
        slow_seconds: float = 1.0,
        slow_slots: int = 16,
    ) -> None:
        self.db = db
        self.channels = channels
        self.scan_interval = scan_interval
        self.lease = timedelta(seconds=lease_seconds)
        self.retry_for = timedelta(seconds=retry_seconds)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        # A webhook whose every try fails for this long is turned off (None: never).
        self.disable_after = (
            timedelta(seconds=webhook_disable_seconds) if webhook_disable_seconds > 0 else None
        )
        # Finished notifications are deleted this long after they finished (None: kept).
        self.keep = timedelta(days=keep_days) if keep_days > 0 else None
        self.owner = leases.owner_id()
        self._slots = asyncio.Semaphore(concurrency)
        self.slow_seconds = slow_seconds
        self._slow = asyncio.Semaphore(slow_slots)  # the slow lane (module docstring)
        self._players: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()  # players to serve again once their round ends
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        # Counts, for the benchmark and the logs.
        self.delivered = 0
        self.retried = 0
        self.failed = 0

    async def start(self) -> None:
        self._loop = asyncio.create_task(self._scan())

    async def purge(self) -> int:
        """Delete the notifications that finished more than ``keep_days`` ago; how many."""
        if self.keep is None:
            return 0
        purged = 0
        while True:
            async with self.db.write() as session:
                count = await store.purge_finished(session, utcnow() - self.keep, PURGE_BATCH)
            purged += count
            if count < PURGE_BATCH:
                return purged

    def wake(self, player_ids: Collection[str] = ()) -> None:
        """Deliver now: to ``player_ids`` (a commit here just wrote them due notifications: no
        scan needed), or, without any, whatever a scan finds due."""
        if not player_ids:
            self._wake.set()
        for player_id in player_ids:
            self._serve_soon(player_id)

    def _serve_soon(self, player_id: str) -> None:
        """Serve the player now, or again after the round under way (which may have read
        their rows before the commit that wakes it)."""
        if player_id in self._players:
            self._again.add(player_id)
        else:
            self._players[player_id] = asyncio.create_task(self._serve(player_id))

    async def stop(self) -> None:
        tasks = [t for t in [self._loop, *self._players.values()] if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.db.transact(lambda conn: store.release_all(conn, self.owner))

    async def _scan(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.scan_interval):
                    await self._wake.wait()
            self._wake.clear()
            try:
                async with self.db.scan() as conn:
                    due = await store.due_players(conn, utcnow())
            except Exception as exc:
                if is_unavailable(exc):
                    log.warning("notification scan: the database is unavailable: %s", exc)
                else:
                    log.exception("notification scan failed")
                continue
            for player_id in due:
                self._serve_soon(player_id)

    async def _serve(self, player_id: str) -> None:
        try:
            async with self._slots:
                if await self._serve_once(player_id):
                    self._again.add(player_id)  # more than a batch: again at once
        except Exception:
            log.exception("notifications of player %s failed", player_id)
        finally:
            self._players.pop(player_id, None)
            if player_id in self._again:
                self._again.discard(player_id)
                self._serve_soon(player_id)

    async def _serve_once(self, player_id: str) -> bool:
        """Deliver what is due for the player under their lease; True if more may be due.

        Core statements only, each standing alone (``Database.each``: no transaction around
        them on PostgreSQL): the claim (returning the player's settings), the read of the rows,
        after the sends every row's outcome (each pinned to the lease), then the release. A
        crash between a send and its outcome sends the row again (at least once); one before
        the release leaves the lease to expire. A webhook's health (failing since, turned off,
        on again) is recorded only when it changes, in a transaction of its own before the
        release."""
        now = utcnow()

        def claim(conn: Connection) -> tuple[Recipient, list[Any]] | None:
            settings = store.claim_player(conn, player_id, self.owner, now, now + self.lease)
            if settings is None:
                return None
            return Recipient.of(settings), store.pending_of(conn, player_id, BATCH)

        claimed = await self.db.each(claim)
        if claimed is None:
            return False
        recipient, rows = claimed
        outcomes: list[Outcome] = []
        hold: datetime | None = None
        try:
            hold = await self._deliver_rows(recipient, rows, outcomes)
        finally:
            tried = [o for o in outcomes if o.webhook is not None]
            if tried and (recipient.webhook_failing or not tried[-1].webhook):
                await self._webhook_health(player_id, tried[-1])

            def record(conn: Connection) -> None:
                for outcome in outcomes:
                    outcome.write(conn, self.owner, player_id)
                if any(o.digest_sent for o in outcomes):
                    store.digest_sent(conn, player_id, now)
                store.release_player(conn, player_id, self.owner, hold)

            await self.db.each(record)
        return hold is None and len(rows) == BATCH

    async def _webhook_health(self, player_id: str, tried: Outcome) -> None:
        """Record how the player's webhook went when that is news: a failure, or a success
        after failures (``outbox.webhook_outcome``)."""
        async with self.db.write() as session:
            if await store.webhook_outcome(
                session,
                player_id,
                ok=bool(tried.webhook),
                error=tried.error,
                now=utcnow(),
                disable_after=self.disable_after,
            ):
                log.warning("webhook of %s turned off: failing since long", player_id)

    async def _deliver_rows(
        self, recipient: Recipient, rows: list[Row[Any]], outcomes: list[Outcome]
    ) -> datetime | None:
        """Send the due rows in order, adding each one's outcome to ``outcomes``; the time to
        try again if one must wait for a retry."""
        digest: list[Row[Any]] = []
        started = time.monotonic()
        for row in rows:
            now = utcnow()
            if row.next_at > now:
                if row.attempts > 0:
                    due: datetime = row.next_at
                    return due  # a retry not yet due: everything after waits
                continue  # scheduled for later (a digest, a time_running_out): no wait
            if row.kind == "your_turn" and recipient.reminders == "digest":
                digest.append(row)
                continue
            if row.kind == "time_running_out" and await self._stale(row):
                outcomes.append(Outcome([row.id], status="stale"))
                continue
            data = {"table_id": row.table_id, **row.payload}
            outcome = await self._send(recipient, [row], row.kind, data, row.message_id)
            outcomes.append(outcome)
            if outcome.next_at is not None:
                return outcome.next_at
            if time.monotonic() - started > self.lease.total_seconds() / 2:
                return None  # the rest in the next round, under a renewed lease
        if digest:
            now = utcnow()
            last = recipient.last_digest_at
            due = now if last is None else last + timedelta(hours=recipient.digest_hours)
            if due > now:
                outcomes.append(Outcome([r.id for r in digest], postpone=due))
                return None
            tables = list(dict.fromkeys(r.table_id for r in digest if r.table_id))
            data = {"tables": [{"table_id": t} for t in tables], "count": len(tables)}
            message_id = f"{digest[0].message_id}_digest"
            outcome = await self._send(recipient, digest, "your_turn_digest", data, message_id)
            outcomes.append(outcome)
            return outcome.next_at
        return None

    async def _stale(self, row: Row[Any]) -> bool:
        """Whether a ``time_running_out`` no longer holds: the turn's deadline has moved."""
        if row.table_id is None:
            return True
        async with self.db.read() as session:
            due = await store.clock_deadline(session, row.table_id)
        return due is None or due.isoformat() != row.payload.get("deadline")

    async def _send(
        self,
        recipient: Recipient,
        rows: list[Row[Any]],
        kind: str,
        data: dict[str, Any],
        message_id: str,
    ) -> Outcome:
        """Deliver one message for ``rows`` to every channel still missing it: delivered,
        failed for good, or to be tried again at ``next_at``."""
        head = rows[0]
        note = Message(message_id, recipient.player_id, kind, data, head.created_at, recipient)
        done = list(head.channels_done)
        errors: list[str] = []
        webhook: bool | None = None  # how the webhook's try went, if it was tried
        for channel in self.channels:
            if channel.name in done or not channel.wants(recipient):
                continue
            try:
                await self._deliver(channel, note)
                done.append(channel.name)
                webhook = True if channel.name == WebhookChannel.name else webhook
            except Exception as exc:
                errors.append(f"{channel.name}: {exc}"[:500])
                webhook = False if channel.name == WebhookChannel.name else webhook
        now = utcnow()
        ids = [r.id for r in rows]
        if not errors:
            status = "delivered" if kind == head.kind else "digested"
            if not done:
                status = "skipped"  # the player has no channel any more
            self.delivered += 1
            return Outcome(
                ids, status=status, done=done, digest_sent=status == "digested", webhook=webhook
            )
        error = "; ".join(errors)
        if now - head.created_at >= self.retry_for:
            self.failed += 1
            log.warning(
                "notification %s to %s failed for good: %s", message_id, head.player_id, error
            )
            return Outcome(ids, status="failed", done=done, error=error, webhook=webhook)
        self.retried += 1
        delay = min(self.backoff_base * 2**head.attempts, self.backoff_max)
        next_at = now + timedelta(seconds=delay)
        return Outcome([head.id], done=done, error=error, next_at=next_at, webhook=webhook)

    async def _deliver(self, channel: Channel, note: Message) -> None:
        """``channel.deliver``, moved to the slow lane if it is not done within
        ``slow_seconds``, or cut short (``SlowDeliveryError``) when the lane is full."""
        send = asyncio.ensure_future(channel.deliver(note.player_id, note))
        try:
            await asyncio.wait({send}, timeout=self.slow_seconds)
        except BaseException:
            send.cancel()
            raise
        if send.done():
            return send.result()
        if self._slow.locked():
            send.cancel()
            await asyncio.wait({send})
            raise SlowDeliveryError(
                f"no answer within {self.slow_seconds:g} s while the slow lane was full"
            )
        async with self._slow:
            self._slots.release()  # this round's: quick targets go on meanwhile
            try:
                await send
            finally:
                # Back in a slot for the rest of the round (shielded: a cancelled wait still
                # takes the slot that ``_serve`` gives back as it unwinds).
                await asyncio.shield(self._slots.acquire())


class SlowDeliveryError(Exception):
    """A send cut short: slow, while the slow lane was full (module docstring)."""


# Rows read per player and round.
BATCH = 100
# Rows deleted per transaction when purging old ones.
PURGE_BATCH = 5000


@dataclass(slots=True)
class Outcome:
    """What became of rows in one round: a status, a retry at ``next_at``, or a postponement."""

    ids: list[int]
    status: str | None = None
    done: list[str] = field(default_factory=list)
    error: str | None = None
    next_at: datetime | None = None
    postpone: datetime | None = None
    digest_sent: bool = False
    webhook: bool | None = None  # the webhook's try: succeeded, failed, or not tried

    def write(self, conn: Connection, owner: str, player_id: str) -> None:
        """Record it, pinned to ``owner``'s lease of the player (``outbox.finish``)."""
        if self.postpone is not None:
            store.postpone(conn, self.ids, self.postpone)
        elif self.next_at is not None:
            store.retry_later(
                conn,
                self.ids[0],
                owner,
                player_id,
                next_at=self.next_at,
                channels_done=self.done,
                error=self.error or "",
            )
        elif self.status is not None:
            store.finish(
                conn,
                self.ids,
                owner,
                player_id,
                status=self.status,
                now=utcnow(),
                channels_done=self.done,
                error=self.error,
            )
