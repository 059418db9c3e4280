"""Statement splitting and the ALTER ACCOUNT|DATABASE|SCHEMA parser (SPEC R25, R39)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from rewind.constants import EXPIRATION_OPTION, TABLE_EXPIRATION_OPTION
from rewind.errors import RewindError, SqlSyntaxError, UnsupportedError
from rewind.query_type import query_type
from rewind.sql.parse import (
    DEFAULT_KEYWORD,
    EMPTY_ONLY,
    SNAPSHOT,
    AlterContainer,
    flow_parts,
    parse,
    projection_texts,
    split,
)
from rewind.sql.show import like_pattern
from rewind.sql.spark_sql import to_spark
from rewind.sql.values import object_properties
from rewind.types import column_type, delta_spark, from_spark, spark_arrow

pytestmark = pytest.mark.unit


def test_split_respects_quotes_and_skips_empty_statements() -> None:
    text = "CREATE TABLE t (a INT); INSERT INTO t VALUES ('a;b');; SELECT \"x;y\" FROM t ;"
    assert split(text) == [
        "CREATE TABLE t (a INT)",
        "INSERT INTO t VALUES ('a;b')",
        'SELECT "x;y" FROM t',
    ]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("CREATE TASK T1 AS SELECT 1", "CREATE TASK"),
        ("CREATE OR REPLACE TASK T1 AS SELECT 1", "CREATE TASK"),
        ("DROP PIPE P", "DROP PIPE"),
        ("CREATE NOTEBOOK N", "CREATE NOTEBOOK"),
        ("CREATE STREAM S ON TABLE T", "CREATE STREAM"),
    ],
)
def test_snowflake_statements_over_other_object_kinds_are_unsupported_not_bad_syntax(
    text: str, kind: str
) -> None:
    """Statements Snowflake's pages print (CREATE TASK) are well formed: UNSUPPORTED names
    the kind Rewind does not keep (README "The documentation's own examples")."""
    with pytest.raises(UnsupportedError) as error:
        parse(text)
    assert f"does not support {kind} " in str(error.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("BEGIN", "BEGIN is not supported: each statement commits on its own"),
        ("begin transaction", "BEGIN is not supported"),
        ("START  TRANSACTION", "START TRANSACTION is not supported"),
        ("COMMIT", "COMMIT is not supported"),
        ("ROLLBACK WORK", "ROLLBACK is not supported"),
        ("EXPLAIN SELECT * FROM T", "EXPLAIN is not supported."),
        ("CALL PROC(1)", "CALL is not supported."),
        ("SHOW TRANSACTIONS", "does not support SHOW TRANSACTIONS"),
    ],
)
def test_statements_rewind_knows_and_does_not_run_are_unsupported(text: str, says: str) -> None:
    """SPEC R28, R39: a transaction would promise a ROLLBACK that takes nothing back (each
    statement commits alone): refused, naming the time-travel way back. EXPLAIN, CALL and
    SHOW of other kinds are Snowflake's own statements, not syntax errors."""
    with pytest.raises(UnsupportedError) as error:
        parse(text)
    assert says in error.value.message
    assert parse("SELECT 1 AS BEGIN_AT").tree is not None  # a word starting so is no statement


@pytest.mark.parametrize(
    "text",
    [
        "CREATE TABLE A3 CLONE A FROB",
        "CREATE OR REPLACE TRANSIENT DATABASE D3 CLONE D WITH TAG (x = 1)",
    ],
)
def test_a_statement_over_rewinds_own_kinds_it_cannot_read_is_a_syntax_error(text: str) -> None:
    """SPEC R39: a CREATE TABLE the parser cannot read is not called an object kind Rewind
    does not support (it supports tables): a syntax error quoting its start."""
    with pytest.raises(SqlSyntaxError) as error:
        parse(text)
    assert "unsupported statement 'CREATE " in error.value.message
    assert "only tables and their containers" not in error.value.message


@pytest.mark.parametrize(
    ("text", "dialect", "says"),
    [
        ("SELECT 'unterminated", "snowflake", "Error tokenizing"),
        ("SELEC 1 FROM", "snowflake", "Unexpected token"),
        ("CREATE TABLE (", "snowflake", "Expected table name but got '('"),
        ("SELECT FROM WHERE", "snowflake", "Expected table name but got 'WHERE'"),
        ("SELECT * FROM t WHERE (", "snowflake", "incomplete paren expression"),
        ("SELEC 1", "bigquery", "Unexpected token. Line 1, Col: 7. SELEC 1"),
    ],
)
def test_syntax_errors_have_a_stable_code_and_a_plain_message(
    text: str, dialect: str, says: str
) -> None:
    """SPEC R39: one line, stable code; where sqlglot points (its terminal underline) and
    the token or node it stopped at in the user's words, not sqlglot's objects."""
    with pytest.raises(SqlSyntaxError) as error:
        [parse(statement, dialect) for statement in split(text, dialect)]
    assert error.value.code == "SYNTAX_ERROR"
    assert "\n" not in error.value.message
    assert says in error.value.message
    assert not any(dump in error.value.message for dump in ("\x1b", "<Token", "<class"))


