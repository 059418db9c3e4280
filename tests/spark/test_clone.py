"""Clones at a point, restore in place, and the BigQuery forms (SPEC R24, R27, R30)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from test_dml import catalog

from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import RewindError
from rewind.runner import run_lifecycle

pytestmark = pytest.mark.spark

DAY1 = "2026-05-01T00:00:00+00:00"
DAY1_NOON = "2026-05-01T12:00:00+00:00"
DAY2 = "2026-05-02T00:00:00+00:00"
DAY3 = "2026-05-03T00:00:00+00:00"


def rows(conn: Any, sql: str) -> list[list[Any]]:
    return conn.sql(sql)[-1].rows


def code_of(conn: Any, sql: str) -> str:
    with pytest.raises(RewindError) as error:
        conn.sql(sql)
    return error.value.code


def warehouse(home: Path) -> set[str]:
    return {str(p.relative_to(home)) for p in (home / "warehouse").rglob("*")}


@pytest.fixture
def history(connect: Any) -> dict[str, Any]:
    """DB.S holds A (3 versions), B (retention 0) and C (created on day 2); A is renamed."""
    day1 = connect(now=DAY1)
    day1.sql(
        "CREATE DATABASE DB DATA_RETENTION_TIME_IN_DAYS = 5; CREATE SCHEMA S; "
        "CREATE TABLE A (ID INT, V VARCHAR); INSERT INTO A VALUES (1, 'one'), (2, 'two'); "
        "CREATE TABLE B (ID INT) DATA_RETENTION_TIME_IN_DAYS = 0; INSERT INTO B VALUES (7)"
    )
    noon = connect(now=DAY1_NOON)
    update = noon.sql("USE SCHEMA DB.S; UPDATE A SET V = 'TWO' WHERE ID = 2")[-1].query_id
    day2 = connect(now=DAY2)
    day2.sql(
        "USE SCHEMA DB.S; INSERT INTO A VALUES (3, 'three'); CREATE TABLE C (X INT); "
        "ALTER TABLE A RENAME TO A2"
    )
    return {"update": update, "connect": connect}


def at(history: dict[str, Any], now: str = DAY3) -> Any:
    conn = history["connect"](now=now)
    conn.sql("USE SCHEMA DB.S")
    return conn


def test_table_clone_of_now_is_independent(history: dict[str, Any]) -> None:
    """SPEC R24: a writable clone; later writes to either side never show in the other."""
    conn = at(history)
    conn.sql("CREATE TABLE COPY CLONE A2")
    assert rows(conn, "SELECT ID, V FROM COPY ORDER BY ID") == [
        [1, "one"],
        [2, "TWO"],
        [3, "three"],
    ]
    conn.sql("INSERT INTO COPY VALUES (4, 'four'); DELETE FROM A2 WHERE ID = 1")
    assert rows(conn, "SELECT ID FROM COPY ORDER BY ID") == [[1], [2], [3], [4]]
    assert rows(conn, "SELECT ID FROM A2 ORDER BY ID") == [[2], [3]]
    shown = conn.sql("SHOW TABLES LIKE 'COPY'")[0]
    assert shown.column("owner") == ["ACCOUNTADMIN"]
    assert shown.column("retention_time") == [5]  # SPEC R24: inherited from its new parent


def test_a_clone_keeps_the_retention_set_on_its_source_r24(history: dict[str, Any]) -> None:
    """SPEC R24, R5, R6: a clone keeps the DATA_RETENTION_TIME_IN_DAYS set on its source (a
    Snowflake clone keeps the parameters set on its source), at most a transient's when the
    clone is transient; a value its source inherits, it inherits from its own parents. A
    restore by clone never shortens time travel by surprise."""
    conn = at(history)
    conn.sql(
        "ALTER TABLE A2 SET DATA_RETENTION_TIME_IN_DAYS = 30; "
        "CREATE DATABASE OTHER; CREATE TRANSIENT SCHEMA OTHER.T; "
        "CREATE TABLE OTHER.PUBLIC.A2 CLONE DB.S.A2; CREATE TABLE OTHER.T.A2 CLONE DB.S.A2; "
        "CREATE TABLE OTHER.PUBLIC.B CLONE DB.S.B; CREATE TABLE OTHER.PUBLIC.C CLONE DB.S.C; "
        "CREATE DATABASE DB2 CLONE DB"
    )
    shown = conn.sql("SHOW TABLES IN ACCOUNT")[0]
    kept = {
        f"{database}.{schema}.{name}": days
        for database, schema, name, days in zip(
            shown.column("database_name"),
            shown.column("schema_name"),
            shown.column("name"),
            shown.column("retention_time"),
            strict=True,
        )
    }
    assert kept == {
        "DB.S.A2": 30,
        "DB.S.B": 0,
        "DB.S.C": 5,
        "OTHER.PUBLIC.A2": 30,  # set on its source
        "OTHER.T.A2": 1,  # a transient's most
        "OTHER.PUBLIC.B": 0,
        "OTHER.PUBLIC.C": 1,  # inherited from its own parents: the account's default
        "DB2.S.A2": 30,
        "DB2.S.B": 0,
        "DB2.S.C": 5,  # DB2 keeps the 5 days set on DB
    }
    conn.sql("ALTER DATABASE DB UNSET DATA_RETENTION_TIME_IN_DAYS")  # the clones hold their own
    assert conn.sql("SHOW DATABASES LIKE 'DB2'")[0].column("retention_time") == [5]
    # Snowflake's restore idiom: the table replaced by its own past keeps its 30 days
    conn.sql(f"CREATE OR REPLACE TABLE DB.S.A2 CLONE DB.S.A2 AT(TIMESTAMP => '{DAY2}')")
    assert conn.sql("SHOW TABLES LIKE 'A2' IN DB.S")[0].column("retention_time") == [30]
    # Set on the clone in Snowflake's order (after the source and its point) or before
    # CLONE, a value wins over the source's.
    conn.sql(
        f"CREATE DATABASE DB3 CLONE DB AT(TIMESTAMP => '{DAY2}') IGNORE TABLES WITH "
        "INSUFFICIENT DATA RETENTION DATA_RETENTION_TIME_IN_DAYS = 2 COMMENT = 'a = b'; "
        "CREATE TABLE DB.S.A3 DATA_RETENTION_TIME_IN_DAYS = 4 CLONE DB.S.A2"
    )
    db3 = conn.sql("SHOW DATABASES LIKE 'DB3'")[0]
    assert (db3.column("retention_time"), db3.column("comment")) == ([2], ["a = b"])
    assert conn.sql("SHOW TABLES LIKE 'A3' IN DB.S")[0].column("retention_time") == [4]


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        (f"AT(TIMESTAMP => '{DAY1_NOON}')", [[1, "one"], [2, "TWO"]]),
        ("AT(OFFSET => -60*60*40)", [[1, "one"], [2, "two"]]),  # DAY1 08:00: before the update
        ("BEFORE(STATEMENT => '{update}')", [[1, "one"], [2, "two"]]),
        ("AT(STATEMENT => '{update}')", [[1, "one"], [2, "TWO"]]),
    ],
)
def test_table_clone_at_a_point(history: dict[str, Any], point: str, expected: list) -> None:
    """SPEC R24 with the points of SPEC R16."""
    conn = at(history)
    conn.sql(f"CREATE TABLE PAST CLONE A2 {point.format(update=history['update'])}")
    assert rows(conn, "SELECT ID, V FROM PAST ORDER BY ID") == expected


def test_clone_shares_data_files_without_copying(history: dict[str, Any], home: Path) -> None:
    """SPEC R24: on a POSIX file system the clone's data files are hard links."""
    conn = at(history)
    before = {p: p.stat().st_ino for p in (home / "warehouse").rglob("*") if p.is_file()}
    conn.sql("CREATE TABLE COPY CLONE A2")
    added = [p for p in (home / "warehouse").rglob("*.parquet") if p not in before]
    assert added
    source_inodes = set(before.values())
    assert all(p.stat().st_ino in source_inodes and p.stat().st_nlink >= 2 for p in added)
    new_files = [
        p
        for p in (home / "warehouse").rglob("*")
        if p.is_file() and p.suffix != ".parquet" and p not in before
    ]
    # Only the clone's Delta log is new: no data byte was copied.
    assert new_files and {p.parent.name for p in new_files} == {"_delta_log"}
    assert len({p.parent for p in new_files}) == 1


