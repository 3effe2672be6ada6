"""finished matches: the bot level of each seat a bot held, so a history names the bot

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('finished_matches', schema=None) as batch_op:
        batch_op.add_column(sa.Column('seat0_bot_level', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('seat1_bot_level', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('finished_matches', schema=None) as batch_op:
        batch_op.drop_column('seat1_bot_level')
        batch_op.drop_column('seat0_bot_level')
