"""Ratings: Glicko-2 per player and category, moved by finished rated matches; bots anchored.

* A category is the table's preset (``standard``, ``cardems``, ``reino``, ``classic``,
  ``oklahoma``): a rated table plays its preset unchanged, so one rating means one game.
* A table is rated or casual from its creation. When a change finishes a match of a rated table
  (target reached, or a resignation: a loss for who resigned), ``app.table.decide.attach_rating``
  marks that change (``rated_result``) and the pipeline writes the update (``rate_match``) in the
  match's own transaction (``commits.commit``), so it happens exactly once, whatever the number of
  processes, and never for an unfinished match or an aborted one (no winner: a seat's time ran out
  before its first move).
* Each match is one Glicko-2 rating period for each rated person; before it, the deviation
  grows with the days since the player's last rated match (``PERIOD``), as it does when shown.
  A rating is provisional while its deviation is above ``PROVISIONAL_DEVIATION``.
* Bots have fixed ratings on the same scale (``BOT_RATINGS``): a person's match against a bot
  at a rated table rates the person; the bot's rating does not move.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from app.bots import DISPLAY_NAMES
from app.engine import MatchState
from app.errors import InvalidError, NotFoundError
from app.store import Database
from app.store import ratings as store
from app.store.models import Rating
from app.store.tables import storable
from app.table.glicko2 import Game, Glicko, inflate, rate
from app.table.model import Loaded
from app.table.time import utcnow

TAU = 0.5  # Glicko-2's system constant: how fast volatility may move (0.3-1.2 advised)
START = Glicko(1500.0, 350.0, 0.06)
MAX_DEVIATION = 350.0
PROVISIONAL_DEVIATION = 110.0
PERIOD = timedelta(days=1)  # a day without rated matches grows the deviation by one period
RECENT = timedelta(days=30)  # the leaderboard shows players with a rated match this recent

# Bots: win rates of the stronger level over 400 seeded `standard` matches per pair (README,
# "How the levels compare"; the mean of seeds 1 and 2), and the anchor: CARMEN (medium) stands
# at the rating every person starts from. Each step is the Glicko/Elo logistic's difference for
# that win rate, 400 * log10(p / (1 - p)).
BOT_ANCHOR = ("medium", 1500.0)
BOT_ARENA = {("hard", "medium"): (0.6025 + 0.6275) / 2, ("medium", "easy"): (0.6575 + 0.6975) / 2}
BOT_DEVIATION = 50.0  # how sure the arena is of the gaps (±4.7 % win rate is about ±35 points)
BOT_VOLATILITY = 0.06


def _logistic_gap(p: float) -> float:
    return 400.0 * math.log10(p / (1.0 - p))


def _bot_ratings() -> dict[str, float]:
    level, rating = BOT_ANCHOR
    out = {level: rating}
    # Walk the arena's pairs out from the anchor until every level is placed.
    while len(out) < len(DISPLAY_NAMES):
        for (strong, weak), p in BOT_ARENA.items():
            if weak in out and strong not in out:
                out[strong] = out[weak] + _logistic_gap(p)
            elif strong in out and weak not in out:
                out[weak] = out[strong] - _logistic_gap(p)
    return {lvl: round(r) for lvl, r in out.items()}


BOT_RATINGS: dict[str, float] = _bot_ratings()


def bot_glicko(level: str) -> Glicko:
    return Glicko(BOT_RATINGS[level], BOT_DEVIATION, BOT_VOLATILITY)


def category_of(preset: str) -> str:
    return preset


def check_rated(rated: bool, overrides: dict[str, Any], hints: bool = False) -> None:
    """A rated table plays its preset as it is (422 ``rated_overrides`` otherwise), with no
    hints (422 ``hints_on_rated``)."""
    if rated and hints:
        raise InvalidError("hints_on_rated", "a rated table has no hints: play it on your own")
    if rated and overrides:
        raise InvalidError(
            "rated_overrides", "a rated table plays its preset unchanged: drop the rule overrides"
        )


def current(row: Rating | None, now: datetime) -> Glicko:
    """A player's rating now: the stored one with its deviation grown for the idle periods."""
    if row is None:
        return START
    stored = Glicko(row.rating, row.deviation, row.volatility)
    return inflate(stored, (now - row.last_played_at) / PERIOD, MAX_DEVIATION)


def rate_match(conn: Connection, loaded: Loaded, state: MatchState) -> None:
    """Rate the finished match in the transaction that records it."""
    assert state.winner is not None
    now = utcnow()
    table = loaded.table
    category = category_of(table.preset)
    seats = [loaded.seat_info(s) for s in (0, 1)]
    people = {s: info.player_id for s, info in enumerate(seats) if info and info.player_id}
    rows = store.ratings_for_update(conn, list(people.values()), category)
    before: dict[int, Glicko] = {}
    for s, info in enumerate(seats):
        if info is not None and info.player_id is not None:
            before[s] = current(rows.get(info.player_id), now)
        elif info is not None and info.bot_level in BOT_RATINGS:
            before[s] = bot_glicko(info.bot_level)
    if len(before) < 2:
        return  # an opponent we cannot place: nothing to rate against
    for seat, player_id in people.items():
        won = state.winner == seat
        mine = before[seat]
        after = rate(mine, [Game(before[1 - seat], 1.0 if won else 0.0)], TAU)
        row = rows.get(player_id)
        store.save_rating(
            conn,
            {
                "player_id": player_id,
                "category": category,
                "rating": after.rating,
                "deviation": after.deviation,
                "volatility": after.volatility,
                "games": (row.games if row else 0) + 1,
                "wins": (row.wins if row else 0) + won,
                "losses": (row.losses if row else 0) + (not won),
                "last_played_at": now,
            },
            exists=row is not None,
        )
        store.add_change(
            conn,
            {
                "table_id": table.id,
                "match_number": table.match_number,
                "player_id": player_id,
                "category": category,
                "result": "win" if won else "loss",
                "rating_before": mine.rating,
                "deviation_before": mine.deviation,
                "rating_after": after.rating,
                "deviation_after": after.deviation,
                "volatility_after": after.volatility,
                "created_at": now,
            },
        )


