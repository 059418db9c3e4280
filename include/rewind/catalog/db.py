"""Engine creation and Alembic migrations for the catalog."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

MIGRATIONS = Path(__file__).parent / "migrations"
# The newest revision under migrations/versions (a unit test checks that it is Alembic's
# head): a catalog already there opens without importing Alembic, 0.15 s of every call.
HEAD_REVISION = "0017"
SQLITE_TIMEOUT_S = 30.0


def _alembic_config() -> AlembicConfig:
    from alembic.config import Config as AlembicConfig

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


def _current_revision(engine: Engine) -> str | None:
    """The catalog's Alembic revision (None: an empty catalog)."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if revision is None else str(revision)


def migrate(engine: Engine) -> None:
    """Bring the catalog schema to the newest Alembic revision (cheap when already there)."""
    if _current_revision(engine) == HEAD_REVISION:
        return
    from alembic import command

    cfg = _alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")  # a no-op where another process migrated meanwhile
