"""SPEC R38 (with R9, R12, R17, R37): no user-facing way reads data held in fail-safe.

The warehouse of :func:`build_world` holds two files in fail-safe: the file of T with
row 1 (deleted on day 2) and the file of GONE (dropped on day 2). T's window reaches
day 1 again (its database's retention was raised after the lifecycle moved the file,
R9), so the catalog alone would allow the points that name that file. Every way a user
could ask for it — points by timestamp, offset and statement, the BigQuery dialect,
clones of the table, its schema and its database, ``rewind restore``, UNDROP, SHOW ...
HISTORY, Spark's file-path table syntax, table functions, Java reflection, names that
look like paths, fail-safe commands run by a role other than ACCOUNTADMIN — is refused
with a stable code, changes nothing and opens none of the fail-safe files: each file's
access time is set before its modification time, so that any read moves it (relatime,
strictatime), and is compared after every attempt. The last test reads the store the
one allowed way, ACCOUNTADMIN recovery, and sees the access times move: the probe works.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from test_hostile_input import (
    Observer,
    World,
    assert_r39,
    at,
    copy_world,
    refuse,
    rows,
    run_cli,
)

from rewind.errors import RewindError

# One worker for the module: its module fixtures are built once.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("test_failsafe_reads")]

NOW = (4, 1)  # day 4, 01:00: after the lifecycle moved the files
V1, V2 = "2026-02-01T01:30:00+00:00", "2026-02-01T02:30:00+00:00"  # row 1 / rows 1 and 2
V3 = "2026-02-02T00:30:00+00:00"  # row 2 only: nothing of it is in fail-safe
UNAVAILABLE, NOT_FOUND = "TIME_TRAVEL_UNAVAILABLE", "OBJECT_NOT_FOUND"
UNSUPPORTED, DENIED = "UNSUPPORTED", "ACCESS_DENIED"


class AccessProbe:
    """Tells whether any file of a set was read since it was armed (access times)."""

    def __init__(self, files: list[Path]) -> None:
        assert files
        self.armed: dict[Path, int] = {}
        for file in files:
            stat = file.stat()
            os.utime(file, ns=(stat.st_mtime_ns - 60 * 10**9, stat.st_mtime_ns))
            self.armed[file] = file.stat().st_atime_ns

    def read(self) -> list[Path]:
        return [f for f, atime in self.armed.items() if f.stat().st_atime_ns != atime]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Iterator[World]:
    built = copy_world(tmp_path_factory, "failsafe_reads")
    admin = built.connect(*NOW)
    admin.sql(
        "CREATE ROLE ANALYST; CREATE USER ANA DEFAULT_ROLE = ANALYST; "
        "GRANT ROLE ANALYST TO USER ANA; GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST; "
        "GRANT SELECT ON TABLE D.PUBLIC.U TO ROLE ANALYST"
    )
    yield built
    built.close()


@pytest.fixture
def probe(world: World) -> Iterator[AccessProbe]:
    """Armed before each test; after it, no fail-safe file may have been read (R38)."""
    armed = AccessProbe(world.failsafe_files())
    yield armed
    assert armed.read() == []


@pytest.fixture(scope="module")
def values(world: World) -> dict[str, Any]:
    """What the statements below name: query ids, fail-safe paths, instants."""
    t_file = next(p for p in world.failsafe_files() if p.parent.name == str(world.table_id("T")))
    v2 = datetime.fromisoformat(V2)
    return {
        **world.queries,
        "t_file": t_file,
        "t_dir": t_file.parent,
        "gone_file": next(p for p in world.failsafe_files() if p != t_file),
        "warehouse_file": next(
            (world.home / "warehouse" / str(world.table_id("U"))).glob("*.parquet")
        ),
        "v2_millis": int(v2.timestamp() * 1000),
        "v2_offset": int((datetime.fromisoformat(at(*NOW)) - v2).total_seconds()),
    }


def test_the_world_puts_the_data_in_failsafe(world: World, probe: AccessProbe) -> None:
    """The premise: T's point of day 1 is inside its window, its row 1 only in fail-safe,
    and what is not in fail-safe reads normally (without touching the store)."""
    conn = world.connect(*NOW)
    assert conn.sql("SHOW TABLES LIKE 'T' IN DATABASE D")[0].column("retention_time") == [30]
    assert rows(conn, f"SELECT ID, V FROM D.PUBLIC.T AT(TIMESTAMP => '{V3}')") == [[2, "b"]]
    assert rows(conn, "SELECT ID FROM D.PUBLIC.T") == [[2]]


T_AT = "D.PUBLIC.T AT(TIMESTAMP => '" + V2 + "')"
# (statement, code for ACCOUNTADMIN, code for ANALYST, who may read T and U, write nothing)
SNOWFLAKE = [
    (f"SELECT * FROM D.PUBLIC.T AT(TIMESTAMP => '{V1}')", UNAVAILABLE, UNAVAILABLE),
    (f"SELECT * FROM {T_AT}", UNAVAILABLE, UNAVAILABLE),
    (
        "SELECT * FROM D.PUBLIC.T BEFORE(TIMESTAMP => '2026-02-02T00:00:00Z')",
        UNAVAILABLE,
        UNAVAILABLE,
    ),
    ("SELECT * FROM D.PUBLIC.T AT(OFFSET => -{v2_offset})", UNAVAILABLE, UNAVAILABLE),
    ("SELECT * FROM D.PUBLIC.T AT(STATEMENT => '{insert_1}')", UNAVAILABLE, UNAVAILABLE),
    ("SELECT * FROM D.PUBLIC.T AT(STATEMENT => '{insert_2}')", UNAVAILABLE, UNAVAILABLE),
    ("SELECT * FROM D.PUBLIC.T BEFORE(STATEMENT => '{delete_1}')", UNAVAILABLE, UNAVAILABLE),
    (f"WITH OLD AS (SELECT * FROM {T_AT}) SELECT COUNT(*) FROM OLD", UNAVAILABLE, UNAVAILABLE),
    (f"SELECT * FROM D.PUBLIC.U WHERE ID IN (SELECT ID FROM {T_AT})", UNAVAILABLE, UNAVAILABLE),
    (f"INSERT INTO D.PUBLIC.U SELECT ID FROM {T_AT}", UNAVAILABLE, DENIED),
    (f"UPDATE D.PUBLIC.U SET ID = (SELECT MAX(ID) FROM {T_AT})", UNAVAILABLE, DENIED),
    (
        f"MERGE INTO D.PUBLIC.U USING (SELECT ID FROM {T_AT}) S ON U.ID = S.ID "
        "WHEN NOT MATCHED THEN INSERT (ID) VALUES (S.ID)",
        UNAVAILABLE,
        DENIED,
    ),
    (f"CREATE TABLE D.PUBLIC.C AS SELECT * FROM {T_AT}", UNAVAILABLE, DENIED),
    (f"CREATE TABLE D.PUBLIC.C CLONE {T_AT}", UNAVAILABLE, DENIED),
    (
        "CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T BEFORE(STATEMENT => '{delete_1}')",
        UNAVAILABLE,
        DENIED,
    ),
    (f"CREATE SCHEMA D.OLD CLONE D.PUBLIC AT(TIMESTAMP => '{V2}')", UNAVAILABLE, DENIED),
    (f"CREATE DATABASE OLD CLONE D AT(TIMESTAMP => '{V2}')", UNAVAILABLE, DENIED),
    (f"CREATE OR REPLACE TABLE D.PUBLIC.U CLONE {T_AT}", UNAVAILABLE, DENIED),
    # ANALYST holds nothing on GONE: it is not there for it (SPEC R37, no existence leak).
    ("UNDROP TABLE D.PUBLIC.GONE", "CANNOT_UNDROP", NOT_FOUND),
    # Spark reads a path given as a table name (parquet.`/dir`): only catalog names are
    # table references, and Spark runs with spark.sql.runSQLOnFiles off.
    ('SELECT * FROM parquet."{t_file}"', NOT_FOUND, NOT_FOUND),
    ('SELECT * FROM delta."{t_dir}"', NOT_FOUND, NOT_FOUND),
    ('SELECT * FROM json."{gone_file}"', NOT_FOUND, NOT_FOUND),
    ('SELECT * FROM text."{t_file}"', NOT_FOUND, NOT_FOUND),
    ('SELECT * FROM "{t_file}"', NOT_FOUND, NOT_FOUND),
    ("SELECT * FROM read_files('{t_file}')", UNSUPPORTED, UNSUPPORTED),
    ("SELECT * FROM TABLE(read_files('{t_dir}'))", UNSUPPORTED, UNSUPPORTED),
    # IDENTIFIER() takes a catalog name: a path in Spark's quotes is none, in Snowflake's a
    # table's name that no table has.
    ("SELECT * FROM IDENTIFIER('parquet.`{t_file}`')", "INVALID_VALUE", "INVALID_VALUE"),
    ("SELECT * FROM D.PUBLIC.U, IDENTIFIER('delta.`{t_dir}`')", "INVALID_VALUE", "INVALID_VALUE"),
    ("SELECT * FROM IDENTIFIER('D.parquet.\"{t_file}\"')", NOT_FOUND, NOT_FOUND),
    ("SELECT $1 FROM @stage", UNSUPPORTED, UNSUPPORTED),
    # Java reflection could link the file back under a table that reads it.
    (
        "SELECT java_method('org.apache.hadoop.fs.FileUtil', 'symLink', '{t_file}', "
        "'{warehouse_file}.link')",
        UNSUPPORTED,
        UNSUPPORTED,
    ),
    ("SELECT reflect('java.nio.file.Files', 'readString', '{t_file}')", UNSUPPORTED, UNSUPPORTED),
    ("SELECT ID, input_file_name() FROM D.PUBLIC.T", UNSUPPORTED, UNSUPPORTED),
]


@pytest.mark.parametrize(("statement", "admin_code", "analyst_code"), SNOWFLAKE)
def test_no_statement_reads_failsafe(
    world: World,
    observer: Observer,
    probe: AccessProbe,
    values: dict[str, Any],
    statement: str,
    admin_code: str,
    analyst_code: str,
) -> None:
    """SPEC R12, R38: not ACCOUNTADMIN, not a reader of the table (ANALYST, R37), reads
    fail-safe through SQL; a point whose files are there is unavailable (R17)."""
    text = statement.format(**values)
    for user, code in ((None, admin_code), ("ANA", analyst_code)):
        conn = world.connect(*NOW, user=user)
        conn.sql("USE D")  # unqualified names resolve in D.PUBLIC
        refuse(conn, observer, text, code)
    assert not Path(f"{values['warehouse_file']}.link").exists()


BIGQUERY = [
    f"SELECT * FROM D.PUBLIC.T FOR SYSTEM_TIME AS OF '{V2}'",
    f"SELECT * FROM `D.PUBLIC.T` FOR SYSTEM_TIME AS OF TIMESTAMP '{V1}'",
    f"CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T FOR SYSTEM_TIME AS OF '{V2}'",
    "CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T@{v2_millis}",
    "CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T@-{v2_offset}000",
]


@pytest.mark.parametrize("statement", BIGQUERY)
def test_no_bigquery_statement_reads_failsafe(
    world: World, observer: Observer, probe: AccessProbe, values: dict[str, Any], statement: str
) -> None:
    # SPEC R27, R38: FOR SYSTEM_TIME AS OF and the snapshot decorator name the same points.
    conn = world.connect(*NOW)
    refuse(
        conn, observer, statement.format(**values), UNAVAILABLE, "D.PUBLIC.T", dialect="bigquery"
    )
    conn.sql("USE D")
    path_name = f"SELECT * FROM `{values['t_file']}`"
    refuse(conn, observer, path_name, NOT_FOUND, dialect="bigquery")


@pytest.mark.parametrize(
    "point", [{"at": V2}, {"at": V1}, {"before": "{delete_1}"}, {"at": "-{v2_offset}"}]
)
def test_restore_does_not_read_failsafe(
    world: World, observer: Observer, probe: AccessProbe, values: dict[str, Any], point: dict
) -> None:
    """``rewind restore`` (Python and CLI) of a point whose files are in fail-safe (R38)."""
    ((flag, value),) = [(k, v.format(**values)) for k, v in point.items()]
    before = observer.state()
    conn = world.connect(*NOW)
    with pytest.raises(RewindError) as raised:
        conn.restore("D.PUBLIC.T", **{flag: value})
    assert_r39(raised.value, UNAVAILABLE, "D.PUBLIC.T")
    done = run_cli(world.home, "--now", at(*NOW), "restore", "D.PUBLIC.T", f"--{flag}", value)
    assert (done.returncode, done.stderr.startswith(f"error: {UNAVAILABLE}: ")) == (1, True)
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert observer.state().changes(before) == {}


def test_history_does_not_list_what_is_in_failsafe(world: World, probe: AccessProbe) -> None:
    """SPEC R22: purged or fail-safe incarnations are not in SHOW ... HISTORY."""
    conn = world.connect(*NOW)
    assert conn.sql("SHOW TABLES HISTORY LIKE 'GONE' IN ACCOUNT")[0].rows == []
    assert "GONE" not in conn.sql("SHOW TABLES HISTORY IN DATABASE D")[0].column("name")


def test_a_schema_clone_ignoring_short_retention_skips_the_table(
    world: World, probe: AccessProbe
) -> None:
    """SPEC R24: IGNORE TABLES WITH INSUFFICIENT DATA RETENTION skips T (its point is in
    fail-safe) and GONE (dropped since, out of retention) and clones U; nothing is read
    from fail-safe."""
    conn = world.connect(*NOW)
    result = conn.sql(
        f"CREATE SCHEMA D.OLD CLONE D.PUBLIC AT(TIMESTAMP => '{V2}') "
        "IGNORE TABLES WITH INSUFFICIENT DATA RETENTION"
    )[0]
    (skipped,) = result.column("tables_skipped")  # GONE was there then, out of retention
    assert sorted(skipped.split(",")) == ["D.PUBLIC.GONE", "D.PUBLIC.T"]
    assert conn.sql("SHOW TABLES IN SCHEMA D.OLD")[0].column("name") == ["U"]
    conn.sql("DROP SCHEMA D.OLD")


def test_a_table_named_like_a_failsafe_path_is_only_a_name(
    world: World, probe: AccessProbe, values: dict[str, Any]
) -> None:
    # SPEC R4: the name maps to a catalog table, never to the path it spells.
    conn = world.connect(*NOW)
    name = f'D.PUBLIC."{values["t_file"]}"'
    conn.sql(f"CREATE TABLE {name} (ID INT)")
    assert rows(conn, f"SELECT * FROM {name}") == []
    conn.sql(f"DROP TABLE {name}")


@pytest.mark.parametrize(
    "command", [["failsafe", "list"], ["failsafe", "recover", "{t_id}", "--into", "D.PUBLIC.X"]]
)
def test_failsafe_commands_need_accountadmin(
    world: World, observer: Observer, probe: AccessProbe, values: dict[str, Any], command: list
) -> None:
    """SPEC R12, R37, R38: ANALYST may read T, not its fail-safe data (Python and CLI)."""
    table_id = world.table_id("T")
    before = observer.state()
    conn = world.connect(*NOW, user="ANA")
    calls = [conn.failsafe_list, lambda: conn.failsafe_recover(table_id, "D.PUBLIC.X")]
    for call in calls:
        with pytest.raises(RewindError) as raised:
            call()
        assert_r39(raised.value, DENIED, "ACCOUNTADMIN")
    args = [a.format(t_id=table_id) for a in command]
    done = run_cli(world.home, "--user", "ANA", "--now", at(*NOW), *args)
    assert (done.returncode, done.stderr.startswith(f"error: {DENIED}: ")) == (1, True)
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert observer.state().changes(before) == {}


def test_accountadmin_recovery_reads_failsafe_and_the_probe_sees_it(world: World) -> None:
    """The one allowed way (SPEC R12): ACCOUNTADMIN recovers T as of version 2 from the
    fail-safe copy of row 1; the probe sees the read, so its silence above means no read."""
    probe = AccessProbe(world.failsafe_files())
    conn = world.connect(*NOW)
    conn.failsafe_recover(world.table_id("T"), "D.PUBLIC.T_BACK", version=2)
    assert sorted(rows(conn, "SELECT ID, V FROM D.PUBLIC.T_BACK")) == [[1, "a"], [2, "b"]]
    assert [p.parent.name for p in probe.read()] == [str(world.table_id("T"))]
