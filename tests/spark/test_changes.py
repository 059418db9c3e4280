"""Snowflake's change tracking and CHANGES clause on Rewind's own tables (SPEC R16, R17,
R40): ``CHANGE_TRACKING = TRUE`` turns Delta's row tracking on, and ``SELECT ... FROM t
CHANGES(INFORMATION => DEFAULT | APPEND_ONLY) AT | BEFORE(...) [END(...)]`` answers the
rows changed between the two points, with METADATA$ACTION, METADATA$ISUPDATE and
METADATA$ROW_ID. Other engines' writes to a tracked table: tests/spark/test_external_tables.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_dml import assert_refused, clock, open_at, query, table_root

from rewind.storage import log

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("test_changes")]

# (ID, V, METADATA$ACTION, METADATA$ISUPDATE) of a CHANGES query, in a stable order
CHANGES = (
    "SELECT ID, V, METADATA$ACTION, METADATA$ISUPDATE FROM T "
    "CHANGES(INFORMATION => {kind}) {points} ORDER BY ID, METADATA$ACTION"
)


def changes(conn: Any, points: str, kind: str = "DEFAULT") -> list[tuple[Any, ...]]:
    return query(conn, CHANGES.format(kind=kind, points=points))


@pytest.fixture
def tracked(connect: Callable[..., Any]) -> dict[str, str]:
    """Table D.PUBLIC.T: rows 1-3 at T0, change tracking on at +1 h, then (query ids by
    name) ``insert`` 4 and 5 at +2 h, ``update`` 2 to 'B' at +3 h, ``again`` 2 to 'BB'
    at +4 h, ``delete`` 3 and 5 at +5 h."""
    conn = connect(now=clock())
    conn.sql(
        "CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR); "
        "INSERT INTO T VALUES (1, 'a'), (2, 'b'), (3, 'c')"
    )
    open_at(connect, hours=1).sql("ALTER TABLE T SET CHANGE_TRACKING = TRUE")
    statements = {
        "insert": "INSERT INTO T VALUES (4, 'd'), (5, 'e')",
        "update": "UPDATE T SET V = 'B' WHERE ID = 2",
        "again": "UPDATE T SET V = 'BB' WHERE ID = 2",
        "delete": "DELETE FROM T WHERE ID IN (3, 5)",
    }
    return {
        name: open_at(connect, hours=2 + k).sql(sql)[-1].query_id
        for k, (name, sql) in enumerate(statements.items())
    }


def test_changes_are_the_net_row_changes_between_two_points_r16_r40(
    connect: Callable[..., Any], tracked: dict[str, str], home: Path
) -> None:
    """DEFAULT: a row updated twice is one DELETE of its old values and one INSERT of its
    newest, both METADATA$ISUPDATE and with the same METADATA$ROW_ID; a row inserted and
    deleted in between is in neither; END bounds the interval, inclusive; AT(STATEMENT)
    starts after the statement's changes, BEFORE(STATEMENT) before them."""
    conn = open_at(connect, hours=7)
    since = "AT(TIMESTAMP => '2026-01-01 01:30:00'::TIMESTAMP_LTZ)"
    assert changes(conn, since) == [
        (2, "b", "DELETE", True),
        (2, "BB", "INSERT", True),
        (3, "c", "DELETE", False),
        (4, "d", "INSERT", False),
    ]
    ids = query(
        conn,
        "SELECT ID, METADATA$ACTION, METADATA$ROW_ID FROM T CHANGES(INFORMATION => DEFAULT) "
        f"{since} ORDER BY ID, METADATA$ACTION",
    )
    assert ids[0][2] == ids[1][2]  # the update's two rows: one row
    assert len({row_id for _, _, row_id in ids}) == 3
    ended = f"{since} END(TIMESTAMP => '2026-01-01 03:30:00'::TIMESTAMP_LTZ)"
    assert changes(conn, ended) == [
        (2, "b", "DELETE", True),
        (2, "B", "INSERT", True),
        (4, "d", "INSERT", False),
        (5, "e", "INSERT", False),
    ]
    assert changes(conn, "AT(STATEMENT => '{update}')".format(**tracked)) == [
        (2, "B", "DELETE", True),
        (2, "BB", "INSERT", True),
        (3, "c", "DELETE", False),
        (5, "e", "DELETE", False),
    ]
    assert changes(conn, "BEFORE(STATEMENT => '{delete}')".format(**tracked)) == [
        (3, "c", "DELETE", False),
        (5, "e", "DELETE", False),
    ]
    assert changes(conn, "AT(OFFSET => -60)") == []  # nothing since the last change
    # The clause is a table reference like any other: aliased, joined, aggregated
    counted = (
        "SELECT C.METADATA$ACTION, COUNT(*), MAX(T.V) FROM T CHANGES(INFORMATION => DEFAULT) "
        f"{since} AS C JOIN T ON C.ID = T.ID GROUP BY 1 ORDER BY 1"
    )
    assert query(conn, counted) == [("DELETE", 1, "BB"), ("INSERT", 2, "d")]
    # A replica as of the start, kept in step by MERGE from the changes (the ELT idiom):
    # the update's DELETE row skipped, its INSERT row updates
    conn.sql(
        f"CREATE TABLE R CLONE T {since}; "
        "MERGE INTO R USING (SELECT * FROM T CHANGES(INFORMATION => DEFAULT) "
        f"{since} WHERE NOT (METADATA$ACTION = 'DELETE' AND METADATA$ISUPDATE)) C "
        "ON R.ID = C.ID WHEN MATCHED AND C.METADATA$ACTION = 'DELETE' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET V = C.V "
        "WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (C.ID, C.V)"
    )
    replica = "SELECT ID, V FROM {} ORDER BY ID"
    assert query(conn, replica.format("R")) == query(conn, replica.format("T"))
    columns = conn.sql(f"SELECT * FROM T CHANGES(INFORMATION => DEFAULT) {since}")[-1].columns
    assert columns == ["ID", "V", "METADATA$ACTION", "METADATA$ISUPDATE", "METADATA$ROW_ID"]
    # Change tracking is Delta's row tracking, turned on in one version: its files got
    # row ids past the mark, its protocol the writer features, nothing else changed.
    root = table_root(home, "T")
    enabled = log.read_commit(root, 2)
    assert enabled is not None
    protocol = next(a["protocol"] for a in enabled.actions if "protocol" in a)
    assert {"rowTracking", "domainMetadata"} <= set(protocol["writerFeatures"])
    adds = [a["add"] for a in enabled.actions if "add" in a]  # one file per Spark task
    assert {a["dataChange"] for a in adds} == {False}
    given = sorted(
        row_id
        for a in adds
        for row_id in range(a["baseRowId"], a["baseRowId"] + json.loads(a["stats"])["numRecords"])
    )
    assert given == [0, 1, 2]
    mark = json.loads(log.replay(root, 2).domains["delta.rowTracking"])["rowIdHighWaterMark"]
    assert mark == 2


