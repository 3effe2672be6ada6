"""Hand reviews by LUNA, computed in worker processes, kept in the database, queued boundedly.

A review (``app.bots.review``) costs about a CPU second per hand at the default budget, so it
never runs on the event loop: it goes to its own ``BotPool`` (``review_workers`` processes at
``review_nice``, below the bots' own workers, so a review never delays a bot's move or a
person's). A review asked for is computed once, whoever asks and however often: the same hand
asked again while it is computed waits for the same job, and once computed it is read from the
``reviews`` table. At most ``review_queue_max`` hands are queued or computed at once in a
process; one more is refused with 429 ``review_queue_full`` and a ``Retry-After``. A request
waits up to ``review_wait_seconds`` for its review, then answers 202 ``pending`` (ask again).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.bots.base import has_move
from app.bots.review import ReviewBudget, review_hand, summary
from app.engine import view as engine_view
from app.engine.replay import replay
from app.engine.state import Event, MatchState
from app.errors import ConflictError, ForbiddenError, RateLimitedError
from app.metrics import REVIEW_CPU, REVIEWS
from app.service.queries import FinishedHand, TableQueries
from app.service.workers.bot_pool import BotPool
from app.store import reviews
from app.table.commands import Actor, seat_of
from app.table.time import utcnow

log = logging.getLogger(__name__)

Key = tuple[str, int, int]
# Hints remembered (the latest, per table version and seat).
HINTS_KEPT = 1024


def review_job(
    start: Mapping[str, Any], events: Sequence[Mapping[str, Any]], samples: int, seed: int
) -> tuple[dict[str, Any], float]:
    """A hand's review and the CPU seconds it took (in a worker process): the match as it
    stood at the deal (``MatchState.to_dict``) and the hand's events (``Event.to_dict``)."""
    began = time.process_time()
    logged = [Event.from_dict(dict(e)) for e in events]
    steps = replay(MatchState.from_dict(dict(start)), logged)
    data = review_hand(steps, logged, ReviewBudget(samples, seed))
    return data, time.process_time() - began


@dataclass(frozen=True, slots=True)
class Answer:
    """A review request's answer: ``done`` with the review, or ``pending`` (ask again)."""

    done: bool
    body: dict[str, Any]