@pytest.mark.parametrize(
    ("text", "kind", "action", "keys"),
    [
        (
            "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 4",
            "ACCOUNT",
            "SET",
            ["MIN_DATA_RETENTION_TIME_IN_DAYS"],
        ),
        (
            "ALTER ACCOUNT UNSET DATA_RETENTION_TIME_IN_DAYS",
            "ACCOUNT",
            "UNSET",
            ["DATA_RETENTION_TIME_IN_DAYS"],
        ),
        (
            "alter schema d.s set data_retention_time_in_days = 3 comment = 'x y'",
            "SCHEMA",
            "SET",
            ["DATA_RETENTION_TIME_IN_DAYS", "COMMENT"],
        ),
        (
            "ALTER DATABASE IF EXISTS d UNSET DATA_RETENTION_TIME_IN_DAYS, COMMENT",
            "DATABASE",
            "UNSET",
            ["DATA_RETENTION_TIME_IN_DAYS", "COMMENT"],
        ),
        ('ALTER SCHEMA "My s" RENAME TO other', "SCHEMA", "RENAME", []),
        ("ALTER DATABASE a SWAP WITH b", "DATABASE", "SWAP", []),
    ],
)
def test_alter_container(text: str, kind: str, action: str, keys: list[str]) -> None:
    tree = parse(text).tree
    assert isinstance(tree, AlterContainer)
    assert (tree.kind, tree.action, list(tree.properties)) == (kind, action, keys)


def test_alter_container_values_and_names() -> None:
    tree = parse('ALTER SCHEMA "My s" SET DATA_RETENTION_TIME_IN_DAYS = -1').tree
    assert isinstance(tree, AlterContainer)
    assert tree.name is not None and tree.name.this.this == "My s" and tree.name.this.quoted
    value = tree.properties["DATA_RETENTION_TIME_IN_DAYS"]
    assert isinstance(value, exp.Neg)


@pytest.mark.parametrize(
    "text",
    [
        "ALTER ACCOUNT SET",
        "ALTER SCHEMA s FROB x",
        "ALTER SCHEMA SET X = 1",
        "ALTER DATABASE d RENAME TO",
        "ALTER SCHEMA a.b.c.d RENAME TO x",
        "GRANT x TO y z",
        "SHOW PARAMETERS IN TABLE",
        "SHOW PARAMETERS IN ACCOUNT x",
        "SHOW PARAMETERS IN TABLE t AT(OFFSET => -1)",
    ],
)
def test_bad_commands_are_syntax_errors(text: str) -> None:
    with pytest.raises(SqlSyntaxError):
        parse(text)


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("T%", "TABLE1", True),
        ("t%", "TABLE1", True),
        ("_A", "BA", True),
        ("_A", "BBA", False),
        ("a\\_b", "A_B", True),
        ("a\\_b", "AXB", False),
        ("%.%", "A.B", True),
        ("x", "X.", False),
    ],
)
def test_show_like_pattern(pattern: str, name: str, matches: bool) -> None:
    """SPEC R22: LIKE in SHOW is case-insensitive with % and _."""
    assert bool(like_pattern(pattern).fullmatch(name)) is matches


@pytest.mark.parametrize(
    ("sql", "spark"),
    [
        (
            "SELECT 'Wed, 04 Mar 2026 09:20:00 -0700'::timestamp_tz",
            "SELECT CAST('2026-03-04T16:20:00+00:00' AS TIMESTAMP)",
        ),
        (
            "SELECT 'Wed, 04 Mar 2026 09:20:00 -0700'::timestamp_ntz",
            "SELECT CAST('2026-03-04T09:20:00' AS TIMESTAMP_NTZ)",
        ),
        ("SELECT 'not a time'::timestamp", "SELECT CAST('not a time' AS TIMESTAMP)"),
    ],
)
def test_documented_timestamp_literals_reach_spark_as_iso_8601(sql: str, spark: str) -> None:
    """Snowflake's own examples cast RFC 2822 text; Spark reads ISO 8601 only. What no
    spelling matches is left for Spark's CAST error to name (SPEC R39)."""
    assert to_spark(sqlglot.parse_one(sql, read="snowflake")) == spark


@pytest.mark.parametrize(
    ("sql", "dialect", "marks"),
    [
        ('INSERT INTO t VALUES (1, DEFAULT), (DEFAULT, "DEFAULT")', "snowflake", 2),
        ("UPDATE t SET v = DEFAULT WHERE id = 1", "snowflake", 1),
        (
            "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET v = DEFAULT "
            "WHEN NOT MATCHED THEN INSERT (a, v) VALUES (s.a, DEFAULT)",
            "snowflake",
            2,
        ),
        ("INSERT INTO ds.t (a, b) VALUES (1, DEFAULT)", "bigquery", 1),
    ],
)
def test_default_as_a_value_is_one_mark(sql: str, dialect: str, marks: int) -> None:
    """SPEC R40: DEFAULT as a value of INSERT ... VALUES, UPDATE ... SET and MERGE's
    clauses is one mark, whatever sqlglot read (a Var, a column), which the statement
    makes the column's default (tests/spark/test_dml.py::
    test_column_defaults_fill_what_a_statement_leaves_out_in_both_dialects_r40); a quoted
    "DEFAULT" is a column (Spark said `DEFAULT` cannot be resolved)."""
    tree = parse(sql, dialect).tree
    assert isinstance(tree, exp.Expression)
    found = [v for v in tree.find_all(exp.Var) if v.name == DEFAULT_KEYWORD]
    assert len(found) == marks
    assert not any(
        c.name.upper() == "DEFAULT" and not c.this.quoted for c in tree.find_all(exp.Column)
    )


