"""big data indexes: the scans that read every table or seat ever played read only live ones

Revision ID: 0015_big_data_indexes
Revises: 0014_ladder
Create Date: 2026-12-02

On PostgreSQL each index is built with ``CREATE INDEX CONCURRENTLY``, outside any transaction
(``autocommit_block``: the migrations before it are committed first): the tables stay open to
reads and writes while it builds, where a plain ``CREATE INDEX`` holds a lock that stops every
move for as long as the build takes on a big table. A build that fails leaves an INVALID index
behind: ``DROP INDEX CONCURRENTLY`` it and run the migration again (``IF NOT EXISTS`` would keep
the invalid one). On SQLite the indexes are built plainly (one writer there anyway).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_big_data_indexes"
down_revision: str | None = "0014_ladder"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (name, table, columns, predicate): each partial, so it holds only the rows its query wants.
INDEXES = (
    # ``tables_in_play`` (the /metrics gauge): counted on the tables being played, not read
    # from every table ever made.
    ("ix_tables_playing", "tables", ["id"], "status = 'playing'"),
    # The bot runner's scan (``leases.unleased_bot_tables``, twice a second): the bot seats,
    # not every seat.
    ("ix_seats_bot", "seats", ["table_id"], "bot_level IS NOT NULL"),
)


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name, table, columns, where in INDEXES:
        predicate = {"postgresql_where": sa.text(where), "sqlite_where": sa.text(where)}
        if postgresql:
            with op.get_context().autocommit_block():
                op.create_index(name, table, columns, postgresql_concurrently=True, **predicate)
        else:
            op.create_index(name, table, columns, **predicate)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name, table, _, _ in reversed(INDEXES):
        if postgresql:
            with op.get_context().autocommit_block():
                op.drop_index(name, table_name=table, postgresql_concurrently=True)
        else:
            op.drop_index(name, table_name=table)
