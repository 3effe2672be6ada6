"""The bot ladder's look, within the tournament scheduler's (``workers.tournaments``): who of
the ladder is free, at what rating, and whom it met last; the pairs are ``app.table.ladder``'s.

Free: a bot account available now (``available_until`` ahead) or an anchor (a built-in level),
not in a ladder match being played. Ratings: the accounts' Glicko-2 ratings now in the ladder's
category, the anchors' fixed ones (``ratings.BOT_RATINGS``).
"""

from __future__ import annotations

from app.service import ratings
from app.store import Database
from app.store import ladder as store
from app.store.models import Tournament, TournamentEntrant, TournamentPairing
from app.table import ladder
from app.table.time import utcnow


async def pairs(
    db: Database,
    row: Tournament,
    entrants: list[TournamentEntrant],
    pairings: list[TournamentPairing],
) -> list[tuple[str, str]]:
    now = utcnow()
    playing = [p for p in pairings if p.status == "playing"]
    busy = {p.seat0 for p in playing} | {p.seat1 for p in playing}
    last: dict[str, str] = {}
    for p in pairings:  # in order: the latest opponent stays
        if p.seat1 is not None:
            last[p.seat0], last[p.seat1] = p.seat1, p.seat0
    accounts = [
        e
        for e in entrants
        if e.player_id is not None
        and e.available_until is not None
        and e.available_until > now
        and e.entrant_id not in busy
    ]
    if not accounts:
        return []
    async with db.read() as session:
        stored = await store.ratings(
            session, [e.entrant_id for e in accounts], ratings.category_of(row.preset)
        )
    free = [
        ladder.Free(
            e.entrant_id,
            ratings.current(stored.get(e.entrant_id), now).rating,
            last.get(e.entrant_id),
        )
        for e in accounts
    ]
    free += [
        ladder.Free(e.entrant_id, ratings.BOT_RATINGS[e.bot_level], last.get(e.entrant_id), True)
        for e in entrants
        if e.bot_level in ratings.BOT_RATINGS and e.entrant_id not in busy
    ]
    return ladder.pair_free(free)


async def aborted(db: Database, pairings: list[TournamentPairing]) -> list[TournamentPairing]:
    """Ladder pairings being played whose match was aborted (no result will come)."""
    playing = {p.table_id: p for p in pairings if p.status == "playing" and p.table_id}
    async with db.read() as session:
        ended = await store.ended_unrecorded(session, list(playing))
    return [playing[t] for t in ended]
