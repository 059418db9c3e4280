"""Actions of Airflow runs, each at most once

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25

A restore, clone, undrop or fail-safe recovery that an Airflow run asked for commits at
most once, whatever re-runs its task (a retry, a clear, "mark success" upstream): the
row keyed by DAG, run and action is written in the same transaction as the action's
statement, so a re-run finds it and reports the action instead of repeating it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_actions",
        sa.Column("dag_id", sa.String(250), primary_key=True),
        sa.Column("run_id", sa.String(250), primary_key=True),
        sa.Column("action", sa.String(64), primary_key=True),
        sa.Column("query_id", sa.String(36), nullable=False),
        sa.Column("user_name", sa.String(255), nullable=False),
        sa.Column("done_at", sa.DateTime(), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("run_actions")
