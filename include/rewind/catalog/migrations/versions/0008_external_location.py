"""external tables: a governed Delta table at a location of its own

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24

SPEC R41: ``CREATE EXTERNAL TABLE ... LOCATION = '<path>' TABLE_FORMAT = DELTA`` puts an
existing Delta table under Rewind where it is. Its resolved location is stored with the
table incarnation (NULL: a table Rewind created under ``warehouse/<id>/``); a location
is governed by at most one live or dropped incarnation at a time, checked on registration.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("objects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("location", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("objects", schema=None) as batch_op:
        batch_op.drop_column("location")
