"""Web Push in the browser: the service worker registers at /sw.js, "Notify me when it's my
turn" subscribes and hands the subscription to the server (which then delivers to it), the
worker shows a pushed notice, and "Stop" unsubscribes.

Headless Chromium has no push service: a fresh context is incognito, where
``PushManager.subscribe`` is refused, and a persistent profile's registration with the browser
vendor's push service never completes offline. So ``PushManager`` alone is stood in for: its
``subscribe`` returns a subscription with keys this test generated and an endpoint at a local
receiver, after recording the options the client passed (the server's VAPID key). Everything
else is real: the permission prompt (granted), the worker, the client's code, the server, the
encrypted POST to the receiver (decrypted here), and the push event, which DevTools'
``ServiceWorker.deliverPushMessage`` hands to the worker as a push service would.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest
from playwright.sync_api import Browser as Chromium
from playwright.sync_api import Page

from app.service.delivery.webpush import WebPushChannel, b64url_decode, new_private_key
from app.store import Database
from tests.api.conftest import Server, start_server
from tests.api.pushing import Browser, PushService, running_push_service
from tests.waiting import wait_for
from tests.web.conftest import Contexts

# A your_turn's data as the outbox writes it (docs/notifications.md), besides its table_id.
YOUR_TURN = {"hand_number": 1, "phase": "draw"}

STAND_IN = """
(fake) => {
  let current = null;
  window.__subscribed = [];
  PushManager.prototype.subscribe = async function (options) {
    const key = new Uint8Array(options.applicationServerKey);
    window.__subscribed.push({userVisibleOnly: options.userVisibleOnly, key: Array.from(key)});
    current = {
      endpoint: fake.endpoint,
      expirationTime: null,
      options: {userVisibleOnly: true, applicationServerKey: key.buffer},
      toJSON: () => ({endpoint: fake.endpoint, expirationTime: null, keys: fake.keys}),
      unsubscribe: async () => { current = null; window.__unsubscribed = true; return true; },
    };
    return current;
  };
  PushManager.prototype.getSubscription = async function () { return current; };
}
"""


@pytest.fixture(scope="module")
def push_service() -> Iterator[PushService]:
    with running_push_service() as service:
        yield service


@pytest.fixture(scope="module")
def push_web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("push") / "ginrummy.db"
    running = start_server(
        f"sqlite+aiosqlite:///{path}",
        vapid_private_key=new_private_key(),
        vapid_subject="mailto:ops@example.com",
        push_allow_private=True,
    )
    yield running
    running.stop()


@pytest.fixture
def push_contexts(browser: Chromium, push_web_server: Server) -> Iterator[Contexts]:
    opened = Contexts(browser, push_web_server.url)
    yield opened
    opened.close()


def worker_ready(page: Page) -> str:
    url: str = page.evaluate(
        "navigator.serviceWorker.ready.then(r => r.active && r.active.scriptURL)"
    )
    return url


def as_player(page: Page, http: httpx.Client, name: str) -> dict[str, str]:
    created: dict[str, str] = http.post("/v1/players", json={"name": name}).json()
    me = {"id": created["id"], "name": created["name"], "token": created["token"]}
    page.evaluate("me => localStorage.setItem('ginrummy.player', JSON.stringify(me))", me)
    page.reload()
    return me


def subscriptions(http: httpx.Client, token: str) -> list[dict[str, Any]]:
    r = http.get("/v1/players/me/push-subscriptions", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    body: list[dict[str, Any]] = r.json()
    return body


def shown(page: Page, tag: str) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = page.evaluate(
        """tag => navigator.serviceWorker.ready
          .then(r => r.getNotifications({tag}))
          .then(ns => ns.map(n => ({title: n.title, body: n.body, tag: n.tag, data: n.data})))""",
        tag,
    )
    return notes


def test_the_service_worker_registers_at_sw_js(push_contexts: Contexts) -> None:
    page = push_contexts.new().new_page()
    page.goto("/")
    assert worker_ready(page).endswith("/sw.js")
    r = page.request.get("/sw.js")
    assert r.status == 200 and "javascript" in r.headers["content-type"]
    assert r.headers["cache-control"] == "no-cache"  # a new release's worker is picked up


def test_notify_me_subscribes_posts_and_stop_unsubscribes(
    push_contexts: Contexts, push_web_server: Server, push_service: PushService
) -> None:
    context = push_contexts.new()
    context.grant_permissions(["notifications"])
    browser_keys = Browser(push_service.endpoint(uuid.uuid4().hex))
    context.add_init_script(f"({STAND_IN})({json.dumps(browser_keys.json())})")
    page = context.new_page()
    page.goto("/")
    with httpx.Client(base_url=push_web_server.url) as http:
        me = as_player(page, http, "Ada")
        assert subscriptions(http, me["token"]) == []
        page.click("button.push-on")
        page.wait_for_selector(".push [role=status]")
        assert "mesmo com a aba fechada" in page.inner_text(".push")

        # The client subscribed with the server's VAPID key and posted what it got.
        key = http.get("/v1/push/key").json()["public_key"]
        subscribed = page.evaluate("window.__subscribed")
        assert subscribed == [{"userVisibleOnly": True, "key": list(b64url_decode(key))}]
        stored = subscriptions(http, me["token"])
        assert [s["endpoint"] for s in stored] == [browser_keys.endpoint]

        # The server delivers to it: the receiver gets what only these keys decrypt.
        table_id = uuid.uuid4().hex
        push_service.drain()
        # Playwright's sync API runs an event loop in this thread: the delivery runs in another.
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, _deliver(push_web_server, me["id"], table_id)).result()
        got = push_service.received.get(timeout=5)
        notice = orjson.loads(browser_keys.decrypt(got.body))
        assert notice == {"kind": "your_turn", **YOUR_TURN, "table_id": table_id}

        # A push service hands that notice to the worker: it shows "your turn".
        push_to_worker(page, notice)
        notes = wait_for(lambda: shown(page, table_id), timeout=5, what="the notification")
        assert notes == [
            {
                "title": "Gin Rummy",
                "body": f"Sua vez na mesa {table_id[:6]}",
                "tag": table_id,
                "data": {"url": f"{push_web_server.url}/t/{table_id}"},
            }
        ]

        joined = {"kind": "opponent_joined", "table_id": "b" * 32, "player": {"name": "Bo"}}
        push_to_worker(page, joined)
        notes = wait_for(lambda: shown(page, "b" * 32), timeout=5, what="the notification")
        assert [n["body"] for n in notes] == [f"Bo sentou na sua mesa {'b' * 6}"]

        page.click("button.push-off")
        page.wait_for_selector("button.push-on")
        assert page.evaluate("window.__unsubscribed") is True
        assert subscriptions(http, me["token"]) == []


async def _deliver(server: Server, player_id: str, table_id: str) -> None:
    db = Database(server.settings.database_url)
    channel = WebPushChannel(db, server.settings)
    try:
        await channel.deliver(player_id, "your_turn", {**YOUR_TURN, "table_id": table_id})
    finally:
        await channel.close()
        await db.close()


def push_to_worker(page: Page, notice: dict[str, Any]) -> None:
    """DevTools' ``ServiceWorker.deliverPushMessage``: the worker's push event, with ``notice``."""
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")

    def registered() -> list[dict[str, Any]]:
        page.wait_for_timeout(20)  # the sync API hands over the session's events in its calls
        return registrations

    wait_for(registered, timeout=5, what="the worker's registration")
    origin = page.evaluate("location.origin")
    registration = next(r for r in registrations if r["scopeURL"] == f"{origin}/")
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {
            "origin": origin,
            "registrationId": registration["registrationId"],
            "data": json.dumps(notice),
        },
    )


def test_no_control_where_the_server_has_no_vapid_key(contexts: Contexts) -> None:
    """The suite's shared server has no key: the start page offers no push control."""
    context = contexts.new()
    context.grant_permissions(["notifications"])
    page = context.new_page()
    page.goto("/")
    with httpx.Client(base_url=page.url.rstrip("/")) as http:
        as_player(page, http, "Bo")
    page.wait_for_selector(".lists")
    assert worker_ready(page).endswith("/sw.js")
    page.wait_for_timeout(300)
    assert page.locator(".push").count() == 0
