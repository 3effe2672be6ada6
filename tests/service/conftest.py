"""The service over a real SQLite file, migrated, with a fresh Hub."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.bus.hub import Hub
from app.service.pipeline import TableService
from app.service.rate_limits import RateLimits
from app.settings import Settings
from app.store import Database, run_migrations


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[TableService]:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'service.db'}")
    await run_migrations(db)
    yield TableService(db, Hub(), RateLimits.from_settings(Settings(redis_url=None)))
    await db.close()
