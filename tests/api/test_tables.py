"""Invite, join, spectators, deck designs, rematch, chat and the health probes."""

from __future__ import annotations

import httpx

from tests.api.conftest import Server
from tests.api.helpers import get_table, new_player, new_table, rematch, seated_table, step


async def test_invite_join_start_and_spectators(client: httpx.AsyncClient) -> None:
    ada, bo, cy = [await new_player(client, name) for name in ("Ada", "Bo", "Cy")]
    table = await new_table(
        client, ada, preset="classic", rules={"target": 50}, deck_design="royal"
    )
    assert table["you"] == 0 and table["status"] == "waiting"
    assert table["rules"]["target"] == 50 and table["rules"]["undercut_bonus"] == 10
    assert table["invite_url"].endswith(f"/v1/invites/{table['invite_code']}")
    table_id = table["table_id"]

    r = await client.post(
        f"/v1/invites/{table['invite_code']}", headers=bo.auth, json={"deck_design": "neon"}
    )
    assert r.status_code == 200, r.text
    joined = r.json()["table"]
    assert joined["you"] == 1 and joined["status"] == "ready"
    assert "invite_code" not in joined or joined["invite_code"] is None

    # A third player with the invite finds the table full and watches instead.
    r = await client.post(f"/v1/invites/{table['invite_code']}", headers=cy.auth)
    assert r.status_code == 409 and r.json()["code"] == "table_full"
    for who in (cy, None):
        view = await get_table(client, table_id, who)
        assert view["role"] == "spectator" and view["you"] is None
        assert view.get("invite_code") is None
        assert [s["player"]["name"] for s in view["seats"]] == ["Ada", "Bo"]
        assert [s["deck_design"] for s in view["seats"]] == ["royal", "neon"]

    r = await client.post(f"/v1/tables/{table_id}/start", headers=ada.auth)
    assert r.status_code == 200, r.text
    types = [e["type"] for e in r.json()["events"]]
    assert types == ["match_started", "hand_started"]
    watcher = await get_table(client, table_id, None)
    assert watcher["game"]["you"] is None and "yours" not in watcher["game"]["hand"]
    assert "legal" not in watcher["game"]
    seat1 = await get_table(client, table_id, bo)
    assert len(seat1["game"]["hand"]["yours"]["cards"]) == 10

    r = await client.put(f"/v1/tables/{table_id}/deck", headers=bo.auth, json={"design": "forest"})
    assert r.status_code == 200
    view = await get_table(client, table_id, cy)
    assert [s["deck_design"] for s in view["seats"]] == ["royal", "forest"]


async def test_an_invite_says_what_it_offers_and_a_join_names_its_table(
    client: httpx.AsyncClient,
) -> None:
    ada, bo = await new_player(client, "Ada"), await new_player(client, "Bo")
    clock = {"control": "bank", "seconds": 600, "bonus": 10, "policy": "autoplay"}
    table = await new_table(client, ada, clock=clock)
    other = await new_table(client, ada)
    code = table["invite_code"]
    r = await client.get(f"/v1/invites/{code}")  # no token needed: the code is the key
    assert r.status_code == 200, r.text
    offer = r.json()
    assert offer["table_id"] == table["table_id"] and offer["inviter"]["name"] == "Ada"
    assert (offer["seat_open"], offer["status"], offer["rated"]) == (True, "waiting", False)
    assert offer["clock"]["control"] == "bank" and offer["clock"]["autoplay_level"] == "medium"
    r = await client.get("/v1/invites/nope")
    assert r.status_code == 404 and r.json()["code"] == "invite_not_found"
    body = {"table_id": other["table_id"]}
    r = await client.post(f"/v1/invites/{code}", json=body, headers=bo.auth)
    assert r.status_code == 409 and r.json()["code"] == "invite_mismatch"
    assert (await get_table(client, table["table_id"], None))["seats"][1]["player"] is None
    body = {"table_id": table["table_id"], "deck_design": "neon"}
    r = await client.post(f"/v1/invites/{code}", json=body, headers=bo.auth)
    assert r.status_code == 200, r.text
    assert (await client.get(f"/v1/invites/{code}")).json()["seat_open"] is False


