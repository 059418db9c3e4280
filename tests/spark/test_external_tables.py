"""The Delta tables a team already has, registered where they are (SPEC R41, R42).

The team's tables are written by other engines as other engines: a plain PySpark job
with delta-spark in its own process, and a plain delta-rs writer. Rewind registers them
with ``CREATE EXTERNAL TABLE ... LOCATION = '...' TABLE_FORMAT = DELTA`` and must then
treat them like its own tables without moving, copying or rewriting a file of theirs.
"""

from __future__ import annotations

import json
import os
import shutil
from ast import literal_eval
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import DeltaError
from other_engines import delta_rs_append, delta_spark, stamp, versions
from test_dml import table_root

from rewind.errors import RewindError
from rewind.result import to_csv, to_json
from rewind.storage import log
from rewind.storage.arrow_read import read_arrow

# One worker for the module: its module fixtures are built once.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("test_external_tables")]

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# The team's job: three commits, the last a bad DELETE that lost the row with ID 2.
TEAM_JOB = """
spark.conf.set("spark.databricks.delta.properties.defaults.enableDeletionVectors", "false")
spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string").coalesce(1) \\
    .write.format("delta").save(path)
spark.createDataFrame([(3, "c")], "id long, v string").write.format("delta") \\
    .mode("append").save(path)
DeltaTable.forPath(spark, path).delete("id = 2")
"""


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.sql(sql)[-1].rows]


def register(conn: Any, name: str, location: str, extra: str = "") -> None:
    conn.sql(f"CREATE EXTERNAL TABLE {name} LOCATION = '{location}' TABLE_FORMAT = DELTA {extra}")


def registered_at(connect: Any, hours: int, tables: dict[str, Path]) -> Any:
    """The team's tables, each commit stamped T0 + (its version + 1) hours, registered in
    LAKE.PUBLIC (LAKE created) by a connection at T0 + ``hours``, which is returned."""
    for root in tables.values():
        for version in versions(root):
            stamp(root, version, T0 + timedelta(hours=version + 1))
    conn = connect(now=(T0 + timedelta(hours=hours)).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    for name, root in tables.items():
        register(conn, name, str(root))
    return conn


def code_of(conn: Any, sql: str) -> str:
    with pytest.raises(RewindError) as refused:
        conn.sql(sql)
    return refused.value.code


def data_files(root: Path) -> dict[str, int]:
    """Every data file in the table directory, with its modification time (ns)."""
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in root.rglob("*.parquet")
        if "_delta_log" not in p.parts
    }


def night(connect: Any, at: datetime) -> dict[str, Any]:
    """The nightly lifecycle at ``at``, its steps' counts in one mapping."""
    steps = connect(now=at.isoformat()).lifecycle()
    return {key: value for step in steps for key, value in step.items()}


def ids(conn: Any, point: str = "") -> list[int]:
    return [r[0] for r in rows(conn, f"SELECT ID FROM ORDERS {point} ORDER BY ID")]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team's job, run once for the module (a JVM of its own)."""
    root = tmp_path_factory.mktemp("team") / "orders"
    delta_spark(root, TEAM_JOB)
    return root


@pytest.fixture
def lake(written: Path, tmp_path: Path) -> Path:
    """A copy of the team's table, its commits at T0 + 1, 2, 3 hours."""
    root = tmp_path / "lake" / "orders"
    shutil.copytree(written, root)
    for version in versions(root):
        stamp(root, version, T0 + timedelta(hours=version + 1))
    return root


def test_registration_reaches_history_older_than_itself_and_rewrites_nothing_r41_r42(
    lake: Path, connect: Any
) -> None:
    """Registered on day 1 with retention 30: the row the team's DELETE lost (hour 3) is
    found with AT, restored in place at the team's location (delta-spark's reader sees
    it), and every statement kind works on it; no data file was moved or rewritten,
    and the Delta retention properties now cover time travel (R42)."""
    before = data_files(lake)
    conn = connect(now=(T0 + timedelta(days=1)).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", f"file://{lake}", "DATA_RETENTION_TIME_IN_DAYS = 30 COMMENT = 'team'")
    assert data_files(lake) == before
    assert ids(conn) == [1, 3]
    assert ids(conn, f"AT(TIMESTAMP => '{(T0 + timedelta(hours=2, minutes=30)).isoformat()}')") == [
        1,
        2,
        3,
    ]
    shown = conn.sql("SHOW TABLES")[-1]
    table = dict(zip(shown.columns, shown.rows[0], strict=True))
    assert (table["is_external"], table["rows"], table["comment"]) == ("Y", 2, "team")
    configuration = DeltaTable(str(lake)).metadata().configuration
    assert configuration["delta.deletedFileRetentionDuration"] == "interval 37 days"
    assert configuration["delta.logRetentionDuration"] == "interval 37 days"
    conn.sql("ALTER DATABASE LAKE SET DATA_RETENTION_TIME_IN_DAYS = 60")
    assert DeltaTable(str(lake)).metadata().configuration["delta.logRetentionDuration"] == (
        "interval 37 days"  # the table's own 30 days win over its database's 60
    )
    conn.sql("ALTER TABLE ORDERS UNSET DATA_RETENTION_TIME_IN_DAYS")  # inherits 60 now
    configuration = DeltaTable(str(lake)).metadata().configuration
    assert configuration["delta.deletedFileRetentionDuration"] == "interval 67 days"
    conn.sql("ALTER TABLE ORDERS SET DATA_RETENTION_TIME_IN_DAYS = 30")  # never lowered
    assert DeltaTable(str(lake)).metadata().configuration == configuration
    # Every kind of statement on it (SPEC R41: every rule applies).
    later = connect(now=(T0 + timedelta(days=1, hours=1)).isoformat())
    later.sql("USE SCHEMA LAKE.PUBLIC")
    later.restore("LAKE.PUBLIC.ORDERS", at=(T0 + timedelta(hours=2, minutes=30)).isoformat())
    assert ids(later) == [1, 2, 3]
    assert sorted(read_arrow(lake)["id"].to_pylist()) == [1, 2, 3]
    later.sql("INSERT INTO ORDERS VALUES (4, 'd'); DELETE FROM ORDERS WHERE ID = 1")
    later.sql("UPDATE ORDERS SET V = 'C' WHERE ID = 3")
    later.sql(
        "MERGE INTO ORDERS USING (SELECT 4 AS ID, 'D' AS V UNION ALL SELECT 5, 'e') AS S "
        "ON ORDERS.ID = S.ID WHEN MATCHED THEN UPDATE SET ORDERS.V = S.V "
        "WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (S.ID, S.V)"
    )
    team_view = read_arrow(lake).sort_by("id").to_pylist()
    assert [(r["id"], r["v"]) for r in team_view] == [(2, "b"), (3, "C"), (4, "D"), (5, "e")]
    point = (T0 + timedelta(hours=2, minutes=30)).isoformat()
    later.sql(f"CREATE TABLE COPY CLONE ORDERS AT(TIMESTAMP => '{point}')")
    assert rows(later, "SELECT * FROM COPY ORDER BY ID") == [(1, "a"), (2, "b"), (3, "c")]
    later.sql("DROP TABLE ORDERS")
    assert all((lake / path).exists() for path in before)  # the team's files stay
    dropped = later.sql("SHOW TABLES HISTORY LIKE 'ORDERS' IN SCHEMA LAKE.PUBLIC")[-1]
    assert dropped.column("dropped_on")[0] is not None
    later.sql("UNDROP TABLE ORDERS")
    assert rows(later, "SELECT * FROM ORDERS ORDER BY ID") == [
        (2, "b"),
        (3, "C"),
        (4, "D"),
        (5, "e"),
    ]
    registered = (T0 + timedelta(days=1, minutes=30)).isoformat()  # its database's clone
    later.sql(f"CREATE DATABASE LAKE_THEN CLONE LAKE AT(TIMESTAMP => '{registered}')")
    assert rows(later, "SELECT ID FROM LAKE_THEN.PUBLIC.ORDERS ORDER BY ID") == [(1,), (3,)]
    assert all((lake / path).exists() for path in before)


def test_each_refusal_changes_nothing_r41(tmp_path: Path, connect: Any, home: Path) -> None:
    """Missing, not Delta, Rewind's own storage, already governed under any spelling,
    a feature Rewind cannot read, a caller without ACCOUNTADMIN: a clear code each,
    and neither the catalog nor the team's log changes."""
    team = tmp_path / "lake" / "events"
    write_deltalake(str(team), pa.table({"id": [1, 2]}))  # a plain delta-rs writer
    # A reader feature Rewind cannot read (shredded variants; the variant type it reads).
    unreadable = tmp_path / "lake" / "variant"
    write_deltalake(str(unreadable), pa.table({"s": [{"a": 1}]}))
    first = unreadable / "_delta_log" / f"{0:020d}.json"
    first.write_text(
        first.read_text().replace(
            '"minReaderVersion":1,"minWriterVersion":2',
            '"minReaderVersion":3,"minWriterVersion":7,'
            '"readerFeatures":["variantType","variantShredding-preview"],'
            '"writerFeatures":["variantType","variantShredding-preview"]',
        )
    )
    assert "variantShredding-preview" in first.read_text()
    (tmp_path / "lake" / "plain").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "lake")
    now = datetime.now(UTC).isoformat()  # after delta-rs's commits (their clock)
    conn = connect(now=now)
    conn.sql("CREATE DATABASE LAKE; CREATE USER BOB")
    register(conn, "EVENTS", str(team))
    governed = versions(team)
    attempts = {
        f"'{tmp_path}/lake/missing'": "INVALID_LOCATION",
        f"'{tmp_path}/lake/plain'": "INVALID_LOCATION",
        "'lake/events'": "INVALID_LOCATION",
        f"'s3://bucket{team}'": "INVALID_LOCATION",
        f"'{home}/warehouse'": "INVALID_LOCATION",
        f"'{home.parent}'": "INVALID_LOCATION",
        f"'{team}'": "LOCATION_IN_USE",
        f"'{tmp_path}/lake/../lake/events'": "LOCATION_IN_USE",
        f"'file://{tmp_path}/link/events'": "LOCATION_IN_USE",
        f"'{unreadable}'": "UNSUPPORTED_TABLE_FEATURE",
    }
    for location, code in attempts.items():
        sql = f"CREATE EXTERNAL TABLE OTHER LOCATION = {location} TABLE_FORMAT = DELTA"
        assert (location, code_of(conn, sql)) == (location, code)
    bob = connect(now=now, user="BOB")
    sql = f"CREATE EXTERNAL TABLE LAKE.PUBLIC.MINE LOCATION = '{unreadable}' TABLE_FORMAT = DELTA"
    assert code_of(bob, sql) == "ACCESS_DENIED"
    assert code_of(conn, f"CREATE EXTERNAL TABLE X LOCATION = '{team}'") == "UNSUPPORTED"
    assert [r[1] for r in rows(conn, "SHOW TABLES")] == ["EVENTS"]
    assert versions(team) == governed and versions(unreadable) == [0]


def test_a_column_another_writer_made_not_null_gets_no_null_from_rewind_r40_r41(
    tmp_path: Path, connect: Any
) -> None:
    """Delta's protocol forbids a writer to put NULL in a column the schema says is not
    nullable; Rewind's INSERT, UPDATE and MERGE did (and delta-spark's reader may then
    answer `id IS NULL` with nothing). Each is refused naming the column; the team's
    table keeps its versions and files; a row that fits is written."""
    team = tmp_path / "lake" / "accounts"
    strict = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    write_deltalake(str(team), pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=strict))
    conn = connect(now=datetime.now(UTC).isoformat())  # after delta-rs's commit (its clock)
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ACCOUNTS", str(team))
    before = (versions(team), data_files(team))
    for sql in [
        "INSERT INTO ACCOUNTS VALUES (NULL, 'x')",
        "INSERT INTO ACCOUNTS (V) VALUES ('y')",
        "UPDATE ACCOUNTS SET ID = NULL WHERE ID = 1",
        "MERGE INTO ACCOUNTS USING (SELECT 3 AS K) S ON ACCOUNTS.ID = S.K "
        "WHEN NOT MATCHED THEN INSERT (V) VALUES ('m')",
    ]:
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (sql, refused.value.code, refused.value.message) == (
            sql,
            "INVALID_VALUE",
            "NULL result in a non-nullable column 'ID': nothing was written.",
        )
    assert (versions(team), data_files(team)) == before
    assert rows(conn, "DESC TABLE ACCOUNTS") == [
        ("ID", "NUMBER(38,0)", "COLUMN", "N", *[None, "N", "N"], *[None] * 5),
        ("V", "VARCHAR", "COLUMN", "Y", *[None, "N", "N"], *[None] * 5),
    ]
    conn.sql("INSERT INTO ACCOUNTS VALUES (3, NULL)")
    assert rows(conn, "SELECT ID, V FROM ACCOUNTS ORDER BY ID") == [(1, "a"), (2, "b"), (3, None)]
    assert DeltaTable(str(team)).schema().fields[0].nullable is False  # still the team's


