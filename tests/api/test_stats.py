"""A player's statistics: matches and hands by kind of opponent, how their hands ended, their
knocks' deadwood, their accuracy once a hand is reviewed, their rating over time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.api.conftest import client_of
from tests.api.helpers import play_until, rematch, seated_table, step
from tests.bots.test_bots_server import bot_table, play_one_hand_then_resign
from tests.waiting import until


async def _stats(client: httpx.AsyncClient, player_id: str) -> dict[str, Any]:
    r = await client.get(f"/v1/players/{player_id}/stats")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def test_stats_count_what_the_log_says(client: httpx.AsyncClient) -> None:
    table_id, (ada, bo) = await seated_table(client, rules={"target": 10})
    end = await play_until(client, table_id, [ada, bo])
    history = end["game"]["match"]["history"]
    results = [
        (await client.get(f"/v1/tables/{table_id}/hands/{h['hand_number']}")).json()["result"]
        for h in history
    ]
    won_match = end["game"]["match"]["winner"] == 0
    stats = await _stats(client, ada.id)
    assert stats["name"] == "Ada"
    assert stats["matches"]["human"] == {"played": 1, "won": int(won_match)}
    assert stats["matches"]["easy"] == {"played": 0, "won": 0}
    hands = len(results)
    assert stats["hands"]["human"] == {
        "played": hands,
        "won": sum(1 for r in results if r["winner"] == 0),
    }
    knocks = sum(1 for r in results if r["knocker"] == 0)
    gins = sum(1 for r in results if r["knocker"] == 0 and r["outcome"] == "gin")
    assert stats["rates"]["knock"] == round(knocks / hands, 4)
    assert stats["rates"]["gin"] == round(gins / hands, 4)
    deadwood = [
        r["settlement"]["knocker_deadwood"]
        for r in results
        if r["knocker"] == 0 and r["outcome"] not in ("gin", "big_gin")
    ]
    expected = round(sum(deadwood) / len(deadwood), 2) if deadwood else None
    assert stats["mean_knock_deadwood"] == expected
    assert stats["reviewed_hands"] == 0 and stats["accuracy"] is None
    assert stats["rating_history"] == []

    async def reviewed() -> bool:
        r = await client.get(f"/v1/tables/{table_id}/hands/1/review")
        return r.status_code == 200

    await until(reviewed, timeout=60, every=0.5, what="the review")
    review = (await client.get(f"/v1/tables/{table_id}/hands/1/review")).json()
    stats = await _stats(client, ada.id)
    assert stats["reviewed_hands"] == 1
    assert stats["accuracy"] == review["seats"][0]["accuracy"]
    assert stats["points_lost_per_hand"] == review["seats"][0]["points_lost"]


async def test_stats_split_bots_by_level_and_follow_the_rating(
    client: httpx.AsyncClient,
) -> None:
    tid, human = await bot_table(client, "easy")
    view = await play_one_hand_then_resign(client, tid, human)
    stats = await _stats(client, human.id)
    won = view["game"]["match"]["winner"] == 0
    assert stats["matches"]["easy"] == {"played": 1, "won": int(won)}
    assert stats["matches"]["human"] == {"played": 0, "won": 0}
    assert stats["hands"]["easy"]["played"] >= 1

    table_id, (ada, bo) = await seated_table(client, rated=True)
    for _ in range(2):
        await step(client, table_id, [ada, bo])
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=bo.auth)
    assert r.status_code == 200, r.text
    history = (await _stats(client, ada.id))["rating_history"]
    assert len(history) == 1 and history[0]["category"] == "standard"
    assert history[0]["rating"] > 1500


async def test_stats_of_no_one_are_404(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/players/nobody/stats")
    assert r.status_code == 404 and r.json()["code"] == "player_not_found"


@pytest.fixture
async def narrow(module_db: str) -> AsyncIterator[httpx.AsyncClient]:
    """A server whose statistics count a player's newest two matches."""
    async with client_of(module_db, stats_max_matches=2) as http:
        yield http


async def test_stats_read_the_newest_matches_and_rating_changes_only(
    narrow: httpx.AsyncClient,
) -> None:
    table_id, (ada, bo) = await seated_table(narrow, rated=True)
    for match in range(3):
        if match:
            await rematch(narrow, table_id, ada, bo)
        for _ in range(2):
            await step(narrow, table_id, [ada, bo])
        r = await narrow.post(f"/v1/tables/{table_id}/resign", headers=bo.auth)
        assert r.status_code == 200, r.text
    stats = await _stats(narrow, ada.id)
    assert stats["matches"]["human"] == {"played": 2, "won": 2}
    profile = (await narrow.get(f"/v1/players/{ada.id}")).json()
    assert (profile["won"], profile["lost"]) == (3, 0)
    other = (await narrow.get(f"/v1/players/{bo.id}")).json()
    assert (other["won"], other["lost"]) == (0, 3)
    assert [h["match_id"] for h in profile["history"]] == [f"{table_id}-{n}" for n in (3, 2, 1)]
    newest = [h["after"] for h in reversed(profile["history"][:2])]
    assert [h["rating"] for h in stats["rating_history"]] == newest
