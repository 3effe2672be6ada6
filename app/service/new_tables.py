"""A new table, built and validated but not yet written: what ``TableService.create_table``
writes, and what the lobby checks a seek's game with and writes at a pairing."""

from __future__ import annotations

import secrets
from typing import Any

from app.engine import Event, make_ruleset
from app.service import ratings
from app.table import clock as clocks
from app.table.commands import DECK_DESIGNS, Actor
from app.table.ids import table_id
from app.table.model import SeatInfo, TableRow
from app.table.time import utcnow


def new_table(
    actor: Actor,
    preset: str,
    overrides: dict[str, Any],
    deck_design: str = DECK_DESIGNS[0],
    *,
    minimums: clocks.Minimums,
    rated: bool = False,
    clock: dict[str, Any] | None = None,
    hints: bool = False,
) -> tuple[TableRow, list[SeatInfo], Event, dict[str, Any] | None]:
    """A new table's row, seat 0 (the actor), first event and clock, not yet written: the
    ruleset validated by the engine, the time control by ``clocks.parse_control``."""
    rules = make_ruleset(preset, overrides)
    ratings.check_rated(rated, overrides, hints)
    clock_state = clocks.parse_control(clock, minimums)
    table = TableRow(
        id=table_id(),
        created_by=actor.player_id,
        preset=preset,
        rules=rules.to_dict(),
        invite_code=secrets.token_urlsafe(9),
        status="waiting",
        match_number=0,
        version=1,
        last_seq=1,
        created_at=utcnow(),
        rated=rated,
        hints=hints,
    )
    created = Event(
        "table_created",
        {
            "preset": preset,
            "rules": rules.to_dict(),
            "seat": 0,
            "player": {"id": actor.player_id, "name": actor.name},
            "deck_design": deck_design,
        },
    )
    seats = [SeatInfo(0, actor.player_id, actor.name, None, deck_design)]
    return table, seats, created, clock_state
