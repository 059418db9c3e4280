"""audit: column lineage and DDL properties

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21

SPEC R36: what ACCESS_HISTORY and QUERY_HISTORY show must be fixed when a statement
runs, because names and columns change later. ``statement_objects`` learns the object's
name then, whether the statement named it (``direct``) and the DDL ``properties``;
``statements`` learns its ``query_type``; ``column_lineage`` holds the source columns of
every column a statement wrote. Rows logged before this revision keep NULL names.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("statement_objects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("object_name", sa.Text(), nullable=True))
        batch_op.add_column(
            sa.Column("direct", sa.Boolean(), nullable=False, server_default=sa.text("true"))
        )
        batch_op.add_column(sa.Column("properties", sa.JSON(), nullable=True))
    with op.batch_alter_table("statements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("query_type", sa.String(length=64), nullable=True))
    op.create_table(
        "column_lineage",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.String(length=36), nullable=False),
        sa.Column("target_id", sa.BigInteger(), nullable=False),
        sa.Column("target_column", sa.String(length=255), nullable=False),
        sa.Column("source_id", sa.BigInteger(), nullable=False),
        sa.Column("source_column", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("column_lineage", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_column_lineage_query_id"), ["query_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("column_lineage", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_column_lineage_query_id"))
    op.drop_table("column_lineage")
    with op.batch_alter_table("statements", schema=None) as batch_op:
        batch_op.drop_column("query_type")
    with op.batch_alter_table("statement_objects", schema=None) as batch_op:
        batch_op.drop_column("properties")
        batch_op.drop_column("direct")
        batch_op.drop_column("object_name")
