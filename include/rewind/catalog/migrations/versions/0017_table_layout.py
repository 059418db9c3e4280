"""A table's clustering key and partitioning, as declared

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07

Snowflake's ``CLUSTER BY (a, b)`` (CREATE TABLE, ALTER TABLE) and BigQuery's ``PARTITION BY
DATE(ts) CLUSTER BY a``: layout hints that change no answer, recorded as written (their
expressions in Snowflake's SQL, names folded as columns are, SPEC R4) and shown where each
product shows them (SHOW TABLES' cluster_by, INFORMATION_SCHEMA). The files are not laid
out by them: Rewind's writes stay the same.
NULL: none declared.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("objects", sa.Column("cluster_by", sa.Text(), nullable=True))
    op.add_column("objects", sa.Column("partition_by", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("objects") as batch:
        batch.drop_column("partition_by")
        batch.drop_column("cluster_by")
