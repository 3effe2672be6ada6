"""The migrations against the models, on a real SQLite file and a real PostgreSQL database:
head builds what the models declare, the latest migrations go down and up again and fill
what they add, and a player's history page is read on its seat's index in the order it is
returned."""

from __future__ import annotations

import contextlib
import sqlite3
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import AsyncSession

from alembic import command
from app.store import ratings as rating_store
from app.store.base import Base
from app.store.db import Database
from app.store.leases import release_bot_seats
from app.store.log import finished_matches
from app.store.migrate import alembic_config, run_migrations
from app.store.models import FinishedMatch
from app.store.tables import count_open_tables
from app.table.time import utcnow
from tests.api.conftest import pg_database

T = TypeVar("T")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'migrations.sqlite'}"
    else:
        with pg_database("migrations") as found:
            yield found


@pytest.fixture
def pg_url() -> Iterator[str]:
    with pg_database("plans") as found:
        yield found


def _differences(conn: sa.Connection) -> list[Any]:
    """What autogenerate would add or drop to make the database the models' (indexes, tables,
    columns); type and default renderings aside, which differ by dialect."""
    with warnings.catch_warnings():
        # SQLite cannot reflect an expression index (players' lower(name)): not compared there.
        warnings.simplefilter("ignore")
        found = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    return [d for d in found if isinstance(d, tuple) and d[0].split("_")[0] in ("add", "remove")]


def _history_indexes(conn: sa.Connection) -> set[str]:
    return {
        i["name"] or ""
        for i in sa.inspect(conn).get_indexes("finished_matches")
        if "seat" in (i["name"] or "")
    }


def _move(conn: sa.Connection, url: str, revision: str, down: bool = False) -> None:
    config = alembic_config(url)
    config.attributes["connection"] = conn
    (command.downgrade if down else command.upgrade)(config, revision)


async def _on(db: Database, work: Callable[[sa.Connection], T]) -> T:
    """``work`` on a connection of its own, outside any transaction when it begins."""
    async with db.engine.connect() as conn:
        return await conn.run_sync(work)


# The indexes each of the latest migrations adds, newest first: each goes down and up again.
LATEST = [
    (
        "0019_record_indexes",
        {"ix_finished_matches_seat0_record", "ix_finished_matches_seat1_record"},
    ),
    ("0018_open_seats", {"ix_seats_player_open"}),
    ("0017_lease_owner_index", {"ix_seats_bot_lease_owner"}),
    (
        "0016_history_keyset",
        {"ix_finished_matches_seat0_history", "ix_finished_matches_seat1_history"},
    ),
]


def _added(conn: sa.Connection) -> set[str]:
    """The indexes the models declare that the database lacks."""
    return {d[1].name for d in _differences(conn) if d[0] == "add_index"}


async def test_head_is_the_models_and_the_latest_migrations_go_down_and_up(url: str) -> None:
    db = Database(url)
    script = ScriptDirectory.from_config(alembic_config(url))
    head = script.get_revision("head")
    assert head is not None and head.revision == LATEST[0][0]
    try:
        await run_migrations(db)
        assert await _on(db, _differences) == []
        missing: set[str] = set()
        for revision, adds in LATEST:
            below = script.get_revision(revision)
            assert below is not None and isinstance(below.down_revision, str)
            to = below.down_revision

            def down(conn: sa.Connection, to: str = to) -> None:
                _move(conn, url, to, down=True)

            await _on(db, down)
            missing |= adds
            assert await _on(db, _added) == missing, revision
        assert "ix_finished_matches_seat0_player_id" in await _on(db, _history_indexes)
        await _on(db, lambda c: _move(c, url, "head"))
        assert await _on(db, _differences) == []
        assert "ix_finished_matches_seat0_player_id" not in await _on(db, _history_indexes)
    finally:
        await db.close()


async def _plans(url: str, table: str, read: Callable[[AsyncSession], Awaitable[Any]]) -> str:
    """The plans of the statements ``read`` runs on ``table``, with sequential and bitmap scans
    priced out (the tables are empty, where a scan would otherwise always win)."""
    db = Database(url)
    caught: list[tuple[str, Any]] = []

    def log(_c: Any, _cur: Any, statement: str, params: Any, *_: Any) -> None:
        if f"FROM {table}" in statement or statement.startswith(f"UPDATE {table} "):
            caught.append((statement, params))

    try:
        await run_migrations(db)
        sa.event.listen(db.engine.sync_engine, "before_cursor_execute", log)
        try:
            async with db.read() as session:
                await read(session)
        finally:
            sa.event.remove(db.engine.sync_engine, "before_cursor_execute", log)
    finally:
        await db.close()
    assert caught
    raw = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        await raw.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        plans = [await raw.fetch(f"EXPLAIN {statement}", *params) for statement, params in caught]
    finally:
        await raw.close()
    return "\n".join(row[0] for plan in plans for row in plan)


def _keyset_in_index_cond(plan: str, keyset: str) -> bool:
    """Whether every line of ``plan`` naming ``keyset`` is an index condition (where a keyset
    starts the walk), none a filter (where it would only drop rows already read)."""
    lines = [line.strip() for line in plan.splitlines() if keyset in line]
    return bool(lines) and all(line.startswith("Index Cond:") for line in lines)


