"""DML as a Snowflake user sees it: rows, row counts, data files (SPEC R13, R20, R26).

The small helpers at the top (clock, open_at, query, catalog, table_root, live_files)
are shared with the other modules of ``tests/spark``.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from rewind.errors import RewindError

pytestmark = pytest.mark.spark

T0 = datetime(2026, 1, 1, tzinfo=UTC)
COLUMNS = "ID INT, NAME VARCHAR, AMOUNT NUMBER(10,2), SCORE FLOAT, OK BOOLEAN, DAY DATE"


# -- helpers shared by tests/spark ------------------------------------------------------------
def clock(**delta: float) -> str:
    """The instant ``T0 + delta`` as a ``now`` value."""
    return (T0 + timedelta(**delta)).isoformat()


def open_at(connect: Callable[..., Any], **delta: float) -> Any:
    """A new session whose clock is ``T0 + delta``, on database D (created beforehand)."""
    conn = connect(now=clock(**delta))
    conn.sql("USE DATABASE D")
    return conn


def query(conn: Any, sql: str, dialect: str = "snowflake") -> list[tuple[Any, ...]]:
    """The rows of the last statement of ``sql`` (in ``dialect``)."""
    return [tuple(row) for row in conn.sql(sql, dialect=dialect)[-1].rows]


def assert_refused(conn: Any, cases: list[tuple[str, str]], dialect: str = "snowflake") -> None:
    """Each (statement, code) of ``cases`` fails with that error code."""
    for statement, code in cases:
        with pytest.raises(RewindError) as refused:
            conn.sql(statement, dialect=dialect)
        assert refused.value.code == code, statement


def catalog(home: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """Read the catalog SQLite file directly, as an operator would."""
    with closing(sqlite3.connect(home / "catalog.db")) as db:
        return db.execute(sql, params).fetchall()


def table_root(home: Path, name: str) -> Path:
    """The Delta directory of the live table ``name``."""
    ((table_id,),) = catalog(
        home,
        "SELECT id FROM objects WHERE kind = 'TABLE' AND name = ? AND dropped_on IS NULL",
        name,
    )
    return home / "warehouse" / str(table_id)


def live_files(root: Path, version: int | None = None) -> dict[str, int]:
    """Data files of a Delta version (relative path -> rows), read with delta-rs."""
    actions = pa.table(DeltaTable(str(root), version=version).get_add_actions(flatten=True))
    return dict(zip(actions["path"].to_pylist(), actions["num_records"].to_pylist(), strict=True))


# -- fixtures --------------------------------------------------------------------------------
@pytest.fixture
def conn(connect: Callable[..., Any]) -> Any:
    """A session at T0 on database D with an empty table T of every common type."""
    session = connect(now=clock())
    session.sql(f"CREATE DATABASE D; CREATE TABLE T ({COLUMNS})")
    return session


def seed(conn: Any) -> str:
    """Three rows in T; returns the INSERT's query id."""
    return conn.sql(
        "INSERT INTO T (ID, NAME, AMOUNT) VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)"
    )[0].query_id


# -- INSERT (SPEC R26) -----------------------------------------------------------------------
def test_insert_values_with_column_list_fills_the_rest_with_null(conn: Any) -> None:
    # SPEC R26: the column list may reorder columns; unnamed columns are NULL.
    result = conn.sql("INSERT INTO T (NAME, ID) VALUES ('a', 1), (NULL, 2)")[0]

    assert (result.columns, result.rows) == (["number of rows inserted"], [[2]])
    assert query(conn, "SELECT * FROM T ORDER BY ID") == [
        (1, "a", None, None, None, None),
        (2, None, None, None, None, None),
    ]


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("AMOUNT", "'12.5'", Decimal("12.50")),
        ("AMOUNT", "1.239", Decimal("1.24")),  # rounded to the column's scale
        ("ID", "'42'", 42),
        ("ID", "2.6", 3),  # NUMBER(38,0) rounds half away from zero, as Snowflake does
        ("ID", "-2.5", -3),
        ("ID", "'2.6'", 3),  # text too (Spark's cast refused it: "not recognized")
        ("SCORE", "7", 7.0),
        ("NAME", "12", "12"),
        ("OK", "'true'", True),
        ("DAY", "'2025-03-01'", date(2025, 3, 1)),
    ],
)
def test_insert_coerces_values_to_the_column_type(
    conn: Any, column: str, value: str, expected: object
) -> None:
    # SPEC R26: a value is converted to the column's type on INSERT.
    conn.sql(f"INSERT INTO T ({column}) VALUES ({value})")

    ((stored,),) = query(conn, f"SELECT {column} FROM T")
    assert (type(stored), str(stored)) == (type(expected), str(expected))


def test_values_rows_mixing_text_and_numbers_go_by_the_columns_types_r26_r39(conn: Any) -> None:
    """SPEC R26, R39: each VALUES value is converted to its column's type, as in Snowflake;
    a column mixing text with numbers or booleans was SYNTAX_ERROR ("incompatible types in
    the inline table") and a value that fails to compute (1/0) SQL_COMPILATION_ERROR; both
    are now the value's own INVALID_VALUE."""
    conn.sql(
        "INSERT INTO T (ID, OK, NAME) VALUES (1, TRUE, 'a'), ('2', 'false', 3), (2.6, 'no', 4)"
    )
    assert query(conn, "SELECT ID, OK, NAME FROM T ORDER BY ID") == [
        (1, True, "a"),
        (2, False, "3"),
        (3, False, "4"),
    ]
    assert_refused(
        conn,
        [
            ("INSERT INTO T (ID) VALUES (1), ('y')", "INVALID_VALUE"),
            ("INSERT INTO T (ID) VALUES (1 / 0)", "INVALID_VALUE"),
        ],
    )
    assert query(conn, "SELECT COUNT(*) FROM T") == [(3,)]


def test_insert_select_copies_rows_from_a_past_point_of_another_table(
    conn: Any, connect: Callable[..., Any]
) -> None:
    # SPEC R26, R23: INSERT ... SELECT may read any table at any point.
    seed(conn)
    later = open_at(connect, hours=1)
    update = later.sql("UPDATE T SET NAME = 'changed'")[0]
    later.sql("CREATE TABLE COPY (ID INT, LABEL VARCHAR)")

    past = later.sql(
        f"INSERT INTO COPY SELECT ID, NAME FROM T BEFORE(STATEMENT => '{update.query_id}') "
        "WHERE ID < 3"
    )[0]
    now = later.sql("INSERT INTO COPY (LABEL, ID) SELECT NAME, ID + 10 FROM T WHERE ID = 3")[0]

    assert (past.rows, now.rows) == ([[2]], [[1]])
    assert query(later, "SELECT * FROM COPY ORDER BY ID") == [
        (1, "a"),
        (2, "b"),
        (13, "changed"),
    ]


def test_insert_overwrite_replaces_every_row_and_keeps_the_old_files(conn: Any, home: Path) -> None:
    # SPEC R26 (Snowflake's INSERT OVERWRITE), R13: the old files go to time travel.
    insert = seed(conn)
    root = table_root(home, "T")
    old = live_files(root)

    result = conn.sql("INSERT OVERWRITE INTO T (ID, NAME) VALUES (9, 'z')")[0]

    assert result.rows == [[1]]
    assert query(conn, "SELECT ID, NAME FROM T") == [(9, "z")]
    assert set(old).isdisjoint(live_files(root))
    assert query(conn, f"SELECT COUNT(*) FROM T AT(STATEMENT => '{insert}')") == [(3,)]


# -- UPDATE / DELETE / TRUNCATE (SPEC R26) ---------------------------------------------------------
def test_update_changes_only_rows_matching_where_including_a_subquery(conn: Any) -> None:
    # SPEC R26: UPDATE returns Snowflake's two counts and changes matching rows only.
    seed(conn)
    conn.sql("CREATE TABLE FLAGGED (ID INT); INSERT INTO FLAGGED VALUES (2), (3)")

    counts = [
        conn.sql(statement)[0].rows
        for statement in (
            "UPDATE T SET AMOUNT = AMOUNT * 2 WHERE ID = 1",
            "UPDATE T SET NAME = 'flagged', AMOUNT = NULL "
            "WHERE ID IN (SELECT ID FROM FLAGGED WHERE ID > 2)",
            "UPDATE T SET NAME = 'nobody' WHERE ID > 99",
            "UPDATE T SET OK = TRUE",
        )
    ]

    assert counts == [[[1, 0]], [[1, 0]], [[0, 0]], [[3, 0]]]
    assert query(conn, "SELECT ID, NAME, AMOUNT, OK FROM T ORDER BY ID") == [
        (1, "a", Decimal("20.00"), True),
        (2, "b", Decimal("20.00"), True),
        (3, "flagged", None, True),
    ]


def test_delete_with_and_without_where_returns_the_deleted_count(conn: Any) -> None:
    # SPEC R26.
    seed(conn)

    some = conn.sql("DELETE FROM T WHERE AMOUNT > 15")[0]
    remaining = query(conn, "SELECT ID FROM T")
    rest = conn.sql("DELETE FROM T")[0]

    assert (some.columns, some.rows, rest.rows) == (["number of rows deleted"], [[2]], [[1]])
    assert remaining == [(1,)]
    assert query(conn, "SELECT COUNT(*) FROM T") == [(0,)]


def test_update_from_and_delete_using_join_other_tables_at_any_point(
    conn: Any, connect: Callable[..., Any]
) -> None:
    # SPEC R26, R23: Snowflake's UPDATE ... FROM (a row joining several rows takes one of
    # them and counts as multi-joined) and DELETE ... USING, any table at any point; the
    # recovery idiom: put back the values a bad UPDATE overwrote.
    seed(conn)
    later = open_at(connect, hours=1)
    bad = later.sql("UPDATE T SET AMOUNT = 0, NAME = 'x'")[0].query_id
    later.sql("CREATE TABLE FIX (ID INT, NAME VARCHAR); INSERT INTO FIX VALUES (1, 'p'), (1, 'q')")

    counts = [
        later.sql(statement)[0].rows
        for statement in (
            "UPDATE T t SET AMOUNT = old.AMOUNT, NAME = old.NAME "
            f"FROM T BEFORE(STATEMENT => '{bad}') old WHERE t.ID = old.ID AND old.ID > 1",
            "UPDATE T SET NAME = f.NAME FROM FIX f WHERE T.ID = f.ID",
            "UPDATE T SET NAME = 'none' FROM FIX f, FIX g JOIN T h ON g.ID = h.ID "
            "WHERE T.ID = f.ID AND f.ID = g.ID AND h.ID > 1",
        )
    ]

    assert counts == [[[2, 0]], [[1, 1]], [[0, 0]]]
    rows = query(later, "SELECT ID, NAME, AMOUNT FROM T ORDER BY ID")
    assert rows[1:] == [(2, "b", Decimal("20.00")), (3, "c", Decimal("30.00"))]
    assert rows[0][0] == 1 and rows[0][1] in ("p", "q") and rows[0][2] == 0

    deleted = later.sql(
        f"DELETE FROM T USING T AT(STATEMENT => '{bad}') old, FIX WHERE T.ID = old.ID "
        "AND old.ID = FIX.ID"
    )[0]
    assert deleted.rows == [[1]]  # one target row, though it joins two rows of FIX
    assert query(later, "SELECT ID FROM T ORDER BY ID") == [(2,), (3,)]


@pytest.mark.parametrize(
    ("statement", "says"),
    [
        ("DELETE FROM T ORDER BY ID LIMIT 1", "DELETE with LIMIT"),
        ("DELETE FROM T WHERE ID > 1 LIMIT 1", "DELETE with LIMIT"),
        ("UPDATE T SET NAME = 'x' WHERE ID > 1 LIMIT 1", "UPDATE with LIMIT"),
        ("INSERT INTO T BY NAME SELECT 9 AS ID", "INSERT with BY NAME"),
        ("INSERT INTO T (ID) SELECT 9 ON CONFLICT DO NOTHING", "INSERT with ON CONFLICT"),
        (
            "WITH C AS (SELECT 1 AS ID) DELETE FROM T WHERE ID IN (SELECT ID FROM C)",
            "DELETE with a WITH clause before it",
        ),
    ],
)
def test_a_clause_rewind_would_not_honour_is_refused_and_changes_nothing(
    conn: Any, statement: str, says: str
) -> None:
    # SPEC R28, R39: a clause sqlglot accepts and Rewind would drop changes other rows
    # than the statement says (DELETE ... ORDER BY ID LIMIT 1 emptied the table once).
    seed(conn)
    with pytest.raises(RewindError) as error:
        conn.sql(statement)
    assert (error.value.code, says in error.value.message) == ("UNSUPPORTED", True)
    assert query(conn, "SELECT ID, NAME FROM T ORDER BY ID") == [(1, "a"), (2, "b"), (3, "c")]


def test_star_ilike_exclude_replace_rename_name_the_columns_of_one_table_r23(
    conn: Any,
) -> None:
    """``SELECT * ILIKE ... EXCLUDE ... REPLACE ... RENAME ...`` over one table (at any
    point) was refused: Spark has no syntax for it. Its columns are named one by one, in
    Snowflake's order of the clauses; over a join it stays refused by name."""
    inserted = seed(conn)
    result = conn.sql(
        "SELECT * ILIKE '%A%' EXCLUDE (DAY) REPLACE (AMOUNT * 2 AS AMOUNT) RENAME (NAME AS N) "
        f"FROM T AT(STATEMENT => '{inserted}') WHERE ID = 1"
    )[0]
    assert (result.columns, result.rows) == (["N", "AMOUNT"], [["a", Decimal("20.00")]])
    conn.sql("CREATE TABLE R AS SELECT * RENAME (ID AS KEY) FROM T")
    assert query(conn, "SELECT KEY, NAME FROM R ORDER BY KEY") == [(1, "a"), (2, "b"), (3, "c")]
    with pytest.raises(RewindError) as refused:
        conn.sql("SELECT * RENAME (ID AS K) FROM T JOIN R ON T.ID = R.KEY")
    assert (refused.value.code, "over a join" in refused.value.message) == ("UNSUPPORTED", True)


def test_qualify_dedupes_with_the_tables_own_columns(conn: Any) -> None:
    # SPEC R16, R26: Snowflake's dedupe idiom. sqlglot's Spark SQL rewrote QUALIFY into a
    # subquery whose window column `_w` SELECT * returned: CTAS stored it as a fourth
    # column and INSERT ... SELECT * was refused as one column too many.
    seed(conn)
    conn.sql("INSERT INTO T (ID, NAME, AMOUNT) VALUES (1, 'z', 99)")
    latest = "SELECT * FROM T QUALIFY ROW_NUMBER() OVER (PARTITION BY ID ORDER BY NAME) = 1"
    conn.sql(f"CREATE TABLE DEDUP AS {latest}")
    assert conn.sql("SELECT * FROM DEDUP")[0].columns == conn.sql("SELECT * FROM T")[0].columns
    assert query(conn, "SELECT ID, NAME FROM DEDUP ORDER BY ID") == [(1, "a"), (2, "b"), (3, "c")]
    assert conn.sql(f"INSERT INTO DEDUP {latest}")[0].rows == [[3]]


def test_not_null_columns_refuse_null_from_every_statement(conn: Any, home: Path) -> None:
    # SPEC R26, R39: Snowflake's NOT NULL (the one column constraint it enforces) is the
    # Delta schema's nullable false; a statement that would store NULL there writes
    # nothing; a clone and CREATE TABLE ... LIKE keep the constraint (Snowflake's LIKE
    # copies column definitions); a column kept NOT NULL cannot be hidden by DROP COLUMN
    # (its files would get NULL from every later write).
    conn.sql("CREATE TABLE N (ID INT NOT NULL, NAME VARCHAR NULL)")
    conn.sql("INSERT INTO N VALUES (1, NULL)")
    root = table_root(home, "N")
    version = DeltaTable(str(root)).version()
    for sql in [
        "INSERT INTO N (NAME) VALUES ('x')",
        "INSERT INTO N VALUES (DEFAULT, 'x')",  # no default: NULL, as in Snowflake
        "INSERT INTO N SELECT NULL, 'y'",
        "UPDATE N SET ID = NULL",
        "CREATE TABLE N2 CLONE N; INSERT INTO N2 (NAME) VALUES ('z')",
        "CREATE TABLE N3 LIKE N; INSERT INTO N3 (NAME) VALUES ('z')",
    ]:
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (sql, refused.value.code) == (sql, "INVALID_VALUE")
        assert "non-nullable column 'ID'" in refused.value.message
    assert DeltaTable(str(root)).version() == version
    conn.sql("UPDATE N SET NAME = DEFAULT WHERE ID = 1")  # Spark said `DEFAULT` unresolved
    assert query(conn, "SELECT * FROM N") == [(1, None)]
    assert [row[3] for row in conn.sql("DESC TABLE N")[0].rows] == ["N", "Y"]
    assert [row[3] for row in conn.sql("DESC TABLE N3")[0].rows] == ["N", "Y"]
    assert query(conn, "SELECT COUNT(*) FROM N3") == [(0,)]
    shown = conn.sql("SHOW COLUMNS IN TABLE N")[0]
    assert (shown.column("null?"), shown.column("data_type")[0]) == (
        ["false", "true"],
        '{"type":"FIXED","precision":38,"scale":0,"nullable":false}',
    )
    with pytest.raises(RewindError) as refused:
        conn.sql("ALTER TABLE N DROP COLUMN ID")
    assert refused.value.code == "UNSUPPORTED"
    # a PRIMARY KEY is NOT NULL (test_primary_unique_and_foreign_keys_are_accepted_...)


def test_a_declared_length_refuses_longer_strings_from_every_statement_r26_r40(
    conn: Any, home: Path
) -> None:
    """Snowflake's VARCHAR(n) (STRING(n), CHAR(n) alike; CHAR alone is VARCHAR(1)) holds at
    most n characters: a statement that would store a longer string writes nothing, as
    Snowflake refuses it ("String ... is too long"); a clone, CREATE TABLE ... LIKE and a
    column added later keep the length. It was accepted and stored whole. The length is
    the Delta field's, as delta-spark records VARCHAR(n), so delta-spark's writers check
    it too (tests/spark/test_external_tables.py); a length out of range is refused."""
    conn.sql(
        "CREATE TABLE L (ID INT, CODE VARCHAR(3), FLAG CHAR, NOTE STRING(4));"
        "INSERT INTO L VALUES (1, 'abc', 'y', 'ééé'), (2, 'xy', 'n', 'abcd');"
        "ALTER TABLE L ADD COLUMN EXTRA VARCHAR(2);"
        "CREATE TABLE L2 CLONE L; CREATE TABLE L3 LIKE L"
    )
    root = table_root(home, "L")
    version = DeltaTable(str(root)).version()
    refusals = {
        "INSERT INTO L (ID, CODE) VALUES (3, 'abcd')": "'CODE' (VARCHAR(3))",
        "INSERT INTO L (ID, FLAG) SELECT 3, 'no'": "'FLAG' (VARCHAR(1))",
        "INSERT INTO L (ID, CODE) VALUES (3, 1234)": "'CODE' (VARCHAR(3))",
        "UPDATE L SET CODE = CODE || '!' WHERE ID = 2": None,  # 'xy!' fits
        "UPDATE L SET CODE = CODE || '!' WHERE ID = 1": "'CODE' (VARCHAR(3))",
        "UPDATE L SET EXTRA = 'abc'": "'EXTRA' (VARCHAR(2))",
        "MERGE INTO L USING (SELECT 2 AS ID) S ON L.ID = S.ID "
        "WHEN MATCHED THEN UPDATE SET NOTE = 'abcde'": "'NOTE' (VARCHAR(4))",
        "MERGE INTO L USING (SELECT 5 AS ID) S ON L.ID = S.ID "
        "WHEN NOT MATCHED THEN INSERT (ID, NOTE) VALUES (S.ID, 'abcde')": "'NOTE' (VARCHAR(4))",
        "INSERT INTO L2 (ID, CODE) VALUES (3, 'abcd')": "'CODE' (VARCHAR(3))",
        "INSERT INTO L3 (ID, EXTRA) VALUES (3, 'abc')": "'EXTRA' (VARCHAR(2))",
    }
    for sql, named in refusals.items():
        if named is None:
            conn.sql(sql)
            version += 1
            continue
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (sql, refused.value.code) == (sql, "INVALID_VALUE")
        assert f"too long for column {named}: nothing was written" in refused.value.message
    assert DeltaTable(str(root)).version() == version
    assert query(conn, "SELECT CODE, NOTE FROM L ORDER BY ID") == [("abc", "ééé"), ("xy!", "abcd")]
    for table in ("L", "L2", "L3"):
        types = [r[1] for r in query(conn, f"DESC TABLE {table}")]
        assert (table, types) == (
            table,
            ["NUMBER(38,0)", "VARCHAR(3)", "VARCHAR(1)", "VARCHAR(4)", "VARCHAR(2)"],
        )
    shown = conn.sql("SHOW COLUMNS IN TABLE L")[0].column("data_type")
    assert json.loads(shown[1]) == {
        "type": "TEXT",
        "length": 3,
        "byteLength": 12,
        "nullable": True,
        "fixed": False,
    }
    fields = json.loads(DeltaTable(str(root)).schema().to_json())["fields"]
    assert [f["metadata"].get("__CHAR_VARCHAR_TYPE_STRING") for f in fields] == [
        None,
        "varchar(3)",
        "varchar(1)",
        "varchar(4)",
        "varchar(2)",
    ]
    for bad in ("VARCHAR(0)", "VARCHAR(134217729)", "VARCHAR(MAX)", "CHAR(1.5)"):
        with pytest.raises(RewindError) as refused:
            conn.sql(f"CREATE TABLE B (C {bad})")
        assert (bad, refused.value.code) == (bad, "INVALID_VALUE")
        assert "a string column holds 1 to 134217728 characters" in refused.value.message
    assert query(conn, "SHOW TABLES LIKE 'B'") == []


