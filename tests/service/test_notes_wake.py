"""The notification dispatcher is woken by a commit that wrote outbox rows, and only then
(``Committed.notes_written``), with the players they are due to: a move's notes for players
without a channel write nothing.
On SQLite (the transaction's path) and PostgreSQL (the plain move's one statement)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.bus.hub import Hub
from app.engine import Action
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, outbox, run_migrations
from app.table.commands import Actor, Join, Play, Start
from tests.api.conftest import pg_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'wake.db'}"
        return
    with pg_database("ginrummy_wake") as url:
        yield url


async def _move(service: TableService, table_id: str, players: list[Actor]) -> int:
    """The player to act passes the upcard or draws from the stock; the version after."""
    view = await service.table_view(table_id, players[0])
    hand = view["game"]["hand"]
    kind = "pass" if hand["phase"] == "upcard_offer" else "draw_stock"
    result = await service.submit(
        table_id, players[hand["turn"]], Play(Action.from_dict({"kind": kind}))
    )
    return int(result.body["version"])


async def test_only_a_commit_that_wrote_notes_wakes_the_dispatcher(database_url: str) -> None:
    db = Database(database_url)
    try:
        await run_migrations(db)
        service = TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
        woken: list[list[str]] = []
        service.on_notes = woken.append
        ada, _ = await service.create_player("Ada")
        bo, _ = await service.create_player("Bo")
        created = await service.create_table(ada, "standard", {})
        table_id = created.body["table_id"]
        await service.submit(table_id, bo, Join())
        await service.submit(table_id, ada, Start())
        players = [ada, bo]

        woken.clear()
        await _move(service, table_id, players)  # a your_turn for a player without a channel
        assert woken == []

        for player in players:
            async with db.write() as session:
                await outbox.set_push_channel(session, player.player_id, True)
        await _move(service, table_id, players)  # now its your_turn is written: a wake
        view = await service.table_view(table_id, players[0])
        # ... naming the player it is due to, whom the dispatcher then serves without a scan.
        assert woken == [[players[view["game"]["hand"]["turn"]].player_id]]
    finally:
        await db.close()
