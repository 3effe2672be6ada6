"""Web Push: subscriptions over the real API, delivery to a local HTTP receiver acting as the
push service, the payload decrypted here by an independent RFC 8291 implementation (the
``cryptography`` primitives by hand) and the VAPID JWT verified with PyJWT."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import jwt
import orjson
import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import InvalidError
from app.service.delivery.webpush import (
    PushRefusedError,
    PushRetryableError,
    Subscription,
    WebPushChannel,
    b64url,
    b64url_decode,
    new_private_key,
)
from app.settings import Settings
from app.store import Database
from app.store import push as store
from app.table.commands import Actor
from tests.api.conftest import Server, sqlite_only, start_server
from tests.api.helpers import Player, new_player
from tests.api.pushing import Browser, PushService, Received, running_push_service

SUBJECT = "mailto:ops@example.com"


@pytest.fixture(scope="module")
def push_service() -> Iterator[PushService]:
    with running_push_service() as service:
        yield service


@pytest.fixture(scope="module")
def push_server(module_db: str) -> Iterator[Server]:
    running = start_server(
        module_db,
        vapid_private_key=new_private_key(),
        vapid_subject=SUBJECT,
        push_allow_private=True,  # the receiver is on loopback, over http
        push_timeout=3.0,
    )
    yield running
    running.stop()


@pytest.fixture
async def push_client(push_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=push_server.url, timeout=30) as http:
        yield http


@pytest.fixture
async def channel(push_server: Server) -> AsyncIterator[WebPushChannel]:
    """The delivery side as the notification dispatcher holds it, on the server's database."""
    db = Database(push_server.settings.database_url)
    webpush = WebPushChannel(db, push_server.settings)
    yield webpush
    await webpush.close()
    await db.close()


async def subscribe(client: httpx.AsyncClient, who: Player, browser: Browser) -> str:
    r = await client.post(
        "/v1/players/me/push-subscriptions", json=browser.json(), headers=who.auth
    )
    assert r.status_code == 201, r.text
    assert r.json()["endpoint"] == browser.endpoint
    subscription_id: str = r.json()["id"]
    return subscription_id


async def endpoints(client: httpx.AsyncClient, who: Player) -> list[str]:
    r = await client.get("/v1/players/me/push-subscriptions", headers=who.auth)
    assert r.status_code == 200, r.text
    return [s["endpoint"] for s in r.json()]


def one(service: PushService, timeout: float = 5.0) -> Received:
    return service.received.get(timeout=timeout)


async def test_a_push_is_encrypted_for_the_subscription_and_signed_with_vapid(
    push_client: httpx.AsyncClient, push_service: PushService, channel: WebPushChannel
) -> None:
    ada = await new_player(push_client, "Ada")
    browser = Browser(push_service.endpoint(uuid.uuid4().hex))
    await subscribe(push_client, ada, browser)
    r = await push_client.get("/v1/push/key")
    assert r.status_code == 200 and r.json()["enabled"] is True, r.text
    server_key = r.json()["public_key"]
    assert len(b64url_decode(server_key)) == 65

    table_id = uuid.uuid4().hex
    payload = {"table_id": table_id, "opponent": "Bo", "note": "ç ♠"}
    push_service.drain()
    await channel.deliver(ada.id, "your_turn", payload)
    got = one(push_service)
    assert push_service.drain() == []  # exactly one POST for one subscription

    assert got.path == f"/push/{browser.endpoint.rsplit('/', 1)[1]}"
    assert got.headers["content-encoding"] == "aes128gcm"
    assert got.headers["ttl"] == str(Settings().push_ttl_seconds)
    assert got.headers["urgency"] == "high"
    assert got.headers["topic"] == table_id
    assert orjson.loads(browser.decrypt(got.body)) == {"kind": "your_turn", **payload}
    # Another subscription's keys cannot read it: the check has teeth.
    with pytest.raises(InvalidTag):
        Browser(browser.endpoint).decrypt(got.body)

    # VAPID (RFC 8292): "vapid t=<JWT>, k=<the server's public key>", ES256 over that key.
    scheme, _, params = got.headers["authorization"].partition(" ")
    assert scheme == "vapid"
    parts = dict(p.strip().split("=", 1) for p in params.split(","))
    assert parts["k"] == server_key
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(parts["k"]))
    claims = jwt.decode(parts["t"], key, algorithms=["ES256"], audience=push_service.url)
    assert claims["sub"] == SUBJECT
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(parts["t"], other, algorithms=["ES256"], audience=push_service.url)


