"""The client's calls and refusals, sync and async, against a real server."""

from __future__ import annotations

import pytest

from ginrummy_client import ApiError, Client, PlayerSocket, RefusedError, SyncClient, TableSocket
from tests.api.conftest import Server


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
            while "your_turn" not in [m["type"] for m in [next(messages)]]:
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
