"""The version a table's log clean-up last kept

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27

The nightly purge step cleans up the Delta log of Rewind's own tables the way Delta does
(the entries before a checkpoint), once no version before that checkpoint can be read in
time travel or recovered from fail-safe (issue 28, SPEC R12, R42). ``log_cutoff`` is the
oldest version the last clean-up kept readable (NULL: never cleaned): a table is looked at
again, with one listing of its log, only once its history has aged another checkpoint
interval past it, so a night with nothing changed makes no request for it (SPEC R32, R50).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("log_cursors", sa.Column("log_cutoff", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("log_cursors") as batch:
        batch.drop_column("log_cutoff")
