"""When the lifecycle last listed a table's directory for leftover files

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27

The lifecycle lists a local table's directory for leftover files (a failed writer's files
that no commit names) only when the table got commits, or when the last validation found
one it could not have seen (SPEC R32). ``listed_at`` is the machine's time that listing
began (NULL: no listing recorded): the validation tells a leftover written since, which no
run could have tracked yet, from one a listing missed (:mod:`rewind.quality.facts`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rewind.catalog.models import UtcDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("log_cursors", sa.Column("listed_at", UtcDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("log_cursors") as batch:
        batch.drop_column("listed_at")
