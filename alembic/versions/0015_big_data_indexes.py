"""big data indexes: the scans that read every table or seat ever played read only live ones

Revision ID: 0015_big_data_indexes
Revises: 0014_ladder
Create Date: 2026-12-02

``tables.bot``: a bot has held one of the table's seats (set with the seat, never unset), so the
bot runner's scan finds the bot tables being played on a partial index instead of reading every
bot seat ever taken and every table being played. ``ix_tables_playing``: the /metrics gauge of
tables in play counts them without reading every table.

On PostgreSQL each index is built with ``CREATE INDEX CONCURRENTLY``, outside any transaction
(``autocommit_block``: the migrations before it are committed first): the tables stay open to
reads and writes while it builds, where a plain ``CREATE INDEX`` holds a lock that stops every
move for as long as the build takes on a big table. A build that fails leaves an INVALID index
behind: ``DROP INDEX CONCURRENTLY`` it and run the migration again. The column is added with a
constant default, which PostgreSQL records without rewriting the table (a moment's exclusive
lock); the bot tables are then marked in batches of ``BATCH``, each its own transaction, so
no move waits on more than one batch's row locks. On SQLite all of it runs plainly.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_big_data_indexes"
down_revision: str | None = "0014_ladder"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 10_000
# (name, columns, predicate) on ``tables``: each partial, holding only the rows its query wants.
INDEXES = (
    ("ix_tables_playing", ["id"], "status = 'playing'"),
    ("ix_tables_bot_playing", ["id"], "status = 'playing' AND bot"),
)
# The bot tables, marked: all at once (SQLite), or a batch at a time in table id order.
_MARK_ALL = (
    "UPDATE tables SET bot = true"
    " WHERE id IN (SELECT table_id FROM seats WHERE bot_level IS NOT NULL)"
)
_MARK_BATCH = sa.text(
    "WITH b AS (SELECT DISTINCT table_id FROM seats WHERE bot_level IS NOT NULL"
    " AND table_id > :after ORDER BY table_id LIMIT :batch)"
    " UPDATE tables SET bot = true FROM b WHERE tables.id = b.table_id RETURNING tables.id"
)


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.add_column(
        "tables", sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    if not postgresql:
        op.execute(_MARK_ALL)
        for name, columns, where in INDEXES:
            op.create_index(name, "tables", columns, sqlite_where=sa.text(where))
        return
    with op.get_context().autocommit_block():
        bind = op.get_bind()
        after = ""
        # Each statement commits on its own here: one batch of row locks at a time.
        while marked := bind.execute(_MARK_BATCH, {"after": after, "batch": BATCH}).scalars().all():
            after = max(marked)
        for name, columns, where in INDEXES:
            op.create_index(
                name,
                "tables",
                columns,
                postgresql_where=sa.text(where),
                postgresql_concurrently=True,
            )


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name, _, _ in reversed(INDEXES):
        if postgresql:
            with op.get_context().autocommit_block():
                op.drop_index(name, table_name="tables", postgresql_concurrently=True)
        else:
            op.drop_index(name, table_name="tables")
    # Both databases drop a column in place (SQLite since 3.35), keeping the foreign keys.
    op.execute("ALTER TABLE tables DROP COLUMN bot")