class Reviews:
    """Hand and match reviews over the tables' queries and a pool of worker processes."""

    def __init__(
        self,
        queries: TableQueries,
        pool: BotPool,
        *,
        budget: ReviewBudget,
        queue_max: int,
        wait_seconds: float,
    ) -> None:
        self.queries = queries
        self.pool = pool
        self.budget = budget
        self.queue_max = max(1, queue_max)
        self.wait_seconds = wait_seconds
        self._jobs: dict[Key, asyncio.Task[dict[str, Any]]] = {}
        # The latest hints given, by (table, version, seat): asked again, the same answer free.
        self._hints: OrderedDict[Key, dict[str, Any]] = OrderedDict()

    @property
    def queued(self) -> int:
        """Hands queued or being reviewed in this process."""
        return len(self._jobs)

    async def hand(self, table_id: str, hand: int, match: int | None) -> Answer:
        """The review of a finished hand: kept, or computed now (see the module docstring)."""
        done = await self.queries.finished_hand(table_id, hand, match)
        kept = await self._kept(done)
        if kept is not None:
            return Answer(True, kept)
        job = self._job(done)
        try:
            data = await asyncio.wait_for(asyncio.shield(job), self.wait_seconds)
        except TimeoutError:
            return Answer(False, self._pending(done))
        return Answer(True, self._body(done, data))

    async def match(self, table_id: str, match: int | None) -> dict[str, Any]:
        """Every finished hand of a match: its summary where reviewed, its review started
        where not (while the queue has room), and the seats' summary over the reviewed ones."""
        loaded = await self.queries.load(table_id)
        number = loaded.table.match_number if match is None else match
        hands: list[dict[str, Any]] = []
        decisions: list[dict[str, Any]] = []
        for n in await self.queries.finished_hand_numbers(table_id, number):
            done = await self.queries.finished_hand(table_id, n, number)
            kept = await self._kept(done)
            if kept is None:
                if self.queued < self.queue_max:
                    self._job(done)
                hands.append({"hand_number": n, "status": "pending", "seats": None})
                continue
            decisions += kept["decisions"]
            hands.append({"hand_number": n, "status": "done", "seats": kept["seats"]})
        reviewed = sum(1 for h in hands if h["status"] == "done")
        return {
            "table_id": table_id,
            "match_number": number,
            "status": "done" if reviewed == len(hands) else "pending",
            "hands": hands,
            "seats": summary(decisions, reviewed),
        }

    async def hint(self, table_id: str, actor: Actor) -> dict[str, Any]:
        """What LUNA would play now for the actor's seat, from that seat's view and events
        alone, at the pool's small budget: a table with hints on, the actor's turn."""
        loaded = await self.queries.load(table_id)
        if not loaded.table.hints:
            raise ConflictError("hints_off", "this table was not created with hints on")
        seat = seat_of(loaded, actor)
        if seat is None:
            raise ForbiddenError("not_seated", "you do not hold a seat at this table")
        state = loaded.state
        if state is None or state.status != "playing":
            raise ConflictError("match_not_started", "no match is being played")
        view = engine_view(state, seat)
        if state.hand.phase == "over" or state.hand.turn != seat or not has_move(view):
            raise ConflictError("not_your_turn", "a hint is for the seat to move")
        key = (table_id, loaded.table.version, seat)
        given = self._hints.get(key)
        if given is not None:
            return given
        if self.pool.pending >= self.queue_max:
            raise RateLimitedError(
                "review_queue_full", "LUNA is busy with other hints and reviews; ask again shortly",
                retry_after=1.0,
            )  # fmt: skip
        events = await self.queries.match_events(loaded, seat)
        budget = self.pool.budget_now()
        move = await self.pool.choose("hard", view, events)
        answer = {
            "table_id": table_id,
            "seat": seat,
            "version": loaded.table.version,
            "move": move,
            "budget": {"playouts": budget.playouts},
        }
        self._hints[key] = answer
        while len(self._hints) > HINTS_KEPT:
            self._hints.popitem(last=False)
        return answer

    async def _kept(self, done: FinishedHand) -> dict[str, Any] | None:
        async with self.queries.db.read() as session:
            row = await reviews.review_of(session, done.table_id, done.match, done.hand)
        return None if row is None else self._body(done, row.data)

    def _job(self, done: FinishedHand) -> asyncio.Task[dict[str, Any]]:
        key = (done.table_id, done.match, done.hand)
        job = self._jobs.get(key)
        if job is not None:
            return job
        if len(self._jobs) >= self.queue_max:
            raise RateLimitedError(
                "review_queue_full",
                f"{len(self._jobs)} hands are being reviewed; ask again shortly",
                retry_after=max(1.0, self.wait_seconds),
            )
        job = asyncio.create_task(self._compute(done), name=f"review {key}")
        self._jobs[key] = job
        job.add_done_callback(lambda ended: self._ended(key, ended))
        return job

    def _ended(self, key: Key, job: asyncio.Task[dict[str, Any]]) -> None:
        self._jobs.pop(key, None)
        if not job.cancelled() and job.exception() is not None:
            log.error("the review of %s failed: %r", key, job.exception())

    async def close(self) -> None:
        """Abandon the reviews under way (their results are not kept)."""
        jobs = list(self._jobs.values())
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)

    async def _compute(self, done: FinishedHand) -> dict[str, Any]:
        events = [e.to_dict() for _, e in done.events]
        data, cpu = await self.pool.run(
            review_job, done.start.to_dict(), events, self.budget.samples, self.budget.seed
        )
        REVIEWS.inc()
        REVIEW_CPU.inc(cpu)
        await reviews.keep(
            self.queries.db,
            done.table_id,
            done.match,
            done.hand,
            samples=self.budget.samples,
            cpu_seconds=cpu,
            data=data,
            now=utcnow(),
        )
        log.info("reviewed %s hand %s-%s in %.2f CPU s", done.table_id, done.match, done.hand, cpu)
        return data

    def _body(self, done: FinishedHand, data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "table_id": done.table_id,
            "match_number": done.match,
            "hand_number": done.hand,
            "status": "done",
            **data,
        }

    def _pending(self, done: FinishedHand) -> dict[str, Any]:
        return {
            "table_id": done.table_id,
            "match_number": done.match,
            "hand_number": done.hand,
            "status": "pending",
            "queued": self.queued,
            "budget": {"samples": self.budget.samples, "seed": self.budget.seed},
            "decisions": [],
            "seats": [],
        }