def test_bigquery_drop_schema_is_restrict_unless_cascade() -> None:
    """BigQuery deletes a dataset holding tables only with CASCADE (Snowflake: CASCADE by
    default); the behaviour: tests/spark/test_clone.py::test_bigquery_dataset_time_travel_hours."""
    assert parse("DROP SCHEMA p.ds", "bigquery").tree.meta[EMPTY_ONLY] is True
    assert parse("DROP SCHEMA p.ds CASCADE", "bigquery").tree.meta[EMPTY_ONLY] is False
    assert EMPTY_ONLY not in parse("DROP SCHEMA d.s").tree.meta


def test_snowflake_calendar_functions_are_rewritten_for_snowflake_only() -> None:
    """BigQuery's EXTRACT(DAYOFWEEK ...) is Spark's (1 = Sunday); Snowflake's is 0 = Sunday
    (the Spark-backed check: test_dml.py::test_snowflake_functions_answer_as_in_snowflake)."""
    snowflake = sqlglot.parse_one("SELECT DAYOFWEEK(d), TRY_TO_DATE('x')", read="snowflake")
    assert to_spark(snowflake) == ("SELECT ((WEEKDAY(`D`) + 1) % 7), TRY_CAST('x' AS DATE)")
    bigquery = sqlglot.parse_one("SELECT EXTRACT(DAYOFWEEK FROM d)", read="bigquery")
    assert to_spark(bigquery, "bigquery") == "SELECT EXTRACT(DAYOFWEEK FROM `D`)"


def test_an_array_index_is_null_past_the_end_as_in_snowflake() -> None:
    """Snowflake's ``tags[5]`` past the end is NULL; ANSI Spark's ``tags[5]`` fails the
    query, its ``GET`` answers NULL. By name (a struct field, a map key) stays as it is
    (the Spark-backed check: tests/spark/test_external_tables.py::
    test_a_table_with_nested_columns_and_table_features_is_protected_as_it_is_r40_r41_r43)."""
    tree = sqlglot.parse_one("SELECT tags[0], tags[i + 1], addr['city'] FROM t", "snowflake")
    assert to_spark(tree) == "SELECT GET(`TAGS`, 0), GET(`TAGS`, `I` + 1), `ADDR`['city'] FROM `T`"


def test_a_path_into_a_nested_column_of_a_bound_table_is_subscripts() -> None:
    """``addr:city`` on an OBJECT column (Spark's struct) reads the field; on a VARCHAR
    holding JSON, or on a column that may be another source's (a subquery's, two tables'),
    it stays Spark's JSON path; ARRAY_CONTAINS and OBJECT_KEYS the same (SPEC R43; the
    Spark-backed check: test_external_tables.py::
    test_a_table_with_nested_columns_and_table_features_is_protected_as_it_is_r40_r41_r43)."""
    from rewind.sql import paths

    types = {"__rw_1": {"ADDR": "struct<city:string,geo:struct<lat:double>>", "J": "string"}}
    types["__rw_1"] |= {"M": "map<string,int>", "TAGS": "array<string>"}
    types["__rw_2"] = {"ADDR": "string", "TAGS": "array<string>"}
    cases = {
        "SELECT addr:city, t.addr:geo.lat, GET_PATH(addr, 'geo.lat'), j:a FROM __rw_1 AS t": (
            "SELECT `ADDR`['city'], `T`.`ADDR`['geo']['lat'], `ADDR`['geo']['lat'], "
            "GET_JSON_OBJECT(`J`, '$.a') FROM `__RW_1` AS `T`"
        ),
        'SELECT GET(tags, 2), tags:"x"[0] FROM __rw_2': (
            "SELECT GET(`TAGS`, 2), GET(`TAGS`['x'], 0) FROM `__RW_2`"
        ),
        "SELECT s.addr:c, addr:c FROM __rw_1 AS t, (SELECT '{}' AS addr) AS s": (
            "SELECT GET_JSON_OBJECT(`S`.`ADDR`, '$.c'), GET_JSON_OBJECT(`ADDR`, '$.c') "
            "FROM `__RW_1` AS `T`, (SELECT '{}' AS `ADDR`) AS `S`"
        ),
        # Snowflake's functions of them, which sqlglot writes for VARIANT and JSON text
        "SELECT ARRAY_CONTAINS('b'::VARIANT, tags), OBJECT_KEYS(t.addr), OBJECT_KEYS(m), "
        "OBJECT_KEYS(j) FROM __rw_1 AS t": (
            "SELECT ARRAY_CONTAINS(`TAGS`, 'b'), IF(`T`.`ADDR` IS NULL, NULL, "
            "ARRAY('city', 'geo')), MAP_KEYS(`M`), JSON_OBJECT_KEYS(`J`) FROM `__RW_1` AS `T`"
        ),
        "SELECT a.addr:c, addr:c FROM __rw_1 AS a JOIN __rw_2 AS b ON TRUE": (
            "SELECT `A`.`ADDR`['c'], GET_JSON_OBJECT(`ADDR`, '$.c') "
            "FROM `__RW_1` AS `A` JOIN `__RW_2` AS `B` ON TRUE"
        ),
    }
    for text, spark in cases.items():
        tree = sqlglot.parse_one(text, "snowflake")
        paths.typed(tree, types)
        assert to_spark(tree) == spark, text