async def test_every_subscription_of_the_player_gets_it_and_410_drops_one(
    push_client: httpx.AsyncClient, push_service: PushService, channel: WebPushChannel
) -> None:
    bo = await new_player(push_client, "Bo")
    phone, laptop = (Browser(push_service.endpoint(uuid.uuid4().hex)) for _ in range(2))
    await subscribe(push_client, bo, phone)
    await subscribe(push_client, bo, laptop)
    push_service.status[f"/push/{phone.endpoint.rsplit('/', 1)[1]}"] = 410
    push_service.drain()
    await channel.deliver(bo.id, "match_finished", {"table_id": uuid.uuid4().hex})
    got = {r.path: r for r in (one(push_service), one(push_service))}
    for browser in (phone, laptop):
        body = got[f"/push/{browser.endpoint.rsplit('/', 1)[1]}"]
        assert orjson.loads(browser.decrypt(body.body))["kind"] == "match_finished"
        assert body.headers["urgency"] == "normal"
    assert await endpoints(push_client, bo) == [laptop.endpoint]

    # 404 says the same.
    push_service.status[f"/push/{laptop.endpoint.rsplit('/', 1)[1]}"] = 404
    await channel.deliver(bo.id, "your_turn", {"table_id": uuid.uuid4().hex})
    assert await endpoints(push_client, bo) == []


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_a_push_service_error_is_retryable_and_keeps_the_subscription(
    push_client: httpx.AsyncClient,
    push_service: PushService,
    channel: WebPushChannel,
    status: int,
) -> None:
    cy = await new_player(push_client, "Cy")
    browser = Browser(push_service.endpoint(uuid.uuid4().hex))
    await subscribe(push_client, cy, browser)
    push_service.status[f"/push/{browser.endpoint.rsplit('/', 1)[1]}"] = status
    with pytest.raises(PushRetryableError) as raised:
        await channel.deliver(cy.id, "your_turn", {"table_id": uuid.uuid4().hex})
    assert raised.value.retry_after == (7.0 if status == 429 else None)
    assert await endpoints(push_client, cy) == [browser.endpoint]
    # Taken the next time: delivered, nothing raised.
    push_service.status.pop(f"/push/{browser.endpoint.rsplit('/', 1)[1]}")
    push_service.drain()
    await channel.deliver(cy.id, "your_turn", {"table_id": "t1"})
    assert orjson.loads(browser.decrypt(one(push_service).body))["table_id"] == "t1"


async def test_a_closed_port_is_retryable(
    push_client: httpx.AsyncClient, channel: WebPushChannel
) -> None:
    dee = await new_player(push_client, "Dee")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    browser = Browser(f"http://127.0.0.1:{port}/push/closed")
    await subscribe(push_client, dee, browser)
    with pytest.raises(PushRetryableError):
        await channel.deliver(dee.id, "your_turn", {"table_id": "t"})
    assert await endpoints(push_client, dee) == [browser.endpoint]


async def test_subscriptions_are_yours_to_list_and_remove(
    push_client: httpx.AsyncClient, push_service: PushService
) -> None:
    eve, fay = await new_player(push_client, "Eve"), await new_player(push_client, "Fay")
    browser = Browser(push_service.endpoint(uuid.uuid4().hex))
    first = await subscribe(push_client, eve, browser)
    assert await subscribe(push_client, eve, browser) == first  # the same browser again
    assert await endpoints(push_client, eve) == [browser.endpoint]
    r = await push_client.delete(f"/v1/players/me/push-subscriptions/{first}", headers=fay.auth)
    assert (r.status_code, r.json()["code"]) == (404, "push_subscription_not_found")
    # The browser subscribes as another player: its notifications go to that one now.
    assert await subscribe(push_client, fay, browser) == first
    assert await endpoints(push_client, eve) == []
    assert await endpoints(push_client, fay) == [browser.endpoint]
    r = await push_client.delete(f"/v1/players/me/push-subscriptions/{first}", headers=fay.auth)
    assert (r.status_code, r.json()) == (200, []), r.text
    assert await endpoints(push_client, fay) == []
    r = await push_client.delete(f"/v1/players/me/push-subscriptions/{first}", headers=fay.auth)
    assert r.status_code == 404
    r = await push_client.post("/v1/players/me/push-subscriptions", json=browser.json())
    assert r.status_code == 401


