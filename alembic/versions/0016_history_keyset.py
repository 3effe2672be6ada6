"""history keyset: a player's finished matches are paged newest first on one index per seat

Revision ID: 0016_history_keyset
Revises: 0015_big_data_indexes
Create Date: 2026-12-03

``GET /v1/players/me/matches`` returns a page (``limit``, ``before``) instead of every match the
player ever finished. Each seat's index is (the seat's player, finished at, table id, match
number): the page is walked on it from the keyset on, newest first, without sorting the player's
whole history. The one-column indexes they replace are their prefixes, so they go.

On PostgreSQL the indexes are built, and the old ones dropped, ``CONCURRENTLY`` outside any
transaction (``autocommit_block``), as in 0015: finishing a match writes to this table, and a
plain build would stop every match's end for as long as it lasts. The new indexes are built
before the old ones go, so a history read always has one. A failed build leaves an INVALID
index: ``DROP INDEX CONCURRENTLY`` it and run the migration again. On SQLite all of it runs
plainly.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016_history_keyset"
down_revision: str | None = "0015_big_data_indexes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "finished_matches"
# (new index, its columns, the index it replaces) for each seat.
SEATS = tuple(
    (
        f"ix_finished_matches_seat{s}_history",
        [f"seat{s}_player_id", "finished_at", "table_id", "match_number"],
        f"ix_finished_matches_seat{s}_player_id",
    )
    for s in (0, 1)
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for name, columns, old in SEATS:
            op.create_index(name, TABLE, columns)
            op.drop_index(old, table_name=TABLE)
        return
    with op.get_context().autocommit_block():
        for name, columns, _ in SEATS:
            op.create_index(name, TABLE, columns, postgresql_concurrently=True)
        for _, _, old in SEATS:
            op.drop_index(old, table_name=TABLE, postgresql_concurrently=True)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for name, columns, old in SEATS:
            op.create_index(old, TABLE, columns[:1])
            op.drop_index(name, table_name=TABLE)
        return
    with op.get_context().autocommit_block():
        for _, columns, old in SEATS:
            op.create_index(old, TABLE, columns[:1], postgresql_concurrently=True)
        for name, _, _ in SEATS:
            op.drop_index(name, table_name=TABLE, postgresql_concurrently=True)
