"""access control: roles, users, object grants

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21

SPEC R37: ``object_grants`` holds privileges on object incarnations granted to roles;
``role_grants`` learns when and by whom a role was granted (SHOW GRANTS TO USER).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rewind.catalog.models import UtcDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "object_grants",
        sa.Column("object_id", sa.BigInteger(), nullable=False),
        sa.Column("privilege", sa.String(length=32), nullable=False),
        sa.Column("role_name", sa.String(length=255), nullable=False),
        sa.Column("granted_by", sa.String(length=255), nullable=False),
        sa.Column("created_on", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["object_id"], ["objects.id"]),
        sa.ForeignKeyConstraint(["role_name"], ["roles.name"]),
        sa.PrimaryKeyConstraint("object_id", "privilege", "role_name"),
    )
    with op.batch_alter_table("object_grants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_object_grants_role_name"), ["role_name"], unique=False)
    with op.batch_alter_table("role_grants", schema=None) as batch_op:
        batch_op.add_column(sa.Column("created_on", UtcDateTime(), nullable=True))
        batch_op.add_column(sa.Column("granted_by", sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("role_grants", schema=None) as batch_op:
        batch_op.drop_column("granted_by")
        batch_op.drop_column("created_on")
    with op.batch_alter_table("object_grants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_object_grants_role_name"))
    op.drop_table("object_grants")
