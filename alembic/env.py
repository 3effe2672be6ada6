"""Alembic environment: async engines; reuses a connection handed over by the app at start."""

from __future__ import annotations

import asyncio
import os

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from alembic import context
from app.store import models  # noqa: F401  (defines the tables on Base's metadata)
from app.store.base import Base
from app.store.db import create_private

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    # One transaction per migration: one that must run outside any (``autocommit_block``, for
    # ``CREATE INDEX CONCURRENTLY``) commits those before it, as each would have committed.
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    create_private(url)  # a new SQLite file is the owner's alone, as the app makes it
    engine = create_async_engine(url)
    async with engine.connect() as connection:  # Alembic begins the transactions
        await connection.run_sync(_run)
    await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = os.environ.get("DATABASE_URL") or config.get_main_option("sqlalchemy.url")
    assert url, "no database URL"
    asyncio.run(_run_async(url))


if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