def rating_json(glicko: Glicko) -> dict[str, Any]:
    return {
        "rating": round(glicko.rating, 1),
        "deviation": round(glicko.deviation, 1),
        "volatility": round(glicko.volatility, 6),
        "provisional": glicko.deviation > PROVISIONAL_DEVIATION,
    }


def change_json(change: Any) -> dict[str, Any]:
    """A match's rating change as a player's history shows it."""
    return {
        "category": change.category,
        "before": round(change.rating_before, 1),
        "after": round(change.rating_after, 1),
        "change": round(change.rating_after - change.rating_before, 1),
        "deviation": round(change.deviation_after, 1),
        "provisional": change.deviation_after > PROVISIONAL_DEVIATION,
    }


@dataclass(frozen=True, slots=True)
class Page:
    entries: list[dict[str, Any]]
    offset: int
    limit: int
    next: str | None


async def leaderboard(
    db: Database, category: str, offset: int, limit: int, after: str | None = None
) -> Page:
    """Settled players (deviation at most ``PROVISIONAL_DEVIATION``) with a rated match within
    ``RECENT``, best first: ``offset`` entries skipped after the page ``after`` ends (its
    ``next``; 422 ``invalid_cursor`` for anything else), and the next page's cursor while there
    is one."""
    rank, key = _read_cursor(after) if after is not None else (0, None)
    now = utcnow()
    async with db.read() as session:
        rows = await store.leaderboard(
            session,
            category,
            max_deviation=PROVISIONAL_DEVIATION,
            since=now - RECENT,
            offset=offset,
            limit=limit + 1,
            after=key,
        )
    first = rank + offset + 1
    entries = [
        {
            "rank": first + i,
            "player": {"id": row.player_id, "name": name},
            **rating_json(current(row, now)),
            "games": row.games,
            "wins": row.wins,
            "losses": row.losses,
        }
        for i, (row, name) in enumerate(rows[:limit])
    ]
    last = rows[limit - 1][0] if len(rows) > limit else None
    cursor = None if last is None else _cursor(first + limit - 1, last.rating, last.player_id)
    return Page(entries, offset, limit, cursor)


def _cursor(rank: int, rating: float, player_id: str) -> str:
    """A page's ``next``: the last entry's rank and key, as opaque URL-safe text (the rating
    as JSON writes it, which reads back to the same float)."""
    raw = json.dumps([rank, rating, player_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(value: str) -> tuple[int, tuple[float, str]]:
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        rank, rating, player_id = json.loads(raw)
        valid = (
            type(rank) is int
            and 0 < rank < 2**31
            and type(rating) in (int, float)
            and math.isfinite(rating)
            and isinstance(player_id, str)
            and storable(player_id)
        )
    except (ValueError, TypeError):
        valid = False
    if not valid:
        raise InvalidError("invalid_cursor", "after takes the next of a leaderboard page")
    return rank, (float(rating), player_id)


HISTORY = 50


async def profile(db: Database, player_id: str) -> dict[str, Any]:
    """A player's public profile: name, ratings, won/lost and rating history (newest first)."""
    now = utcnow()
    async with db.read() as session:
        storable = len(player_id) <= 64 and "\x00" not in player_id
        player = await store.player(session, player_id) if storable else None
        if player is None:
            raise NotFoundError("player_not_found", f"no player {player_id!r}")
        rows = await store.ratings_of(session, player_id)
        changes = await store.changes_of(session, player_id, HISTORY)
        won, lost = await store.record_of(session, player_id)
    return {
        "id": player.id,
        "name": player.name,
        "won": won,
        "lost": lost,
        "ratings": [
            {
                "category": row.category,
                **rating_json(current(row, now)),
                "games": row.games,
                "wins": row.wins,
                "losses": row.losses,
                "last_played_at": row.last_played_at.isoformat(),
            }
            for row in rows
        ],
        "history": [
            {
                "match_id": f"{c.table_id}-{c.match_number}",
                "result": c.result,
                "at": c.created_at.isoformat(),
                **change_json(c),
            }
            for c in changes
        ],
    }


def bots() -> list[dict[str, Any]]:
    """Each bot level's fixed rating, shown with its name."""
    return [
        {"level": level, "name": DISPLAY_NAMES[level], "rating": BOT_RATINGS[level]}
        for level in DISPLAY_NAMES
    ]


async def changes_of_matches(
    session: AsyncSession, player_id: str, matches: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], Any]:
    """The player's rating change in each of ``matches`` that was rated, by (table id, match
    number)."""
    return {
        (c.table_id, c.match_number): change_json(c)
        for c in await store.changes_in(session, player_id, matches)
    }
