"""Attacks through an invite link (issue finding 7), on a real ``python -m app``.

The attack that was found: a rated table at ``per_move`` 2 s (0.001 s was accepted) with the
``forfeit`` policy, and a link the web client followed by joining at once; the victim lost 162
rating points within 5 s of opening it. Now a time control has documented minimums, the
invite says what it offers before anyone joins (and a join names the table the link named),
and a seat whose time runs out before its first move of the match has the match aborted: no
winner, no rating change, no match in anyone's record.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from tests.api.helpers import Player, new_player
from tests.attacks.harness import target

JSON = dict[str, Any]


async def _table(client: httpx.AsyncClient, who: Player, **body: Any) -> httpx.Response:
    return await client.post("/v1/tables", json=body, headers=who.auth)


def test_absurd_clocks_are_refused_at_a_default_server(tmp_path: Path) -> None:
    with target(tmp_path) as server:

        async def run() -> None:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                mallory = await new_player(client, "Mallory")
                for clock, code in [
                    (
                        {"control": "per_move", "seconds": 2, "policy": "forfeit"},
                        "invalid_time_control",
                    ),
                    ({"control": "per_move", "seconds": 0.001}, "invalid_time_control"),
                    (
                        {"control": "bank", "seconds": 5, "policy": "forfeit"},
                        "invalid_time_control",
                    ),
                    ({"control": "bank", "seconds": 600, "bonus": 900}, "invalid_time_control"),
                    ({"control": "none", "seconds": 5}, "invalid_request"),
                ]:
                    r = await _table(client, mallory, rated=True, clock=clock)
                    assert r.status_code == 422, (clock, r.text)
                    assert r.json()["code"] == code, (clock, r.text)
                # The shortest the OpenAPI states is what the server takes.
                spec = (await client.get("/openapi.json")).json()["components"]["schemas"]
                shortest = spec["PerMoveClockIn"]["properties"]["seconds"]["minimum"]
                assert shortest == 15
                clock = {"control": "per_move", "seconds": shortest, "policy": "forfeit"}
                r = await _table(client, mallory, rated=True, clock=clock)
                assert r.status_code == 201, r.text

        asyncio.run(run())


def test_a_victim_who_opens_a_rated_forfeit_link_and_does_nothing_keeps_their_rating(
    tmp_path: Path,
) -> None:
    """The attack with the shortest clock this server allows (1 s here, to keep the test
    short): the invite shows its terms before joining, a join that names another table is
    refused, and a victim seated who never moves loses nothing."""
    with target(tmp_path, CLOCK_MIN_PER_MOVE="1") as server:

        async def run() -> None:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                mallory, victim = (
                    await new_player(client, "Mallory"),
                    await new_player(client, "Vi"),
                )
                clock = {"control": "per_move", "seconds": 1, "policy": "forfeit"}
                r = await _table(client, mallory, rated=True, clock=clock)
                assert r.status_code == 201, r.text
                table_id, code = r.json()["table_id"], r.json()["invite_code"]
                decoy = (await _table(client, mallory)).json()["table_id"]

                # What the link offers, before anyone joins: who invites and on what terms.
                r = await client.get(f"/v1/invites/{code}")
                assert r.status_code == 200, r.text
                offer = r.json()
                assert offer["table_id"] == table_id and offer["seat_open"] is True
                assert offer["inviter"] == {"id": mallory.id, "name": "Mallory"}
                assert offer["rated"] is True
                assert (offer["clock"]["seconds"], offer["clock"]["policy"]) == (1, "forfeit")
                # A link `/t/<decoy>?invite=<code>`: the client names the decoy; refused.
                join = f"/v1/invites/{code}"
                r = await client.post(join, json={"table_id": decoy}, headers=victim.auth)
                assert r.status_code == 409 and r.json()["code"] == "invite_mismatch"
                assert (await client.get(f"/v1/tables/{table_id}")).json()["seats"][1][
                    "player"
                ] is None

                # The victim accepts and then does nothing; Mallory starts and plays if first.
                r = await client.post(join, json={"table_id": table_id}, headers=victim.auth)
                assert r.status_code == 200, r.text
                r = await client.post(f"/v1/tables/{table_id}/start", headers=mallory.auth)
                assert r.status_code == 200, r.text
                view = r.json()["table"]
                end = time.monotonic() + 30
                while view["game"]["match"]["status"] != "finished":
                    assert time.monotonic() < end, "the match never ended"
                    hand = view["game"]["hand"]
                    if hand["turn"] == 0 and hand["phase"] == "upcard_offer":
                        await client.post(
                            f"/v1/tables/{table_id}/moves/pass", json={}, headers=mallory.auth
                        )
                    await asyncio.sleep(0.1)
                    view = (await client.get(f"/v1/tables/{table_id}", headers=mallory.auth)).json()

                match = view["game"]["match"]
                assert (match["winner"], match["finish_reason"]) == (None, "aborted")
                for who in (victim, mallory):
                    profile = (await client.get(f"/v1/players/{who.id}")).json()
                    assert (profile["won"], profile["lost"]) == (0, 0), profile
                    assert profile["ratings"] == [] and profile["history"] == []
                    r = await client.get("/v1/players/me/matches", headers=who.auth)
                    assert r.json() == []

        asyncio.run(run())
