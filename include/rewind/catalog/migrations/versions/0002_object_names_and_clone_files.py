"""object names and clone files

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rewind.catalog.models import UtcDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "clone_files",
        sa.Column("clone_id", sa.BigInteger(), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("source_id", sa.BigInteger(), nullable=False),
        sa.Column("source_path", sa.String(length=1024), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("clone_id", "path"),
    )
    with op.batch_alter_table("clone_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_clone_files_source_id"), ["source_id"], unique=False)

    op.create_table(
        "object_names",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("object_id", sa.BigInteger(), nullable=False),
        sa.Column("valid_from", UtcDateTime(), nullable=False),
        sa.Column("parent_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("object_names", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_object_names_object_id"), ["object_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_object_names_parent_id"), ["parent_id"], unique=False)
    # Objects created before this revision: their current place since creation.
    op.execute(
        "INSERT INTO object_names (object_id, valid_from, parent_id, name) "
        "SELECT id, created_on, parent_id, name FROM objects"
    )


def downgrade() -> None:
    with op.batch_alter_table("object_names", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_object_names_parent_id"))
        batch_op.drop_index(batch_op.f("ix_object_names_object_id"))

    op.drop_table("object_names")
    with op.batch_alter_table("clone_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_clone_files_source_id"))

    op.drop_table("clone_files")
