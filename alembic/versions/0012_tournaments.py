"""tournaments: arena and Swiss tournaments, their entrants and pairings

Revision ID: 0012_tournaments
Revises: 0011_reviews
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_tournaments"
down_revision: str | None = "0011_reviews"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("organiser_id", sa.String(32), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("format", sa.String(8), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("clock", sa.JSON()),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("admits", sa.String(8), nullable=False),
        sa.Column("capacity", sa.Integer(), nullable=False),
        sa.Column("starts_at", WHEN, nullable=False),
        sa.Column("duration_seconds", sa.Integer()),
        sa.Column("rounds", sa.Integer()),
        sa.Column("round_days", sa.Float()),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("round_deadline", WHEN),
        sa.Column("ends_at", WHEN),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("finished_at", WHEN),
        sa.Column("lease_owner", sa.String(64)),
        sa.Column("lease_until", WHEN),
    )
    op.create_index("ix_tournaments_organiser_id", "tournaments", ["organiser_id"])
    op.create_index("ix_tournaments_status", "tournaments", ["status"])
    op.create_table(
        "tournament_entrants",
        sa.Column("tournament_id", sa.String(32), sa.ForeignKey("tournaments.id"),
                  primary_key=True),
        sa.Column("entrant_id", sa.String(40), primary_key=True),
        sa.Column("player_id", sa.String(32), sa.ForeignKey("players.id")),
        sa.Column("bot_level", sa.String(32)),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("joined_at", WHEN, nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
    )  # fmt: skip
    op.create_index("ix_tournament_entrants_player_id", "tournament_entrants", ["player_id"])
    op.create_table(
        "tournament_pairings",
        sa.Column("tournament_id", sa.String(32), sa.ForeignKey("tournaments.id"),
                  primary_key=True),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("seat0", sa.String(40), nullable=False),
        sa.Column("seat1", sa.String(40)),
        sa.Column("table_id", sa.String(32)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("winner", sa.String(40)),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("finished_at", WHEN),
    )  # fmt: skip
    op.create_index("ix_tournament_pairings_table_id", "tournament_pairings", ["table_id"])


def downgrade() -> None:
    op.drop_index("ix_tournament_pairings_table_id", table_name="tournament_pairings")
    op.drop_table("tournament_pairings")
    op.drop_index("ix_tournament_entrants_player_id", table_name="tournament_entrants")
    op.drop_table("tournament_entrants")
    op.drop_index("ix_tournaments_status", table_name="tournaments")
    op.drop_index("ix_tournaments_organiser_id", table_name="tournaments")
    op.drop_table("tournaments")
