"""Nothing hidden leaves the server, and a restart in the middle of a hand loses nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx

from app.engine import MatchState
from app.engine.cards import codes, from_mask
from app.store import Database, tables
from tests.api.conftest import Server, start_server
from tests.api.helpers import (
    JSON,
    Player,
    get_table,
    new_player,
    play_until,
    seated_table,
    step,
    strings_in,
)


async def _state(db: Database, table_id: str) -> MatchState:
    async with db.read() as session:
        loaded = await tables.load(session, table_id)
    assert loaded is not None and loaded.state is not None
    return loaded.state


def _hidden(state: MatchState, seat: int) -> set[str]:
    """Cards of ``seat`` that its opponent may not know (not taken from the discard pile)."""
    hand = state.hand
    return set(codes(from_mask(hand.hands[seat] & ~hand.taken_from_discard[seat])))


async def _everything_seen(
    client: httpx.AsyncClient, table_id: str, who: Player | None
) -> list[Any]:
    headers = who.auth if who else None
    return [
        (await client.get(f"/v1/tables/{table_id}", headers=headers)).json(),
        (await client.get(f"/v1/tables/{table_id}/events", headers=headers)).json(),
    ]


async def test_seat1_and_spectators_never_see_hidden_cards_or_seeds(
    client: httpx.AsyncClient,
    server: Server,
) -> None:
    table_id, players = await seated_table(client)
    stranger = await new_player(client)
    db = Database(server.settings.database_url)
    try:
        view: JSON | None = None
        last: JSON = {}
        for _ in range(200):
            state = await _state(db, table_id)
            if state.hand.phase == "over":
                break
            stock = set(codes(state.hand.stock))
            secrets = {state.seed, state.hand.seed, state.hand.nonce}
            number = state.hand.number
            # The check has teeth: seat 0's own view does hold exactly those cards.
            own = set(strings_in(await get_table(client, table_id, players[0])))
            assert _hidden(state, 0) <= own
            r = await client.get(f"/v1/tables/{table_id}/hands/{number}")
            assert r.status_code == 409
            checks: list[tuple[set[str], list[Any]]] = [
                (_hidden(state, 0) | stock, await _everything_seen(client, table_id, players[1])),
                (
                    _hidden(state, 0) | _hidden(state, 1) | stock,
                    [
                        *await _everything_seen(client, table_id, stranger),
                        *await _everything_seen(client, table_id, None),
                        r.json(),
                    ],
                ),
            ]
            if view is not None and view["you"] == 1:
                checks.append((_hidden(state, 0) | stock, [last]))
            for hidden, payloads in checks:
                for payload in payloads:
                    seen = set(strings_in(payload))
                    assert not seen & hidden, seen & hidden
                    text = json.dumps(payload)
                    assert not any(secret in text for secret in secrets)
            last = await step(client, table_id, players, view)
            view = last["table"]
        revealed = (await client.get(f"/v1/tables/{table_id}/hands/{number}")).json()
        assert revealed["seed"] == state.hand.seed
    finally:
        await db.close()


async def test_restart_mid_hand_loses_nothing(server: Server) -> None:
    url = server.settings.database_url
    first = start_server(url)
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
            table_id, players = await seated_table(client, rules={"target": 100})
            view = await get_table(client, table_id, players[0])
            moves = 0
            # A few moves in, and never between hands: the restart must cut a hand in two.
            while moves < 7 or view["game"]["hand"]["phase"] == "over":
                assert view["game"]["match"]["status"] == "playing"
                view = (await step(client, table_id, players, view))["table"]
                moves += 1
            before = [await get_table(client, table_id, p) for p in (*players, None)]
            log = (await client.get(f"/v1/tables/{table_id}/events")).json()
            assert before[0]["game"]["hand"]["phase"] != "over"
    finally:
        first.stop()

    second = start_server(url)
    try:
        async with httpx.AsyncClient(base_url=second.url, timeout=30) as client:
            after = [await get_table(client, table_id, p) for p in (*players, None)]
            assert after == before
            assert (await client.get(f"/v1/tables/{table_id}/events")).json() == log
            final = await play_until(client, table_id, players)
            assert final["game"]["match"]["status"] == "finished"
            records = (await client.get("/v1/players/me/matches", headers=players[0].auth)).json()
            assert [m["table_id"] for m in records] == [table_id]
    finally:
        second.stop()
