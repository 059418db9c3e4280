"""The audit views as an ACCOUNTADMIN sees them (SPEC R36), and who may see them (R37).

One scripted history (module fixture ``audit``) runs a statement of every kind, one
minute apart, and reads ``REWIND.ACCOUNT_USAGE.ACCESS_HISTORY`` and ``QUERY_HISTORY``
through SQL once; each test checks the rows of some of its statements. The 365-day
cleanup and the access check get homes of their own.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import text
from sqlalchemy.orm import Session
from test_dml import catalog

import rewind
from rewind.catalog.db import MIGRATIONS, make_engine
from rewind.catalog.models import Role, RoleGrant, User
from rewind.config import Config
from rewind.errors import RewindError
from rewind.runner import run_step
from rewind.storage.columns import column_id

# One worker for the module: its module fixtures are built once.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("test_audit")]

T0 = datetime(2026, 5, 4, 9, tzinfo=UTC)
YEAR = timedelta(days=365)  # SPEC R36: the audit trail is kept 365 days
SECOND = timedelta(seconds=1)
VIEWS = "REWIND.ACCOUNT_USAGE"


@dataclass
class History:
    """A scripted warehouse's audit views, by statement label."""

    home: Path
    ids: dict[str, str] = field(default_factory=dict)
    access: dict[str, dict[str, Any]] = field(default_factory=dict)  # query id -> row
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # all its rows
    queries: dict[str, dict[str, Any]] = field(default_factory=dict)  # query id -> row

    def row(self, label: str) -> dict[str, Any]:
        return self.access[self.ids[label]]

    def names(self, label: str, column: str) -> list[str]:
        return [entry["objectName"] for entry in self.row(label)[column]]


def run(home: Path, at: datetime, sql: str, user: str | None = None) -> str:
    """Run ``sql`` in a new session at ``at``; the last statement's query id."""
    conn = rewind.connect(home=home, user=user, now=at)
    try:
        return conn.sql(sql)[-1].query_id
    finally:
        conn.close()