async def test_at_most_ten_subscriptions_the_oldest_go(
    push_client: httpx.AsyncClient, push_service: PushService
) -> None:
    gus = await new_player(push_client, "Gus")
    browsers = [Browser(push_service.endpoint(f"gus-{i}-{uuid.uuid4().hex}")) for i in range(12)]
    for browser in browsers:
        await subscribe(push_client, gus, browser)
    assert sorted(await endpoints(push_client, gus)) == sorted(b.endpoint for b in browsers[2:])


def _bad(browser: Browser, **change: object) -> dict[str, object]:
    body = browser.json()
    keys = dict(body["keys"])  # type: ignore[call-overload]
    for name, value in change.items():
        if name in ("p256dh", "auth"):
            keys[name] = value
        else:
            body[name] = value
    body["keys"] = keys
    return body


@sqlite_only
async def test_bad_subscriptions_are_422_with_a_code(
    push_client: httpx.AsyncClient, push_service: PushService
) -> None:
    hal = await new_player(push_client, "Hal")
    browser = Browser(push_service.endpoint("hal"))
    not_on_curve = b"\x04" + b"\x01" * 64
    cases: list[tuple[object, str]] = [
        (_bad(browser, p256dh=b64url(not_on_curve)), "invalid_push_subscription"),
        (_bad(browser, p256dh=b64url(b"\x04" + b"\xff" * 64)), "invalid_push_subscription"),
        (_bad(browser, p256dh=b64url(browser.public[:33])), "invalid_request"),
        (_bad(browser, auth=b64url(b"short")), "invalid_request"),
        (_bad(browser, endpoint="ftp://push.example/x"), "invalid_push_subscription"),
        (_bad(browser, endpoint="not a url"), "invalid_push_subscription"),
        (_bad(browser, endpoint="https://user:pw@push.example/x"), "invalid_push_subscription"),
        (_bad(browser, endpoint="https://push.example:99999/x"), "invalid_push_subscription"),
        (_bad(browser, auth="not base64!"), "invalid_request"),
        (_bad(browser, endpoint="https://x/" + "a" * 1100), "invalid_request"),
        ({"endpoint": browser.endpoint}, "invalid_request"),
        ({**browser.json(), "extra": 1}, "invalid_request"),
        ([], "invalid_request"),
    ]
    for body, code in cases:
        r = await push_client.post("/v1/players/me/push-subscriptions", json=body, headers=hal.auth)
        assert (r.status_code, r.json()["code"]) == (422, code), (body, r.text)
    assert await endpoints(push_client, hal) == []


@sqlite_only
async def test_without_a_vapid_key_push_is_off(
    client: httpx.AsyncClient, push_service: PushService
) -> None:
    """The suite's shared server has no VAPID key."""
    ivy = await new_player(client, "Ivy")
    r = await client.get("/v1/push/key")  # off, said without an error status
    assert (r.status_code, r.json()) == (200, {"enabled": False, "public_key": None})
    browser = Browser(push_service.endpoint("ivy"))
    for r in (
        await client.post(
            "/v1/players/me/push-subscriptions", json=browser.json(), headers=ivy.auth
        ),
        await client.get("/v1/players/me/push-subscriptions", headers=ivy.auth),
        await client.delete(f"/v1/players/me/push-subscriptions/{'0' * 32}", headers=ivy.auth),
    ):
        assert (r.status_code, r.json()["code"]) == (404, "push_disabled")


