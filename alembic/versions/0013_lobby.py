"""lobby: seeks and challenges (one row each, paired rows naming their table), bot accounts
marked as such, and players found by name

Revision ID: 0013_lobby
Revises: 0012_tournaments
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_lobby"
down_revision: str | None = "0012_tournaments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Not in a batch: SQLite would copy ``players`` into a new table, and dropping the old one
    # fails while other tables (the tournaments' entrants) hold foreign keys to it.
    op.add_column(
        "players", sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.create_index("ix_players_name", "players", [sa.text("lower(name)")], unique=False)
    op.create_table(
        "seeks",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("player_id", sa.String(32), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("target_id", sa.String(32), sa.ForeignKey("players.id")),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("clock", sa.JSON()),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("deck_design", sa.String(32), nullable=False, server_default="classic"),
        sa.Column("speed", sa.String(16), nullable=False),
        sa.Column("pool", sa.String(120), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rating_min", sa.Float()),
        sa.Column("rating_max", sa.Float()),
        sa.Column("bot_after", sa.Float()),
        sa.Column("bot_offered_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32)),
        sa.Column("table_id", sa.String(32)),
        sa.Column("opponent_id", sa.String(32)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("alive_until", sa.DateTime(timezone=True)),
        sa.Column("closed_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_seeks_open", "seeks", ["status", "mode", "pool"], unique=False)
    op.create_index("ix_seeks_player", "seeks", ["player_id", "status"], unique=False)
    op.create_index("ix_seeks_target", "seeks", ["target_id", "status"], unique=False)
    op.create_index("ix_seeks_table", "seeks", ["table_id"], unique=False)


def downgrade() -> None:
    op.drop_table("seeks")
    op.drop_index("ix_players_name", table_name="players")
    # Both databases drop a column in place (SQLite since 3.35), keeping the foreign keys.
    op.execute("ALTER TABLE players DROP COLUMN bot")