def test_nested_delta_types_are_spark_arrow_and_snowflake_structured_types() -> None:
    """Other engines' array, map and struct columns (SPEC R41): one Spark DDL type each,
    its Arrow type, and Snowflake's structured type name; a type Rewind cannot read is
    refused by name."""
    struct = {
        "type": "struct",
        "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "integer"}],
    }
    kind = {
        "type": "map",
        "keyType": "string",
        "valueType": {"type": "array", "elementType": struct},
    }
    spark = delta_spark(kind)
    assert spark == "map<string,array<struct<city:string,zip:int>>>"
    assert str(spark_arrow(spark)) == ("map<string, list<item: struct<city: string, zip: int32>>>")
    assert from_spark(spark).sql == "MAP(VARCHAR, ARRAY(OBJECT(city VARCHAR, zip NUMBER(38,0))))"
    assert from_spark("decimal(10,2)").sql == "NUMBER(10,2)"
    # A struct's field names keep their case (Spark reads them case-sensitively here)
    nested = from_spark("struct<City:string>")
    assert (nested.sql, nested.spark) == ("OBJECT(City VARCHAR)", "struct<City:string>")
    # Delta's variant is a VARIANT column; not inside a nested one (not stored yet)
    assert (delta_spark("variant"), from_spark("variant").sql) == ("variant", "VARIANT")
    with pytest.raises(UnsupportedError, match="VARIANT inside"):
        from_spark("array<variant>")
    for unreadable in ["interval", {"type": "struct", "fields": [{"name": "a:b", "type": "long"}]}]:
        with pytest.raises(UnsupportedError):
            delta_spark(unreadable)


def test_an_untyped_array_or_object_column_is_a_variant_of_that_kind_r20() -> None:
    """Snowflake's semi-structured ARRAY and OBJECT columns (no element types) were
    refused; they are Delta variants shown as declared (SPEC R20). Inside another type
    (a variant inside an array) one is still refused, saying to name its elements' types."""
    for declared in ["ARRAY", "OBJECT"]:
        tree = sqlglot.parse_one(f"CREATE TABLE t (c {declared})", "snowflake")
        kind = column_type(tree.this.expressions[0].args["kind"])
        assert (kind.sql, kind.spark) == (declared, "variant")
    tree = sqlglot.parse_one("CREATE TABLE t (c ARRAY(ARRAY))", "snowflake")
    with pytest.raises(UnsupportedError, match="name its elements' types"):
        column_type(tree.this.expressions[0].args["kind"])
    assert column_type(sqlglot.parse_one("CAST(x AS ARRAY(VARCHAR))", "snowflake").to).spark == (
        "array<string>"
    )
    # VARIANT and BigQuery's JSON (which reads as "VARIANT") are Delta's variant
    for declared, dialect in [("VARIANT", "snowflake"), ("JSON", "bigquery")]:
        tree = sqlglot.parse_one(f"CREATE TABLE t (c {declared})", dialect)
        kind = column_type(tree.this.expressions[0].args["kind"])
        assert (kind.sql, kind.spark, kind.delta()) == ("VARIANT", "variant", "variant")


def test_a_temporary_table_is_refused_saying_what_to_use() -> None:
    """Snowflake's and BigQuery's TEMPORARY tables read "Unsupported property: TEMPORARY";
    the refusal says Rewind keeps its tables and names TRANSIENT instead."""
    for text, dialect in [
        ("CREATE TEMPORARY TABLE t (a INT)", "snowflake"),
        ("CREATE TEMP TABLE t AS SELECT 1 AS x", "bigquery"),
    ]:
        properties = sqlglot.parse_one(text, dialect).args["properties"]
        with pytest.raises(UnsupportedError, match="TRANSIENT"):
            object_properties(properties)


