"""A player's statistics: matches and hands won by kind of opponent, how their hands ended,
their knocks' deadwood, their accuracy where hands were reviewed, their rating over time.

Counted over their finished matches (the newest ``limit``), from the log's ``hand_over`` and
``knocked`` events and the ``reviews`` table, and their newest ``limit`` rating changes: nothing
is kept apart that could drift, and what a request reads is bounded whatever the history.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.errors import NotFoundError
from app.service.ratings import PROVISIONAL_DEVIATION
from app.store import Database
from app.store import ratings as rating_store
from app.store.log import finished_matches
from app.store.reviews import reviews_of_tables
from app.store.stats import hand_results

OPPONENTS = ("human", "easy", "medium", "hard")


def _rate(count: int, total: int) -> float | None:
    return None if not total else round(count / total, 4)


async def player_stats(db: Database, player_id: str, limit: int) -> dict[str, Any]:
    """The statistics of ``player_id`` (404 ``player_not_found``) over their newest ``limit``
    finished matches."""
    async with db.read() as session:
        storable = len(player_id) <= 64 and "\x00" not in player_id
        player = await rating_store.player(session, player_id) if storable else None
        if player is None:
            raise NotFoundError("player_not_found", f"no player {player_id!r}")
        matches = await finished_matches(session, player_id, limit=limit)
        seat_of: dict[tuple[str, int], int] = {}
        against: dict[tuple[str, int], str] = {}
        for m, _ in matches:
            key = (m.table_id, m.match_number)
            seat = 0 if m.seat0_player_id == player_id else 1
            seat_of[key] = seat
            bot = m.seat1_bot_level if seat == 0 else m.seat0_bot_level
            against[key] = "human" if bot is None else bot
        events = await hand_results(session, list(seat_of))
        reviewed = await reviews_of_tables(session, list(seat_of))
        changes = await rating_store.changes_of(session, player_id, limit)
    played: Counter[str] = Counter()
    won: Counter[str] = Counter()
    for m, _ in matches:
        key = (m.table_id, m.match_number)
        played[against[key]] += 1
        won[against[key]] += m.winner == seat_of[key]
    hands: Counter[str] = Counter()
    hands_won: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    knock_deadwood: list[int] = []
    for table_id, number, kind, public in events:
        key = (table_id, number)
        seat = seat_of[key]
        if kind == "knocked":
            if public.get("seat") == seat and not public.get("gin"):
                knock_deadwood.append(int(public.get("deadwood", 0)))
            continue
        hands[against[key]] += 1
        hands_won[against[key]] += public.get("winner") == seat
        outcome = public.get("outcome")
        if public.get("knocker") == seat:
            ends["knock"] += 1
            ends[str(outcome)] += outcome in ("gin", "big_gin")
        elif outcome == "undercut" and public.get("winner") == seat:
            ends["undercut"] += 1
    total = sum(hands.values())
    good = decided = 0.0
    lost = 0.0
    for r in reviewed:
        mine = r.data["seats"][seat_of[(r.table_id, r.match_number)]]
        decided += mine["decisions"]
        good += (mine["accuracy"] or 0.0) * mine["decisions"] / 100
        lost += mine["points_lost"]
    return {
        "id": player.id,
        "name": player.name,
        "matches": {o: {"played": played[o], "won": won[o]} for o in OPPONENTS},
        "hands": {o: {"played": hands[o], "won": hands_won[o]} for o in OPPONENTS},
        "rates": {
            "knock": _rate(ends["knock"], total),
            "gin": _rate(ends["gin"], total),
            "big_gin": _rate(ends["big_gin"], total),
            "undercut": _rate(ends["undercut"], total),
        },
        "mean_knock_deadwood": (
            round(sum(knock_deadwood) / len(knock_deadwood), 2) if knock_deadwood else None
        ),
        "reviewed_hands": len(reviewed),
        "accuracy": round(100 * good / decided, 1) if decided else None,
        "points_lost_per_hand": round(lost / len(reviewed), 2) if reviewed else None,
        "rating_history": [
            {
                "at": c.created_at.isoformat(),
                "category": c.category,
                "rating": round(c.rating_after, 1),
                "deviation": round(c.deviation_after, 1),
                "provisional": c.deviation_after > PROVISIONAL_DEVIATION,
            }
            for c in reversed(changes)
        ],
    }
