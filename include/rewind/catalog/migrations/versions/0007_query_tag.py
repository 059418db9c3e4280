"""query tag: who outside Rewind asked for a statement

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24

SPEC R36, R37: a statement run for an Airflow DAG run carries the Airflow user who
triggered it and the run (Snowflake's QUERY_HISTORY.QUERY_TAG), so QUERY_HISTORY names
the person behind a restore or a recovery, and behind a refused one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("statements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("query_tag", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("statements", schema=None) as batch_op:
        batch_op.drop_column("query_tag")