def test_another_writers_check_constraint_and_append_only_hold_for_rewind_r40_r41(
    tmp_path: Path, connect: Any
) -> None:
    """A CHECK constraint (delta-rs's add_constraint) binds every writer: Rewind stored
    rows breaking it, NULL included (delta-spark's writer refuses NULL too). Removing rows
    from an append-only table was refused by delta-rs at commit and reported as
    CONCURRENT_WRITE, "run it again"; it is refused by name, before any commit."""
    checked, append_only = tmp_path / "lake" / "checked", tmp_path / "lake" / "ledger"
    write_deltalake(str(checked), pa.table({"id": [1, 2]}))
    DeltaTable(str(checked)).alter.add_constraint({"id_positive": "id > 0"})
    write_deltalake(
        str(append_only), pa.table({"id": [1, 2]}), configuration={"delta.appendOnly": "true"}
    )
    conn = connect(now=datetime.now(UTC).isoformat())  # after delta-rs's commits (its clock)
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "CHECKED", str(checked))
    register(conn, "LEDGER", str(append_only))
    before = {root: (versions(root), data_files(root)) for root in (checked, append_only)}
    breaking = "A row breaks the table's Delta constraint 'id_positive' (id > 0)"
    for sql in ["INSERT INTO CHECKED VALUES (-1)", "INSERT INTO CHECKED VALUES (NULL)"]:
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (refused.value.code, refused.value.message) == (
            "INVALID_VALUE",
            f"{breaking}: nothing was written.",
        )
    assert code_of(conn, "UPDATE CHECKED SET ID = 0") == "INVALID_VALUE"
    for sql in ["DELETE FROM LEDGER", "UPDATE LEDGER SET ID = 3", "TRUNCATE TABLE LEDGER"]:
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (refused.value.code, "is append-only" in refused.value.message) == (
            "UNSUPPORTED",
            True,
        )
    assert {root: (versions(root), data_files(root)) for root in before} == before
    conn.sql("INSERT INTO CHECKED VALUES (3); INSERT INTO LEDGER VALUES (3)")
    assert rows(conn, "SELECT ID FROM CHECKED ORDER BY ID") == [(1,), (2,), (3,)]
    assert rows(conn, "SELECT ID FROM LEDGER ORDER BY ID") == [(1,), (2,), (3,)]


