"""Column defaults (SPEC R40): Snowflake's and BigQuery's ``DEFAULT expr`` of a column.

A default is kept as Delta keeps it: the field's ``CURRENT_DEFAULT``, Spark SQL, under
the writer feature ``allowColumnDefaults`` (``rewind.storage.snapshot``), so that
delta-spark's writers give Rewind's defaults and Rewind gives those delta-spark's
``DEFAULT`` set. A row written without a value for such a column gets the default's
value, computed as the statement writes it, row by row (CURRENT_TIMESTAMP the
statement's clock, SPEC R15; a random or UUID default one per row, as in BigQuery); the
keyword DEFAULT as a value of INSERT ... VALUES, UPDATE ... SET and MERGE's clauses
(:data:`rewind.sql.parse.DEFAULT_KEYWORD`) names it, and NULL for a column without one,
as in both products.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from rewind.errors import InvalidValue, UnsupportedError
from rewind.sql.parse import DEFAULT_KEYWORD
from rewind.sql.spark_sql import to_spark
from rewind.storage.columns import Column
from rewind.storage.snapshot import Snapshot

# What a default may not hold: it is one value for a new row, of no other row or table
# (Snowflake: "a constant, a sequence or a simple expression"; BigQuery: a literal or
# one of its CURRENT_* / GENERATE_UUID / RAND / SESSION_USER functions).
_NOT_IN_A_DEFAULT = (exp.Column, exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Star)


def declared(col: exp.ColumnDef, dialect: str, spark_type: str) -> str | None:
    """A column definition's ``DEFAULT expr`` as Delta keeps it (Spark SQL); None for a
    column without one. ``spark_type``: the column's.

    Raises:
        UnsupportedError: a default that reads a column, a table or other rows.
        InvalidValue: a text default that is no value of the column's type.
    """
    for constraint in col.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.DefaultColumnConstraint):
            return spark_text(kind.this, col, dialect, spark_type)
    return None


def spark_text(value: exp.Expression, col: exp.Expression, dialect: str, spark_type: str) -> str:
    """``value``, the default of a column of ``spark_type`` in ``dialect``, as Spark SQL
    (see :func:`declared`)."""
    if isinstance(value, _NOT_IN_A_DEFAULT) or value.find(*_NOT_IN_A_DEFAULT):
        raise UnsupportedError(
            f"A column default is a constant or a function of the moment a row is written "
            f"(CURRENT_TIMESTAMP(), UUID_STRING()), of no column, table or other row: "
            f"{col.sql(dialect)}."
        )
    if isinstance(value, exp.Literal) and value.is_string and not _reads_as(value.name, spark_type):
        raise InvalidValue(
            f"Default value data type does not match data type for column: {col.sql(dialect)}."
        )
    return to_spark(value.transform(_spark_clock), dialect)


_BOOLEAN_TEXTS = {"true", "false", "t", "f", "yes", "no", "y", "n", "on", "off", "1", "0"}


def _reads_as(text: str, spark_type: str) -> bool:
    """Whether a text default converts to a number, boolean or date column's type, as
    Snowflake checks it when the table is made (any text is a string column's)."""
    text = text.strip()
    if spark_type in ("tinyint", "smallint", "int", "bigint", "float", "double") or (
        spark_type.startswith("decimal")
    ):
        try:
            return Decimal(text).is_finite() or spark_type in ("float", "double")
        except InvalidOperation:
            return False
    if spark_type == "boolean":
        return text.lower() in _BOOLEAN_TEXTS
    if spark_type == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return False
    return True


def _spark_clock(node: exp.Expression) -> exp.Expression:
    """BigQuery's CURRENT_DATETIME() (UTC's wall clock), which Spark has not, as Spark's
    ``CAST(CURRENT_TIMESTAMP() AS TIMESTAMP_NTZ)``, so that delta-spark computes it too."""
    if isinstance(node, exp.CurrentDatetime) and node.this is None:
        return exp.cast(exp.CurrentTimestamp(), exp.DataType.build("TIMESTAMPNTZ"))
    return node


def value_of(base: Snapshot, column: Column) -> exp.Expression:
    """What a row written without a value for ``column`` of ``base``'s table holds: its
    default (:attr:`Snapshot.defaults`, Spark SQL read back as a tree that a statement's
    query carries, so that the session's clock and user bind it), cast to the column's
    type; NULL of that type for a column without one."""
    kind = exp.DataType.build(column.spark, dialect="spark")
    text = base.defaults.get(column.physical)
    if text is None:
        return exp.cast(exp.null(), kind)
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except SqlglotError as exc:
        raise UnsupportedError(
            f"Column {column.name}'s default ({text}), set by another writer, is not one "
            f"Rewind can compute: {str(exc).splitlines()[0]}"
        ) from None
    # Spark's CAST (sqlglot reads it as TRY_CAST): a value that does not convert fails
    tree = tree.transform(
        lambda n: exp.Cast(this=n.this, to=n.args["to"]) if isinstance(n, exp.TryCast) else n
    )
    return exp.Cast(this=tree, to=kind)


def given(base: Snapshot, column: Column, value: exp.Expression) -> exp.Expression:
    """``value`` as a statement gives it to ``column``: the keyword DEFAULT is the
    column's default (:func:`value_of`), anything else itself."""
    if isinstance(value, exp.Var) and value.name == DEFAULT_KEYWORD:
        return value_of(base, column)
    return value