def test_append_only_changes_are_every_row_appended_as_it_was_appended_r16_r40(
    connect: Callable[..., Any], tracked: dict[str, str]
) -> None:
    """APPEND_ONLY: the rows inserted in the interval, each with the values it was
    inserted with, the one deleted since too; no update or delete of an older row."""
    conn = open_at(connect, hours=7)
    since = "AT(TIMESTAMP => '2026-01-01 01:30:00'::TIMESTAMP_LTZ)"
    assert changes(conn, since, "APPEND_ONLY") == [
        (4, "d", "INSERT", False),
        (5, "e", "INSERT", False),
    ]
    assert changes(conn, "AT(STATEMENT => '{insert}')".format(**tracked), "APPEND_ONLY") == []
    conn.sql("INSERT INTO T VALUES (6, 'f'); UPDATE T SET V = 'F' WHERE ID = 6")
    assert changes(conn, "AT(STATEMENT => '{delete}')".format(**tracked), "APPEND_ONLY") == [
        (6, "f", "INSERT", False)
    ]
    assert changes(conn, "AT(STATEMENT => '{delete}')".format(**tracked)) == [
        (6, "F", "INSERT", False)
    ]
    # INSERT OVERWRITE copies no row: its old rows deleted, its new inserted (the
    # version was refused as one that gave copied rows new ids)
    overwrite = conn.sql("INSERT OVERWRITE INTO T VALUES (1, 'a'), (7, 'g')")[-1].query_id
    point = f"BEFORE(STATEMENT => '{overwrite}')"
    assert changes(conn, point) == [
        (1, "a", "DELETE", False),
        (1, "a", "INSERT", False),
        (2, "BB", "DELETE", False),
        (4, "d", "DELETE", False),
        (6, "F", "DELETE", False),
        (7, "g", "INSERT", False),
    ]
    assert changes(conn, point, "APPEND_ONLY") == [
        (1, "a", "INSERT", False),
        (7, "g", "INSERT", False),
    ]


