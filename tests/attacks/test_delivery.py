"""Attacks through notification delivery (issue 24, findings 3, 9 and 10), each against a real
``python -m app``: a webhook or push endpoint that redirects (never followed, a failed delivery
saying why), accounts whose webhooks never answer (a quick webhook still goes at once), and
hosts that tell internal DNS apart or embed a loopback IPv4 address (one answer: refused)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.service.delivery.webpush import new_private_key
from tests.api.helpers import Player, new_player
from tests.api.processes import Process
from tests.api.pushing import Browser
from tests.api.receiver import Receiver
from tests.attacks.floods import Hole, silent_webhook_accounts
from tests.attacks.harness import Canary, target


@dataclass
class Listener:
    """A loopback HTTP listener that answers every request with ``status`` (and ``location``
    when set), counting the connections it got and keeping each request's first line."""

    status: int = 201
    location: str = ""
    port: int = 0
    connections: int = 0
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            self.requests.append(head.split(b"\r\n", 1)[0].decode())
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            location = f"Location: {self.location}\r\n" if self.location else ""
            writer.write(
                f"HTTP/1.1 {self.status} X\r\n{location}Content-Length: 0\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            await writer.drain()
        writer.close()

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Listener]:
        server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        async with server:
            yield self


async def opponent_joins(client: httpx.AsyncClient, creator: Player) -> None:
    """A table of ``creator``'s that someone joins: an ``opponent_joined`` for ``creator``."""
    r = await client.post("/v1/tables", json={}, headers=creator.auth)
    assert r.status_code == 201, r.text
    guest = await new_player(client, "Guest")
    r = await client.post(f"/v1/invites/{r.json()['invite_code']}", headers=guest.auth)
    assert r.status_code == 200, r.text


async def finished_delivery(
    client: httpx.AsyncClient, who: Player, timeout: float = 15.0
) -> dict[str, Any]:
    """``who``'s one notification once it is no longer pending."""
    deadline = time.monotonic() + timeout
    while True:
        r = await client.get("/v1/players/me/notifications/deliveries", headers=who.auth)
        assert r.status_code == 200, r.text
        done = [d for d in r.json() if d["status"] != "pending"]
        if done:
            assert len(r.json()) == 1, r.json()
            found: dict[str, Any] = done[0]
            return found
        assert time.monotonic() < deadline, r.json()
        await asyncio.sleep(0.1)


# Finding 3: redirects are never followed.


@pytest.fixture(scope="module")
def redirect_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    """Loopback webhooks and push endpoints allowed (the first hop must be), and the first
    failure final (``NOTIFY_RETRY_SECONDS=0``), so a delivery's outcome shows at once."""
    with target(
        tmp_path_factory.mktemp("redirects"),
        WEBHOOK_ALLOW_HTTP="true",
        WEBHOOK_ALLOW_LOOPBACK="true",
        VAPID_PRIVATE_KEY=new_private_key(),
        VAPID_SUBJECT="mailto:ops@example.com",
        PUSH_ALLOW_PRIVATE="true",
        NOTIFY_RETRY_SECONDS="0",
        NOTIFY_SCAN_INTERVAL="0.1",
    ) as process:
        yield process


@pytest.mark.parametrize("channel", ["webhook", "push"])
@pytest.mark.parametrize("status", [307, 302])
async def test_a_redirect_is_a_failed_delivery_and_never_followed(
    redirect_target: Process, channel: str, status: int
) -> None:
    """The endpoint answers ``status`` to another loopback listener: today's push client
    followed it there (a POST after 307, a GET after 302), past the address guard."""
    async with (
        Listener(status=201).open() as inside,
        Listener(status=status).open() as redirector,
        httpx.AsyncClient(base_url=redirect_target.url, timeout=30) as client,
    ):
        redirector.location = f"{inside.url}/admin?token=inside"
        player = await new_player(client, "Redirected")
        if channel == "webhook":
            url = f"{redirector.url}/hook"
            r = await client.put("/v1/players/me/webhook", json={"url": url}, headers=player.auth)
            assert r.status_code == 200, r.text
        else:
            browser = Browser(f"{redirector.url}/push/{status}")
            r = await client.post(
                "/v1/players/me/push-subscriptions", json=browser.json(), headers=player.auth
            )
            assert r.status_code == 201, r.text
        await opponent_joins(client, player)
        delivery = await finished_delivery(client, player)
        await asyncio.sleep(0.3)  # a follow-up request, if one were made, would be in by now
    assert redirector.requests and redirector.requests[0].startswith("POST "), redirector.requests
    assert inside.connections == 0, inside.requests
    assert delivery["status"] == "failed", delivery
    assert f"HTTP {status}: a redirect, not followed" in delivery["last_error"], delivery
    assert "token=inside" not in delivery["last_error"]


