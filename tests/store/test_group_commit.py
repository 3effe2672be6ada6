"""Group commit (``app.store.group_commit``): the plain moves of many tables that commit in the
same pass of the loop are one statement on PostgreSQL, one transaction on SQLite, and each
table's rows are exactly what it would have written alone; a table whose version guard fails in
a group writes nothing and is told so, while the others commit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from prometheus_client import REGISTRY

from app.bus.hub import Hub
from app.engine import Action
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, commits, run_migrations
from app.store.group_commit import GroupCommit
from app.table.commands import Actor, Join, Play, Start
from app.table.model import Change, Committed, Loaded
from tests.api.conftest import pg_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'group.db'}"
        return
    with pg_database("ginrummy_group") as url:
        yield url


def _service(db: Database) -> TableService:
    return TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))


async def _started(service: TableService, n: int) -> list[tuple[str, list[Actor]]]:
    out = []
    for i in range(n):
        a, _ = await service.create_player(f"a{i}")
        b, _ = await service.create_player(f"b{i}")
        table_id = (await service.create_table(a, "standard", {})).body["table_id"]
        await service.submit(table_id, b, Join())
        await service.submit(table_id, a, Start())
        out.append((table_id, [a, b]))
    return out


async def _next_play(
    service: TableService, table_id: str, players: list[Actor]
) -> tuple[Actor, Play]:
    """The player to act, and their move: pass the upcard, draw from the stock, or discard
    the first legal card."""
    loaded = await service.load(table_id)
    state = loaded.state
    assert state is not None
    phase = state.hand.phase
    if phase == "upcard_offer":
        action = {"kind": "pass"}
    elif phase == "draw":
        action = {"kind": "draw_stock"}
    else:
        view = await service.table_view(table_id, players[state.hand.turn])
        action = {"kind": "discard", "card": view["game"]["legal"]["discards"][0]}
    return players[state.hand.turn], Play(Action.from_dict(action))


async def test_moves_of_many_tables_in_one_pass_are_one_statement(database_url: str) -> None:
    db = Database(database_url)
    alone = Database(database_url, group_commit=False)
    try:
        await run_migrations(db)
        service = _service(db)
        tables = await _started(service, 8)
        plain_before = commits._GROUPS[db].commits if db in commits._GROUPS else 0
        for _ in range(6):
            plays = [await _next_play(service, t, p) for t, p in tables]
            results = await asyncio.gather(
                *(
                    service.submit(t, actor, play)
                    for (t, _), (actor, play) in zip(tables, plays, strict=True)
                )
            )
            assert all(r.status_code == 200 for r in results)
        group = commits._GROUPS[db]
        assert group.commits - plain_before == 48
        assert group.groups < group.commits  # several tables per statement

        # Read back through a database handle of its own: every table's log is contiguous,
        # its snapshot is the state the pipeline holds, and each event reads as it was sent.
        reader = _service(alone)
        for table_id, _ in tables:
            ours = await service.load(table_id)
            theirs = await reader.load(table_id)
            assert theirs.table.version == ours.table.version
            assert theirs.table.last_seq == ours.table.last_seq
            assert theirs.state is not None and ours.state is not None
            assert theirs.state.to_dict() == ours.state.to_dict()
            logged = await reader.log_since(table_id, 0, 1000)
            assert [s.seq for s in logged] == list(range(1, ours.table.last_seq + 1))
            assert {s.match_number for s in logged[-6:]} == {ours.table.match_number}
    finally:
        await db.close()
        await alone.close()


async def test_sqlite_writes_count_their_cpu(database_url: str) -> None:
    """``ginrummy_sqlite_cpu_seconds_total``: SQLite writes in this process, so what its
    writes cost this thread is counted (some of it, never more); PostgreSQL's is another
    process's, and nothing is."""
    name = "ginrummy_sqlite_cpu_seconds_total"
    db = Database(database_url)
    try:
        await run_migrations(db)
        service = _service(db)
        tables = await _started(service, 4)
        before = REGISTRY.get_sample_value(name) or 0.0
        started = time.thread_time()
        for _ in range(6):
            for table_id, players in tables:
                actor, play = await _next_play(service, table_id, players)
                assert (await service.submit(table_id, actor, play)).status_code == 200
        spent = time.thread_time() - started
        grown = (REGISTRY.get_sample_value(name) or 0.0) - before
        if db.is_sqlite:
            assert 0.0 < grown < spent
        else:
            assert grown == 0.0
    finally:
        await db.close()


