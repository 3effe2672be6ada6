"""webhook health: when a player's webhook started failing, why, and when it was turned off;
an index to purge old finished notifications by their finish time

Revision ID: 0009_webhook_health
Revises: 0008_push
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_webhook_health"
down_revision: str | None = "0008_push"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notification_settings") as batch:
        batch.add_column(sa.Column("webhook_failing_since", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("webhook_error", sa.Text()))
        batch.add_column(sa.Column("webhook_disabled_at", sa.DateTime(timezone=True)))
    op.create_index("ix_outbox_finished", "outbox", ["finished_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_outbox_finished", table_name="outbox")
    with op.batch_alter_table("notification_settings") as batch:
        batch.drop_column("webhook_disabled_at")
        batch.drop_column("webhook_error")
        batch.drop_column("webhook_failing_since")