# Finding 9: slow targets do not starve the dispatcher.


async def test_silent_webhooks_do_not_starve_a_quick_one(tmp_path: Path) -> None:
    """Eight accounts whose webhooks never answer, two delivery slots, a 5 s webhook timeout:
    today the quick webhook of the ninth player waited behind them for their timeouts (about
    5 s or more); the slow lane lets it through within about a second."""
    receiver = Receiver().start()
    env = {
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOW_LOOPBACK": "true",
        "WEBHOOK_TIMEOUT": "5",
        "NOTIFY_CONCURRENCY": "2",
        "NOTIFY_SLOW_SECONDS": "0.25",
        "NOTIFY_SLOW_SLOTS": "1",
        "NOTIFY_SCAN_INTERVAL": "0.1",
    }
    try:
        with target(tmp_path, **env) as server:
            async with (
                httpx.AsyncClient(base_url=server.url, timeout=30) as client,
                Hole().open() as hole,
                Canary(server.url).running() as canary,
            ):
                victim = await new_player(client, "Quick")
                url = f"{receiver.url}/quick"
                r = await client.put(
                    "/v1/players/me/webhook", json={"url": url}, headers=victim.auth
                )
                assert r.status_code == 200, r.text
                counts = await silent_webhook_accounts(client, hole, accounts=8)
                assert counts["notes"] == 8, counts
                joined = time.monotonic()
                await opponent_joins(client, victim)
                while not receiver.ok("/quick"):
                    waited = time.monotonic() - joined
                    assert waited < 2.5, (
                        f"the quick webhook waited {waited:.1f} s; {hole.connections} slow "
                        "deliveries under way"
                    )
                    await asyncio.sleep(0.02)
                waited = time.monotonic() - joined
                assert hole.connections >= 2, hole.connections  # the slow ones were tried
            canary.assert_kept_playing()
    finally:
        receiver.stop()
    assert waited < 2.5


# Finding 10: one answer for a host refused, whatever the reason.

# Each embeds 127.0.0.1 or 10.0.0.1 (6to4, Teredo's client, NAT64, IPv4-compatible and
# -mapped), is loopback or private, or names no host at all.
REFUSED_HOSTS = [
    "[2002:7f00:1::]",
    "[2002:a00:1::]",
    "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
    "[64:ff9b::7f00:1]",
    "[::127.0.0.1]",
    "[::ffff:127.0.0.1]",
    "127.0.0.1",
    "10.1.2.3",
]


async def test_a_refused_host_gets_one_answer_whatever_the_reason(tmp_path: Path) -> None:
    """Today: ``localhost`` is named as resolving to 127.0.0.1, an unknown name answers
    ``webhook_url_unresolvable``, and a 6to4 address around 127.0.0.1 is accepted for webhooks
    and push alike."""
    with target(
        tmp_path,
        VAPID_PRIVATE_KEY=new_private_key(),
        VAPID_SUBJECT="mailto:ops@example.com",
        LOG_LEVEL="DEBUG",
    ) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            player = await new_player(client, "Prober")
            answers: dict[str, tuple[int, dict[str, Any]]] = {}
            for host in [*REFUSED_HOSTS, "localhost", "no-such-host.invalid"]:
                url = f"https://{host}/hook?secret=s3cr3t-{len(answers)}"
                r = await client.put(
                    "/v1/players/me/webhook", json={"url": url}, headers=player.auth
                )
                answers[host] = (r.status_code, r.json())
            first = answers["localhost"]
            assert first[0] == 422 and first[1]["code"] == "webhook_url_refused", first
            assert {h: a for h, a in answers.items() if a != first} == {}
            pushes: dict[str, tuple[int, dict[str, Any]]] = {}
            for host in REFUSED_HOSTS:
                body = Browser(f"https://{host}/push/s3cr3t").json()
                r = await client.post(
                    "/v1/players/me/push-subscriptions", json=body, headers=player.auth
                )
                pushes[host] = (r.status_code, r.json())
            first = pushes["127.0.0.1"]
            assert first[0] == 422 and first[1]["code"] == "invalid_push_subscription", first
            assert {h: a for h, a in pushes.items() if a != first} == {}
            r = await client.get("/v1/players/me/push-subscriptions", headers=player.auth)
            assert r.json() == []
    log = server.log.read_text()
    assert "webhook host 'localhost' refused" in log  # the reason, for the operator
    assert "s3cr3t" not in log
