"""rematch offer: the seat that asked for a rematch, until the other seat answers

Revision ID: 0010_rematch_offer
Revises: 0009_webhook_health
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_rematch_offer"
down_revision: str | None = "0009_webhook_health"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("rematch_offer", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("rematch_offer")