def test_qualify_reaches_spark_as_qualify() -> None:
    """sqlglot's Spark SQL rewrote QUALIFY as a subquery with a ``_w`` column that
    ``SELECT *`` returned; Spark 4 reads QUALIFY (the Spark-backed check:
    tests/spark/test_dml.py::test_qualify_dedupes_with_the_tables_own_columns)."""
    tree = sqlglot.parse_one(
        "SELECT * FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY a) = 1", "snowflake"
    )
    assert to_spark(tree) == (
        "SELECT * FROM `T` QUALIFY ROW_NUMBER() OVER (ORDER BY `A` NULLS LAST) = 1"
    )


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("SELECT $1 FROM t", "Positional column reference $1 is not supported"),
        (
            "SELECT * FROM t WHERE a = $lim",
            "Session variable $LIM cannot be read in a SQL function",
        ),
        ("SELECT * FROM t SAMPLE (10) SEED (7)", "SAMPLE ... SEED (REPEATABLE) is not supported"),
        ("SELECT * RENAME (a AS b) FROM t", "SELECT * RENAME is not supported"),
        ("SELECT * REPLACE (1 AS a) FROM t", "SELECT * REPLACE is not supported"),
        ("SELECT * ILIKE '%a' FROM t", "SELECT * ILIKE is not supported"),
        # sqlglot wrote it as the month's last day, with a warning nobody read
        ("SELECT LAST_DAY(d, 'day') FROM t", "Date parts are not supported in LAST_DAY"),
    ],
)
def test_what_spark_would_misread_is_refused_by_name(sql: str, says: str) -> None:
    """SPEC R39: Spark answered these with "`AS` cannot be resolved" and a parse error at
    the seed; they are refused, saying what is not supported."""
    with pytest.raises(UnsupportedError) as error:
        to_spark(sqlglot.parse_one(sql, read="snowflake"))
    assert says in error.value.message


@pytest.mark.parametrize(
    ("sql", "dialect", "read_as"),
    [
        ("CREATE TABLE b2 LIKE b", "snowflake", "CREATE TABLE b2 AS SELECT * FROM b LIMIT 0"),
        (
            "CREATE OR REPLACE TRANSIENT TABLE d.s.b2 LIKE d.s.b COMMENT = 'x'",
            "snowflake",
            "CREATE OR REPLACE TRANSIENT TABLE d.s.b2 COMMENT='x' AS SELECT * FROM d.s.b LIMIT 0",
        ),
        (
            "CREATE TABLE ds.b2 LIKE ds.b",
            "bigquery",
            "CREATE TABLE ds.b2 AS SELECT * FROM ds.b LIMIT 0",
        ),
    ],
)
def test_create_table_like_is_read_as_an_empty_ctas(sql: str, dialect: str, read_as: str) -> None:
    """Issue 13: ``CREATE TABLE b2 LIKE b`` was an INTERNAL_ERROR (KeyError: 'value')."""
    tree = parse(sql, dialect).tree
    assert isinstance(tree, exp.Expression)
    assert tree.sql(dialect) == read_as


def test_create_table_like_with_columns_is_a_syntax_error() -> None:
    with pytest.raises(SqlSyntaxError):
        parse("CREATE TABLE b2 (x INT) LIKE b")


@pytest.mark.parametrize(
    ("sql", "read_as"),
    [
        ("CREATE SCHEMA ds", "CREATE SCHEMA ds DATA_RETENTION_TIME_IN_DAYS=7"),
        (
            "CREATE SCHEMA ds OPTIONS (max_time_travel_hours = 72, description = 'x')",
            "CREATE SCHEMA ds COMMENT='x' DATA_RETENTION_TIME_IN_DAYS=3",
        ),
        (
            "CREATE TABLE ds.t (a INT64) OPTIONS (description = 'y')",
            "CREATE TABLE ds.t (a BIGINT) COMMENT='y'",
        ),
        ("ALTER TABLE ds.t SET OPTIONS (description = 'z')", "ALTER TABLE ds.t SET COMMENT='z'"),
        (
            "CREATE SCHEMA ds OPTIONS (default_table_expiration_days = 0.5)",
            f"CREATE SCHEMA ds DATA_RETENTION_TIME_IN_DAYS=7 {TABLE_EXPIRATION_OPTION}=0.5",
        ),
    ],
)
def test_bigquery_dataset_options_are_its_retention_and_comment(sql: str, read_as: str) -> None:
    """Issue 13: the options were accepted and ignored; BigQuery's default is 7 days. A
    table's description is its comment too (it was refused); a dataset's default table
    lifetime is the expiration of each table made in it (rewind.sql.snapshots)."""
    tree = parse(sql, "bigquery").tree
    assert isinstance(tree, exp.Expression)
    assert tree.sql("snowflake") == read_as


@pytest.mark.parametrize(
    ("sql", "code"),
    [
        ("CREATE SCHEMA ds OPTIONS (max_time_travel_hours = 24)", "INVALID_RETENTION"),
        ("CREATE SCHEMA ds OPTIONS (max_time_travel_hours = 100)", "INVALID_RETENTION"),
        ("CREATE SCHEMA ds OPTIONS (is_case_insensitive = TRUE)", "SYNTAX_ERROR"),
        ("CREATE SCHEMA ds OPTIONS (default_table_expiration_days = 0.01)", "INVALID_VALUE"),
        ("CREATE SCHEMA ds OPTIONS (default_table_expiration_days = '1')", "INVALID_VALUE"),
        ("ALTER SCHEMA ds SET OPTIONS (default_table_expiration_days = -1)", "INVALID_VALUE"),
    ],
)
def test_bigquery_dataset_options_rewind_cannot_honour_are_refused(sql: str, code: str) -> None:
    with pytest.raises(RewindError) as refused:
        parse(sql, "bigquery")
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            "SHOW TABLES\n  ->> SELECT \"name\" FROM $1 WHERE \"name\" IN ('A', '->>')",
            ["SHOW TABLES", "SELECT \"name\" FROM $1 WHERE \"name\" IN ('A', '->>')"],
        ),
        (
            "SHOW TABLES ->> SELECT * FROM $1 ->> SELECT * FROM $2",
            ["SHOW TABLES", "SELECT * FROM $1", "SELECT * FROM $2"],
        ),
        ("SELECT 1", ["SELECT 1"]),
    ],
)
def test_the_flow_operator_splits_at_its_top_level_arrows(text: str, parts: list[str]) -> None:
    """Issue 13: Snowflake's ``->>`` (000's retention checks); an arrow in a string stays."""
    assert flow_parts(text) == parts


