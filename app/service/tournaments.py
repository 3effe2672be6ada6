"""Tournaments: create, enter, withdraw, enter a built-in bot, start early; their views,
listings and exports (the scheduler that pairs and advances them:
``app.service.workers.tournaments``; the pairing: ``app.table.swiss``, ``app.table.arena``;
the standings: ``app.table.standings``, computed from the export itself).

Who may enter (``admits``): ``humans`` (the default: nobody meets a bot they did not opt into),
``bots`` or ``both``. In an arena, withdrawing pauses: the entrant keeps its points, is not
paired, and joining again resumes. In a Swiss, a withdrawn entrant is not paired in later
rounds; one who joins late starts from 0 points in the next round.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from app.bots import DISPLAY_NAMES
from app.engine import make_ruleset
from app.errors import ConflictError, ForbiddenError, InvalidError, NotFoundError
from app.service import ratings
from app.service.pipeline import Idempotency, Result
from app.service.records import match_id
from app.store import Database
from app.store import tournaments as store
from app.store.idempotency import idempotent_response, save_idempotent
from app.store.models import Tournament, TournamentEntrant, TournamentPairing
from app.table import clock as clocks
from app.table.commands import Actor
from app.table.standings import FORMAT, VERSION, standings
from app.table.time import utcnow

FORMATS = ("arena", "swiss")
ADMITS = ("humans", "bots", "both")
STATUSES = ("upcoming", "running", "finished")


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of ``Settings.tournament_*`` (docs/operations.md)."""

    max_entrants: int = 256
    max_rounds: int = 15
    max_duration: int = 86400
    max_open: int = 5
    min_duration: int = 60


def _invalid(message: str) -> InvalidError:
    return InvalidError("invalid_tournament", message)


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat().replace("+00:00", "Z")


