"""A table's Delta configuration as of the lifecycle's cursor

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26

The nightly quality step checks that every external table's Delta retention properties
still cover its time travel (SPEC R42). It read them by replaying the table's log up to the
cursor every night: on an object store a LIST of ``_delta_log`` and a GET per commit since
the last checkpoint, however little changed (against SPEC R50). The lifecycle's sync now
records the configuration of the last ``metaData`` action it read beside the cursor; NULL
where it has not read one yet (a home from before this revision, until the table's log
is replayed once).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("log_cursors", sa.Column("configuration", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("log_cursors") as batch:
        batch.drop_column("configuration")
