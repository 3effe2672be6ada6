"""``python -m app.bots.engine``: the built-in levels over the bot kit's line protocol."""

from __future__ import annotations

import json
import subprocess
import sys

from app.bots.levels import get_bot
from app.engine import make_ruleset, new_match
from app.engine.views import seat_view


def test_the_engine_answers_hello_each_turn_and_quits() -> None:
    state, events = new_match(make_ruleset("standard", {}), "engine")
    seat = state.hand.turn
    game = seat_view(state, seat)
    seen = [e.for_recipient(seat) for e in events]
    view = {"game": game, "you": seat, "events": seen}
    lines = [
        {"type": "hello", "protocol": 1},
        {"type": "turn", "id": "1", "table_id": "t", "view": view},
        {"type": "turn", "id": "2", "table_id": "t", "view": view},
        {"type": "quit"},
        {"type": "turn", "id": "3", "table_id": "t", "view": view},  # after quit: unread
    ]
    done = subprocess.run(
        [sys.executable, "-m", "app.bots.engine", "--level", "easy"],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    ready, first, *rest = [json.loads(line) for line in done.stdout.splitlines()]
    assert ready == {"type": "ready", "name": "TITO", "protocol": 1}
    assert first == {"type": "action", "id": "1", **get_bot("easy").choose(game, seen)}
    assert first["kind"] in game["legal"]["actions"]
    assert len(rest) == 1 and rest[0]["id"] == "2"
