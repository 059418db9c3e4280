"""ACCESS_HISTORY's JSON shapes, DDL properties and QUERY_HISTORY's query types (SPEC R36),
from plain values: no catalog, no Spark."""

from __future__ import annotations

import json

import pytest

from rewind.audit.ddl import ObjectState, Related, ddl_properties
from rewind.audit.shape import access_columns, root_query_id
from rewind.catalog.models import ColumnLineage, StatementObject
from rewind.query_type import query_type

pytestmark = pytest.mark.unit

T = ObjectState("D.S.T", columns=("A", "B"))


# -- object_modified_by_ddl.properties -----------------------------------------------------
@pytest.mark.parametrize(
    ("operation", "before", "after", "expected"),
    [
        (
            "CREATE",
            None,
            ObjectState("D.S.T", retention_days=0, transient=True, columns=("A",), column_ids=(7,)),
            {
                "DATA_RETENTION_TIME_IN_DAYS": {"value": 0},
                "TRANSIENT": {"value": True},
                # 002: a column property names the column's objectId
                "columns": {"A": {"objectId": {"value": 7}, "subOperationType": "ADD"}},
            },
        ),
        ("ALTER", T, ObjectState("D.S.T2", columns=("A", "B")), {"name": {"value": "D.S.T2"}}),
        (
            "ALTER",
            T,
            ObjectState("D.S.T", comment="c", columns=("A", "C")),
            {
                "COMMENT": {"value": "c"},
                "columns": {"C": {"subOperationType": "ADD"}, "B": {"subOperationType": "DROP"}},
            },
        ),
        (  # UNSET: the value goes back to NULL (inherited)
            "ALTER",
            ObjectState("D.S", retention_days=5),
            ObjectState("D.S"),
            {"DATA_RETENTION_TIME_IN_DAYS": {"value": None}},
        ),
        (  # RENAME COLUMN B TO C: the same column (identity b), its new name (002)
            "ALTER",
            ObjectState("D.S.T", columns=("A", "B"), column_ids=(1, 2)),
            ObjectState("D.S.T", columns=("A", "C"), column_ids=(1, 2)),
            {
                "columns": {
                    "B": {
                        "objectId": {"value": 2},
                        "subOperationType": "ALTER",
                        "name": {"value": "C"},
                    }
                }
            },
        ),
        ("DROP", T, T, {}),
        ("UNDROP", None, T, {}),
    ],
)
def test_properties_are_what_the_statement_changed(
    operation: str, before: ObjectState | None, after: ObjectState, expected: dict
) -> None:
    assert ddl_properties(operation, before, after) == expected


def test_replace_and_clone_name_the_objects_they_came_from() -> None:
    props = ddl_properties(
        "REPLACE",
        None,
        ObjectState("D.S.T"),
        clone_source=Related(7, "D.S.SRC", "READ"),
        others=[Related(3, "D.S.T", "DROP")],
    )
    assert props == {
        "cloneSource": {"value": "D.S.SRC", "objectId": 7},
        "replacedObjectId": {"value": 3},
    }


def test_swap_names_its_partner() -> None:
    props = ddl_properties(
        "ALTER", T, ObjectState("D.S.U", columns=T.columns), others=[Related(9, "D.S.U", "ALTER")]
    )
    assert props == {"name": {"value": "D.S.U"}, "swapTarget": {"value": "D.S.U", "objectId": 9}}


# -- the JSON columns ------------------------------------------------------------------------
def _row(object_id: int, access: str, **fields: object) -> StatementObject:
    values = {"query_id": "q", "direct": True, **fields}
    return StatementObject(object_id=object_id, access=access, **values)


def test_direct_base_and_modified_objects_in_snowflake_shapes() -> None:
    # A schema clone's schema is direct only; its tables base only; reads of one table merge.
    rows = [
        _row(1, "READ", object_name="D.S", direct=True),
        _row(2, "READ", object_name="D.S.T", columns=["A"], direct=False),
        _row(2, "READ", object_name="D.S.T", columns=["B", "A"], direct=False),
        _row(3, "WRITE", object_name="D.S.N", operation="INSERT", columns=["X"]),
        _row(3, "WRITE", object_name="D.S.N", operation="CREATE"),  # CREATE: no data write
    ]
    lineage = [
        ColumnLineage(target_id=3, target_column="X", source_id=2, source_column="B"),
    ]
    domains = {1: "Schema", 2: "Table", 3: "Table"}

    found = access_columns(rows, lineage, domains)

    assert [json.loads(e) for e in found.direct_objects_accessed] == [
        {"objectDomain": "Schema", "objectId": 1, "objectName": "D.S"}
    ]
    assert [json.loads(e) for e in found.base_objects_accessed] == [
        {
            "objectDomain": "Table",
            "objectId": 2,
            "objectName": "D.S.T",
            "columns": [{"columnName": "A"}, {"columnName": "B"}],
        }
    ]
    source = {"columnName": "B", "objectDomain": "Table", "objectId": 2, "objectName": "D.S.T"}
    assert [json.loads(e) for e in found.objects_modified] == [
        {
            "objectDomain": "Table",
            "objectId": 3,
            "objectName": "D.S.N",
            "columns": [{"columnName": "X", "directSources": [source], "baseSources": [source]}],
        }
    ]
    assert found.objects_modified_by_ddl == [None]