def test_delta_sparks_char_and_varchar_lengths_bind_rewind_and_rewinds_bind_it_r40_r43(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """delta-spark keeps a column's VARCHAR(n) / CHAR(n) in the Delta field's metadata and
    its writers refuse a longer string (a CHAR's shorter one is stored as it is, Spark's
    readers pad it). Rewind showed both as VARCHAR and stored any string; now it shows
    them and refuses a longer string in INSERT, UPDATE and MERGE (the team's files and
    versions untouched); and a VARCHAR(3) of Rewind's own, and of its clone of the team's
    table, binds delta-spark's writers."""
    team = tmp_path / "lake" / "codes"
    delta_spark(
        team,
        """
        spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT, code VARCHAR(3), flag CHAR(2)) "
                  "USING delta")
        spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'abc', 'y')")
        """,
    )
    conn = registered_at(connect, 3, {"CODES": team})
    types = [r[:2] for r in rows(conn, "DESC TABLE CODES")]
    assert types == [("ID", "NUMBER(38,0)"), ("CODE", "VARCHAR(3)"), ("FLAG", "CHAR(2)")]
    before = (versions(team), data_files(team))
    for sql, named in {
        "INSERT INTO CODES VALUES (2, 'abcd', 'n')": "'CODE' (VARCHAR(3))",
        "INSERT INTO CODES (ID, FLAG) SELECT 2, 'yes'": "'FLAG' (CHAR(2))",
        "UPDATE CODES SET CODE = CODE || 'd'": "'CODE' (VARCHAR(3))",
        "MERGE INTO CODES USING (SELECT 1 AS K) S ON CODES.ID = S.K "
        "WHEN MATCHED THEN UPDATE SET FLAG = 'abc'": "'FLAG' (CHAR(2))",
    }.items():
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (sql, refused.value.code, refused.value.message) == (
            sql,
            "INVALID_VALUE",
            f"A string is too long for column {named}: nothing was written.",
        )
    assert (versions(team), data_files(team)) == before
    conn.sql(
        "INSERT INTO CODES VALUES (2, 'ab', 'n'); UPDATE CODES SET CODE = 'xyz' WHERE ID = 1;"
        "CREATE TABLE OURS (ID INT, CODE VARCHAR(3)); CREATE TABLE COPY CLONE CODES"
    )
    assert rows(conn, "SELECT * FROM CODES ORDER BY ID") == [(1, "xyz", "y"), (2, "ab", "n")]
    roots = {name: table_root(home, name) for name in ("OURS", "COPY")}
    out = delta_spark(
        team,
        """
        import json
        found = {}
        for name, where in PLACES.items():
            try:
                spark.sql(f"INSERT INTO delta.`{where}` (id, code) VALUES (9, 'abcd')")
                found[name] = "written"
            except Exception as exc:
                found[name] = "CharVarcharLengthInvariantViolation" in str(exc)
        found["team"] = [tuple(r) for r in spark.read.format("delta").load(path)
                         .orderBy("id").collect()]
        print(json.dumps(found))
        """.replace("PLACES", repr({name: str(root) for name, root in roots.items()})),
    )
    found = json.loads(out.strip().splitlines()[-1])
    assert found == {"OURS": True, "COPY": True, "team": [[1, "xyz", "y "], [2, "ab", "n "]]}


def test_variant_columns_are_deltas_both_engines_write_and_read_them_r26_r40_r43(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """SPEC R26, R40, R43: a VARIANT column (BigQuery's JSON) was refused in CREATE TABLE,
    and a team's table with one was unreadable (reader feature variantType). It is Delta's
    variant: Rewind reads delta-spark's values as JSON text (paths, TYPEOF, BigQuery's
    fields), writes its own (PARSE_JSON's text parsed, a number or an object converted)
    and keeps delta-spark's as they are when it rewrites their rows (a date stays a date);
    each version reads; delta-spark reads Rewind's values, in the team's table and in
    Rewind's own, whose protocol lists the feature."""
    team = tmp_path / "lake" / "events"
    delta_spark(
        team,
        """
        spark.createDataFrame([(1, '{"a": {"b": 2}}')], "id long, j string") \\
            .selectExpr("id", "parse_json(j) AS v").write.format("delta").save(path)
        spark.sql("SELECT CAST(2 AS BIGINT) AS id, CAST(DATE'2026-01-02' AS VARIANT) AS v") \\
            .write.format("delta").mode("append").save(path)
        """,
    )
    conn = registered_at(connect, 4, {"EVENTS": team})
    assert rows(conn, "DESC TABLE EVENTS")[1][:2] == ("V", "VARIANT")
    assert rows(conn, "SELECT ID, V, V:a.b::INT, TYPEOF(V) FROM EVENTS ORDER BY ID") == [
        (1, '{"a":{"b":2}}', 2, "OBJECT"),
        (2, '"2026-01-02"', None, "VARCHAR"),
    ]
    assert rows(conn, "SELECT COUNT(*) FROM EVENTS AT(OFFSET => -9000)") == [(1,)]
    conn.sql(
        "INSERT INTO EVENTS SELECT 3, PARSE_JSON('[1, \"x\"]'); "
        "INSERT INTO EVENTS SELECT 4, OBJECT_CONSTRUCT('n', 5); "
        "UPDATE EVENTS SET ID = ID * 10 WHERE ID IN (2, 4); "
        "CREATE TABLE OURS (ID INT, V VARIANT); INSERT INTO OURS SELECT 1, 42"
    )
    assert rows(conn, "SELECT ID, V FROM EVENTS ORDER BY ID") == [
        (1, '{"a":{"b":2}}'),
        (3, '[1,"x"]'),
        (20, '"2026-01-02"'),
        (40, '{"n":5}'),
    ]
    bigquery = conn.sql(
        "SELECT id, STRING(v.a.b), JSON_TYPE(v) FROM EVENTS WHERE id = 1", dialect="bigquery"
    )
    assert bigquery[-1].rows == [[1, "2", "object"]]
    ours = table_root(home, "OURS")
    out = delta_spark(
        team,
        """
        import json
        read = lambda where: [(r[0], r[1].toJson(), r[2]) for r in spark.read.format("delta")
                              .load(where).selectExpr("*", "schema_of_variant(v) AS kind")
                              .orderBy("id").collect()]
        print(json.dumps({"team": read(path), "ours": read(OURS)}))
        """.replace("OURS", repr(str(ours))),
    )
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen == {
        "team": [
            [1, '{"a":{"b":2}}', "OBJECT<a: OBJECT<b: BIGINT>>"],
            [3, '[1,"x"]', "ARRAY<VARIANT>"],
            [20, '"2026-01-02"', "DATE"],  # rewritten by Rewind's UPDATE: still a date
            [40, '{"n":5}', "OBJECT<n: BIGINT>"],
        ],
        "ours": [[1, "42", "BIGINT"]],
    }
    assert "variantType" in protocols(ours)[0]["readerFeatures"]


def protocols(root: Path) -> list[dict[str, Any]]:
    """Every protocol action of the table's log, in order."""
    return [
        json.loads(line)["protocol"]
        for version in versions(root)
        for line in (root / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
        if '"protocol"' in line
    ]


def test_a_table_with_nested_columns_and_table_features_is_protected_as_it_is_r40_r41_r43(
    tmp_path: Path, connect: Any
) -> None:
    """A delta-rs table with array, struct and map columns and a TIMESTAMP_NTZ (Delta's
    table features: reader version 3, writer 7). Registering it was refused (nested types)
    and Rewind's retention commit (delta-rs's ``set_table_properties``) rewrote the
    protocol of such a table, adding ``variantType``, which neither the team's older
    readers nor Rewind could read. Now the team's protocol stays as it was, delta-spark
    reads the table, and Rewind shows, time-travels, clones and writes its nested columns."""
    root = tmp_path / "lake" / "events"
    struct = pa.struct([("city", pa.string()), ("Zip", pa.int32())])
    write_deltalake(
        str(root),
        pa.table(
            {
                "id": pa.array([1, 2], pa.int64()),
                "tags": pa.array([["a", "b"], []], pa.list_(pa.string())),
                "addr": pa.array([{"city": "x", "Zip": 1}, None], struct),
                "m": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int32())),
                "at": pa.array([1, 2], pa.timestamp("us")),
            }
        ),
    )
    before = protocols(root)
    assert before[0]["minReaderVersion"] == 3
    conn = connect(now=datetime.now(UTC).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "EVENTS", str(root))
    registered = datetime.now(UTC).isoformat()
    assert len(versions(root)) == 2 and protocols(root) == before  # a metadata-only commit
    assert (
        delta_spark(root, "print(spark.read.format('delta').load(path).count())").split()[-1] == "2"
    )
    types = {row[0]: row[1] for row in conn.sql("DESC TABLE EVENTS")[-1].rows}
    assert (types["TAGS"], types["ADDR"], types["M"]) == (
        "ARRAY(VARCHAR)",
        "OBJECT(city VARCHAR, Zip NUMBER(38,0))",
        "MAP(VARCHAR, NUMBER(38,0))",
    )
    assert types["AT"] == "TIMESTAMP_NTZ"  # a wall-clock time, not an instant in UTC
    shown = conn.sql("SHOW COLUMNS IN TABLE EVENTS")[-1]
    assert shown.column("data_type")[1] == '{"type":"ARRAY","nullable":true}'
    write_deltalake(
        str(root),
        pa.table({"id": pa.array([3], pa.int64()), "tags": pa.array([["c"]])}),
        mode="append",
        schema_mode="merge",
    )
    later = connect(now=datetime.now(UTC).isoformat())
    later.sql("USE SCHEMA LAKE.PUBLIC")
    then = f"AT(TIMESTAMP => '{registered}')"
    assert rows(later, f"SELECT ID, TAGS, ADDR, M FROM EVENTS {then} ORDER BY ID") == [
        (1, ["a", "b"], {"city": "x", "Zip": 1}, {"k": 1}),
        (2, [], None, None),
    ]
    assert rows(later, "SELECT ID, TAGS[0], ADDR['city'] FROM EVENTS ORDER BY ID") == [
        (1, "a", "x"),
        (2, None, None),
        (3, "c", None),
    ]
    # Snowflake's paths into them (they were Spark's GET_JSON_OBJECT, for JSON text only)
    paths = "ADDR:city, e.addr:\"Zip\", GET(TAGS, 1), GET_PATH(ADDR, 'city'), M:k, TAGS[7]"
    assert rows(later, f"SELECT ID, {paths} FROM EVENTS e ORDER BY ID") == [
        (1, "x", 1, "b", "x", 1, None),
        (2, None, None, None, None, None, None),
        (3, None, None, None, None, None, None),
    ]
    functions = "ARRAY_CONTAINS('b'::VARIANT, TAGS), OBJECT_KEYS(ADDR), OBJECT_KEYS(M)"
    assert rows(later, f"SELECT ID, {functions} FROM EVENTS ORDER BY ID") == [
        (1, True, ["city", "Zip"], ["k"]),
        (2, False, None, None),
        (3, False, None, None),
    ]
    # As Snowflake shows ARRAY, OBJECT and MAP values: JSON (CSV and the CLI's table)
    shown = later.sql("SELECT TAGS, ADDR, M FROM EVENTS WHERE ID = 1")
    assert (
        to_csv(shown).splitlines()[1] == '"[""a"",""b""]","{""city"":""x"",""Zip"":1}","{""k"":1}"'
    )
    later.sql("CREATE TABLE PICKED AS SELECT ID, TAGS, M FROM EVENTS WHERE ID < 3")
    assert rows(later, "SELECT * FROM PICKED ORDER BY ID") == [
        (1, ["a", "b"], {"k": 1}),
        (2, [], None),
    ]
    later.sql(f"CREATE TABLE COPY CLONE EVENTS {then}")
    assert rows(later, "SELECT ID, TAGS, ADDR FROM COPY ORDER BY ID") == [
        (1, ["a", "b"], {"city": "x", "Zip": 1}),
        (2, [], None),
    ]
    assert protocols(root) == before
    # Rewind writes it too, its protocol (reader 3: timestampNtz) as it was: rewritten
    # files keep the nested values and the TIMESTAMP_NTZ's wall-clock values, and delta-rs
    # reads them. (Every reader-3 table was refused, whatever its features.)
    later.sql("DELETE FROM EVENTS WHERE ID = 1")
    later.sql("INSERT INTO EVENTS SELECT ID + 10, TAGS, ADDR, M, AT FROM EVENTS")
    later.sql("UPDATE EVENTS SET ID = ID + 100 WHERE GET(TAGS, 0) = 'c' AND ID > 10")  # a path
    later.sql("INSERT INTO EVENTS (ID, AT) VALUES (4, '2026-03-04 05:06:07')")
    assert protocols(root) == before
    at = datetime(1970, 1, 1)
    assert sorted(
        (r["id"], r["tags"], r["addr"], r["at"]) for r in read_arrow(root).to_pylist()
    ) == [
        (2, [], None, at + timedelta(microseconds=2)),
        (3, ["c"], None, None),
        (4, None, None, datetime(2026, 3, 4, 5, 6, 7)),
        (12, [], None, at + timedelta(microseconds=2)),
        (113, ["c"], None, None),
    ]
    ntz = later.sql("SELECT AT FROM EVENTS WHERE ID = 4")  # no zone, as Snowflake shows it
    assert rows(later, "SELECT AT FROM EVENTS WHERE ID = 4") == [(datetime(2026, 3, 4, 5, 6, 7),)]
    assert to_csv(ntz).splitlines()[1] == "2026-03-04 05:06:07"
    assert to_json(ntz).count('"2026-03-04T05:06:07"') == 1


WIDENING_JOB = """
spark.sql(f"CREATE TABLE delta.`{path}` (ID INT, PRICE DECIMAL(5, 2)) USING delta TBLPROPERTIES "
          "('delta.enableTypeWidening' = 'true', 'delta.enableDeletionVectors' = 'false')")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 123.45)")
"""
WIDEN_JOB = """
spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN ID TYPE BIGINT")
spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN PRICE TYPE DECIMAL(10, 2)")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (3000000000, 12345678.90)")
"""


def registered_then_changed(root: Path, connect: Any, job: str, change: str) -> tuple[Any, str]:
    """The team's ``job`` writes a table at ``root``, Rewind registers it (as
    LAKE.PUBLIC.<root's name>), then the team's ``change`` runs: a connection after it (its
    schema LAKE.PUBLIC), and the instant just after the registration."""
    delta_spark(root, job)
    conn = connect(now=datetime.now(UTC).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, root.name.upper(), str(root))
    registered = datetime.now(UTC).isoformat()
    delta_spark(root, change)
    later = connect(now=datetime.now(UTC).isoformat())
    later.sql("USE SCHEMA LAKE.PUBLIC")
    return later, registered


def clone_counts(home: Path) -> list[int]:
    """The row count of every table in the home's warehouse, as delta-spark reads it."""
    out = delta_spark(
        home / "warehouse",
        "import glob\n"
        "print(sorted(spark.read.format('delta').load(t[: -len('/_delta_log')]).count()"
        " for t in glob.glob(path + '/*/_delta_log')))",
    )
    return [int(n) for n in out.split("\n")[-2].strip("[]").split(",") if n.strip()]


def test_a_table_whose_columns_another_engine_widened_is_protected_r18_r40_r43(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """delta-spark's type widening (a reader feature): registering such a table was
    refused. Now it registers; after the team widens INT to BIGINT and DECIMAL(5,2) to
    DECIMAL(10,2), Rewind's columns follow (the old type would not hold the new values),
    the version before reads under the current types (R18), and a clone of either reads
    the old files under the wider type, in Rewind and in delta-spark. Rewind's writes were
    refused: its INSERT, UPDATE of a row of the old file (rewritten in the wider types)
    and DELETE now run, and delta-spark reads the table after them."""
    later, registered = registered_then_changed(
        tmp_path / "lake" / "prices", connect, WIDENING_JOB, WIDEN_JOB
    )
    assert rows(later, "SELECT ID, PRICE FROM PRICES ORDER BY ID") == [
        (1, Decimal("123.45")),
        (3000000000, Decimal("12345678.90")),
    ]
    types = {row[0]: row[1] for row in later.sql("DESC TABLE PRICES")[-1].rows}
    assert types == {"ID": "NUMBER(38,0)", "PRICE": "NUMBER(10,2)"}
    then = f"AT(TIMESTAMP => '{registered}')"
    assert rows(later, f"SELECT ID, PRICE FROM PRICES {then}") == [(1, Decimal("123.45"))]
    later.sql(f"CREATE TABLE THEN_COPY CLONE PRICES {then}; CREATE TABLE NOW_COPY CLONE PRICES")
    assert rows(later, "SELECT ID, PRICE FROM THEN_COPY") == [(1, Decimal("123.45"))]
    assert rows(later, "SELECT COUNT(*), SUM(ID) FROM NOW_COPY") == [(2, 3000000001)]
    assert clone_counts(home) == [1, 2]  # the two clones, read by delta-spark
    later.sql(
        "INSERT INTO PRICES VALUES (4000000000, 99999999.99); "
        "UPDATE PRICES SET PRICE = PRICE * 100 WHERE ID = 1; "
        "DELETE FROM PRICES WHERE ID = 3000000000"
    )
    out = delta_spark(
        tmp_path / "lake" / "prices",
        "print(sorted(tuple(r) for r in spark.read.format('delta').load(path).collect()))",
    )
    assert out.strip().splitlines()[-1] == str(
        [(1, Decimal("12345.00")), (4000000000, Decimal("99999999.99"))]
    )


# The team's table, then the job that overwrote it with a new schema: REGION now a number,
# AMOUNT gone (Delta's overwriteSchema, a replacement of the table in one commit).
ORDERS_JOB = """
spark.createDataFrame([(1, "EU", 10), (2, "US", 20)], "id bigint, region string, amount int") \
    .write.format("delta").save(path)
"""
OVERWRITE_JOB = """
spark.createDataFrame([(7, 5, "n")], "id bigint, region int, note string").write \
    .format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
"""


def test_a_table_another_engines_job_replaced_reads_clones_and_restores_as_it_was_r16_r18_r41(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """ "A job that overwrote last month": the team's job replaced its table with a new
    schema (REGION retyped VARCHAR -> NUMBER, AMOUNT dropped). Under the replacement's
    columns (R18) the version before failed to read ('EU' cast to a number) or would lose
    AMOUNT, and its clone was a table nobody could read. A version of a replaced table now
    reads, and clones, with its own columns, and a restore in place of it (refused before:
    its files under today's columns) brings its schema back too, as Delta's RESTORE does;
    the replacement stays in time travel with its own columns."""
    root = tmp_path / "lake" / "orders"
    later, registered = registered_then_changed(root, connect, ORDERS_JOB, OVERWRITE_JOB)
    assert later.sql("SELECT * FROM ORDERS")[-1].columns == ["ID", "REGION", "NOTE"]
    assert rows(later, "SELECT * FROM ORDERS") == [(7, 5, "n")]
    then = f"AT(TIMESTAMP => '{registered}')"
    old = later.sql(f"SELECT * FROM ORDERS {then} ORDER BY ID")[-1]
    assert old.columns == ["ID", "REGION", "AMOUNT"]
    assert [tuple(r) for r in old.rows] == [(1, "EU", 10), (2, "US", 20)]
    later.sql(f"CREATE TABLE ORDERS_BACK CLONE ORDERS {then}")
    assert rows(later, "SELECT * FROM ORDERS_BACK ORDER BY ID") == [(1, "EU", 10), (2, "US", 20)]
    types = {row[0]: row[1] for row in later.sql("DESC TABLE ORDERS_BACK")[-1].rows}
    assert types == {"ID": "NUMBER(38,0)", "REGION": "VARCHAR", "AMOUNT": "NUMBER(38,0)"}
    restored = later.restore("ORDERS", at=registered)
    assert "its columns then, which another engine replaced" in restored.rows[0][0]
    now = later.sql("SELECT * FROM ORDERS ORDER BY ID")[-1]
    assert now.columns == ["ID", "REGION", "AMOUNT"]
    assert [tuple(r) for r in now.rows] == [(1, "EU", 10), (2, "US", 20)]
    assert {row[0]: row[1] for row in later.sql("DESC TABLE ORDERS")[-1].rows} == types
    replaced = later.sql(f"SELECT * FROM ORDERS BEFORE(STATEMENT => '{restored.query_id}')")[-1]
    assert (replaced.columns, [tuple(r) for r in replaced.rows]) == (
        ["ID", "REGION", "NOTE"],
        [(7, 5, "n")],
    )
    later.sql("INSERT INTO ORDERS VALUES (3, 'EU', 30)")  # Rewind writes it as it is again
    out = delta_spark(  # the team's reader: the restored table, and the clone
        root,
        "import glob\n"
        f"for p in [path] + glob.glob('{home}/warehouse/*/'):\n"
        "    print(sorted(tuple(r) for r in spark.read.format('delta').load(p).collect()))",
    )
    assert out.strip().splitlines()[-2:] == [
        "[(1, 'EU', 10), (2, 'US', 20), (3, 'EU', 30)]",
        "[(1, 'EU', 10), (2, 'US', 20)]",
    ]


# Databricks' default deletion vectors, partitioning, then a replacement that retypes
# REGION, drops AMOUNT and partitions by nothing.
ORDERS_DV_JOB = """
spark.createDataFrame([(1, "EU", 10), (2, "US", 20), (3, "EU", 30)],
                      "id bigint, region string, amount int").coalesce(1).write.format("delta") \\
    .option("delta.enableDeletionVectors", "true").partitionBy("region").save(path)
DeltaTable.forPath(spark, path).delete("id = 3")
"""


def test_a_replaced_table_with_deletion_vectors_and_other_partitions_is_restored_r16_r40(
    tmp_path: Path, connect: Any
) -> None:
    """The restore in place of a version another engine replaced since was refused where a
    file carried a deletion vector (a Databricks table's DELETE), where the partitioning
    changed, or where both versions held a file: delta-rs's overwrite could not commit it.
    Rewind writes that commit itself now: the version's schema and partitioning come back
    with its files, the one with its vector too (ID 3 stays deleted), and the team's
    reader reads it."""
    root = tmp_path / "lake" / "orders"
    later, registered = registered_then_changed(root, connect, ORDERS_DV_JOB, OVERWRITE_JOB)
    assert rows(later, "SELECT * FROM ORDERS") == [(7, 5, "n")]
    restored = later.restore("ORDERS", at=registered)
    assert "its columns then, which another engine replaced" in restored.rows[0][0]
    state = log.replay(root, versions(root)[-1])
    assert state.metadata["partitionColumns"] == ["region"]
    assert any(f.vector for f in state.files)
    assert rows(later, "SELECT * FROM ORDERS ORDER BY ID") == [(1, "EU", 10), (2, "US", 20)]
    later.sql("DELETE FROM ORDERS WHERE ID = 1")
    out = delta_spark(
        root, "print(sorted(tuple(r) for r in spark.read.format('delta').load(path).collect()))"
    )
    assert out.strip().splitlines()[-1] == "[(2, 'US', 20)]"


# An older Delta writer's tables: a legacy protocol (writer version 4, no feature list)
# whose generated column and change data feed bind every writer; and a partitioned,
# column-mapped table with the feed on (writer version 5).
LEGACY_JOB = """
legacy = "'delta.minReaderVersion' = '1', 'delta.minWriterVersion' = '4'"
spark.sql(f"CREATE TABLE delta.`{path}/gen` (ID LONG, DOUBLED LONG GENERATED ALWAYS AS "
          f"(ID * 2)) USING delta PARTITIONED BY (DOUBLED) TBLPROPERTIES ({legacy})")
spark.sql(f"CREATE TABLE delta.`{path}/feed` (ID LONG, V STRING) USING delta "
          f"TBLPROPERTIES ({legacy}, 'delta.enableChangeDataFeed' = 'true')")
spark.createDataFrame([(1,)], "ID long").write.format("delta").mode("append").save(f"{path}/gen")
spark.createDataFrame([(1, "a"), (2, "b")], "ID long, V string").write.format("delta") \
    .mode("append").save(f"{path}/feed")
spark.sql(f"CREATE TABLE delta.`{path}/mapped` (ID LONG, P STRING, V STRING) USING delta "
          "PARTITIONED BY (P) TBLPROPERTIES ('delta.columnMapping.mode' = 'name', "
          "'delta.minReaderVersion' = '2', 'delta.minWriterVersion' = '5', "
          "'delta.enableChangeDataFeed' = 'true')")
spark.sql(f"INSERT INTO delta.`{path}/mapped` VALUES (1, 'x', 'a'), (2, 'x', 'b'), (3, 'y', 'c')")
"""
FEED_JOB = """
for table in ("feed", "mapped"):
    feed = spark.read.format("delta").option("readChangeFeed", "true") \
        .option("startingVersion", 2).load(f"{path}/{table}")
    print(sorted((r._commit_version, r._change_type, r.ID, r.V) for r in feed.collect()))
print(sorted(tuple(r) for r in spark.read.format("delta").load(f"{path}/gen").collect()))
"""


def test_an_older_writers_generated_column_and_change_data_feed_hold_for_rewind_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """Tables written with a legacy Delta protocol (writer version 4, as Delta before table
    features wrote them) list no features: Rewind took them for plain tables. Its INSERT
    put NULL in a generated column (delta-spark computes ``ID * 2``), and its DELETE
    rewrote a file of a table with the change data feed on without the change files, so
    the feed's readers saw rows deleted that were not. The generated column's rule now
    binds Rewind's writes (its value computed, as delta-spark does, on INSERT and UPDATE;
    refused by name before). Rewind's UPDATE, DELETE and MERGE of a table with the feed on
    write its change files as delta-spark's do (refused before): delta-spark's change
    feed shows each statement's changes exactly, the rows of a rewritten file that did
    not change in none of them; an INSERT, an insert-only MERGE and a TRUNCATE, which the
    feed reads from the log's own actions, write none. The same on a partitioned,
    column-mapped table, a row moved to another partition too."""
    lake = tmp_path / "lake"
    delta_spark(lake, LEGACY_JOB)
    gen, feed, mapped = lake / "gen", lake / "feed", lake / "mapped"
    conn = connect(now=datetime.now(UTC).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "GEN", str(gen))
    register(conn, "FEED", str(feed))
    register(conn, "MAPPED", str(mapped))
    assert rows(conn, "SELECT * FROM GEN") == [(1, 2)]
    assert [r[8] for r in rows(conn, "DESC TABLE GEN")] == [None, "ID * 2"]  # its expression
    # A value given for it must be the expression's, as delta-spark checks it: nothing
    # is written otherwise (it was replaced by the computed one)
    assert code_of(conn, "INSERT INTO GEN VALUES (6, 0)") == "INVALID_VALUE"
    assert code_of(conn, "UPDATE GEN SET DOUBLED = 1") == "UNSUPPORTED"
    conn.sql("INSERT INTO GEN (ID) VALUES (5); INSERT INTO GEN VALUES (6, 12)")
    conn.sql("UPDATE GEN SET ID = 7 WHERE ID = 1")
    computed = [(5, 10), (6, 12), (7, 14)]
    assert rows(conn, "SELECT * FROM GEN ORDER BY ID") == computed
    # the table is partitioned by it: each file carries its computed value
    live = log.replay(gen, versions(gen)[-1]).files
    assert sorted(dict(f.partition_values)["DOUBLED"] for f in live) == ["10", "12", "14"]
    # Version 2 is Rewind's retention guard (SPEC R42). 3-4: an INSERT, and an insert-only
    # MERGE (an idempotent load): new files, no change file. 5: a DELETE of one row of the
    # job's two-row file. 6: an UPDATE. 7: a MERGE that updates, deletes and inserts.
    # 8: a DELETE ... USING. 9: a TRUNCATE.
    load = "SELECT 2 AS ID, 'x' AS V UNION ALL SELECT 4, 'd'"
    conn.sql(
        f"INSERT INTO FEED VALUES (3, 'c'); MERGE INTO FEED USING ({load}) S "
        "ON FEED.ID = S.ID WHEN NOT MATCHED THEN INSERT VALUES (S.ID, S.V)"
    )
    conn.sql("DELETE FROM FEED WHERE ID = 1; UPDATE FEED SET V = 'z' WHERE ID = 2")
    upsert = "SELECT 3 AS ID, 'm' AS V UNION ALL SELECT 4, '-' UNION ALL SELECT 5, 'e'"
    merged = conn.sql(
        f"MERGE INTO FEED USING ({upsert}) S ON FEED.ID = S.ID "
        "WHEN MATCHED AND S.V = '-' THEN DELETE WHEN MATCHED THEN UPDATE SET V = S.V "
        "WHEN NOT MATCHED THEN INSERT VALUES (S.ID, S.V)"
    )[-1].rows
    assert [tuple(r) for r in merged] == [(1, 1, 1)]
    conn.sql("DELETE FROM FEED USING (SELECT 5 AS ID) S WHERE FEED.ID = S.ID")
    assert rows(conn, "SELECT * FROM FEED ORDER BY ID") == [(2, "z"), (3, "m")]
    conn.sql("TRUNCATE TABLE FEED")
    # The mapped table: an UPDATE that moves row 2 from partition x to y, a DELETE.
    conn.sql("UPDATE MAPPED SET P = 'y', V = 'B' WHERE ID = 2; DELETE FROM MAPPED WHERE ID = 3")
    assert rows(conn, "SELECT * FROM MAPPED ORDER BY ID") == [(1, "x", "a"), (2, "y", "B")]
    assert all(
        (root / "_change_data").is_dir() for root in (feed, mapped)
    )  # where delta-spark puts them
    *changes, generated = delta_spark(lake, FEED_JOB).strip().splitlines()[-3:]
    assert changes[0] == str(
        sorted(
            [
                (3, "insert", 3, "c"),
                (4, "insert", 4, "d"),
                (5, "delete", 1, "a"),
                (6, "update_preimage", 2, "b"),
                (6, "update_postimage", 2, "z"),
                (7, "update_preimage", 3, "c"),
                (7, "update_postimage", 3, "m"),
                (7, "delete", 4, "d"),
                (7, "insert", 5, "e"),
                (8, "delete", 5, "e"),
                (9, "delete", 2, "z"),
                (9, "delete", 3, "m"),
            ]
        )
    )
    assert changes[1] == str(
        sorted(
            [
                (3, "update_preimage", 2, "b"),
                (3, "update_postimage", 2, "B"),
                (4, "delete", 3, "c"),
            ]
        )
    )
    assert generated == str(computed)
    # The change files are their versions' history: the night reads them from the commits
    # (their `cdc` actions) as time travel from each commit on (SPEC R30, R33), as Delta's
    # VACUUM dates them; with their versions' day of time travel over, into fail-safe.
    made = {root: sorted((root / "_change_data").iterdir()) for root in (feed, mapped)}
    assert all(made.values())
    change_bytes = sum(f.stat().st_size for f in made[feed])
    for hours, there in ((12, True), (48, False)):
        night = connect(now=(datetime.now(UTC) + timedelta(hours=hours)).isoformat())
        assert night.lifecycle()[-1]["failed"] == 0
        assert all(all(f.exists() == there for f in files) for files in made.values())
        ((travel, failsafe),) = rows(
            night,
            "SELECT TIME_TRAVEL_BYTES, FAILSAFE_BYTES FROM "
            "REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS WHERE TABLE_NAME = 'FEED'",
        )
        assert (travel if there else failsafe) >= change_bytes, (travel, failsafe)
    held = sorted(p.name for p in (tmp_path / "home").rglob("failsafe/*/_change_data/*"))
    assert held == sorted(f.name for files in made.values() for f in files)


# Identity columns, as delta-spark makes them (writer version 7, identityColumns): one
# GENERATED ALWAYS, its job's last commit a bad DELETE; one BY DEFAULT counting down.
IDENTITY_JOB = """
spark.sql(f"CREATE TABLE delta.`{path}/always` (ID BIGINT GENERATED ALWAYS AS IDENTITY "
          "(START WITH 10 INCREMENT BY 5), V STRING) USING delta")
spark.sql(f"INSERT INTO delta.`{path}/always` (V) VALUES ('a'), ('b'), ('c')")
spark.sql(f"DELETE FROM delta.`{path}/always` WHERE V = 'b'")
spark.sql(f"CREATE TABLE delta.`{path}/default` (ID BIGINT GENERATED BY DEFAULT AS IDENTITY "
          "(START WITH -1 INCREMENT BY -1), V STRING) USING delta")
spark.sql(f"INSERT INTO delta.`{path}/default` (V) VALUES ('a'), ('b')")
"""
IDENTITY_READ = """
spark.sql(f"INSERT INTO delta.`{path}/always` (V) VALUES ('f')")
for table in ("always", "default"):
    print(sorted(tuple(r) for r in spark.read.format("delta").load(f"{path}/{table}").collect()))
"""


def test_a_table_with_identity_columns_is_restored_and_takes_rewinds_writes_r16_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """Identity columns (delta-spark's surrogate keys): every Rewind write was refused,
    restores too (delta-rs 1.6.6 commits nothing to such a table), so the bad DELETE
    could not be undone. Now Rewind writes those commits itself: the restore brings the
    row back with its key; new rows get the next values past the column's high-water
    mark, which the commit moves, so delta-spark's next row does not reuse one; a value
    given to an ALWAYS column, or an UPDATE of one, is refused as delta-spark refuses it,
    nothing written; a BY DEFAULT column keeps a value given and counts on past it."""
    lake = tmp_path / "lake"
    delta_spark(lake, IDENTITY_JOB)
    always, default = lake / "always", lake / "default"
    conn = registered_at(connect, 4, {"ALWAYS": always, "BYDEFAULT": default})
    protocol = log.replay(always, versions(always)[-1]).protocol
    assert "identityColumns" in protocol["writerFeatures"]
    # DESCRIBE shows the rule where Snowflake does (default; SHOW COLUMNS' autoincrement)
    assert [r[4] for r in rows(conn, "DESC TABLE ALWAYS")] == [
        "IDENTITY START 10 INCREMENT 5",
        None,
    ]
    shown = rows(conn, "SHOW COLUMNS IN TABLE BYDEFAULT")
    assert [r[10] for r in shown] == ["IDENTITY START -1 INCREMENT -1 (BY DEFAULT)", ""]
    conn.restore("LAKE.PUBLIC.ALWAYS", at=(T0 + timedelta(hours=2, minutes=30)).isoformat())
    assert rows(conn, "SELECT * FROM ALWAYS ORDER BY ID") == [(10, "a"), (15, "b"), (20, "c")]
    conn.sql("INSERT INTO ALWAYS (V) VALUES ('d'), ('e')")
    before = (versions(always), data_files(always))
    assert code_of(conn, "INSERT INTO ALWAYS VALUES (1, 'x')") == "INVALID_VALUE"
    assert code_of(conn, "UPDATE ALWAYS SET ID = 3 WHERE V = 'a'") == "UNSUPPORTED"
    merge = "MERGE INTO ALWAYS USING (SELECT 'a' AS V) S ON ALWAYS.V = S.V "
    assert code_of(conn, merge + "WHEN MATCHED THEN UPDATE SET ID = 1") == "UNSUPPORTED"
    assert (versions(always), data_files(always)) == before
    conn.sql("UPDATE ALWAYS SET V = 'B' WHERE ID = 15; DELETE FROM ALWAYS WHERE V = 'e'")
    conn.sql("INSERT INTO BYDEFAULT (V) VALUES ('c'); INSERT INTO BYDEFAULT VALUES (-100, 'x')")
    conn.sql("INSERT INTO BYDEFAULT (V) VALUES ('d')")
    assert log.replay(always, versions(always)[-1]).protocol == protocol
    kept, counted = delta_spark(lake, IDENTITY_READ).strip().splitlines()[-2:]
    assert kept == str([(10, "a"), (15, "B"), (20, "c"), (25, "d"), (35, "f")])
    assert counted == str([(-101, "d"), (-100, "x"), (-3, "c"), (-2, "b"), (-1, "a")])


# Liquid clustering (delta-spark's CLUSTER BY; Databricks' advice for new tables): writer
# version 7 with clustering and domainMetadata, V2 checkpoints (every other version), its
# last commit a bad DELETE.
CLUSTERED_JOB = """
spark.sql(f"CREATE TABLE delta.`{path}` (ID BIGINT, V STRING, AT TIMESTAMP) USING delta "
          "CLUSTER BY (ID, AT) TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', "
          "'delta.checkpointInterval' = '2')")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'a', TIMESTAMP'2026-01-01 10:00:00.123456'), "
          "(2, 'b', NULL), (3, 'c', TIMESTAMP'2026-01-03 00:00:00')")
spark.sql(f"DELETE FROM delta.`{path}` WHERE ID = 2")
"""
CLUSTERED_READ = """
def rows(sql):
    return sorted((r.ID, r.V) for r in spark.sql(sql.format(t=f"delta.`{path}`")).collect())
print([rows("SELECT * FROM {t} WHERE ID = 10"),
       rows("SELECT * FROM {t} WHERE AT > TIMESTAMP'2026-05-05 05:05:05.555'"),
       rows("SELECT * FROM {t} WHERE AT < TIMESTAMP'2026-01-02'")])
spark.sql(f"OPTIMIZE delta.`{path}`")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (30, 'z', NULL)")
print(rows("SELECT * FROM {t}"))
"""


def test_a_clustered_table_is_restored_and_takes_rewinds_writes_r16_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """A liquid-clustered table: delta-rs 1.6.6 commits nothing to it (it needs the
    clustering and domain-metadata features), so every Rewind write was refused, the
    restore of the bad DELETE too (so was a table with V2 checkpoints). Now Rewind writes
    those commits itself: the restore puts the file back with its own statistics; INSERT,
    UPDATE and DELETE add files with statistics of the clustering columns (a timestamp's
    rounded out to the millisecond), which delta-spark's file skipping reads right; its
    OPTIMIZE and its next INSERT run after them, the protocol and the clustering domain
    as they were."""
    root = tmp_path / "lake" / "clustered"
    delta_spark(root, CLUSTERED_JOB)
    conn = registered_at(connect, 4, {"CLUSTERED": root})
    state = log.replay(root, versions(root)[-1])
    assert {"clustering", "v2Checkpoint"} <= set(state.protocol["writerFeatures"])
    assert list((root / "_delta_log").glob("*.checkpoint.*.json"))  # V2, UUID-named
    conn.restore("LAKE.PUBLIC.CLUSTERED", at=(T0 + timedelta(hours=2, minutes=30)).isoformat())
    assert [r[0] for r in rows(conn, "SELECT ID FROM CLUSTERED ORDER BY ID")] == [1, 2, 3]
    restored = log.read_commit(root, versions(root)[-1])
    assert restored is not None
    (added,) = restored.adds()
    assert added["stats"] == log.read_commit(root, 1).adds()[0]["stats"]  # type: ignore[union-attr]
    conn.sql(
        "INSERT INTO CLUSTERED VALUES (10, 'x', '2026-05-05 05:05:05.5555'), (20, NULL, NULL); "
        "UPDATE CLUSTERED SET V = 'C' WHERE ID = 3; DELETE FROM CLUSTERED WHERE ID = 1"
    )
    new = log.read_commit(root, versions(root)[-3])
    assert new is not None
    stats = sorted((json.loads(a["stats"]) for a in new.adds()), key=lambda s: s["nullCount"]["AT"])
    assert stats[0]["minValues"] == {"ID": 10, "AT": "2026-05-05T05:05:05.555Z"}
    assert stats[0]["maxValues"] == {"ID": 10, "AT": "2026-05-05T05:05:05.556Z"}
    assert stats[1]["nullCount"] == {"ID": 0, "AT": 1}
    after = log.replay(root, versions(root)[-1])
    assert (after.protocol, after.domains) == (state.protocol, state.domains)
    skipped, everything = delta_spark(root, CLUSTERED_READ).strip().splitlines()[-2:]
    assert skipped == str([[(10, "x")], [(10, "x")], []])
    assert everything == str([(2, "b"), (3, "C"), (10, "x"), (20, None), (30, "z")])


MAPPED_JOB = """
spark.conf.set("spark.databricks.delta.properties.defaults.enableDeletionVectors", "false")
spark.createDataFrame([(1, "EU", "a", 1.0), (2, "US", "b", 2.0)],
                      "id long, region string, v string, w double") \\
    .write.format("delta").option("delta.columnMapping.mode", "name") \\
    .partitionBy("region").save(f"{path}/named")
spark.sql(f"ALTER TABLE delta.`{path}/named` RENAME COLUMN v TO label")
spark.sql(f"ALTER TABLE delta.`{path}/named` RENAME COLUMN region TO area")
spark.sql(f"ALTER TABLE delta.`{path}/named` DROP COLUMN w")
DeltaTable.forPath(spark, f"{path}/named").delete("id = 2")
spark.createDataFrame([(1, ("a", 1))], "id long, s struct<x: string, y: int>") \\
    .write.format("delta").option("delta.columnMapping.mode", "id").save(f"{path}/ids")
DeltaTable.forPath(spark, f"{path}/ids").delete("id = 1")
"""
MAPPED_READ = """
spark.createDataFrame([(9, "EU", "h", "m")], "id long, area string, label string, note string") \\
    .write.format("delta").mode("append").save(f"{path}/named")
for table in ("named", "ids"):
    print(sorted(tuple(r) for r in spark.read.format("delta").load(f"{path}/{table}").collect()))
"""


def test_a_column_mapped_table_is_restored_and_takes_rewinds_writes_r16_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """Column mapping (delta-spark turns it on to RENAME or DROP a column): every Rewind
    write was refused, the restore of the bad DELETE too. Now Rewind writes those commits
    itself: the restore puts the files back as they were; its new files name each column,
    nested ones too, by its physical name with its column id as Parquet field id, and a
    partition value by the column's physical name (a name-mode table, partitioned by a
    renamed column, one column dropped; an id-mode table, whose readers resolve columns
    by those ids); a column Rewind adds gets a new id and physical name. delta-spark reads
    every row after them and appends into the added column."""
    lake = tmp_path / "lake"
    delta_spark(lake, MAPPED_JOB)
    named, ids = lake / "named", lake / "ids"
    conn = registered_at(connect, 10, {"NAMED": named, "IDS": ids})
    conn.restore("LAKE.PUBLIC.NAMED", at=(T0 + timedelta(hours=4, minutes=30)).isoformat())
    conn.restore("LAKE.PUBLIC.IDS", at=(T0 + timedelta(hours=1, minutes=30)).isoformat())
    assert rows(conn, "SELECT * FROM NAMED ORDER BY ID") == [(1, "EU", "a"), (2, "US", "b")]
    conn.sql(
        "INSERT INTO NAMED (ID, AREA, LABEL) VALUES (5, 'EU', 'e'), (6, 'APAC', 'f'); "
        "UPDATE NAMED SET LABEL = 'B' WHERE ID = 2; DELETE FROM NAMED WHERE ID = 1; "
        "ALTER TABLE NAMED ADD COLUMN NOTE STRING; INSERT INTO NAMED VALUES (7, 'EU', 'g', 'n'); "
        "INSERT INTO IDS SELECT 2, OBJECT_CONSTRUCT('X', 'q', 'Y', 7); "
        "UPDATE IDS SET ID = 10 WHERE ID = 1"
    )
    state = log.replay(named, versions(named)[-1])
    physical = log.field_ids(state.metadata)
    assert state.metadata["configuration"]["delta.columnMapping.maxColumnId"] == "5"
    assert physical["NOTE"].startswith("col-")
    update = log.read_commit(named, versions(named)[-4])
    assert update is not None
    ((rewritten, values),) = [(a["path"], a["partitionValues"]) for a in update.adds()]
    assert values == {physical["area"]: "US"}
    footer = pq.ParquetFile(named / rewritten).schema_arrow
    assert [(f.name, f.metadata) for f in footer] == [
        (physical["id"], {b"PARQUET:field_id": b"1"}),
        (physical["label"], {b"PARQUET:field_id": b"3"}),
    ]
    assert rows(conn, "SELECT * FROM IDS ORDER BY ID") == [
        (2, {"x": "q", "y": 7}),
        (10, {"x": "a", "y": 1}),
    ]
    named_rows, id_rows = delta_spark(lake, MAPPED_READ).strip().splitlines()[-2:]
    assert named_rows == str(
        [
            (2, "US", "B", None),
            (5, "EU", "e", None),
            (6, "APAC", "f", None),
            (7, "EU", "g", "n"),
            (9, "EU", "h", "m"),
        ]
    )
    assert id_rows == "[(2, Row(x='q', y=7)), (10, Row(x='a', y=1))]"


# Databricks' defaults for a new table: deletion vectors, row tracking, column mapping;
# and the change data feed on, as a CDC pipeline's source has it.
TRACKED_JOB = """
spark.sql(f"CREATE TABLE delta.`{path}` (id long, v string) USING delta TBLPROPERTIES ("
          "'delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'true', "
          "'delta.columnMapping.mode' = 'name', 'delta.enableChangeDataFeed' = 'true')")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'a'), (2, 'b')")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (3, 'c')")
spark.sql(f"UPDATE delta.`{path}` SET v = 'B' WHERE id = 2")
spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 3")
"""
TRACKED_IDS = """
ids = spark.sql(f"SELECT id, _metadata.row_id, _metadata.row_commit_version FROM delta.`{path}`")
print(sorted(tuple(r) for r in ids.collect()))
"""
TRACKED_READ = (
    TRACKED_IDS
    + """
spark.sql(f"INSERT INTO delta.`{path}` VALUES (7, 'g')")
spark.sql(f"UPDATE delta.`{path}` SET v = 'F' WHERE id = 6")
rows = spark.sql(f"SELECT id, v, _metadata.row_id FROM delta.`{path}`").collect()
print(sorted((r[0], r[1]) for r in rows), len({r[2] for r in rows}) == len(rows))
"""
)


def test_a_table_with_row_tracking_is_restored_and_takes_rewinds_writes_r16_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """Row tracking (with deletion vectors and column mapping: a new Databricks table's
    defaults): every Rewind write was refused, the restore of the bad DELETE too. Now the
    restore puts the file back with its row ids (``baseRowId``, ``defaultRowCommitVersion``
    as its add had them); a new file gets fresh ids past the table's high-water mark, which
    the same commit moves (the ``delta.rowTracking`` domain), and this version as its row
    commit version. Rewind's UPDATE, DELETE and MERGE keep each row's stable row id, and
    a row copied unchanged its row commit version, as delta-spark reads them (Delta's
    materialized row ids: the rewritten files hold them in the table's hidden columns);
    they were fresh ones; the feed's change files hold exactly their changes.
    delta-spark's row ids stay unique across its next INSERT and UPDATE."""
    root = tmp_path / "lake" / "tracked"
    delta_spark(root, TRACKED_JOB)
    deleted = log.read_commit(root, versions(root)[-1])  # the team's bad DELETE
    assert deleted is not None
    conn = registered_at(connect, 10, {"TRACKED": root})
    conn.restore("LAKE.PUBLIC.TRACKED", at=(T0 + timedelta(hours=4, minutes=30)).isoformat())
    assert rows(conn, "SELECT * FROM TRACKED ORDER BY ID") == [(1, "a"), (2, "B"), (3, "c")]
    restored = log.read_commit(root, versions(root)[-1])
    assert restored is not None
    gone = {a["path"]: a for a in [*deleted.removes(), *deleted.adds()]}
    for add in restored.adds():
        was = gone[add["path"]]
        assert (add["baseRowId"], add["defaultRowCommitVersion"]) == (
            was["baseRowId"],
            was["defaultRowCommitVersion"],
        )
    mark = json.loads(log.replay(root, versions(root)[-1]).domains["delta.rowTracking"])
    conn.sql("INSERT INTO TRACKED VALUES (5, 'e'), (6, 'f')")
    inserted = log.read_commit(root, versions(root)[-1])
    assert inserted is not None
    ids = sorted((a["baseRowId"], a["defaultRowCommitVersion"]) for a in inserted.adds())
    first = mark["rowIdHighWaterMark"] + 1
    bases = [i for i, _ in ids]  # one file of two rows, or two of one (Spark's tasks)
    assert bases == [first + k for k in range(len(bases))]
    assert {v for _, v in ids} == {versions(root)[-1]}
    moved = json.loads(log.replay(root, versions(root)[-1]).domains["delta.rowTracking"])
    assert moved["rowIdHighWaterMark"] == first + 1
    conn.sql("UPDATE TRACKED SET V = 'A' WHERE ID = 1; DELETE FROM TRACKED WHERE ID = 5")
    # One file of three rows (a GROUP BY's tiny shuffle, which Spark coalesces into one
    # task), then statements that rewrite it: 20 copied each time, 21 updated by the
    # UPDATE and by the MERGE, 22 deleted.
    three = "SELECT 20 AS ID, 'p' AS V UNION ALL SELECT 21, 'q' UNION ALL SELECT 22, 'r'"
    conn.sql(f"INSERT INTO TRACKED SELECT ID, MIN(V) FROM ({three}) GROUP BY ID")
    assert len(log.read_commit(root, versions(root)[-1]).adds()) == 1
    before = literal_eval(delta_spark(root, TRACKED_IDS).strip().splitlines()[-1])
    conn.sql("UPDATE TRACKED SET V = 'Q' WHERE ID = 21; DELETE FROM TRACKED WHERE ID = 22")
    updated = versions(root)[-2]
    conn.sql(
        "MERGE INTO TRACKED USING (SELECT 21 AS ID) S ON TRACKED.ID = S.ID "
        "WHEN MATCHED THEN UPDATE SET V = 'QQ'"
    )
    merged = log.read_commit(root, versions(root)[-1])
    assert merged is not None
    assert merged.info["tags"] == {"delta.rowTracking.preserved": "true"}
    # Rewind's commit at a multiple of the checkpoint interval checkpoints the table
    # (delta-rs's checkpoint: row ids, their domain, vectors, column mapping), which
    # delta-spark's next job starts from (issue 28 item 4).
    more = [(100 + k, "x") for k in range(-versions(root)[-1] % 10 or 10)]
    conn.sql("; ".join(f"INSERT INTO TRACKED VALUES ({i}, '{v}')" for i, v in more))
    checkpointed = sorted(int(p.name[:20]) for p in root.glob("_delta_log/*.checkpoint.parquet"))
    assert checkpointed[-1:] == [versions(root)[-1]]
    feed = (
        "changes = spark.read.format('delta').option('readChangeFeed', 'true')"
        f".option('startingVersion', {updated}).option('endingVersion', {merged.version})"
        ".load(path)\nprint(sorted((r._commit_version, r._change_type, r.id, r.v) "
        "for r in changes.collect()))"
    )
    ids, last, changes = delta_spark(root, f"{TRACKED_READ}\n{feed}").strip().splitlines()[-3:]
    assert literal_eval(changes) == sorted(
        [
            (updated, "update_preimage", 21, "q"),
            (updated, "update_postimage", 21, "Q"),
            (updated + 1, "delete", 22, "r"),
            (merged.version, "update_preimage", 21, "Q"),
            (merged.version, "update_postimage", 21, "QQ"),
        ]
    )
    after = {row: (row_id, version) for row, row_id, version in literal_eval(ids)}
    kept = {row: (row_id, version) for row, row_id, version in before if row in after}
    assert {row: after[row][0] for row in kept} == {row: kept[row][0] for row in kept}
    assert {row: after[row][1] for row in kept} == {
        **{row: kept[row][1] for row in kept},
        21: merged.version,
    }
    assert kept[21][1] < updated < merged.version
    read, unique = last.rsplit(" ", 1)
    assert read == str(
        [(1, "A"), (2, "B"), (3, "c"), (6, "F"), (7, "g"), (20, "p"), (21, "QQ"), *more]
    )
    assert unique == "True"


CHANGES_READ = (
    """
spark.sql(f"INSERT INTO delta.`{path}` VALUES (4, 'd')")
spark.sql(f"UPDATE delta.`{path}` SET v = 'C' WHERE id = 3")
spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
"""
    + TRACKED_IDS
)


def test_changes_across_another_engines_writes_name_deltas_own_row_ids_r16_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """The CHANGES clause over delta-spark's writes: on its table with row tracking (a
    Databricks default), the net changes of its UPDATE and DELETE (a row it inserted and
    deleted in between in neither; APPEND_ONLY has it), METADATA$ROW_ID its own
    ``_metadata.row_id``. On a plain table of the team's job, Rewind's CHANGE_TRACKING =
    TRUE turns row tracking on in one version that delta-spark writes on from, keeping
    the ids Rewind gave (its INSERT, UPDATE and DELETE read back by CHANGES); a delta-rs
    writer, which has no row tracking, is refused by the table's protocol and writes
    nothing."""
    tracked, plain = tmp_path / "lake" / "tracked", tmp_path / "lake" / "plain"
    delta_spark(tracked, TRACKED_JOB)
    delta_spark(plain, TEAM_JOB)
    conn = registered_at(connect, 10, {"TRACKED": tracked, "PLAIN": plain})
    read = (
        "SELECT ID, V, METADATA$ACTION, METADATA$ISUPDATE, METADATA$ROW_ID FROM {} "
        "CHANGES(INFORMATION => {}) AT(TIMESTAMP => '{}'::TIMESTAMP_LTZ) ORDER BY ID, 3"
    )
    since = (T0 + timedelta(hours=2, minutes=30)).isoformat()  # after rows 1 and 2
    printed = delta_spark(tracked, TRACKED_IDS).strip().splitlines()[-1]
    ids = {row: row_id for row, row_id, _ in literal_eval(printed)}
    assert rows(conn, read.format("TRACKED", "DEFAULT", since)) == [
        (2, "b", "DELETE", True, str(ids[2])),
        (2, "B", "INSERT", True, str(ids[2])),
    ]
    assert [r[:3] for r in rows(conn, read.format("TRACKED", "APPEND_ONLY", since))] == [
        (3, "c", "INSERT")
    ]
    # The team's plain table: tracked from Rewind's ALTER on, delta-spark's writes after
    conn = connect(now=(T0 + timedelta(hours=11)).isoformat())
    conn.sql("USE DATABASE LAKE; ALTER TABLE PLAIN SET CHANGE_TRACKING = TRUE")
    enabled = versions(plain)[-1]
    printed = delta_spark(plain, CHANGES_READ).strip().splitlines()[-1]
    ids = {row: row_id for row, row_id, _ in literal_eval(printed)}
    for k, version in enumerate(versions(plain)[enabled + 1 :]):
        stamp(plain, version, T0 + timedelta(hours=11, minutes=10 * (k + 1)))
    later = connect(now=(T0 + timedelta(hours=12)).isoformat())
    later.sql("USE DATABASE LAKE")
    since = (T0 + timedelta(hours=11, minutes=5)).isoformat()
    got = rows(later, read.format("PLAIN", "DEFAULT", since))
    assert [r[:4] for r in got] == [
        (1, "a", "DELETE", False),
        (3, "c", "DELETE", True),
        (3, "C", "INSERT", True),
        (4, "d", "INSERT", False),
    ]
    # Rewind gave the two live rows ids 0 and 1; delta-spark kept them, and went on past
    assert got[0][4] in ("0", "1") and [r[4] for r in got[1:]] == [str(ids[3])] * 2 + [str(ids[4])]
    assert ids[3] in (0, 1) and ids[4] == 2
    with pytest.raises(DeltaError):
        delta_rs_append(plain, {"id": pa.array([9]), "v": pa.array(["z"])})
    assert rows(later, "SELECT ID, V FROM PLAIN ORDER BY ID") == [(3, "C"), (4, "d")]


def test_change_tracking_on_files_without_row_counts_is_refused_and_writes_nothing_r40(
    tmp_path: Path, connect: Any
) -> None:
    """A writer that logged a file without statistics (Delta allows it): its rows cannot
    be given row ids (the next file's would overlap), so CHANGE_TRACKING = TRUE is
    refused by code, the log unchanged, the table read as before."""
    root = tmp_path / "lake" / "bare"
    write_deltalake(str(root), pa.table({"id": pa.array([1, 2], pa.int64())}))
    first = root / "_delta_log" / f"{0:020d}.json"
    actions = [json.loads(line) for line in first.read_text().splitlines()]
    for action in actions:
        (action.get("add") or {}).pop("stats", None)
    first.write_text("".join(json.dumps(a) + "\n" for a in actions))
    conn = registered_at(connect, 10, {"BARE": root})
    logged = sorted(p.name for p in (root / "_delta_log").iterdir())
    assert code_of(conn, "ALTER TABLE BARE SET CHANGE_TRACKING = TRUE") == (
        "UNSUPPORTED_TABLE_FEATURE"
    )
    assert sorted(p.name for p in (root / "_delta_log").iterdir()) == logged
    assert rows(conn, "SELECT ID FROM BARE ORDER BY ID") == [(1,), (2,)]


# In-commit timestamps: each commit's time is in its commitInfo, not its file's time; the
# team's job's last commit a bad DELETE.
ICT_JOB = """
spark.sql(f"CREATE TABLE delta.`{path}` (id long, v string) USING delta TBLPROPERTIES ("
          "'delta.enableInCommitTimestamps' = 'true', 'delta.enableDeletionVectors' = 'false')")
spark.sql(f"INSERT INTO delta.`{path}` VALUES (1, 'a'), (2, 'b')")
spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 2")
"""
ICT_READ = """
spark.sql(f"INSERT INTO delta.`{path}` VALUES (5, 'e')")
times = [r.timestamp for r in spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()][::-1]
print(sorted(tuple(r) for r in spark.read.format("delta").load(path).collect()),
      len(set(times)) == len(times) and times == sorted(times))
"""


def test_a_table_with_in_commit_timestamps_is_restored_and_takes_rewinds_writes_r16_r40_r43(
    tmp_path: Path, connect: Any
) -> None:
    """In-commit timestamps (a commit's time in its ``commitInfo``: delta-spark's
    ``delta.enableInCommitTimestamps``, which delta-rs 1.6.6 cannot even load): every
    Rewind write was refused, the restore of the team's bad DELETE too. Now Rewind writes
    those commits itself, each with its in-commit timestamp first and past the previous
    commit's; time travel reads each version as of the instant its commit carries; the
    team's next delta-spark INSERT lands after Rewind's commits, the history's times
    increasing."""
    root = tmp_path / "lake" / "ict"
    delta_spark(root, ICT_JOB)
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ICT", str(root))
    ((deleted,),) = rows(
        conn,
        "SELECT QUERY_ID FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
        "WHERE QUERY_TYPE = 'DELTA_COMMIT' ORDER BY START_TIME DESC LIMIT 1",
    )
    conn.restore("LAKE.PUBLIC.ICT", before=deleted)
    assert rows(conn, "SELECT * FROM ICT ORDER BY ID") == [(1, "a"), (2, "b")]
    conn.sql("INSERT INTO ICT VALUES (3, 'c'); UPDATE ICT SET V = 'A' WHERE ID = 1")
    commits = [log.read_commit(root, v) for v in versions(root)]
    stamps = [c.info["inCommitTimestamp"] for c in commits if c is not None]
    assert len(stamps) == len(versions(root)) == 7  # 3 the registration's retention (R42)
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert all(c is not None and "commitInfo" in c.actions[0] for c in commits)
    # The DELETE's version, read as of its commit's instant: row 2 gone
    at = datetime.fromtimestamp(stamps[2] / 1000, UTC).isoformat()
    assert rows(conn, f"SELECT * FROM ICT AT(TIMESTAMP => '{at}') ORDER BY ID") == [(1, "a")]
    read, ordered = delta_spark(root, ICT_READ).strip().splitlines()[-1].rsplit(" ", 1)
    assert read == str([(1, "A"), (2, "b"), (3, "c"), (5, "e")])
    assert ordered == "True"


CLONES_READ = """
import glob
for log in sorted(glob.glob(path + "/*/_delta_log")):
    table = spark.read.format("delta").load(log[: -len("/_delta_log")])
    print(sorted(tuple(r) for r in table.collect()))
"""


def test_a_clone_of_a_column_mapped_table_shares_its_files_r24_r40_r43(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """A clone of a column-mapped table (every table with a renamed or dropped column, every
    new Databricks table) copied all its rows, as delta-rs cannot create such a table.
    Now its version 0, written by Rewind, maps the columns as the source does now (their
    ids and physical names; renamed columns by their new names, the dropped one gone, the
    partition values by physical name) and shares the files: hard links of the source's,
    a file's deletion vector with it (the vector's file linked, the ``deletionVectors``
    feature in the clone's protocol; its rows were copied before). Rewind and delta-spark
    read each clone at the version cloned, Rewind writes to it, and the source's row ids
    stay out of it (it does not track rows)."""
    lake = tmp_path / "lake"
    delta_spark(lake, MAPPED_JOB)
    delta_spark(lake / "tracked", TRACKED_JOB)
    tables = {"NAMED": lake / "named", "IDS": lake / "ids", "TRACKED": lake / "tracked"}
    conn = registered_at(connect, 10, tables)
    then = f"AT(TIMESTAMP => '{(T0 + timedelta(hours=4, minutes=30)).isoformat()}'::TIMESTAMP_TZ)"
    first = f"AT(TIMESTAMP => '{(T0 + timedelta(hours=1, minutes=30)).isoformat()}'::TIMESTAMP_TZ)"
    conn.sql(
        f"CREATE TABLE NAMED_THEN CLONE NAMED {then}; CREATE TABLE IDS_THEN CLONE IDS {first}; "
        f"CREATE TABLE TRACKED_THEN CLONE TRACKED {then}; "
        f"CREATE TABLE NAMED_FIRST CLONE NAMED {first}"  # before the renames and the drop
    )
    assert rows(conn, "SELECT * FROM NAMED_THEN ORDER BY ID") == [(1, "EU", "a"), (2, "US", "b")]
    assert rows(conn, "SELECT * FROM NAMED_FIRST ORDER BY ID") == [(1, "EU", "a"), (2, "US", "b")]
    assert rows(conn, "SELECT * FROM IDS_THEN") == [(1, {"x": "a", "y": 1})]
    assert rows(conn, "SELECT * FROM TRACKED_THEN ORDER BY ID") == [(1, "a"), (2, "B"), (3, "c")]
    sources = {
        p.stat().st_ino
        for root in tables.values()
        for p in root.rglob("*")
        if p.suffix in (".parquet", ".bin")
    }
    clones = sorted((home / "warehouse").glob("*/_delta_log"))
    assert len(clones) == 4
    shared, copied, vectors = [], [], []
    features = ["columnMapping", "deletionVectors"]
    for clone_log in clones:
        version_0 = log.read_commit(clone_log.parent, 0)
        assert version_0 is not None
        protocol = next(a["protocol"] for a in version_0.actions if "protocol" in a)
        vectored = [
            log.dv_file(a["deletionVector"]) for a in version_0.adds() if a.get("deletionVector")
        ]
        assert protocol == (
            {"minReaderVersion": 3, "minWriterVersion": 7}
            | {"readerFeatures": features, "writerFeatures": features}
            if vectored
            else {"minReaderVersion": 2, "minWriterVersion": 5}
        )
        for path in [a["path"] for a in version_0.adds()] + vectored:
            inode = (clone_log.parent / str(path)).stat().st_ino
            (shared if inode in sources else copied).append(path)
        vectors += vectored
    # NAMED's two partitions (twice), IDS's file, TRACKED's three files and the vector
    # file of its UPDATE's vector on the first
    assert (len(shared), len(copied), len(vectors)) == (9, 0, 1)
    conn.sql("INSERT INTO NAMED_THEN VALUES (3, 'APAC', 'c'); UPDATE TRACKED_THEN SET V = 'C'")
    read = delta_spark(home / "warehouse", CLONES_READ).strip().splitlines()[-4:]
    assert sorted(read) == sorted(
        [
            str([(1, "EU", "a"), (2, "US", "b"), (3, "APAC", "c")]),
            str([(1, "EU", "a"), (2, "US", "b")]),
            "[(1, Row(x='a', y=1))]",
            str([(1, "C"), (2, "C"), (3, "C")]),
        ]
    )


def test_a_point_in_the_window_of_a_table_unchanged_for_weeks_reads_through_delta_r16_r42(
    tmp_path: Path, connect: Any
) -> None:
    """On the wall clock: a table with deletion vectors (read through Delta), last changed
    four weeks ago, registered with a retention of one day. A point two hours ago is in
    the window (R16) and its version is the current one, committed weeks ago, older than
    the ``delta.deletedFileRetentionDuration`` Rewind gives the table (R42): delta-spark 4
    refused that read (DELTA_UNSUPPORTED_TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION_DURATION,
    reaching the user as an error). Rewind's retention decides, and the rows read."""
    root = tmp_path / "lake" / "quiet"
    delta_spark(
        root,
        """
spark.sql(f"CREATE TABLE delta.`{path}` (id long, v string) USING delta "
          "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
spark.sql(f"INSERT INTO delta.`{path}` SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b')")
spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 2")
""",
    )
    wall = datetime.now(UTC)
    for version in versions(root):
        stamp(root, version, wall - timedelta(days=28, hours=-version))
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "QUIET", str(root))
    point = (wall - timedelta(hours=2)).isoformat()
    assert rows(conn, f"SELECT * FROM QUIET AT(TIMESTAMP => '{point}'::TIMESTAMP_TZ)") == [(1, "a")]
    assert rows(conn, "SELECT * FROM QUIET AT(OFFSET => -7200)") == [(1, "a")]


def test_another_engines_vacuum_cannot_cut_time_travel_and_a_forced_one_is_named_r42(
    lake: Path, connect: Any
) -> None:
    """On the wall clock (delta-spark's VACUUM reads it): after Rewind's DELETE, the team's
    VACUUM with its default settings deletes no file Rewind holds (retention 30 days);
    one with the safety check off deletes the removed file, and the night's validation
    fails naming the table and the file."""
    now = datetime.now(UTC)
    for version in versions(lake):
        stamp(lake, version, now - timedelta(hours=3 - version))
    conn = connect(now=now.isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", str(lake), "DATA_RETENTION_TIME_IN_DAYS = 30")
    conn.sql("DELETE FROM ORDERS WHERE ID = 1")
    held = data_files(lake)
    # One job, as a team would run it: VACUUM with the defaults, the files it left, then
    # VACUUM with the safety check off.
    out = delta_spark(
        lake,
        """
        from pathlib import Path
        spark.sql(f"VACUUM delta.`{path}`").collect()
        files = Path(path).rglob("*.parquet")
        print(sorted(str(p.relative_to(path)) for p in files if "_delta_log" not in p.parts))
        spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        spark.sql(f"VACUUM delta.`{path}` RETAIN 0 HOURS").collect()
        """,
    )
    left = next(line for line in out.splitlines() if line.startswith("["))
    assert left == str(sorted(held)), out
    gone = sorted(set(held) - set(data_files(lake)))
    assert gone
    later = connect(now=(now + timedelta(days=2)).isoformat())
    with pytest.raises(RewindError) as failed:
        later.lifecycle()
    assert failed.value.code == "VALIDATION_FAILED"
    assert "vanished" in failed.value.message
    assert "LAKE.PUBLIC.ORDERS id" in failed.value.message
    assert all(path in failed.value.message for path in gone)


def test_a_writer_still_appending_to_a_dropped_external_table_loses_nothing_r41_r42(
    lake: Path, connect: Any
) -> None:
    """Dropped in Rewind, the team's job keeps appending: the nights report the commits
    after the drop and move none of its files; once the drop's time travel is over,
    Rewind lets go of the location and every row the team wrote is still there."""
    now = datetime.now(UTC)
    for version in versions(lake):
        stamp(lake, version, now - timedelta(hours=3 - version))
    conn = connect(now=now.isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", str(lake))
    conn.sql("DROP TABLE ORDERS")
    delta_spark(
        lake,
        """
        spark.createDataFrame([(9, "z")], "id long, v string").write.format("delta") \\
            .mode("append").save(path)
        """,
    )
    stamp(lake, versions(lake)[-1], now + timedelta(minutes=5))
    night = connect(now=(now + timedelta(hours=2)).isoformat())
    steps = night.lifecycle()
    expired = next(step for step in steps if "tables_written_after_drop" in step)
    metrics = "SELECT ID FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS WHERE TABLE_NAME='ORDERS'"
    # By id: the summary is Airflow's XCom, which every reader of the run sees (R37).
    assert expired["tables_written_after_drop"] == night.run(metrics).column("ID")
    assert expired["files_moved"] == 0
    connect(now=(now + timedelta(days=40)).isoformat()).lifecycle()
    team_rows = read_arrow(lake)["id"].to_pylist()
    assert sorted(team_rows) == [1, 3, 9]
    assert all((lake / f.path).exists() for f in log.replay(lake, versions(lake)[-1]).files)
    assert os.path.isdir(lake / "_delta_log")


def test_files_removed_long_before_registration_get_their_full_fail_safe_week_r41(
    lake: Path, connect: Any, home: Path
) -> None:
    """The team's DELETE (hour 3 of day 0) removed a file; registered on day 10 with
    retention 1, that file is past its window: the first night moves it to fail-safe,
    where it stays 7 days from the registration, not from its window's end."""
    registered = T0 + timedelta(days=10)
    conn = connect(now=registered.isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", str(lake))
    assert night(connect, registered + timedelta(hours=1))["files_moved"] == 1
    assert night(connect, registered + timedelta(days=6, hours=23))["files_purged"] == 0
    assert night(connect, registered + timedelta(days=7, hours=1))["files_purged"] == 1


def test_the_nights_run_over_a_table_whose_early_logs_were_cleaned_after_a_checkpoint_r41_r43(
    tmp_path: Path, connect: Any
) -> None:
    """A delta-rs writer checkpoints at version 2 and its early JSON commits are deleted
    (what a short logRetentionDuration does) before registration: the table registers
    and reads right from the checkpoint, a point before it is TIME_TRAVEL_UNAVAILABLE,
    and the nights take the files version 3 removed through fail-safe to their purge."""
    root = tmp_path / "lake" / "events"
    for i in range(3):
        write_deltalake(str(root), pa.table({"id": [i]}), mode="append")
    DeltaTable(str(root)).create_checkpoint()
    for version in (0, 1):
        log.commit_file(root, version).unlink()
    write_deltalake(str(root), pa.table({"id": [7]}), mode="overwrite")
    for version in versions(root):
        stamp(root, version, T0 + timedelta(hours=version + 1))
    conn = connect(now=(T0 + timedelta(days=1)).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "EVENTS", str(root), "DATA_RETENTION_TIME_IN_DAYS = 1")
    assert rows(conn, "SELECT ID FROM EVENTS") == [(7,)]
    then = (T0 + timedelta(hours=3, minutes=30)).isoformat()
    assert rows(conn, f"SELECT ID FROM EVENTS AT(TIMESTAMP => '{then}') ORDER BY ID") == [
        (0,),
        (1,),
        (2,),
    ]
    early = (T0 + timedelta(hours=1, minutes=30)).isoformat()
    assert code_of(conn, f"SELECT * FROM EVENTS AT(TIMESTAMP => '{early}')") == (
        "TIME_TRAVEL_UNAVAILABLE"
    )
    assert night(connect, T0 + timedelta(days=2))["files_moved"] == 3
    assert night(connect, T0 + timedelta(days=8))["files_purged"] == 0
    assert night(connect, T0 + timedelta(days=8, hours=5))["files_purged"] == 3
    assert rows(conn, "SELECT ID FROM EVENTS") == [(7,)]


def test_a_failed_writer_s_leftover_is_time_travel_until_delta_s_week_has_passed_r33_r41(
    tmp_path: Path, connect: Any
) -> None:
    """Two files no version references sit in the team's directory (a failed writer's):
    one written 20 days before registration, one an hour before. Counted as time travel
    (R33), the old one goes to fail-safe at the first night; the young one stays where
    it is until 7 days after it was written (a writer may still be about to commit it),
    though the table's retention is 1 day. Other programs' files, as old, are no table
    data, as Delta's VACUUM reads the directory: a streaming job's checkpoint kept in the
    table's ``_checkpoint`` folder, Spark's ``_SUCCESS`` marker and a UniForm table's
    Iceberg ``metadata`` folder stay where they are, uncounted (the night moved them into
    fail-safe, and the streaming job lost its offsets)."""
    root = tmp_path / "lake" / "events"
    write_deltalake(str(root), pa.table({"id": [1, 2]}))
    stamp(root, 0, T0)
    (data,) = data_files(root)
    registered = T0 + timedelta(days=1)
    sizes = {}
    theirs = ["_checkpoint/offsets/0", "_SUCCESS", "metadata/00001-a.metadata.json"]
    for name in theirs:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("{}")
    for name, written in (("old", T0 - timedelta(days=20)), ("young", registered)):
        leftover = root / f"part-{name}-leftover.parquet"
        shutil.copyfile(root / data, leftover)
        os.utime(leftover, (written.timestamp(), written.timestamp()))
        sizes[name] = leftover.stat().st_size
    for name in theirs:
        old = (T0 - timedelta(days=20)).timestamp()
        os.utime(root / name, (old, old))
    conn = connect(now=registered.isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "EVENTS", str(root), "DATA_RETENTION_TIME_IN_DAYS = 1")

    def bytes_at(at: datetime) -> tuple[int, int, int]:
        session = connect(now=at.isoformat())
        steps = session.lifecycle()
        assert steps[-1]["failed"] == 0
        (row,) = rows(
            session,
            "SELECT ACTIVE_BYTES, TIME_TRAVEL_BYTES, FAILSAFE_BYTES "
            "FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS WHERE TABLE_NAME = 'EVENTS'",
        )
        return row

    active = (root / data).stat().st_size
    assert bytes_at(registered + timedelta(hours=1)) == (active, sizes["young"], sizes["old"])
    assert not (root / "part-old-leftover.parquet").exists()
    assert bytes_at(registered + timedelta(days=6, hours=23)) == (
        active,
        sizes["young"],
        sizes["old"],
    )
    assert (root / "part-young-leftover.parquet").exists()
    assert bytes_at(registered + timedelta(days=7, hours=1)) == (active, 0, sizes["young"])
    assert sorted(data_files(root)) == [data]
    assert all((root / name).read_text() == "{}" for name in theirs)


def test_retention_properties_another_engine_lowered_fail_the_night_by_name_r42(
    tmp_path: Path, connect: Any
) -> None:
    """The team's ALTER (delta-rs) lowers the VACUUM retention Rewind set: the night's
    validation fails naming the table, the property and what it needs, before a VACUUM
    elsewhere can act on it; Rewind's ALTER raises it again and the next night passes."""
    root = tmp_path / "lake" / "events"
    write_deltalake(str(root), pa.table({"id": [1, 2]}))
    stamp(root, 0, T0)
    conn = connect(now=(T0 + timedelta(hours=1)).isoformat())
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "EVENTS", str(root), "DATA_RETENTION_TIME_IN_DAYS = 30")
    DeltaTable(str(root)).alter.set_table_properties(
        {"delta.deletedFileRetentionDuration": "interval 1 days"}
    )
    stamp(root, versions(root)[-1], T0 + timedelta(hours=2))
    with pytest.raises(RewindError) as failed:
        connect(now=(T0 + timedelta(days=1)).isoformat()).lifecycle()
    assert failed.value.code == "VALIDATION_FAILED"
    assert "LAKE.PUBLIC.EVENTS id" in failed.value.message
    assert (
        "delta.deletedFileRetentionDuration is interval 1 days, needs interval 37 days"
        in failed.value.message
    )
    fix = connect(now=(T0 + timedelta(days=1, hours=1)).isoformat())
    fix.sql("ALTER TABLE LAKE.PUBLIC.EVENTS SET DATA_RETENTION_TIME_IN_DAYS = 30")
    configuration = DeltaTable(str(root)).metadata().configuration
    assert configuration["delta.deletedFileRetentionDuration"] == "interval 37 days"
    assert connect(now=(T0 + timedelta(days=2)).isoformat()).lifecycle()[-1]["failed"] == 0


def test_grants_audit_and_fail_safe_recovery_hold_for_an_external_table_r12_r36_r37_r41(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """A role granted SELECT reads the team's table, and nobody else sees it; the read is in
    ACCESS_HISTORY under the table's name; the version the team's overwrite replaced,
    once its files are in fail-safe, is recovered into a new Rewind table."""
    root = tmp_path / "lake" / "events"
    write_deltalake(str(root), pa.table({"id": [1, 2]}))
    stamp(root, 0, T0)
    write_deltalake(str(root), pa.table({"id": [3]}), mode="overwrite")
    stamp(root, 1, T0 + timedelta(hours=1))
    admin = connect(now=(T0 + timedelta(hours=2)).isoformat())
    admin.sql(
        "CREATE DATABASE LAKE; CREATE ROLE ANALYST; CREATE USER ANA DEFAULT_ROLE = ANALYST;"
        "CREATE USER BOB; GRANT ROLE ANALYST TO USER ANA"
    )
    register(admin, "EVENTS", str(root), "DATA_RETENTION_TIME_IN_DAYS = 1")
    admin.sql("GRANT SELECT ON TABLE LAKE.PUBLIC.EVENTS TO ROLE ANALYST")
    ana = connect(now=(T0 + timedelta(hours=3)).isoformat(), user="ANA")
    assert rows(ana, "SELECT ID FROM LAKE.PUBLIC.EVENTS") == [(3,)]
    bob = connect(now=(T0 + timedelta(hours=3)).isoformat(), user="BOB")
    # Holding nothing on it, BOB is told no such table exists (R37: no existence leak).
    assert code_of(bob, "SELECT ID FROM LAKE.PUBLIC.EVENTS") == "OBJECT_NOT_FOUND"
    read = rows(
        connect(now=(T0 + timedelta(hours=4)).isoformat()),
        "SELECT a.user_name FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY a "
        "WHERE ARRAY_SIZE(a.base_objects_accessed) > 0 "
        "AND a.base_objects_accessed[0]:objectName::string = 'LAKE.PUBLIC.EVENTS'",
    )
    assert ("ANA",) in read
    assert night(connect, T0 + timedelta(days=2))["files_moved"] == 1
    later = connect(now=(T0 + timedelta(days=2, hours=1)).isoformat())
    (table_id,) = later.failsafe_list().column("table_id")
    later.failsafe_recover(table_id, "LAKE.PUBLIC.EVENTS_V0", version=0)
    assert rows(later, "SELECT ID FROM LAKE.PUBLIC.EVENTS_V0 ORDER BY ID") == [(1,), (2,)]
    assert rows(later, "SELECT ID FROM LAKE.PUBLIC.EVENTS") == [(3,)]
    assert versions(root) == [0, 1, 2]  # the guard's commit; recovery wrote nothing there


def test_a_partitioned_table_keeps_its_partition_values_in_clones_and_restores_r24_r41_r43(
    tmp_path: Path, connect: Any, home: Path
) -> None:
    """A team's table partitioned by REGION (a plain delta-rs writer): its files hold no
    REGION, the log does. A clone and a restore in place carry each file's partition
    values (Rewind's clone had them empty: every REGION read NULL). Rewind's INSERT, UPDATE,
    DELETE and MERGE write by partition, each new file with its values (they were refused:
    the rows of Rewind's files had none), and delta-spark reads what they wrote.
    Its commits are hours old by the wall clock: Delta reads a partitioned version itself
    (``versionAsOf``) and refuses one older than the table's deletedFileRetentionDuration
    by the wall clock, whatever Rewind's clock says."""
    root = tmp_path / "lake" / "sales"
    first = pa.table({"ID": [1, 2, 3], "REGION": ["eu", "us", "eu"]})
    write_deltalake(root, first, partition_by=["REGION"])
    write_deltalake(root, pa.table({"ID": [4], "REGION": ["us"]}), mode="append")
    DeltaTable(root).delete("ID = 1")  # the team's bad DELETE
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=4)
    for version in versions(root):
        stamp(root, version, start + timedelta(hours=version))
    conn = connect()
    conn.sql("CREATE DATABASE D; USE D")
    register(conn, "SALES", str(root))
    everything = [(1, "eu"), (2, "us"), (3, "eu"), (4, "us")]
    point = (start + timedelta(hours=1, minutes=30)).strftime("%Y-%m-%d %H:%M:%S")
    before_delete = f"AT(TIMESTAMP => '{point} +0000'::TIMESTAMP_TZ)"
    assert rows(conn, "SELECT ID, REGION FROM SALES ORDER BY ID") == everything[1:]
    assert rows(conn, f"SELECT ID, REGION FROM SALES {before_delete} ORDER BY ID") == everything

    conn.sql(f"CREATE TABLE C CLONE SALES {before_delete}")
    assert rows(conn, "SELECT ID, REGION FROM C ORDER BY ID") == everything
    (clone_log,) = (home / "warehouse").glob("*/_delta_log")
    read = read_arrow(clone_log.parent).sort_by("ID")  # Arrow's reader of the log, not Spark
    assert list(zip(read["ID"].to_pylist(), read["REGION"].to_pylist(), strict=True)) == everything

    # An INSERT writes by partition: each new file with its partition values, in the log
    conn.sql("INSERT INTO C VALUES (5, 'eu'), (6, NULL), (7, 'a/b c:d%'), (8, '')")
    added = [(5, "eu"), (6, None), (7, "a/b c:d%"), (8, None)]  # '' is NULL, as in Spark
    assert rows(conn, "SELECT ID, REGION FROM C ORDER BY ID") == everything + added
    read = read_arrow(clone_log.parent).sort_by("ID")
    assert list(zip(read["ID"].to_pylist(), read["REGION"].to_pylist(), strict=True)) == (
        everything + added
    )
    # Snowflake's recovery of a bad DELETE, into the team's own table; then Rewind's
    # rewrites of its files, a row moved to another partition among them: delta-spark reads
    conn.sql(f"INSERT INTO SALES SELECT * FROM SALES {before_delete} WHERE ID = 1")
    job = "print(sorted((r.ID, r.REGION) for r in spark.read.format('delta').load(path).collect()))"
    assert delta_spark(root, job).split("\n")[-2] == str(everything)
    conn.sql("UPDATE SALES SET REGION = 'apac' WHERE ID = 2; DELETE FROM SALES WHERE ID = 3")
    conn.sql(
        "MERGE INTO SALES t USING (SELECT 4 AS ID, 'eu' AS REGION UNION ALL SELECT 10, 'us') s "
        "ON t.ID = s.ID WHEN MATCHED THEN UPDATE SET REGION = s.REGION "
        "WHEN NOT MATCHED THEN INSERT (ID, REGION) VALUES (s.ID, s.REGION)"
    )
    changed = [(1, "eu"), (2, "apac"), (4, "eu"), (10, "us")]
    assert rows(conn, "SELECT ID, REGION FROM SALES ORDER BY ID") == changed
    assert delta_spark(root, job).split("\n")[-2] == str(changed)

    moment = (start + timedelta(hours=1, minutes=30)).isoformat()
    conn.restore("D.PUBLIC.SALES", at=moment)  # the team's row 1 back, in "eu"
    read = read_arrow(root).sort_by("ID")
    assert list(zip(read["ID"].to_pylist(), read["REGION"].to_pylist(), strict=True)) == everything


RECOVERED_JOB = """
spark.sql(f"CREATE TABLE delta.`{path}` (id long, region string, v string) USING delta "
          "PARTITIONED BY (region) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
          "'delta.columnMapping.mode' = 'name')")
spark.sql(f"INSERT INTO delta.`{path}` SELECT /*+ COALESCE(1) */ * FROM VALUES "
          "(1, 'EU', 'a'), (2, 'EU', 'b'), (3, 'US', 'c')")
spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN v TO label")
spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 2")
"""


def test_a_partitioned_column_mapped_version_with_vectors_is_recovered_from_failsafe_r12_r43(
    tmp_path: Path, connect: Any
) -> None:
    """A new Databricks table's shape (partitioned, column mapping, deletion vectors): the
    team renames a column and deletes a row (a vector), then Rewind's DELETE removes the
    vector's file and its data file, which a night moves into fail-safe. Fail-safe
    recovery (SPEC R12) of the team's DELETE and of the version before the rename gives
    each version's rows: the partition values from the log, the columns by their physical
    names under the version's own names, the vector (copied out of fail-safe with its
    file) still deleting its row. Recovered before as a plain table: no partition column,
    the mapped columns NULL; with vectors, a version 0 naming a vector file it lacked."""
    root = tmp_path / "lake" / "regional"
    delta_spark(root, RECOVERED_JOB)
    conn = registered_at(connect, 10, {"REGIONAL": root})
    conn.sql("DELETE FROM LAKE.PUBLIC.REGIONAL WHERE ID = 1")  # the EU file and its vector leave
    moved = night(connect, T0 + timedelta(days=2))["files_moved"]
    assert moved == 2
    later = connect(now=(T0 + timedelta(days=2, hours=1)).isoformat())
    ((table_id, *_),) = later.failsafe_list().rows
    later.failsafe_recover(table_id, "LAKE.PUBLIC.DELETED", version=3)
    later.failsafe_recover(table_id, "LAKE.PUBLIC.FIRST", version=1)
    deleted = later.sql("SELECT * FROM LAKE.PUBLIC.DELETED ORDER BY ID")[-1]
    assert (deleted.columns, deleted.rows) == (
        ["ID", "REGION", "LABEL"],
        [[1, "EU", "a"], [3, "US", "c"]],
    )
    first = later.sql("SELECT * FROM LAKE.PUBLIC.FIRST ORDER BY ID")[-1]
    assert (first.columns, first.rows) == (
        ["ID", "REGION", "V"],
        [[1, "EU", "a"], [2, "EU", "b"], [3, "US", "c"]],
    )
    assert rows(later, "SELECT * FROM LAKE.PUBLIC.REGIONAL") == [(3, "US", "c")]
