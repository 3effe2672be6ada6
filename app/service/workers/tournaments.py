"""The tournament scheduler: starts, pairs, records and advances every tournament, each in the
one process holding its lease.

Every ``scan_interval`` seconds (and at once when a match finishes anywhere, through the bus)
each process reads the tournaments with work (running, or due to start) and, for each, takes or
renews its lease (``store.tournaments.claim``: one conditional UPDATE); another process's live
lease makes it leave that tournament alone. The lease holder then, in order:

1. starts a due tournament (arena: its end time is fixed; Swiss: round 1 is paired);
2. makes the tables of the pairings being played that it has not made yet: each pairing's table
   id was chosen and stored with the pairing, so making it again is harmless
   (``TableService.open_paired``), and a leader killed between the pairing and the table loses
   neither;
3. records each finished match's result (``store.tournaments.settle``: once, only a pairing
   still being played takes one);
4. Swiss: once every pairing of the round has its result, pairs the next round or finishes;
   a correspondence round whose deadline passes settles its unfinished pairings (the seat
   ahead in the match wins; level: drawn), once. Arena: pairs whoever is free
   (``app.table.arena``) until the end time, when pairing stops and matches still being
   played count nothing. The bot ladder (a standing tournament of format ``ladder``) pairs
   its free available bot accounts and anchors (``workers.ladder``), at every look.

A round (or an arena's batch) is written in the transaction of one UPDATE that moves
``tournaments.round`` from the round seen to the next, pinned to the lease
(``store.tournaments.advance``): the round is advanced once, whichever processes try.
A crashed leader's lease expires after ``lease_seconds``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from app.engine import make_ruleset
from app.errors import ServiceError
from app.service.pipeline import TableService
from app.service.tournaments import build_export
from app.service.workers import ladder
from app.store import ladder as ladder_store
from app.store import leases
from app.store import tournaments as store
from app.store.db import is_unavailable
from app.store.models import Tournament, TournamentEntrant, TournamentPairing
from app.table import arena, swiss
from app.table.ids import table_id
from app.table.model import SeatInfo, TableRow
from app.table.standings import standings
from app.table.time import utcnow

log = logging.getLogger(__name__)

# Events after which a tournament may have a result to record.
FINISH_EVENTS = frozenset({"match_over", "match_aborted"})
# Tables a scheduler makes at once.
OPENING = 8


class TournamentRunner:
    """Schedules every tournament this process holds the lease of (the module docstring)."""

    def __init__(
        self, service: TableService, *, scan_interval: float, lease_seconds: float
    ) -> None:
        self.service = service
        self.db = service.db
        self.scan_interval = scan_interval
        self.lease = timedelta(seconds=lease_seconds)
        self.owner = leases.owner_id()
        self.paired = 0  # pairings this process wrote
        self._opened: set[str] = set()  # tables this process made (or found made)
        self._held: set[str] = set()  # tournaments whose lease this process holds
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._scan()), asyncio.create_task(self._watch())]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            async with self.db.write() as session:
                await store.release(session, self.owner)

    async def _watch(self) -> None:
        while True:
            async with self.service.hub.tables(FINISH_EVENTS) as events:
                async for _ in events:
                    self._wake.set()

    async def _scan(self) -> None:
        while True:
            try:
                async with self.db.scan() as conn:
                    due = await store.due(conn, utcnow())
                for tournament_id in due:
                    await self.step(tournament_id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_unavailable(exc):
                    log.warning("tournament scan: the database is unavailable: %s", exc)
                else:
                    log.exception("tournament scan failed")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.scan_interval):
                    await self._wake.wait()
            self._wake.clear()

    async def step(self, tournament_id: str) -> None:
        """One look at a tournament, if this process holds (or takes) its lease."""
        now = utcnow()
        async with self.db.write() as session:
            held = await store.claim(session, tournament_id, self.owner, now, now + self.lease)
        if not held:
            self._held.discard(tournament_id)
            return
        if tournament_id not in self._held:
            self._held.add(tournament_id)
            log.info("tournament %s: scheduled by this process", tournament_id)
        async with self.db.read() as session:
            row = await store.get(session, tournament_id)
            entrants = list(await store.entrants(session, tournament_id))
            pairings = await _pairings_of(session, tournament_id)
        if row is None:
            return
        if row.status == "upcoming":
            await self._begin(row, entrants, pairings)
            return
        await self._open_tables(row, entrants, pairings)
        if await self._record(row, pairings):
            async with self.db.read() as session:
                pairings = await _pairings_of(session, tournament_id)
        if row.format == "ladder":
            stale = await ladder.aborted(self.db, pairings)
            if stale:
                await self._finish_pairings(row, stale)
                async with self.db.read() as session:
                    pairings = await _pairings_of(session, tournament_id)
            found = await ladder.pairs(self.db, row, entrants, pairings)
            if found:
                rows = [_pairing(row.id, row.round + 1, a, b) for a, b in found]
                await self._write_batch(row, rows, {"round": row.round + 1})
        elif row.format == "swiss":
            await self._swiss(row, entrants, pairings)
        else:
            await self._arena(row, entrants, pairings)

    async def _begin(
        self, row: Tournament, entrants: list[TournamentEntrant], pairings: list[TournamentPairing]
    ) -> None:
        present = [e for e in entrants if not e.withdrawn]
        now = utcnow()
        if len(present) < 2:
            await self._finish(row)  # nobody to play: over before it began
            return
        values: dict[str, object] = {"status": "running"}
        if row.format == "arena":
            values["ends_at"] = now + timedelta(seconds=row.duration_seconds or 0)
            async with self.db.write() as session:
                await store.advance(session, row.id, self.owner, row.round, values)
            log.info("tournament %s: the arena started", row.id)
            return
        await self._pair_swiss(row, entrants, pairings, values)

    async def _finish(
        self, row: Tournament, unfinished: tuple[TournamentPairing, ...] = ()
    ) -> None:
        now = utcnow()
        async with self.db.write() as session:
            done = await store.advance(
                session, row.id, self.owner, row.round,
                {"status": "finished", "finished_at": now, "lease_owner": None,
                 "lease_until": None},
            )  # fmt: skip
            if done:
                for p in unfinished:
                    await store.settle(
                        session, row.id, p.number, status="unfinished", winner=None, now=now
                    )
        if done:
            log.info("tournament %s finished", row.id)

    async def _finish_pairings(self, row: Tournament, stale: list[TournamentPairing]) -> None:
        now = utcnow()
        async with self.db.write() as session:
            for p in stale:
                await store.settle(session, row.id, p.number, status="unfinished", winner=None,
                                   now=now)  # fmt: skip

    async def _open_tables(
        self, row: Tournament, entrants: list[TournamentEntrant], pairings: list[TournamentPairing]
    ) -> None:
        """Make the tables of the pairings being played not made here yet, ``OPENING`` at once
        (an arena's first batch is half its entrants)."""
        by_id = {e.entrant_id: e for e in entrants}
        todo = [
            p
            for p in pairings
            if p.status == "playing" and p.table_id and p.seat1 and p.table_id not in self._opened
        ]
        gate = asyncio.Semaphore(OPENING)

        async def open_one(p: TournamentPairing) -> None:
            assert p.table_id is not None and p.seat1 is not None
            seats = (_seat(0, by_id[p.seat0]), _seat(1, by_id[p.seat1]))
            async with gate:
                try:
                    await self.service.open_paired(_table(row, p), seats, row.clock)
                except ServiceError as exc:
                    log.error("tournament %s: table %s not opened: %s", row.id, p.table_id,
                              exc.code)  # fmt: skip
                    return
            self._opened.add(p.table_id)

        await asyncio.gather(*(open_one(p) for p in todo))

    async def _record(self, row: Tournament, pairings: list[TournamentPairing]) -> bool:
        playing = {p.table_id: p for p in pairings if p.status == "playing" and p.table_id}
        async with self.db.read() as session:
            results = await store.finished_results(session, list(playing))
        if not results:
            return False
        now = utcnow()
        async with self.db.write() as session:
            for table_id, seat in results.items():
                p = playing[table_id]
                winner = p.seat0 if seat == 0 else p.seat1
                await store.settle(session, row.id, p.number, status="finished", winner=winner,
                                   now=now)  # fmt: skip
        return True

    async def _swiss(
        self, row: Tournament, entrants: list[TournamentEntrant], pairings: list[TournamentPairing]
    ) -> None:
        current = [p for p in pairings if p.round == row.round]
        open_ = [p for p in current if p.status == "playing"]
        now = utcnow()
        if open_ and row.round_deadline is not None and now >= row.round_deadline:
            await self._adjudicate(row, open_)
            return  # the next look pairs the next round
        if open_:
            return
        if row.round >= (row.rounds or 0):
            await self._finish(row)
            return
        await self._pair_swiss(row, entrants, pairings, {})

    async def _adjudicate(self, row: Tournament, open_: list[TournamentPairing]) -> None:
        """A round's deadline passed: each unfinished match goes to the seat ahead, or is drawn."""
        now = utcnow()
        for p in open_:
            state = None
            if p.table_id is not None:
                with contextlib.suppress(ServiceError):
                    state = (await self.service.load(p.table_id)).state
            scores = state.scores if state is not None else [0, 0]
            if scores[0] == scores[1]:
                status, winner = "drawn", None
            else:
                status, winner = "finished", p.seat0 if scores[0] > scores[1] else p.seat1
            async with self.db.write() as session:
                await store.settle(session, row.id, p.number, status=status, winner=winner, now=now)

    async def _pair_swiss(
        self,
        row: Tournament,
        entrants: list[TournamentEntrant],
        pairings: list[TournamentPairing],
        values: dict[str, object],
    ) -> None:
        export = build_export(row, entrants, pairings)
        scores = {s["entrant_id"]: s["score"] for s in standings(export)}
        players = [
            swiss.Player(e.entrant_id, scores.get(e.entrant_id, 0.0), e.rating)
            for e in entrants
            if not e.withdrawn
        ]
        played = {swiss.pair_key(p.seat0, p.seat1) for p in pairings if p.seat1 is not None}
        had_bye = {p.seat0 for p in pairings if p.status == "bye"}
        round_ = swiss.pair_round(players, played, had_bye, _balance(pairings))
        number = row.round + 1
        deadline = None
        if row.round_days:
            deadline = utcnow() + timedelta(days=row.round_days)
        rows = [_pairing(row.id, number, a, b) for a, b in round_.pairs]
        if round_.bye is not None:
            rows.append(_pairing(row.id, number, round_.bye, None))
        await self._write_batch(row, rows, {**values, "round": number, "round_deadline": deadline})

    async def _arena(
        self, row: Tournament, entrants: list[TournamentEntrant], pairings: list[TournamentPairing]
    ) -> None:
        playing = [p for p in pairings if p.status == "playing"]
        if row.ends_at is not None and utcnow() >= row.ends_at:
            await self._finish(row, tuple(playing))  # pairing stops at the end
            return
        busy = {p.seat0 for p in playing} | {p.seat1 for p in playing}
        last: dict[str, str | None] = {}
        for p in pairings:  # in order: the latest opponent stays
            if p.seat1 is not None:
                last[p.seat0], last[p.seat1] = p.seat1, p.seat0
        export = build_export(row, entrants, pairings)
        scores = {s["entrant_id"]: s["score"] for s in standings(export)}
        free = [
            arena.Free(
                e.entrant_id, scores.get(e.entrant_id, 0.0), e.rating, last.get(e.entrant_id)
            )
            for e in entrants
            if not e.withdrawn and e.entrant_id not in busy  # withdrawn: paused
        ]
        pairs = arena.pair_free(free, _balance(pairings))
        if pairs:
            rows = [_pairing(row.id, row.round + 1, a, b) for a, b in pairs]
            await self._write_batch(row, rows, {"round": row.round + 1})

    async def _write_batch(
        self, row: Tournament, rows: list[dict[str, object]], values: dict[str, object]
    ) -> None:
        """Insert the pairings with the round's advance, pinned to the lease; then their tables."""
        async with self.db.write() as session:
            if not await store.advance(session, row.id, self.owner, row.round, values):
                return  # another process moved it on (or took the lease): it pairs
            first = await store.next_number(session, row.id)
            for offset, values_ in enumerate(rows):
                values_["number"] = first + offset
            await store.add_pairings(session, rows)
        self.paired += len(rows)
        log.info("tournament %s: %d pairings of round %s", row.id, len(rows), values["round"])
        async with self.db.read() as session:
            entrants = list(await store.entrants(session, row.id))
            pairings = await _pairings_of(session, row.id)
        await self._open_tables(row, entrants, pairings)


async def _pairings_of(session: AsyncSession, tournament_id: str) -> list[TournamentPairing]:
    """A tournament's pairings; the bot ladder's that a look needs (its history is unbounded)."""
    if tournament_id == ladder_store.LADDER_ID:
        return await ladder_store.current(session)
    return list(await store.pairings(session, tournament_id))


def _balance(pairings: list[TournamentPairing]) -> dict[str, int]:
    """First deals minus second deals, per entrant (byes count neither)."""
    balance: dict[str, int] = {}
    for p in pairings:
        if p.seat1 is not None:
            balance[p.seat0] = balance.get(p.seat0, 0) + 1
            balance[p.seat1] = balance.get(p.seat1, 0) - 1
    return balance


def _pairing(tournament_id: str, round_: int, a: str, b: str | None) -> dict[str, object]:
    return {
        "tournament_id": tournament_id,
        "round": round_,
        "seat0": a,
        "seat1": b,
        "table_id": None if b is None else table_id(),
        "status": "playing" if b is not None else "bye",
        "winner": None,
        "created_at": utcnow(),
        "finished_at": None,
    }


def _seat(seat: int, entrant: TournamentEntrant) -> SeatInfo:
    name = entrant.name if entrant.player_id is not None else None
    return SeatInfo(seat, entrant.player_id, name, entrant.bot_level, "classic")


def _table(row: Tournament, p: TournamentPairing) -> TableRow:
    """A pairing's table: the tournament's game, its ``seat0`` dealing first."""
    rules = make_ruleset(row.preset, {**row.rules, "first_dealer": "seat0"}).to_dict()
    assert p.table_id is not None
    return TableRow(
        id=p.table_id,
        created_by=row.organiser_id,
        preset=row.preset,
        rules=rules,
        invite_code=uuid.uuid4().hex[:12],
        status="ready",
        match_number=0,
        version=1,
        last_seq=2,
        created_at=utcnow(),
        rated=row.rated,
    )
