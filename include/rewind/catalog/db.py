"""Engine creation and Alembic migrations for the catalog."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, make_url

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_TIMEOUT_S = 30.0


def _alembic_config() -> AlembicConfig:
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets foreign keys, WAL and a busy timeout.

    The timeout (30 s, or the URL's ``?timeout=SECONDS``) bounds how long a statement
    waits for a catalog another process holds locked before it fails (SPEC R39).
    """
    if url.startswith("sqlite"):
        timeout = float(str(make_url(url).query.get("timeout", SQLITE_TIMEOUT_S)))
        engine = create_engine(url, connect_args={"timeout": timeout})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Bring the catalog schema to the newest Alembic revision (cheap when already there)."""
    cfg = _alembic_config()
    head = ScriptDirectory.from_config(cfg).get_current_head()
    with engine.begin() as conn:
        if MigrationContext.configure(conn).get_current_revision() == head:
            return
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
