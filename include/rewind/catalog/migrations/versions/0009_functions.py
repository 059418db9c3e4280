"""SQL user-defined functions of a schema

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

``CREATE FUNCTION name(arg type, ...) RETURNS type AS '<expression>'`` (Snowflake's SQL
UDFs, scalar expressions over their arguments): the function is inlined into the
statements that call it, so authorization, audit lineage and execution see its body.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "functions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("schema_id", sa.BigInteger(), nullable=False, index=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("arity", sa.Integer(), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("returns", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("owner_role", sa.String(255), nullable=False),
        sa.Column("created_on", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("schema_id", "name", "arity"),
    )


def downgrade() -> None:
    op.drop_table("functions")
