"""ladder: how long a bot account entered in the bot ladder stays available

Revision ID: 0014_ladder
Revises: 0013_lobby
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_ladder"
down_revision: str | None = "0013_lobby"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournament_entrants") as batch:
        batch.add_column(sa.Column("available_until", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("tournament_entrants") as batch:
        batch.drop_column("available_until")
