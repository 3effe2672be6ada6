"""A rematch is asked for and answered: the other seat accepts or declines; a bot accepts."""

from __future__ import annotations

import httpx

from tests.api.conftest import Server
from tests.api.helpers import Player, get_table, new_player, new_table, seated_table
from tests.api.test_live import listen


async def _over(client: httpx.AsyncClient) -> tuple[str, list[Player]]:
    """Two players whose first match is over (seat 0 resigned)."""
    table_id, (p0, p1) = await seated_table(client)
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=p0.auth)
    assert r.status_code == 200, r.text
    return table_id, [p0, p1]


async def test_a_rematch_asked_for_starts_only_once_the_other_accepts(
    client: httpx.AsyncClient, server: Server
) -> None:
    table_id, (p0, p1) = await _over(client)
    path = f"/v1/tables/{table_id}/ws"
    async with listen(server, path, p1) as other, listen(server, path) as spectator:
        await other.first("view")
        await spectator.first("view")
        r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p0.auth)
        assert r.status_code == 200, r.text
        asked = r.json()
        assert [e["type"] for e in asked["events"]] == ["rematch_offered"]
        assert asked["table"]["rematch_offer"] == 0 and asked["table"]["match_number"] == 1
        # The other seat and the spectators are told on the table's socket.
        for rec in (other, spectator):
            await rec.reach(asked["seq"])
            [told] = [m for m in rec.of_type("event") if m["seq"] == asked["seq"]]
            assert told["event"] == {"type": "rematch_offered", "seat": 0}
    assert (await get_table(client, table_id, p1))["rematch_offer"] == 0
    assert (await get_table(client, table_id, None))["status"] == "finished"

    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p0.auth)
    assert r.status_code == 409 and r.json()["code"] == "rematch_already_offered"
    r = await client.post(f"/v1/tables/{table_id}/rematch/accept", headers=p0.auth)
    assert r.status_code == 409 and r.json()["code"] == "no_rematch_offer"
    stranger = await new_player(client, "Cy")
    r = await client.post(f"/v1/tables/{table_id}/rematch/accept", headers=stranger.auth)
    assert r.status_code == 403 and r.json()["code"] == "not_seated"

    r = await client.post(f"/v1/tables/{table_id}/rematch/accept", headers=p1.auth)
    assert r.status_code == 200, r.text
    view = r.json()["table"]
    assert view["match_number"] == 2 and view["status"] == "playing"
    assert view["rematch_offer"] is None
    r = await client.post(f"/v1/tables/{table_id}/rematch/decline", headers=p1.auth)
    assert r.status_code == 409 and r.json()["code"] == "match_not_finished"


async def test_a_declined_rematch_leaves_the_table_as_the_match_left_it(
    client: httpx.AsyncClient,
) -> None:
    table_id, (p0, p1) = await _over(client)
    r = await client.post(f"/v1/tables/{table_id}/rematch/decline", headers=p1.auth)
    assert r.status_code == 409 and r.json()["code"] == "no_rematch_offer"
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p1.auth)
    assert r.status_code == 200, r.text
    before = r.json()["table"]
    r = await client.post(f"/v1/tables/{table_id}/rematch/decline", headers=p0.auth)
    assert r.status_code == 200, r.text
    assert [e["type"] for e in r.json()["events"]] == ["rematch_declined"]
    after = r.json()["table"]
    assert after["rematch_offer"] is None and after["match_number"] == 1
    assert after["game"]["match"] == {**before["game"]["match"]}
    r = await client.post(f"/v1/tables/{table_id}/rematch/accept", headers=p0.auth)
    assert r.status_code == 409 and r.json()["code"] == "no_rematch_offer"
    # Asked again, and asked back: both want it, so the new match starts.
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p0.auth)
    assert r.status_code == 200 and r.json()["table"]["rematch_offer"] == 0
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p1.auth)
    assert r.status_code == 200, r.text
    assert r.json()["table"]["match_number"] == 2


async def test_a_bot_accepts_a_rematch_at_once(client: httpx.AsyncClient) -> None:
    ada = await new_player(client, "Ada")
    table_id = (await new_table(client, ada))["table_id"]
    r = await client.post(f"/v1/tables/{table_id}/bot", json={"level": "easy"}, headers=ada.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=ada.auth)
    assert r.status_code == 409 and r.json()["code"] == "match_not_finished"
    r = await client.post(f"/v1/tables/{table_id}/start", headers=ada.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=ada.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=ada.auth)
    assert r.status_code == 200, r.text
    view = r.json()["table"]
    assert view["match_number"] == 2 and view["rematch_offer"] is None
    # With the bot gone, there is no one to play.
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=ada.auth)
    assert r.status_code == 200, r.text
    r = await client.request("DELETE", f"/v1/tables/{table_id}/bot", headers=ada.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=ada.auth)
    assert r.status_code == 409 and r.json()["code"] == "waiting_for_opponent"