def minute(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def view(home: Path, sql: str, now: datetime) -> list[dict[str, Any]]:
    """Rows of a query over the audit views as ADMIN, JSON columns decoded."""
    conn = rewind.connect(home=home, now=now)
    try:
        result = conn.sql(sql)[-1]
    finally:
        conn.close()
    return [dict(zip(result.columns, map(_decoded, row), strict=True)) for row in result.rows]


def _decoded(value: Any) -> Any:
    if isinstance(value, list):
        return [json.loads(v) for v in value]
    if isinstance(value, str) and value.startswith("{"):
        return json.loads(value)
    return value


SCRIPT = [
    ("create_db", "CREATE DATABASE D"),
    ("create_t", "CREATE TABLE T (A INT, B INT, C VARCHAR) DATA_RETENTION_TIME_IN_DAYS = 3"),
    ("create_u", "CREATE TABLE U (ID INT, X INT)"),
    ("insert_values", "INSERT INTO T VALUES (1, 10, 'x'), (2, 20, 'y')"),
    ("insert_select", "INSERT INTO U (X, ID) SELECT B + 1, A FROM T WHERE C = 'x'"),
    (
        "select",
        "SELECT t.a, u.x FROM T AT(OFFSET => -90) t "
        "JOIN U BEFORE(STATEMENT => '{insert_select}') u ON t.a = u.id WHERE t.c = 'x'",
    ),
    ("count", "SELECT COUNT(*) FROM T"),
    ("ctas", "CREATE TABLE N AS SELECT A + B AS S, UPPER(C) AS C FROM T"),
    ("update", "UPDATE T SET B = A * 100 WHERE C = 'y'"),
    (
        "merge",
        "MERGE INTO U USING (SELECT A, B * 2 AS B2 FROM T) s ON U.ID = s.A "
        "WHEN MATCHED THEN UPDATE SET X = s.B2 "
        "WHEN NOT MATCHED THEN INSERT (ID, X) VALUES (s.A, 0)",
    ),
    ("delete", "DELETE FROM T WHERE A = 1"),
    ("truncate", "TRUNCATE TABLE N"),
    ("alter_set", "ALTER TABLE U SET DATA_RETENTION_TIME_IN_DAYS = 5"),
    ("add_column", "ALTER TABLE U ADD COLUMN Y INT"),
    ("rename", "ALTER TABLE N RENAME TO N2"),
    ("create_v", "CREATE TABLE V (Z INT)"),
    ("swap", "ALTER TABLE V SWAP WITH U"),
    ("drop", "DROP TABLE N2"),
    ("undrop", "UNDROP TABLE N2"),
    ("replace", "CREATE OR REPLACE TABLE N2 (Q INT)"),
    ("table_clone", "CREATE TABLE TC CLONE T AT(OFFSET => -60)"),
    ("schema_clone", "CREATE SCHEMA S2 CLONE D.PUBLIC"),
    ("rename_schema", "ALTER SCHEMA D.S2 RENAME TO S3"),
    ("drop_schema", "DROP SCHEMA D.S3"),
    ("update_none", "UPDATE T SET B = 0 WHERE A < 0"),
    ("set", "SET (LO, HI) = (SELECT min(A), max(B) FROM T)"),
]


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Iterator[History]:
    history = History(tmp_path_factory.mktemp("audit") / "home")
    for n, (label, sql) in enumerate(SCRIPT):
        use = "USE SCHEMA D.PUBLIC; " if n else ""
        history.ids[label] = run(history.home, minute(n), use + sql.format(**history.ids))
    with pytest.raises(RewindError):
        run(history.home, minute(60), "USE SCHEMA D.PUBLIC; SELECT * FROM NOPE")
    now = T0 + timedelta(hours=2)
    for row in view(history.home, f"SELECT * FROM {VIEWS}.ACCESS_HISTORY", now):
        history.access.setdefault(row["QUERY_ID"], row)
        history.records.setdefault(row["QUERY_ID"], []).append(row)
    for row in view(history.home, f"SELECT * FROM {VIEWS}.QUERY_HISTORY", now):
        history.queries[row["QUERY_ID"]] = row
    yield history


def column_properties(ddl: dict[str, Any]) -> dict[str, Any]:
    """``ddl``'s properties, each column's ``objectId`` (002) checked to be the column's
    id and left out, so the rest compares as a literal."""
    props = copy.deepcopy(ddl["properties"])
    for name, column in props.get("columns", {}).items():
        assert column.pop("objectId") == {"value": column_id(ddl["objectId"], name)}, name
    return props


def columns(entry: dict[str, Any]) -> list[str]:
    return [c["columnName"] for c in entry["columns"]]


def sources(entry: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Written column -> its (objectName, columnName) sources, checking direct == base."""
    found = {}
    for column in entry["columns"]:
        # SPEC R36: Rewind has no views, so a column's base sources are its direct ones.
        assert column["directSources"] == column["baseSources"]
        found[column["columnName"]] = sorted(
            (s["objectName"], s["columnName"]) for s in column["directSources"]
        )
    return found


# -- reads (SPEC R36, R23) -------------------------------------------------------------------
def test_select_with_time_travel_and_a_join_lists_the_columns_it_read(audit: History) -> None:
    # SPEC R36: one row per statement with its user, start and every column referenced
    # (projection, JOIN ... ON, WHERE), whatever point in time each table was read at.
    row = audit.row("select")
    t_id, u_id = (
        audit.row(k)["OBJECT_MODIFIED_BY_DDL"]["objectId"] for k in ("create_t", "create_u")
    )

    assert row["QUERY_START_TIME"] == minute(5)
    assert row["USER_NAME"] == "ADMIN"
    assert row["DIRECT_OBJECTS_ACCESSED"] == [
        {
            "objectDomain": "Table",
            "objectId": t_id,
            "objectName": "D.PUBLIC.T",
            "columns": [
                {"columnId": column_id(t_id, "A"), "columnName": "A"},
                {"columnId": column_id(t_id, "C"), "columnName": "C"},
            ],
        },
        {
            "objectDomain": "Table",
            "objectId": u_id,
            "objectName": "D.PUBLIC.U",
            "columns": [
                {"columnId": column_id(u_id, "ID"), "columnName": "ID"},
                {"columnId": column_id(u_id, "X"), "columnName": "X"},
            ],
        },
    ]
    assert row["BASE_OBJECTS_ACCESSED"] == row["DIRECT_OBJECTS_ACCESSED"]
    assert (row["OBJECTS_MODIFIED"], row["OBJECT_MODIFIED_BY_DDL"]) == ([], None)
    assert row["POLICIES_REFERENCED"] == []
    assert (row["PARENT_QUERY_ID"], row["ROOT_QUERY_ID"]) == (None, None)


def test_a_query_reading_no_column_still_lists_its_table(audit: History) -> None:
    # SPEC R36: COUNT(*) reads the table, no column of it.
    entry = audit.row("count")["DIRECT_OBJECTS_ACCESSED"]
    assert [(e["objectName"], e["columns"]) for e in entry] == [("D.PUBLIC.T", [])]


def test_a_set_that_reads_a_table_lists_the_columns_it_read(audit: History) -> None:
    # SPEC R36: SET's values are a query's; its reads are audited as a SELECT's.
    row = audit.row("set")
    assert [(e["objectName"], columns(e)) for e in row["DIRECT_OBJECTS_ACCESSED"]] == [
        ("D.PUBLIC.T", ["A", "B"])
    ]
    assert audit.queries[audit.ids["set"]]["QUERY_TYPE"] == "SET"


# -- writes and column lineage (SPEC R36, R26) -----------------------------------------------
def test_insert_values_writes_columns_without_sources(audit: History) -> None:
    row = audit.row("insert_values")
    (modified,) = row["OBJECTS_MODIFIED"]

    assert row["DIRECT_OBJECTS_ACCESSED"] == row["BASE_OBJECTS_ACCESSED"] == []
    assert (modified["objectDomain"], modified["objectName"]) == ("Table", "D.PUBLIC.T")
    assert sources(modified) == {"A": [], "B": [], "C": []}


def test_insert_select_maps_each_written_column_to_its_sources(audit: History) -> None:
    # SPEC R36: INSERT INTO U (X, ID) SELECT B + 1, A ... fills columns by position.
    row = audit.row("insert_select")
    (modified,) = row["OBJECTS_MODIFIED"]

    assert sources(modified) == {"ID": [("D.PUBLIC.T", "A")], "X": [("D.PUBLIC.T", "B")]}
    assert [columns(e) for e in row["DIRECT_OBJECTS_ACCESSED"]] == [["A", "B", "C"]]
    assert modified["columns"][0]["directSources"][0]["objectDomain"] == "Table"


def test_ctas_reads_its_sources_and_creates_the_table(audit: History) -> None:
    row = audit.row("ctas")
    (modified,) = row["OBJECTS_MODIFIED"]
    ddl = row["OBJECT_MODIFIED_BY_DDL"]

    assert audit.names("ctas", "BASE_OBJECTS_ACCESSED") == ["D.PUBLIC.T"]
    assert sources(modified) == {
        "S": [("D.PUBLIC.T", "A"), ("D.PUBLIC.T", "B")],
        "C": [("D.PUBLIC.T", "C")],
    }
    # The name as it was then: N was renamed to N2 later.
    assert (ddl["objectName"], ddl["operationType"]) == ("D.PUBLIC.N", "CREATE")
    assert ddl["objectId"] == modified["objectId"]
    assert column_properties(ddl) == {
        "columns": {"S": {"subOperationType": "ADD"}, "C": {"subOperationType": "ADD"}}
    }


def test_update_records_the_set_columns_and_what_they_were_computed_from(audit: History) -> None:
    # UPDATE T SET B = A * 100 WHERE C = 'y': reads A and C, writes B from A.
    row = audit.row("update")
    (modified,) = row["OBJECTS_MODIFIED"]

    assert [columns(e) for e in row["DIRECT_OBJECTS_ACCESSED"]] == [["A", "C"]]
    assert sources(modified) == {"B": [("D.PUBLIC.T", "A")]}


def test_merge_follows_its_source_subquery_to_the_base_table(audit: History) -> None:
    # X = s.B2 where s.B2 = T.B * 2; ID from s.A = T.A (the INSERT branch).
    row = audit.row("merge")
    (modified,) = row["OBJECTS_MODIFIED"]

    assert audit.names("merge", "BASE_OBJECTS_ACCESSED") == ["D.PUBLIC.U", "D.PUBLIC.T"]
    assert modified["objectName"] == "D.PUBLIC.U"
    assert sources(modified) == {"ID": [("D.PUBLIC.T", "A")], "X": [("D.PUBLIC.T", "B")]}


@pytest.mark.parametrize(("label", "table"), [("delete", "D.PUBLIC.T"), ("truncate", "D.PUBLIC.N")])
def test_delete_and_truncate_modify_every_column(audit: History, label: str, table: str) -> None:
    (modified,) = audit.row(label)["OBJECTS_MODIFIED"]
    expected = {"D.PUBLIC.T": ["A", "B", "C"], "D.PUBLIC.N": ["S", "C"]}[table]

    assert (modified["objectName"], columns(modified)) == (table, expected)
    assert all(not s for s in sources(modified).values())


def test_a_statement_that_changed_no_row_still_modified_its_table(audit: History) -> None:
    # SPEC R36: what a statement modifies does not depend on how many rows matched.
    (modified,) = audit.row("update_none")["OBJECTS_MODIFIED"]
    assert (modified["objectName"], sources(modified)) == ("D.PUBLIC.T", {"B": []})


def test_delete_reads_the_columns_of_its_condition(audit: History) -> None:
    entries = audit.row("delete")["DIRECT_OBJECTS_ACCESSED"]
    assert [(e["objectName"], columns(e)) for e in entries] == [("D.PUBLIC.T", ["A"])]


# -- DDL (SPEC R36, R20, R21, R25) -----------------------------------------------------------
@pytest.mark.parametrize(
    ("label", "domain", "name", "operation", "properties"),
    [
        ("create_db", "Database", "D", "CREATE", {}),
        (
            "create_t",
            "Table",
            "D.PUBLIC.T",
            "CREATE",
            {
                "DATA_RETENTION_TIME_IN_DAYS": {"value": 3},
                "columns": {c: {"subOperationType": "ADD"} for c in "ABC"},
            },
        ),
        (
            "alter_set",
            "Table",
            "D.PUBLIC.U",
            "ALTER",
            {"DATA_RETENTION_TIME_IN_DAYS": {"value": 5}},
        ),
        (
            "add_column",
            "Table",
            "D.PUBLIC.U",
            "ALTER",
            {"columns": {"Y": {"subOperationType": "ADD"}}},
        ),
        ("rename", "Table", "D.PUBLIC.N", "ALTER", {"name": {"value": "D.PUBLIC.N2"}}),
        ("drop", "Table", "D.PUBLIC.N2", "DROP", {}),
        ("undrop", "Table", "D.PUBLIC.N2", "UNDROP", {}),
        ("rename_schema", "Schema", "D.S2", "ALTER", {"name": {"value": "D.S3"}}),
        ("drop_schema", "Schema", "D.S3", "DROP", {}),
    ],
)
def test_ddl_names_its_object_as_it_was_and_what_changed(
    audit: History, label: str, domain: str, name: str, operation: str, properties: dict
) -> None:
    # SPEC R36: object_modified_by_ddl with Snowflake's operationType and properties.
    ddl = audit.row(label)["OBJECT_MODIFIED_BY_DDL"]

    assert (ddl["objectDomain"], ddl["objectName"], ddl["operationType"]) == (
        domain,
        name,
        operation,
    )
    assert column_properties(ddl) == properties
    assert isinstance(ddl["objectId"], int)


def test_swap_is_an_alter_naming_both_tables_as_they_were(audit: History) -> None:
    # SPEC R25, R36: ALTER TABLE V SWAP WITH U: V takes the name U, U the name V.
    ddl = audit.row("swap")["OBJECT_MODIFIED_BY_DDL"]
    u_id = audit.row("create_u")["OBJECT_MODIFIED_BY_DDL"]["objectId"]

    assert (ddl["objectName"], ddl["operationType"]) == ("D.PUBLIC.V", "ALTER")
    assert ddl["properties"] == {
        "name": {"value": "D.PUBLIC.U"},
        "swapTarget": {"value": "D.PUBLIC.U", "objectId": u_id},
    }
    # 002: two records with the same query id, one per swapped object.
    first, second = audit.records[audit.ids["swap"]]
    v_id = ddl["objectId"]
    assert second["OBJECT_MODIFIED_BY_DDL"] == {
        "objectDomain": "Table",
        "objectId": u_id,
        "objectName": "D.PUBLIC.U",
        "operationType": "ALTER",
        "properties": {
            "name": {"value": "D.PUBLIC.V"},
            "swapTarget": {"value": "D.PUBLIC.V", "objectId": v_id},
        },
    }
    assert first["OBJECT_MODIFIED_BY_DDL"] == ddl


def test_replace_creates_a_new_incarnation_and_names_the_one_it_dropped(audit: History) -> None:
    # SPEC R20, R36: CREATE OR REPLACE is REPLACE; the replaced table keeps its own id.
    ddl = audit.row("replace")["OBJECT_MODIFIED_BY_DDL"]
    old = audit.row("ctas")["OBJECT_MODIFIED_BY_DDL"]["objectId"]

    assert (ddl["objectName"], ddl["operationType"]) == ("D.PUBLIC.N2", "REPLACE")
    assert ddl["objectId"] != old
    assert column_properties(ddl) == {
        "columns": {"Q": {"subOperationType": "ADD"}},
        "replacedObjectId": {"value": old},
    }


# -- clones (SPEC R36, R24) ------------------------------------------------------------------
def test_a_table_clone_reads_its_source_directly(audit: History) -> None:
    row = audit.row("table_clone")
    t_id = audit.row("create_t")["OBJECT_MODIFIED_BY_DDL"]["objectId"]

    assert row["DIRECT_OBJECTS_ACCESSED"] == row["BASE_OBJECTS_ACCESSED"]
    assert [(e["objectName"], columns(e)) for e in row["BASE_OBJECTS_ACCESSED"]] == [
        ("D.PUBLIC.T", ["A", "B", "C"])
    ]
    assert row["OBJECTS_MODIFIED"] == []
    ddl = row["OBJECT_MODIFIED_BY_DDL"]
    assert (ddl["objectName"], ddl["operationType"]) == ("D.PUBLIC.TC", "CREATE")
    assert ddl["properties"]["cloneSource"] == {"value": "D.PUBLIC.T", "objectId": t_id}


def test_a_schema_clone_names_the_schema_and_reads_each_table(audit: History) -> None:
    # Direct: the schema the statement names; base: every table it cloned.
    row = audit.row("schema_clone")

    assert [(e["objectDomain"], e["objectName"]) for e in row["DIRECT_OBJECTS_ACCESSED"]] == [
        ("Schema", "D.PUBLIC")
    ]
    assert "columns" not in row["DIRECT_OBJECTS_ACCESSED"][0]
    assert sorted(audit.names("schema_clone", "BASE_OBJECTS_ACCESSED")) == [
        "D.PUBLIC.N2",
        "D.PUBLIC.T",
        "D.PUBLIC.TC",
        "D.PUBLIC.U",
        "D.PUBLIC.V",
    ]
    ddl = row["OBJECT_MODIFIED_BY_DDL"]
    assert (ddl["objectDomain"], ddl["objectName"], ddl["operationType"]) == (
        "Schema",
        "D.S2",
        "CREATE",
    )
    assert ddl["properties"]["cloneSource"]["value"] == "D.PUBLIC"


# -- QUERY_HISTORY (SPEC R36) ----------------------------------------------------------------
def test_query_history_lists_every_statement_with_its_type_and_status(audit: History) -> None:
    types = {label: audit.queries[qid]["QUERY_TYPE"] for label, qid in audit.ids.items()}
    row = audit.queries[audit.ids["update"]]

    assert {k: types[k] for k in ("select", "ctas", "update", "merge", "rename", "truncate")} == {
        "select": "SELECT",
        "ctas": "CREATE_TABLE_AS_SELECT",
        "update": "UPDATE",
        "merge": "MERGE",
        "rename": "RENAME_TABLE",
        "truncate": "TRUNCATE_TABLE",
    }
    assert row["QUERY_TEXT"] == "UPDATE T SET B = A * 100 WHERE C = 'y'"
    assert (row["USER_NAME"], row["ROLE_NAME"], row["EXECUTION_STATUS"]) == (
        "ADMIN",
        "ACCOUNTADMIN",
        "SUCCESS",
    )
    assert (row["START_TIME"], row["END_TIME"], row["TOTAL_ELAPSED_TIME"]) == (
        minute(8),
        minute(8),
        0,
    )
    # USE statements touch no object: in QUERY_HISTORY only.
    uses = [r for r in audit.queries.values() if r["QUERY_TYPE"] == "USE"]
    assert uses and not set(r["QUERY_ID"] for r in uses) & set(audit.access)


def test_a_failed_statement_is_in_query_history_with_its_error(audit: History) -> None:
    (failed,) = [r for r in audit.queries.values() if r["EXECUTION_STATUS"] != "SUCCESS"]

    assert failed["QUERY_TEXT"] == "SELECT * FROM NOPE"
    assert (failed["EXECUTION_STATUS"], failed["ERROR_CODE"]) == ("FAIL", "OBJECT_NOT_FOUND")
    assert "NOPE" in failed["ERROR_MESSAGE"]
    assert failed["QUERY_ID"] not in audit.access  # it read nothing


def test_the_views_filter_project_and_join_like_tables(audit: History) -> None:
    # Snowflake's path syntax reaches into the JSON: x[0]:objectName, x:path. (Under
    # Spark's ANSI mode x[0] of an empty array is an error: ARRAY_SIZE guards it.)
    rows = view(
        audit.home,
        f"SELECT q.query_type, a.object_modified_by_ddl:operationType::string AS op "
        f"FROM {VIEWS}.ACCESS_HISTORY a JOIN {VIEWS}.QUERY_HISTORY q "
        "ON a.query_id = q.query_id "
        "WHERE a.object_modified_by_ddl:objectName::string = 'D.PUBLIC.N2' "
        "OR ARRAY_SIZE(a.objects_modified) > 0 "
        "AND a.objects_modified[0]:objectName::string = 'D.PUBLIC.N' "
        "ORDER BY q.start_time",
        T0 + timedelta(hours=3),
    )

    assert [(r["QUERY_TYPE"], r["OP"]) for r in rows] == [
        ("CREATE_TABLE_AS_SELECT", "CREATE"),
        ("TRUNCATE_TABLE", None),
        ("DROP", "DROP"),
        ("UNDROP", "UNDROP"),
        ("CREATE_TABLE", "REPLACE"),
    ]


def test_a_view_has_no_time_travel(audit: History) -> None:
    # A point on a system view was dropped once: the present answered as the past.
    with pytest.raises(RewindError) as error:
        view(
            audit.home,
            f"SELECT COUNT(*) FROM {VIEWS}.QUERY_HISTORY AT(OFFSET => -3600)",
            T0 + timedelta(hours=3),
        )
    assert error.value.code == "UNSUPPORTED"
    assert "has no time travel" in error.value.message


@pytest.mark.parametrize(
    "source",
    [
        "LATERAL FLATTEN(input => a.direct_objects_accessed) f",
        "LATERAL FLATTEN(a.direct_objects_accessed) f",
        "TABLE(FLATTEN(input => a.direct_objects_accessed)) f",
    ],
)
def test_lateral_flatten_reads_the_arrays_as_snowflake_users_do(
    audit: History, source: str
) -> None:
    """Snowflake's idiom for ACCESS_HISTORY: FLATTEN each array, then FLATTEN its columns
    (``value:field`` on each element; OUTER keeps an object with no column)."""
    rows = view(
        audit.home,
        "SELECT f.index AS i, f.value:objectName::string AS object_name, "
        "c.value:columnName::string AS column_name, c.path AS path "
        f"FROM {VIEWS}.ACCESS_HISTORY a, {source}, "
        "LATERAL FLATTEN(input => f.value:columns, outer => true) c "
        f"WHERE a.query_id = '{audit.ids['select']}' ORDER BY i, column_name",
        T0 + timedelta(hours=3),
    )
    assert [(r["I"], r["OBJECT_NAME"], r["COLUMN_NAME"], r["PATH"]) for r in rows] == [
        (0, "D.PUBLIC.T", "A", "[0]"),
        (0, "D.PUBLIC.T", "C", "[1]"),
        (1, "D.PUBLIC.U", "ID", "[0]"),
        (1, "D.PUBLIC.U", "X", "[1]"),
    ]
    counted = view(
        audit.home,
        f"SELECT COUNT(*) AS n FROM {VIEWS}.ACCESS_HISTORY a, {source}, "
        "LATERAL FLATTEN(input => f.value:columns, outer => true) c "
        f"WHERE a.query_id = '{audit.ids['count']}' AND c.value IS NULL",
        T0 + timedelta(hours=3),
    )
    assert counted == [{"N": 1}]  # COUNT(*) read T and no column of it


# -- access (SPEC R37) and retention (SPEC R36) ----------------------------------------------
def add_user(home: Path, user: str, role: str, now: datetime) -> None:
    """A user whose only role is ``role``, written to the catalog as an operator would."""
    engine = make_engine(Config.load(home=home).catalog_url)
    try:
        with Session(engine) as session, session.begin():
            session.add(Role(name=role, created_on=now))
            session.add(User(name=user, default_role=role, created_on=now))
            session.flush()
            session.add(RoleGrant(role_name=role, user_name=user))
    finally:
        engine.dispose()


@pytest.mark.parametrize("name", ["ACCESS_HISTORY", "QUERY_HISTORY"])
def test_only_accountadmin_reads_the_audit_views(home: Path, spark: Any, name: str) -> None:
    # SPEC R36, R37: the views are ACCOUNTADMIN only; the denial itself is audited.
    run(home, T0, "CREATE DATABASE D")
    add_user(home, "BOB", "ANALYST", T0)

    with pytest.raises(RewindError) as denied:
        run(home, minute(1), f"SELECT * FROM {VIEWS}.{name}", user="BOB")

    assert denied.value.code == "ACCESS_DENIED"
    assert "ACCOUNTADMIN" in denied.value.message
    (row,) = view(
        home,
        f"SELECT * FROM {VIEWS}.QUERY_HISTORY WHERE user_name = 'BOB' AND query_type = 'SELECT'",
        minute(2),
    )
    assert (row["ROLE_NAME"], row["EXECUTION_STATUS"], row["ERROR_CODE"]) == (
        "ANALYST",
        "FAIL",
        "ACCESS_DENIED",
    )


def test_the_nightly_lifecycle_removes_the_audit_trail_at_365_days(home: Path, spark: Any) -> None:
    # SPEC R36: kept 365 days, removed at the boundary exactly, with the access rows and
    # the column lineage of the statements removed; younger statements stay.
    run(home, minute(0), "CREATE DATABASE D; CREATE TABLE T (A INT)")
    run(home, minute(1), "USE SCHEMA D.PUBLIC; CREATE TABLE N AS SELECT A FROM T")
    young = run(home, minute(2), "USE SCHEMA D.PUBLIC; INSERT INTO N SELECT A FROM T")
    config = Config.load(home=home)

    def night(at: datetime) -> int:
        summary = run_step(config, "purge_failsafe", f"run-{at.isoformat()}", at)
        return int(summary["audit_rows_removed"])

    def count(table: str) -> int:
        return int(catalog(home, f"SELECT COUNT(*) FROM {table}")[0][0])

    assert (count("statements"), count("column_lineage")) == (6, 2)
    assert night(minute(1) + YEAR - SECOND) == 2  # minute 0's two statements
    assert night(minute(1) + YEAR) == 2  # minute 1's, exactly 365 days old
    assert night(minute(1) + YEAR + SECOND) == 0  # minute 2's are younger; idempotent
    assert count("statements") == 2
    assert catalog(home, "SELECT DISTINCT query_id FROM statement_objects") == [(young,)]
    assert catalog(home, "SELECT query_id, target_column FROM column_lineage") == [(young, "A")]
    rows = view(home, f"SELECT query_id FROM {VIEWS}.ACCESS_HISTORY", minute(1) + YEAR)
    assert [r["QUERY_ID"] for r in rows] == [young]


def test_statements_logged_before_the_audit_revision_stay_readable(home: Path, spark: Any) -> None:
    # SPEC R36: migration 0005 keeps older rows; their names were not recorded then.
    home.mkdir(parents=True)
    engine = make_engine(Config.load(home=home).catalog_url)
    alembic = AlembicConfig()
    alembic.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as conn:
            alembic.attributes["connection"] = conn
            command.upgrade(alembic, "0004")
            conn.execute(
                text(
                    "INSERT INTO objects (id, kind, parent_id, name, is_transient, owner_role,"
                    " created_on, created_by) VALUES (7, 'TABLE', 6, 'T', 0, 'ACCOUNTADMIN',"
                    " '2026-05-04 07:00:00', 'q0')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO statements (query_id, text, user_name, role_name, start_time,"
                    " status) VALUES ('old', 'SELECT * FROM T', 'ADMIN', 'ACCOUNTADMIN',"
                    " '2026-05-04 08:00:00', 'SUCCESS')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO statement_objects (query_id, object_id, access, version,"
                    " columns) VALUES ('old', 7, 'READ', 0, '[\"A\"]')"
                )
            )
    finally:
        engine.dispose()

    (row,) = view(home, f"SELECT * FROM {VIEWS}.ACCESS_HISTORY", T0)
    (query,) = view(home, f"SELECT * FROM {VIEWS}.QUERY_HISTORY WHERE query_id = 'old'", T0)

    old_read = {
        "objectDomain": "Table",
        "objectId": 7,
        "objectName": None,
        "columns": [{"columnName": "A"}],
    }
    assert row["DIRECT_OBJECTS_ACCESSED"] == row["BASE_OBJECTS_ACCESSED"] == [old_read]
    assert (query["QUERY_TEXT"], query["QUERY_TYPE"]) == ("SELECT * FROM T", None)
