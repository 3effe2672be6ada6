"""The client's calls and refusals, sync and async, against a real server."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from ginrummy_client import (
    ApiError,
    Backoff,
    Client,
    PlayerSocket,
    RefusedError,
    SyncClient,
    TableSocket,
)
from ginrummy_client.bot import BotKit, Config, Follow
from tests.api.conftest import Server, start_server
from tests.waiting import until


def test_the_sync_layer_plays_over_the_socket(sdk_server: Server) -> None:
    with SyncClient(sdk_server.url) as api:
        api.sign_up("Syd")
        table = api.create_table(rules={"target": 30})
        api.seat_bot(table["table_id"], "easy")
        api.start(table["table_id"])
        with api.table_socket(table["table_id"]) as socket:
            messages = iter(socket)
            view = next(messages)
            assert view["type"] == "view" and view["table"]["you"] == 0

            def mine(game: dict[str, Any]) -> bool:
                return any(kind != "resign" for kind in game["legal"]["actions"])

            # Syd's turn already (the view says so: no your_turn follows), or once told.
            if not mine(view["table"]["game"]):
                while next(messages)["type"] != "your_turn":
                    pass
            game = api.view(table["table_id"])["game"]
            kind = "pass" if "pass" in game["legal"]["actions"] else "draw_stock"
            ack = socket.move({"kind": kind})
            assert ack["type"] == "ack" and ack["version"] > view["version"]
            with pytest.raises(ApiError) as refused:
                socket.move({"kind": "discard", "card": "ZZ"})
            assert refused.value.status == 0 and refused.value.code == "invalid_card"


async def test_refusals_are_typed(sdk_server: Server) -> None:
    async with Client(sdk_server.url) as api:
        with pytest.raises(ApiError) as anonymous_call:
            await api.me()
        assert anonymous_call.value.status == 401 and anonymous_call.value.code == "unauthorized"
        await api.sign_up("Ria")
        with pytest.raises(ApiError) as bad:
            await api.create_table(rules={"target": "many"})
        assert bad.value.status == 422 and bad.value.code == "invalid_ruleset"
        with pytest.raises(RefusedError) as unknown:
            async with TableSocket(api, "no-such-table") as socket:
                async for _ in socket:
                    pass
        assert unknown.value.close_code == 4404 and unknown.value.code == "table_not_found"
        with pytest.raises(RefusedError) as anonymous:
            async with PlayerSocket(api, authenticate=False) as notes:
                async for _ in notes:
                    pass
        assert anonymous.value.close_code == 4401
        table = await api.create_table()
        with pytest.raises(ApiError) as limited:
            for _ in range(30):
                await Client(sdk_server.url, api.token, retries=0, http=api.http).chat(
                    table["table_id"], "hi"
                )
        assert limited.value.status == 429 and limited.value.retry_after


async def test_a_following_kit_plays_the_tables_its_account_sits_at(sdk_server: Server) -> None:
    """``follow``: the kit plays a table its account was seated at elsewhere, told by the
    player's socket (``your_turn``); a person plays the other seat over HTTP."""
    async with Client(sdk_server.url) as bot, Client(sdk_server.url) as person:
        await bot.sign_up("Fay")
        await person.sign_up("Gus")
        table = await person.create_table(rules={"target": 10})
        table_id = table["table_id"]
        await bot.accept(table["invite_code"], table_id)
        kit = BotKit(Config(server=sdk_server.url, token=bot.token, follow=True), easy)
        running = asyncio.create_task(kit.run())
        try:
            [follow] = kit.sources
            assert isinstance(follow, Follow)
            await until(lambda: follow.notes is not None and follow.notes.connects, what="notes")
            await person.start(table_id)

            async def finished() -> bool:
                view = await person.view(table_id)
                game = view["game"]
                if game["match"]["status"] == "finished":
                    return True
                actions = [a for a in game["legal"]["actions"] if a != "resign"]
                if actions:  # the person's turn, or a hand to deal
                    with contextlib.suppress(ApiError):
                        move = {"kind": "next_hand"} if "next_hand" in actions else easy(view)
                        await person.move(table_id, move, view["version"])
                return False

            await until(finished, timeout=120, what="the match played by the kit")
            assert kit.players[table_id].moves > 0
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running


def easy(view: dict[str, Any]) -> dict[str, Any]:
    """Knock when it can, else take the stock and shed the first legal discard."""
    legal = view["game"]["legal"]
    if legal["knock_discards"]:
        return {"kind": "knock", "card": legal["knock_discards"][0]["card"]}
    for kind in ("pass", "draw_stock"):
        if kind in legal["actions"]:
            return {"kind": kind}
    return {"kind": "discard", "card": legal["discards"][0]}


def test_after_a_4429_the_next_try_waits_longer() -> None:
    """A crowded server (4429) is not retried at once, whatever the attempt."""
    backoff = Backoff(base=0.1, cap=10, crowded=2.0)
    assert all(backoff.next(4429) >= 2.0 for _ in range(5))
    backoff.reset()
    assert backoff.next(1006) <= 0.1


async def test_a_socket_refused_as_one_too_many_waits_and_gets_in(tmp_path: Path) -> None:
    """One socket a player: a second is refused with 4429, is not given up, and connects once
    the first closes."""
    server = start_server(f"sqlite+aiosqlite:///{tmp_path / 'one.db'}", ws_max_per_player=1)
    try:
        async with Client(server.url) as api:
            await api.sign_up("Una")
            table = await api.create_table()
            first = TableSocket(api, table["table_id"])
            second = TableSocket(api, table["table_id"], backoff=Backoff(crowded=0.2))
            async with first:
                assert (await anext(first))["type"] == "view"
                async with second:
                    refused = await anext(second)
                    assert refused["type"] == "error" and refused["code"] == "too_many_sockets"
                    await first.close()
                    # Refused again while the server has not yet counted the first one out.
                    while (message := await anext(second))["type"] != "view":
                        assert message["code"] == "too_many_sockets"
                    assert second.connects >= 2  # the refused ones, then the one let in
    finally:
        server.stop()
