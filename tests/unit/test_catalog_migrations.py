"""The catalog's schema: Alembic migrates a new or older catalog; a current one opens
without importing Alembic (0.15 s of every ``rewind`` call)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from rewind.catalog import db

pytestmark = pytest.mark.unit

OPEN_AGAIN = """
import sys
from rewind.catalog import db
db.migrate(db.make_engine(sys.argv[1]))
print("alembic" in sys.modules)
"""


def test_head_revision_is_alembic_s_head() -> None:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(db._alembic_config()).get_current_head()
    assert head == db.HEAD_REVISION


def test_a_new_catalog_is_migrated_and_a_current_one_opens_without_alembic(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    db.migrate(db.make_engine(url))
    with db.make_engine(url).connect() as conn:
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert version == db.HEAD_REVISION
        assert conn.execute(text("SELECT count(*) FROM objects")).scalar() is not None
    again = subprocess.run(
        [sys.executable, "-c", OPEN_AGAIN, url], capture_output=True, text=True, check=True
    )
    assert again.stdout.strip() == "False"


def test_an_older_catalog_is_brought_to_the_head(tmp_path: Path) -> None:
    from alembic import command

    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    engine = db.make_engine(url)
    cfg = db._alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0008")
    db.migrate(engine)
    with engine.connect() as conn:
        revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert revision == db.HEAD_REVISION
        assert conn.execute(text("SELECT count(*) FROM functions")).scalar() == 0