async def test_a_stale_table_in_a_group_writes_nothing_and_the_others_commit(
    database_url: str,
) -> None:
    db = Database(database_url)
    try:
        await run_migrations(db)
        service = _service(db)
        (stale_id, stale_players), (fresh_id, fresh_players) = await _started(service, 2)
        stale = await service.load(stale_id)
        fresh = await service.load(fresh_id)
        actor, play = await _next_play(service, stale_id, stale_players)
        stale_change = service.decide_now(stale, actor, play)
        actor, play = await _next_play(service, fresh_id, fresh_players)
        fresh_change = service.decide_now(fresh, actor, play)
        # The stale table moves on before the group is sent.
        actor, play = await _next_play(service, stale_id, stale_players)
        await service.submit(stale_id, actor, play)
        moved_on = await service.load(stale_id)

        group = GroupCommit(db, commits._write_plain_sqlite if db.is_sqlite else None)
        out = await asyncio.gather(
            group.commit(stale, stale_change),
            group.commit(fresh, fresh_change),
            return_exceptions=True,
        )
        assert (group.groups, group.commits) == (1, 2)
        assert isinstance(out[0], commits.VersionConflictError)
        written = out[1]
        assert not isinstance(written, BaseException)
        assert written.version == fresh.table.version + 1
        assert [s.seq for s in written.stored] == list(
            range(fresh.table.last_seq + 1, fresh.table.last_seq + 1 + len(fresh_change.events))
        )

        reader = _service(Database(database_url, group_commit=False))
        try:
            after = await reader.load(stale_id)
            assert (after.table.version, after.table.last_seq) == (
                moved_on.table.version,
                moved_on.table.last_seq,
            )
            assert len(await reader.log_since(stale_id, 0, 1000)) == moved_on.table.last_seq
            again = await reader.load(fresh_id)
            assert again.table.version == written.version
            assert again.table.last_seq == written.last_seq
            assert again.state is not None and fresh_change.state is not None
            assert again.state.to_dict() == orjson.loads(orjson.dumps(fresh_change.state.to_dict()))
        finally:
            await reader.db.close()
    finally:
        await db.close()


def test_a_loop_that_stopped_with_a_group_pending_leaves_nothing_behind(tmp_path: Path) -> None:
    """A loop that stops between a commit's queueing and its group's send (a shutdown) leaves
    that send behind: a commit on the next loop is still sent, and the one left is not."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'stopped.db'}"

    async def prepared() -> tuple[Database, Loaded, Change]:
        db = Database(url)
        await run_migrations(db)
        service = _service(db)
        ((table_id, players),) = await _started(service, 1)
        loaded = await service.load(table_id)
        actor, play = await _next_play(service, table_id, players)
        return db, loaded, service.decide_now(loaded, actor, play)

    first = asyncio.new_event_loop()
    try:
        db, loaded, change = first.run_until_complete(prepared())
        group = GroupCommit(db, commits._write_plain_sqlite)
        left = first.create_task(group.commit(loaded, change))
        first.call_soon(first.stop)  # runs before the group's send, scheduled by the commit
        first.run_forever()
        assert not left.done() and group.groups == 0
        left.cancel()
    finally:
        first.close()

    async def again() -> Committed:
        return await asyncio.wait_for(group.commit(loaded, change), 10)

    written = asyncio.run(again())
    assert (group.groups, group.commits) == (1, 1)
    assert written.version == loaded.table.version + 1
    asyncio.run(db.close())