def test_the_last_ddl_row_is_the_statements_object() -> None:
    rows = [
        _row(4, "DDL", object_name="D.S.T", operation="DROP"),
        _row(5, "DDL", object_name="D.S.T", operation="REPLACE", properties={"p": 1}),
    ]
    found = access_columns(rows, [], {4: "Table", 5: "Table"})

    (record,) = found.objects_modified_by_ddl
    assert record is not None
    assert json.loads(record) == {
        "objectDomain": "Table",
        "objectId": 5,
        "objectName": "D.S.T",
        "operationType": "REPLACE",
        "properties": {"p": 1},
    }
    assert found.objects_modified == found.direct_objects_accessed == []


def test_a_swap_is_two_records_one_per_object() -> None:
    """002: ALTER ... SWAP WITH gives two records with the same query id, one per swapped
    object, each naming the other as its swapTarget."""
    swap = {"name": {"value": "D.S.U"}, "swapTarget": {"value": "D.S.U", "objectId": 9}}
    rows = [
        _row(9, "DDL", object_name="D.S.U", operation="ALTER"),
        _row(8, "DDL", object_name="D.S.V", operation="ALTER", properties=swap),
    ]
    records = access_columns(rows, [], {8: "Table", 9: "Table"}).objects_modified_by_ddl
    assert [json.loads(r) for r in records if r is not None] == [
        {
            "objectDomain": "Table",
            "objectId": 8,
            "objectName": "D.S.V",
            "operationType": "ALTER",
            "properties": swap,
        },
        {
            "objectDomain": "Table",
            "objectId": 9,
            "objectName": "D.S.U",
            "operationType": "ALTER",
            "properties": {
                "name": {"value": "D.S.V"},
                "swapTarget": {"value": "D.S.V", "objectId": 8},
            },
        },
    ]


def test_columns_carry_the_column_id_recorded_with_the_statement() -> None:
    rows = [_row(2, "READ", object_name="D.S.T", columns=["A"], properties={"columnIds": {"A": 5}})]
    (entry,) = access_columns(rows, [], {2: "Table"}).direct_objects_accessed
    assert json.loads(entry)["columns"] == [{"columnId": 5, "columnName": "A"}]


def test_a_restore_modifies_its_table_without_columns() -> None:
    # RESTORE writes no columns of its own; the table is still modified.
    rows = [_row(2, "WRITE", object_name="D.S.T", operation="RESTORE")]
    (entry,) = access_columns(rows, [], {2: "Table"}).objects_modified
    assert json.loads(entry)["columns"] == []


@pytest.mark.parametrize(
    ("parents", "expected"),
    [({}, None), ({"q": "p"}, "p"), ({"q": "p", "p": "r"}, "r"), ({"q": "p", "p": "q"}, "p")],
)
def test_root_query_id_is_the_top_of_the_parent_chain(
    parents: dict[str, str], expected: str | None
) -> None:
    assert root_query_id("q", parents) == expected


# -- QUERY_HISTORY.QUERY_TYPE ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT 1", "SELECT"),
        ("WITH w AS (SELECT 1) SELECT * FROM w", "SELECT"),
        ("INSERT INTO T VALUES (1)", "INSERT"),
        ("CREATE TABLE N AS SELECT * FROM T", "CREATE_TABLE_AS_SELECT"),
        ("CREATE TABLE N CLONE T", "CREATE_TABLE"),
        ("CREATE OR REPLACE TRANSIENT SCHEMA S", "CREATE_SCHEMA"),
        ("ALTER TABLE T RENAME TO U", "RENAME_TABLE"),
        ("ALTER TABLE T ADD COLUMN C INT", "ALTER_TABLE_ADD_COLUMN"),
        ("ALTER TABLE T DROP COLUMN C", "ALTER_TABLE_DROP_COLUMN"),
        ("ALTER TABLE T SWAP WITH U", "ALTER_TABLE"),
        ("ALTER SCHEMA S RENAME TO R", "RENAME_SCHEMA"),
        ("ALTER DATABASE D SET DATA_RETENTION_TIME_IN_DAYS = 3", "ALTER_DATABASE"),
        ("ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 1", "ALTER_ACCOUNT"),
        ("TRUNCATE TABLE T", "TRUNCATE_TABLE"),
        ("UNDROP TABLE T", "UNDROP"),
        ("SHOW TABLES HISTORY", "SHOW"),
        ("RESTORE TABLE T AT(OFFSET => -60)", "RESTORE_TABLE"),
        ("FAILSAFE RECOVER 3 INTO T2", "FAILSAFE_RECOVER"),
        ("FAILSAFE LIST", "FAILSAFE_LIST"),
        ("LIFECYCLE RUN", "LIFECYCLE_RUN"),
        ("FROB THE TABLE", "UNKNOWN"),  # does not parse: UNKNOWN, as in Snowflake
        ("(" * 2000 + "SELECT 1", "UNKNOWN"),  # too deep to parse: still logged
        ("CREATE ROLE ANALYST", "CREATE_ROLE"),  # SPEC R37 statements
        ("CREATE USER ANA DEFAULT_ROLE = ANALYST", "CREATE_USER"),
        ("DROP ROLE ANALYST", "DROP_ROLE"),
        ("GRANT ROLE ANALYST TO USER ANA", "GRANT"),
        ("GRANT SELECT ON TABLE D.S.T TO ROLE ANALYST", "GRANT"),
        ("REVOKE SELECT ON TABLE D.S.T FROM ROLE ANALYST", "REVOKE"),
        ("SHOW GRANTS TO ROLE ANALYST", "SHOW"),
        ("USE ROLE ANALYST", "USE"),
    ],
)
def test_query_types_use_snowflakes_names(text: str, expected: str) -> None:
    assert query_type(text) == expected


def test_query_types_of_the_bigquery_dialect() -> None:
    assert query_type("SELECT * FROM d.t FOR SYSTEM_TIME AS OF '2026-01-01'", "bigquery") == (
        "SELECT"
    )