async def test_rematch_starts_a_new_match_at_the_same_seats(client: httpx.AsyncClient) -> None:
    table_id, (p0, p1) = await seated_table(client)
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=p1.auth)
    assert r.status_code == 409 and r.json()["code"] == "match_not_finished"
    await client.post(f"/v1/tables/{table_id}/resign", headers=p0.auth)
    view = await rematch(client, table_id, p1, p0)
    assert view["match_number"] == 2 and view["status"] == "playing"
    assert view["game"]["match"]["scores"] == [0, 0]
    assert [s["player"]["id"] for s in view["seats"]] == [p0.id, p1.id]
    await step(client, table_id, [p0, p1])
    # The first match's history stays in the log.
    r = await client.get(f"/v1/tables/{table_id}/hands/1", params={"match": 1})
    assert r.status_code == 200 and r.json()["ended_by"] == "resignation"
    r = await client.get(f"/v1/tables/{table_id}/hands/1")
    assert r.status_code == 409 and r.json()["code"] == "hand_not_finished"


async def test_chat_is_a_logged_event_and_rate_limited(client: httpx.AsyncClient) -> None:
    table_id, (p0, p1) = await seated_table(client)
    before = await get_table(client, table_id, p0)
    r = await client.post(
        f"/v1/tables/{table_id}/chat", headers=p0.auth, json={"text": "  good luck!  "}
    )
    assert r.status_code == 200, r.text
    [line] = r.json()["events"]
    assert line["type"] == "chat" and line["text"] == "good luck!" and line["seat"] == 0
    after = await get_table(client, table_id, p0)
    assert after["version"] == before["version"] and after["seq"] == before["seq"] + 1

    log = (
        await client.get(
            f"/v1/tables/{table_id}/events", params={"since": before["seq"]}, headers=p1.auth
        )
    ).json()
    assert [(e["seq"], e["type"], e["text"]) for e in log] == [
        (before["seq"] + 1, "chat", "good luck!")
    ]

    for text in ("", "   ", "x" * 501):
        r = await client.post(f"/v1/tables/{table_id}/chat", headers=p1.auth, json={"text": text})
        assert r.status_code == 422 and r.json()["code"] == "invalid_request"
    assert (
        await client.post(f"/v1/tables/{table_id}/chat", headers=p1.auth, json={"text": "y" * 500})
    ).status_code == 200

    codes = []
    for i in range(6):
        r = await client.post(
            f"/v1/tables/{table_id}/chat", headers=p0.auth, json={"text": f"line {i}"}
        )
        codes.append(r.status_code)
    assert codes == [200, 200, 200, 200, 429, 429]
    assert r.json()["code"] == "rate_limited"
    assert 1 <= int(r.headers["Retry-After"]) <= 10
    # Another player's budget is their own.
    r = await client.post(f"/v1/tables/{table_id}/chat", headers=p1.auth, json={"text": "hi"})
    assert r.status_code == 200


async def test_health_and_readiness(client: httpx.AsyncClient, server: Server) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = {"status": "ok", "checks": {"database": "ok"}}
    assert (await client.get("/readyz")).json() == ready
    spec = (await client.get("/openapi.json")).json()
    discard = spec["paths"]["/v1/tables/{table_id}/moves/discard"]["post"]
    assert {"401", "403", "404", "409", "422"} <= set(discard["responses"])


async def test_an_invite_tells_the_rules_and_clock_the_invitee_is_shown(
    client: httpx.AsyncClient,
) -> None:
    """The invite page names the inviter and explains the variant from this read alone (no
    token): the preset's full ruleset, bonuses included, and the clock; nothing of a hand."""
    bia, bo = await new_player(client, "Bia"), await new_player(client, "Bo")
    clock = {"control": "per_move", "seconds": 86400, "policy": "claim"}
    table = await new_table(client, bia, preset="reino", rules={"knock_limit": 8}, clock=clock)
    r = await client.get(f"/v1/invites/{table['invite_code']}")
    assert r.status_code == 200, r.text
    offer = r.json()
    assert offer["inviter"] == {"id": bia.id, "name": "Bia"} and offer["preset"] == "reino"
    rules = offer["rules"]
    assert (rules["game_bonus"], rules["line_bonus"], rules["knock_limit"]) == (100, 25, 8)
    assert (rules["oklahoma"], rules["layoff"], rules["target"]) == (False, "joint", 100)
    assert offer["clock"]["control"] == "per_move" and offer["clock"]["seconds"] == 86400
    # Once the match is on, a late visitor reads the same, the seat taken, and no card.
    r = await client.post(f"/v1/invites/{table['invite_code']}", headers=bo.auth)
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/tables/{table['table_id']}/start", headers=bia.auth)
    assert r.status_code == 200, r.text
    late = (await client.get(f"/v1/invites/{table['invite_code']}")).json()
    assert (late["seat_open"], late["status"], late["rules"]) == (False, "playing", rules)
    assert "game" not in late and "yours" not in str(late)
