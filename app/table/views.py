"""The table's JSON as each recipient may see it: a seat's view, or a spectator's."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.bots import DISPLAY_NAMES
from app.engine import view
from app.table.clock import clock_view
from app.table.model import Loaded, StoredEvent


def table_view(loaded: Loaded, seat: int | None, now: datetime, public_url: str) -> dict[str, Any]:
    """The table as ``seat`` (None: a spectator) may see it at ``now``; an empty seat 1 shows its
    creator the invite (``public_url``: the server's address, no trailing slash)."""
    table = loaded.table
    out: dict[str, Any] = {
        "table_id": table.id,
        "version": table.version,
        "seq": table.last_seq,
        "status": table.status,
        "preset": table.preset,
        "rated": table.rated,
        "hints": table.hints,
        "rules": table.rules,
        "match_number": table.match_number,
        "you": seat,
        "role": "spectator" if seat is None else "seat",
        "seats": [seat_json(loaded, s) for s in (0, 1)],
        "game": None if loaded.state is None else view(loaded.state, seat),
        "clock": clock_view(loaded.clock, now),
        "rematch_offer": table.rematch_offer,
    }
    if seat == 0 and loaded.seat_info(1) is None:
        out["invite_code"] = table.invite_code
        out["invite_url"] = f"{public_url}/v1/invites/{table.invite_code}"
    return out


def seat_json(loaded: Loaded, seat: int) -> dict[str, Any]:
    info = loaded.seat_info(seat)
    if info is None:
        return {
            "seat": seat,
            "player": None,
            "bot_level": None,
            "bot_name": None,
            "deck_design": None,
        }
    player = None if info.player_id is None else {"id": info.player_id, "name": info.player_name}
    return {
        "seat": seat,
        "player": player,
        "bot_level": info.bot_level,
        "bot_name": None if info.bot_level is None else DISPLAY_NAMES.get(info.bot_level),
        "deck_design": info.deck_design,
    }


def event_for(stored: StoredEvent, seat: int | None) -> dict[str, Any]:
    """A logged event as ``seat`` (None: a spectator) may receive it, with its seq; one with
    nothing for that recipient (the seats' chat, for a spectator) is a ``skip``."""
    if not stored.event.visible_to(seat):
        return {"seq": stored.seq, "type": "skip"}
    return {"seq": stored.seq, **stored.event.for_recipient(seat)}
