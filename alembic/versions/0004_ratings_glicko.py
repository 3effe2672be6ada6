"""ratings: rated tables, a Glicko-2 rating per player and category, and each match's change

Revision ID: 0004_ratings
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op



revision: str = '0004_ratings'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('tables', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('rated', sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        'ratings',
        sa.Column('player_id', sa.String(length=32), nullable=False),
        sa.Column('category', sa.String(length=32), nullable=False),
        sa.Column('rating', sa.Float(), nullable=False),
        sa.Column('deviation', sa.Float(), nullable=False),
        sa.Column('volatility', sa.Float(), nullable=False),
        sa.Column('games', sa.Integer(), nullable=False),
        sa.Column('wins', sa.Integer(), nullable=False),
        sa.Column('losses', sa.Integer(), nullable=False),
        sa.Column('last_played_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['player_id'], ['players.id']),
        sa.PrimaryKeyConstraint('player_id', 'category'),
    )
    op.create_index(
        'ix_ratings_leaderboard',
        'ratings',
        ['category', 'rating', 'player_id', 'deviation', 'last_played_at'],
        unique=False,
    )
    op.create_table(
        'rating_changes',
        sa.Column('table_id', sa.String(length=32), nullable=False),
        sa.Column('match_number', sa.Integer(), nullable=False),
        sa.Column('player_id', sa.String(length=32), nullable=False),
        sa.Column('category', sa.String(length=32), nullable=False),
        sa.Column('result', sa.String(length=8), nullable=False),
        sa.Column('rating_before', sa.Float(), nullable=False),
        sa.Column('deviation_before', sa.Float(), nullable=False),
        sa.Column('rating_after', sa.Float(), nullable=False),
        sa.Column('deviation_after', sa.Float(), nullable=False),
        sa.Column('volatility_after', sa.Float(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['player_id'], ['players.id']),
        sa.PrimaryKeyConstraint('table_id', 'match_number', 'player_id'),
    )
    op.create_index(
        'ix_rating_changes_player', 'rating_changes', ['player_id', 'created_at'], unique=False
    )


def downgrade() -> None:
    op.drop_index('ix_rating_changes_player', table_name='rating_changes')
    op.drop_table('rating_changes')
    op.drop_index('ix_ratings_leaderboard', table_name='ratings')
    op.drop_table('ratings')
    with op.batch_alter_table('tables', schema=None) as batch_op:
        batch_op.drop_column('rated')