@sqlite_only
async def test_by_default_private_and_plain_http_endpoints_are_refused(
    push_server: Server, push_client: httpx.AsyncClient, push_service: PushService
) -> None:
    """Without ``push_allow_private``: refused when stored (an IP literal, one embedding a
    loopback IPv4 address, http) and when sent (a name that resolves to loopback is never
    connected to: a failed delivery, saying no more than "refused")."""
    settings = push_server.settings.model_copy(update={"push_allow_private": False})
    db = Database(settings.database_url)
    strict = WebPushChannel(db, settings)
    browser = Browser(push_service.endpoint("x"))
    for endpoint in (
        "https://127.0.0.1/push",
        "https://10.1.2.3/push",
        "https://[::1]/push",
        "https://169.254.169.254/latest",
        "https://[::ffff:127.0.0.1]/push",
        "https://[2002:7f00:1::]/push",
        "https://[64:ff9b::7f00:1]/push",
        "http://push.example.com/push",
    ):
        with pytest.raises(InvalidError) as refused:
            strict.check(Subscription(endpoint, b64url(browser.public), b64url(browser.auth)))
        assert refused.value.code == "invalid_push_subscription", endpoint
    strict.check(
        Subscription("https://push.example.com/x", b64url(browser.public), b64url(browser.auth))
    )

    jo = await new_player(push_client, "Jo")
    port = push_service.url.rsplit(":", 1)[1]
    async with db.write() as session:
        await store.upsert(
            session,
            uuid.uuid4().hex,
            jo.id,
            endpoint=f"https://localhost:{port}/push/jo",
            p256dh=b64url(browser.public),
            auth=b64url(browser.auth),
        )
    push_service.drain()
    try:
        with pytest.raises(PushRefusedError) as not_sent:
            await strict.deliver(jo.id, "your_turn", {"table_id": "t"})
        assert str(not_sent.value) == "localhost: refused"
    finally:
        await strict.close()
        await db.close()
    time.sleep(0.2)
    assert push_service.drain() == []
    assert await endpoints(push_client, jo) == [f"https://localhost:{port}/push/jo"]


async def test_the_outbox_is_told_who_has_a_subscription_left(
    push_server: Server, push_client: httpx.AsyncClient, push_service: PushService
) -> None:
    """``on_subscribed`` hears, in the same transaction, each change of "has a subscription"."""
    told: list[tuple[str, bool]] = []

    async def record(session: AsyncSession, player_id: str, subscribed: bool) -> None:
        assert session.in_transaction()
        told.append((player_id, subscribed))

    db = Database(push_server.settings.database_url)
    channel = WebPushChannel(db, push_server.settings, on_subscribed=record)
    try:
        kim, lou = await new_player(push_client, "Kim"), await new_player(push_client, "Lou")
        kim_actor, lou_actor = Actor(kim.id, kim.name), Actor(lou.id, lou.name)
        browser = Browser(push_service.endpoint(uuid.uuid4().hex))
        sub = Subscription(browser.endpoint, b64url(browser.public), b64url(browser.auth))
        row = await channel.subscribe(kim_actor, sub)
        assert told == [(kim.id, True)]
        await channel.subscribe(lou_actor, sub)  # the browser moves to Lou
        assert told[1:] == [(lou.id, True), (kim.id, False)]
        await channel.unsubscribe(lou_actor, row.id)
        assert told[3:] == [(lou.id, False)]
        await channel.subscribe(kim_actor, sub)
        push_service.status[f"/push/{browser.endpoint.rsplit('/', 1)[1]}"] = 410
        await channel.deliver(kim.id, "your_turn", {"table_id": "t"})
        assert told[4:] == [(kim.id, True), (kim.id, False)]
    finally:
        await channel.close()
        await db.close()


async def test_a_move_reaches_a_subscribed_browser_through_the_outbox(
    push_client: httpx.AsyncClient, push_service: PushService
) -> None:
    """End to end: a subscription switches the player's push channel on; the opponent joining
    and then the first turn are written to the outbox with their moves and pushed, encrypted
    for the browser, by the server's own dispatcher."""
    ada, bo = await new_player(push_client, "Ada"), await new_player(push_client, "Bo")
    browser = Browser(push_service.endpoint(uuid.uuid4().hex))
    await subscribe(push_client, ada, browser)
    push_service.drain()
    r = await push_client.post("/v1/tables", json={}, headers=ada.auth)
    assert r.status_code == 201, r.text
    table_id, code = r.json()["table_id"], r.json()["invite_code"]
    r = await push_client.post(f"/v1/invites/{code}", headers=bo.auth)
    assert r.status_code == 200, r.text
    joined = orjson.loads(browser.decrypt(one(push_service, timeout=20).body))
    assert joined["kind"] == "opponent_joined" and joined["table_id"] == table_id
    r = await push_client.get("/v1/players/me/notifications/deliveries", headers=ada.auth)
    assert r.status_code == 200, r.text
    assert [d["kind"] for d in r.json()] == ["opponent_joined"]
    # Bo has no channel: nothing of Bo's is written.
    r = await push_client.get("/v1/players/me/notifications/deliveries", headers=bo.auth)
    assert r.json() == []
