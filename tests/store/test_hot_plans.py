"""The hot statements on a real PostgreSQL database (``Database.fetchrow_driver``: a table's
load, a token's, the plain move, the group commit): their connections plan each statement
once, generically, and that plan walks indexes even on a new database with no statistics,
where the planner would otherwise scan the small tables for as long as the plan lives."""

from __future__ import annotations

from collections.abc import Iterator

import asyncpg
import pytest

from app.store import commits, group_commit, tables, tokens
from app.store.db import HOT_SETTINGS, Database
from app.store.migrate import run_migrations
from tests.api.conftest import pg_database

HOT = {
    "load": tables._LOAD_PG,
    "token": tokens._RESOLVE_PG,
    "plain move": commits._PLAIN_PG,
    "plain move with notes": commits._PLAIN_PG_NOTES,
    "group commit": group_commit._GROUP_PG,
}


@pytest.fixture
def pg_url() -> Iterator[str]:
    with pg_database("hot") as found:
        yield found


async def generic_plan(conn: asyncpg.Connection, sql: str) -> str:
    """The plan a prepared ``sql`` gets on ``conn`` once it is generic."""
    types = [
        await conn.fetchval("SELECT format_type($1, NULL)", t.oid)
        for t in (await conn.prepare(sql)).get_parameters()
    ]
    await conn.execute(f"PREPARE hot ({', '.join(types)}) AS {sql}")
    try:
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        nulls = ", ".join(f"NULL::{t}" for t in types)
        rows = await conn.fetch(f"EXPLAIN EXECUTE hot ({nulls})")
    finally:
        await conn.execute("DEALLOCATE hot")
    return "\n".join(row[0] for row in rows)


async def test_the_hot_statements_plan_once_generically_on_indexes(pg_url: str) -> None:
    db = Database(pg_url)
    try:
        await run_migrations(db)
        row = await db.fetchrow_driver(
            "SELECT current_setting('plan_cache_mode'), current_setting('enable_seqscan')"
        )
        assert tuple(row) == ("force_generic_plan", "off")
    finally:
        await db.close()

    dsn = pg_url.replace("+asyncpg", "")
    hot = await asyncpg.connect(dsn, server_settings=HOT_SETTINGS)
    plain = await asyncpg.connect(dsn)
    try:
        for name, sql in HOT.items():
            plan = await generic_plan(hot, sql)
            assert "Seq Scan" not in plan, (name, plan)
            index = "tokens_token_hash_key" if name == "token" else "tables_pkey"
            assert f"Index Scan using {index}" in plan, (name, plan)
        # Without the settings, the new database's generic plan of the group commit scans
        # its tables: what these connections are kept from.
        assert "Seq Scan on tables" in await generic_plan(plain, group_commit._GROUP_PG)
    finally:
        await hot.close()
        await plain.close()