class Tournaments:
    """The tournaments of one database (the routes' side; see the module docstring)."""

    def __init__(
        self,
        db: Database,
        limits: Limits = Limits(),
        clock_minimums: clocks.Minimums = clocks.DEFAULT_MINIMUMS,
    ) -> None:
        self.db = db
        self.limits = limits
        self.clock_minimums = clock_minimums

    async def create(
        self, actor: Actor, body: dict[str, Any], idempotency: Idempotency | None = None
    ) -> Result:
        """A new tournament organised by ``actor`` (201 and its view; 422
        ``invalid_tournament``); a retry with the same Idempotency-Key gets the first answer."""
        if idempotency is not None:
            async with self.db.read() as session:
                kept = await idempotent_response(session, actor.player_id, idempotency.key)
            if kept is not None:
                if kept.fingerprint != idempotency.fingerprint:
                    raise ConflictError(
                        "idempotency_key_reused",
                        "this Idempotency-Key was used for a different request",
                    )
                return Result(kept.status_code, kept.body, replayed=True)
        kind = body["format"]
        rules = body.get("rules") or {}
        make_ruleset(body["preset"], rules)  # the engine's refusal, if any
        ratings.check_rated(bool(body.get("rated")), rules)
        clocks.parse_control(body.get("clock"), self.clock_minimums)
        now = utcnow()
        starts_at: datetime = body.get("starts_at") or now + timedelta(minutes=5)
        if starts_at.tzinfo is None:
            starts_at = starts_at.replace(tzinfo=UTC)
        if starts_at < now - timedelta(minutes=1):
            raise _invalid("starts_at is in the past")
        capacity = body.get("capacity") or self.limits.max_entrants
        if not 2 <= capacity <= self.limits.max_entrants:
            raise _invalid(f"capacity is 2 to {self.limits.max_entrants}")
        duration, rounds, days = body.get("duration"), body.get("rounds"), body.get("round_days")
        shortest, longest = self.limits.min_duration, self.limits.max_duration
        if kind == "arena" and not (duration and shortest <= duration <= longest):
            raise _invalid(f"an arena lasts {shortest} to {longest} s")
        if kind == "swiss" and not (rounds and 1 <= rounds <= self.limits.max_rounds):
            raise _invalid(f"a Swiss needs 1 to {self.limits.max_rounds} rounds")
        if kind == "arena" and (rounds or days):
            raise _invalid("an arena has a duration, not rounds")
        if kind == "swiss" and duration:
            raise _invalid("a Swiss has rounds, not a duration")
        async with self.db.write() as session:
            if await store.open_by(session, actor.player_id) >= self.limits.max_open:
                raise ConflictError(
                    "too_many_tournaments",
                    f"you organise {self.limits.max_open} tournaments not finished",
                )
            tournament_id = uuid.uuid4().hex
            values = {
                "id": tournament_id,
                "organiser_id": actor.player_id,
                "name": body.get("name") or f"{kind.title()} {body['preset']}",
                "format": kind,
                "preset": body["preset"],
                "rules": rules,
                "clock": body.get("clock"),
                "rated": bool(body.get("rated")),
                "admits": body.get("admits") or "humans",
                "capacity": capacity,
                "starts_at": starts_at,
                "duration_seconds": duration if kind == "arena" else None,
                "rounds": rounds if kind == "swiss" else None,
                "round_days": days if kind == "swiss" else None,
                "status": "upcoming",
                "round": 0,
                "round_deadline": None,
                "ends_at": starts_at + timedelta(seconds=duration) if duration else None,
                "created_at": now,
                "finished_at": None,
                "lease_owner": None,
                "lease_until": None,
            }
            await store.add(session, values)
            view = {
                **_summary(values, 0),
                "organiser": {"id": actor.player_id, "name": actor.name},
                "entrants": [],
                "standings": [],
                "rounds": [],
                "you": None,
                "server_time": _iso(now),
            }
            if idempotency is not None:
                key, fingerprint = idempotency.key, idempotency.fingerprint
                await session.run_sync(
                    lambda s: save_idempotent(
                        s.connection(), actor.player_id, key, fingerprint=fingerprint,
                        status_code=201, body=view,
                    )
                )  # fmt: skip
        return Result(201, view)

    async def _entry_open(self, session: Any, tournament_id: str) -> Tournament:
        row = await store.get_for_update(session, tournament_id)
        if row is None or row.format == "ladder":  # the bot ladder: /v1/bots/...
            raise NotFoundError("tournament_not_found", f"no tournament {tournament_id!r}")
        if row.status == "finished":
            raise ConflictError("tournament_finished", "the tournament is over")
        return row

    async def _admit(self, session: Any, row: Tournament) -> None:
        present = (await store.counts(session, [row.id])).get(row.id, 0)
        if present >= row.capacity:
            raise ConflictError("tournament_full", f"the tournament is full ({row.capacity})")

    async def join(self, actor: Actor, tournament_id: str) -> dict[str, Any]:
        """Enter ``actor`` (or enter again after withdrawing: an arena's pause ends)."""
        async with self.db.write() as session:
            row = await self._entry_open(session, tournament_id)
            bot = await store.is_bot(session, actor.player_id)
            if row.admits == "bots" and not bot:
                raise ForbiddenError("humans_not_admitted", "this tournament admits only bots")
            if row.admits == "humans" and bot:
                raise ForbiddenError("bots_not_admitted", "this tournament admits only humans")
            entrants = await store.entrants(session, row.id)
            mine = next((e for e in entrants if e.entrant_id == actor.player_id), None)
            if mine is not None and not mine.withdrawn:
                raise ConflictError("already_entered", "you are entered already")
            await self._admit(session, row)
            if mine is not None:
                await store.set_entrant(session, row.id, actor.player_id, withdrawn=False)
            else:
                stored = await store.rating_row(
                    session, actor.player_id, ratings.category_of(row.preset)
                )
                glicko = ratings.current(stored, utcnow())
                await store.add_entrant(
                    session,
                    _entrant(row.id, actor.player_id, actor.player_id, None, name=actor.name,
                             rating=glicko.rating),
                )  # fmt: skip
        return await self.view(tournament_id, actor)

    async def withdraw(self, actor: Actor, tournament_id: str) -> dict[str, Any]:
        async with self.db.write() as session:
            row = await self._entry_open(session, tournament_id)
            if not await store.set_entrant(session, row.id, actor.player_id, withdrawn=True):
                raise NotFoundError("not_entered", "you are not entered in this tournament")
        return await self.view(tournament_id, actor)

    async def add_bot(self, actor: Actor, tournament_id: str, level: str) -> dict[str, Any]:
        """The organiser enters a built-in bot of ``level``."""
        if level not in DISPLAY_NAMES:
            levels = ", ".join(DISPLAY_NAMES)
            raise InvalidError("invalid_bot_level", f"bot level must be one of {levels}")
        async with self.db.write() as session:
            row = await self._entry_open(session, tournament_id)
            _organiser(row, actor, "enters a bot")
            if row.admits == "humans":
                raise ForbiddenError("bots_not_admitted", "this tournament admits only humans")
            await self._admit(session, row)
            entrants = await store.entrants(session, row.id)
            number = 1 + sum(e.bot_level == level for e in entrants)
            entrant_id = f"bot-{level}-{number}"
            name = DISPLAY_NAMES[level] if number == 1 else f"{DISPLAY_NAMES[level]} {number}"
            rating = ratings.bot_glicko(level).rating
            await store.add_entrant(
                session, _entrant(row.id, entrant_id, None, level, name=name, rating=rating)
            )
        return await self.view(tournament_id, actor)

    async def start(self, actor: Actor, tournament_id: str) -> dict[str, Any]:
        """The organiser starts now: the scheduler pairs at its next look."""
        async with self.db.write() as session:
            row = await self._entry_open(session, tournament_id)
            _organiser(row, actor, "starts it")
            if row.status != "upcoming":
                raise ConflictError("tournament_started", "the tournament has started already")
            if (await store.counts(session, [row.id])).get(row.id, 0) < 2:
                raise ConflictError("too_few_entrants", "a tournament needs two entrants")
            now = utcnow()
            ends = now + timedelta(seconds=row.duration_seconds) if row.duration_seconds else None
            await store.advance(
                session, row.id, None, row.round, {"starts_at": now, "ends_at": ends}
            )
        return await self.view(tournament_id, actor)

    async def listing(self, status: str, offset: int, limit: int) -> dict[str, Any]:
        async with self.db.read() as session:
            rows = await store.listing(session, status, offset, limit)
            counts = await store.counts(session, [r.id for r in rows])
        return {
            "status": status,
            "tournaments": [_summary(store.values_of(r), counts.get(r.id, 0)) for r in rows],
            "offset": offset,
            "limit": limit,
        }

    async def _read(self, tournament_id: str) -> tuple[Tournament, list[TournamentEntrant],
                                                         list[TournamentPairing], str]:  # fmt: skip
        async with self.db.read() as session:
            row = await store.get(session, tournament_id)
            if row is None or row.format == "ladder":  # the bot ladder: /v1/bots/...
                raise NotFoundError("tournament_not_found", f"no tournament {tournament_id!r}")
            entrants = list(await store.entrants(session, row.id))
            pairings = list(await store.pairings(session, row.id))
            organiser = await store.player_name(session, row.organiser_id) or ""
        return row, entrants, pairings, organiser

    async def export(self, tournament_id: str) -> dict[str, Any]:
        """The export ``python -m app.table.standings`` recomputes the standings from."""
        row, entrants, pairings, _ = await self._read(tournament_id)
        return build_export(row, entrants, pairings)

    async def view(self, tournament_id: str, actor: Actor | None) -> dict[str, Any]:
        row, entrants, pairings, organiser = await self._read(tournament_id)
        export = build_export(row, entrants, pairings)
        present = sum(not e.withdrawn for e in entrants)
        me = None if actor is None else next(
            (e for e in entrants if e.player_id == actor.player_id), None
        )  # fmt: skip
        return {
            **_summary(store.values_of(row), present),
            "organiser": {"id": row.organiser_id, "name": organiser},
            "entrants": export["entrants"],
            "standings": standings(export),
            "rounds": export["rounds"],
            "you": None if me is None else {"entrant_id": me.entrant_id, "withdrawn": me.withdrawn},
            "server_time": _iso(utcnow()),
        }


