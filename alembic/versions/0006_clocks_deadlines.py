"""clocks: a table's time control, each seat's time and the pending deadline

Revision ID: 0006_clocks
Revises: 0005_tokens
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0006_clocks'
down_revision: str | None = '0005_tokens'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'clocks',
        sa.Column('table_id', sa.String(length=32), nullable=False),
        sa.Column('state', sa.JSON(), nullable=False),
        sa.Column('deadline', sa.DateTime(timezone=True), nullable=True),
        sa.Column('lease_owner', sa.String(length=64), nullable=True),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['table_id'], ['tables.id']),
        sa.PrimaryKeyConstraint('table_id'),
    )
    op.create_index('ix_clocks_deadline', 'clocks', ['deadline'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_clocks_deadline', table_name='clocks')
    op.drop_table('clocks')
