"""Run the Alembic migrations (the only source of the schema) on a Database."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from sqlalchemy import Connection

from alembic import command
from app.store.db import Database

ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str) -> Config:
    """The Alembic config of this repository, pointed at ``url``."""
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def run_migrations(db: Database) -> None:
    """``alembic upgrade head`` on the app's own engine (env.py reuses the given connection).

    The connection is handed over outside any transaction: Alembic begins one per migration,
    and a migration that builds an index without locking its table (``CREATE INDEX
    CONCURRENTLY`` on PostgreSQL, which no transaction may hold) commits the ones before it
    and runs outside (its ``autocommit_block``)."""

    def upgrade(connection: Connection) -> None:
        config = alembic_config(db.url)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

    async with db.engine.connect() as conn:
        await conn.run_sync(upgrade)
