"""Hostile request bodies, query strings and pages, against a real ``python -m app``.

- A JSON body nested hundreds of levels deep (2 KB) is refused ``422 body_too_deep`` before
  any model sees it: no 500, no traceback, no body in the log, and a canary table beside the
  flood keeps playing. It used to pass the parser (orjson takes 1024 levels), then make the
  422 handler recurse over the echoed input until ``RecursionError``: 500, 70-200 ms of the
  event loop and two tracebacks quoting the body per request.
- A 422 names where and why, never the client's input back.
- A deeply nested socket message gets the socket's ``invalid_message``, seated or parked.
- An integer query parameter of 5,000 digits (past Python's 4,300-digit ``int()`` limit) is
  the documented refusal: ``invalid_since`` on the table socket, 422 over HTTP.
- Every response says ``X-Content-Type-Options: nosniff``; the docs pages carry a CSP.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.api.helpers import seated_table
from tests.attacks import floods
from tests.attacks.harness import Canary, target

DIGITS = "9" * 5000


def _problems(lines: list[str], *needles: str) -> list[str]:
    """The log lines holding a traceback, an error record or any of ``needles``."""
    marks = ("Traceback", '"level": "error"', "[error", *needles)
    return [line[:300] for line in lines if any(mark in line for mark in marks)]


async def test_deep_bodies_are_refused_cheaply_and_never_logged(tmp_path: Path) -> None:
    with target(tmp_path) as server:
        async with Canary(server.url).running() as canary:
            counts = await floods.deep_bodies(server.url, 2.0)
        canary.assert_kept_playing(worst=0.5)
        assert counts["sent"] >= 80, counts
        assert counts.get("status_422") == counts["sent"], counts
        assert counts.get("code_body_too_deep") == counts["sent"], counts
        assert not _problems(server.lines(), "[[[["), server.lines()[-20:]


async def test_a_422_never_echoes_the_input(tmp_path: Path) -> None:
    with target(tmp_path) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            table_id, (p0, _) = await seated_table(client)
            secretish = "x-echo-" + "q" * 40
            cases: list[tuple[str, str, Any]] = [
                ("POST", "/v1/players", {"name": [[[[secretish]]]]}),
                ("POST", "/v1/players", {"name": secretish * 10}),
                ("POST", f"/v1/tables/{table_id}/moves/discard", {"card": {"a": secretish}}),
                ("POST", f"/v1/tables/{table_id}/chat", {"text": [secretish]}),
                ("POST", "/v1/tables", {"rules": [secretish], "preset": {"x": [secretish]}}),
            ]
            for method, path, body in cases:
                r = await client.request(method, path, json=body, headers=p0.auth)
                assert r.status_code == 422, (path, r.text)
                error = r.json()
                assert error["code"] == "invalid_request", error
                for detail in error["details"]:
                    assert set(detail) == {"loc", "msg", "type"}, detail
                assert secretish not in r.text, error
            r = await client.post(
                "/v1/players", content=b"not json " + secretish.encode(), headers=p0.auth
            )
            assert r.status_code == 422 and secretish not in r.text, r.text
        assert not _problems(server.lines(), secretish)


async def _first(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 5))
        if message["type"] == kind:
            return message


async def test_a_deeply_nested_socket_message_is_an_invalid_message(tmp_path: Path) -> None:
    deep = '{"type": "move", "kind": ' + "[" * 1000 + "]" * 1000 + "}"
    with target(tmp_path) as server:
        ws_url = server.url.replace("http", "ws")
        async with httpx.AsyncClient(base_url=server.url) as client:
            table_id, (p0, _) = await seated_table(client)
        seated = connect(f"{ws_url}/v1/tables/{table_id}/ws?token={p0.token}")
        watching = connect(f"{ws_url}/v1/tables/{table_id}/ws")
        async with seated as player, watching as spectator:
            await _first(player, "view")
            await _first(spectator, "view")
            await asyncio.sleep(0.3)  # the spectator's socket is parked once idle
            for ws in (player, spectator):
                for _ in range(20):
                    await ws.send(deep)
                for _ in range(20):
                    error = await _first(ws, "error")
                    assert error["code"] == "invalid_message", error
                await ws.send('{"type": "ping", "id": "still-here"}')
                assert (await _first(ws, "pong"))["id"] == "still-here"
        assert not _problems(server.lines(), "[[[[")


async def test_integer_query_parameters_of_5000_digits_are_refused(tmp_path: Path) -> None:
    with target(tmp_path) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            table_id, (p0, _) = await seated_table(client)
            paths = [
                f"/v1/tables/{table_id}/events?since={DIGITS}",
                f"/v1/tables/{table_id}/events?limit={DIGITS}",
                f"/v1/tables/{table_id}/hands/{DIGITS}",
                f"/v1/tables/{table_id}/hands/1?match={DIGITS}",
                f"/v1/leaderboards/standard?offset={DIGITS}",
                f"/v1/leaderboards/standard?limit={DIGITS}",
                f"/v1/players/me/notifications/deliveries?limit={DIGITS}",
            ]
            for path in paths:
                r = await client.get(path, headers=p0.auth)
                assert r.status_code == 422, (path, r.status_code, r.text[:200])
                assert DIGITS[:100] not in r.text, (path, r.text[:200])
        ws_url = server.url.replace("http", "ws")
        for since in (DIGITS, "9" * 11, "-1", "x"):
            async with connect(f"{ws_url}/v1/tables/{table_id}/ws?since={since}") as ws:
                error = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert error["code"] == "invalid_since", error
                try:
                    await asyncio.wait_for(ws.recv(), 5)
                except ConnectionClosed as closed:
                    assert closed.rcvd is not None and closed.rcvd.code == 4400
                else:
                    raise AssertionError("the socket stayed open")
        # The access line keeps a path as it came, but never more of a ``since`` than a seq.
        assert not _problems(server.lines(), f"since={DIGITS[:100]}")


async def test_every_response_says_nosniff_and_the_docs_carry_a_csp(tmp_path: Path) -> None:
    with target(tmp_path) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            table_id, _ = await seated_table(client)
            answers = [
                await client.get("/healthz"),
                await client.get("/openapi.json"),
                await client.get("/v1/nothing-here"),
                await client.get(f"/v1/tables/{table_id}"),
                await client.post("/v1/players", json={"name": 5}),
                await client.post("/v1/players", content=floods.DEEP_BODY),
                await client.put(f"/v1/tables/{table_id}"),
                await client.get("/static-offline-docs/swagger-ui-bundle.js"),
            ]
            # A move served by the gateway's own lane, and one the lane hands to the route.
            answers.append(await client.post(f"/v1/tables/{table_id}/moves/pass", json={}))
            answers.append(await client.post(f"/v1/tables/{table_id}/moves/pass", json=[]))
            pages = [await client.get("/docs"), await client.get("/redoc")]
            for r in answers + pages:
                assert r.headers.get("x-content-type-options") == "nosniff", (r.url, r.headers)
            assert len({r.status_code for r in answers}) >= 5
            for r in pages:
                policy = r.headers.get("content-security-policy", "")
                assert "script-src 'self'" in policy and "unsafe-eval" not in policy, policy
                assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
                assert "cdn" not in r.text.lower()