def test_changes_where_rows_were_not_tracked_are_refused_by_code_r17_r40(
    connect: Callable[..., Any], tracked: dict[str, str], home: Path
) -> None:
    """Before change tracking was on, across the version that turned it off, an END
    before the start, a clause without its start or with an unknown INFORMATION, a
    point outside the window: each refused with its code; the table is unchanged."""
    conn = open_at(connect, hours=7)
    before_tracking = "AT(TIMESTAMP => '2026-01-01 00:30:00'::TIMESTAMP_LTZ)"
    since = "AT(TIMESTAMP => '2026-01-01 01:30:00'::TIMESTAMP_LTZ)"
    statement = "SELECT * FROM T CHANGES(INFORMATION => {kind}) {points}"
    assert_refused(
        conn,
        [
            (
                statement.format(kind="DEFAULT", points=before_tracking),
                "CHANGE_TRACKING_UNAVAILABLE",
            ),
            (
                statement.format(kind="APPEND_ONLY", points=before_tracking),
                "CHANGE_TRACKING_UNAVAILABLE",
            ),
            (
                statement.format(
                    kind="DEFAULT",
                    points=f"{since} END(TIMESTAMP => '2026-01-01 00:30:00'::TIMESTAMP_LTZ)",
                ),
                "INVALID_VALUE",
            ),
            (statement.format(kind="DEFAULT", points=""), "SYNTAX_ERROR"),
            (statement.format(kind="ALL", points=since), "INVALID_VALUE"),
            (
                statement.format(kind="DEFAULT", points="AT(OFFSET => -86400 * 3)"),
                "TIME_TRAVEL_UNAVAILABLE",
            ),
            # On a statement's target the clause would be ignored (it was: the table
            # itself written, cloned, or the system view read)
            (f"CREATE TABLE C CLONE T CHANGES(INFORMATION => DEFAULT) {since}", "UNSUPPORTED"),
            (f"DELETE FROM T CHANGES(INFORMATION => DEFAULT) {since} WHERE ID = 1", "UNSUPPORTED"),
            (f"UPDATE T CHANGES(INFORMATION => DEFAULT) {since} SET V = 'x'", "UNSUPPORTED"),
            (
                f"INSERT INTO T CHANGES(INFORMATION => DEFAULT) {since} VALUES (9, 'z')",
                "UNSUPPORTED",
            ),
            (
                f"SELECT * FROM INFORMATION_SCHEMA.TABLES CHANGES(INFORMATION => DEFAULT) {since}",
                "UNSUPPORTED",
            ),
            ("ALTER TABLE T SET CHANGE_TRACKING = 'maybe'", "INVALID_VALUE"),
            ("CREATE SCHEMA S CHANGE_TRACKING = TRUE", "UNSUPPORTED"),
            ("CREATE TABLE C CLONE T CHANGE_TRACKING = TRUE", "UNSUPPORTED"),
        ],
    )
    shown = conn.sql("SHOW TABLES LIKE 'T'")[-1]
    assert shown.column("change_tracking") == ["ON"]
    root = table_root(home, "T")
    held = sorted(root.glob("_delta_log/*.json"))
    conn.sql("ALTER TABLE T SET CHANGE_TRACKING = TRUE")  # already on: no new version
    assert sorted(root.glob("_delta_log/*.json")) == held
    off = open_at(connect, hours=8)
    off.sql("ALTER TABLE T UNSET CHANGE_TRACKING")
    assert off.sql("SHOW TABLES LIKE 'T'")[-1].column("change_tracking") == ["OFF"]
    assert_refused(
        off, [(statement.format(kind="DEFAULT", points=since), "CHANGE_TRACKING_UNAVAILABLE")]
    )
    # An interval that ends before it was turned off still reads
    ended = f"{since} END(TIMESTAMP => '2026-01-01 03:30:00'::TIMESTAMP_LTZ)"
    assert len(changes(off, ended)) == 4
    assert query(off, "SELECT ID, V FROM T ORDER BY ID") == [(1, "a"), (2, "BB"), (4, "d")]


def test_a_table_created_with_change_tracking_tracks_from_its_first_rows_r20_r40(
    connect: Callable[..., Any],
) -> None:
    """CREATE TABLE ... CHANGE_TRACKING = TRUE: tracked from its creation (Snowflake's
    SHOW TABLES column ON), its rows' changes readable from then on."""
    conn = connect(now=clock())
    conn.sql("CREATE DATABASE D; CREATE TABLE U (ID INT, V VARCHAR) CHANGE_TRACKING = TRUE")
    assert conn.sql("SHOW TABLES LIKE 'U'")[-1].column("change_tracking") == ["ON"]
    open_at(connect, hours=1).sql("INSERT INTO U VALUES (1, 'a'), (2, 'b')")
    open_at(connect, hours=2).sql("DELETE FROM U WHERE ID = 1")
    read = (
        "SELECT ID, V, METADATA$ACTION FROM U CHANGES(INFORMATION => {}) "
        "AT(TIMESTAMP => '2026-01-01 00:30:00'::TIMESTAMP_LTZ) ORDER BY ID"
    )
    later = open_at(connect, hours=3)
    assert query(later, read.format("DEFAULT")) == [(2, "b", "INSERT")]
    assert query(later, read.format("APPEND_ONLY")) == [(1, "a", "INSERT"), (2, "b", "INSERT")]
    # GET_DDL keeps it: the statement it answers makes a tracked table again
    ddl = query(later, "SELECT GET_DDL('TABLE', 'U')")[0][0]
    assert (
        ddl
        == "create or replace TABLE U (\n\tID NUMBER(38,0),\n\tV VARCHAR\n) CHANGE_TRACKING=TRUE;"
    )
    later.sql(ddl)
    assert later.sql("SHOW TABLES LIKE 'U'")[-1].column("change_tracking") == ["ON"]
