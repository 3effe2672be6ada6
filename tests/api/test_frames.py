"""Frames rendered once per audience (``app/api/live/frames.py``), on a real SQLite file."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.api.live.client_out import event_message, text
from app.api.live.frames import Frames
from app.bus.hub import Hub
from app.engine import Event
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, run_migrations
from app.table.commands import Start
from app.table.model import StoredEvent


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[TableService]:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'frames.db'}")
    await run_migrations(db)
    yield TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
    await db.close()


HANDS = {0: {"hand": ["AS", "2S", "3S"]}, 1: {"hand": ["KD", "QD", "JD"]}}


def test_a_spectators_shared_frame_holds_nothing_a_spectator_may_not_see() -> None:
    frames = Frames()
    dealt = StoredEvent("t", 5, 1, 1, Event("hand_started", {"upcard": "9C"}, HANDS))
    shared = frames.event(dealt, None)
    assert frames.event(dealt, None) is shared  # one text for every spectator
    assert json.loads(shared) == {
        "type": "event",
        "seq": 5,
        "event": {"type": "hand_started", "upcard": "9C"},
    }
    for private in HANDS.values():
        assert not [card for card in private["hand"] if card in shared]
    chat = StoredEvent("t", 6, 1, 1, Event("chat", {}, {0: {"text": "hi"}, 1: {"text": "hi"}}))
    assert json.loads(frames.event(chat, None)) == {"type": "skip", "seq": 6}


def test_players_frames_differ_per_seat_and_match_their_own_redaction() -> None:
    frames = Frames()
    dealt = StoredEvent("t", 5, 1, 1, Event("hand_started", {"upcard": "9C"}, HANDS))
    seat0, seat1 = frames.event(dealt, 0), frames.event(dealt, 1)
    assert seat0 != seat1
    assert seat0 == text(event_message(dealt, 0)) and seat1 == text(event_message(dealt, 1))
    assert "AS" in seat0 and "AS" not in seat1 and "KD" in seat1 and "KD" not in seat0
    # Another table's event of the same seq is another frame.
    other = StoredEvent("u", 5, 1, 1, Event("hand_started", {"upcard": "2H"}, HANDS))
    assert "2H" in frames.event(other, None) and "2H" not in frames.event(dealt, None)


async def test_a_view_is_rendered_once_per_audience_and_state(service: TableService) -> None:
    ada, _ = await service.create_player("Ada")
    bo, _ = await service.create_player("Bo")
    cy, _ = await service.create_player("Cy")
    created = (await service.create_table(ada, "standard", {})).body
    await service.join(created["invite_code"], bo)
    await service.submit(created["table_id"], ada, Start())
    loaded = await service.load(created["table_id"])
    frames = Frames()
    spectator = frames.view(service, loaded, None)
    assert frames.view(service, loaded, cy) is spectator  # anyone not seated: the same text
    assert json.loads(spectator)["table"] == service.render(loaded, None)
    mine, theirs = frames.view(service, loaded, ada), frames.view(service, loaded, bo)
    assert len({spectator, mine, theirs}) == 3
    assert json.loads(mine)["table"] == service.render(loaded, ada)
    assert json.loads(theirs)["table"] == service.render(loaded, bo)
    assert frames.view(service, loaded, ada) is mine
    hidden = set(json.loads(mine)["table"]["game"]["hand"]["yours"]["cards"])
    hidden |= set(json.loads(theirs)["table"]["game"]["hand"]["yours"]["cards"])
    upcard = json.loads(spectator)["table"]["game"]["hand"]["discard_pile"]
    assert not [card for card in hidden - set(upcard) if f'"{card}"' in spectator]
