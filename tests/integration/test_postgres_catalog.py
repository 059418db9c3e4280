"""The catalog on a real PostgreSQL server (REWIND_CATALOG_URL), as the deployment runs it.

On the test process's throw-away server (tests/postgres_server.py: initdb + pg_ctl on a
Unix socket, as the ``postgres`` user when run as root), a database of its own, the test
drives the same statements as on SQLite:
migrations, the partial unique index on live names (SPEC R3), DROP/UNDROP (R21), time
travel (R16), a clone (R24) and a lifecycle run (R29).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rewind
from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import RewindError
from rewind.runner import run_lifecycle

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def postgres_url(postgres: Any) -> str:
    return str(postgres.create_database("rewind_catalog"))


def test_the_core_runs_on_a_postgres_catalog(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spark: object
) -> None:
    monkeypatch.setenv("REWIND_CATALOG_URL", postgres_url)
    home = tmp_path / "home"

    def at(day: int) -> rewind.connection.Connection:
        return rewind.connect(home=home, now=f"2026-03-{day:02d}T00:00:00+00:00")

    day1 = at(1).sql(
        "CREATE DATABASE PG; CREATE TABLE T (A INT, B VARCHAR); "
        "INSERT INTO T VALUES (1, 'one'), (2, 'two')"
    )
    insert = day1[-1].query_id
    conn = at(2)
    conn.sql(
        f"USE PG; DELETE FROM T WHERE A = 1; CREATE TABLE C CLONE T BEFORE(STATEMENT => '{insert}')"
    )
    with pytest.raises(RewindError) as error:  # SPEC R3 through the partial unique index
        conn.sql("CREATE TABLE T (X INT)")
    assert error.value.code == "OBJECT_ALREADY_EXISTS"
    assert conn.sql(f"SELECT A FROM T AT(STATEMENT => '{insert}') ORDER BY A")[0].rows == [[1], [2]]
    assert conn.sql("SELECT count(*) FROM C")[0].rows == [[0]]
    conn.sql("DROP TABLE T; CREATE TABLE T (X INT); ALTER TABLE T RENAME TO T2; UNDROP TABLE T")
    assert conn.sql("SELECT A FROM T ORDER BY A")[0].rows == [[2]]
    history = conn.sql("SHOW TABLES HISTORY")[0]
    assert sorted(history.column("name")) == ["C", "T", "T2"]
    steps = run_lifecycle(Config.load(home=home), parse_timestamp("2026-03-04T00:00:00+00:00"))
    assert steps[1]["files_moved"] == 1  # the DELETE's old file left time travel (R12)
    metrics = at(4).sql(
        "SELECT TABLE_NAME, FAILSAFE_BYTES FROM "
        "REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS WHERE TABLE_NAME = 'T'"
    )
    assert metrics[0].rows[0][1] > 0


def test_access_control_on_a_postgres_catalog(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R37 on Postgres: migration 0004's grants, SHOW filtering, DROP ROLE."""
    monkeypatch.setenv("REWIND_CATALOG_URL", postgres_url)
    home = tmp_path / "home"
    now = "2026-03-01T00:00:00+00:00"
    admin = rewind.connect(home=home, now=now)
    admin.sql(
        "CREATE DATABASE ACL; CREATE TABLE T (A INT); CREATE ROLE READER; "
        "CREATE USER RITA DEFAULT_ROLE = READER; GRANT ROLE READER TO USER RITA; "
        "GRANT SELECT ON TABLE ACL.PUBLIC.T TO ROLE READER"
    )
    rita = rewind.connect(home=home, user="RITA", now=now)
    assert rita.sql("SHOW TABLES IN SCHEMA ACL.PUBLIC")[0].column("name") == ["T"]
    assert rita.sql("SHOW GRANTS TO ROLE READER")[0].column("name") == ["ACL.PUBLIC.T"]
    with pytest.raises(RewindError) as error:
        rita.sql("DROP TABLE ACL.PUBLIC.T")
    assert error.value.code == "ACCESS_DENIED"
    admin.sql("DROP ROLE READER")
    assert rita.sql("SHOW DATABASES")[0].rows == []  # now PUBLIC, which reaches nothing
