"""Attacks through notification delivery (issue 24), each against a real ``python -m app``:
hosts that tell internal DNS apart or embed a loopback IPv4 address (one answer: refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from app.service.webpush import new_private_key
from tests.api.helpers import new_player
from tests.api.pushing import Browser
from tests.attacks.harness import target

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
