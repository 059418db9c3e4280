"""Reading the past: versions, points, their limits and schema changes.

SPEC R14 (versions stamped with the statement), R16/R17/R23 (AT | BEFORE points and
where they stop), R9 (retention changes move the floor), R18 (historical reads use
the current columns).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from test_dml import T0, assert_refused, catalog, clock, open_at, query, table_root

import rewind
from rewind.errors import RewindError
from rewind.result import Result

# One worker for the module: its module fixtures are built once.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("test_time_travel")]

# The history every point test reads: (hours after T0, step name, statement).
STEPS = [
    (0, "create_database", "CREATE DATABASE D"),
    (0, "create", "CREATE TABLE T (ID INT, V VARCHAR)"),
    (1, "insert", "INSERT INTO T VALUES (1, 'a'), (2, 'b')"),
    (2, "update", "UPDATE T SET V = 'B' WHERE ID = 2"),
    (2, "insert_same_now", "INSERT INTO T VALUES (3, 'c')"),
    (3, "delete", "DELETE FROM T WHERE ID = 1"),
    (3, "select", "SELECT * FROM T"),
    (3, "select_past", "SELECT * FROM T AT(OFFSET => -7200)"),  # reads version 1
    (4, "insert_last", "INSERT INTO T VALUES (4, 'd')"),
]
# Table versions: the write steps in order, and the rows each version holds.
WRITES = ["create", "insert", "update", "insert_same_now", "delete", "insert_last"]
STATES = [
    [],
    [(1, "a"), (2, "b")],
    [(1, "a"), (2, "B")],
    [(1, "a"), (2, "B"), (3, "c")],
    [(2, "B"), (3, "c")],
    [(2, "B"), (3, "c"), (4, "d")],
]
UNAVAILABLE = "TIME_TRAVEL_UNAVAILABLE"


def ts(**delta: float) -> str:
    """A TIMESTAMP => argument for ``T0 + delta``."""
    return f"'{clock(**delta)}'::TIMESTAMP_TZ"


@dataclass
class History:
    """A home holding STEPS; ``ids`` and ``results`` are those of the steps."""

    home: Path
    ids: dict[str, str] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)
    opened: list[Any] = field(default_factory=list)

    def session(self, **delta: float) -> Any:
        """A session at ``T0 + delta``, on D once it exists."""
        conn = rewind.connect(home=self.home, now=clock(**delta))
        self.opened.append(conn)
        if self.ids:
            conn.sql("USE DATABASE D")
        return conn

    def read(self, point: str, **now: float) -> list[tuple[Any, ...]]:
        sql = f"SELECT ID, V FROM T {point.format(**self.ids)} ORDER BY ID"
        return query(self.session(**now), sql)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Iterator[History]:
    made = History(tmp_path_factory.mktemp("history") / "home")
    conn, opened_at = None, None
    for hours, name, statement in STEPS:
        if hours != opened_at:  # a later clock needs a new session
            conn, opened_at = made.session(hours=hours), hours
        (result,) = conn.sql(statement)
        made.ids[name] = result.query_id
        made.results.append(result)
    yield made
    for opened in made.opened:
        opened.close()


# -- SPEC R14 -----------------------------------------------------------------------------------
def test_every_statement_gets_its_own_query_id(history: History) -> None:
    # SPEC R14: DDL, DML and SELECT alike.
    ids = [r.query_id for r in history.results]
    assert all(uuid.UUID(i).version == 4 for i in ids)
    assert len(set(ids)) == len(ids)


def test_every_write_is_one_delta_version_stamped_with_its_statement(history: History) -> None:
    # SPEC R14: one version per write, carrying the query id and the commit time; two
    # statements at the same clock reading still get two ordered versions.
    root = table_root(history.home, "T")
    hours = {name: h for h, name, _ in STEPS}
    expected = [(v, history.ids[w], clock(hours=hours[w])) for v, w in enumerate(WRITES)]

    commits = sorted(DeltaTable(str(root)).history(), key=lambda c: c["version"])
    timeline = catalog(
        history.home,
        "SELECT version, query_id, commit_time FROM table_versions v "
        "JOIN objects o ON o.id = v.table_id WHERE o.name = 'T' ORDER BY version",
    )

    assert [(c["version"], c["rewind.queryId"], c["rewind.commitTime"]) for c in commits] == (
        expected
    )
    assert [
        (v, q, datetime.fromisoformat(t).replace(tzinfo=T0.tzinfo).isoformat())
        for v, q, t in timeline
    ] == expected


# -- SPEC R16, R23 ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("point", "now", "version"),
    [
        # TIMESTAMP: the latest version committed at or before / strictly before.
        (f"AT(TIMESTAMP => {ts(hours=1)})", 5, 1),
        (f"AT(TIMESTAMP => {ts(hours=1, minutes=59)})", 5, 1),
        (f"BEFORE(TIMESTAMP => {ts(hours=1)})", 5, 0),
        (f"AT(TIMESTAMP => {ts(hours=2)})", 5, 3),  # latest of two commits at one instant
        (f"BEFORE(TIMESTAMP => {ts(hours=2)})", 5, 1),
        ("AT(TIMESTAMP => '2026-01-01T04:30:00+02:00'::TIMESTAMP_TZ)", 5, 3),
        ("AT(TIMESTAMP => TO_TIMESTAMP_TZ('2026-01-01 03:00:00'))", 5, 4),
        ("AT(TIMESTAMP => DATEADD(hour, -2, CURRENT_TIMESTAMP()))", 5, 4),
        ("AT(TIMESTAMP => DATEADD(day, -1, CURRENT_TIMESTAMP()))", 25, 1),
        ("AT(TIMESTAMP => CURRENT_TIMESTAMP())", 4, 5),  # now = the last commit
        (f"AT(TIMESTAMP => {ts(hours=5)})", 5, 5),
        # OFFSET: seconds back from now.
        ("AT(OFFSET => -60*60*3)", 5, 3),
        ("AT(OFFSET => -1)", 5, 5),
        # STATEMENT: the state including / just before a write ...
        ("AT(STATEMENT => '{update}')", 5, 2),
        ("BEFORE(STATEMENT => '{update}')", 5, 1),
        ("AT(STATEMENT => '{insert_same_now}')", 5, 3),
        ("BEFORE(STATEMENT => '{insert_same_now}')", 5, 2),
        # ... and for a read-only statement, the state it read.
        ("AT(STATEMENT => '{select}')", 5, 4),
        ("BEFORE(STATEMENT => '{select}')", 5, 4),
        ("AT(STATEMENT => '{select_past}')", 5, 1),  # what it read, not when it ran
        # The retention floor (1 day by default) is inclusive.
        (f"AT(TIMESTAMP => {ts(hours=1)})", 25, 1),
        ("AT(OFFSET => -86400)", 25, 1),
        # an OFFSET computed by Spark, on the session's clock (it was "not a constant")
        (f"AT(OFFSET => -DATEDIFF(second, {ts(hours=2, minutes=30)}, CURRENT_TIMESTAMP()))", 5, 3),
    ],
)
def test_a_point_reads_the_version_it_names(
    history: History, point: str, now: float, version: int
) -> None:
    # SPEC R16.
    assert history.read(point, hours=now) == STATES[version]


@pytest.mark.parametrize(
    ("point", "now", "code"),
    [
        (f"AT(TIMESTAMP => {ts()})", 5, UNAVAILABLE),  # at the creation
        (f"BEFORE(TIMESTAMP => {ts()})", 5, UNAVAILABLE),
        (f"AT(TIMESTAMP => {ts(minutes=-1)})", 5, UNAVAILABLE),  # before the creation
        ("BEFORE(STATEMENT => '{create}')", 5, UNAVAILABLE),
        (f"AT(TIMESTAMP => {ts(hours=5, seconds=1)})", 5, UNAVAILABLE),  # in the future
        ("AT(OFFSET => 1)", 5, UNAVAILABLE),
        (f"AT(TIMESTAMP => {ts(hours=1)})", 25 + 1 / 3600, UNAVAILABLE),  # 1 s past the floor
        ("AT(OFFSET => -86401)", 25, UNAVAILABLE),
        ("AT(STATEMENT => '00000000-0000-4000-8000-000000000000')", 5, "UNKNOWN_STATEMENT"),
    ],
)
def test_a_point_outside_time_travel_fails_clearly(
    history: History, point: str, now: float, code: str
) -> None:
    # SPEC R17: a clear error naming the table.
    with pytest.raises(RewindError) as raised:
        history.read(point, hours=now)

    assert raised.value.code == code
    if code == UNAVAILABLE:
        assert "Time travel data is not available for table D.PUBLIC.T" in raised.value.message


@pytest.mark.parametrize(
    "point",
    [
        "AT(TIMESTAMP => 'Wed, 31 Dec 2025 19:30:00 -0700'::timestamp_tz)",  # Snowflake's
        "AT(TIMESTAMP => TIMESTAMP '2026-01-01 02:30:00 UTC')",  # BigQuery's literal
        "AT(TIMESTAMP => '2025-12-31 18:30:00 America/Los_Angeles')",
        "AT(TIMESTAMP => TO_TIMESTAMP_TZ('31/12/2025 19:30 -0700', 'DD/MM/YYYY HH24:MI TZHTZM'))",
        "AT(TIMESTAMP => TO_TIMESTAMP_TZ('2025-12-31 19:30:00 -07:00', "
        "'YYYY-MM-DD HH24:MI:SS TZH:TZM'))",
    ],
)
def test_the_documents_timestamp_spellings_name_the_same_point_r16(
    history: History, point: str
) -> None:
    """Issue 13: the timestamp literals Snowflake's and BigQuery's pages print (T0 + 2h30,
    in other zones and spellings) read the version of that instant."""
    assert history.read(point, hours=5) == STATES[3]


def test_a_documented_timestamp_literal_casts_to_its_instant(history: History) -> None:
    conn = history.session(hours=5)
    assert query(conn, "SELECT 'Wed, 31 Dec 2025 19:30:00 -0700'::timestamp_tz") == [
        (T0 + timedelta(hours=2, minutes=30),)
    ]
    formatted = "TO_TIMESTAMP_TZ('Jan 1, 2026 2:30 AM +00:00', 'MON DD, YYYY HH12:MI AM TZH:TZM')"
    assert query(conn, f"SELECT {formatted}") == [(T0 + timedelta(hours=2, minutes=30),)]
    with pytest.raises(RewindError) as error:
        conn.sql("SELECT TO_TIMESTAMP_TZ('2026-01-01', 'DD/MM/YYYY')")
    assert error.value.code == "INVALID_VALUE"


def test_the_clauses_on_a_table_reference_apply_to_the_version_it_names(
    history: History,
) -> None:
    # SPEC R16: SAMPLE, PIVOT and UNPIVOT written on a reference with a point read that
    # version (they were dropped with its name once: the whole table answered).
    def rows(clauses: str) -> list[tuple[Any, ...]]:
        point = "AT(STATEMENT => '{update}')".format(**history.ids)
        return query(history.session(hours=5), f"SELECT * FROM T {point} {clauses}")

    assert rows("SAMPLE (0)") == []
    assert sorted(rows("SAMPLE (100)")) == [(1, "a"), (2, "B")]
    assert rows("PIVOT(MAX(ID) FOR V IN ('a', 'B', 'c'))") == [(1, 2, None)]
    assert sorted(rows("UNPIVOT(X FOR K IN (V)) AS U")) == [(1, "V", "a"), (2, "V", "B")]


def test_changes_without_change_tracking_is_refused_and_two_points_answer_r16_r40(
    history: History,
) -> None:
    # Snowflake's CHANGES clause reads rows' identities, which a table keeps from ALTER
    # TABLE ... SET CHANGE_TRACKING = TRUE on (tests/spark/test_changes.py); before that
    # it is refused (it once read the current table as if it were the changes), and the
    # message's idiom, two points and EXCEPT ALL, answers the rows added since.
    session = history.session(hours=5)
    with pytest.raises(RewindError) as error:
        session.sql("SELECT * FROM T CHANGES(INFORMATION => DEFAULT) AT(OFFSET => -3600)")
    assert error.value.code == "CHANGE_TRACKING_UNAVAILABLE"
    assert "SET CHANGE_TRACKING = TRUE" in error.value.message
    assert "EXCEPT ALL" in error.value.message
    since = "SELECT ID, V FROM T EXCEPT ALL SELECT ID, V FROM T AT(STATEMENT => '{delete}')"
    assert query(session, since.format(**history.ids)) == [(4, "d")]


def test_last_query_id_names_the_sessions_statements_r16(history: History) -> None:
    # SPEC R16 with Snowflake's LAST_QUERY_ID([n]): the script idiom "DELETE ...; SELECT
    # ... BEFORE(STATEMENT => LAST_QUERY_ID())" reads what the DELETE removed; n > 0 counts
    # from the session's first statement, n < 0 back from the latest; '' where none is.
    session = history.session(hours=5)
    results = session.sql(
        "CREATE TABLE SCRATCH CLONE T; DELETE FROM SCRATCH WHERE ID = 2; "
        "SELECT ID FROM SCRATCH BEFORE(STATEMENT => LAST_QUERY_ID()) ORDER BY ID; "
        "SELECT LAST_QUERY_ID(-1), LAST_QUERY_ID(-2), LAST_QUERY_ID(2), LAST_QUERY_ID(99)"
    )
    delete, before, named = results[1], results[2], results[3]
    assert before.rows == [[2], [3], [4]]
    assert named.rows == [[before.query_id, delete.query_id, results[0].query_id, ""]]
    with pytest.raises(RewindError) as error:
        session.sql("SELECT LAST_QUERY_ID('x')")
    assert error.value.code == "INVALID_VALUE"
    # A new session has no statement before: the point says so (it read "Statement  not
    # found.", an empty id between two spaces).
    fresh = rewind.connect(home=history.home, now=clock(hours=5))
    history.opened.append(fresh)
    with pytest.raises(RewindError) as error:
        fresh.sql("SELECT * FROM D.PUBLIC.T BEFORE(STATEMENT => LAST_QUERY_ID())")
    assert error.value.code == "UNKNOWN_STATEMENT"
    assert "LAST_QUERY_ID() of a session that has run no statement" in error.value.message


def test_session_variables_carry_a_query_id_a_time_and_a_name_into_time_travel_r16_r39(
    history: History,
) -> None:
    """SPEC R16, R39 with Snowflake's session variables: ``SET qid = LAST_QUERY_ID()`` kept
    a query id for a later BEFORE(STATEMENT => $qid), ``SET (lo, hi) = (SELECT ...)`` a
    range, IDENTIFIER($name) a table's name; all were refused ("Statements of kind SET are
    not supported", "IDENTIFIER('T') is not a table name"). A variable is the session's,
    set by one query (a failed SET sets none), listed by SHOW VARIABLES, gone by UNSET."""
    session = history.session(hours=5)
    delete = session.sql(
        "CREATE TABLE VARS CLONE T; DELETE FROM VARS WHERE ID > 2; SET QID = LAST_QUERY_ID(); "
        "SET T_NAME = 'D.PUBLIC.VARS', SINCE = DATEADD(hour, -3, CURRENT_TIMESTAMP()); "
        "SET (LO, HI) = (SELECT min(ID), max(ID) FROM T)"
    )[1].query_id
    assert query(session, "SELECT ID FROM VARS BEFORE(STATEMENT => $qid) ORDER BY ID") == [
        (2,),
        (3,),
        (4,),
    ]
    assert query(session, "SELECT ID FROM T AT(TIMESTAMP => $SINCE) ORDER BY ID") == [
        (1,),
        (2,),
        (3,),
    ]
    assert query(session, "SELECT count(*) FROM IDENTIFIER($T_NAME)") == [(1,)]
    session.sql(
        "CREATE TABLE IDENTIFIER('VARS2') CLONE IDENTIFIER($T_NAME) BEFORE(STATEMENT => $QID); "
        "INSERT INTO IDENTIFIER($T_NAME) SELECT ID, V FROM T WHERE ID BETWEEN $LO AND $HI - 1 "
        "AND ID > 2; CREATE DATABASE VARDB; ALTER DATABASE VARDB SET "
        "DATA_RETENTION_TIME_IN_DAYS = $HI; USE DATABASE D"
    )
    assert query(session, "SELECT ID FROM VARS2 ORDER BY ID LIMIT $LO") == [(2,), (3,)]
    assert query(session, "SELECT IDENTIFIER('ID') FROM VARS ORDER BY 1") == [(2,), (3,)]
    quoted = "SELECT IDENTIFIER('v.ID') FROM IDENTIFIER('D.\"PUBLIC\".VARS') v ORDER BY 1"
    assert query(session, quoted) == [(2,), (3,)]
    assert query(session, "SHOW PARAMETERS LIKE 'DATA%' IN DATABASE VARDB")[0][1] == "4"
    session.sql(
        "SET (N, X, F, B, DAY, NOTHING) = (12.50, 'x', 1.5::FLOAT, TRUE, '2026-01-02'::DATE, NULL)"
    )
    assert query(session, "SELECT $N * 2, $X || 'y', $F * 2, NOT $B, $DAY + 1, $NOTHING") == [
        (Decimal("25.00"), "xy", 3.0, False, date(2026, 1, 3), None)
    ]
    listed = {row[2]: row[3:5] for row in query(session, "SHOW VARIABLES")}
    assert listed == {
        "QID": (delete, "text"),
        "T_NAME": ("D.PUBLIC.VARS", "text"),
        "SINCE": ("2026-01-01 02:00:00+00:00", "timestamp_ltz"),
        "LO": ("2", "fixed"),
        "HI": ("4", "fixed"),
        "N": ("12.50", "fixed"),
        "X": ("x", "text"),
        "F": ("1.5", "real"),
        "B": ("True", "boolean"),
        "DAY": ("2026-01-02", "date"),
        "NOTHING": (None, "null"),
    }
    assert [row[2] for row in query(session, "SHOW VARIABLES LIKE '%O%'")] == ["LO", "NOTHING"]
    session.sql("UNSET LO; UNSET (X, F)")
    assert_refused(
        session,
        [
            ("SELECT $LO", "OBJECT_NOT_FOUND"),  # Session variable '$LO' does not exist.
            ("UNSET NOPE", "OBJECT_NOT_FOUND"),
            ("SET (P, Q) = (1, (SELECT ID FROM T))", "INVALID_VALUE"),  # more than one row
            ("SET (P, Q) = (SELECT ID, V FROM T)", "INVALID_VALUE"),
            ("SET P = REPEAT('x', 257)", "INVALID_VALUE"),  # Snowflake's 256 bytes
            ("SET P = ARRAY_CONSTRUCT(1, 2)", "UNSUPPORTED"),
            ("SET (P, Q) = (1)", "SYNTAX_ERROR"),
            ("SET P = $NOPE", "OBJECT_NOT_FOUND"),
            ("SELECT * FROM IDENTIFIER($HI)", "INVALID_VALUE"),  # no string
            ("SELECT * FROM IDENTIFIER('a b c')", "INVALID_VALUE"),
            # a name and nothing else: not a clause, not a second statement
            ("SELECT * FROM IDENTIFIER('VARS WHERE ID = 0')", "INVALID_VALUE"),
            ("SELECT * FROM IDENTIFIER('VARS; DROP TABLE VARS')", "INVALID_VALUE"),
            ("SELECT IDENTIFIER('ID FROM VARS')", "INVALID_VALUE"),
            ("SELECT * FROM IDENTIFIER('NOPE')", "OBJECT_NOT_FOUND"),
        ],
    )
    assert_refused(session, [("SET P = 1", "UNSUPPORTED")], dialect="bigquery")
    assert "P" not in {row[2] for row in query(session, "SHOW VARIABLES")}  # none was set
    # A variable is its session's: another session has none.
    assert query(history.session(hours=5), "SHOW VARIABLES") == []


def test_one_query_joins_several_points_of_the_same_table(history: History) -> None:
    # SPEC R23: each table reference has its own point.
    sql = (
        "SELECT o.ID, o.V, n.V, c.V FROM T BEFORE(STATEMENT => '{update}') o "
        "JOIN T AT(STATEMENT => '{update}') n ON n.ID = o.ID "
        "LEFT JOIN T c ON c.ID = o.ID ORDER BY o.ID"
    ).format(**history.ids)

    assert query(history.session(hours=5), sql) == [(1, "a", "a", None), (2, "b", "B", "B")]


# -- SPEC R9 -----------------------------------------------------------------------------------
# (statements at T0 + 2 days, table, point, readable?) in order; the data was written at
# T0 + 1 h and the point asks for T0 + 2 h, i.e. 46 hours back.
RETENTION_STEPS = [
    ("", "R_DEFAULT", f"AT(TIMESTAMP => {ts(hours=2)})", False),  # R5: account default 1 day
    ("", "R", f"AT(TIMESTAMP => {ts(hours=2)})", True),  # raised to 3 days in time (R9)
    (
        "ALTER SCHEMA PUBLIC SET DATA_RETENTION_TIME_IN_DAYS = 5;"
        "ALTER TABLE R UNSET DATA_RETENTION_TIME_IN_DAYS",
        "R",
        f"AT(TIMESTAMP => {ts(hours=2)})",
        True,
    ),  # R6: inherited from the schema
    (
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 4;"
        "ALTER TABLE R SET DATA_RETENTION_TIME_IN_DAYS = 0",
        "R",
        f"AT(TIMESTAMP => {ts(hours=2)})",
        True,
    ),  # R7: the account minimum wins
    (
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 1",
        "R",
        f"AT(TIMESTAMP => {ts(hours=2)})",
        False,
    ),  # R9: lowered below the point's age
    ("ALTER ACCOUNT UNSET MIN_DATA_RETENTION_TIME_IN_DAYS", "R", "AT(OFFSET => -1)", False),  # R8
]


def test_retention_changes_move_the_time_travel_floor(connect: Callable[..., Any]) -> None:
    # SPEC R9 (with R5-R8): the floor is now - effective retention, whatever set it.
    connect(now=clock()).sql(
        "CREATE DATABASE D; CREATE TABLE R (ID INT); CREATE TABLE R_DEFAULT (ID INT)"
    )
    open_at(connect, hours=1).sql("INSERT INTO R VALUES (1); INSERT INTO R_DEFAULT VALUES (1)")
    open_at(connect, hours=12).sql("ALTER TABLE R SET DATA_RETENTION_TIME_IN_DAYS = 3")
    later = open_at(connect, days=2)

    outcomes = []
    for statements, table, point, _ in RETENTION_STEPS:
        if statements:
            later.sql(statements)
        try:
            outcomes.append(query(later, f"SELECT ID FROM {table} {point}") == [(1,)])
        except RewindError as error:
            assert error.code == UNAVAILABLE
            outcomes.append(False)

    assert outcomes == [readable for *_, readable in RETENTION_STEPS]
    assert query(later, "SELECT ID FROM R") == [(1,)]  # retention 0 still reads the present


# -- SPEC R18 ---------------------------------------------------------------------------------
def test_historical_reads_use_the_current_columns(connect: Callable[..., Any]) -> None:
    # SPEC R18: added columns read as NULL, dropped ones are gone, and a re-added name
    # never brings back the old values.
    conn = connect(now=clock())
    conn.sql("CREATE DATABASE D; CREATE TABLE C (ID INT, A VARCHAR)")
    first = conn.sql("INSERT INTO C VALUES (1, 'old')")[0].query_id
    later = open_at(connect, hours=1)

    def read(point: str = "") -> tuple[list[str], list[list[Any]]]:
        (result,) = later.sql(f"SELECT * FROM C {point} ORDER BY ID")
        return result.columns, result.rows

    later.sql("ALTER TABLE C ADD COLUMN B INT")
    second = later.sql("INSERT INTO C VALUES (2, 'new', 20)")[0].query_id
    assert read(f"AT(STATEMENT => '{first}')") == (["ID", "A", "B"], [[1, "old", None]])

    later.sql("ALTER TABLE C DROP COLUMN A")
    assert read(f"AT(STATEMENT => '{first}')") == (["ID", "B"], [[1, None]])
    assert read(f"AT(STATEMENT => '{second}')") == (["ID", "B"], [[1, None], [2, 20]])

    later.sql("ALTER TABLE C ADD COLUMN A VARCHAR")
    assert read(f"AT(STATEMENT => '{first}')") == (["ID", "B", "A"], [[1, None, None]])
    assert read() == (["ID", "B", "A"], [[1, None, None], [2, 20, None]])
    # DESCRIBE TABLE (Snowflake's columns) lists the columns every version reads now.
    (described,) = later.sql("DESCRIBE TABLE C")
    assert described.columns[:4] == ["name", "type", "kind", "null?"]
    assert [row[:3] for row in described.rows] == [
        ["ID", "NUMBER(38,0)", "COLUMN"],
        ["B", "NUMBER(38,0)", "COLUMN"],
        ["A", "VARCHAR", "COLUMN"],
    ]

    # RENAME COLUMN (issue 13): every version reads the column under its new name, and
    # ACCESS_HISTORY records the new name (002).
    renamed = later.sql("ALTER TABLE C RENAME COLUMN B TO BEE")[0].query_id
    assert read(f"AT(STATEMENT => '{second}')") == (
        ["ID", "BEE", "A"],
        [[1, None, None], [2, 20, None]],
    )
    (ddl,) = later.sql(
        "SELECT object_modified_by_ddl:properties:columns:B:name:value::string, "
        "object_modified_by_ddl:properties:columns:B:objectId:value::bigint "
        f"FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY WHERE query_id = '{renamed}'"
    )[0].rows
    # The column keeps its columnId under its new name: the one the INSERT recorded.
    (written,) = later.sql(
        "SELECT objects_modified[0]:columns[2]:columnName::string, "
        "objects_modified[0]:columns[2]:columnId::bigint "
        f"FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY WHERE query_id = '{second}'"
    )[0].rows
    assert (ddl[0], written[0], ddl[1]) == ("BEE", "B", written[1])
