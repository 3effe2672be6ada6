"""A webhook's health over a real server (SQLite and PostgreSQL) and a real receiver: the test
ping, a webhook turned off after failing for long and turned on again, and finished
notifications purged after they are kept for their time.

The module's server turns a webhook off after 1.5 s of failures and keeps finished
notifications about 1.7 s (``notify_keep_days`` 0.00002), purging every 0.2 s.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.api.conftest import Server, start_server
from tests.api.helpers import JSON, Player, new_player, new_table
from tests.api.receiver import Receiver, verify
from tests.notifications.test_notifications import FAST, deliveries, hook
from tests.waiting import until

HEALTH = {
    **FAST,
    "notify_webhook_disable_seconds": 1.5,
    "notify_keep_days": 0.00002,
    "idempotency_purge_interval": 0.2,
}


@pytest.fixture(scope="module")
def health_server(module_db: str) -> Iterator[Server]:
    running = start_server(module_db, **HEALTH)
    yield running
    running.stop()


@pytest.fixture
async def http(health_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=health_server.url, timeout=30) as client:
        yield client


async def settings(http: httpx.AsyncClient, player: Player) -> JSON:
    r = await http.get("/v1/players/me/notifications", headers=player.auth)
    assert r.status_code == 200, r.text
    body: JSON = r.json()
    return body


async def ping(http: httpx.AsyncClient, player: Player) -> JSON:
    r = await http.post("/v1/players/me/webhook/test", headers=player.auth)
    assert r.status_code == 200, r.text
    body: JSON = r.json()
    return body


async def joined(http: httpx.AsyncClient, host: Player) -> str:
    """A new table of ``host`` that a new player joins: an ``opponent_joined`` for ``host``."""
    table = await new_table(http, host)
    guest = await new_player(http)
    r = await http.post(f"/v1/invites/{table['invite_code']}", headers=guest.auth)
    assert r.status_code == 200, r.text
    table_id: str = table["table_id"]
    return table_id


async def test_ping_is_signed_and_says_how_it_went(
    http: httpx.AsyncClient, receiver: Receiver
) -> None:
    player = await new_player(http)
    r = await http.post("/v1/players/me/webhook/test", headers=player.auth)
    assert r.status_code == 409 and r.json()["code"] == "no_webhook", r.text
    assert (await settings(http, player))["webhook_url"] is None  # nothing created by it

    path = f"/ping-{player.id}"
    secret = await hook(http, player, receiver.url + path)
    answer = await ping(http, player)
    assert answer["delivered"] and answer["error"] is None, answer
    (got,) = receiver.ok(path)
    assert verify(secret, got) and got.headers["webhook-id"] == answer["message_id"]
    assert got.json["type"] == "ping" and got.json["data"] == {"player_id": player.id}

    receiver.plans[path] = [503]
    answer = await ping(http, player)
    assert not answer["delivered"] and answer["error"] == "HTTP 503", answer
    # A ping is not a notification: nothing in the deliveries, no failure counted.
    assert await deliveries(http, player) == []
    assert (await settings(http, player))["webhook_failing_since"] is None


async def test_failing_webhook_turned_off_then_on_again(
    http: httpx.AsyncClient, receiver: Receiver
) -> None:
    player = await new_player(http)
    path = f"/down-{player.id}"
    receiver.plans[path] = [503] * 10_000
    await hook(http, player, receiver.url + path)
    await joined(http, player)

    async def turned_off() -> JSON | None:
        body = await settings(http, player)
        return body if body["webhook_disabled_at"] else None

    off: JSON = await until(turned_off, what="the webhook turned off")
    assert off["webhook_failing_since"] <= off["webhook_disabled_at"]
    assert off["webhook_error"] == "webhook: HTTP 503" and not off["active"]
    assert off["webhook_url"] == receiver.url + path  # kept: the player sees what is off
    tries = len(receiver.all(path))
    assert tries >= 2

    # Off: a new notification is not even written, and nothing more is sent.
    quiet = await joined(http, player)
    assert all(r["table_id"] != quiet for r in await deliveries(http, player))
    await asyncio.sleep(0.5)
    assert len(receiver.all(path)) == tries

    # A test ping that fails leaves it off; one that succeeds turns it on.
    assert not (await ping(http, player))["delivered"]
    assert (await settings(http, player))["webhook_disabled_at"] is not None
    receiver.plans[path] = []
    assert (await ping(http, player))["delivered"]
    on = await settings(http, player)
    assert on["active"] and on["webhook_disabled_at"] is None
    assert on["webhook_failing_since"] is None and on["webhook_error"] is None

    table_id = await joined(http, player)

    def delivered_for(rows: list[Any]) -> bool:
        return any(r.json["data"].get("table_id") == table_id for r in rows)

    async def arrived() -> bool:
        return delivered_for(receiver.ok(path))

    await until(arrived, what="a notification after the webhook is on again")


async def test_registering_again_turns_it_on(http: httpx.AsyncClient, receiver: Receiver) -> None:
    player = await new_player(http)
    path = f"/again-{player.id}"
    receiver.plans[path] = [503] * 10_000
    await hook(http, player, receiver.url + path)
    await joined(http, player)

    async def turned_off() -> bool:
        return bool((await settings(http, player))["webhook_disabled_at"])

    await until(turned_off, what="the webhook turned off")
    other = f"/again2-{player.id}"
    await hook(http, player, receiver.url + other)  # asserts it is active again
    body = await settings(http, player)
    assert body["webhook_disabled_at"] is None and body["webhook_failing_since"] is None
    await joined(http, player)

    async def arrived() -> bool:
        return bool(receiver.ok(other))

    await until(arrived, what="a notification to the webhook registered again")


async def test_finished_notifications_are_purged(
    http: httpx.AsyncClient, receiver: Receiver
) -> None:
    player = await new_player(http)
    await hook(http, player, receiver.url + f"/purge-{player.id}")
    await joined(http, player)

    async def delivered() -> bool:
        rows = await deliveries(http, player)
        return bool(rows) and rows[0]["status"] == "delivered"

    await until(delivered, what="delivered")

    async def gone() -> bool:
        return await deliveries(http, player) == []

    await until(gone, what="the delivered notification purged")