def test_schema_clone_takes_tables_at_the_point_with_their_names_then(
    history: dict[str, Any],
) -> None:
    """SPEC R24: every table that existed at the point, with the names it had then."""
    conn_later = at(history)
    result = conn_later.sql(
        f"CREATE SCHEMA S_THEN CLONE S AT(TIMESTAMP => '{DAY1_NOON}') "
        "IGNORE TABLES WITH INSUFFICIENT DATA RETENTION"
    )[0]
    assert result.column("tables_skipped") == ["DB.S.B"]  # retention 0 (SPEC R8)
    names = rows(conn_later, "SHOW TABLES IN SCHEMA DB.S_THEN")
    assert [r[1] for r in names] == ["A"]  # A2 was still called A; C did not exist yet
    assert rows(conn_later, "SELECT V FROM DB.S_THEN.A ORDER BY ID") == [["one"], ["TWO"]]


def test_container_clone_fails_as_a_whole(history: dict[str, Any], home: Path) -> None:
    """SPEC R24, R28: a table whose retention does not reach the point fails the clone."""
    conn = at(history)
    files = warehouse(home)
    schemas = rows(conn, "SHOW SCHEMAS IN DATABASE DB")
    point = f"AT(TIMESTAMP => '{DAY1_NOON}')"
    assert code_of(conn, f"CREATE SCHEMA S2 CLONE S {point}") == "TIME_TRAVEL_UNAVAILABLE"
    assert code_of(conn, f"CREATE DATABASE DB2 CLONE DB {point}") == "TIME_TRAVEL_UNAVAILABLE"
    assert warehouse(home) == files
    assert rows(conn, "SHOW SCHEMAS IN DATABASE DB") == schemas
    assert rows(conn, "SHOW DATABASES LIKE 'DB2'") == []
    before_creation = "AT(TIMESTAMP => '2026-04-30T00:00:00Z')"
    assert code_of(conn, f"CREATE SCHEMA S3 CLONE S {before_creation}") == "TIME_TRAVEL_UNAVAILABLE"


