"""What a client may send: strict JSON bodies of a bounded size, bounded WebSocket messages.

Each refusal is a clear 4xx with a ``code`` and leaves the table exactly as it was.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.routing import APIRoute
from hypothesis import given
from hypothesis import strategies as st
from starlette.types import Message, Receive, Scope, Send
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from app.api.edge.move_lane import MoveLane
from app.api.edge.request_body import BodyLimit, StrictJSONRoute, depth, too_deep
from app.api.http.routes.moves import router
from app.main import create_app
from tests.api.conftest import Server, sqlite_only
from tests.api.helpers import JSON, Player, get_table, seated_table


async def _log(client: httpx.AsyncClient, table_id: str, who: Player) -> list[JSON]:
    r = await client.get(f"/v1/tables/{table_id}/events", headers=who.auth)
    assert r.status_code == 200, r.text
    events: list[JSON] = r.json()
    return events


async def test_lone_surrogates_are_422_and_store_nothing(client: httpx.AsyncClient) -> None:
    table_id, (p0, _) = await seated_table(client)
    base = f"/v1/tables/{table_id}"
    headers = {**p0.auth, "Content-Type": "application/json"}
    view, log = await get_table(client, table_id, p0), await _log(client, table_id, p0)
    cases = [
        ("/v1/players", b'{"name": "a\\ud800b"}'),
        (f"{base}/chat", b'{"text": "x\\udfff"}'),
        (f"{base}/moves/discard", b'{"card": "\\ud83d"}'),
        ("/v1/tables", b'{"rules": {"\\udc00": 1}}'),
        ("/v1/tables", b'{"preset": "\\ud800"}'),
        # A surrogate pair is one ordinary character, and reaches the rules as such.
        (f"{base}/moves/discard", b'{"card": "\\ud83d\\ude00"}'),
    ]
    for path, content in cases:
        r = await client.post(path, content=content, headers=headers)
        assert r.status_code == 422, (path, content, r.text)
        error = r.json()
        assert error["code"] == "invalid_request" and error["message"], error
    # The pair decoded to an emoji, which is merely not a card.
    assert "not a card" in error["message"], error
    assert await get_table(client, table_id, p0) == view
    assert await _log(client, table_id, p0) == log
    # An emoji in a chat line is fine: only a lone half of one is refused.
    r = await client.post(f"{base}/chat", content='{"text": "gg \\ud83d\\ude00"}', headers=headers)
    assert r.status_code == 200 and r.json()["events"][0]["text"] == "gg \U0001f600", r.text


async def test_bodies_json_cannot_hold_are_422_not_400(client: httpx.AsyncClient) -> None:
    table_id, (p0, _) = await seated_table(client)
    base = f"/v1/tables/{table_id}"
    view = await get_table(client, table_id, p0)
    deep = b"[" * 100_000 + b"]" * 100_000
    for content, content_type in (
        (b'{"text": "caf\xe9"}', "application/json"),  # Latin-1, not UTF-8
        (b'{"text": "\xed\xa0\x80"}', "application/json"),  # a surrogate encoded in bytes
        (b"\xff\xfe{", "application/json"),
        (b"\xff\xfe\x00", "text/plain"),  # not JSON at all, and not UTF-8 to echo
    ):
        r = await client.post(
            f"{base}/chat", content=content, headers={**p0.auth, "Content-Type": content_type}
        )
        assert r.status_code == 422, (content[:20], r.text)
        assert r.json()["code"] == "invalid_request" and r.json()["message"]
    # Nested past the parser's limit (1024) or past ours (``max_body_depth``), not past the size.
    headers = {**p0.auth, "Content-Type": "application/json"}
    for content in (deep[:6000], b'{"text": ' + b"[" * 33 + b"]" * 33 + b"}"):
        r = await client.post(f"{base}/chat", content=content, headers=headers)
        assert r.status_code == 422 and r.json()["code"] == "body_too_deep", r.text
    assert await get_table(client, table_id, p0) == view
    ok = b'{"text": "' + b"[{" * 40 + b'\\"' + b"[" * 40 + b'"}'  # brackets in a string
    r = await client.post(f"{base}/chat", content=ok, headers=headers)
    assert r.status_code == 200, r.text


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:\n'),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='[]{}"\\a'), inner, max_size=4)
    ),
    max_leaves=40,
)


@given(value=_JSON_VALUES, indent=st.booleans())
def test_depth_is_read_from_the_text_as_the_parser_would(value: Any, indent: bool) -> None:
    text = json.dumps(value, indent=2 if indent else None, ensure_ascii=False).encode()
    assert depth(text) == _depth(value)
    assert too_deep(text, 3) == (_depth(value) > 3)


async def test_idempotency_key_is_visible_ascii(client: httpx.AsyncClient) -> None:
    table_id, (p0, _) = await seated_table(client)
    for key in (b"", b"k" * 201, b"caf\xc3\xa9", b"tab\there"):
        r = await client.post(
            f"/v1/tables/{table_id}/chat",
            json={"text": "hi"},
            headers=[(b"Authorization", f"Bearer {p0.token}".encode()), (b"Idempotency-Key", key)],
        )
        assert r.status_code == 422 and r.json()["code"] == "invalid_idempotency_key", (key, r.text)


async def _raw(
    server: Server, request: bytes, body_chunks: Sequence[bytes] = ()
) -> tuple[int, JSON]:
    """Send ``request`` (head) and ``body_chunks`` on a raw connection; the status and body."""
    url = urlsplit(server.url)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    try:
        writer.write(request)
        for chunk in body_chunks:
            writer.write(chunk)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 15)
        status = int(head.split()[1])
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        body = await asyncio.wait_for(reader.readexactly(length), 15)
        return status, json.loads(body)
    finally:
        writer.close()


@sqlite_only
async def test_a_large_body_is_413_before_it_is_read(
    server: Server, client: httpx.AsyncClient
) -> None:
    table_id, (p0, _) = await seated_table(client)
    view = await get_table(client, table_id, p0)
    limit = server.settings.max_body_bytes
    head = (
        f"POST /v1/tables/{table_id}/chat HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {p0.token}\r\nContent-Type: application/json\r\n"
    ).encode()
    # 10 MB announced and not one byte sent: the answer cannot have waited for the body.
    status, error = await _raw(server, head + b"Content-Length: 10000000\r\n\r\n")
    assert status == 413 and error["code"] == "payload_too_large", error
    assert str(limit) in error["message"]
    # Chunked, no length announced: refused once the count passes the limit.
    chunk = b'{"text": "' + b"x" * 1000
    chunks = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * (limit // 1000 + 2) + [b"0\r\n\r\n"]
    status, error = await _raw(server, head + b"Transfer-Encoding: chunked\r\n\r\n", chunks)
    assert status == 413 and error["code"] == "payload_too_large", error
    # Just under the limit is read, and answered on its merits.
    r = await client.post(
        f"/v1/tables/{table_id}/chat",
        content=b'{"text": "hi"' + b" " * (limit - 20) + b"}",
        headers={**p0.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 200, r.text
    assert (await get_table(client, table_id, p0))["game"] == view["game"]


@sqlite_only
async def test_an_oversized_websocket_message_closes_1009(
    server: Server, client: httpx.AsyncClient
) -> None:
    table_id, (p0, _) = await seated_table(client)
    ws_url = server.url.replace("http", "ws") + f"/v1/tables/{table_id}/ws?token={p0.token}"
    big = json.dumps({"type": "ping", "id": "x" * server.settings.ws_max_message_bytes})
    async with connect(ws_url) as ws:
        assert json.loads(await ws.recv())["type"] == "view"
        await ws.send(big)
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(15):
                while True:
                    await ws.recv()
        assert ws.close_code == 1009
    # The server serves on, sockets included.
    async with connect(ws_url) as ws:
        assert json.loads(await ws.recv())["type"] == "view"
        await ws.send(json.dumps({"type": "ping", "id": "small"}))
        while json.loads(await ws.recv())["type"] != "pong":
            pass
    assert (await client.get(f"/v1/tables/{table_id}", headers=p0.auth)).status_code == 200


def test_every_route_with_a_body_decodes_strict_json() -> None:
    # A router that forgets ``route_class=StrictJSONRoute`` would let lone surrogates in.
    loose = [
        route.path
        for route in create_app().routes
        if isinstance(route, APIRoute)
        and route.body_field is not None
        and not isinstance(route, StrictJSONRoute)
    ]
    assert not loose


def test_the_move_lane_matches_the_move_routes_alone() -> None:
    # ``MoveLane`` stands for the six move routes (POST only) and for nothing else.
    lane = MoveLane(1000)
    base = "/v1/tables/t1"
    for kind in ("take-upcard", "pass", "draw", "discard", "knock", "big-gin"):
        scope: dict[str, object] = {
            "type": "http",
            "method": "POST",
            "path": f"{base}/moves/{kind}",
        }
        assert lane.match(scope), kind
        route = scope["route"]
        assert isinstance(route, APIRoute) and route.path == f"/v1/tables/{{table_id}}/moves/{kind}"
        assert route in router.routes  # the FastAPI route itself: its label, its docs
        assert scope["path_params"] == {"table_id": "t1"}
    for method, path in [
        ("GET", f"{base}/moves/draw"),
        ("POST", f"{base}/moves/fly"),
        ("POST", f"{base}/next-hand"),
        ("POST", f"{base}/moves/draw/x"),
        ("POST", "/v1/tables/a/b/moves/draw"),
    ]:
        scope = {"type": "http", "method": method, "path": path}
        assert not lane.match(scope) and "route" not in scope, (method, path)


async def test_moves_answer_alike_on_either_path(client: httpx.AsyncClient) -> None:
    # The plain case (MoveLane) and the rest (the FastAPI route) answer as one route: a body
    # the model refuses, another content type, no body, a pinned version, a key replayed.
    table_id, players = await seated_table(client)
    view = await get_table(client, table_id, players[0])
    seat = view["game"]["hand"]["turn"]
    who = players[seat]
    url = f"/v1/tables/{table_id}/moves/discard"
    json_headers = {**who.auth, "Content-Type": "application/json"}
    for content, headers, status, code in [
        (b'{"card": "QC", "extra": 1}', json_headers, 422, "invalid_request"),
        (b'{"card": 5}', json_headers, 422, "invalid_request"),
        (b"", json_headers, 422, "invalid_request"),
        (b'{"card": "QC"}', {**who.auth, "Content-Type": "text/plain"}, 422, "invalid_request"),
        (b'{"card": "QC"}', json_headers, 409, "wrong_phase"),  # the upcard is on offer
        (b'{"card": "QC"}', {"Content-Type": "application/json"}, 401, "unauthorized"),
    ]:
        r = await client.post(url, content=content, headers=headers)
        assert (r.status_code, r.json()["code"]) == (status, code), (content, r.text)
    pass_url = f"/v1/tables/{table_id}/moves/pass"
    stale = await client.post(pass_url, json={"expected_version": 1}, headers=who.auth)
    assert stale.status_code == 409 and stale.json()["code"] == "stale_version", stale.text
    assert await get_table(client, table_id, players[0]) == view
    keyed = {**who.auth, "Idempotency-Key": "direct-1"}
    version = view["version"]
    first = await client.post(pass_url, json={"expected_version": version}, headers=keyed)
    again = await client.post(pass_url, json={"expected_version": version}, headers=keyed)
    assert first.status_code == again.status_code == 200, (first.text, again.text)
    assert again.json() == first.json() and again.headers["idempotency-replayed"] == "true"
    other = await client.post(pass_url, json={}, headers=keyed)
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"


async def test_an_absurd_content_length_is_413_whichever_server_parsed_it() -> None:
    # uvicorn's parser refuses these before the app; the app must not rely on it (``int()``
    # raises past 4,300 digits; ``str.isdigit`` takes "²").
    async def app(_scope: Scope, _receive: Receive, _send: Send) -> None:
        reached.append(True)

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    for length, status in ((b"9" * 5000, 413), (b"0" * 5000 + b"1", None), (b"\xb2", None)):
        sent: list[Message] = []
        reached: list[bool] = []
        scope: Scope = {"type": "http", "method": "POST", "path": "/v1/players"}
        scope["headers"] = [(b"content-length", length)]
        await BodyLimit(app, 8192)(scope, receive, send)
        if status is None:
            assert reached and not sent, length[:10]
        else:
            assert sent[0]["status"] == status and not reached, length[:10]
