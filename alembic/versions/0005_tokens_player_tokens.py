"""tokens: a player's bearer tokens in their own table (list, rotate, revoke, expire)

Each player's one token hash moves from ``players.token_hash`` into ``tokens`` (its id is the
player's id), so every token issued before keeps working.

Revision ID: 0005_tokens
Revises: 0004_ratings
Create Date: 2026-11-30
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op

revision: str = '0005_tokens'
down_revision: str | None = '0004_ratings'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'tokens',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('player_id', sa.String(length=32), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('label', sa.String(length=40), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['player_id'], ['players.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash'),
    )
    op.create_index('ix_tokens_player_id', 'tokens', ['player_id'], unique=False)
    op.execute(
        'INSERT INTO tokens (id, player_id, token_hash, created_at) '
        'SELECT id, id, token_hash, created_at FROM players'
    )
    with _foreign_keys_off():
        with op.batch_alter_table('players', schema=None) as batch_op:
            batch_op.drop_column('token_hash')


@contextmanager
def _foreign_keys_off() -> Iterator[None]:
    """SQLite rebuilds ``players`` to drop a column (DROP TABLE, then a rename): with foreign
    keys on, the DROP fails for the rows that refer to it. The pragma only takes effect
    outside a transaction, so the work so far is committed first (the app's connections begin
    their transactions explicitly: ``app.store.db``)."""
    bind = op.get_bind()
    if bind.dialect.name != 'sqlite':
        yield
        return
    bind.exec_driver_sql('COMMIT')
    bind.exec_driver_sql('PRAGMA foreign_keys=OFF')
    bind.exec_driver_sql('BEGIN IMMEDIATE')
    yield
    problems = bind.exec_driver_sql('PRAGMA foreign_key_check').fetchall()
    assert not problems, problems
    bind.exec_driver_sql('COMMIT')
    bind.exec_driver_sql('PRAGMA foreign_keys=ON')
    bind.exec_driver_sql('BEGIN IMMEDIATE')


def downgrade() -> None:
    # A player keeps one token: the oldest (the others are lost).
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.add_column(sa.Column('token_hash', sa.String(length=64), nullable=True))
    op.execute(
        'UPDATE players SET token_hash = (SELECT t.token_hash FROM tokens t '
        'WHERE t.player_id = players.id ORDER BY t.created_at LIMIT 1)'
    )
    op.drop_index('ix_tokens_player_id', table_name='tokens')
    op.drop_table('tokens')
    with _foreign_keys_off():
        with op.batch_alter_table('players', schema=None) as batch_op:
            batch_op.alter_column('token_hash', nullable=False)
            batch_op.create_unique_constraint('uq_players_token_hash', ['token_hash'])
