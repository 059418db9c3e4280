"""Column lineage of a statement from its text alone (SPEC R36): what it read, and where
each column it wrote came from. Tables are given by key with their columns, as
:mod:`rewind.sql.recording` passes them after resolving names against the catalog.
"""

from __future__ import annotations

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st

from rewind.audit.lineage import StatementLineage, statement_lineage

pytestmark = pytest.mark.unit

TABLES = {"T": ["A", "B", "c"], "U": ["ID", "X"]}


def lineage(sql: str, created: tuple[str, ...] = ()) -> StatementLineage | None:
    return statement_lineage(sqlglot.parse_one(sql, read="snowflake"), TABLES, created)


def reads(sql: str) -> dict[str, set[str]]:
    found = lineage(sql)
    assert found is not None
    return {table: set(columns) for table, columns in found.reads.items()}


def writes(sql: str, created: tuple[str, ...] = ()) -> dict[str, set[tuple[str, str]]]:
    found = lineage(sql, created)
    assert found is not None
    return {c: {(s.table, s.column) for s in sources} for c, sources in found.writes.items()}


# -- what a query reads ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM T", {"T": {"A", "B", "c"}}),  # * expands to every column
        ('SELECT a FROM T WHERE "c" > 0 ORDER BY b', {"T": {"A", "B", "c"}}),
        ("SELECT COUNT(*) FROM T", {}),  # the table, none of its columns
        ("SELECT t.a, u.x FROM T t JOIN U u ON t.b = u.id", {"T": {"A", "B"}, "U": {"ID", "X"}}),
        ("WITH w AS (SELECT a AS z FROM T) SELECT z FROM w", {"T": {"A"}}),
        ("SELECT a FROM T UNION ALL SELECT x FROM U", {"T": {"A"}, "U": {"X"}}),
        (  # a correlated subquery reads the outer table's column too
            "SELECT a FROM T WHERE EXISTS (SELECT 1 FROM U WHERE U.id = T.b)",
            {"T": {"A", "B"}, "U": {"ID"}},
        ),
        (
            "SELECT a FROM T QUALIFY ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) = 1",
            {"T": {"A", "B"}},
        ),
        ("SELECT 1 FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY", {}),  # not a catalog table
    ],
)
def test_a_query_reads_every_column_it_references(sql: str, expected: dict[str, set[str]]) -> None:
    assert reads(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM T, REWIND.ACCOUNT_USAGE.ACCESS_HISTORY",  # which columns of T? unknown
        "INSERT INTO U SELECT * FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY",
        "SELECT a, b FROM T UNION SELECT x FROM U",  # branches that do not line up
        "CREATE TABLE N",  # no query: nothing to trace
        "DROP TABLE T",
    ],
)
def test_without_lineage_the_caller_keeps_the_object_level_facts(sql: str) -> None:
    # An unexpandable * or a statement without a query: None, never a guess.
    assert lineage(sql) is None


# -- where written columns come from --------------------------------------------------------
def test_insert_select_fills_columns_by_position() -> None:
    assert writes("INSERT INTO U (X, ID) SELECT b + 1, a FROM T") == {
        "X": {("T", "B")},
        "ID": {("T", "A")},
    }


def test_insert_without_a_column_list_fills_every_column() -> None:
    assert writes("INSERT INTO U SELECT a, a * b FROM T") == {
        "ID": {("T", "A")},
        "X": {("T", "A"), ("T", "B")},
    }


def test_insert_values_writes_columns_without_sources() -> None:
    assert writes("INSERT INTO U VALUES (1, 2)") == {"ID": set(), "X": set()}
    assert reads("INSERT INTO U VALUES (1, 2)") == {}


def test_lineage_follows_ctes_derived_tables_and_unions_to_base_columns() -> None:
    sql = (
        "WITH w (p, q) AS (SELECT a, b FROM T) "
        "INSERT INTO U SELECT d.y, q FROM (SELECT p AS y FROM w UNION SELECT x FROM U) d, w"
    )
    assert writes(sql) == {"ID": {("T", "A"), ("U", "X")}, "X": {("T", "B")}}


def test_a_scalar_subquery_is_a_source() -> None:
    sql = "UPDATE T SET b = (SELECT MAX(x) FROM U WHERE U.id = T.a)"
    assert writes(sql) == {"B": {("U", "X")}}
    assert reads(sql) == {"T": {"A"}, "U": {"ID", "X"}}


def test_ctas_maps_outputs_to_the_created_columns() -> None:
    sql = 'CREATE TABLE N AS SELECT a + b, UPPER("c") AS up FROM T'
    assert writes(sql, created=("S", "UP")) == {"S": {("T", "A"), ("T", "B")}, "UP": {("T", "c")}}


def test_update_writes_the_set_columns_and_reads_the_rest() -> None:
    sql = "UPDATE T SET a = b * 2, b = 0 WHERE \"c\" = 'x'"
    assert writes(sql) == {"A": {("T", "B")}, "B": set()}
    assert reads(sql) == {"T": {"B", "c"}}


def test_update_from_and_delete_using_read_their_other_tables() -> None:
    # Snowflake's UPDATE ... FROM and DELETE ... USING: the joined tables are sources.
    sql = "UPDATE T SET a = o.x FROM U AS o, U AS p JOIN T AS q ON p.id = q.b WHERE T.b = o.id"
    assert writes(sql) == {"A": {("U", "X")}}
    assert reads(sql) == {"T": {"B"}, "U": {"ID", "X"}}
    sql = "DELETE FROM T USING U AS o WHERE T.a = o.id"
    assert (reads(sql), writes(sql)) == ({"T": {"A"}, "U": {"ID"}}, {})


def test_delete_reads_its_condition_and_writes_no_lineage() -> None:
    sql = "DELETE FROM T WHERE a IN (SELECT id FROM U)"
    assert (reads(sql), writes(sql)) == ({"T": {"A"}, "U": {"ID"}}, {})


def test_merge_joins_its_clauses_and_a_delete_touches_every_column() -> None:
    sql = (
        "MERGE INTO T t USING (SELECT id, x * 2 AS y FROM U) s ON t.a = s.id "
        "WHEN MATCHED AND s.y > 10 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET b = s.y "
        "WHEN NOT MATCHED THEN INSERT (a, b) VALUES (s.id, 0)"
    )
    assert writes(sql) == {"A": {("U", "ID")}, "B": {("U", "X")}, "c": set()}
    assert reads(sql) == {"T": {"A"}, "U": {"ID", "X"}}


def test_merge_insert_without_columns_fills_the_target_in_order() -> None:
    sql = "MERGE INTO U USING T ON U.id = T.a WHEN NOT MATCHED THEN INSERT VALUES (T.a, T.b)"
    assert writes(sql) == {"ID": {("T", "A")}, "X": {("T", "B")}}


@given(st.lists(st.sampled_from(TABLES["T"]), min_size=1, max_size=6))
def test_a_projected_column_is_its_own_source(picked: list[str]) -> None:
    # Any projection of T into U-like columns: output i comes from exactly column picked[i].
    projection = ", ".join(f'"{c}"' for c in picked)
    targets = tuple(f"O{i}" for i in range(len(picked)))
    found = writes(f"CREATE TABLE N AS SELECT {projection} FROM T", created=targets)

    assert found == {t: {("T", c)} for t, c in zip(targets, picked, strict=True)}