def _organiser(row: Tournament, actor: Actor, doing: str) -> None:
    if row.organiser_id != actor.player_id:
        raise ForbiddenError("not_organiser", f"only the tournament's organiser {doing}")


def _entrant(
    tournament_id: str,
    entrant_id: str,
    player_id: str | None,
    level: str | None,
    *,
    name: str,
    rating: float,
) -> dict[str, Any]:
    return {
        "tournament_id": tournament_id,
        "entrant_id": entrant_id,
        "player_id": player_id,
        "bot_level": level,
        "name": name,
        "rating": round(rating, 1),
        "joined_at": utcnow(),
        "withdrawn": False,
    }


def _summary(row: Mapping[str, Any], entrant_count: int) -> dict[str, Any]:
    """A tournament's row (``store.tournaments.values_of``) as the listings show it."""
    return {
        "tournament_id": row["id"],
        "name": row["name"],
        "format": row["format"],
        "status": row["status"],
        "preset": row["preset"],
        "rules": row["rules"],
        "clock": row["clock"],
        "rated": row["rated"],
        "admits": row["admits"],
        "capacity": row["capacity"],
        "entrant_count": entrant_count,
        "starts_at": _iso(row["starts_at"]),
        "ends_at": _iso(row["ends_at"]),
        "duration": row["duration_seconds"],
        "rounds_total": row["rounds"],
        "round_days": row["round_days"],
        "round": row["round"],
        "round_deadline": _iso(row["round_deadline"]),
        "finished_at": _iso(row["finished_at"]),
    }


def build_export(
    row: Tournament, entrants: list[TournamentEntrant], pairings: list[TournamentPairing]
) -> dict[str, Any]:
    """The tournament as ``app.table.standings`` reads it (``ginrummy-tournament-export``)."""
    rounds: dict[int, list[dict[str, Any]]] = {}
    for p in pairings:
        number = p.round if row.format == "swiss" else 1
        decided = p.status in {"finished", "drawn"} and p.table_id is not None
        rounds.setdefault(number, []).append(
            {
                "number": p.number,
                "seat0": p.seat0,
                "seat1": p.seat1,
                "table_id": p.table_id,
                "status": p.status,
                "winner": p.winner,
                "record_id": match_id(p.table_id, 1) if decided and p.table_id else None,
                "created_at": _iso(p.created_at),
                "finished_at": _iso(p.finished_at),
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "tournament": {
            "id": row.id,
            "name": row.name,
            "format": row.format,
            "preset": row.preset,
            "rounds": row.rounds,
            "status": row.status,
        },
        "entrants": [
            {
                "id": e.entrant_id,
                "name": e.name,
                "bot_level": e.bot_level,
                "player_id": e.player_id,
                "rating": e.rating,
                "withdrawn": e.withdrawn,
            }
            for e in entrants
        ],
        "rounds": [{"number": n, "pairings": ps} for n, ps in sorted(rounds.items())],
    }
