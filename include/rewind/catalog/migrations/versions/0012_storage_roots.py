"""Where a catalog's own tables live

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26

A table Rewind creates lives at ``<warehouse>/<table id>/``: its location is computed from
the warehouse root, never stored (SPEC R4). A home whose ``REWIND_WAREHOUSE_URI`` changes
after it created tables would find none of them. The warehouse the catalog's tables were
created under is recorded here (``<home>/warehouse`` when it is the home's own, so that a
home copied or moved keeps working) and a session that names another one is refused while
any of those tables is still in the catalog.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "storage_roots",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("uri", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("storage_roots")