def test_alter_column_widens_a_varchar_sets_and_drops_not_null_and_comments_r25_r40(
    conn: Any, home: Path
) -> None:
    """``ALTER TABLE t ALTER | MODIFY COLUMN c`` was refused whatever it said, and so was a
    column's COMMENT in CREATE TABLE and ADD COLUMN. Now, as in Snowflake: a VARCHAR gets
    a longer length or none (never a shorter one, which would cut what it holds); SET NOT
    NULL is refused while a row holds NULL there; DROP NOT NULL; COMMENT (the Delta
    field's, as delta-spark keeps it). Each is one metadata-only Delta version
    (delta-spark's CHANGE COLUMN) that every later write obeys; the versions before it
    read as they did."""
    conn.sql(
        "CREATE TABLE A (ID INT, CODE VARCHAR(3) COMMENT 'a code', NOTE VARCHAR);"
        "INSERT INTO A VALUES (1, 'abc', NULL)"
    )
    root = table_root(home, "A")
    version = DeltaTable(str(root)).version()
    for sql, code in {
        "ALTER TABLE A ALTER COLUMN CODE SET DATA TYPE VARCHAR(2)": "INVALID_VALUE",
        "ALTER TABLE A ALTER COLUMN ID SET DATA TYPE VARCHAR": "UNSUPPORTED",
        "ALTER TABLE A ALTER COLUMN NOTE SET NOT NULL": "INVALID_VALUE",  # a NULL in it
        "ALTER TABLE A ALTER COLUMN NOPE DROP NOT NULL": "OBJECT_NOT_FOUND",
        "ALTER TABLE A ADD COLUMN LATER INT NOT NULL": "UNSUPPORTED",  # its rows: NULL
    }.items():
        with pytest.raises(RewindError) as refused:
            conn.sql(sql)
        assert (sql, refused.value.code) == (sql, code)
    assert DeltaTable(str(root)).version() == version
    conn.sql(
        "ALTER TABLE A MODIFY COLUMN CODE VARCHAR(10);"
        "INSERT INTO A VALUES (2, 'abcdefghij', 'n');"
        "UPDATE A SET NOTE = 'x' WHERE NOTE IS NULL;"
        "ALTER TABLE A ALTER NOTE SET NOT NULL;"
        "ALTER TABLE A ALTER COLUMN ID COMMENT 'the key';"
        "ALTER TABLE A ADD COLUMN LATER INT COMMENT 'added'"
    )
    with pytest.raises(RewindError) as refused:
        conn.sql("INSERT INTO A (ID) VALUES (3)")
    assert "non-nullable column 'NOTE'" in refused.value.message
    conn.sql("CREATE TABLE A2 CLONE A; CREATE TABLE A3 LIKE A")  # Snowflake's keep them
    for table in ("A", "A2", "A3"):
        described = [(r[0], r[1], r[3], r[9]) for r in query(conn, f"DESC TABLE {table}")]
        assert (table, described) == (
            table,
            [
                ("ID", "NUMBER(38,0)", "Y", "the key"),
                ("CODE", "VARCHAR(10)", "Y", "a code"),
                ("NOTE", "VARCHAR", "N", None),
                ("LATER", "NUMBER(38,0)", "Y", "added"),
            ],
        )
    conn.sql("ALTER TABLE A ALTER COLUMN NOTE DROP NOT NULL; ALTER TABLE A ALTER CODE TYPE VARCHAR")
    longer = conn.sql("INSERT INTO A (ID, CODE) VALUES (3, 'longer than ten')")[0].query_id
    fields = json.loads(DeltaTable(str(root)).schema().to_json())["fields"]
    assert [(f["name"], f["nullable"], f["metadata"]) for f in fields] == [
        ("ID", True, {"comment": "the key"}),
        ("CODE", True, {"comment": "a code"}),
        ("NOTE", True, {}),
        ("LATER", True, {"comment": "added"}),
    ]
    then = query(conn, f"SELECT ID, CODE, NOTE FROM A BEFORE(STATEMENT => '{longer}')")
    assert sorted(then) == [(1, "abc", "x"), (2, "abcdefghij", "n")]


def test_snowflake_functions_answer_as_in_snowflake(conn: Any) -> None:
    # SPEC R16: sqlglot wrote these as Spark functions that answer otherwise, with no
    # error: DATEDIFF counted whole units (0 months from Jan 31 to Feb 1), DAYOFWEEK
    # was 1 on a Sunday (DAYOFWEEKISO 2), TO_NUMBER('12.5') was 12.5, and TRY_TO_DATE /
    # TRY_TO_NUMBER failed on what they must answer NULL to; INITCAP left 'foo_bar' as
    # it was; TO_VARCHAR lost its number format; WEEK was no function; GREATEST and LEAST
    # skipped a NULL (Snowflake's are NULL); SHA2 needed its bits named and the EPOCH
    # date parts were refused; TRY_PARSE_JSON returned text that is no JSON,
    # RATIO_TO_REPORT was no function and DATE_FROM_PARTS failed past a month's days.
    sunday, monday = "'2026-11-29'::date", "'2026-11-30'::date"
    answers = query(
        conn,
        "SELECT DATEDIFF(month, '2026-01-31'::date, '2026-02-01'::date), "
        "DATEDIFF(hour, '2026-01-01 10:59'::timestamp, '2026-01-01 11:01'::timestamp), "
        "DATEDIFF(day, '2026-01-01'::date, '2026-03-01'::date), "
        f"DAYOFWEEK({sunday}), DAYOFWEEK({monday}), DAYOFWEEKISO({sunday}), "
        f"DATE_PART(dow, {monday}), TO_NUMBER('12.5'), TO_DECIMAL('12.345', 10, 2), "
        "TRY_TO_DATE('nope'), TRY_TO_NUMBER('12x'), TRY_TO_BOOLEAN('nope'), TO_BOOLEAN('yes'), "
        "INITCAP('hello wORLD-foo_bar'), TO_VARCHAR(1234.5, '9,999.99'), WEEK('2026-01-05'::date), "
        "GREATEST(1, NULL, 3), LEAST(2, 1), SHA2('a') = SHA2('a', 256), "
        "DATE_PART(epoch_second, '2026-01-01 00:00:01'::timestamp_ntz), "
        "EXTRACT(epoch FROM '1970-01-02'::date), "
        "DATE_PART(epoch_millisecond, '2026-01-01 00:00:01+01:00'::timestamp_tz), "
        "DATE_PART(epoch_nanosecond, '1970-01-01 00:00:01'::timestamp_ntz), "
        "TRY_PARSE_JSON('{oops'), TRY_PARSE_JSON('[1, 2]'), "
        "DATE_FROM_PARTS(2026, 13, 1), DATE_FROM_PARTS(2026, 3, 0), DATE_FROM_PARTS(2026, 2, 30), "
        "RATIO_TO_REPORT(x) OVER () FROM VALUES (1), (3) AS v(x) ORDER BY x LIMIT 1",
    )
    calendar = (1, 1, 59, 0, 1, 7, 1)
    conversions = (Decimal("13"), Decimal("12.35"), None, None, None, True)
    texts = ("Hello World-Foo_Bar", "1,234.50", 2, None, 1, True)
    epochs = (1767225601, 86400, 1767222001000, 1000000000)
    parts = (date(2027, 1, 1), date(2026, 2, 28), date(2026, 3, 2))
    json_and_ratio = (None, "[1, 2]", *parts, 0.25)
    assert answers == [(*calendar, *conversions, *texts, *epochs, *json_and_ratio)]
    with pytest.raises(RewindError) as refused:
        conn.sql("SELECT PARSE_JSON('{oops')")
    assert (refused.value.code, refused.value.message) == (
        "INVALID_VALUE",
        "Error parsing JSON: the text is not JSON.",
    )


def test_a_cast_to_an_integer_rounds_half_away_from_zero_in_both_dialects_r26_r27(
    conn: Any,
) -> None:
    """``1.5::INT`` was 1 and ``CAST(x AS INT)`` of a NUMBER(10,2) or FLOAT column holding
    2.5 was 2 (Spark's cast truncates); Snowflake and BigQuery round half away from zero:
    2, 3, and -2 for -1.5. ``TRY_CAST`` / ``SAFE_CAST`` still answer NULL for no number."""
    conn.sql(
        "CREATE TABLE R (X NUMBER(10,2), F FLOAT, S VARCHAR); "
        "INSERT INTO R VALUES (2.5, 2.5, '2.5'), (-1.5, -1.5, 'x')"
    )
    snowflake = query(
        conn,
        "SELECT 1.5::INT, CAST(-0.5 AS BIGINT), 1.5e0::SMALLINT, X::INT, F::INTEGER, "
        "TRY_CAST(S AS INT), TRUE::INT, 7::INT FROM R ORDER BY X DESC",
    )
    assert snowflake == [(2, -1, 2, 3, 3, 3, 1, 7), (2, -1, 2, -2, -2, None, 1, 7)]
    assert query(
        conn,
        "SELECT CAST(X AS INT64), CAST(F AS INT64), SAFE_CAST(S AS INT64) "
        "FROM D.PUBLIC.R ORDER BY X DESC",
        dialect="bigquery",
    ) == [(3, 3, 3), (-2, -2, None)]


def test_truncate_to_a_scale_goes_toward_zero_r26(conn: Any) -> None:
    """``TRUNCATE(x, scale)`` / ``TRUNC(x, scale)`` were refused (sqlglot's Spark has no
    form); Snowflake's cut toward zero at that many digits, before the point if negative."""
    assert query(
        conn,
        "SELECT TRUNCATE(2.567, 1), TRUNC(-2.567, 2), TRUNC(1234.5, -2), TRUNCATE(-2.567), "
        "TRUNC(NULL, 1)",
    ) == [(Decimal("2.5"), Decimal("-2.56"), Decimal("1200"), Decimal("-2"), None)]


def test_add_months_keeps_the_time_and_the_months_end_and_tokens_answer_r26(conn: Any) -> None:
    """``ADD_MONTHS`` of a timestamp answered a DATE (its time of day lost) and of a
    month's last day the same day number (2016-02-29 plus a month: Spark's 2016-03-29,
    Snowflake's 2016-03-31, the month's end); DATEADD keeps the day number, as before.
    ``HLL`` (Snowflake's APPROX_COUNT_DISTINCT), ``STRTOK``, ``STRTOK_TO_ARRAY`` and
    ``PREVIOUS_DAY`` were no functions."""
    assert query(
        conn,
        "SELECT ADD_MONTHS('2016-02-29'::DATE, 1), ADD_MONTHS('2016-01-30'::DATE, 1), "
        "ADD_MONTHS('2026-05-31 10:00:00'::TIMESTAMP_NTZ, -1), "
        "ADD_MONTHS('2026-05-01 10:30:00'::TIMESTAMP_NTZ, 1), ADD_MONTHS(NULL::DATE, 1), "
        "DATEADD(month, 1, '2016-02-29'::DATE), HLL(x), HLL(DISTINCT x) "
        "FROM VALUES (1), (2), (2) AS v(x)",
    ) == [
        (
            date(2016, 3, 31),
            date(2016, 2, 29),
            datetime(2026, 4, 30, 10),
            datetime(2026, 6, 1, 10, 30),
            None,
            date(2016, 3, 29),
            2,
            2,
        )
    ]
    tokens = query(
        conn,
        "SELECT STRTOK('a.b.c', '.', 2), STRTOK('  hello  world '), STRTOK('a-b]c', '-]', 3), "
        "STRTOK('abc', '.', 5), STRTOK('', '.'), STRTOK_TO_ARRAY('a,,b c', ', '), "
        "PREVIOUS_DAY('2026-05-04'::DATE, 'mo'), PREVIOUS_DAY('2026-05-05'::DATE, 'monday')",
    )
    assert tokens == [
        ("b", "hello", "c", None, None, ["a", "b", "c"], date(2026, 4, 27), date(2026, 5, 4))
    ]


def test_array_agg_within_group_orders_as_snowflake_does_r26(conn: Any) -> None:
    """``ARRAY_AGG(x) WITHIN GROUP (ORDER BY ...)`` failed (Spark's COLLECT_LIST takes no
    order); Snowflake's drops NULL values and orders NULL keys last ascending, first
    descending, unless told, by every key in turn; DISTINCT keeps the order. So does
    BigQuery's form (SPEC R27)."""
    rows = "VALUES (1, 'b'), (2, NULL), (2, 'a'), (NULL, 'c'), (3, 'a') v(x, y)"
    answers = query(
        conn,
        "SELECT ARRAY_AGG(x) WITHIN GROUP (ORDER BY x DESC), "
        "ARRAY_AGG(x) WITHIN GROUP (ORDER BY y, x), "
        "ARRAY_AGG(DISTINCT x) WITHIN GROUP (ORDER BY x), "
        "ARRAY_AGG(y) WITHIN GROUP (ORDER BY y DESC), "
        f"ARRAY_AGG(y) WITHIN GROUP (ORDER BY y DESC NULLS LAST) FROM {rows}",
    )
    assert [tuple(json.loads(a) if isinstance(a, str) else a for a in row) for row in answers] == [
        ([3, 2, 2, 1], [2, 3, 1, 2], [1, 2, 3], ["c", "b", "a", "a"], ["c", "b", "a", "a"])
    ]
    # BigQuery's ARRAY_AGG(x ORDER BY ... LIMIT n): Spark refused the clause, and sqlglot
    # dropped the order of a DISTINCT one; BigQuery puts NULL keys first ascending.
    conn.sql(f"CREATE TABLE AG AS SELECT * FROM {rows}")
    bigquery = conn.sql(
        "SELECT ARRAY_AGG(x IGNORE NULLS ORDER BY y DESC, x LIMIT 2), "
        "ARRAY_AGG(DISTINCT x IGNORE NULLS ORDER BY x DESC), "
        "ARRAY_AGG(x IGNORE NULLS ORDER BY y, x) FROM D.PUBLIC.AG",
        dialect="bigquery",
    )[-1].rows
    assert [[json.loads(a) if isinstance(a, str) else a for a in row] for row in bigquery] == [
        [[1, 2], [3, 2, 1], [2, 2, 3, 1]]
    ]


def test_a_regular_expression_that_matches_nothing_extracts_null_in_both_dialects_r26_r27(
    conn: Any,
) -> None:
    """``REGEXP_SUBSTR`` / BigQuery's ``REGEXP_EXTRACT`` of a pattern that does not match
    answered '' (Spark's REGEXP_EXTRACT), both products NULL; BigQuery's of a pattern
    without a group failed (Spark took group 1); Snowflake's ``e`` parameter was refused."""
    snowflake = query(
        conn,
        "SELECT REGEXP_SUBSTR('abc', '\\\\d+'), REGEXP_SUBSTR('a12', '\\\\d+'), "
        "REGEXP_SUBSTR('x12', 'x(\\\\d)', 1, 1, 'e'), "
        "REGEXP_SUBSTR('x12y3', '([a-z])(\\\\d)', 1, 1, 'e', 2)",
    )
    assert snowflake == [(None, "12", "1", "1")]
    assert query(
        conn,
        "SELECT REGEXP_EXTRACT('x123y', r'\\d+'), REGEXP_EXTRACT('x123y', r'x(\\d+)'), "
        "REGEXP_EXTRACT('abc', r'\\d'), REGEXP_EXTRACT_ALL('a1b2', r'[a-z](\\d)')",
        dialect="bigquery",
    ) == [("123", "123", None, ["1", "2"])]


def test_regexp_substr_and_instr_take_a_position_an_occurrence_and_parameters_r27(
    conn: Any,
) -> None:
    """SPEC R27: ``REGEXP_SUBSTR`` with a position or an occurrence was refused (Spark's
    REGEXP_EXTRACT has neither), and so were the ``i``, ``m``, ``s`` parameters; Spark's
    ``REGEXP_INSTR`` reads its third argument as a group, not Snowflake's position
    (``REGEXP_INSTR('x1y2y', 'y', 4)`` failed); BigQuery's ``REGEXP_EXTRACT(s, p, position,
    occurrence)`` was refused. A second occurrence of REGEXP_INSTR is refused by name; an
    unknown parameter letter is INVALID_VALUE."""
    found = query(
        conn,
        "SELECT REGEXP_SUBSTR('a1b22c333', '[0-9]+', 1, 2), REGEXP_SUBSTR('a1b22c333', "
        "'[0-9]+', 3), REGEXP_SUBSTR('a1b22c333', '[0-9]+', 1, 4), "
        "REGEXP_SUBSTR('a1B22c333', '([a-z])([0-9]+)', 1, 2, 'ie', 2), "
        "REGEXP_SUBSTR('AB', 'a', 1, 1, 'ic'), REGEXP_SUBSTR('a\nb', '^b', 1, 1, 'm'), "
        "REGEXP_SUBSTR('a\nb', 'a.b', 1, 1, 's'), REGEXP_INSTR('x1y2y', 'y'), "
        "REGEXP_INSTR('x1y2y', 'y', 4), REGEXP_INSTR('x1y2y', 'Y', 1, 1, 1, 'i'), "
        "REGEXP_INSTR('x1y2y', 'z')",
    )
    assert found == [("22", "22", None, "22", None, "b", "a\nb", 3, 5, 4, 0)]
    bigquery = conn.sql("SELECT REGEXP_EXTRACT('a1b22c333', r'[0-9]+', 2, 2)", dialect="bigquery")[
        -1
    ].rows
    assert [tuple(row) for row in bigquery] == [("22",)]
    assert_refused(
        conn,
        [
            ("SELECT REGEXP_INSTR('x1y2y', 'y', 1, 2)", "UNSUPPORTED"),
            ("SELECT REGEXP_SUBSTR('abc', 'b', 1, 1, 'q')", "INVALID_VALUE"),
        ],
    )