async def test_a_history_page_reads_each_seats_index_in_order_on_postgresql(pg_url: str) -> None:
    """Each seat's history index, walked backward from the keyset, the two merged in order: no
    sort, no scan of the table."""
    before = FinishedMatch(finished_at=utcnow(), table_id="t", match_number=1)
    plan = await _plans(
        pg_url,
        "finished_matches",
        lambda s: finished_matches(s, "p" * 32, limit=50, before=before),
    )
    assert "ix_finished_matches_seat0_history" in plan, plan
    assert "ix_finished_matches_seat1_history" in plan, plan
    assert _keyset_in_index_cond(plan, "ROW(finished_at"), plan
    assert "Sort  (" not in plan and "Seq Scan" not in plan, plan


async def test_a_leaderboard_page_after_a_cursor_starts_on_the_index(pg_url: str) -> None:
    now = utcnow()
    plan = await _plans(
        pg_url,
        "ratings",
        lambda s: rating_store.leaderboard(
            s,
            "classic",
            max_deviation=110.0,
            since=now,
            offset=0,
            limit=51,
            after=(1500.0, "p" * 32),
        ),
    )
    assert "ix_ratings_leaderboard" in plan, plan
    assert _keyset_in_index_cond(plan, "ROW(rating, (player_id)::text) <"), plan
    assert "Sort  (" not in plan and "Seq Scan" not in plan, plan


async def test_a_process_releases_its_leases_on_the_lease_index(pg_url: str) -> None:
    plan = await _plans(pg_url, "seats", lambda s: release_bot_seats(s, "process-1"))
    assert "ix_seats_bot_lease_owner" in plan and "Seq Scan" not in plan, plan


def _seed_tables(conn: sa.Connection) -> None:
    """At 0017: a player seated at a finished table, one in play and one waiting."""
    now = utcnow()
    conn.execute(
        sa.text("INSERT INTO players (id, name, created_at, bot) VALUES ('p', 'P', :now, false)"),
        {"now": now},
    )
    for table_id, status in (("a", "finished"), ("b", "playing"), ("c", "waiting")):
        conn.execute(
            sa.text(
                "INSERT INTO tables (id, created_by, preset, rules, invite_code, status,"
                " match_number, version, last_seq, created_at, rated, hints, bot)"
                " VALUES (:id, 'p', 'standard', '{}', :id, :status, 1, 1, 1, :now, false,"
                " false, false)"
            ),
            {"id": table_id, "status": status, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO seats (table_id, seat, player_id, deck_design, joined_at)"
                " VALUES (:id, 0, 'p', 'classic', :now)"
            ),
            {"id": table_id, "now": now},
        )
    conn.commit()


def _open_by_table(conn: sa.Connection) -> dict[str, bool]:
    rows = conn.execute(sa.text("SELECT table_id, table_open FROM seats ORDER BY table_id"))
    return {table_id: bool(is_open) for table_id, is_open in rows}


async def test_a_players_won_and_lost_are_counted_on_the_record_indexes_alone(
    pg_url: str,
) -> None:
    plan = await _plans(pg_url, "finished_matches", lambda s: rating_store.record_of(s, "p" * 32))
    for s in (0, 1):
        assert f"Index Only Scan using ix_finished_matches_seat{s}_record" in plan, plan
    assert "Heap Scan" not in plan and "Seq Scan" not in plan, plan


async def test_the_open_seats_migration_marks_the_seats_of_tables_in_play(url: str) -> None:
    db = Database(url)
    try:
        await run_migrations(db)
        await _on(db, lambda c: _move(c, url, "0017_lease_owner_index", down=True))
        await _on(db, _seed_tables)
        await _on(db, lambda c: _move(c, url, "head"))
        assert await _on(db, _open_by_table) == {"a": False, "b": True, "c": True}
        async with db.read() as session:
            assert await count_open_tables(session, "p") == 2
    finally:
        await db.close()


async def test_a_players_open_tables_are_counted_on_the_open_seats_index(
    pg_url: str, tmp_path: Path
) -> None:
    plan = await _plans(pg_url, "seats", lambda s: count_open_tables(s, "p" * 32))
    assert "ix_seats_player_open" in plan and "Seq Scan" not in plan, plan
    path = tmp_path / "plans.sqlite"
    db = Database(f"sqlite+aiosqlite:///{path}")
    caught: list[str] = []

    def log(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        caught.append(statement)

    try:
        await run_migrations(db)
        sa.event.listen(db.engine.sync_engine, "before_cursor_execute", log)
        async with db.read() as session:
            await count_open_tables(session, "p")
        sa.event.remove(db.engine.sync_engine, "before_cursor_execute", log)
    finally:
        await db.close()
    statement = next(s for s in caught if "FROM seats" in s)
    with contextlib.closing(sqlite3.connect(path)) as raw:
        rows = raw.execute(f"EXPLAIN QUERY PLAN {statement}", ("p", "finished")).fetchall()
    details = " | ".join(str(row[-1]) for row in rows)
    assert "USING INDEX ix_seats_player_open" in details, details
