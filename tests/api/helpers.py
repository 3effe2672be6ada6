"""Players and tables over HTTP, and a simple strategy that drives both seats."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from app.engine import parse_card

JSON = dict[str, Any]


@dataclass(frozen=True)
class Player:
    id: str
    name: str
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def new_player(client: httpx.AsyncClient, name: str = "") -> Player:
    r = await client.post("/v1/players", json={"name": name or f"p-{uuid.uuid4().hex[:6]}"})
    assert r.status_code == 201, r.text
    body = r.json()
    return Player(body["id"], body["name"], body["token"])


async def new_table(client: httpx.AsyncClient, creator: Player, **body: Any) -> JSON:
    r = await client.post("/v1/tables", json=body, headers=creator.auth)
    assert r.status_code == 201, r.text
    table: JSON = r.json()
    return table


async def seated_table(
    client: httpx.AsyncClient, *, start: bool = True, **body: Any
) -> tuple[str, list[Player]]:
    """Two new players at a new table (seat 0 created it, seat 1 joined), started by default."""
    p0, p1 = await new_player(client, "Ada"), await new_player(client, "Bo")
    table = await new_table(client, p0, **body)
    r = await client.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
    assert r.status_code == 200, r.text
    if start:
        r = await client.post(f"/v1/tables/{table['table_id']}/start", headers=p0.auth)
        assert r.status_code == 200, r.text
    return table["table_id"], [p0, p1]


async def rematch(client: httpx.AsyncClient, table_id: str, asker: Player, other: Player) -> JSON:
    """A rematch both agree to: ``asker`` asks, ``other`` accepts; the new match's table."""
    r = await client.post(f"/v1/tables/{table_id}/rematch", headers=asker.auth)
    assert r.status_code == 200, r.text
    assert r.json()["table"]["rematch_offer"] == r.json()["table"]["you"]
    r = await client.post(f"/v1/tables/{table_id}/rematch/accept", headers=other.auth)
    assert r.status_code == 200, r.text
    table: JSON = r.json()["table"]
    return table


async def get_table(client: httpx.AsyncClient, table_id: str, who: Player | None) -> JSON:
    r = await client.get(f"/v1/tables/{table_id}", headers=who.auth if who else None)
    assert r.status_code == 200, r.text
    view: JSON = r.json()
    return view


def choose(view: JSON) -> tuple[str, JSON | None]:
    """(path suffix, body): knock when possible, else take the stock and shed high deadwood."""
    game = view["game"]
    legal = game["legal"]
    actions = set(legal["actions"])
    if "next_hand" in actions:
        return "next-hand", None
    if legal["can_big_gin"]:
        return "moves/big-gin", None
    if legal["knock_discards"]:
        best = min(legal["knock_discards"], key=lambda k: k["deadwood"])
        return "moves/knock", {"card": best["card"]}
    if "pass" in actions:
        return "moves/pass", None
    if "draw_stock" in actions:
        return "moves/draw", {"source": "stock"}
    yours = game["hand"]["yours"]
    loose = [c for c in yours["deadwood_cards"] if c in legal["discards"]]
    pool = loose or legal["discards"]
    return "moves/discard", {"card": max(pool, key=lambda c: parse_card(c).points)}


def mover(view: JSON) -> int:
    """The seat to act next (seat 0 deals with next_hand when a hand is over)."""
    hand = view["game"]["hand"]
    return 0 if hand["phase"] == "over" else int(hand["turn"])


async def step(
    client: httpx.AsyncClient, table_id: str, players: list[Player], view: JSON | None = None
) -> JSON:
    """Let whoever is to act make one move; ``view``: a current view of any seat, if at hand.

    Returns the move's response body, whose ``table`` is the mover's view afterwards.
    """
    view = view or await get_table(client, table_id, players[0])
    seat = mover(view)
    if view["you"] != seat:
        view = await get_table(client, table_id, players[seat])
    path, body = choose(view)
    r = await client.post(f"/v1/tables/{table_id}/{path}", json=body, headers=players[seat].auth)
    assert r.status_code == 200, r.text
    result: JSON = r.json()
    return result


async def play_until(
    client: httpx.AsyncClient,
    table_id: str,
    players: list[Player],
    done: str = "match",
    limit: int = 5000,
) -> JSON:
    """Play until the match is finished (``done="match"``) or the current hand is over.

    Returns the last mover's view of the table.
    """
    view = await get_table(client, table_id, players[0])
    for _ in range(limit):
        game = view["game"]
        if game["match"]["status"] == "finished":
            return view
        if done == "hand" and game["hand"]["phase"] == "over":
            return view
        view = (await step(client, table_id, players, view))["table"]
    raise AssertionError("the game did not end")


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included: what a redaction check searches."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)
