"""A table's expiration time, and what a table snapshot was taken of

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07

BigQuery's table expiration (``OPTIONS (expiration_timestamp = ...)``): a table is dropped
at ``expires_on`` and spends its time travel, then its fail-safe week, as any dropped table
(SPEC R10, R12, R27); a schema's ``table_expiration_days`` (BigQuery's dataset option
``default_table_expiration_days``) gives each table created in it, from then on, an
expiration that many days after its creation. A table snapshot (``CREATE SNAPSHOT
TABLE``) is a read-only clone: ``snapshot_of`` is the table incarnation it was taken of,
``snapshot_time`` the instant.
NULL: a table that never expires, a table that is no snapshot.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rewind.catalog.models import UtcDateTime

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("objects", sa.Column("expires_on", UtcDateTime(), nullable=True))
    op.add_column("objects", sa.Column("snapshot_of", sa.BigInteger(), nullable=True))
    op.add_column("objects", sa.Column("snapshot_time", UtcDateTime(), nullable=True))
    op.add_column("objects", sa.Column("table_expiration_days", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("objects") as batch:
        batch.drop_column("table_expiration_days")
        batch.drop_column("snapshot_time")
        batch.drop_column("snapshot_of")
        batch.drop_column("expires_on")
