"""Persistence: SQLAlchemy 2 async models, the database handle and the queries, by job.

The schema comes only from the Alembic migrations in ``alembic/`` (``run_migrations``); the
models here mirror it for queries. The event log is append-only: one row per engine event with a
contiguous per-table ``seq``; ``snapshots`` hold the latest ``MatchState`` of each match so a
table loads in one read. Every change to a table goes through ``commits.commit``, written at
once and guarded by the table's version. ``tables`` loads and creates tables, ``log`` reads the
event log, ``idempotency`` keeps responses, ``leases`` says which process acts for a bot seat or
a clock; ``outbox``, ``ratings``, ``records``, ``tokens`` and ``push`` keep their own rows.
"""

from app.store.db import Database
from app.store.migrate import run_migrations

__all__ = ["Database", "run_migrations"]
