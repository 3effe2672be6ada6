"""Notifications to players who are away: the outbox, the dispatcher and webhooks, over a real
server (SQLite and PostgreSQL) and a real HTTP receiver on a loopback port.

Each test registers webhooks for fresh players at paths of their own on one receiver.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import Server, _free_port, own_database, sqlite_only, start_server
from tests.api.helpers import (
    JSON,
    Player,
    get_table,
    new_player,
    new_table,
    seated_table,
    step,
)
from tests.api.processes import processes, start_process, stop
from tests.api.receiver import Receiver, verify
from tests.waiting import until, wait_for

# Short retries, so a test sees backoff and giving up within seconds.
FAST = {
    "webhook_allow_http": True,
    "webhook_allow_loopback": True,
    "notify_scan_interval": 0.1,
    "notify_backoff_base": 0.2,
    "notify_backoff_max": 1.0,
    "notify_retry_seconds": 30.0,
    "notify_lease_seconds": 5.0,
    "notify_time_running_out": 0.5,
}


@pytest.fixture(scope="module")
def notify_server(module_db: str) -> Iterator[Server]:
    running = start_server(module_db, **FAST)
    yield running
    running.stop()


@pytest.fixture
async def http(notify_server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=notify_server.url, timeout=30) as client:
        yield client


async def hook(http: httpx.AsyncClient, player: Player, url: str) -> str:
    """Register ``url`` as the player's webhook; its secret."""
    r = await http.put("/v1/players/me/webhook", json={"url": url}, headers=player.auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["active"] and body["webhook_url"] == url
    secret: str = body["webhook_secret"]
    assert secret.startswith("whsec_")
    return secret


async def deliveries(http: httpx.AsyncClient, player: Player, **query: Any) -> list[JSON]:
    r = await http.get("/v1/players/me/notifications/deliveries", params=query, headers=player.auth)
    assert r.status_code == 200, r.text
    rows: list[JSON] = r.json()
    return rows


async def settled(http: httpx.AsyncClient, player: Player) -> list[JSON]:
    """The player's deliveries once none is pending (a round records its outcomes after its
    sends, so a receiver may hear one before the server has marked it)."""

    async def done() -> list[JSON] | None:
        rows = await deliveries(http, player)
        return rows if all(r["status"] != "pending" for r in rows) else None

    rows: list[JSON] = await until(done, what="no notification pending")
    return rows


async def hooked_table(
    http: httpx.AsyncClient, receiver: Receiver, *, start: bool = True
) -> tuple[str, list[Player], list[str]]:
    """A started table whose two players both have a webhook (paths /p0-..., /p1-...)."""
    p0, p1 = await new_player(http, "Ada"), await new_player(http, "Bo")
    paths = [f"/p0-{p0.id}", f"/p1-{p1.id}"]
    s0 = await hook(http, p0, receiver.url + paths[0])
    s1 = await hook(http, p1, receiver.url + paths[1])
    table = await new_table(http, p0)
    r = await http.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
    assert r.status_code == 200, r.text
    if start:
        r = await http.post(f"/v1/tables/{table['table_id']}/start", headers=p0.auth)
        assert r.status_code == 200, r.text
    return table["table_id"], [p0, p1], [s0, s1]


async def test_signed_notifications_arrive_in_order(
    http: httpx.AsyncClient, receiver: Receiver
) -> None:
    table_id, players, secrets = await hooked_table(http, receiver)
    p0_path, p1_path = f"/p0-{players[0].id}", f"/p1-{players[1].id}"
    # The creator hears that the opponent joined.
    joined = wait_for(lambda: receiver.ok(p0_path), what="opponent_joined")[0]
    assert joined.json["type"] == "opponent_joined"
    assert joined.json["data"]["table_id"] == table_id
    assert joined.json["data"]["player"]["id"] == players[1].id
    assert verify(secrets[0], joined)
    assert not verify(secrets[1], joined)  # the other player's secret does not match
    # Some moves, then a resignation: every your_turn and both match_finished arrive, signed,
    # in the order they were written. Ten moves pass the turn to each seat at least twice
    # whoever starts and whether the upcard is taken (the one who starts the match is not told).
    view = await get_table(http, table_id, players[0])
    for _ in range(10):
        view = (await step(http, table_id, players, view))["table"]
    r = await http.post(f"/v1/tables/{table_id}/resign", json={}, headers=players[0].auth)
    assert r.status_code == 200, r.text

    def finished(path: str) -> bool:
        return any(x.json["type"] == "match_finished" for x in receiver.ok(path))

    wait_for(lambda: finished(p0_path) and finished(p1_path), what="match_finished")
    for seat, path in enumerate((p0_path, p1_path)):
        got = receiver.ok(path)
        assert all(verify(secrets[seat], x) for x in got)
        ids = [x.headers["webhook-id"] for x in got]
        assert len(set(ids)) == len(ids)
        # The order they were written in (the deliveries list is newest first).
        written = [d["message_id"] for d in reversed(await deliveries(http, players[seat]))]
        assert ids == written
        kinds = [x.json["type"] for x in got]
        assert kinds[-1] == "match_finished"
        assert kinds.count("your_turn") >= 2
        assert all(d["status"] == "delivered" for d in await settled(http, players[seat]))
        assert {d["channels"] == ["webhook"] for d in await deliveries(http, players[seat])} == {
            True
        }


async def test_retries_on_500_keep_order(http: httpx.AsyncClient, receiver: Receiver) -> None:
    p0, p1 = await new_player(http), await new_player(http)
    path = f"/creator-{p0.id}"
    receiver.plans[path] = [500, 500, 503]
    secret = await hook(http, p0, receiver.url + path)
    # Two tables joined one after the other: two opponent_joined, the first retried 3 times.
    tables = [await new_table(http, p0) for _ in range(2)]
    for table in tables:
        r = await http.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
        assert r.status_code == 200, r.text
    got = wait_for(lambda: len(receiver.ok(path)) == 2 and receiver.ok(path), what="both")
    assert [x.json["data"]["table_id"] for x in got] == [t["table_id"] for t in tables]
    everything = receiver.all(path)
    assert [x.status for x in everything] == [500, 500, 503, 200, 200]
    # A retry is the same message: same webhook-id, signed again.
    assert len({x.headers["webhook-id"] for x in everything[:4]}) == 1
    assert all(verify(secret, x) for x in everything)

    async def recorded() -> list[JSON] | None:  # the outcomes are written after the round
        rows = await deliveries(http, p0)
        return rows if [r["status"] for r in rows] == ["delivered", "delivered"] else None

    rows = await until(recorded, what="both recorded delivered")
    assert rows[1]["attempts"] == 3 and rows[1]["last_error"] is None
    assert rows[0]["attempts"] == 0


async def test_closed_port_retried_until_it_opens_then_failed_for_good(
    module_db: str, http: httpx.AsyncClient, tmp_path_factory: pytest.TempPathFactory
) -> None:
    p0, p1 = await new_player(http), await new_player(http)
    port = _free_port()  # nothing listens there yet
    path = f"/late-{p0.id}"
    secret = await hook(http, p0, f"http://127.0.0.1:{port}{path}")
    table = await new_table(http, p0)
    r = await http.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
    assert r.status_code == 200, r.text

    async def tried() -> JSON | None:
        rows = await deliveries(http, p0)
        return rows[0] if rows and rows[0]["attempts"] >= 2 else None

    row = await until(tried, what="two failed attempts")
    assert row["status"] == "pending" and "Connect" in row["last_error"]
    late = Receiver(port=port).start()
    try:
        got = wait_for(lambda: late.ok(path), what="delivery once the port opens")
        assert verify(secret, got[0]) and got[0].headers["webhook-id"] == row["message_id"]
    finally:
        late.stop()
    rows = await settled(http, p0)
    assert rows[0]["status"] == "delivered"

    # A server that retries for 1.5 s gives up and says so. On a database of its own: the
    # module's server (retrying for 30 s) would take its player's notifications too.
    await asyncio.to_thread(_gives_up, module_db, tmp_path_factory)


def _gives_up(like: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """In a thread of its own: making a PostgreSQL database runs an event loop of its own."""
    with own_database(like, tmp_path_factory, "brief") as url:
        asyncio.run(_brief_server_gives_up(url))


async def _brief_server_gives_up(url: str) -> None:
    brief = start_server(url, **{**FAST, "notify_retry_seconds": 1.5})
    try:
        async with httpx.AsyncClient(base_url=brief.url, timeout=30) as other:
            q0, q1 = await new_player(other), await new_player(other)
            await hook(other, q0, f"http://127.0.0.1:{_free_port()}/never")
            table = await new_table(other, q0)
            r = await other.post(f"/v1/invites/{table['invite_code']}", headers=q1.auth)
            assert r.status_code == 200, r.text

            async def failed() -> list[JSON]:
                return await deliveries(other, q0, status="failed")

            rows = await until(failed, what="failed for good")
            assert rows[0]["kind"] == "opponent_joined" and rows[0]["attempts"] >= 2
            assert rows[0]["last_error"] and rows[0]["finished_at"]
    finally:
        brief.stop()


async def test_refused_move_writes_nothing(http: httpx.AsyncClient, receiver: Receiver) -> None:
    table_id, players, _ = await hooked_table(http, receiver)
    view = await get_table(http, table_id, players[0])
    waiting = 1 - int(view["game"]["hand"]["turn"])
    before = [[d["message_id"] for d in await deliveries(http, p)] for p in players]
    # The seat not to move tries, and a card nobody holds: both refused.
    r = await http.post(f"/v1/tables/{table_id}/moves/pass", json={}, headers=players[waiting].auth)
    assert r.status_code == 409, r.text
    r = await http.post(
        f"/v1/tables/{table_id}/moves/discard",
        json={"card": "ZZ"},
        headers=players[1 - waiting].auth,
    )
    assert r.status_code in (409, 422), r.text
    await asyncio.sleep(0.5)
    assert [[d["message_id"] for d in await deliveries(http, p)] for p in players] == before
    sent = {x.headers["webhook-id"] for x in receiver.received}
    assert sent <= {m for ids in before for m in ids}


async def test_reminders_none_and_digest(http: httpx.AsyncClient, receiver: Receiver) -> None:
    table_id, players, secrets = await hooked_table(http, receiver, start=False)
    paths = [f"/p0-{players[0].id}", f"/p1-{players[1].id}"]
    r = await http.put(
        "/v1/players/me/notifications", json={"reminders": "none"}, headers=players[0].auth
    )
    assert r.status_code == 200 and r.json()["reminders"] == "none", r.text
    r = await http.put(
        "/v1/players/me/notifications",
        json={"reminders": "digest", "digest_hours": 1},
        headers=players[1].auth,
    )
    assert r.status_code == 200 and r.json()["digest_hours"] == 1, r.text
    bad = await http.put(
        "/v1/players/me/notifications", json={"reminders": "hourly"}, headers=players[1].auth
    )
    assert bad.status_code == 422
    r = await http.post(f"/v1/tables/{table_id}/start", headers=players[0].auth)
    assert r.status_code == 200, r.text
    view = await get_table(http, table_id, players[0])
    for _ in range(8):
        view = (await step(http, table_id, players, view))["table"]
    # Seat 1's first your_turn went out as a digest at once; the later ones wait an hour.
    digest = wait_for(
        lambda: [x for x in receiver.ok(paths[1]) if x.json["type"] == "your_turn_digest"]
    )
    assert verify(secrets[1], digest[0])
    assert digest[0].json["data"]["tables"] == [{"table_id": table_id}]
    await asyncio.sleep(0.5)
    assert not [x for x in receiver.ok(paths[1]) if x.json["type"] == "your_turn"]
    pending = await deliveries(http, players[1], status="pending")
    assert pending and all(d["kind"] == "your_turn" for d in pending)
    # Seat 0 chose none: no your_turn was even written for them.
    kinds = {d["kind"] for d in await deliveries(http, players[0])}
    assert "your_turn" not in kinds and "opponent_joined" in kinds


@sqlite_only
async def test_ssrf_targets_refused_by_default(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        player = await new_player(client)
        for url in (
            "https://127.0.0.1/hook",
            "https://localhost:8443/hook",
            "https://[::1]/hook",
            "https://10.1.2.3/hook",
            "https://192.168.0.10/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://[fe80::1]/hook",
            "https://0.0.0.0/hook",
            "https://[::ffff:127.0.0.1]/hook",
        ):
            r = await client.put("/v1/players/me/webhook", json={"url": url}, headers=player.auth)
            assert r.status_code == 422, (url, r.text)
            assert r.json()["code"] == "webhook_url_refused", (url, r.text)
        for url in ("http://93.184.215.14/hook", "ftp://example.com/", "https://u:p@1.1.1.1/"):
            r = await client.put("/v1/players/me/webhook", json={"url": url}, headers=player.auth)
            assert r.status_code == 422 and r.json()["code"] == "webhook_url_invalid", url
        r = await client.get("/v1/players/me/notifications", headers=player.auth)
        assert r.json()["webhook_url"] is None and not r.json()["active"]


def _kill(process: Any) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait()


async def test_nothing_lost_across_kill_9(module_db: str, tmp_path: Path) -> None:
    """The move commits with its notification while the receiver is down; the server is
    killed (SIGKILL) before it could send; a new server process sends it once it is up."""
    # The first server's POST goes to a socket that accepts and never answers: the kill
    # comes after the commit, while the send is under way.
    hole = socket.create_server(("127.0.0.1", 0))
    port = hole.getsockname()[1]
    env = {
        "DATABASE_URL": module_db,
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOW_LOOPBACK": "true",
        "NOTIFY_SCAN_INTERVAL": "0.1",
        "NOTIFY_BACKOFF_BASE": "60",
        "NOTIFY_LEASE_SECONDS": "1",
        "MIGRATE_ON_START": "true",
    }
    first = start_process(tmp_path / "first.log", **env)
    killed = False
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=30) as client:
            p0, p1 = await new_player(client), await new_player(client)
            path = f"/kill-{p0.id}"
            secret = await hook(client, p0, f"http://127.0.0.1:{port}{path}")
            table = await new_table(client, p0)
            r = await client.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
            assert r.status_code == 200, r.text
            hole.settimeout(20)
            accepted, _ = await asyncio.to_thread(hole.accept)
            _kill(first.process)
            killed = True
            accepted.close()
    finally:
        hole.close()
        if not killed:
            stop(first)
    late = Receiver(port=port).start()
    second = start_process(tmp_path / "second.log", **env)
    try:
        got = wait_for(lambda: late.ok(path), timeout=30, what="the notification after kill -9")
        assert got[0].json["type"] == "opponent_joined"
        assert got[0].json["data"]["table_id"] == table["table_id"]
        assert verify(secret, got[0])
        async with httpx.AsyncClient(base_url=second.url, timeout=30) as client:
            rows = await settled(client, p0)
        assert [r["status"] for r in rows] == ["delivered"]
        assert rows[0]["message_id"] == got[0].headers["webhook-id"]
    finally:
        stop(second)
        late.stop()


async def test_players_without_a_channel_get_no_rows(http: httpx.AsyncClient) -> None:
    """Players without a channel get no outbox rows at all."""
    table_id, players = await seated_table(http)
    await step(http, table_id, players)
    for p in players:
        assert await deliveries(http, p) == []


async def test_two_processes_deliver_each_once_in_order(
    module_db: str, tmp_path: Path, receiver: Receiver
) -> None:
    """Moves through two server processes: every notification arrives once, in order."""
    env = {
        "DATABASE_URL": module_db,
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOW_LOOPBACK": "true",
        "NOTIFY_SCAN_INTERVAL": "0.05",
    }
    with processes(tmp_path, 2, **env) as servers:
        clients = [httpx.AsyncClient(base_url=s.url, timeout=30) for s in servers]
        try:
            tables = []
            for _ in range(3):
                table_id, players, _ = await hooked_table(clients[0], receiver)
                tables.append((table_id, players))
            for i in range(12):  # alternate the processes move by move
                for table_id, players in tables:
                    await step(clients[i % 2], table_id, players)
            for _, players in tables:
                for seat, player in enumerate(players):
                    path = f"/p{seat}-{player.id}"

                    async def written(player: Player = player) -> list[str] | None:
                        rows = await deliveries(clients[1], player)
                        done = all(r["status"] == "delivered" for r in rows)
                        return [r["message_id"] for r in reversed(rows)] if done else None

                    ids = await until(written, what="all delivered")
                    got = [x.headers["webhook-id"] for x in receiver.ok(path)]
                    assert got == ids  # each once, in the order written
        finally:
            for client in clients:
                await client.aclose()


@pytest.mark.parametrize("control", ["per_move", "bank"])
async def test_time_running_out(
    http: httpx.AsyncClient, receiver: Receiver, notify_server: Server, control: str
) -> None:
    """At ``notify_time_running_out`` (0.5 here) of the turn's time left, the person to move
    hears it; a turn played before that makes its notice stale (never sent)."""
    p0, p1 = await new_player(http, "Ada"), await new_player(http, "Bo")
    paths = [f"/p0-{p0.id}", f"/p1-{p1.id}"]
    secrets = [
        await hook(http, p, receiver.url + path) for p, path in zip((p0, p1), paths, strict=True)
    ]
    clock = {"control": control, "seconds": 8, "policy": "claim"}
    table = await new_table(http, p0, clock=clock)
    table_id = table["table_id"]
    r = await http.post(f"/v1/invites/{table['invite_code']}", headers=p1.auth)
    assert r.status_code == 200, r.text
    r = await http.post(f"/v1/tables/{table_id}/start", headers=p0.auth)
    assert r.status_code == 200, r.text
    players = [p0, p1]
    view = r.json()["table"]
    first = int(view["game"]["hand"]["turn"])
    # The first seat plays at once: its notice (due after 4 s) goes stale.
    view = (await step(http, table_id, players, view))["table"]
    second = int(view["game"]["hand"]["turn"])
    view = await get_table(http, table_id, players[second])
    deadline = view["clock"]["deadline"]
    if second == first:  # the upcard was passed back: the turn goes on
        view = (await step(http, table_id, players, view))["table"]
        second = int(view["game"]["hand"]["turn"])
        deadline = (await get_table(http, table_id, players[second]))["clock"]["deadline"]
    assert second != first

    def warned() -> list[Any]:
        return [x for x in receiver.ok(paths[second]) if x.json["type"] == "time_running_out"]

    try:
        notice = wait_for(warned, timeout=20, what="time_running_out")[0]
    except AssertionError:
        rows = await deliveries(http, players[second])
        view = await get_table(http, table_id, players[second])
        raise AssertionError(f"no time_running_out: {rows} {view['clock']}") from None
    assert verify(secrets[second], notice)
    data = notice.json["data"]
    assert data["table_id"] == table_id and data["seat"] == second
    assert data["deadline"] == deadline and 3.0 < data["remaining_seconds"] <= 4.0
    sent = datetime.fromisoformat(notice.json["timestamp"])
    due = datetime.fromisoformat(deadline) - timedelta(seconds=data["remaining_seconds"])
    assert timedelta(0) <= sent - due < timedelta(seconds=4)  # not early, before the deadline
    rows = await settled(http, players[first])
    stale = [d for d in rows if d["kind"] == "time_running_out"]
    assert [d["status"] for d in stale] == ["stale"]
    assert not [x for x in receiver.ok(paths[first]) if x.json["type"] == "time_running_out"]