def test_database_clone_with_ignore(history: dict[str, Any]) -> None:
    conn = at(history)
    conn.sql("CREATE DATABASE DB_NOW CLONE DB")
    tables = rows(conn, "SHOW TABLES IN DATABASE DB_NOW")
    assert sorted((r[3], r[1]) for r in tables) == [("S", "A2"), ("S", "B"), ("S", "C")]
    result = conn.sql(
        "CREATE DATABASE DB_THEN CLONE DB AT(OFFSET => -60*60*36) "
        "IGNORE TABLES WITH INSUFFICIENT DATA RETENTION"
    )[0]
    assert result.column("tables_cloned") == [1]
    assert rows(conn, "SELECT count(*) FROM DB_THEN.S.A") == [[2]]


def test_restore_in_place_keeps_the_replaced_state_in_history(history: dict[str, Any]) -> None:
    """Restore = a new version equal to the point; the replaced state stays in time travel."""
    conn = at(history)
    restored = conn.restore("DB.S.A2", at=f"{DAY1_NOON}")
    assert restored.rows[0][0].startswith("Table DB.S.A2 restored")
    assert rows(conn, "SELECT ID, V FROM A2 ORDER BY ID") == [[1, "one"], [2, "TWO"]]
    replaced = f"SELECT ID FROM A2 BEFORE(STATEMENT => '{restored.query_id}') ORDER BY ID"
    assert rows(conn, replaced) == [[1], [2], [3]]
    later = at(history, now="2026-05-03T01:00:00+00:00")
    assert rows(later, "SELECT count(*) FROM A2 AT(OFFSET => -1800)") == [[2]]


def test_restore_errors_leave_the_table_alone(history: dict[str, Any]) -> None:
    conn = at(history)
    with pytest.raises(RewindError) as error:
        conn.restore("DB.S.A2", at="2026-01-01T00:00:00Z")
    assert error.value.code == "TIME_TRAVEL_UNAVAILABLE"
    with pytest.raises(RewindError) as error:
        conn.restore("DB.S.NOPE", before="-60")
    assert error.value.code == "OBJECT_NOT_FOUND"
    assert rows(conn, "SELECT count(*) FROM A2") == [[3]]


def test_bigquery_forms_match_their_snowflake_equivalents(history: dict[str, Any]) -> None:
    """SPEC R27: FOR SYSTEM_TIME AS OF, CLONE ... FOR SYSTEM_TIME, the @millis decorator
    (in a query too: it was "Positional column reference $<millis> is not supported")."""
    conn = at(history)
    snowflake = rows(conn, f"SELECT ID, V FROM A2 AT(TIMESTAMP => '{DAY1_NOON}') ORDER BY ID")
    bigquery = conn.sql(
        f"SELECT ID, V FROM S.A2 FOR SYSTEM_TIME AS OF TIMESTAMP '{DAY1_NOON}' ORDER BY ID",
        dialect="bigquery",
    )[-1].rows
    assert bigquery == snowflake
    millis = 1777636800000  # 2026-05-01T12:00:00Z
    decorated = f"SELECT ID, V FROM S.A2@{millis} ORDER BY ID"
    assert conn.sql(decorated, dialect="bigquery")[-1].rows == snowflake
    conn.sql(f"CREATE TABLE S.BQ1 CLONE S.A2@{millis}", dialect="bigquery")
    conn.sql(
        f"CREATE TABLE S.BQ2 CLONE S.A2 FOR SYSTEM_TIME AS OF TIMESTAMP '{DAY1_NOON}'",
        dialect="bigquery",
    )
    assert rows(conn, "SELECT ID, V FROM BQ1 ORDER BY ID") == snowflake
    assert rows(conn, "SELECT ID, V FROM BQ2 ORDER BY ID") == snowflake


