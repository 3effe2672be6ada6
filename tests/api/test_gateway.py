"""The gateway around every request (``app.api.edge.gateway``): a move its lane answers gets what
every other request gets — its request id, CORS, ``Vary: Origin``, the rate limits, its metrics
— and answers as the FastAPI route would."""

from __future__ import annotations

import httpx

from tests.api.conftest import Server, sqlite_only, start_server
from tests.api.helpers import get_table, seated_table
from tests.api.test_observability import samples, value
from tests.api.test_rate_limits import clear_of_a_window_edge

PASS = "/v1/tables/{table_id}/moves/pass"
DISCARD = "/v1/tables/{table_id}/moves/discard"


async def test_a_plain_move_gets_its_request_id_cors_and_vary(
    client: httpx.AsyncClient, server: Server
) -> None:
    table_id, players = await seated_table(client)
    view = await get_table(client, table_id, players[0])
    first = players[view["game"]["hand"]["turn"]]
    second = players[1 - view["game"]["hand"]["turn"]]
    url = PASS.format(table_id=table_id)
    before = await samples(client)

    # No Origin (every client but a browser): the request id, and Vary as CORS says it.
    r = await client.post(url, json={}, headers={**first.auth, "X-Request-ID": "lane-1"})
    assert r.status_code == 200, r.text
    assert r.headers["x-request-id"] == "lane-1"
    assert r.headers["vary"] == "Origin"
    assert "access-control-allow-origin" not in r.headers
    assert r.headers["content-type"] == "application/json"
    assert int(r.headers["content-length"]) == len(r.content)
    assert r.json()["table"]["version"] == view["version"] + 1

    # The page's own origin: CORS's headers, as on any route.
    origin = server.settings.public_url
    r = await client.post(url, json={}, headers={**second.auth, "Origin": origin})
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == origin
    assert "X-Request-ID" in r.headers["access-control-expose-headers"]
    assert "Origin" in r.headers["vary"]
    assert r.headers["x-request-id"]

    # Another origin: answered on its merits (a rule refusal here), without CORS's consent.
    r = await client.post(url, json={}, headers={**second.auth, "Origin": "https://elsewhere.test"})
    assert (r.status_code, r.json()["code"]) == (409, "not_your_turn"), r.text
    assert "access-control-allow-origin" not in r.headers

    # Not the plain case (the FastAPI route answers): the same outer headers.
    r = await client.post(url, content=b"{}", headers={**first.auth, "Content-Type": "text/plain"})
    assert (r.status_code, r.json()["code"]) == (422, "invalid_request"), r.text
    assert r.headers["vary"] == "Origin" and r.headers["x-request-id"]

    after = await samples(client)
    name = "ginrummy_http_requests_total"
    counted = {
        status: value(after, name, method="POST", route=PASS, status=status)
        - value(before, name, method="POST", route=PASS, status=status)
        for status in ("200", "409", "422")
    }
    assert counted == {"200": 2, "409": 1, "422": 1}


@sqlite_only
async def test_a_plain_move_over_the_token_limit_is_429_and_counted(database_url: str) -> None:
    server = start_server(database_url, rate_limit_token="8/minute", rate_limit_ip="")
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            table_id, players = await seated_table(client)
            view = await get_table(client, table_id, players[0])
            who = players[view["game"]["hand"]["turn"]]
            url = DISCARD.format(table_id=table_id)
            name = "ginrummy_http_requests_total"
            before = value(await samples(client), name, method="POST", route=DISCARD, status="429")
            await clear_of_a_window_edge()
            codes = []
            for _ in range(10):
                # A plain move the rules refuse (the upcard is on offer): the table never changes.
                r = await client.post(url, json={"card": "QC"}, headers=who.auth)
                codes.append(r.json()["code"])
                if r.status_code == 429:
                    assert 1 <= int(r.headers["Retry-After"]) <= 60
                    assert r.headers["x-request-id"]
                    break
            assert codes[-1] == "rate_limited" and set(codes[:-1]) == {"wrong_phase"}, codes
            after = value(await samples(client), name, method="POST", route=DISCARD, status="429")
            assert after - before == 1  # the process's registry: other tests' servers count too
            assert (await get_table(client, table_id, None))["version"] == view["version"]
    finally:
        server.stop()