@pytest.mark.parametrize(
    "source",
    [
        "LATERAL FLATTEN(input => a.arr, recursive => true) f",
        "LATERAL FLATTEN(input => a.arr, path => 'x') f",
        "LATERAL FLATTEN(outer => true) f",
        "LATERAL FLATTEN(input => a.arr, outer => 'yes') f",
    ],
)
def test_flatten_options_rewind_cannot_honour_are_refused(source: str) -> None:
    with pytest.raises(UnsupportedError):
        parse(f"SELECT f.value FROM t a, {source}")


def test_flatten_becomes_a_spark_generator_with_snowflakes_six_columns() -> None:
    spark = to_spark(parse("SELECT f.value FROM t a, TABLE(FLATTEN(a.arr)) f").tree)
    assert "LATERAL INLINE(TRANSFORM(`A`.`ARR`, " in spark
    assert "AS `F`(`SEQ`, `KEY`, `PATH`, `INDEX`, `VALUE`, `THIS`)" in spark
    nested = to_spark(parse("SELECT c.value FROM t, LATERAL FLATTEN(input => v:cols) c").tree)
    # JSON text: an object's entries, else an array's elements
    assert (
        "TRANSFORM(MAP_ENTRIES(FROM_JSON(GET_JSON_OBJECT(`V`, '$.cols'), 'MAP<STRING, STRING>'"
        in nested
    )
    assert "TRANSFORM(FROM_JSON(GET_JSON_OBJECT(`V`, '$.cols'), 'ARRAY<STRING>')" in nested


def test_bigquery_numeric_keeps_its_nine_decimals_and_bignumeric_is_refused() -> None:
    # BigQuery's NUMERIC is NUMERIC(38, 9): read as Snowflake's NUMBER (38, 0) it stored
    # 1.5 as 2. BIGNUMERIC's 76 digits fit no Delta decimal.
    tree = parse("CREATE TABLE ds.t (a NUMERIC, b NUMERIC(10, 2), c DECIMAL(7))", "bigquery").tree
    assert isinstance(tree, exp.Create)
    types = [column_type(c.args["kind"]).sql for c in tree.this.expressions]
    assert types == ["NUMBER(38,9)", "NUMBER(10,2)", "NUMBER(38,0)"]
    cast = parse("SELECT CAST(x AS NUMERIC) FROM ds.t", "bigquery").tree
    assert isinstance(cast, exp.Expression)
    assert "CAST(`X` AS DECIMAL(38, 9))" in to_spark(cast)
    with pytest.raises(UnsupportedError, match="BIGNUMERIC"):
        parse("CREATE TABLE ds.t (a BIGNUMERIC)", "bigquery")


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("SHOW PARAMETERS", "ACCOUNT", None),
        ("show parameters like '%RETENTION%' in account", "ACCOUNT", None),
        ("SHOW PARAMETERS LIKE 'DATA%' IN TABLE d.s.t", "TABLE", "d.s.t"),
        ('SHOW PARAMETERS IN SCHEMA "My Db".s', "SCHEMA", '"My Db".s'),
    ],
)
def test_show_parameters_is_read_as_a_listing_over_one_scope(
    text: str, kind: str, name: str | None
) -> None:
    # Snowflake's SHOW PARAMETERS (sqlglot reads it as a bare command): Rewind's retention
    # parameters of the account or of one object (SPEC R5, R7).
    tree = parse(text).tree
    assert isinstance(tree, exp.Show) and tree.name == "PARAMETERS"
    assert tree.args["scope_kind"] == kind
    scope = tree.args.get("scope")
    assert (scope.sql("snowflake") if scope else None) == name
    with pytest.raises(UnsupportedError, match="SHOW PARAMETERS IN WAREHOUSE is not supported"):
        parse("SHOW PARAMETERS IN WAREHOUSE w")