def test_bigquery_reaches_a_replaced_and_a_deleted_table_by_its_time_r27(
    history: dict[str, Any],
) -> None:
    """Issue 13 (004: a deleted table stays recoverable within the window): in BigQuery's
    dialect a point in time names the incarnation that existed then — one replaced by
    CREATE OR REPLACE since, or one deleted (BigQuery's undelete, ``CLONE t@<ms>``).
    Snowflake's dialect keeps Snowflake's rule: a dropped table needs UNDROP."""
    conn = at(history)
    then = rows(conn, f"SELECT ID, V FROM A2 AT(TIMESTAMP => '{DAY1_NOON}') ORDER BY ID")
    conn.sql("CREATE OR REPLACE TABLE A2 (ID INT, V VARCHAR)")
    replaced = conn.sql(
        f"SELECT ID, V FROM S.A2 FOR SYSTEM_TIME AS OF TIMESTAMP '{DAY1_NOON}' ORDER BY ID",
        dialect="bigquery",
    )[-1].rows
    assert replaced == then
    assert rows(conn, "SELECT count(*) FROM A2") == [[0]]
    conn.sql("DROP TABLE A2")
    millis = 1777636800000  # 2026-05-01T12:00:00Z
    conn.sql(f"CREATE TABLE S.A2_BACK CLONE S.A2@{millis}", dialect="bigquery")
    assert rows(conn, "SELECT ID, V FROM A2_BACK ORDER BY ID") == then
    snowflake = f"SELECT ID FROM A2 AT(TIMESTAMP => '{DAY1_NOON}')"
    assert code_of(conn, snowflake) == "OBJECT_NOT_FOUND"


def test_snowflake_flow_operator_reads_the_earlier_result_r5(history: dict[str, Any]) -> None:
    """Issue 13: 000's retention checks run as printed — ``SHOW ... ->> SELECT ... FROM
    $1`` — showing only the last result; ``$n`` past the chain is a clear error."""
    conn = at(history)
    (tables,) = conn.sql(
        'SHOW TABLES\n  ->> SELECT "name", "retention_time"\n        FROM $1\n'
        "        WHERE \"name\" IN ('B', 'C') ORDER BY \"name\""
    )
    assert tables.rows == [["B", 0], ["C", 5]]
    schemas = 'SHOW SCHEMAS ->> SELECT "name", "retention_time" FROM $1 WHERE "retention_time" = 0'
    assert conn.sql(schemas)[-1].rows == []
    databases = conn.sql(
        'SHOW DATABASES HISTORY ->> SELECT "name", "retention_time", "dropped_on" FROM $1 '
        'WHERE "retention_time" > 1'
    )[-1]
    assert ["DB", 5, None] in databases.rows
    assert code_of(conn, "SHOW TABLES ->> SELECT * FROM $2") == "INVALID_VALUE"


