"""record indexes: a player's matches won and lost are counted on two narrow indexes

Revision ID: 0019_record_indexes
Revises: 0018_open_seats
Create Date: 2026-12-03

A profile shows the player's matches won and lost (``ratings.record_of``). That count read
every finished match of theirs, row by row (a BitmapOr of the two seats' history indexes, then
the rows, for the winner): 32-50 ms warm and half a second cold for the busiest player of a
database with a million finished matches (7,991 matches). ``ix_finished_matches_seat0_record``
and ``..._seat1_record`` hold (the seat's player, the winner): the count becomes four
index-only scans of the player's entries, a few pages however long the history.

On PostgreSQL they are built ``CONCURRENTLY`` outside any transaction (``autocommit_block``),
as in 0015 to 0018: every match that ends writes a row. A failed build leaves an INVALID
index: ``DROP INDEX CONCURRENTLY`` it and run the migration again. On SQLite they are built
plainly.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019_record_indexes"
down_revision: str | None = "0018_open_seats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAMES = {s: f"ix_finished_matches_seat{s}_record" for s in (0, 1)}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for s, name in NAMES.items():
            op.create_index(name, "finished_matches", [f"seat{s}_player_id", "winner"])
        return
    with op.get_context().autocommit_block():
        for s, name in NAMES.items():
            op.create_index(
                name,
                "finished_matches",
                [f"seat{s}_player_id", "winner"],
                postgresql_concurrently=True,
            )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for name in NAMES.values():
            op.drop_index(name, table_name="finished_matches")
        return
    with op.get_context().autocommit_block():
        for name in NAMES.values():
            op.drop_index(name, table_name="finished_matches", postgresql_concurrently=True)
