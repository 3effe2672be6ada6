"""open seats: a player's open tables are counted on the seats at them, not on their history

Revision ID: 0018_open_seats
Revises: 0017_lease_owner_index
Create Date: 2026-12-03

Each table a player creates counts the tables they sit at that are not finished, against
``MAX_OPEN_TABLES``. That count read every seat the player ever took on ``ix_seats_player_id``
and each seat's table: the busiest players of a database with a million finished matches hold
thousands. ``seats.table_open`` says whether the seat's table is not finished (the commits write
it when a table finishes or a rematch opens it again), and ``ix_seats_player_open`` is partial
on it: it holds the seats at open tables, as many as there are open tables, whatever the
history.

How it runs on a large ``seats`` without stopping play (PostgreSQL):

- The column is added with the default ``false`` (no rewrite: PostgreSQL keeps a constant
  default in the catalogue, and the lock it takes lasts as long as the catalogue write), then
  the default becomes ``true`` for the seats taken from then on. Every existing seat now says
  "finished"; only the seats of tables not finished, a few in a database of old games, are
  rewritten to ``true``.
- That backfill runs outside any transaction (``autocommit_block``), ``BATCH`` tables at a
  time along their primary key: each batch locks only its own rows, for the time it takes.
- The index is built ``CONCURRENTLY``, as in 0015 to 0017: every table's creation and every
  bot's lease writes to ``seats``. A failed build leaves an INVALID index: ``DROP INDEX
  CONCURRENTLY`` it and run the migration again.

A seat wrongly marked open costs only a row the count then drops (the count still checks its
table's status); so a process of the previous release, which leaves the column alone while
the next one migrates, never makes the count wrong by finishing its tables. On SQLite each step
runs plainly, in the migration's transaction.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0018_open_seats"
down_revision: str | None = "0017_lease_owner_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ix_seats_player_open"
BATCH = 5000

_LAST_OF_BATCH = sa.text(
    "SELECT max(id) FROM (SELECT id FROM tables WHERE id > :after ORDER BY id LIMIT :n) b"
)
_OPEN_BATCH = sa.text(
    "UPDATE seats SET table_open = true FROM tables t"
    " WHERE seats.table_id = t.id AND t.id > :after AND t.id <= :upto"
    " AND t.status <> 'finished'"
)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        op.add_column(
            "seats",
            sa.Column("table_open", sa.Boolean(), nullable=False, server_default=sa.true()),
        )
        conn.execute(
            sa.text(
                "UPDATE seats SET table_open = 0 WHERE table_id IN"
                " (SELECT id FROM tables WHERE status = 'finished')"
            )
        )
        op.create_index(NAME, "seats", ["player_id"], sqlite_where=sa.text("table_open = 1"))
        return
    op.add_column(
        "seats",
        sa.Column("table_open", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.alter_column("seats", "table_open", server_default=sa.true())
    with op.get_context().autocommit_block():
        after = ""
        while True:
            upto = conn.execute(_LAST_OF_BATCH, {"after": after, "n": BATCH}).scalar()
            if upto is None:
                break
            conn.execute(_OPEN_BATCH, {"after": after, "upto": upto})
            after = upto
        op.create_index(
            NAME,
            "seats",
            ["player_id"],
            postgresql_where=sa.text("table_open"),
            postgresql_concurrently=True,
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        op.drop_index(NAME, table_name="seats")
        with op.batch_alter_table("seats") as batch:
            batch.drop_column("table_open")
        return
    with op.get_context().autocommit_block():
        op.drop_index(NAME, table_name="seats", postgresql_concurrently=True)
    op.drop_column("seats", "table_open")