def test_bigquery_dataset_time_travel_hours(history: dict[str, Any]) -> None:
    """SPEC R27: max_time_travel_hours 48..168 in multiples of 24 sets the retention."""
    conn = at(history)
    conn.sql("ALTER SCHEMA DB.S SET OPTIONS (max_time_travel_hours = 72)", dialect="bigquery")
    assert rows(conn, "SHOW SCHEMAS LIKE 'S' IN DATABASE DB")[0][8] == 3
    for bad in (24, 50, 192):
        with pytest.raises(RewindError) as error:
            conn.sql(
                f"ALTER SCHEMA DB.S SET OPTIONS (max_time_travel_hours = {bad})", dialect="bigquery"
            )
        assert error.value.code == "INVALID_RETENTION"
    with pytest.raises(RewindError) as error:
        conn.sql(
            "SELECT * FROM S.A2 FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01'", dialect="bigquery"
        )
    assert error.value.code == "TIME_TRAVEL_UNAVAILABLE"
    assert "Cannot read before" in error.value.message
    # Issue 13: a dataset created in BigQuery's dialect gets its options, or BigQuery's
    # default window of 168 hours; an invalid window is refused there too.
    conn.sql(
        "CREATE SCHEMA DB.WEEK; CREATE SCHEMA DB.THREE OPTIONS (max_time_travel_hours = 72)",
        dialect="bigquery",
    )
    assert rows(conn, "SHOW SCHEMAS LIKE 'WEEK' IN DATABASE DB")[0][8] == 7
    assert rows(conn, "SHOW SCHEMAS LIKE 'THREE' IN DATABASE DB")[0][8] == 3
    with pytest.raises(RewindError) as error:
        conn.sql("CREATE SCHEMA DB.DAY OPTIONS (max_time_travel_hours = 24)", dialect="bigquery")
    assert error.value.code == "INVALID_RETENTION"
    assert rows(conn, "SHOW SCHEMAS LIKE 'DAY' IN DATABASE DB") == []
    # BigQuery's NUMERIC keeps 9 decimals (it stored 1.5 as 2 once).
    conn.sql(
        "CREATE TABLE DB.WEEK.N (A NUMERIC); INSERT INTO DB.WEEK.N VALUES (1.5)",
        dialect="bigquery",
    )
    assert rows(conn, "SELECT A * 2 FROM DB.WEEK.N") == [[Decimal("3.000000000")]]
    # BigQuery's DROP SCHEMA is RESTRICT unless it says CASCADE: a dataset holding tables
    # stays (Rewind dropped it with Snowflake's default, CASCADE).
    with pytest.raises(RewindError) as error:
        conn.sql("DROP SCHEMA DB.WEEK", dialect="bigquery")
    assert (error.value.code, "is not empty (1 table)" in error.value.message) == (
        "INVALID_VALUE",
        True,
    )
    # BigQuery's UNDROP SCHEMA brings a deleted dataset back with its tables (R21); its
    # DELETE needs no FROM (it was refused once).
    conn.sql(
        "DROP SCHEMA DB.WEEK CASCADE; UNDROP SCHEMA DB.WEEK; INSERT DB.WEEK.N (A) VALUES (2); "
        "DELETE DB.WEEK.N WHERE A > 1.5",
        dialect="bigquery",
    )
    assert rows(conn, "SELECT A FROM DB.WEEK.N") == [[Decimal("1.500000000")]]
    # A BigQuery user on a session without a current database learns what stands for a
    # project (SPEC R39).
    with pytest.raises(RewindError) as error:
        history["connect"](now=DAY3).sql("CREATE SCHEMA DS", dialect="bigquery")
    assert error.value.code == "NO_CURRENT_CONTAINER"
    assert "A BigQuery project is a Rewind database" in error.value.message


def test_zero_copy_inodes_survive_dropping_the_source(history: dict[str, Any]) -> None:
    """The clone is independent: dropping the source leaves the clone readable."""
    conn = at(history)
    conn.sql("CREATE TABLE KEEP CLONE A2; DROP TABLE A2")
    assert rows(conn, "SELECT count(*) FROM KEEP") == [[3]]


def test_a_table_and_its_clone_purging_a_shared_file_the_same_night_validate_r30_r33(
    connect: Any, home: Path
) -> None:
    """SPEC R30, R33, R29 step 6: S and its clone C both replace the file they share on the
    same day: both links leave time travel together and both fail-safe entries end the same
    night. That night purges the file from everywhere and keeps no RETAINED_FOR_CLONE row
    for it (a clone's entry purged in the same run holds nothing), so the night's
    validation passes (before: "the byte columns add up to the stored bytes" failed)."""
    connect(now="2026-04-01T12:00:00+00:00").sql(
        "CREATE DATABASE D; CREATE TABLE S (ID INT, V VARCHAR); INSERT INTO S VALUES (1, 'a'); "
        "CREATE TABLE C CLONE S"
    )
    ((shared,),) = catalog(home, "SELECT path FROM clone_files")
    connect(now="2026-04-02T12:00:00+00:00").sql(
        "UPDATE D.PUBLIC.S SET V = 'b'; UPDATE D.PUBLIC.C SET V = 'c'"
    )
    config = Config.load(home=home)
    run_lifecycle(config, parse_timestamp("2026-04-03T13:00:00+00:00"))  # both into fail-safe
    held = "SELECT state FROM file_states WHERE path = ?"
    assert catalog(home, held, shared) == [("FAILSAFE",), ("FAILSAFE",)]
    steps = run_lifecycle(config, parse_timestamp("2026-04-10T13:00:00+00:00"))  # validates
    purge = next(step for step in steps if step["step"] == "purge_failsafe")
    assert (purge["files_purged"], purge["files_retained_for_clone"]) == (2, 0)
    assert catalog(home, held, shared) == []
    assert not list(home.rglob(shared))