@pytest.mark.parametrize(
    ("text", "read_as"),
    [
        (
            "CREATE TABLE a CLONE b DATA_RETENTION_TIME_IN_DAYS = 3",
            "CREATE TABLE a DATA_RETENTION_TIME_IN_DAYS=3 CLONE b",
        ),
        (
            "CREATE SCHEMA s2 CLONE s BEFORE(STATEMENT => 'x') COMMENT = 'p = q'",
            "CREATE SCHEMA s2 COMMENT='p = q' CLONE s BEFORE (STATEMENT => 'x')",
        ),
        (
            "CREATE OR REPLACE TABLE t CLONE t AT(OFFSET => -60) COPY GRANTS",
            "CREATE OR REPLACE TABLE t COPY GRANTS CLONE t AT (OFFSET => -60)",
        ),
    ],
)
def test_a_clones_properties_after_its_source_are_read_as_snowflake_writes_them(
    text: str, read_as: str
) -> None:
    assert parse(text).tree.sql("snowflake") == read_as
    parsed = parse(
        "CREATE DATABASE d2 CLONE d AT(OFFSET => -60) "
        "IGNORE TABLES WITH INSUFFICIENT DATA RETENTION DATA_RETENTION_TIME_IN_DAYS = 1"
    )
    assert parsed.tree.meta  # the IGNORE clause is kept
    assert "DATA_RETENTION_TIME_IN_DAYS=1 CLONE d" in parsed.tree.sql("snowflake")
    # Only what sqlglot cannot read is reordered: a CTAS's column named CLONE stays put.
    ctas = "CREATE TABLE t AS SELECT clone FROM x WHERE a = 1"
    assert parse(ctas).tree.sql("snowflake") == ctas


def test_comment_on_is_read_as_alter_set_comment() -> None:
    # Snowflake's COMMENT ON: the ALTER ... SET COMMENT it stands for (same privilege and
    # audit); a column's is its ALTER TABLE ... ALTER COLUMN ... COMMENT (it was refused).
    tree = parse("COMMENT IF EXISTS ON TABLE d.s.t IS 'it''s'").tree
    assert isinstance(tree, exp.Alter)
    assert tree.sql("snowflake") == "ALTER TABLE IF EXISTS d.s.t SET COMMENT='it\\'s'"
    schema = parse("COMMENT ON SCHEMA d.s IS 'x'").tree
    assert isinstance(schema, AlterContainer) and schema.kind == "SCHEMA"
    column = parse("COMMENT ON COLUMN d.s.t.\"a\" IS 'x'").tree
    assert isinstance(column, exp.Alter)
    assert column.sql("snowflake") == "ALTER TABLE d.s.t ALTER COLUMN \"a\" COMMENT 'x'"
    with pytest.raises(UnsupportedError, match="COMMENT ON FUNCTION is not supported"):
        parse("COMMENT ON FUNCTION f IS 'x'")


def test_bigquery_undrop_schema_and_snapshot_tables() -> None:
    # BigQuery's UNDROP SCHEMA is the dataset's UNDROP (SPEC R21, R27); its table snapshots
    # are clones marked read-only (rewind.sql.snapshots), their OPTIONS after the point.
    tree = parse("UNDROP SCHEMA `proj.ds`", "bigquery").tree
    assert isinstance(tree, exp.Undrop) and tree.args["kind"] == "SCHEMA"
    assert [i.name for i in (tree.this.args["db"], tree.this.this)] == ["proj", "ds"]
    expiring = f"{EXPIRATION_OPTION}=TIMESTAMPADD(HOUR, '48', CURRENT_TIMESTAMP())"
    for text, read_as in (
        ("CREATE SNAPSHOT TABLE ds.s CLONE ds.t", "CREATE TABLE ds.s CLONE ds.t"),
        (
            "create or replace snapshot table `p.ds.s` clone p.ds.t@1796122800000",
            "CREATE OR REPLACE TABLE p.ds.s CLONE p.ds.t "
            "AT (TIMESTAMP => '2026-12-01T11:00:00+00:00')",
        ),
        (
            "CREATE SNAPSHOT TABLE IF NOT EXISTS ds.s CLONE ds.t FOR SYSTEM_TIME AS OF "
            "TIMESTAMP '2026-12-01 11:00:00+00' OPTIONS (description = 'x', "
            "expiration_timestamp = TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 48 HOUR))",
            f"CREATE TABLE IF NOT EXISTS ds.s COMMENT='x' {expiring} CLONE ds.t "
            "AT (TIMESTAMP => CAST('2026-12-01 11:00:00+00' AS TIMESTAMPTZ))",
        ),
        ("DROP SNAPSHOT TABLE IF EXISTS ds.s", "DROP TABLE IF EXISTS ds.s"),
    ):
        tree = parse(text, "bigquery").tree
        assert tree.meta.get(SNAPSHOT) is True
        assert tree.sql("snowflake") == read_as
    # A table's expiration, and a plain clone's OPTIONS after its point (refused before).
    for text, read_as in (
        (
            "CREATE TABLE ds.c CLONE ds.t FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP() "
            "OPTIONS (expiration_timestamp = NULL)",
            f"CREATE TABLE ds.c {EXPIRATION_OPTION}=NULL CLONE ds.t "
            "AT (TIMESTAMP => CURRENT_TIMESTAMP())",
        ),
        (
            "ALTER TABLE ds.t SET OPTIONS (expiration_timestamp = TIMESTAMP '2027-01-01')",
            f"ALTER TABLE ds.t SET {EXPIRATION_OPTION}=CAST('2027-01-01' AS TIMESTAMPTZ)",
        ),
    ):
        tree = parse(text, "bigquery").tree
        assert SNAPSHOT not in tree.meta
        assert tree.sql("snowflake") == read_as
    for text, code in (
        ("CREATE SNAPSHOT TABLE ds.s (a INT64)", "SYNTAX_ERROR"),
        ("CREATE SNAPSHOT TABLE ds.s AS SELECT 1 AS a", "SYNTAX_ERROR"),
        ("CREATE SCHEMA ds OPTIONS (expiration_timestamp = NULL)", "SYNTAX_ERROR"),
    ):
        with pytest.raises(RewindError) as error:
            parse(text, "bigquery")
        assert error.value.code == code, text
    # Snowflake has no such option: the name BigQuery's dialect hands on is not reachable.
    snowflake = parse("CREATE TABLE t (a INT) EXPIRATION_TIMESTAMP = '2027-01-01'").tree
    with pytest.raises(UnsupportedError, match="Unsupported parameter: EXPIRATION_TIMESTAMP"):
        object_properties(snowflake.args["properties"])


