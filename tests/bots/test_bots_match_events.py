"""The server hands a bot the events of the whole match so far, redacted for its seat: what
LUNA's opponent model reads the player from (``app.bots.opponent``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.service.workers.bots import BotRunner
from tests.api.conftest import Server
from tests.api.helpers import get_table, new_player, new_table
from tests.bots.test_bots_server import log, play_person


async def test_a_bot_is_handed_the_events_of_every_hand_of_the_match(
    server: Server, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = server.uvicorn.config.app
    assert isinstance(app, FastAPI)
    runner: BotRunner = app.state.bots
    handed: list[list[dict[str, Any]]] = []
    decide = runner.pool.choose

    async def recorded(
        level: str, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        handed.append([dict(e) for e in events])
        return await decide(level, view, events)

    monkeypatch.setattr(runner.pool, "choose", recorded)
    human = await new_player(client, "Ada")
    table = await new_table(client, human, preset="standard", rules={"target": 500})
    tid = table["table_id"]
    r = await client.post(f"/v1/tables/{tid}/bot", json={"level": "hard"}, headers=human.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{tid}/start", headers=human.auth)
    assert r.status_code == 200, r.text
    await play_person([client], tid, human, hands=2)
    assert (await get_table(client, tid, human))["game"]["hand"]["number"] == 2
    # The bot's last decision, in hand 2: every event of the match up to it, in order.
    last = handed[-1]
    seqs = [e["seq"] for e in last]
    assert seqs == list(range(seqs[0], seqs[-1] + 1))
    r = await client.get(f"/v1/tables/{tid}/events?since=0", headers=human.auth)
    logged = {e["seq"]: e for e in r.json()}  # as the person's seat 0 received them
    assert len(logged) == len(await log(client, tid))
    started = [e for e in last if e["type"] == "hand_started"]
    assert [e["hand_number"] for e in started] == [1, 2]
    assert seqs[0] <= started[0]["seq"] and "match_started" in {e["type"] for e in last}
    over = [e for e in last if e["type"] == "hand_over"]
    assert len(over) == 1 and len(over[0]["hands"]) == 2
    # Redacted for the bot's seat: its own dealt cards and stock draws, none of the person's.
    for e in last:
        assert e["type"] == logged[e["seq"]]["type"]
        if e["type"] == "hand_started":
            assert "hand" in e and "hand" in logged[e["seq"]]
            assert e["hand"] != logged[e["seq"]]["hand"]
        if e["type"] == "drew_stock":
            assert ("card" in e) == (e["seat"] == 1)
    # Earlier hands' events reach every later decision.
    later = [events for events in handed if any(e["type"] == "hand_over" for e in events)]
    assert later and all(events[: len(handed[0])] == handed[0] for events in later)
