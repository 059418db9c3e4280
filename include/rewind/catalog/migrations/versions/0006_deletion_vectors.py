"""deletion vectors: the vector file a data file carries

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

SPEC R40, R43: another writer may attach a deletion vector to a data file. The vector's
file is a file of the table like any other (time travel, fail-safe, metrics); it leaves
the table when no live data file carries it any more, so each data file's row names the
vector file it carries now.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("file_states", schema=None) as batch_op:
        batch_op.add_column(sa.Column("dv_path", sa.String(length=1024), nullable=True))
        batch_op.create_index(batch_op.f("ix_file_states_dv_path"), ["dv_path"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("file_states", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_file_states_dv_path"))
        batch_op.drop_column("dv_path")