def test_a_stored_type_reads_as_a_later_one_only_without_loss() -> None:
    """What decides whether another engine's schema change replaced the table
    (``Snapshot.replaces``, SPEC R18, R41): a widening or a string reads the old files; a
    narrowing or a string read as a number does not."""
    from rewind.types import reads_as

    widening = [
        ("int", "bigint"),
        ("tinyint", "int"),
        ("int", "decimal(10,0)"),
        ("int", "double"),
        ("float", "double"),
        ("decimal(5,2)", "decimal(10,2)"),
        ("date", "timestamp"),
        ("bigint", "string"),
        ("array<int>", "array<int>"),
    ]
    losing = [
        ("bigint", "int"),
        ("string", "bigint"),
        ("bigint", "double"),
        ("int", "decimal(9,0)"),
        ("decimal(10,2)", "decimal(10,1)"),
        ("decimal(10,2)", "decimal(10,4)"),
        ("timestamp", "date"),
        ("array<int>", "string"),
    ]
    assert [pair for pair in widening if not reads_as(*pair)] == []
    assert [pair for pair in losing if reads_as(*pair)] == []


@pytest.mark.parametrize(
    ("statement", "texts"),
    [
        (
            "SELECT DISTINCT TOP 5 zeroifnull(amt), count( * ), x:y::string AS z FROM t",
            ["zeroifnull(amt)", "count( * )", "x:y::string AS z"],
        ),
        ("SELECT 'a,b', f(a, b) FROM t ORDER BY 1", ["'a,b'", "f(a, b)"]),
        ("WITH c AS (SELECT 1, 2) SELECT q + 1 FROM c UNION SELECT 3", ["q + 1"]),
        ("CREATE TABLE t (a, b) AS SELECT x + 1, y FROM z", ["x + 1", "y"]),
        ("(SELECT a + 1 FROM x) UNION SELECT b + 1 FROM y", None),
        ("CREATE TABLE t AS (SELECT a + 1 FROM x) UNION SELECT b + 1 FROM y", None),
        ("CREATE TABLE t CLONE s", None),
    ],
)
def test_a_select_lists_its_columns_as_written(statement: str, texts: list[str] | None) -> None:
    """The texts Snowflake heads unnamed result columns with (SPEC R26): the first
    SELECT's, of a query or a CTAS; none where the first SELECT is not plainly first."""
    assert projection_texts(statement) == texts


def test_unset_and_show_variables_parse_as_snowflake_writes_them() -> None:
    # sqlglot reads UNSET x as an expression and SHOW VARIABLES as a command: both were
    # refused; UNSET of no name or of an expression is a syntax error.
    unset = parse('UNSET (lo, "Hi")').tree
    assert isinstance(unset, exp.Set) and unset.args["unset"]
    assert [item.this.sql("snowflake") for item in unset.expressions] == ["lo", '"Hi"']
    assert isinstance(parse("unset qid").tree, exp.Set)
    show = parse("SHOW VARIABLES LIKE 'Q%'").tree
    assert isinstance(show, exp.Show) and str(show.this) == "VARIABLES"
    assert show.args["like"].this == "Q%"
    for bad in ("UNSET", "UNSET 1 + 2", "UNSET (a, b + 1)", "UNSET a.b"):
        with pytest.raises(SqlSyntaxError):
            parse(bad)
    assert [query_type(s) for s in ("SET x = 1", "UNSET x", "SHOW VARIABLES")] == [
        "SET",
        "UNSET",
        "SHOW",
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY()) AT(OFFSET => -60)",
        "SELECT * FROM TABLE(FLATTEN(input => x)) AS f BEFORE(STATEMENT => 'q')",
        'SELECT * FROM TABLE(GENERATOR(ROWCOUNT => 3)) "at" AT(OFFSET => -1)',
    ],
)
def test_a_point_on_a_table_function_is_refused_not_dropped(statement: str) -> None:
    # SPEC R16, R39: sqlglot drops AT|BEFORE after TABLE(...): the present was read where
    # a past point was asked for. A table function has no time travel: refused by name.
    with pytest.raises(UnsupportedError) as refused:
        parse(statement)
    assert "a table function has no time travel" in refused.value.message
    parse("SELECT * FROM TABLE(FLATTEN(input => x)) f, T AT(OFFSET => -1)")  # T's point: kept
