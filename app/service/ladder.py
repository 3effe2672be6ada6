"""The bot ladder: bot accounts say they are available, the tournament scheduler pairs them
with each other and with the built-in levels (fixed anchors) at rated tables, and anyone reads
who is available now and the standings.

The ladder is a standing tournament (``store.ladder.LADDER_ID``, format ``ladder``, running
forever, admitting bots), made by the first bot account that says it is available, with one
entrant per built-in level. A bot account's availability lasts ``Settings.available_seconds``
from its last ``set_available``: a bot that disappears lapses by itself. A bot account is in at
most one ladder match being played (``app.table.ladder``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.bots import DISPLAY_NAMES
from app.errors import ForbiddenError
from app.service import ratings
from app.store import Database
from app.store import ladder as store
from app.store import tournaments as tournaments_store
from app.store.models import TournamentEntrant
from app.table.commands import Actor
from app.table.glicko2 import Glicko
from app.table.time import utcnow

CAPACITY = 1_000_000  # the ladder takes every bot account; each entrant is one row
ANCHOR = "bot-{level}"


@dataclass(frozen=True)
class Settings:
    available_seconds: float = 60.0
    preset: str = "standard"
    target: int = 0  # 0: the preset's own
    move_seconds: float = 30.0


class Ladder:
    """The bot ladder of one database (the routes' side; see the module docstring)."""

    def __init__(self, db: Database, settings: Settings = Settings()) -> None:
        self.db = db
        self.settings = settings

    def _row(self, organiser_id: str, now: datetime) -> dict[str, Any]:
        # As a tournament's: the control as asked for, each table parses it when made.
        clock = {"control": "per_move", "seconds": self.settings.move_seconds, "policy": "forfeit"}
        return {
            "id": store.LADDER_ID,
            "organiser_id": organiser_id,
            "name": "Bot ladder",
            "format": "ladder",
            "preset": self.settings.preset,
            "rules": {"target": self.settings.target} if self.settings.target else {},
            "clock": clock,
            "rated": True,
            "admits": "bots",
            "capacity": CAPACITY,
            "starts_at": now,
            "status": "running",
            "round": 0,
            "created_at": now,
        }

    def _anchors(self, now: datetime) -> list[dict[str, Any]]:
        return [
            {
                "tournament_id": store.LADDER_ID,
                "entrant_id": ANCHOR.format(level=level),
                "player_id": None,
                "bot_level": level,
                "name": name,
                "rating": ratings.BOT_RATINGS[level],
                "joined_at": now,
                "withdrawn": False,
            }
            for level, name in DISPLAY_NAMES.items()
        ]

    async def set_available(self, actor: Actor, available: bool) -> dict[str, Any]:
        """Mark a bot account available for ``available_seconds`` (again: renewed), or not."""
        now = utcnow()
        until = now + timedelta(seconds=self.settings.available_seconds) if available else None
        async with self.db.write() as session:
            if not await tournaments_store.is_bot(session, actor.player_id):
                raise ForbiddenError("not_a_bot", "only a bot account plays the ladder")
            await store.ensure(session, self._row(actor.player_id, now), self._anchors(now))
            mine = await store.entry(session, actor.player_id)
            if mine is None:
                await tournaments_store.add_entrant(
                    session,
                    {
                        "tournament_id": store.LADDER_ID,
                        "entrant_id": actor.player_id,
                        "player_id": actor.player_id,
                        "bot_level": None,
                        "name": actor.name,
                        "rating": 0.0,
                        "joined_at": now,
                        "withdrawn": False,
                        "available_until": until,
                    },
                )
            else:
                await tournaments_store.set_entrant(
                    session, store.LADDER_ID, actor.player_id, available_until=until
                )
            table_id = await store.playing_at(session, actor.player_id)
        return {
            "available": available,
            "available_until": None if until is None else until.isoformat(),
            "renew_every": self.settings.available_seconds / 2,
            "table_id": table_id,
        }

    async def _rows(self, only_available: bool) -> list[dict[str, Any]]:
        now = utcnow()
        async with self.db.read() as session:
            entrants = list(await tournaments_store.entrants(session, store.LADDER_ID))
            pairings = await store.current(session)
            games = await store.games(session)
            stored = await store.ratings(
                session,
                [e.entrant_id for e in entrants if e.player_id is not None],
                ratings.category_of(self.settings.preset),
            )
        playing: dict[str, str] = {}
        for p in pairings:
            if p.status == "playing" and p.table_id:
                for seat in (p.seat0, p.seat1):
                    if seat is not None:
                        playing[seat] = p.table_id
        rows = []
        for e in entrants:
            is_available = _available(e, now)
            if only_available and (e.bot_level is not None or not is_available):
                continue  # an account available now, not an anchor
            if e.bot_level is not None:
                glicko = ratings.bot_glicko(e.bot_level)
            else:
                glicko = ratings.current(stored.get(e.entrant_id), now)
            rows.append(_entry(e, glicko, games.get(e.entrant_id, 0), is_available,
                               playing.get(e.entrant_id)))  # fmt: skip
        rows.sort(key=lambda r: (-r["rating"], r["name"], r["entrant_id"]))
        return rows

    async def online(self) -> dict[str, Any]:
        """The bot accounts available now, best rated first."""
        return {"bots": await self._rows(only_available=True), "server_time": utcnow().isoformat()}

    async def standings(self, offset: int, limit: int) -> dict[str, Any]:
        """Every ladder entrant, anchors included, best rated first."""
        rows = await self._rows(only_available=False)
        return {
            "preset": self.settings.preset,
            "total": len(rows),
            "standings": [
                {**row, "rank": offset + i + 1}
                for i, row in enumerate(rows[offset : offset + limit])
            ],
        }


def _available(e: TournamentEntrant, now: datetime) -> bool:
    if e.bot_level is not None:
        return True  # an anchor is always there
    return e.available_until is not None and e.available_until > now


def _entry(
    e: TournamentEntrant, glicko: Glicko, games: int, available: bool, table_id: str | None
) -> dict[str, Any]:
    return {
        "entrant_id": e.entrant_id,
        "player_id": e.player_id,
        "name": e.name,
        "anchor": e.bot_level,
        "rating": round(glicko.rating, 1),
        "deviation": round(glicko.deviation, 1),
        "interval": [
            round(glicko.rating - 2 * glicko.deviation, 1),
            round(glicko.rating + 2 * glicko.deviation, 1),
        ],
        "provisional": glicko.deviation > ratings.PROVISIONAL_DEVIATION,
        "games": games,
        "available": available,
        "table_id": table_id,
    }
