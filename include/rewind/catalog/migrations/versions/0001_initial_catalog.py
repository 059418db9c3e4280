"""initial catalog

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rewind.catalog.models import UtcDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "account_parameters",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "objects",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("parent_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("is_transient", sa.Boolean(), nullable=False),
        sa.Column("retention_days", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("owner_role", sa.String(length=255), nullable=False),
        sa.Column("created_on", UtcDateTime(), nullable=False),
        sa.Column("created_by", sa.String(length=36), nullable=False),
        sa.Column("dropped_on", UtcDateTime(), nullable=True),
        sa.Column("dropped_retention_days", sa.Integer(), nullable=True),
        sa.Column("dropped_with", sa.BigInteger(), nullable=True),
        sa.Column("columns", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("objects", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_objects_parent_id"), ["parent_id"], unique=False)
        batch_op.create_index(
            "uq_objects_live_name",
            ["parent_id", "kind", "name"],
            unique=True,
            sqlite_where=sa.text("dropped_on IS NULL"),
            postgresql_where=sa.text("dropped_on IS NULL"),
        )

    op.create_table(
        "roles",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("created_on", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "statement_objects",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.String(length=36), nullable=False),
        sa.Column("object_id", sa.BigInteger(), nullable=False),
        sa.Column("access", sa.String(length=16), nullable=False),
        sa.Column("operation", sa.String(length=16), nullable=True),
        sa.Column("version", sa.BigInteger(), nullable=True),
        sa.Column("columns", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("statement_objects", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_statement_objects_object_id"), ["object_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_statement_objects_query_id"), ["query_id"], unique=False
        )

    op.create_table(
        "statements",
        sa.Column("query_id", sa.String(length=36), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("user_name", sa.String(length=255), nullable=False),
        sa.Column("role_name", sa.String(length=255), nullable=False),
        sa.Column("start_time", UtcDateTime(), nullable=False),
        sa.Column("end_time", UtcDateTime(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error_code", sa.String(length=64), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("parent_query_id", sa.String(length=36), nullable=True),
        sa.PrimaryKeyConstraint("query_id"),
    )
    with op.batch_alter_table("statements", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_statements_start_time"), ["start_time"], unique=False)

    op.create_table(
        "table_versions",
        sa.Column("table_id", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("commit_time", UtcDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=36), nullable=False),
        sa.Column("operation", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("table_id", "version"),
    )
    with op.batch_alter_table("table_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_table_versions_query_id"), ["query_id"], unique=False)

    op.create_table(
        "users",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("default_role", sa.String(length=255), nullable=False),
        sa.Column("created_on", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "role_grants",
        sa.Column("role_name", sa.String(length=255), nullable=False),
        sa.Column("user_name", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["role_name"],
            ["roles.name"],
        ),
        sa.ForeignKeyConstraint(
            ["user_name"],
            ["users.name"],
        ),
        sa.PrimaryKeyConstraint("role_name", "user_name"),
    )


def downgrade() -> None:

    op.drop_table("role_grants")
    op.drop_table("users")
    with op.batch_alter_table("table_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_table_versions_query_id"))

    op.drop_table("table_versions")
    with op.batch_alter_table("statements", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_statements_start_time"))

    op.drop_table("statements")
    with op.batch_alter_table("statement_objects", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_statement_objects_query_id"))
        batch_op.drop_index(batch_op.f("ix_statement_objects_object_id"))

    op.drop_table("statement_objects")
    op.drop_table("roles")
    with op.batch_alter_table("objects", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_objects_live_name",
            sqlite_where=sa.text("dropped_on IS NULL"),
            postgresql_where=sa.text("dropped_on IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_objects_parent_id"))

    op.drop_table("objects")
    op.drop_table("account_parameters")
