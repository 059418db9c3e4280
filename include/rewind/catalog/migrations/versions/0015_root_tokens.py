"""The token a catalog writes into its warehouse and fail-safe store, so that no other
catalog uses them

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06

Two Rewind homes pointed at one warehouse give their tables the same ids, and their
system tables mix; pointed at one fail-safe store, one's purge deletes the other's files.
A catalog's kept root gets a random ``token``, written once into the root's marker file
(``<root>/_rewind_catalog.json``); a catalog whose token is not the marker's is refused the
root (``rewind.home.own_root``, SPEC R4, R12, R44, R48); the system root takes the
warehouse's token. NULL: a catalog from before this revision, given its tokens on its next
connection.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("storage_roots", sa.Column("token", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("storage_roots") as batch:
        batch.drop_column("token")
