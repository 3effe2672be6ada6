"""A seek's rows: as the API shows one (``render``), and the acceptor's row of a pairing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.table.commands import DECK_DESIGNS, Actor


def accepted_row(  # noqa: PLR0917 - the row's parts, each required
    seek_id: str,
    actor: Actor,
    rating: float,
    found: dict[str, Any],
    table_id: str,
    now: datetime,
) -> dict[str, Any]:
    """The acceptor's own row, paired from the start: every player of a lobby table has one
    (their ``GET /v1/seeks/{id}`` names the table, and the caps count it)."""
    game = found["game"]
    return {
        "id": seek_id,
        "player_id": actor.player_id,
        "mode": found["mode"],
        "target_id": None,
        "preset": game["preset"],
        "rules": game["rules"],
        "clock": game["clock"],
        "rated": game["rated"],
        "deck_design": DECK_DESIGNS[0],  # the acceptor's seat: the first design, as an invite's
        "speed": game["speed"],
        "pool": game["pool"],
        "rating": rating,
        "rating_min": None,
        "rating_max": None,
        "bot_after": None,
        "bot_offered_at": None,
        "status": "paired",
        "reason": None,
        "table_id": table_id,
        "opponent_id": found["player"]["id"],
        "created_at": now,
        "expires_at": now,
        "alive_until": None,
        "closed_at": now,
    }


def render(row: Any, public_url: str) -> dict[str, Any]:
    """A seek or challenge as the API shows it (public: the lobby lists it)."""
    link = None
    if row.mode == "challenge":
        link = f"{public_url}/?challenge={row.id}"
    return {
        "seek_id": row.id,
        "mode": row.mode,
        "status": row.status,
        "reason": row.reason,
        "player": {"id": row.player_id, "name": row.name, "rating": row.rating, "bot": row.bot},
        "target": None if row.target_id is None else {"id": row.target_id, "name": row.target_name},
        "game": {
            "preset": row.preset,
            "rules": row.rules,
            "clock": row.clock,
            "rated": row.rated,
            "deck_design": row.deck_design,
            "speed": row.speed,
            "pool": row.pool,
        },
        "rating_range": {"min": row.rating_min, "max": row.rating_max},
        "bot_after": row.bot_after,
        "bot_offer": None if row.bot_offered_at is None else {"offered_at": row.bot_offered_at},
        "table_id": row.table_id,
        "opponent_id": row.opponent_id,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "url": link,
    }