def test_bigquery_format_and_generated_arrays_answer_as_in_bigquery_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's ``FORMAT('%.2f', 2.5)`` failed (Spark's decimal is no Java
    number), ``%t`` and the ``'`` flag were no Java format; ``GENERATE_DATE_ARRAY`` of
    text bounds failed and ``GENERATE_TIMESTAMP_ARRAY`` was no Spark function;
    ``ARRAY(SELECT ...)`` failed in Spark's parser. A ``*`` width and an ARRAY of a
    grouped subquery are refused by name."""
    assert query(
        conn,
        "SELECT FORMAT('%d items at %.2f %t %%, %\\'d|%-4s|', 3, 2.5, DATE '2026-01-02', "
        "1234567, 'ab'), GENERATE_DATE_ARRAY('2026-01-01', '2026-01-05', INTERVAL 2 DAY), "
        "GENERATE_TIMESTAMP_ARRAY('2026-01-01 00:00:00', '2026-01-01 02:00:00', "
        "INTERVAL 1 HOUR)",
        dialect="bigquery",
    ) == [
        (
            "3 items at 2.50 2026-01-02 %, 1,234,567|ab  |",
            [date(2026, 1, 1), date(2026, 1, 3), date(2026, 1, 5)],
            [datetime(2026, 1, 1, hour, tzinfo=UTC) for hour in range(3)],
        )
    ]
    assert query(
        conn,
        "SELECT ARRAY(SELECT x FROM UNNEST([3, 1, 2]) AS x ORDER BY x DESC LIMIT 2), "
        "ARRAY(SELECT x * 2 FROM UNNEST([1, 2, 3]) AS x WHERE x > 1), "
        "ARRAY(SELECT x FROM UNNEST([1]) AS x WHERE x > 1)",
        dialect="bigquery",
    ) == [([3, 2], [4, 6], [])]
    assert_refused(
        conn,
        [
            ("SELECT FORMAT('%*d', 3, 4)", "UNSUPPORTED"),
            ("SELECT ARRAY(SELECT x FROM UNNEST([1, 1]) AS x GROUP BY x)", "UNSUPPORTED"),
        ],
        dialect="bigquery",
    )


def test_last_day_of_a_week_quarter_year_and_array_slice_answer_as_in_each_product_r27(
    conn: Any,
) -> None:
    """SPEC R27: ``LAST_DAY(d, 'WEEK')`` was refused in Snowflake's dialect and BigQuery's
    ``LAST_DAY(d, WEEK)`` answered the month's last day (a wrong answer): a Snowflake week
    ends on Sunday, BigQuery's WEEK on Saturday, ``WEEK(MONDAY)`` on Sunday, ISOWEEK on
    Sunday. ``ARRAY_SLICE(a, 0, 2)`` failed (sqlglot's SLICE took Snowflake's 0-based
    bounds as Spark's start and length)."""
    snowflake = query(
        conn,
        "SELECT LAST_DAY('2026-02-03'::DATE, 'WEEK'), LAST_DAY('2026-02-08'::DATE, 'WEEK'), "
        "LAST_DAY('2026-02-03 10:00'::TIMESTAMP, 'QUARTER'), LAST_DAY('2026-02-03'::DATE, "
        "'YEAR'), LAST_DAY('2026-02-03'::DATE), ARRAY_SLICE(ARRAY_CONSTRUCT(1, 2, 3), 0, 2), "
        "ARRAY_SLICE(ARRAY_CONSTRUCT(1, 2, 3), -2, 3), ARRAY_SLICE(ARRAY_CONSTRUCT(1, 2, 3), "
        "1, 10), ARRAY_SLICE(ARRAY_CONSTRUCT(1, 2, 3), 2, 1)",
    )
    day = date.fromisoformat
    assert [
        tuple(json.loads(v) if isinstance(v, str) else v for v in row) for row in snowflake
    ] == [
        (
            day("2026-02-08"),
            day("2026-02-08"),
            day("2026-03-31"),
            day("2026-12-31"),
            day("2026-02-28"),
            [1, 2],
            [2, 3],
            [2, 3],
            [],
        )
    ]
    assert query(
        conn,
        "SELECT LAST_DAY(DATE '2026-02-03', WEEK), LAST_DAY(DATE '2026-02-03', WEEK(MONDAY)), "
        "LAST_DAY(DATE '2026-02-03', ISOWEEK), LAST_DAY(DATE '2026-02-03', QUARTER)",
        dialect="bigquery",
    ) == [(day("2026-02-07"), day("2026-02-08"), day("2026-02-08"), day("2026-03-31"))]


def test_a_date_spine_from_generator_and_seq4_r27_r38(conn: Any) -> None:
    """SPEC R27, R38: ``TABLE(GENERATOR(ROWCOUNT => n))`` was refused as a table function
    ("Only catalog tables can be read") and SEQ4 / SEQ8 were no Spark functions: Snowflake's
    date spine is its rows with 0, 1, 2, ...; TIMELIMIT and a ROWCOUNT that is no literal
    count are refused by name, and a table function that reads a path still is (R38)."""
    conn.sql(
        "CREATE TABLE SPINE AS SELECT DATEADD(day, SEQ4(), '2026-01-01'::DATE) AS DAY "
        "FROM TABLE(GENERATOR(ROWCOUNT => 31))"
    )
    assert query(conn, "SELECT COUNT(*), MIN(DAY), MAX(DAY) FROM SPINE") == [
        (31, date(2026, 1, 1), date(2026, 1, 31))
    ]
    assert query(
        conn,
        "SELECT COUNT(*), MAX(S) FROM (SELECT SEQ8() S FROM TABLE(GENERATOR(ROWCOUNT => 1000)) g)"
        " UNION ALL SELECT COUNT(*), 0 FROM TABLE(GENERATOR(ROWCOUNT => 0))",
    ) == [(1000, 999), (0, 0)]
    assert_refused(
        conn,
        [
            ("SELECT 1 FROM TABLE(GENERATOR(TIMELIMIT => 1))", "UNSUPPORTED"),
            ("SELECT 1 FROM SPINE, TABLE(GENERATOR(ROWCOUNT => DAY))", "INVALID_VALUE"),
            ("SELECT * FROM TABLE(READ_FILES('/etc/passwd'))", "UNSUPPORTED"),
        ],
    )


def test_a_select_alias_and_seq4_filter_in_where_as_in_snowflake_r27(conn: Any) -> None:
    """SPEC R27: Snowflake reads a select alias in WHERE (a name no source has), Spark
    does not (invalid identifier): ``WHERE NXT > 3`` filters on ``ID + 1``; a source's own
    column of that name wins, as in Snowflake. SEQ4() over a generator filtered in WHERE
    was a window function there (refused); it is the generator's row number."""
    conn.sql(
        "CREATE TABLE NUMS AS SELECT SEQ4() AS ID, ID * 2 AS TWICE "
        "FROM TABLE(GENERATOR(ROWCOUNT => 5))"
    )
    assert query(conn, "SELECT ID + 1 AS NXT FROM NUMS WHERE NXT > 3 ORDER BY 1") == [(4,), (5,)]
    assert query(conn, "SELECT ID * 10 AS TWICE FROM NUMS WHERE TWICE > 6") == [(40,)]
    assert query(
        conn,
        "WITH W AS (SELECT ID FROM NUMS) SELECT ID * 3 AS Z FROM W WHERE Z > 9 ORDER BY 1",
    ) == [(12,)]
    result = conn.sql(
        "SELECT SEQ8(), SEQ4() + 1 FROM TABLE(GENERATOR(ROWCOUNT => 4)) WHERE SEQ8() = 2"
    )[-1]
    assert (result.columns, [tuple(r) for r in result.rows]) == (["SEQ8()", "SEQ4() + 1"], [(2, 3)])
    assert query(conn, "SELECT SEQ4() AS N FROM TABLE(GENERATOR(ROWCOUNT => 5)) WHERE N > 2") == [
        (3,),
        (4,),
    ]
    assert_refused(
        conn,
        [("SELECT ID + 1 AS NXT FROM NUMS WHERE NXT > 3", "SQL_COMPILATION_ERROR")],
        dialect="bigquery",
    )


def test_percentiles_distinct_counts_and_named_windows_r27(conn: Any) -> None:
    """SPEC R27: ``PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY v)`` was Spark's
    PERCENTILE_APPROX (the median of 10 and 20 answered 10, DESC ignored) — a wrong answer,
    grouped or over a window; ``COUNT(DISTINCT v) OVER (...)`` was refused (both
    products); BigQuery's ``PERCENTILE_DISC(x, p) OVER`` and ``OVER (w ORDER BY ...)``
    of a named window failed."""
    conn.sql(
        "CREATE TABLE PCT (ID INT, G VARCHAR, V NUMBER(10, 2)); INSERT INTO PCT VALUES "
        "(1, 'a', 10), (2, 'a', 20), (3, 'a', NULL), (4, 'b', 5), (5, 'b', 5), (6, 'b', 7)"
    )
    assert query(
        conn,
        "SELECT G, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY V), "
        "PERCENTILE_CONT(0.25) WITHIN GROUP (ORDER BY V DESC), "
        "PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY V DESC) FROM PCT GROUP BY G ORDER BY G",
    ) == [("a", 15.0, 17.5, 20.0), ("b", 5.0, 6.0, 5.0)]
    assert query(
        conn,
        "SELECT ID, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY V) OVER (PARTITION BY G), "
        "COUNT(DISTINCT V) OVER (PARTITION BY G), COUNT(DISTINCT G) OVER () FROM PCT "
        "QUALIFY ID IN (1, 4) ORDER BY ID",
    ) == [(1, 15.0, 2, 2), (4, 5.0, 2, 2)]
    conn.sql("CREATE SCHEMA BQ")
    conn.sql("CREATE TABLE BQ.PCT AS SELECT * FROM PUBLIC.PCT")
    database = query(conn, "SELECT CURRENT_DATABASE()")[0][0]
    assert query(
        conn,
        f"SELECT ID, PERCENTILE_DISC(V, 0.5) OVER (PARTITION BY G), "
        f"COUNT(DISTINCT V) OVER (PARTITION BY G), SUM(V) OVER (w ORDER BY ID), MAX(V) OVER w "
        f"FROM {database}.BQ.PCT WINDOW w AS (PARTITION BY G) ORDER BY ID",
        dialect="bigquery",
    ) == [
        (1, 10.0, 2, Decimal("10.00"), Decimal("20.00")),
        (2, 10.0, 2, Decimal("30.00"), Decimal("20.00")),
        (3, 10.0, 2, Decimal("30.00"), Decimal("20.00")),
        (4, 5.0, 2, Decimal("5.00"), Decimal("7.00")),
        (5, 5.0, 2, Decimal("10.00"), Decimal("7.00")),
        (6, 5.0, 2, Decimal("17.00"), Decimal("7.00")),
    ]
    assert_refused(
        conn,
        [(f"SELECT SUM(V) OVER (z ORDER BY ID) FROM {database}.BQ.PCT", "SQL_COMPILATION_ERROR")],
        dialect="bigquery",
    )


def test_objects_built_from_a_row_and_empty_arrays_answer_r27(conn: Any) -> None:
    """SPEC R27: ``SELECT ARRAY_CONSTRUCT()`` and ``OBJECT_CONSTRUCT(*)`` reached the user
    as INTERNAL_ERROR (Arrow refuses Spark's empty array of no type); OBJECT_CONSTRUCT(*)
    over a table was Spark's MAP(*) (columns taken for keys and values in turn: refused);
    a path into an OBJECT_CONSTRUCT (``:a``, GET) failed to compile, a key it lacks too
    (NULL in Snowflake); OBJECT_KEYS of one failed; OBJECT_CONSTRUCT_KEEP_NULL was a
    syntax error."""
    conn.sql(
        "CREATE TABLE ROWS_ (ID INT, NAME VARCHAR, NOTE VARCHAR); "
        "INSERT INTO ROWS_ VALUES (1, 'x', NULL), (2, 'y', 'n')"
    )
    assert query(conn, "SELECT ARRAY_CONSTRUCT(), OBJECT_CONSTRUCT(), ARRAY_CONSTRUCT(1)") == [
        ([], {}, [1])
    ]
    assert query(
        conn,
        "SELECT OBJECT_CONSTRUCT(*), TO_JSON(OBJECT_CONSTRUCT(r.*)), OBJECT_CONSTRUCT(*):NAME, "
        "OBJECT_KEYS(OBJECT_CONSTRUCT(*)) FROM ROWS_ r ORDER BY ID",
    ) == [
        ({"ID": 1, "NAME": "x", "NOTE": None}, '{"ID":1,"NAME":"x"}', "x", ["ID", "NAME", "NOTE"]),
        (
            {"ID": 2, "NAME": "y", "NOTE": "n"},
            '{"ID":2,"NAME":"y","NOTE":"n"}',
            "y",
            ["ID", "NAME", "NOTE"],
        ),
    ]
    assert query(
        conn,
        "SELECT OBJECT_CONSTRUCT('a', 1):a, GET(OBJECT_CONSTRUCT('a', 1), 'a'), "
        "OBJECT_CONSTRUCT('a', 1):zz, OBJECT_CONSTRUCT('a', OBJECT_CONSTRUCT('b', 2)):a.b, "
        "GET(ARRAY_CONSTRUCT(5, 6), 1), OBJECT_KEYS(OBJECT_CONSTRUCT('a', 1, 'b', 2)), "
        "OBJECT_CONSTRUCT_KEEP_NULL('a', 1, 'b', NULL)",
    ) == [(1, 1, None, 2, 6, ["a", "b"], {"a": 1, "b": None})]
    # An object literal's keys are text: they kept their case only when quoted ({'A': 1}).
    assert query(conn, "SELECT {'a': 1, 'B c': 2}, {'a': 1}:a, {'a': 1}:A") == [
        ({"a": 1, "B c": 2}, 1, None)
    ]
    assert query(conn, "SELECT STRUCT(1 AS a).a", dialect="bigquery") == [(1,)]


def test_a_date_past_the_year_9999_is_refused_by_name_r39(conn: Any) -> None:
    """SPEC R39: a result date after 9999-12-31 or before the year 1 (Spark computes them,
    Python's dates end there) reached the user as INTERNAL_ERROR (OverflowError)."""
    assert_refused(
        conn,
        [
            ("SELECT DATEADD(year, 10000, '2026-01-01'::DATE)", "INVALID_VALUE"),
            ("SELECT '9999-12-31'::DATE + 1", "INVALID_VALUE"),
        ],
    )


def test_encodings_json_checks_split_part_and_haversine_r27_r39(conn: Any) -> None:
    """SPEC R27, R39: BASE64_ENCODE, BASE64_DECODE_STRING (and TRY_), HEX_DECODE_STRING,
    RTRIMMED_LENGTH, OCTET_LENGTH, CHECK_JSON, HAVERSINE and CURRENT_WAREHOUSE were
    unknown functions; SPLIT_PART(s, d, 0) failed (Snowflake's first part); malformed
    BASE64 is INVALID_VALUE, not Spark's EXECUTION_ERROR."""
    assert query(
        conn,
        "SELECT BASE64_ENCODE('hello'), BASE64_DECODE_STRING('aGVsbG8='), "
        "TRY_BASE64_DECODE_STRING('!!!'), HEX_DECODE_STRING('41'), RTRIMMED_LENGTH('ab  '), "
        "OCTET_LENGTH('héllo'), CHECK_JSON('{\"a\":'), CHECK_JSON('{\"a\": 1}'), "
        "SPLIT_PART('a,b,c', ',', 0), ROUND(HAVERSINE(40.7127, -74.0059, 34.05, -118.25), 6), "
        "CURRENT_WAREHOUSE()",
    ) == [
        (
            "aGVsbG8=",
            "hello",
            None,
            "A",
            2,
            6,
            "Error parsing JSON: the text is not JSON.",
            None,
            "a",
            3936.385096,
            None,
        )
    ]
    assert_refused(
        conn,
        [
            ("SELECT BASE64_DECODE_STRING('!!!')", "INVALID_VALUE"),
            ("SELECT HEX_DECODE_STRING('zz')", "INVALID_VALUE"),
        ],
    )


def test_not_in_a_subquery_brings_back_what_a_delete_removed_r16_r26(conn: Any) -> None:
    """SPEC R16, R26: the recovery idiom ``INSERT INTO t SELECT * FROM t BEFORE(...) WHERE
    id NOT IN (SELECT id FROM t)`` was refused ("A comparison with ALL (subquery) is not
    supported": sqlglot reads NOT IN (subquery) as ``<> ALL``); so were ``= ANY (subquery)``
    and NOT IN in a DELETE. NULLs answer as in SQL: a NULL in the subquery's values keeps
    every row out; an empty subquery lets every row in."""
    conn.sql("INSERT INTO T (ID, NAME) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    delete = conn.sql("DELETE FROM T WHERE ID > 1")[0].query_id
    restored = conn.sql(
        f"INSERT INTO T SELECT * FROM T BEFORE(STATEMENT => '{delete}') "
        "WHERE ID NOT IN (SELECT ID FROM T)"
    )
    assert restored[0].rows == [[2]]
    assert query(conn, "SELECT ID, NAME FROM T ORDER BY ID") == [(1, "a"), (2, "b"), (3, "c")]
    assert query(conn, "SELECT ID FROM T WHERE ID NOT IN (SELECT NULL)") == []
    assert query(conn, "SELECT count(*) FROM T WHERE ID NOT IN (SELECT 1 WHERE FALSE)") == [(3,)]
    assert query(conn, "SELECT ID FROM T WHERE ID = ANY (SELECT 2) ORDER BY ID") == [(2,)]
    assert query(
        conn, "SELECT count(*) FROM T WHERE (ID, NAME) NOT IN (SELECT ID, 'a' FROM T)"
    ) == [(2,)]
    conn.sql("DELETE FROM T WHERE ID NOT IN (SELECT ID FROM T WHERE NAME <> 'b')")
    assert query(conn, "SELECT ID FROM T ORDER BY ID") == [(1,), (3,)]


def test_hash_agg_tells_whether_a_restore_brought_a_table_back_whole_r16_r26(conn: Any) -> None:
    """SPEC R16, R26: HASH_AGG, Snowflake's way to compare a table with itself at a point,
    was an unknown function. It ignores row order, counts duplicates, hashes NULLs, is 0
    for no row, and takes DISTINCT, a column list and ``*``."""
    insert = seed(conn)
    conn.sql("UPDATE T SET NAME = 'x' WHERE ID = 2")
    now_and_then = (
        "SELECT (SELECT HASH_AGG(*) FROM T) = (SELECT HASH_AGG(*) FROM T "
        f"AT(STATEMENT => '{insert}'))"
    )
    assert query(conn, now_and_then) == [(False,)]
    conn.sql(f"INSERT OVERWRITE INTO T SELECT * FROM T AT(STATEMENT => '{insert}')")
    assert query(conn, now_and_then) == [(True,)]
    assert query(conn, "SELECT HASH_AGG(ID, NAME) FROM (SELECT * FROM T ORDER BY ID DESC)") == (
        query(conn, "SELECT HASH_AGG(ID, NAME) FROM T")
    )
    (one, two, distinct, nulls, empty) = query(
        conn,
        "SELECT (SELECT HASH_AGG(x) FROM VALUES (7) AS v(x)), HASH_AGG(x), "
        "HASH_AGG(DISTINCT x), (SELECT HASH_AGG(NULL)), (SELECT HASH_AGG(1) WHERE FALSE) "
        "FROM VALUES (7), (7) AS v(x)",
    )[0]
    assert two != one == distinct and nulls != 0 and empty == 0
    assert (2 * one - two) % 2**64 == 0  # a duplicate counts: the sum of the rows' hashes


def test_flatten_of_an_object_values_columns_and_forms_spark_lacks_r27_r39(conn: Any) -> None:
    """SPEC R27, R39: FLATTEN of a JSON object answered no row (its entries: KEY, VALUE);
    ``SELECT column1 FROM VALUES (...)`` failed (Snowflake's names, Spark's are col1);
    MATCH_RECOGNIZE, CONNECT BY, ASOF JOIN, PIVOT ... IN (ANY) and ``> ALL (subquery)``
    were SYNTAX_ERROR, as if not Snowflake: UNSUPPORTED, saying what to write instead."""
    assert query(
        conn,
        "SELECT f.key, f.value, f.index FROM TABLE(FLATTEN(input => "
        'PARSE_JSON(\'{"a": 1, "b": [2]}\'))) f ORDER BY f.key',
    ) == [("a", "1", None), ("b", "[2]", None)]
    assert query(
        conn, "SELECT f.index, f.value:x FROM TABLE(FLATTEN(PARSE_JSON('[{\"x\": 5}]'))) f"
    ) == [(0, "5")]
    assert query(conn, "SELECT column1, column2 FROM VALUES (1, 'a'), (2, 'b') ORDER BY 1") == [
        (1, "a"),
        (2, "b"),
    ]
    conn.sql("CREATE TABLE EV (ID INT, G VARCHAR, D DATE)")
    assert_refused(
        conn,
        [
            (
                "SELECT * FROM EV MATCH_RECOGNIZE (ORDER BY ID PATTERN (A) DEFINE A AS ID > 0)",
                "UNSUPPORTED",
            ),
            ("SELECT ID FROM EV START WITH ID = 1 CONNECT BY PRIOR ID = ID - 1", "UNSUPPORTED"),
            (
                "SELECT 1 FROM EV a ASOF JOIN EV b MATCH_CONDITION (a.D >= b.D) ON a.G = b.G",
                "UNSUPPORTED",
            ),
            ("SELECT * FROM EV PIVOT (COUNT(ID) FOR G IN (ANY ORDER BY G))", "UNSUPPORTED"),
            ("SELECT ID FROM EV WHERE ID > ALL (SELECT ID FROM EV)", "UNSUPPORTED"),
        ],
    )


def test_bigquery_digests_are_bytes_and_json_arrays_split_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's SHA256 / SHA512 answered hex text (BYTES in BigQuery), so
    ``TO_HEX(SHA256(x))``, the usual idiom, hexed the hex text (a wrong answer) and SHA1
    failed; BYTE_LENGTH, IS_INF and JSON_EXTRACT_ARRAY were unknown functions."""
    assert query(
        conn,
        "SELECT TO_HEX(SHA256('a')), TO_HEX(SHA1('a')), LENGTH(SHA512('a')), "
        "BYTE_LENGTH('héllo'), IS_INF(CAST('-inf' AS FLOAT64)), IS_INF(1.0), "
        "JSON_EXTRACT_ARRAY('[1, \"a\", {\"b\": 2}]'), JSON_EXTRACT_ARRAY('{\"a\": [1]}', '$.a')",
        dialect="bigquery",
    ) == [
        (
            "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
            "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8",
            64,
            6,
            True,
            False,
            ["1", '"a"', '{"b":2}'],
            ["1"],
        )
    ]


def test_random_uniform_and_normal_draw_as_in_snowflake_r27(conn: Any) -> None:
    """SPEC R27: ``UNIFORM(1, 10, RANDOM())`` — how Snowflake's users make test data —
    failed (Spark's UNIFORM takes a constant seed, and sqlglot made RANDOM() a DOUBLE): an
    integer in [1, 10] per row; a float where a bound is one; the same value on every row
    for a constant generator; NORMAL's draws have its mean and deviation; RANDOM() is a
    64-bit integer."""
    assert query(
        conn,
        "SELECT MIN(U), MAX(U), COUNT(DISTINCT U), MIN(F) >= -5 AND MAX(F) < 5.5, "
        "COUNT(DISTINCT F) > 100, ABS(AVG(N)) < 0.2 AND STDDEV(N) BETWEEN 0.8 AND 1.2, "
        "COUNT(DISTINCT C), MIN(R) < -POW(2, 40) AND MAX(R) > POW(2, 40), TYPEOF(MAX(U)) FROM ("
        "SELECT UNIFORM(1, 10, RANDOM()) U, UNIFORM(-5, 5.5, RANDOM()) F, NORMAL(0, 1, RANDOM()) N,"
        " UNIFORM(1, 1000, 42) C, RANDOM() R FROM TABLE(GENERATOR(ROWCOUNT => 3000)))",
    ) == [(1, 10, 10, True, True, True, 1, True, "INTEGER")]


def test_conditional_true_event_and_object_agg_answer_as_in_snowflake_r27(conn: Any) -> None:
    """SPEC R27: ``CONDITIONAL_TRUE_EVENT(cond) OVER (...)`` and ``OBJECT_AGG(k, v)`` were
    unknown functions: the running count of rows that met the condition, and an object of
    the rows' keys and values (those with a NULL left out); a key met twice is
    INVALID_VALUE, as Snowflake's "Duplicate field key"."""
    conn.sql(
        "CREATE TABLE EVENTS (ID INT, REGION VARCHAR, AMOUNT NUMBER(10, 2)); INSERT INTO "
        "EVENTS VALUES (1, 'EU', 9.99), (2, 'EU', 5), (3, 'US', 7.5), (4, NULL, 1)"
    )
    assert query(
        conn,
        "SELECT ID, CONDITIONAL_TRUE_EVENT(AMOUNT > 6) OVER (ORDER BY ID), "
        "CONDITIONAL_TRUE_EVENT(REGION = 'EU') OVER (PARTITION BY REGION ORDER BY ID) "
        "FROM EVENTS ORDER BY ID",
    ) == [(1, 1, 1), (2, 1, 2), (3, 2, 0), (4, 2, 0)]
    (aggregated,) = query(
        conn,
        "SELECT OBJECT_AGG(REGION, TOTAL) FROM (SELECT REGION, SUM(AMOUNT) TOTAL "
        "FROM EVENTS GROUP BY 1)",
    )
    assert {k: str(v) for k, v in aggregated[0].items()} == {"EU": "14.99", "US": "7.50"}
    with pytest.raises(RewindError) as twice:
        conn.sql("SELECT OBJECT_AGG(REGION, AMOUNT) FROM EVENTS")
    assert (twice.value.code, str(twice.value)) == (
        "INVALID_VALUE",
        "INVALID_VALUE: Duplicate field key 'EU'.",
    )


def test_bigquery_ieee_divide_and_array_reverse_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's ``IEEE_DIVIDE`` (a division that is +/-inf or NaN by zero, never
    an error) and ``ARRAY_REVERSE`` were unknown functions."""
    rows = conn.sql(
        "SELECT IEEE_DIVIDE(1, 0), IEEE_DIVIDE(-1, 0), IEEE_DIVIDE(0, 0), IEEE_DIVIDE(7, 2), "
        "IEEE_DIVIDE(NULL, 0), ARRAY_REVERSE([1, 2, 3])",
        dialect="bigquery",
    )[-1].rows
    (row,) = [tuple(r) for r in rows]
    assert row[:2] == (math.inf, -math.inf) and math.isnan(row[2])
    assert row[3:] == (3.5, None, [3, 2, 1])


def test_array_position_counts_from_zero_and_a_variant_value_is_the_value_r27(conn: Any) -> None:
    """SPEC R27: Snowflake's ``ARRAY_POSITION('b', tags)`` answered Spark's position, one
    more than Snowflake's (counted from 0), and 0 where Snowflake answers NULL;
    ``ARRAY_CONTAINS('a'::VARIANT, tags)`` (Snowflake requires the VARIANT) failed on a
    table's typed array, and ``ARRAYS_OVERLAP`` failed in Spark's parser."""
    conn.sql(
        "CREATE TABLE TAGGED (ID INT, TAGS ARRAY(VARCHAR)); "
        "INSERT INTO TAGGED SELECT 1, ARRAY_CONSTRUCT('a', 'b')"
    )
    assert query(
        conn,
        "SELECT ARRAY_POSITION('b'::VARIANT, TAGS), ARRAY_POSITION('a', TAGS), "
        "ARRAY_POSITION('q', TAGS), ARRAY_CONTAINS('a'::VARIANT, TAGS), "
        "ARRAY_CONTAINS('q'::VARIANT, TAGS), ARRAYS_OVERLAP(TAGS, ARRAY_CONSTRUCT('b')) "
        "FROM TAGGED",
    ) == [(1, 0, None, True, False, True)]


def test_time_slice_buckets_dates_and_timestamps_from_1970_r27(conn: Any) -> None:
    """SPEC R27: Snowflake's ``TIME_SLICE`` was an unknown function: slices of n units
    from 1970-01-01 (a week's from Monday 1969-12-29), a DATE's slice a DATE, a
    TIMESTAMP_NTZ's one; its documentation's example (4 months of 2019-02-28: 2019-01-01
    to 2019-05-01) and a date column's slices; a length of 0 is INVALID_VALUE."""
    conn.sql(
        "CREATE TABLE VISITS (DAY DATE, AT TIMESTAMP_NTZ); INSERT INTO VISITS VALUES "
        "('2026-03-04', '2026-01-01 10:17:00'), ('1969-06-01', '1969-12-31 23:59:59')"
    )
    rows = query(
        conn,
        "SELECT TIME_SLICE('2019-02-28'::DATE, 4, 'MONTH', 'START'), "
        "TIME_SLICE('2019-02-28'::DATE, 4, 'MONTH', 'END'), TIME_SLICE(DAY, 2, 'WEEK'), "
        "TIME_SLICE(DAY, 15, 'YEAR'), TIME_SLICE(AT, 15, 'MINUTE'), "
        "TIME_SLICE(AT, 15, 'MINUTE', 'END'), TIME_SLICE(AT, 1, 'DAY') FROM VISITS ORDER BY DAY",
    )
    day, at = date.fromisoformat, datetime.fromisoformat
    assert rows == [
        (
            day("2019-01-01"),
            day("2019-05-01"),
            day("1969-05-19"),
            day("1955-01-01"),
            at("1969-12-31 23:45:00"),
            at("1970-01-01 00:00:00"),
            at("1969-12-31 00:00:00"),
        ),
        (
            day("2019-01-01"),
            day("2019-05-01"),
            day("2026-02-23"),
            day("2015-01-01"),
            at("2026-01-01 10:15:00"),
            at("2026-01-01 10:30:00"),
            at("2026-01-01 00:00:00"),
        ),
    ]
    with pytest.raises(RewindError) as refused:
        conn.sql("SELECT TIME_SLICE(DAY, 0, 'DAY') FROM VISITS")
    assert refused.value.code == "INVALID_VALUE"


def test_cluster_by_and_partition_by_are_kept_and_shown_r27(conn: Any) -> None:
    """SPEC R27: ``CREATE TABLE ... CLUSTER BY (...)`` (Snowflake) and ``PARTITION BY
    DATE(ts) CLUSTER BY id`` (BigQuery's usual DDL) were refused ("Unsupported property"):
    both are layout hints that change no answer; the table is created with them, SHOW
    TABLES' cluster_by and INFORMATION_SCHEMA show them, a clone and LIKE keep the key,
    ALTER TABLE ... CLUSTER BY / DROP CLUSTERING KEY change it; a key on a column the
    table has not is "invalid identifier", and a schema takes none."""
    conn.sql(
        "CREATE TABLE LAID (ID INT, DAY DATE) CLUSTER BY (DAY, TO_DATE(ID)); "
        "CREATE TABLE LAID_LIKE LIKE LAID; CREATE TABLE LAID_CLONE CLONE LAID; "
        "CREATE TABLE LAID_AS CLUSTER BY (X) AS SELECT 1 AS X"
    )

    def keys() -> dict[str, str]:
        shown = conn.sql("SHOW TABLES LIKE 'LAID%'")[-1]
        at = shown.columns.index("cluster_by")
        return {row[1]: row[at] for row in shown.rows}

    assert keys() == {
        "LAID": "LINEAR(DAY, TO_DATE(ID))",
        "LAID_LIKE": "LINEAR(DAY, TO_DATE(ID))",
        "LAID_CLONE": "LINEAR(DAY, TO_DATE(ID))",
        "LAID_AS": "LINEAR(X)",
    }
    conn.sql("ALTER TABLE LAID CLUSTER BY (ID); ALTER TABLE LAID_AS DROP CLUSTERING KEY")
    assert query(
        conn,
        "SELECT TABLE_NAME, CLUSTERING_KEY FROM INFORMATION_SCHEMA.TABLES "
        "WHERE TABLE_NAME IN ('LAID', 'LAID_AS') ORDER BY 1",
    ) == [("LAID", "LINEAR(ID)"), ("LAID_AS", None)]
    conn.sql(
        "CREATE TABLE PUBLIC.EVENTS (id INT64, ts TIMESTAMP, amount NUMERIC) "
        "PARTITION BY DATE(ts) CLUSTER BY id OPTIONS (description = 'events')",
        dialect="bigquery",
    )
    assert query(
        conn,
        "SELECT column_name, is_partitioning_column, clustering_ordinal_position "
        "FROM PUBLIC.INFORMATION_SCHEMA.COLUMNS WHERE table_name = 'EVENTS'",
        dialect="bigquery",
    ) == [
        ("ID", "NO", 1),
        ("TS", "YES", None),
        ("AMOUNT", "NO", None),
    ]
    assert_refused(
        conn,
        [
            ("ALTER TABLE LAID CLUSTER BY (NOPE)", "SQL_COMPILATION_ERROR"),
            ("CREATE TABLE LAID_BAD (ID INT) CLUSTER BY (DAY)", "SQL_COMPILATION_ERROR"),
            ("CREATE SCHEMA LAID_SCHEMA CLUSTER BY (X)", "UNSUPPORTED"),
        ],
    )
    assert keys()["LAID"] == "LINEAR(ID)"  # the failed ALTER changed nothing


def test_bigquery_delete_and_update_need_a_where_clause_r27_r39(conn: Any) -> None:
    """SPEC R27, R39: BigQuery refuses ``DELETE FROM t`` and ``UPDATE t SET ...`` without
    WHERE (its guard against a forgotten clause: ``WHERE true`` says every row); Rewind's
    BigQuery dialect deleted every row. Refused, nothing changed; Snowflake's dialect
    runs them, as Snowflake does."""
    conn.sql("CREATE TABLE GUARDED (ID INT); INSERT INTO GUARDED VALUES (1), (2)")
    for statement in ["DELETE FROM GUARDED", "UPDATE GUARDED SET ID = 0", "DELETE GUARDED"]:
        with pytest.raises(RewindError) as refused:
            conn.sql(statement, dialect="bigquery")
        assert refused.value.code == "SYNTAX_ERROR", statement
        assert "must have a WHERE clause" in refused.value.message
    assert query(conn, "SELECT COUNT(*) FROM GUARDED") == [(2,)]
    conn.sql("UPDATE GUARDED SET ID = 0 WHERE true", dialect="bigquery")
    conn.sql("DELETE FROM GUARDED")  # Snowflake's dialect: every row
    assert query(conn, "SELECT COUNT(*) FROM GUARDED") == [(0,)]


def test_boolean_functions_of_numbers_answer_as_in_snowflake_r27(conn: Any) -> None:
    """SPEC R27: ``BOOLAND(1, 0)`` (and BOOLOR, BOOLXOR) failed in Spark's parser (sqlglot
    wrote ``1 AND 0``), BOOLNOT was no Spark function: a number is true when it rounds to
    something other than 0; a NULL is unknown, as in SQL's AND / OR."""
    assert query(
        conn,
        "SELECT BOOLAND(1, 0), BOOLAND(1, NULL), BOOLAND(0, NULL), BOOLOR(0, NULL), "
        "BOOLOR(2, NULL), BOOLXOR(1, 1), BOOLXOR(1, 0), BOOLNOT(0), BOOLNOT(0.3), "
        "BOOLAND(0.6, -2)",
    ) == [(False, None, False, None, True, False, True, True, True, True)]


def test_ranges_number_formats_insert_and_times_of_day_r15_r27(conn: Any) -> None:
    """SPEC R27: ``ARRAY_GENERATE_RANGE(0, 5, 2)`` was [0, 2] (sqlglot's SEQUENCE stopped a
    step early; Snowflake: [0, 2, 4]) and failed on an empty range; ``TO_CHAR(123.456,
    '999.99')`` printed ``###.##`` (Snowflake rounds: 123.46); ``INSERT(s, pos, len, x)``
    was "Unknown function STUFF". SPEC R15: ``TO_TIME('10:11:12')`` answered a timestamp
    of the machine's today (another clock than the session's); a time of day is refused."""
    assert query(
        conn,
        "SELECT ARRAY_GENERATE_RANGE(0, 5, 2), ARRAY_GENERATE_RANGE(5, 0, -2), "
        "ARRAY_GENERATE_RANGE(5, 2), ARRAY_GENERATE_RANGE(2, 5), TO_CHAR(123.456, '999.99'), "
        "TO_CHAR(1234.5, '9,999.9'), TO_CHAR(0.125, '0.99'), INSERT('abcdef', 2, 3, 'X')",
    ) == [([0, 2, 4], [5, 3, 1], [], [2, 3, 4], "123.46", "1,234.5", "0.13", "aXef")]
    times = ["SELECT TO_TIME('10:11:12')", "SELECT '10:00'::TIME", "SELECT CURRENT_TIME()"]
    assert_refused(conn, [(statement, "UNSUPPORTED") for statement in times])


def test_bigquery_generated_arrays_zones_and_json_arrays_r15_r27(conn: Any) -> None:
    """SPEC R27: ``GENERATE_ARRAY(5, 1)`` counted down (Spark's SEQUENCE took a step of -1;
    BigQuery's step is 1: []) and ``GENERATE_DATE_ARRAY`` of a range going the other way
    failed; ``TIMESTAMP(text, zone)`` failed, ``EXTRACT(DAYOFYEAR ...)`` failed,
    ``ARRAY_CONCAT_AGG`` and ``JSON_VALUE_ARRAY`` were no functions ("J_S_O_N_VALUE_ARRAY").
    SPEC R15: ``CURRENT_DATE('America/Los_Angeles')`` was the UTC day, and
    ``CURRENT_DATETIME()`` no function: both read the session's clock in their zone."""
    (row,) = conn.sql(
        "SELECT GENERATE_ARRAY(5, 1), GENERATE_ARRAY(5, 1, -2), "
        "GENERATE_DATE_ARRAY('2026-01-05', '2026-01-01'), "
        "GENERATE_DATE_ARRAY('2026-01-05', '2026-01-01', INTERVAL -2 DAY), "
        "TIMESTAMP('2026-01-01 10:00:00', 'America/New_York'), "
        "EXTRACT(DAYOFYEAR FROM DATE '2026-02-01'), "
        "(SELECT ARRAY_CONCAT_AGG(x) FROM UNNEST([STRUCT([1, 2] AS x), STRUCT([3] AS x)])), "
        "JSON_VALUE_ARRAY('{\"a\": [1, 2]}', '$.a'), CURRENT_DATE('America/Los_Angeles'), "
        "CURRENT_DATE(), CURRENT_DATETIME('Asia/Tokyo')",
        dialect="bigquery",
    )[-1].rows
    day = date.fromisoformat
    assert tuple(row) == (
        [],
        [5, 3, 1],
        [],
        [day("2026-01-05"), day("2026-01-03"), day("2026-01-01")],
        datetime(2026, 1, 1, 15, tzinfo=UTC),
        32,
        [1, 2, 3],
        ["1", "2"],
        day("2025-12-31"),
        day("2026-01-01"),
        datetime(2026, 1, 1, 9),
    )


def test_kurtosis_and_skew_are_the_sample_statistics_r27(conn: Any) -> None:
    """SPEC R27: ``KURTOSIS`` answered Spark's population excess kurtosis (-0.0965 for
    Snowflake's documented example, 1, 3, 10, 1, 3, whose KURTOSIS is 3.6137: the sample
    statistic, Excel's KURT), ``SKEW`` Spark's population skewness; ``BOOLXOR_AGG`` was
    an unknown function. Over a window they are refused (the count would be the window's)."""
    conn.sql(
        "CREATE TABLE SPREAD (V INT, B BOOLEAN); INSERT INTO SPREAD VALUES "
        "(1, TRUE), (3, FALSE), (10, NULL), (1, FALSE), (3, FALSE)"
    )
    ((kurtosis, skew, one_true, none_true),) = query(
        conn,
        "SELECT KURTOSIS(V), SKEW(V), BOOLXOR_AGG(B), BOOLXOR_AGG(V > 2) FROM SPREAD",
    )
    assert (round(kurtosis, 4), round(skew, 4), one_true, none_true) == (
        3.6137,
        1.8414,
        True,
        False,
    )
    with pytest.raises(RewindError) as refused:
        conn.sql("SELECT KURTOSIS(V) OVER () FROM SPREAD")
    assert refused.value.code == "UNSUPPORTED"


def test_bigquery_any_value_having_percentile_cont_and_top_count_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's ``ANY_VALUE(x HAVING MAX y)`` and ``PERCENTILE_CONT(x, p) OVER
    (...)`` failed in Spark's parser and arity check; ``APPROX_TOP_COUNT``'s structs named
    their value ``item`` (Spark's), not ``value``."""
    conn.sql(
        "CREATE TABLE SCORES (G VARCHAR, Y INT); INSERT INTO SCORES VALUES "
        "('a', 1), ('a', 2), ('b', 3), ('b', 4), ('a', 0)"
    )
    (row,) = conn.sql(
        "SELECT ANY_VALUE(G HAVING MAX Y), ANY_VALUE(G HAVING MIN Y), "
        "APPROX_TOP_COUNT(G, 1) FROM SCORES",
        dialect="bigquery",
    )[-1].rows
    assert tuple(row) == ("b", "a", [{"value": "a", "count": 3}])
    assert query(
        conn,
        "SELECT Y, PERCENTILE_CONT(Y, 0.5) OVER (PARTITION BY G) FROM SCORES ORDER BY Y",
        dialect="bigquery",
    ) == [(0, 1.0), (1, 1.0), (2, 1.0), (3, 3.5), (4, 3.5)]


def test_a_not_null_column_beside_a_timestamp_ntz_keeps_the_table_readable_r40(
    conn: Any, home: Path
) -> None:
    """SPEC R40 (and R4: Rewind's own tables): a table with a NOT NULL column and a
    TIMESTAMP_NTZ (DATETIME) one got delta-rs's protocol with the ``timestampNtz`` feature
    alone, and delta-spark then refused every read of it ("features enabled in metadata but
    not listed in protocol: invariants") — created so, or made so by ALTER TABLE ... ADD
    COLUMN of a DATETIME or ALTER COLUMN ... SET NOT NULL. Each now lists ``invariants``
    and reads, its rows whole."""
    conn.sql(
        "CREATE TABLE MADE (ID INT NOT NULL, AT DATETIME); "
        "INSERT INTO MADE VALUES (1, '2026-01-01 10:00'); "
        "CREATE TABLE WIDENED (ID INT NOT NULL); INSERT INTO WIDENED VALUES (2); "
        "ALTER TABLE WIDENED ADD COLUMN AT DATETIME; "
        "CREATE TABLE TIGHTENED (ID INT, AT DATETIME); INSERT INTO TIGHTENED VALUES (3, NULL); "
        "ALTER TABLE TIGHTENED ALTER COLUMN ID SET NOT NULL"
    )
    for name, expected in [("MADE", 1), ("WIDENED", 2), ("TIGHTENED", 3)]:
        assert query(conn, f"SELECT ID FROM {name}") == [(expected,)], name
        protocol = DeltaTable(str(table_root(home, name))).protocol()
        assert "invariants" in (protocol.writer_features or []), (name, protocol)
    conn.sql("INSERT INTO WIDENED VALUES (4, '2026-01-02 00:00')")
    assert query(conn, "SELECT ID, AT FROM WIDENED ORDER BY ID") == [
        (2, None),
        (4, datetime(2026, 1, 2)),
    ]


def test_primary_unique_and_foreign_keys_are_accepted_as_in_snowflake_r27(conn: Any) -> None:
    """SPEC R27: ``CREATE TABLE t (id INT PRIMARY KEY, ...)`` — Snowflake's usual DDL — was
    refused. As in Snowflake, PRIMARY KEY, UNIQUE and FOREIGN KEY / REFERENCES are declared,
    not enforced, but a primary key's columns are NOT NULL (that Snowflake enforces); a key
    of a column the table has not is "invalid identifier"."""
    conn.sql(
        "CREATE TABLE KEYED (ID INT PRIMARY KEY, V VARCHAR UNIQUE, W INT REFERENCES T (ID)); "
        "CREATE TABLE PAIRED (A INT, B INT, C VARCHAR, CONSTRAINT PK_PAIRED PRIMARY KEY (A, B), "
        "UNIQUE (C), FOREIGN KEY (A) REFERENCES KEYED (ID))"
    )
    conn.sql("INSERT INTO KEYED VALUES (1, 'a', 1), (1, 'a', 2)")  # not enforced
    assert query(conn, "SELECT COUNT(*) FROM KEYED") == [(2,)]
    described = {row[0]: row[3] for row in conn.sql("DESCRIBE TABLE PAIRED")[-1].rows}
    assert described == {"A": "N", "B": "N", "C": "Y"}  # null?
    assert_refused(
        conn,
        [
            ("INSERT INTO KEYED VALUES (NULL, 'b', 3)", "INVALID_VALUE"),
            ("CREATE TABLE BADKEY (A INT, PRIMARY KEY (Z))", "SQL_COMPILATION_ERROR"),
        ],
    )


def test_update_and_merge_set_a_struct_column_by_position_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's ``UPDATE t SET addr = STRUCT('Lyon', 69000)`` failed (Spark
    refused a struct whose field names were not the column's; an INSERT's took them by
    position), and so did a MERGE's; ``SET addr.city = ...`` said column CITY did not exist:
    it is refused by name. ``SET t.id = ...`` names the target's own column."""
    conn.sql(
        "CREATE TABLE PLACES (ID INT, ADDR OBJECT(CITY VARCHAR, ZIP INT), TAGS ARRAY(VARCHAR)); "
        "INSERT INTO PLACES SELECT 1, NULL, NULL UNION ALL SELECT 2, NULL, NULL"
    )
    conn.sql(
        "UPDATE PLACES SET addr = STRUCT('Lyon', 69000), tags = ['x'] WHERE id = 1; "
        "MERGE PLACES t USING (SELECT 2 AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET addr = STRUCT('Nice', 6000), t.tags = ARRAY<STRING>[]",
        dialect="bigquery",
    )
    assert query(conn, "SELECT ID, ADDR, TAGS FROM PLACES ORDER BY ID") == [
        (1, {"CITY": "Lyon", "ZIP": 69000}, ["x"]),
        (2, {"CITY": "Nice", "ZIP": 6000}, []),
    ]
    with pytest.raises(RewindError) as refused:
        conn.sql("UPDATE PLACES SET addr.city = 'Paris' WHERE id = 1", dialect="bigquery")
    assert refused.value.code == "UNSUPPORTED"
    assert "set the whole column" in refused.value.message


def test_a_table_whose_protocol_lacks_invariants_says_how_to_repair_it_r39_r40(
    conn: Any, home: Path
) -> None:
    """SPEC R39, R40: a table written before b024c6e (a NOT NULL and a DATETIME column,
    delta-rs's protocol without ``invariants``) answered Spark's EXECUTION_ERROR on every
    read; it is STORAGE_ERROR saying its data is whole and how to write the protocol it
    needs — and COMMENT ON COLUMN (a change of its columns, no Spark read) does."""
    conn.sql(
        "CREATE TABLE OLD (ID INT NOT NULL, AT DATETIME); "
        "INSERT INTO OLD VALUES (1, '2026-01-01 10:00')"
    )
    first = table_root(home, "OLD") / "_delta_log" / f"{0:020d}.json"
    actions = [json.loads(line) for line in first.read_text().splitlines()]
    for action in actions:  # as delta-rs wrote it, and Rewind before the fix
        if "protocol" in action:
            action["protocol"]["writerFeatures"] = ["timestampNtz"]
    first.write_text("".join(json.dumps(a) + "\n" for a in actions))
    with pytest.raises(RewindError) as short:
        conn.sql("SELECT * FROM OLD")
    assert short.value.code == "STORAGE_ERROR"
    assert "COMMENT ON COLUMN" in short.value.message
    conn.sql("COMMENT ON COLUMN OLD.ID IS 'the key'")
    assert query(conn, "SELECT ID, AT FROM OLD") == [(1, datetime(2026, 1, 1, 10))]


def test_a_json_string_cast_to_text_is_its_value_r27(conn: Any) -> None:
    """SPEC R27: ``PARSE_JSON('"text"')::STRING`` kept the JSON quotes (``"text"``; in
    Snowflake a VARIANT string cast to VARCHAR is its value); other JSON is its text.
    ``ARRAY_SIZE`` of JSON text failed (Spark's SIZE takes arrays): its array's length,
    NULL for other JSON."""
    assert query(
        conn,
        "SELECT PARSE_JSON('\"text\"')::STRING, PARSE_JSON('{\"a\": 1}')::VARCHAR, "
        "CAST(PARSE_JSON('12') AS VARCHAR), TRY_PARSE_JSON('\"q\"')::STRING",
    ) == [("text", '{"a":1}', "12", "q")]
    assert query(
        conn,
        "SELECT ARRAY_SIZE(PARSE_JSON('[1, 2, 3]')), ARRAY_SIZE(PARSE_JSON('{\"a\": [1, 2]}'):a), "
        "ARRAY_SIZE(PARSE_JSON('{\"a\": 1}'))",
    ) == [(3, 2, None)]


def test_a_variant_is_subscripted_and_serialized_as_in_snowflake_r27(conn: Any) -> None:
    """SPEC R27: ``PARSE_JSON(t)['a']`` (Snowflake's subscript of a VARIANT, the same as
    ``:a``) and ``TO_JSON(PARSE_JSON(t))`` failed to compile (Spark subscripted the JSON
    text); ``TO_TIMESTAMP_NTZ(epoch)`` answered a TIMESTAMP with a zone."""
    assert query(
        conn,
        "SELECT PARSE_JSON('{\"a\": {\"b c\": 2}}')['a']['b c'], PARSE_JSON('[5, 6]')[1], "
        "PARSE_JSON('{\"a\": [5, {\"x\": 7}]}'):a[1]['x'], PARSE_JSON('{\"a\": 1}')['z'], "
        "PARSE_JSON('[5]')[9]",
    ) == [("2", "6", "7", None, None)]
    assert query(
        conn,
        "SELECT TO_JSON(PARSE_JSON(' { \"a\" : [1, 2] } ')), TO_JSON(PARSE_JSON(' 12 ')), "
        'TO_JSON(PARSE_JSON(\'{"a": {"b": 1}}\'):a)',
    ) == [('{"a":[1,2]}', "12", '{"b":1}')]
    assert query(
        conn,
        "SELECT TO_TIMESTAMP_NTZ(0), TO_TIMESTAMP_NTZ(1700000000000, 3), "
        "TYPEOF(TO_TIMESTAMP_NTZ(0))",
    ) == [(datetime(1970, 1, 1), datetime(2023, 11, 14, 22, 13, 20), "TIMESTAMP_NTZ")]
    # TIMESTAMP_NTZ_FROM_PARTS answered an instant; nanoseconds were taken for a time zone
    assert query(
        conn,
        "SELECT TIMESTAMP_NTZ_FROM_PARTS(2026, 1, 2, 3, 4, 5), "
        "TIMESTAMP_FROM_PARTS(2026, 1, 2, 3, 4, 5, 500000000), "
        "TIMESTAMP_LTZ_FROM_PARTS(2026, 1, 2, 3, 4, 5)",
    ) == [
        (
            datetime(2026, 1, 2, 3, 4, 5),
            datetime(2026, 1, 2, 3, 4, 5, 500000),
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        )
    ]
    # A part past its usual range carries into the next, as Snowflake documents it (the
    # N-th second of a day); they failed, EXECUTION_ERROR DATETIME_FIELD_OUT_OF_BOUNDS.
    assert query(
        conn,
        "SELECT TIMESTAMP_FROM_PARTS(2026, 1, 1, 25, 0, 0), "
        "TIMESTAMP_NTZ_FROM_PARTS(2026, 13, 1, 0, 0, 3600), "
        "TIMESTAMP_FROM_PARTS(2026, 3, 0, 0, 100, 0), "
        "TIMESTAMP_LTZ_FROM_PARTS(2026, 2, 30, 0, 0, 0), "
        "TIMESTAMP_FROM_PARTS(NULL, 1, 1, 0, 0, 0)",
    ) == [
        (
            datetime(2026, 1, 2, 1),
            datetime(2027, 1, 1, 1),
            datetime(2026, 2, 28, 1, 40),
            datetime(2026, 3, 2, tzinfo=UTC),
            None,
        )
    ]


def test_bigquery_datetime_constructors_answer_a_datetime_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's ``DATETIME(y, m, d, h, mi, s)``, ``DATETIME('...')`` and
    ``DATETIME(a_date)`` answered a TIMESTAMP (an instant with a zone), not a DATETIME."""
    assert query(
        conn,
        "SELECT DATETIME(2026, 1, 2, 3, 4, 5), DATETIME('2026-01-02 03:04:05'), "
        "DATETIME(DATE '2026-01-02')",
        dialect="bigquery",
    ) == [(datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2))]
    # BigQuery refuses a part past its range: INVALID_VALUE in its words, not Spark's
    # EXECUTION_ERROR "[DATETIME_FIELD_OUT_OF_BOUNDS.WITH_SUGGESTION] ... SQLSTATE: 22023"
    for bad, words in [
        (
            "DATETIME(2026, 1, 1, 25, 0, 0)",
            "Invalid value for HourOfDay (valid values 0 - 23): 25.",
        ),
        ("DATE(2026, 2, 30)", "Invalid date 'FEBRUARY 30'."),
    ]:
        with pytest.raises(RewindError) as refused:
            conn.sql(f"SELECT {bad}", dialect="bigquery")
        assert (refused.value.code, refused.value.message) == ("INVALID_VALUE", words)


def test_bigquery_weeks_and_time_zones_answer_as_in_bigquery_r27(conn: Any) -> None:
    """SPEC R27 (rewind.sql.bigquery_answers): ``FORMAT_TIMESTAMP`` and ``TIMESTAMP_TRUNC``
    dropped their time zone (the UTC wall clock), ``EXTRACT(WEEK ...)`` answered the ISO
    week (1 for Saturday 3 January 2026; BigQuery's weeks start on Sunday: 0),
    ``DATE_TRUNC(d, ISOWEEK)`` was NULL, ``DATE_DIFF(.., MONTH)`` counted whole months
    (BigQuery's counts boundaries); ``DATE_TRUNC(d, WEEK)``, ``DATE(ts, zone)``,
    ``DATETIME(ts, zone)`` and ``DATETIME_TRUNC`` failed."""
    conn.sql(
        "CREATE TABLE BQ (ID INT, D DATE, TS TIMESTAMP_TZ, DT TIMESTAMP_NTZ); INSERT INTO BQ "
        "VALUES (1, '2026-01-03', '2026-01-04 02:00:00 +00:00', '2026-12-02 10:11:12'), "
        "(2, '2026-11-29', '2026-12-01 23:30:00 +00:00', '2026-11-29 00:00:00')"
    )
    ny = "'America/New_York'"
    answers = conn.sql(
        "SELECT DATE_TRUNC(D, WEEK), DATE_TRUNC(D, WEEK(MONDAY)), DATE_TRUNC(D, ISOWEEK), "
        "DATE_TRUNC(D, ISOYEAR), EXTRACT(WEEK FROM D), EXTRACT(WEEK(MONDAY) FROM D), "
        "EXTRACT(ISOWEEK FROM D), EXTRACT(ISOYEAR FROM D), EXTRACT(DAYOFWEEK FROM D), "
        f"TIMESTAMP_TRUNC(TS, DAY, {ny}), TIMESTAMP_TRUNC(TS, WEEK), "
        f"TIMESTAMP_TRUNC(TS, WEEK, {ny}), DATE(TS, {ny}), DATETIME(TS, {ny}), "
        f"FORMAT_TIMESTAMP('%F %H:%M', TS, {ny}), EXTRACT(DATE FROM TS), "
        "DATETIME_TRUNC(DT, WEEK), DATETIME_TRUNC(DT, HOUR) FROM D.PUBLIC.BQ ORDER BY ID",
        dialect="bigquery",
    )[-1].rows
    utc = UTC
    assert [tuple(row) for row in answers] == [
        (
            date(2025, 12, 28),
            date(2025, 12, 29),
            date(2025, 12, 29),
            date(2025, 12, 29),
            0,
            0,
            1,
            2026,
            7,
            datetime(2026, 1, 3, 5, tzinfo=utc),
            datetime(2026, 1, 4, tzinfo=utc),
            datetime(2025, 12, 28, 5, tzinfo=utc),
            date(2026, 1, 3),
            datetime(2026, 1, 3, 21),
            "2026-01-03 21:00",
            date(2026, 1, 4),
            datetime(2026, 11, 29),
            datetime(2026, 12, 2, 10),
        ),
        (
            date(2026, 11, 29),
            date(2026, 11, 23),
            date(2026, 11, 23),
            date(2025, 12, 29),
            48,
            47,
            48,
            2026,
            1,
            datetime(2026, 12, 1, 5, tzinfo=utc),
            datetime(2026, 11, 29, tzinfo=utc),
            datetime(2026, 11, 29, 5, tzinfo=utc),
            date(2026, 12, 1),
            datetime(2026, 12, 1, 18, 30),
            "2026-12-01 18:30",
            date(2026, 12, 1),
            datetime(2026, 11, 29),
            datetime(2026, 11, 29),
        ),
    ]
    # DATE_DIFF and DATETIME_DIFF count unit boundaries (they counted whole months, 0, and
    # refused weeks); TIMESTAMP_DIFF whole units, as before.
    assert query(
        conn,
        "SELECT DATE_DIFF(DATE '2026-02-01', DATE '2026-01-31', MONTH), "
        "DATE_DIFF(DATE '2027-01-01', DATE '2026-12-31', YEAR), "
        "DATE_DIFF(DATE '2026-11-29', DATE '2026-11-28', WEEK), "
        "DATE_DIFF(DATE '2026-11-29', DATE '2026-11-28', ISOWEEK), "
        "DATE_DIFF(DATE '2026-01-01', DATE '2025-12-28', ISOYEAR), "
        "DATE_DIFF(DATE '2026-01-31', DATE '2026-02-01', MONTH), "
        "DATETIME_DIFF(DATETIME '2026-01-02 00:00:00', DATETIME '2026-01-01 23:00:00', DAY), "
        "TIMESTAMP_DIFF(TIMESTAMP '2026-01-01 01:59:00', TIMESTAMP '2026-01-01 01:00:00', HOUR)",
        dialect="bigquery",
    ) == [(1, 1, 1, 0, 1, -1, 1, 0)]


def test_text_parsed_with_a_format_fails_or_is_null_as_in_each_product_r26_r27(
    conn: Any,
) -> None:
    """Snowflake's ``TRY_TO_DATE`` / ``TRY_TO_TIMESTAMP`` with a format failed on text the
    format misses (sqlglot wrote TO_DATE / TO_TIMESTAMP); they answer NULL. BigQuery's
    ``SAFE.`` prefix was an unknown function (PARSE_DATE, PARSE_TIMESTAMP, PARSE_DATETIME,
    PARSE_JSON, CAST answer NULL; any other is refused by name); ``PARSE_TIMESTAMP``
    dropped its zone (a wall clock in New York read as UTC) and refused ``%Ez``;
    ``PARSE_DATETIME`` and ``APPROX_QUANTILES`` were no functions; ``PARSE_JSON`` took any
    text; ``INITCAP`` without delimiters was refused. The parses' failures are
    INVALID_VALUE in Snowflake's words (Spark's named its own ``try_to_date``). And
    BigQuery's UNNEST in FROM and JOIN answers as BigQuery's (below)."""
    conn.sql(
        "CREATE TABLE TXT (ID INT, S VARCHAR); "
        "INSERT INTO TXT VALUES (1, '2024-01-05'), (2, 'bad'), (3, NULL)"
    )
    snowflake = query(
        conn,
        "SELECT ID, TRY_TO_DATE(S, 'YYYY-MM-DD'), TRY_TO_TIMESTAMP(S, 'YYYY-MM-DD'), "
        "TRY_TO_DATE('05/01/2024', 'MM/DD/YYYY'), TRY_TO_TIMESTAMP('bad', 'MM/DD/YYYY HH24') "
        "FROM TXT ORDER BY ID",
    )
    day, utc = date(2024, 5, 1), datetime(2024, 1, 5, tzinfo=UTC)
    assert snowflake == [
        (1, date(2024, 1, 5), utc, day, None),
        (2, None, None, day, None),
        (3, None, None, day, None),
    ]
    with pytest.raises(RewindError) as failed:
        conn.sql("SELECT TO_DATE(S, 'DD/MM/YYYY') FROM TXT WHERE ID = 2")
    assert (failed.value.code, failed.value.message) == (
        "INVALID_VALUE",
        "Can't parse 'bad' as a date or time with its format.",
    )

    def bq(sql: str) -> list[tuple[Any, ...]]:
        return query(conn, sql, dialect="bigquery")

    assert bq(
        "SELECT ID, SAFE.PARSE_DATE('%Y-%m-%d', S), SAFE.PARSE_TIMESTAMP('%F', S), "
        "SAFE.PARSE_DATETIME('%Y-%m-%d', S), SAFE.PARSE_JSON(S), SAFE.CAST(S AS INT64) "
        "FROM D.PUBLIC.TXT ORDER BY ID"
    ) == [
        (1, date(2024, 1, 5), utc, datetime(2024, 1, 5), None, None),
        (2, None, None, None, None, None),
        (3, None, None, None, None, None),
    ]
    assert bq(
        "SELECT PARSE_TIMESTAMP('%Y-%m-%d %H:%M:%S', '2024-01-05 10:30:00', "
        "'America/New_York'), PARSE_TIMESTAMP('%F %T%Ez', '2024-01-05 10:30:00+02:00'), "
        "PARSE_TIMESTAMP('%F %T%z', '2024-01-05 10:30:00+0200', 'America/New_York'), "
        "PARSE_DATETIME('%Y-%m-%d %H:%M', '2024-01-05 10:30'), "
        "PARSE_JSON('{\"a\": 1}'), SAFE.PARSE_JSON('nope'), "
        "INITCAP('hello wORLD-foo'), "
        "FORMAT_TIMESTAMP('%F %T%Ez', TIMESTAMP '2024-01-05 10:30:00+00')"
    ) == [
        (
            datetime(2024, 1, 5, 15, 30, tzinfo=UTC),
            datetime(2024, 1, 5, 8, 30, tzinfo=UTC),
            datetime(2024, 1, 5, 8, 30, tzinfo=UTC),
            datetime(2024, 1, 5, 10, 30),
            '{"a": 1}',
            None,
            "Hello World-Foo",
            "2024-01-05 10:30:00+00:00",
        )
    ]
    quantiles = bq("SELECT APPROX_QUANTILES(ID, 2), APPROX_QUANTILES(ID, 3) FROM D.PUBLIC.TXT")
    assert quantiles == [([1, 2, 3], [1, 1, 2, 3])]
    # UNNEST: an array of structs is a column per field (it was one struct column), a
    # JOIN's condition holds (it was dropped: every element joined every row), a LEFT
    # JOIN keeps the rows whose array is empty (they were dropped).
    assert bq("SELECT * FROM UNNEST([STRUCT(1 AS a, 'x' AS b), STRUCT(2 AS a, 'y' AS b)])") == [
        (1, "x"),
        (2, "y"),
    ]
    assert bq(
        "SELECT t.ID, u.a FROM D.PUBLIC.TXT t JOIN UNNEST([STRUCT(1 AS a), STRUCT(2 AS a)]) "
        "AS u ON u.a = t.ID ORDER BY 1"
    ) == [(1, 1), (2, 2)]
    assert bq(
        "SELECT t.ID, x FROM D.PUBLIC.TXT t LEFT JOIN UNNEST(IF(t.ID > 2, [t.ID * 10], [])) "
        "AS x ORDER BY 1"
    ) == [(1, None), (2, None), (3, 30)]
    for sql, code in [
        ("SELECT SAFE.SUBSTR(S, 0, 2) FROM D.PUBLIC.TXT", "UNSUPPORTED"),
        ("SELECT x FROM D.PUBLIC.TXT t LEFT JOIN UNNEST([1]) AS x ON x = t.ID", "UNSUPPORTED"),
        ("SELECT PARSE_JSON('nope')", "INVALID_VALUE"),
        ("SELECT PARSE_DATE('%Y-%m-%d', S) FROM D.PUBLIC.TXT", "INVALID_VALUE"),
        (
            "SELECT FORMAT_TIMESTAMP('%F %T%Ez', TIMESTAMP '2024-01-05 10:30:00+00', 'Asia/Tokyo')",
            "UNSUPPORTED",
        ),
    ]:
        with pytest.raises(RewindError) as refused:
            conn.sql(sql, dialect="bigquery")
        assert refused.value.code == code, sql


def test_an_unnamed_column_is_headed_as_written_and_ctas_takes_its_column_list_r20_r26(
    conn: Any,
) -> None:
    """Snowflake heads an unnamed result column with its expression as written,
    upper-cased: Rewind showed sqlglot's reading of it (``IFF(AMT IS NULL, 0, AMT)`` for
    ``ZEROIFNULL(AMT)``, ``POWER(2, 2)`` for ``SQUARE(2)``), and CTAS named such a column
    as Spark does (``(IF((AMT IS NULL), 0, AMT))``), so the name the user saw did not find
    it. ``CREATE TABLE t (a, b) AS SELECT ...`` ignored its names (now the columns')."""
    conn.sql("CREATE TABLE AMTS (ID INT, AMT NUMBER(10, 2)); INSERT INTO AMTS VALUES (1, NULL)")
    result = conn.sql(
        "SELECT ID, zeroifnull(amt), SQUARE(2), DIV0(AMT, 0), COUNT( * ) OVER () FROM AMTS"
    )[-1]
    assert result.columns == [
        "ID",
        "ZEROIFNULL(AMT)",
        "SQUARE(2)",
        "DIV0(AMT, 0)",
        "COUNT( * ) OVER ()",
    ]
    conn.sql("CREATE TABLE FILLED AS SELECT ID, ZEROIFNULL(AMT) FROM AMTS")
    assert query(conn, 'SELECT "ZEROIFNULL(AMT)" FROM FILLED') == [(Decimal("0.00"),)]
    conn.sql('CREATE TABLE RENAMED (A, "b") AS SELECT ID, AMT + 1 FROM AMTS')
    assert conn.sql("SELECT * FROM RENAMED")[-1].columns == ["A", "b"]
    assert conn.sql("SELECT ID + 1, 'x' FROM AMTS", dialect="bigquery")[-1].columns == [
        "f0_",
        "f1_",
    ]
    assert_refused(conn, [("CREATE TABLE SHORT (A) AS SELECT ID, AMT FROM AMTS", "SYNTAX_ERROR")])
    assert "SHORT" not in [row[1] for row in query(conn, "SHOW TABLES")]


def test_create_table_as_select_with_column_definitions_stores_the_declared_types_r26_r28(
    conn: Any,
) -> None:
    """SPEC R26, R28, R40: ``CREATE TABLE t (a NUMBER(5, 2), b VARCHAR(2) NOT NULL ...) AS
    SELECT ...`` (Snowflake's CTAS with column definitions) was refused. The query's values
    are stored as the declared types, as an INSERT stores them (2.6 into an integer column
    rounds); the constraints, comments and defaults are the table's own from then on; a
    value that breaks them fails the statement and leaves no table."""
    conn.sql(
        "CREATE TABLE SRC (ID INT, NAME VARCHAR, AMT FLOAT); "
        "INSERT INTO SRC VALUES (1, 'a', 2.6), (2, 'bb', NULL)"
    )
    conn.sql(
        "CREATE TABLE TYPED (X INT COMMENT 'the id', Y VARCHAR(2) NOT NULL, "
        "Z NUMBER(5, 2) DEFAULT 7, W INT) AS SELECT ID, NAME, AMT, AMT FROM SRC"
    )
    assert query(conn, "SELECT * FROM TYPED ORDER BY X") == [
        (1, "a", Decimal("2.60"), 3),
        (2, "bb", None, None),
    ]
    described = {row[0]: row for row in query(conn, "DESCRIBE TABLE TYPED")}
    assert [described[c][1] for c in "XYZW"] == [
        "NUMBER(38,0)",
        "VARCHAR(2)",
        "NUMBER(5,2)",
        "NUMBER(38,0)",
    ]
    assert (described["X"][9], described["Y"][3], described["Z"][4]) == ("the id", "N", "7")
    conn.sql("INSERT INTO TYPED (X, Y) VALUES (3, 'c')")  # Z takes its default
    assert query(conn, "SELECT Z FROM TYPED WHERE X = 3") == [(Decimal("7.00"),)]
    assert_refused(
        conn,
        [
            ("INSERT INTO TYPED (X, Y) VALUES (4, NULL)", "INVALID_VALUE"),
            ("INSERT INTO TYPED (X, Y) VALUES (4, 'abc')", "INVALID_VALUE"),
            ("CREATE TABLE LONG (X VARCHAR(1)) AS SELECT NAME FROM SRC", "INVALID_VALUE"),
            ("CREATE TABLE NULLS (X INT NOT NULL) AS SELECT AMT FROM SRC", "INVALID_VALUE"),
            ("CREATE TABLE DAYS (X INT, Y DATE) AS SELECT ID, NAME FROM SRC", "INVALID_VALUE"),
            ("CREATE TABLE FEW (X INT) AS SELECT ID, NAME FROM SRC", "SYNTAX_ERROR"),
            ("CREATE TABLE IDS (X INT AUTOINCREMENT) AS SELECT ID FROM SRC", "UNSUPPORTED"),
        ],
    )
    names = {row[1] for row in query(conn, "SHOW TABLES")}
    assert not names & {"LONG", "NULLS", "DAYS", "FEW", "IDS"}


def test_typed_array_struct_and_map_columns_are_created_and_written_r20_r27(conn: Any) -> None:
    """``CREATE TABLE t (tags ARRAY<STRING>, s STRUCT<x INT64, ...>)`` (BigQuery's typed
    arrays and structs) and Snowflake's structured ``ARRAY(VARCHAR)`` / ``OBJECT(...)`` /
    ``MAP(...)`` were refused (UNSUPPORTED); they are Delta's array, struct and map columns
    now, written, read, updated and described in each dialect's names; a struct's field
    names fold as columns' (``s.x`` finds ``x``). A VARIANT inside one stays refused."""
    bq = "bigquery"
    conn.sql(
        "CREATE TABLE D.PUBLIC.NEST (id INT64, tags ARRAY<STRING>, "
        "s STRUCT<x INT64, y ARRAY<STRUCT<z NUMERIC>>>); INSERT INTO D.PUBLIC.NEST VALUES "
        "(1, ['a', 'b'], STRUCT(5, [STRUCT(1.5)])), (2, [], NULL); "
        "UPDATE D.PUBLIC.NEST SET tags = ARRAY_CONCAT(tags, ['c']) WHERE id = 1",
        dialect=bq,
    )
    assert query(
        conn,
        "SELECT id, ARRAY_LENGTH(tags), s.x, s.y[OFFSET(0)].z FROM D.PUBLIC.NEST ORDER BY id",
        dialect=bq,
    ) == [(1, 3, 5, Decimal("1.5")), (2, 0, None, None)]
    assert query(
        conn,
        "SELECT column_name, data_type FROM D.PUBLIC.INFORMATION_SCHEMA.COLUMNS "
        "WHERE table_name = 'NEST'",
        dialect=bq,
    ) == [
        ("ID", "INT64"),
        ("TAGS", "ARRAY<STRING>"),
        ("S", "STRUCT<X INT64, Y ARRAY<STRUCT<Z NUMERIC(38, 9)>>>"),
    ]
    conn.sql("CREATE TABLE SN (A ARRAY(VARCHAR), O OBJECT(city VARCHAR, n NUMBER(10,2)))")
    conn.sql(
        "INSERT INTO SN SELECT ARRAY_CONSTRUCT('x'), OBJECT_CONSTRUCT('CITY', 'Paris', 'N', 1.5)"
    )
    assert query(conn, "SELECT A[0], O:CITY FROM SN") == [("x", "Paris")]
    described = [row[:2] for row in query(conn, "DESC TABLE SN")]
    assert described == [("A", "ARRAY(VARCHAR)"), ("O", "OBJECT(CITY VARCHAR, N NUMBER(10,2))")]
    assert_refused(conn, [("CREATE TABLE V (V ARRAY(VARIANT))", "UNSUPPORTED")])


def test_objects_and_json_are_stored_into_structured_columns_by_key_r27_r39(conn: Any) -> None:
    """SPEC R27, R39: ``OBJECT_CONSTRUCT('y', 'c', 'x', 3)`` into an ``OBJECT(x INT, y
    VARCHAR)`` column was cast by position ('c' into x: refused, or a wrong row where the
    types agree); PARSE_JSON text into an OBJECT, ARRAY or MAP column and an object into
    a MAP column were refused; ``a:x`` and ``a['x']`` on the declared (upper-cased)
    field X failed. A JSON array into an OBJECT column fails the write (it filled the
    fields with NULL); ``DECIMAL(10, 11)`` and a column of an empty object were
    INTERNAL_ERROR."""
    conn.sql(
        "CREATE TABLE SHAPED (A OBJECT(x INT, y VARCHAR, z ARRAY(INT)), M MAP(VARCHAR, INT), "
        "L ARRAY(INT))"
    )
    conn.sql(
        "INSERT INTO SHAPED SELECT OBJECT_CONSTRUCT('y', 'c', 'x', 3), OBJECT_CONSTRUCT('k', 1), "
        "PARSE_JSON('[1, 2]')"
    )
    conn.sql(
        'INSERT INTO SHAPED SELECT PARSE_JSON(\'{"x": 4, "Y": "d", "z": [1, 2]}\'), '
        "PARSE_JSON('{\"k\": 5}'), NULL"
    )
    conn.sql("INSERT INTO SHAPED SELECT NULL, OBJECT_CONSTRUCT(), ARRAY_CONSTRUCT()")
    assert query(
        conn, "SELECT A:x, A:y, A:z[1], A['x'], M, L FROM SHAPED ORDER BY 1 NULLS LAST"
    ) == [
        (3, "c", None, 3, {"k": 1}, [1, 2]),
        (4, "d", 2, 4, {"k": 5}, None),
        (None, None, None, None, {}, []),
    ]
    assert_refused(
        conn,
        [
            ("INSERT INTO SHAPED (A) SELECT PARSE_JSON('[1]')", "INVALID_VALUE"),
            ("CREATE TABLE BAD (N DECIMAL(10, 11))", "INVALID_VALUE"),
            ("CREATE TABLE BAD (N NUMBER(39, 0))", "INVALID_VALUE"),
            ("CREATE TABLE BAD AS SELECT OBJECT_CONSTRUCT() AS E", "UNSUPPORTED"),
        ],
    )
    assert query(conn, "SELECT COUNT(*) FROM SHAPED") == [(3,)]


def test_add_and_drop_column_if_exists_and_bigquery_column_descriptions_r20_r27(
    conn: Any,
) -> None:
    """SPEC R20, R27: ``ADD COLUMN IF NOT EXISTS`` of a column there was OBJECT_ALREADY_EXISTS
    and ``DROP COLUMN IF EXISTS`` of one not there OBJECT_NOT_FOUND (both do nothing in
    Snowflake and BigQuery); BigQuery's ``ALTER COLUMN c SET OPTIONS (description = ...)``
    was refused (it is the column's comment)."""
    conn.sql("CREATE TABLE COLS (ID INT, NAME VARCHAR)")
    conn.sql("ALTER TABLE COLS ADD COLUMN IF NOT EXISTS NAME VARCHAR")
    conn.sql("ALTER TABLE COLS ADD COLUMN IF NOT EXISTS EXTRA INT")
    conn.sql("ALTER TABLE COLS DROP COLUMN IF EXISTS NOPE, EXTRA")
    database = query(conn, "SELECT CURRENT_DATABASE()")[0][0]
    table = f"{database}.PUBLIC.COLS"
    conn.sql(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS id INT64", dialect="bigquery")
    conn.sql(
        f"ALTER TABLE {table} ALTER COLUMN name SET OPTIONS (description = 'who')",
        dialect="bigquery",
    )
    described = query(conn, "DESCRIBE TABLE COLS")
    assert [(row[0], row[9]) for row in described] == [("ID", None), ("NAME", "who")]
    assert_refused(
        conn,
        [
            ("ALTER TABLE COLS DROP COLUMN NOPE", "OBJECT_NOT_FOUND"),
            ("ALTER TABLE COLS ADD COLUMN NAME VARCHAR", "OBJECT_ALREADY_EXISTS"),
        ],
    )
    assert_refused(
        conn,
        [
            (
                f"ALTER TABLE {table} ALTER COLUMN name SET OPTIONS (rounding_mode = 'x')",
                "UNSUPPORTED",
            )
        ],
        dialect="bigquery",
    )


def test_identity_columns_number_new_rows_and_refuse_what_cannot_be_one_r40(conn: Any) -> None:
    """SPEC R40: AUTOINCREMENT / IDENTITY were refused; rows inserted without the column
    get start, start + step, ... (a value given is kept; UPDATE and DELETE leave the
    numbers alone); a text column, a step of 0 and an identity added to a table are
    refused by name. (Another engine's inserts: test_other_writers.py.)"""
    conn.sql("CREATE TABLE SEQ (ID INT AUTOINCREMENT START 1 INCREMENT 1, NAME VARCHAR)")
    conn.sql("INSERT INTO SEQ (NAME) VALUES ('a'), ('b'); INSERT INTO SEQ (NAME) SELECT 'c'")
    conn.sql("DELETE FROM SEQ WHERE ID = 2; INSERT INTO SEQ (NAME) VALUES ('d')")
    assert query(conn, "SELECT ID, NAME FROM SEQ ORDER BY ID") == [(1, "a"), (3, "c"), (4, "d")]
    assert_refused(
        conn,
        [
            ("CREATE TABLE BAD (ID VARCHAR AUTOINCREMENT)", "INVALID_VALUE"),
            ("CREATE TABLE BAD (ID INT IDENTITY(1, 0))", "INVALID_VALUE"),
            ("ALTER TABLE SEQ ADD COLUMN N INT AUTOINCREMENT", "UNSUPPORTED"),
            ("CREATE TABLE BAD (ID INT IDENTITY DEFAULT 1)", "UNSUPPORTED"),
        ],
    )


def test_columns_whose_names_differ_only_in_case_are_two_columns_r4_r20(
    conn: Any, home: Path
) -> None:
    """SPEC R4: Snowflake's ``"v"`` and ``V`` are two columns; Delta's field names are
    unique whatever their case, and delta-rs refused the table (INTERNAL_ERROR, found by
    the fuzz test). The second is stored under another physical name; each is written,
    read, cloned and added by its own name."""
    conn.sql(
        'CREATE TABLE "t" ("v" FLOAT, ID VARCHAR, V INT); INSERT INTO "t" VALUES (1.5, \'a\', 2); '
        'UPDATE "t" SET V = 3 WHERE "v" = 1.5; ALTER TABLE "t" ADD COLUMN "id" INT; '
        'INSERT INTO "t" VALUES (2.5, \'b\', 4, 9); CREATE TABLE C CLONE "t"'
    )
    assert query(conn, 'SELECT "v", ID, V, "id" FROM C ORDER BY 1') == [
        (1.5, "a", 3, None),
        (2.5, "b", 4, 9),
    ]
    physical = [f.name for f in DeltaTable(str(table_root(home, "t"))).schema().fields]
    assert physical == ["v", "ID", "V__2", "id__2"]


def test_a_date_minus_a_date_is_a_number_of_days_r26(conn: Any) -> None:
    """Snowflake's ``d1 - d2`` of two dates is the days between them; Spark's was an
    interval (``30 days, 0:00:00``). A date minus a number stays a date; YEAROFWEEK, no
    Spark function, is the ISO year."""
    conn.sql("CREATE TABLE DD (A DATE, B DATE); INSERT INTO DD VALUES ('2026-12-01', NULL)")
    assert query(
        conn,
        "SELECT '2026-12-01'::date - '2026-11-01'::date, A - TO_DATE('2026-11-10'), "
        "(A) - A, A - B, A - 1, CURRENT_DATE - A, YEAROFWEEK('2026-01-01'::date) FROM DD",
    ) == [(30, 21, 0, None, date(2026, 11, 30), (T0.date() - date(2026, 12, 1)).days, 2026)]


def test_date_trunc_of_a_date_or_wall_clock_column_keeps_its_type_r26(conn: Any) -> None:
    """``DATE_TRUNC('month', day)`` of a DATE column answered a TIMESTAMP (``2026-11-01
    00:00:00 UTC``; Spark's DATE_TRUNC has no other type), and a CTAS of it made a
    TIMESTAMP_TZ column; Snowflake's keeps the argument's type: DATE, TIMESTAMP_NTZ. A
    TIMESTAMP_TZ stays one; GROUP BY and ORDER BY of the same call agree with the SELECT."""
    conn.sql(
        "CREATE TABLE W (DAY DATE, AT TIMESTAMP_NTZ, TZ TIMESTAMP_TZ);"
        "INSERT INTO W VALUES ('2026-11-17', '2026-11-17 10:11:12', '2026-11-17 10:11:12 +00:00')"
    )
    trunc = (
        "SELECT DATE_TRUNC('month', DAY) AS M, DATE_TRUNC('hour', w.AT) AS H, "
        "DATE_TRUNC('day', TZ) AS D, count(*) AS N FROM W AS w "
        "GROUP BY DATE_TRUNC('month', DAY), DATE_TRUNC('hour', w.AT), DATE_TRUNC('day', TZ) "
        "ORDER BY DATE_TRUNC('month', DAY)"
    )
    assert query(conn, trunc) == [
        (
            date(2026, 11, 1),
            datetime(2026, 11, 17, 10),
            datetime(2026, 11, 17, tzinfo=UTC),
            1,
        )
    ]
    conn.sql(f"CREATE TABLE WT AS {trunc}")
    types = [row[:2] for row in query(conn, "DESC TABLE WT")]
    assert types == [
        ("M", "DATE"),
        ("H", "TIMESTAMP_NTZ"),
        ("D", "TIMESTAMP_TZ"),
        ("N", "NUMBER(38,0)"),
    ]
    # DATEADD of hours to a DATE is a TIMESTAMP_NTZ (it answered an instant, 03:00 UTC);
    # DATE_TRUNC of a cast to TIMESTAMP_NTZ keeps it too; days added to a DATE stay one.
    assert query(
        conn,
        "SELECT DATEADD(hour, 3, DAY), DATEADD(minute, 90, '2020-01-01'::DATE), "
        "DATEADD(day, 1, DAY), DATE_TRUNC('hour', '2020-01-01 10:30:00'::TIMESTAMP_NTZ) FROM W",
    ) == [
        (
            datetime(2026, 11, 17, 3),
            datetime(2020, 1, 1, 1, 30),
            date(2026, 11, 18),
            datetime(2020, 1, 1, 10),
        )
    ]


def test_to_char_formats_dates_and_times_as_snowflake_does_r26(conn: Any) -> None:
    """``TO_CHAR(column, 'YYYY-MM-DD')`` of a date or time column failed (Spark's TO_CHAR
    took the Snowflake format for its own: ``YYYY`` the week-based year, ``DD`` the day
    of the year); sqlglot's pattern of ``FF3`` failed too and ``TZH:TZM`` was shown as
    ``%:UTC``. A number format stays a number format."""
    conn.sql(
        "CREATE TABLE E (AT TIMESTAMP_NTZ, DAY DATE, N NUMBER(10,2));"
        "INSERT INTO E VALUES ('2026-01-02 15:04:05.123456', '2026-12-31', 1234.5)"
    )
    answers = query(
        conn,
        "SELECT TO_CHAR(DAY, 'YYYY-MM-DD'), TO_VARCHAR(DAY, 'DD/MM/YYYY'), "
        "TO_CHAR(AT, 'yyyy-mm-dd hh24:mi:ss.ff3'), TO_CHAR(AT, 'DY, DD MON YYYY HH12 AM'), "
        "TO_CHAR(AT, 'HH24:MI:SS.FF6'), TO_CHAR(N, '9,999.99'), "
        "TO_CHAR('2026-01-02 15:04'::timestamp_tz, 'YYYY-MM-DD HH24:MI TZH:TZM') FROM E",
    )
    assert answers == [
        (
            "2026-12-31",
            "31/12/2026",
            "2026-01-02 15:04:05.123",
            "Fri, 02 Jan 2026 03 PM",
            "15:04:05.123456",
            "1,234.50",
            "2026-01-02 15:04 +00:00",
        )
    ]


def test_dateadd_keeps_what_it_adds_to_a_date_or_a_time_r16_r26(conn: Any) -> None:
    """DATEADD of months, quarters or years to a timestamp gave a date (sqlglot's
    ADD_MONTHS: ``AT(TIMESTAMP => DATEADD(month, -1, CURRENT_TIMESTAMP()))`` named a
    midnight), and of days or weeks to a timestamp column a date too (DATE_ADD): each keeps
    its value's type and time now, a month's end clamped as in Snowflake; a date stays a
    date."""
    conn.sql(
        "CREATE TABLE E (AT TIMESTAMP_NTZ, DAY DATE);"
        "INSERT INTO E VALUES ('2026-01-31 10:30:00', '2026-01-31')"
    )
    answers = query(
        conn,
        "SELECT DATEADD(month, 1, AT), DATEADD(quarter, -1, AT), DATEADD(year, 1, AT), "
        "DATEADD(day, -1, AT), DATEADD(week, 2, AT), DATEADD(hour, 2, AT), "
        "DATEADD(month, 1, DAY), DATEADD(day, 1, DAY), DATEADD(month, -2, CURRENT_TIMESTAMP()), "
        "DATEADD(day, 1, '2026-02-28') FROM E",
    )
    assert answers == [
        (
            datetime(2026, 2, 28, 10, 30),
            datetime(2025, 10, 31, 10, 30),
            datetime(2027, 1, 31, 10, 30),
            datetime(2026, 1, 30, 10, 30),
            datetime(2026, 2, 14, 10, 30),
            datetime(2026, 1, 31, 12, 30),
            date(2026, 2, 28),
            date(2026, 2, 1),
            datetime(2025, 11, 1, tzinfo=UTC),
            date(2026, 3, 1),
        )
    ]


def test_errors_speak_to_the_user_not_to_sparks_operator(conn: Any, home: Path) -> None:
    # SPEC R39: Spark's advice to set "spark.sql.ansi.enabled" is not the user's to take;
    # INSERT ALL was "Statements of kind MULTITABLEINSERTS". A value that is no number or
    # date, too large for its column, or a division by zero is the statement's data at
    # fault: INVALID_VALUE in Snowflake's words (it was EXECUTION_ERROR in Spark's, which
    # named its own types: "cannot be cast to DOUBLE"), nothing written (R28).
    seed(conn)
    version = DeltaTable(str(table_root(home, "T"))).version()
    for sql, message in {
        "SELECT ID / 0 FROM T": "Division by zero.",
        "UPDATE T SET AMOUNT = 'abc'": "Numeric value 'abc' is not recognized.",
        "INSERT INTO T (ID, DAY) VALUES (9, '2026-13-01')": "Date '2026-13-01' is not recognized.",
        "INSERT INTO T (ID, OK) VALUES (9, 'maybe')": "Boolean value 'maybe' is not recognized.",
        "INSERT INTO T (ID, AMOUNT) VALUES (9, 1e20)": (
            "Numeric value '100000000000000000000' is out of range for NUMBER(10,2)."
        ),
    }.items():
        with pytest.raises(RewindError) as error:
            conn.sql(sql)
        assert (sql, error.value.code, error.value.message) == (sql, "INVALID_VALUE", message)
    assert DeltaTable(str(table_root(home, "T"))).version() == version
    with pytest.raises(RewindError) as error:  # a SYNTAX_ERROR at Spark's '$'
        conn.sql("SELECT SYSTEM$CLUSTERING_INFORMATION('T')")
    assert error.value.code == "UNSUPPORTED"
    assert "SYSTEM$CLUSTERING_INFORMATION is not supported" in error.value.message
    with pytest.raises(RewindError) as error:
        conn.sql("INSERT ALL INTO T (ID) VALUES (7) INTO T (ID) VALUES (8) SELECT 1")
    assert (error.value.code, "multi-table inserts" in error.value.message) == (
        "UNSUPPORTED",
        True,
    )
    assert query(conn, "SELECT COUNT(*) FROM T") == [(3,)]


def test_truncate_empties_the_table_but_keeps_its_history(conn: Any, home: Path) -> None:
    # SPEC R26, R13: TRUNCATE makes a version without rows; the files stay in time travel.
    insert = seed(conn)
    root = table_root(home, "T")
    files = live_files(root)

    result = conn.sql("TRUNCATE TABLE T")[0]

    assert result.rows == [["Statement executed successfully."]]
    assert DeltaTable(str(root)).version() == 2  # CREATE, INSERT, TRUNCATE
    assert query(conn, "SELECT COUNT(*) FROM T") == [(0,)]
    assert live_files(root) == {}
    assert all((root / path).is_file() for path in files)
    assert query(conn, f"SELECT COUNT(*) FROM T AT(STATEMENT => '{insert}')") == [(3,)]
    assert conn.sql("TRUNCATE TABLE IF EXISTS NOPE")[0].rows  # a missing table is no error


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE T SET ID = 2.6",
        "MERGE INTO T USING (SELECT 1 AS K) S ON T.ID = S.K WHEN MATCHED THEN UPDATE SET ID = 2.6",
    ],
    ids=["update", "merge"],
)
def test_update_and_merge_round_fractions_into_integer_columns(conn: Any, statement: str) -> None:
    # SPEC R26: the same conversion as INSERT (see test_insert_coerces_values_...).
    conn.sql("INSERT INTO T (ID) VALUES (1)")
    conn.sql(statement)

    assert query(conn, "SELECT ID FROM T") == [(3,)]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO T (ID, DAY) VALUES (1, CURRENT_DATE())",
        "INSERT INTO T (ID, DAY) SELECT 1, DATEADD(day, 0, CURRENT_TIMESTAMP())",
        "INSERT INTO T (ID) VALUES (1); UPDATE T SET DAY = CURRENT_DATE() WHERE ID = 1",
        "MERGE INTO T USING (SELECT 1 AS K) S ON T.ID = S.K "
        "WHEN NOT MATCHED THEN INSERT (ID, DAY) VALUES (S.K, CURRENT_DATE())",
    ],
    ids=["insert-values", "insert-select", "update", "merge"],
)
def test_clock_functions_in_dml_read_the_rewind_clock(conn: Any, statement: str) -> None:
    # SPEC R15: CURRENT_DATE / CURRENT_TIMESTAMP are the session's clock, not the wall's.
    conn.sql(statement)

    assert query(conn, "SELECT ID, DAY FROM T") == [(1, T0.date())]


def test_session_functions_name_the_rewind_session(conn: Any) -> None:
    # Snowflake's CURRENT_USER / ROLE / DATABASE / SCHEMA name the session's user, role and
    # containers (Spark's named the server's OS user and its 'default' database).
    session = "SELECT CURRENT_USER(), CURRENT_ROLE(), CURRENT_DATABASE(), CURRENT_SCHEMA()"
    assert query(conn, session) == [("ADMIN", "ACCOUNTADMIN", "D", "PUBLIC")]
    conn.sql("INSERT INTO T (ID, NAME) VALUES (1, CURRENT_USER())")
    assert query(conn, "SELECT NAME FROM T") == [("ADMIN",)]


# -- MERGE (SPEC R26) --------------------------------------------------------------------------
def test_merge_updates_deletes_and_inserts_in_one_version(conn: Any, home: Path) -> None:
    # SPEC R26, R14: one MERGE is one Delta version, with Snowflake's three counts.
    seed(conn)
    conn.sql(
        "CREATE TABLE CHANGES (ID INT, NAME VARCHAR, OP VARCHAR);"
        "INSERT INTO CHANGES VALUES (1, 'A', 'upd'), (2, NULL, 'del'), (4, 'd', 'ins')"
    )
    root = table_root(home, "T")
    version = DeltaTable(str(root)).version()

    result = conn.sql(
        "MERGE INTO T USING CHANGES C ON T.ID = C.ID "
        "WHEN MATCHED AND C.OP = 'del' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET NAME = C.NAME, AMOUNT = T.AMOUNT + 1 "
        "WHEN NOT MATCHED THEN INSERT (ID, NAME) VALUES (C.ID, C.NAME)"
    )[0]

    assert result.columns == [
        "number of rows inserted",
        "number of rows updated",
        "number of rows deleted",
    ]
    assert result.rows == [[1, 1, 1]]
    assert query(conn, "SELECT ID, NAME, AMOUNT FROM T ORDER BY ID") == [
        (1, "A", Decimal("11.00")),
        (3, "c", Decimal("30.00")),
        (4, "d", None),
    ]
    assert DeltaTable(str(root)).version() == version + 1


# -- CTAS (SPEC R20) ----------------------------------------------------------------------------
def test_ctas_keeps_column_names_types_and_rows(conn: Any, home: Path) -> None:
    # SPEC R20: names follow Snowflake's case rules (R4); CURRENT_TIMESTAMP is the
    # Rewind clock (R15).
    conn.sql(
        "INSERT INTO T VALUES (1, 'a', 1.5, 0.5, TRUE, '2025-03-01'),"
        "(2, 'b', NULL, NULL, FALSE, NULL)"
    )

    created = conn.sql(
        'CREATE TABLE SUMMARY AS SELECT ID, UPPER(NAME) AS "Upper", AMOUNT * 2 AS DOUBLED, '
        "SCORE, OK, DAY, CURRENT_TIMESTAMP() AS LOADED_AT FROM T WHERE ID = 1"
    )[0]
    result = conn.sql("SELECT * FROM SUMMARY")[0]

    assert created.rows == [["Table SUMMARY successfully created."]]
    assert result.columns == ["ID", "Upper", "DOUBLED", "SCORE", "OK", "DAY", "LOADED_AT"]
    assert result.rows == [[1, "A", Decimal("3.00"), 0.5, True, date(2025, 3, 1), T0]]
    summary = DeltaTable(str(table_root(home, "SUMMARY")))
    schema = pa.schema(summary.schema().to_arrow())
    types = {field.name: field.type for field in schema}
    assert types["ID"] == pa.int64()
    assert pa.types.is_string(types["Upper"]) or pa.types.is_large_string(types["Upper"])
    assert pa.types.is_decimal(types["DOUBLED"]) and types["DOUBLED"].scale == 2
    assert (types["SCORE"], types["OK"], types["DAY"]) == (pa.float64(), pa.bool_(), pa.date32())
    assert types["LOADED_AT"] == pa.timestamp("us", tz="UTC")
    # One version holds the rows; there is nothing before the creating statement (R17).
    assert summary.version() == 0
    assert query(conn, f"SELECT ID FROM SUMMARY AT(STATEMENT => '{created.query_id}')") == [(1,)]
    with pytest.raises(RewindError) as raised:
        conn.sql(f"SELECT * FROM SUMMARY BEFORE(STATEMENT => '{created.query_id}')")
    assert raised.value.code == "TIME_TRAVEL_UNAVAILABLE"


def test_a_timestamp_ntz_column_holds_wall_clock_times_r26(conn: Any) -> None:
    """Snowflake's TIMESTAMP_NTZ, declared in CREATE TABLE or added later, is a wall-clock
    time (Delta's timestamp_ntz), shown without a zone; it was TIMESTAMP_TZ, its values
    taken for UTC instants. A clone and CTAS keep it."""
    conn.sql(
        "CREATE TABLE W (AT TIMESTAMP_NTZ, TZ TIMESTAMP_TZ); "
        "INSERT INTO W VALUES ('2026-01-01 10:00:00', '2026-01-01 10:00:00 +02:00'); "
        "ALTER TABLE W ADD COLUMN LATER TIMESTAMP_NTZ; "
        "UPDATE W SET LATER = AT + INTERVAL '1 HOUR'; "
        "CREATE TABLE WC CLONE W; CREATE TABLE WX AS SELECT * FROM W"
    )
    wall, instant = datetime(2026, 1, 1, 10, 0), datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
    for table in ("W", "WC", "WX"):
        assert query(conn, f"SELECT * FROM {table}") == [(wall, instant, wall.replace(hour=11))]
        types = [r[1] for r in query(conn, f"DESC TABLE {table}")]
        assert types == ["TIMESTAMP_NTZ", "TIMESTAMP_TZ", "TIMESTAMP_NTZ"]
    # DATETIME is a wall-clock time in both dialects (Snowflake's TIMESTAMP_NTZ, BigQuery's
    # civil time); it was taken for a UTC instant. BigQuery's TIMESTAMP is an instant.
    conn.sql("CREATE TABLE SD (AT DATETIME)")
    conn.sql(
        "CREATE TABLE D.PUBLIC.BQ (AT DATETIME, TS TIMESTAMP);"
        "INSERT INTO D.PUBLIC.BQ VALUES "
        "(DATETIME '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:00:00+02')",
        dialect="bigquery",
    )
    assert query(conn, "SELECT * FROM BQ") == [(wall, instant)]
    assert [r[1] for r in query(conn, "DESC TABLE BQ")] == ["TIMESTAMP_NTZ", "TIMESTAMP_TZ"]
    assert [r[1] for r in query(conn, "DESC TABLE SD")] == ["TIMESTAMP_NTZ"]


def test_create_table_like_copies_the_columns_and_no_rows(conn: Any, home: Path) -> None:
    """``CREATE TABLE T2 LIKE T`` (Snowflake's and BigQuery's spelling; an INTERNAL_ERROR
    before issue 13): T's columns and types, no rows, T untouched."""
    seed(conn)
    created = conn.sql("CREATE TABLE T2 LIKE T")[0]
    assert created.rows == [["Table T2 successfully created."]]
    copy = conn.sql("SELECT * FROM T2")[0]
    assert (copy.columns, copy.rows) == (conn.sql("SELECT * FROM T")[0].columns, [])
    original = pa.schema(DeltaTable(str(table_root(home, "T"))).schema().to_arrow())
    like = pa.schema(DeltaTable(str(table_root(home, "T2"))).schema().to_arrow())
    assert [(f.name, f.type) for f in like] == [(f.name, f.type) for f in original]
    assert query(conn, "SELECT COUNT(*) FROM T") == [(3,)]


# -- copy-on-write (SPEC R13) ----------------------------------------------------------------------
NAMES = {1: "a", 2: "b", 3: "c", 4: "d"}


@pytest.mark.parametrize(
    ("change", "row_delta"),
    [
        ("UPDATE T SET NAME = 'changed' WHERE ID = {id}", 0),
        ("DELETE FROM T WHERE ID = {id}", -1),
        (
            "MERGE INTO T USING (SELECT {id} AS K) S ON T.ID = S.K "
            "WHEN MATCHED THEN UPDATE SET NAME = 'changed'",
            0,
        ),
    ],
    ids=["update", "delete", "merge"],
)
def test_changing_one_row_replaces_its_whole_file_and_keeps_the_old_one(
    conn: Any, connect: Callable[..., Any], home: Path, change: str, row_delta: int
) -> None:
    # SPEC R13: the unit of retention is a data file.
    values = ", ".join(f"({i}, '{n}')" for i, n in NAMES.items())
    conn.sql(f"INSERT INTO T (ID, NAME) VALUES {values}")
    root = table_root(home, "T")
    version = DeltaTable(str(root)).version()
    before = live_files(root)
    path, rows = max(before.items(), key=lambda item: item[1])
    assert rows >= 2, "the test needs a file holding several rows"
    ids = pq.read_table(root / path).column("ID").to_pylist()

    later = open_at(connect, hours=1)
    statement = later.sql(change.format(id=ids[0]))[0].query_id
    after = live_files(root)

    assert DeltaTable(str(root)).version() == version + 1
    assert set(before) - set(after) == {path}
    (added,) = set(after) - set(before)
    assert after[added] == rows + row_delta
    assert live_files(root, version) == before
    assert pq.read_table(root / path).column("ID").to_pylist() == ids  # untouched on disk
    assert query(later, "SELECT COUNT(*) FROM T") == [(len(NAMES) + row_delta,)]
    assert query(
        later, f"SELECT NAME FROM T BEFORE(STATEMENT => '{statement}') WHERE ID = {ids[0]}"
    ) == [(NAMES[ids[0]],)]


FUNCTION_REFUSALS = [
    ("CREATE FUNCTION F(X INT) RETURNS INT AS '(SELECT MAX(ID) FROM T)'", "UNSUPPORTED"),
    ("CREATE FUNCTION F(X INT) RETURNS INT AS 'X + ID'", "INVALID_VALUE"),
    ("CREATE FUNCTION F(X INT) RETURNS INT LANGUAGE PYTHON AS 'X'", "UNSUPPORTED"),
    ("CREATE FUNCTION F(X INT) RETURNS TABLE (A INT) AS 'X'", "UNSUPPORTED"),
    ("CREATE FUNCTION F(X INT) RETURNS INT AS 'X +'", "INVALID_VALUE"),
    ("CREATE FUNCTION NOPE.F(X INT) RETURNS INT AS 'X'", "OBJECT_NOT_FOUND"),
    # INT is NUMBER(38,0): TWICE(INT, INT) would match TWICE(NUMBER(10,2), INT)
    ("DROP FUNCTION TWICE(VARCHAR, INT)", "OBJECT_NOT_FOUND"),
    ("CREATE FUNCTION TWICE(Y INT) RETURNS INT AS 'Y'", "OBJECT_ALREADY_EXISTS"),
    ("CREATE FUNCTION LOOP(X INT) RETURNS INT AS 'LOOP(X)'; SELECT LOOP(1)", "INVALID_VALUE"),
]


def test_sql_functions_are_inlined_wherever_they_are_called(
    conn: Any, connect: Callable[..., Any]
) -> None:
    """Snowflake's SQL UDFs: one expression over the arguments, overloaded by arity, kept in
    the catalog (a later session calls them), usable in every statement kind."""
    seed(conn)
    conn.sql(
        "CREATE FUNCTION TWICE(X NUMBER(10,2)) RETURNS NUMBER(10,2) AS 'X * 2';"
        "CREATE FUNCTION TWICE(X NUMBER(10,2), N INT) RETURNS NUMBER(10,2) AS $$ X * N $$;"
        "CREATE FUNCTION IF NOT EXISTS TWICE(X INT) RETURNS INT AS 'X'"
    )
    later = open_at(connect, hours=1)
    assert query(later, "SELECT TWICE(AMOUNT), D.PUBLIC.TWICE(AMOUNT, 3) FROM T WHERE ID = 1") == [
        (Decimal("20.00"), Decimal("30.00"))
    ]
    later.sql("UPDATE T SET AMOUNT = TWICE(AMOUNT) WHERE TWICE(AMOUNT) > 40")
    assert query(later, "SELECT ID, AMOUNT FROM T ORDER BY ID") == [
        (1, Decimal("10.00")),
        (2, Decimal("20.00")),
        (3, Decimal("60.00")),
    ]
    assert_refused(later, FUNCTION_REFUSALS)
    later.sql("CREATE OR REPLACE FUNCTION TWICE(X NUMBER(10,2)) RETURNS NUMBER(10,2) AS 'X + X'")
    assert query(later, "SELECT TWICE(1.5)") == [(Decimal("3.00"),)]
    later.sql("DROP FUNCTION TWICE(NUMBER); DROP FUNCTION IF EXISTS TWICE(NUMBER)")
    with pytest.raises(RewindError) as error:
        later.sql("SELECT TWICE(1)")
    assert error.value.code == "SQL_COMPILATION_ERROR"


def test_unnamed_result_columns_carry_the_products_headers(conn: Any) -> None:
    """Snowflake heads an expression with its text, BigQuery with f0_, f1_ (Spark would say
    ``count(1)``); names and aliases are kept."""
    seed(conn)
    sql = "SELECT COUNT(*), ID + 1, ID, MAX(NAME) AS TOP FROM D.PUBLIC.T GROUP BY ID"
    assert conn.sql(sql)[0].columns == ["COUNT(*)", "ID + 1", "ID", "TOP"]
    assert conn.sql(sql, dialect="bigquery")[0].columns == ["f0_", "f1_", "ID", "TOP"]


def test_column_defaults_fill_what_a_statement_leaves_out_in_both_dialects_r40(
    conn: Any, home: Path
) -> None:
    """SPEC R15, R26, R40: ``DEFAULT expr`` was refused by CREATE TABLE and DEFAULT as a
    value was NULL. A default is Delta's (a field's CURRENT_DEFAULT, the writer feature
    allowColumnDefaults): an INSERT that leaves a column out, a VALUES row's DEFAULT,
    UPDATE and MERGE's ``SET c = DEFAULT`` and MERGE's INSERT give it, computed as each row
    is written (CURRENT_TIMESTAMP the session's clock, a UUID one per row); ALTER COLUMN
    SET / DROP DEFAULT change what later rows get; ADD COLUMN ... DEFAULT gives the rows
    already there the default too, as in Snowflake; LIKE and CLONE keep the defaults;
    DESCRIBE, SHOW COLUMNS and INFORMATION_SCHEMA show them."""
    conn.sql(
        "CREATE TABLE DEF (ID INT, LABEL VARCHAR DEFAULT 'none', AT TIMESTAMP_NTZ DEFAULT "
        "CURRENT_TIMESTAMP(), N INT NOT NULL DEFAULT 5, U VARCHAR DEFAULT UUID_STRING())"
    )
    protocol = next(
        json.loads(line)["protocol"]
        for line in (table_root(home, "DEF") / "_delta_log" / f"{0:020d}.json")
        .read_text()
        .splitlines()
        if "protocol" in json.loads(line)
    )
    assert {"allowColumnDefaults", "invariants"} <= set(protocol["writerFeatures"])
    conn.sql("INSERT INTO DEF (ID) VALUES (1), (2)")
    conn.sql("INSERT INTO DEF VALUES (3, DEFAULT, DEFAULT, DEFAULT, 'given')")
    conn.sql("INSERT INTO DEF (N, ID, LABEL) SELECT 9, 4, 'x'")
    now = datetime.fromisoformat(clock()).replace(tzinfo=None)
    assert query(conn, "SELECT ID, LABEL, AT, N, LENGTH(U) FROM DEF ORDER BY ID") == [
        (1, "none", now, 5, 36),
        (2, "none", now, 5, 36),
        (3, "none", now, 5, 5),
        (4, "x", now, 9, 36),
    ]
    assert query(conn, "SELECT COUNT(DISTINCT U) FROM DEF") == [(4,)]
    conn.sql("UPDATE DEF SET LABEL = DEFAULT, N = DEFAULT WHERE ID = 4")
    conn.sql(
        "MERGE INTO DEF USING (SELECT 1 AS ID UNION ALL SELECT 5) S ON DEF.ID = S.ID "
        "WHEN MATCHED THEN UPDATE SET LABEL = 'merged' "
        "WHEN NOT MATCHED THEN INSERT (ID, N) VALUES (S.ID, DEFAULT)"
    )
    conn.sql("ALTER TABLE DEF ALTER COLUMN LABEL SET DEFAULT 'later'")
    conn.sql("INSERT INTO DEF (ID) VALUES (6)")
    conn.sql("ALTER TABLE DEF ALTER COLUMN LABEL DROP DEFAULT")
    conn.sql("INSERT INTO DEF (ID) VALUES (7)")
    conn.sql("ALTER TABLE DEF ADD COLUMN SCORE FLOAT DEFAULT 0.5")
    assert query(conn, "SELECT ID, LABEL, N, SCORE FROM DEF ORDER BY ID") == [
        (1, "merged", 5, 0.5),
        (2, "none", 5, 0.5),
        (3, "none", 5, 0.5),
        (4, "none", 5, 0.5),
        (5, "none", 5, 0.5),
        (6, "later", 5, 0.5),
        (7, None, 5, 0.5),
    ]
    conn.sql("CREATE TABLE DEF_LIKE LIKE DEF; CREATE TABLE DEF_CLONE CLONE DEF")
    conn.sql("INSERT INTO DEF_LIKE (ID) VALUES (1); INSERT INTO DEF_CLONE (ID) VALUES (8)")
    assert query(conn, "SELECT N, SCORE FROM DEF_LIKE") == [(5, 0.5)]
    assert query(conn, "SELECT N, SCORE FROM DEF_CLONE WHERE ID = 8") == [(5, 0.5)]
    described = {row[0]: row[4] for row in conn.sql("DESCRIBE TABLE DEF")[0].rows}
    assert described == {
        "ID": None,
        "LABEL": None,
        "AT": "CURRENT_TIMESTAMP()",
        "N": "5",
        "U": "CAST(UUID() AS STRING)",
        "SCORE": "0.5",
    }
    shown = conn.sql("SHOW COLUMNS IN TABLE DEF")[0]
    assert shown.column("default") == ["", "", "CURRENT_TIMESTAMP()", "5", described["U"], "0.5"]
    assert query(
        conn,
        "SELECT COLUMN_NAME, COLUMN_DEFAULT FROM INFORMATION_SCHEMA.COLUMNS "
        "WHERE TABLE_NAME = 'DEF' AND COLUMN_DEFAULT IS NOT NULL ORDER BY 1",
    ) == [("AT", "CURRENT_TIMESTAMP()"), ("N", "5"), ("SCORE", "0.5"), ("U", described["U"])]
    # BigQuery's: an ARRAY of dates, CURRENT_DATETIME (UTC's wall clock), one RAND a row
    conn.sql("CREATE SCHEMA DS")
    bigquery = [
        "CREATE TABLE D.DS.EVENTS (ID INT64, DAYS ARRAY<DATE> DEFAULT [CURRENT_DATE(), "
        "DATE '2020-01-01'], SEEN DATETIME DEFAULT CURRENT_DATETIME(), R FLOAT64 DEFAULT RAND())",
        "INSERT D.DS.EVENTS (ID) VALUES (1), (2)",
        "INSERT INTO D.DS.EVENTS VALUES (3, DEFAULT, DATETIME '2020-01-01 00:00:00', 0.5)",
    ]
    for sql in bigquery:
        conn.sql(sql, dialect="bigquery")
    rows = query(
        conn, "SELECT ID, DAYS, SEEN, R >= 0 AND R < 1 FROM D.DS.EVENTS ORDER BY ID", "bigquery"
    )
    days = [now.date(), date(2020, 1, 1)]
    assert rows == [
        (1, days, now, True),
        (2, days, now, True),
        (3, days, datetime(2020, 1, 1), True),
    ]
    assert query(conn, "SELECT COUNT(DISTINCT R) FROM D.DS.EVENTS", "bigquery") == [(3,)]
    root = table_root(home, "DEF")
    version = DeltaTable(str(root)).version()
    assert_refused(
        conn,
        [
            ("CREATE TABLE BAD (A INT, B INT DEFAULT A + 1)", "UNSUPPORTED"),
            ("CREATE TABLE BAD (A INT DEFAULT (SELECT MAX(ID) FROM PUBLIC.DEF))", "UNSUPPORTED"),
            ("ALTER TABLE PUBLIC.DEF ALTER COLUMN N SET DEFAULT ID", "UNSUPPORTED"),
            # a text default that is no value of the column's type, as Snowflake checks it
            ("CREATE TABLE BAD (A INT DEFAULT 'x')", "INVALID_VALUE"),
            ("CREATE TABLE BAD (A BOOLEAN DEFAULT 'maybe')", "INVALID_VALUE"),
            ("ALTER TABLE PUBLIC.DEF ALTER COLUMN N SET DEFAULT 'zz'", "INVALID_VALUE"),
            ("ALTER TABLE PUBLIC.DEF ADD COLUMN Q DATE DEFAULT '2020-13-01'", "INVALID_VALUE"),
            ("INSERT INTO PUBLIC.DEF (ID, N) VALUES (9, NULL)", "INVALID_VALUE"),  # NOT NULL
        ],
    )
    assert DeltaTable(str(root)).version() == version


def test_the_type_of_a_variant_is_snowflakes_and_arrays_zip_by_position_r27(conn: Any) -> None:
    """SPEC R27: ``TYPEOF(PARSE_JSON(...))`` answered Spark's 'string' for every JSON value
    (a wrong answer); it is Snowflake's name of the value's type, of a path into JSON too,
    and IS_<type> / AS_<type> / STRIP_NULL_VALUE (unknown functions) answer by it;
    ARRAYS_ZIP's objects had Spark's keys ('0', '1'), Snowflake's are '$1', '$2';
    ARRAY_REMOVE_AT answers; CURRENT_VERSION named the Spark build."""
    conn.sql(
        "CREATE TABLE DOCS (ID INT, J VARCHAR); INSERT INTO DOCS VALUES "
        """(1, '{"a": {"b": [1, 2.5, "x", true, null]}, "n": 7}'), (2, NULL)"""
    )
    texts = ['{"a":1}', "[1]", '"x"', "7", "1.5", "1e3", "true", "null"]
    is_true, as_values = [True] * 8, [7, "x", None, 2.5, True]  # the IS_ and AS_ columns
    typed = ", ".join(f"TYPEOF(PARSE_JSON('{t}'))" for t in texts)
    assert query(conn, f"SELECT {typed}") == [
        ("OBJECT", "ARRAY", "VARCHAR", "INTEGER", "DECIMAL", "DOUBLE", "BOOLEAN", "NULL_VALUE")
    ]
    assert query(
        conn,
        "SELECT ID, TYPEOF(PARSE_JSON(J)), TYPEOF(J:a), TYPEOF(J:a.b), TYPEOF(J:a.b[1]), "
        "TYPEOF(J:a.b[2]), TYPEOF(PARSE_JSON(J)['n']), TYPEOF(J:nope), IS_ARRAY(J:a.b), "
        "IS_OBJECT(J:a), IS_INTEGER(J:n), IS_DECIMAL(J:n), IS_DOUBLE(J:a.b[1]), "
        "IS_VARCHAR(J:a.b[2]), IS_BOOLEAN(J:a.b[3]), IS_NULL_VALUE(J:a.b[4]), "
        "AS_INTEGER(J:n), AS_VARCHAR(J:a.b[2]), AS_VARCHAR(J:n), AS_DOUBLE(J:a.b[1]), "
        "AS_BOOLEAN(J:a.b[3]) FROM DOCS ORDER BY ID",
    ) == [
        (
            1,
            "OBJECT",
            "OBJECT",
            "ARRAY",
            "DECIMAL",
            "VARCHAR",
            "INTEGER",
            None,
            *is_true,
            *as_values,
        ),
        (2, *[None] * 20),  # PARSE_JSON(NULL) is NULL (it failed: "the text is not JSON")
    ]
    assert query(
        conn,
        "SELECT TYPEOF(1), TYPEOF(1.5), TYPEOF('x'), TYPEOF(OBJECT_CONSTRUCT('a', 1)), "
        "TYPEOF(ARRAY_CONSTRUCT(1)), TYPEOF(TRUE), TYPEOF(NULL), "
        "STRIP_NULL_VALUE(PARSE_JSON('null')), STRIP_NULL_VALUE(PARSE_JSON('1'))",
    ) == [("INTEGER", "DECIMAL", "VARCHAR", "OBJECT", "ARRAY", "BOOLEAN", None, None, "1")]
    assert query(
        conn,
        "SELECT ARRAYS_ZIP(ARRAY_CONSTRUCT(1, 2), ARRAY_CONSTRUCT('a', 'b', 'c')), "
        "ARRAY_REMOVE_AT(ARRAY_CONSTRUCT(1, 2, 3), 1), "
        "ARRAY_REMOVE_AT(ARRAY_CONSTRUCT(1, 2, 3), -1), CURRENT_VERSION(), "
        "ARRAYS_ZIP(ARRAY_CONSTRUCT(1, 2), NULL)",  # NULL (it failed to compile)
    ) == [
        (
            [{"$1": 1, "$2": "a"}, {"$1": 2, "$2": "b"}, {"$1": None, "$2": "c"}],
            [1, 3],
            [1, 2],
            importlib.metadata.version("rewind"),
            None,
        )
    ]


def test_a_variant_column_holds_semi_structured_values_as_snowflake_documents_r26_r27(
    conn: Any,
) -> None:
    """SPEC R26, R27: ``CREATE TABLE t (v VARIANT)`` was refused (keep JSON in a VARCHAR).
    Snowflake's own example loads it with PARSE_JSON; its values read as JSON text, by
    path, subscript and TYPEOF, group, compare, and travel into a CTAS and a clone; text
    that is no JSON is stored as a string, a number and an object as themselves; an
    UPDATE and a MERGE store new values; BigQuery's JSON column is the same type, written
    from a JSON literal in VALUES (which failed for any column: "Cannot evaluate the
    expression in inline table") and read by its fields (``j.a.b``)."""
    conn.sql(
        "CREATE TABLE VARTAB (N NUMBER(2), V VARIANT); "
        "INSERT INTO VARTAB SELECT column1 AS n, PARSE_JSON(column2) AS v FROM VALUES "
        "(1, 'null'), (2, null), (3, 'true'), (4, '-17'), (5, '123.12'), "
        "(7, '\"Om ara pa ca na dhih\"  '), (8, '[-1, 12, 289, 2188, false]'), "
        '(9, \'{ "x" : "abc", "y" : false, "z": 10} \') AS vals'
    )
    assert query(conn, "SELECT N, V, TYPEOF(V) FROM VARTAB ORDER BY N") == [
        (1, "null", "NULL_VALUE"),
        (2, None, None),
        (3, "true", "BOOLEAN"),
        (4, "-17", "INTEGER"),
        (5, "123.12", "DECIMAL"),
        (7, '"Om ara pa ca na dhih"', "VARCHAR"),
        (8, "[-1,12,289,2188,false]", "ARRAY"),
        (9, '{"x":"abc","y":false,"z":10}', "OBJECT"),
    ]
    assert query(conn, "SELECT V:x::STRING, V:z::INT + 1, V:y FROM VARTAB WHERE V:y = FALSE") == [
        ("abc", 11, "false")
    ]
    assert query(conn, "SELECT V[0], V[4] FROM VARTAB WHERE N = 8") == [("-1", "false")]
    distinct = query(conn, "SELECT DISTINCT V FROM VARTAB WHERE N < 4 AND V IS NOT NULL")
    assert sorted(distinct) == [("null",), ("true",)]
    assert query(conn, "SELECT X:x FROM (SELECT V AS X FROM VARTAB WHERE N = 9)") == [("abc",)]
    # TO_VARIANT was unknown; ::VARIANT of JSON text was a string of it, of an object a
    # compile error, and TYPEOF of either 'VARIANT'
    assert query(
        conn,
        "SELECT TO_VARIANT('abc'), TYPEOF(TO_VARIANT('abc')), 1.5::VARIANT, "
        "PARSE_JSON('{\"a\": 1}')::VARIANT, OBJECT_CONSTRUCT('a', 1)::VARIANT, "
        "TYPEOF(OBJECT_CONSTRUCT('a', 1)::VARIANT), (OBJECT_CONSTRUCT('a', 1)::VARIANT):a",
    ) == [('"abc"', "VARCHAR", "1.5", '{"a":1}', '{"a":1}', "OBJECT", "1")]
    # as text, a string variant is the string (it kept its quotes)
    assert query(conn, "SELECT TO_VARIANT('abc')::VARCHAR, ('abc'::VARIANT)::STRING") == [
        ("abc", "abc")
    ]
    flattened = "SELECT F.VALUE FROM VARTAB, LATERAL FLATTEN(input => V) F WHERE N = 8"
    assert query(conn, f"{flattened} ORDER BY F.INDEX") == [
        ("-1",),
        ("12",),
        ("289",),
        ("2188",),
        ("false",),
    ]
    assert query(conn, "DESCRIBE TABLE VARTAB")[1][:2] == ("V", "VARIANT")
    conn.sql(
        "INSERT INTO VARTAB SELECT 10, OBJECT_CONSTRUCT('a', 1, 'b', ARRAY_CONSTRUCT(1, 2)); "
        "INSERT INTO VARTAB SELECT 11, 'plain text'; INSERT INTO VARTAB SELECT 12, 42; "
        "INSERT INTO VARTAB SELECT 13, TO_VARIANT(DATE '2026-01-02'); "
        "UPDATE VARTAB SET V = PARSE_JSON('{\"k\": [1]}') WHERE N = 12; "
        "MERGE INTO VARTAB T USING (SELECT 9 AS N, PARSE_JSON('[9]') AS NV) S ON T.N = S.N "
        "WHEN MATCHED THEN UPDATE SET V = S.NV; "
        "CREATE TABLE V2 AS SELECT N, V FROM VARTAB WHERE N >= 9; CREATE TABLE V3 CLONE VARTAB"
    )
    assert query(conn, "SELECT N, V FROM V2 ORDER BY N") == [
        (9, "[9]"),
        (10, '{"a":1,"b":[1,2]}'),
        (11, '"plain text"'),
        (12, '{"k":[1]}'),
        (13, '"2026-01-02"'),
    ]
    assert query(conn, "DESCRIBE TABLE V2")[1][:2] == ("V", "VARIANT")
    assert query(conn, "SELECT COUNT(*), COUNT(V) FROM V3") == [(12, 11)]
    conn.sql("CREATE TABLE JT (ID INT, J JSON)", dialect="bigquery")
    conn.sql(
        'INSERT INTO JT VALUES (1, JSON \'{"a": {"b": 2}, "s": "x"}\'), (2, NULL)',
        dialect="bigquery",
    )
    assert query(
        conn,
        "SELECT id, j.a.b, STRING(j.s), JSON_VALUE(j, '$.a.b'), JSON_TYPE(j) FROM JT ORDER BY id",
        dialect="bigquery",
    ) == [(1, "2", "x", "2", "object"), (2, None, None, None, None)]


def test_bigquery_json_is_json_its_fields_types_and_values_as_in_bigquery_r27(conn: Any) -> None:
    """SPEC R27: BigQuery's JSON_QUERY of a string answered it without its quotes (``x``,
    Spark's GET_JSON_OBJECT: JSON_VALUE's answer, a wrong one); a field access
    (``PARSE_JSON(t).a``, ``[0]``, ``['a']``) failed to compile, and TO_JSON_STRING of
    JSON; JSON_TYPE, FLOAT64, BOOL and the LAX_ conversions were unknown, JSON_ARRAY too,
    JSON_OBJECT a syntax error; STRING of a JSON string kept its quotes. A JSON key keeps
    its case."""
    conn.sql(
        "CREATE SCHEMA D.DS; CREATE TABLE D.DS.EVENTS (ID INT, PAYLOAD VARCHAR); "
        """INSERT INTO D.DS.EVENTS VALUES (1, '{"User": {"id": 7, "tags": ["a", "b"]}, """
        """"ok": true, "score": 2.5, "note": null}')"""
    )
    assert query(
        conn,
        "SELECT JSON_QUERY(PAYLOAD, '$.User.tags[1]'), JSON_VALUE(PAYLOAD, '$.User.tags[1]'), "
        "JSON_QUERY(PAYLOAD, '$.User'), PARSE_JSON(PAYLOAD).User.id, "
        "PARSE_JSON(PAYLOAD).User.tags[0], PARSE_JSON(PAYLOAD)['ok'], "
        "PARSE_JSON(PAYLOAD).user, TO_JSON_STRING(PARSE_JSON(' { \"a\" : 1 } ')) "
        "FROM D.DS.EVENTS",
        "bigquery",
    ) == [('"b"', "b", '{"id":7,"tags":["a","b"]}', "7", '"a"', "true", None, '{"a":1}')]
    kinds = ", ".join(
        f"JSON_TYPE(PARSE_JSON(PAYLOAD).{f})" for f in ("User", "User.tags", "ok", "score", "note")
    )
    assert query(conn, f"SELECT {kinds} FROM D.DS.EVENTS", "bigquery") == [
        ("object", "array", "boolean", "number", "null")
    ]
    assert query(
        conn,
        "SELECT INT64(PARSE_JSON(PAYLOAD).User.id), FLOAT64(PARSE_JSON(PAYLOAD).score), "
        "BOOL(PARSE_JSON(PAYLOAD).ok), STRING(PARSE_JSON(PAYLOAD).User.tags[0]), "
        "LAX_INT64(PARSE_JSON('\"12\"')), LAX_INT64(PARSE_JSON('\"x\"')) FROM D.DS.EVENTS",
        "bigquery",
    ) == [(7, 2.5, True, "a", 12, None)]
    assert query(
        conn,
        "SELECT JSON_ARRAY(1, 'a', TRUE, NULL, [1, 2]), "
        "JSON_OBJECT('a', 1, 'b', NULL, 'c', PARSE_JSON('{\"z\": [1]}')), "
        "JSON_TYPE(JSON_OBJECT('a', 1))",
        "bigquery",
    ) == [('[1,"a",true,null,[1,2]]', '{"a":1,"b":null,"c":{"z":[1]}}', "object")]


def test_bigquery_range_variables_are_the_row_as_a_struct_r23_r27(
    conn: Any, connect: Callable[..., Any]
) -> None:
    """SPEC R23, R27: in BigQuery a table's alias (or its name) as a value is its row, a
    STRUCT of its columns: ``TO_JSON_STRING(t)``, ``SELECT t``, and the idiom that keeps
    the latest row per key after a double load, ``ARRAY_AGG(t ORDER BY ... LIMIT
    1)[OFFSET(0)]``, read the past as the present. Spark read the alias as a column:
    invalid identifier. A column of the same name stays the column."""
    conn.sql(
        "CREATE SCHEMA D.DS; CREATE TABLE D.DS.LOADS (ID INT, V VARCHAR, AT_DAY INT); "
        "INSERT INTO D.DS.LOADS VALUES (1, 'old', 1), (2, 'x', 1)"
    )
    conn = open_at(connect, hours=1)
    conn.sql("INSERT INTO D.DS.LOADS VALUES (1, 'new', 2), (1, 'old', 1)")
    assert query(
        conn, "SELECT TO_JSON_STRING(t) FROM D.DS.LOADS AS t WHERE ID = 2", "bigquery"
    ) == [('{"ID":2,"V":"x","AT_DAY":1}',)]
    result = conn.sql("SELECT loads FROM D.DS.LOADS WHERE ID = 2", dialect="bigquery")[-1]
    assert result.columns == ["LOADS"]
    assert [tuple(row) for row in result.rows] == [({"ID": 2, "V": "x", "AT_DAY": 1},)]
    latest = (
        "SELECT latest.* FROM (SELECT ARRAY_AGG(t ORDER BY AT_DAY DESC LIMIT 1)[OFFSET(0)] "
        "AS latest FROM D.DS.LOADS AS t{point} GROUP BY ID) ORDER BY ID"
    )
    assert query(conn, latest.format(point=""), "bigquery") == [(1, "new", 2), (2, "x", 1)]
    before = " FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 30 MINUTE)"
    assert query(conn, latest.format(point=before), "bigquery") == [(1, "old", 1), (2, "x", 1)]
    assert query(
        conn, "SELECT COUNT(DISTINCT TO_JSON_STRING(l)) FROM D.DS.LOADS l", "bigquery"
    ) == [(3,)]
    # a column named as the alias is the column
    assert query(conn, "SELECT V FROM D.DS.LOADS AS V WHERE ID = 2", "bigquery") == [("x",)]
    # Snowflake has no range variables: its invalid identifier
    assert_refused(conn, [("SELECT TO_JSON(t) FROM D.DS.LOADS t", "SQL_COMPILATION_ERROR")])


def test_semi_structured_array_and_object_columns_hold_json_of_their_kind_r20_r26_r27(
    conn: Any, connect: Callable[..., Any]
) -> None:
    """SPEC R20, R26, R27: Snowflake's ``CREATE TABLE t (tags ARRAY, info OBJECT)`` (the
    semi-structured types, no element types named) was refused. They are Delta variants
    that hold an array / an object: written from ARRAY_CONSTRUCT, OBJECT_CONSTRUCT,
    PARSE_JSON or JSON text, another kind refused (nothing written), described as declared,
    read back in time. Snowflake's array functions of a semi-structured array answer its
    JSON with each element's type kept (``ARRAY_CAT`` of two concatenated their text, a
    wrong answer; the others failed to compile); an UPDATE appends a typed element."""
    conn.sql(
        "CREATE TABLE SEMI (ID INT, TAGS ARRAY, INFO OBJECT); "
        "INSERT INTO SEMI SELECT 1, ARRAY_CONSTRUCT('a', 'b'), OBJECT_CONSTRUCT('city', 'Oslo'); "
        "INSERT INTO SEMI (ID, TAGS, INFO) SELECT 2, PARSE_JSON('[1, {\"x\": 2}, null]'), "
        "PARSE_JSON('{\"a\": null}'); "
        "INSERT INTO SEMI (ID, TAGS) VALUES (3, '[1,1,2]'), (4, NULL)"
    )
    assert [row[:2] for row in query(conn, "DESC TABLE SEMI")] == [
        ("ID", "NUMBER(38,0)"),
        ("TAGS", "ARRAY"),
        ("INFO", "OBJECT"),
    ]
    assert query(
        conn, "SELECT ID, TAGS, INFO, TYPEOF(TAGS), TYPEOF(INFO) FROM SEMI ORDER BY ID"
    ) == [
        (1, '["a","b"]', '{"city":"Oslo"}', "ARRAY", "OBJECT"),
        (2, '[1,{"x":2},null]', '{"a":null}', "ARRAY", "OBJECT"),
        (3, "[1,1,2]", None, "ARRAY", None),
        (4, None, None, None, None),
    ]
    wrong_kind = [
        ("INSERT INTO SEMI (ID, TAGS) SELECT 5, OBJECT_CONSTRUCT('a', 1)", "INVALID_VALUE"),
        ("INSERT INTO SEMI (ID, INFO) SELECT 5, ARRAY_CONSTRUCT(1)", "INVALID_VALUE"),
        ("INSERT INTO SEMI (ID, TAGS) SELECT 5, 7", "INVALID_VALUE"),
        ("UPDATE SEMI SET TAGS = OBJECT_CONSTRUCT('a', 1) WHERE ID = 1", "INVALID_VALUE"),
        ("SELECT INFO::ARRAY FROM SEMI WHERE ID = 1", "INVALID_VALUE"),
        ("SELECT ARRAY_SORT(TAGS) FROM SEMI", "UNSUPPORTED"),
    ]
    assert_refused(conn, wrong_kind)
    assert query(conn, "SELECT COUNT(*) FROM SEMI") == [(4,)]
    assert query(
        conn,
        "SELECT ARRAY_CAT(TAGS, TAGS), ARRAY_APPEND(TAGS, 3), ARRAY_PREPEND(TAGS, 0), "
        "ARRAY_SIZE(ARRAY_APPEND(TAGS, 'c')), ARRAY_APPEND(TAGS, 'c')[2], "
        "ARRAY_CONTAINS('a'::VARIANT, TAGS), ARRAY_CONTAINS('z'::VARIANT, TAGS), "
        "ARRAY_TO_STRING(TAGS, '-'), ARRAY_SLICE(TAGS, -1, 5), ARRAY_REVERSE(TAGS), "
        "TAGS::ARRAY, INFO::OBJECT FROM SEMI WHERE ID = 1",
    ) == [
        (
            '["a","b","a","b"]',
            '["a","b",3]',
            '[0,"a","b"]',
            3,
            "c",
            True,
            False,
            "a-b",
            '["b"]',
            '["b","a"]',
            '["a","b"]',
            '{"city":"Oslo"}',
        )
    ]
    assert query(
        conn,
        "SELECT ARRAY_DISTINCT(TAGS), ARRAY_COMPACT(TAGS), ARRAY_TO_STRING(TAGS, ','), "
        "ARRAY_CONTAINS(1::VARIANT, TAGS), ARRAY_CONTAINS('1'::VARIANT, TAGS) "
        "FROM SEMI WHERE ID IN (2, 3) ORDER BY ID",
    ) == [
        ('[1,{"x":2},null]', '[1,{"x":2}]', '1,{"x":2},', True, False),
        ("[1,2]", "[1,1,2]", "1,1,2", True, False),
    ]
    assert query(
        conn,
        "SELECT ARRAY_POSITION('b'::VARIANT, TAGS), ARRAY_POSITION('z'::VARIANT, TAGS), "
        "ARRAYS_OVERLAP(TAGS, ARRAY_CONSTRUCT('b', 'q')), ARRAYS_OVERLAP(TAGS, "
        "PARSE_JSON('[1]')), ARRAY_REMOVE(ARRAY_CAT(TAGS, TAGS), 'a'::VARIANT) "
        "FROM SEMI WHERE ID = 1",
    ) == [(1, None, True, False, '["b","b"]')]
    later = open_at(connect, hours=1)
    later.sql("UPDATE SEMI SET TAGS = ARRAY_APPEND(TAGS, 3), INFO = OBJECT_CONSTRUCT('z', 1)")
    assert query(later, "SELECT TAGS, TYPEOF(TAGS[2]), INFO FROM SEMI WHERE ID = 1") == [
        ('["a","b",3]', "INTEGER", '{"z":1}')
    ]
    assert query(later, "SELECT TAGS FROM SEMI AT(OFFSET => -1800) WHERE ID = 1") == [
        ('["a","b"]',)
    ]


def test_mixed_array_construct_and_merge_into_semi_structured_columns_r26_r27(conn: Any) -> None:
    """SPEC R26, R27: ``ARRAY_CONSTRUCT('z', 2)`` failed ("Numeric value 'z' is not
    recognized": Spark's ARRAY coerced 'z' to a number), so did one of objects of other
    keys (two struct types), and ``ARRAY_CONSTRUCT(v:a, 1)`` kept JSON as strings: an
    array of variants, as Snowflake's. A MERGE setting a
    VARIANT or ARRAY column from its source's array or object, and an UPDATE setting one
    to OBJECT_CONSTRUCT, failed to compile (a struct beside the kept rows' JSON text)."""
    assert query(
        conn,
        "SELECT ARRAY_CONSTRUCT('z', 2), ARRAY_CONSTRUCT(1, 2), ARRAY_CONSTRUCT(1, "
        "ARRAY_CONSTRUCT(2)), ARRAY_CONSTRUCT(PARSE_JSON('{\"a\": 1}'), 1), "
        "ARRAY_SIZE(ARRAY_CONSTRUCT('z', 2, TRUE)), ARRAY_CONSTRUCT('z', 2)[1], "
        "TYPEOF(ARRAY_CONSTRUCT('z', 2)), TYPEOF(ARRAY_CONSTRUCT('z', 2)[1]), "
        "ARRAY_CONSTRUCT(OBJECT_CONSTRUCT('a', 1), OBJECT_CONSTRUCT('b', 'x'))",
    ) == [
        (
            '["z",2]',
            [1, 2],
            "[1,[2]]",
            '[{"a":1},1]',
            3,
            "2",
            "ARRAY",
            "INTEGER",
            '[{"a":1},{"b":"x"}]',
        )
    ]
    conn.sql(
        "CREATE TABLE VT (ID INT, V VARIANT, TAGS ARRAY); "
        "INSERT INTO VT SELECT 1, PARSE_JSON('{\"a\": 1}'), ARRAY_CONSTRUCT('x'); "
        "INSERT INTO VT SELECT 2, PARSE_JSON('\"s\"'), ARRAY_CONSTRUCT(1)"
    )
    conn.sql(
        "MERGE INTO VT t USING (SELECT 1 ID, ARRAY_CONSTRUCT('z', 2) TAGS, "
        "OBJECT_CONSTRUCT('b', 2) V) s ON t.ID = s.ID "
        "WHEN MATCHED THEN UPDATE SET TAGS = s.TAGS, V = s.V "
        "WHEN NOT MATCHED THEN INSERT (ID, TAGS) VALUES (s.ID, s.TAGS)"
    )
    conn.sql("UPDATE VT SET V = OBJECT_CONSTRUCT('c', ARRAY_CONSTRUCT(1, 'y')) WHERE ID = 2")
    conn.sql("UPDATE VT SET TAGS = ARRAY_CONSTRUCT('a', 1, NULL) WHERE ID = 2")
    assert query(conn, "SELECT ID, V, TAGS, TYPEOF(V), TYPEOF(TAGS[1]) FROM VT ORDER BY ID") == [
        (1, '{"b":2}', '["z",2]', "OBJECT", "INTEGER"),
        (2, '{"c":[1,"y"]}', '["a",1,null]', "OBJECT", "INTEGER"),
    ]


def test_get_ddl_answers_the_statement_that_recreates_a_table_r20_r37_r39(conn: Any) -> None:
    """SPEC R20, R37, R39: ``GET_DDL('TABLE', 't')`` (how a Snowflake user keeps a table's
    definition before changing it) was an unknown function. It answers Snowflake's
    ``create or replace`` statement of the live table: types, NOT NULL, default, identity,
    comments, TRANSIENT, the name qualified when asked; run again it makes the same
    table. A name that is not one, a missing table and another kind are refused."""
    conn.sql(
        "CREATE TABLE DDL_T (ID INT NOT NULL COMMENT 'the key', NAME VARCHAR(20) DEFAULT 'x', "
        "AMT NUMBER(10,2), \"Mixed\" TEXT, TAGS ARRAY) COMMENT = 'orders it''s'; "
        "CREATE TRANSIENT TABLE DDL_TR (ID INT AUTOINCREMENT START 5 INCREMENT 2, V VARIANT)"
    )
    ddl = query(conn, "SELECT GET_DDL('TABLE', 'ddl_t')")[0][0]
    assert ddl == (
        "create or replace TABLE DDL_T (\n\tID NUMBER(38,0) NOT NULL COMMENT 'the key',\n"
        "\tNAME VARCHAR(20) DEFAULT 'x',\n\tAMT NUMBER(10,2),\n\t\"Mixed\" VARCHAR,\n"
        "\tTAGS ARRAY\n) COMMENT='orders it\\'s';"
    )
    assert query(conn, "SELECT GET_DDL('table', 'd.public.ddl_tr', TRUE)") == [
        (
            "create or replace TRANSIENT TABLE D.PUBLIC.DDL_TR (\n"
            "\tID NUMBER(38,0) autoincrement start 5 increment 2,\n\tV VARIANT\n);",
        )
    ]
    conn.sql("DROP TABLE DDL_T")
    conn.sql(ddl)
    assert query(conn, "SELECT GET_DDL('TABLE', 'DDL_T')") == [(ddl,)]
    assert_refused(
        conn,
        [
            ("SELECT GET_DDL('TABLE', 'nope')", "OBJECT_NOT_FOUND"),
            ("SELECT GET_DDL('VIEW', 'ddl_t')", "UNSUPPORTED"),
            ("SELECT GET_DDL('TABLE', 'ddl_t; DROP TABLE ddl_tr')", "INVALID_VALUE"),
            ("SELECT GET_DDL('TABLE')", "INVALID_VALUE"),
            ("SELECT GET_DDL('TABLE', NAME) FROM DDL_T", "INVALID_VALUE"),
        ],
    )


def test_object_insert_delete_and_pick_on_object_columns_r26_r27(conn: Any) -> None:
    """SPEC R26, R27: OBJECT_INSERT, OBJECT_DELETE and OBJECT_PICK were unknown functions
    (how an OBJECT column's keys are changed in Snowflake): a key added (an existing one
    refused unless the fourth argument is TRUE; a NULL value leaves it out), keys removed,
    keys kept, each value with its type, on an OBJECT column's JSON and on
    OBJECT_CONSTRUCT's object; an UPDATE stores the answer."""
    conn.sql(
        "CREATE TABLE OBJ (ID INT, INFO OBJECT); "
        'INSERT INTO OBJ SELECT 1, PARSE_JSON(\'{"city": "Oslo", "zip": 150, "tags": [1]}\')'
    )
    assert query(
        conn,
        "SELECT OBJECT_INSERT(INFO, 'n', 2), OBJECT_INSERT(INFO, 'zip', 'x', TRUE), "
        "OBJECT_INSERT(INFO, 'none', NULL), OBJECT_DELETE(INFO, 'zip', 'nope'), "
        "OBJECT_PICK(INFO, 'city', 'tags'), OBJECT_PICK(INFO, ARRAY_CONSTRUCT('zip')), "
        "OBJECT_INSERT(OBJECT_CONSTRUCT('a', 1), 'b', ARRAY_CONSTRUCT('z', 2)), "
        "TYPEOF(OBJECT_PICK(INFO, 'zip'):zip) FROM OBJ",
    ) == [
        (
            '{"city":"Oslo","tags":[1],"zip":150,"n":2}',  # stored: keys sorted
            '{"city":"Oslo","tags":[1],"zip":"x"}',
            '{"city":"Oslo","tags":[1],"zip":150}',
            '{"city":"Oslo","tags":[1]}',
            '{"city":"Oslo","tags":[1]}',
            '{"zip":150}',
            '{"a":1,"b":["z",2]}',
            "INTEGER",
        )
    ]
    assert_refused(conn, [("SELECT OBJECT_INSERT(INFO, 'zip', 1) FROM OBJ", "INVALID_VALUE")])
    conn.sql("UPDATE OBJ SET INFO = OBJECT_INSERT(OBJECT_DELETE(INFO, 'tags'), 'n', 3)")
    assert query(conn, "SELECT INFO, TYPEOF(INFO:n) FROM OBJ") == [
        ('{"city":"Oslo","n":3,"zip":150}', "INTEGER")
    ]


def test_in_a_subquery_holding_a_null_answers_null_as_sql_does_r26(conn: Any) -> None:
    """SPEC R26: ``x IN (SELECT ...)`` where x is not found and the subquery holds a NULL
    is NULL in SQL (Snowflake, BigQuery): Spark answered FALSE (and ``NOT IN`` FALSE), a
    wrong answer wherever the two differ — a projected value, ``IS NULL``, ``COALESCE``.
    A filter's condition, where they filter alike, is left to Spark's joins; a subquery
    that reads the outer row is left as written."""
    conn.sql("CREATE TABLE S (ID INT); INSERT INTO S VALUES (1), (NULL)")
    three = "(SELECT 3 AS X UNION ALL SELECT 1 UNION ALL SELECT NULL)"
    assert query(
        conn,
        "SELECT X, X IN (SELECT ID FROM S), X NOT IN (SELECT ID FROM S), "
        "(X IN (SELECT ID FROM S)) IS NULL, COALESCE(X NOT IN (SELECT S.ID FROM S), TRUE) "
        f"FROM {three} ORDER BY X",
    ) == [
        (1, True, False, False, False),
        (3, None, None, True, True),
        (None, None, None, True, True),
    ]
    assert query(
        conn,
        "SELECT NULL IN (SELECT ID FROM S WHERE FALSE), 3 IN (SELECT ID FROM S WHERE ID > 0), "
        "COUNT_IF((3 NOT IN (SELECT ID FROM S)) IS NULL) FROM S",
    ) == [(False, False, 2)]
    assert query(conn, f"SELECT X FROM {three} WHERE X IN (SELECT ID FROM S)") == [(1,)]
    assert query(conn, f"SELECT COUNT(*) FROM {three} WHERE X NOT IN (SELECT ID FROM S)") == [(0,)]
    correlated = "SELECT X IN (SELECT ID FROM S WHERE S.ID = X) FROM (SELECT 1 AS X)"
    assert query(conn, correlated) == [(True,)]
