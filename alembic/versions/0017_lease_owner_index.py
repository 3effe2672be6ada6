"""lease owner index: a process's bot leases are found by their owner

Revision ID: 0017_lease_owner_index
Revises: 0016_history_keyset
Create Date: 2026-12-03

A process that stops gives up its bot leases (``leases.release_bot_seats``: every seat whose
lease it owns). Without an index that read every seat ever taken: 0.3-0.5 s of a sequential
scan of 2.2 million seats per process exit on a database with a million finished matches. The
index is partial (``bot_lease_owner IS NOT NULL``): it holds the seats leased now, a few per
bot table in play, whatever the history.

On PostgreSQL it is built ``CONCURRENTLY`` outside any transaction (``autocommit_block``), as
in 0015 and 0016: every table's creation and every bot's lease writes to ``seats``, and a plain
build would stop them for as long as it lasts. A failed build leaves an INVALID index: ``DROP
INDEX CONCURRENTLY`` it and run the migration again. On SQLite it is built plainly.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0017_lease_owner_index"
down_revision: str | None = "0016_history_keyset"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ix_seats_bot_lease_owner"
LEASED = sa.text("bot_lease_owner IS NOT NULL")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        op.create_index(NAME, "seats", ["bot_lease_owner"], sqlite_where=LEASED)
        return
    with op.get_context().autocommit_block():
        op.create_index(
            NAME,
            "seats",
            ["bot_lease_owner"],
            postgresql_where=LEASED,
            postgresql_concurrently=True,
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        op.drop_index(NAME, table_name="seats")
        return
    with op.get_context().autocommit_block():
        op.drop_index(NAME, table_name="seats", postgresql_concurrently=True)
