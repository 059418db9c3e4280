"""MERGE (SPEC R26) with copy-on-write per data file (SPEC R13)."""

from __future__ import annotations

import pytest

from rewind.errors import RewindError

pytestmark = pytest.mark.spark

NOW = "2026-03-01T00:00:00+00:00"
SETUP = (
    "CREATE DATABASE m; CREATE TABLE t (a INT, b VARCHAR); "
    "CREATE TABLE s (a INT, b VARCHAR, d BOOLEAN); "
    "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'); "
    "INSERT INTO s VALUES (2, 'B', false), (3, 'C', true), (4, 'D', false), (5, 'E', false)"
)


@pytest.fixture
def conn(connect):
    conn = connect(now=NOW)
    conn.sql(SETUP)
    return conn


def rows(conn, sql: str) -> list[list]:
    return conn.sql(sql)[-1].rows


def test_merge_update_delete_insert_in_clause_order(conn) -> None:
    """SPEC R26: the first applicable WHEN clause wins; counts as Snowflake reports them."""
    result = conn.sql(
        "MERGE INTO t AS x USING s AS y ON x.a = y.a "
        "WHEN MATCHED AND y.d THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET x.b = y.b "
        "WHEN NOT MATCHED AND y.a > 4 THEN INSERT (a, b) VALUES (y.a, y.b)"
    )[0]
    assert result.rows == [[1, 1, 1]]
    assert rows(conn, "SELECT a, b FROM t ORDER BY a") == [[1, "a"], [2, "B"], [5, "E"]]


def test_merge_from_subquery_inserts_only_unmatched(conn) -> None:
    conn.sql(
        "MERGE INTO t USING (SELECT a, b FROM s WHERE a >= 3) AS src ON t.a = src.a "
        "WHEN NOT MATCHED THEN INSERT VALUES (src.a, src.b)"
    )
    assert rows(conn, "SELECT a FROM t ORDER BY a") == [[1], [2], [3], [4], [5]]


def test_merge_keeps_previous_state_in_time_travel(conn) -> None:
    """SPEC R13, R16: the pre-MERGE state is readable BEFORE(STATEMENT => merge)."""
    merge = conn.sql("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET t.b = 'x'")[0]
    assert rows(conn, "SELECT b FROM t WHERE a = 2") == [["x"]]
    before = f"SELECT a, b FROM t BEFORE(STATEMENT => '{merge.query_id}') ORDER BY a"
    assert rows(conn, before) == [[1, "a"], [2, "b"], [3, "c"]]


def test_merge_with_duplicate_source_rows_fails_and_changes_nothing(conn) -> None:
    """Snowflake refuses a nondeterministic MERGE; SPEC R28: nothing changes."""
    conn.sql("INSERT INTO s VALUES (2, 'again', false)")
    with pytest.raises(RewindError) as error:
        conn.sql("MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET t.b = s.b")
    assert error.value.code == "EXECUTION_ERROR"
    assert rows(conn, "SELECT a, b FROM t ORDER BY a") == [[1, "a"], [2, "b"], [3, "c"]]


def test_merge_without_matches_makes_no_version(conn, home) -> None:
    from deltalake import DeltaTable

    conn.sql("MERGE INTO t USING s ON t.a = s.a + 100 WHEN MATCHED THEN DELETE")
    versions = [
        DeltaTable(str(p.parent)).version() for p in (home / "warehouse").glob("*/_delta_log")
    ]
    assert versions == [1, 1]  # t and s: create + insert, the MERGE committed nothing


def test_when_not_matched_by_source_updates_or_deletes_the_rows_no_source_row_matches(
    conn,
) -> None:
    """BigQuery's (and Delta's) ``WHEN NOT MATCHED BY SOURCE [AND c] THEN UPDATE | DELETE``
    was refused (UNSUPPORTED): the target rows no source row matches, by the first
    applicable clause; ``WHEN NOT MATCHED [BY TARGET] THEN INSERT ROW`` takes the source
    row's values in order (it failed with INTERNAL_ERROR). The MERGE before it stays
    readable (SPEC R13, R16)."""
    merge = conn.sql(
        "MERGE m.public.t x USING (SELECT a, b FROM m.public.s WHERE a IN (2, 4)) y "
        "ON x.a = y.a WHEN MATCHED THEN UPDATE SET b = y.b "
        "WHEN NOT MATCHED BY TARGET THEN INSERT ROW "
        "WHEN NOT MATCHED BY SOURCE AND x.a = 3 THEN DELETE "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET b = CONCAT(x.b, '-gone')",
        dialect="bigquery",
    )[0]
    assert merge.rows == [[1, 2, 1]]  # inserted 4; updated 2 and 1; deleted 3
    assert rows(conn, "SELECT a, b FROM t ORDER BY a") == [[1, "a-gone"], [2, "B"], [4, "D"]]
    before = f"SELECT a, b FROM t BEFORE(STATEMENT => '{merge.query_id}') ORDER BY a"
    assert rows(conn, before) == [[1, "a"], [2, "b"], [3, "c"]]
    with pytest.raises(RewindError) as refused:
        conn.sql(
            "MERGE m.public.t x USING (SELECT 9 AS a) y ON x.a = y.a "
            "WHEN NOT MATCHED THEN INSERT ROW",
            dialect="bigquery",
        )
    assert refused.value.code == "INVALID_VALUE"
