"""lifecycle state

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rewind.catalog.models import UtcDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "file_states",
        sa.Column("table_id", sa.BigInteger(), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("added_version", sa.BigInteger(), nullable=False),
        sa.Column("removed_version", sa.BigInteger(), nullable=True),
        sa.Column("removed_at", UtcDateTime(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("left_time_travel_at", UtcDateTime(), nullable=True),
        sa.Column("purge_at", UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("table_id", "path"),
    )
    with op.batch_alter_table("file_states", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_file_states_purge_at"), ["purge_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_file_states_state"), ["state"], unique=False)

    op.create_table(
        "lifecycle_runs",
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("now", UtcDateTime(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("run_id"),
    )
    with op.batch_alter_table("lifecycle_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lifecycle_runs_now"), ["now"], unique=False)

    op.create_table(
        "log_cursors",
        sa.Column("table_id", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id"),
    )


def downgrade() -> None:
    op.drop_table("log_cursors")
    with op.batch_alter_table("lifecycle_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lifecycle_runs_now"))

    op.drop_table("lifecycle_runs")
    with op.batch_alter_table("file_states", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_file_states_state"))
        batch_op.drop_index(batch_op.f("ix_file_states_purge_at"))

    op.drop_table("file_states")
