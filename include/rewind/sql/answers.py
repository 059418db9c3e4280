"""What Snowflake and BigQuery both answer otherwise than Spark (SPEC R26, R27), for
:func:`rewind.sql.spark_sql._snowflake_answers` and :mod:`rewind.sql.bigquery_answers`:
a cast to an integer, and a difference of dates counted in unit boundaries."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

_INTEGERS = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}


def rounded_to_integer(
    node: exp.Cast, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression | None:
    """``CAST(x AS INT)`` (``x::INT``, BigQuery's ``INT64``, ``TRY_CAST``): both products
    round half away from zero (``1.5::INT`` is 2, ``-0.5::INT`` -1), Spark's cast truncates
    (1, 0): through Spark's DECIMAL(38, 0), which rounds so. None for an integer literal,
    or a cast to another type. ``inner``: the caller's rewrite of ``x``."""
    value = node.this
    if node.to.this not in _INTEGERS or (isinstance(value, exp.Literal) and value.is_int):
        return None
    rounded = node.copy()
    rounded.set("this", inner(value))
    rounded.set("to", exp.DataType.build("DECIMAL(38, 0)"))
    outer = node.copy()
    outer.set("this", rounded)
    return outer


# Units both products' boundary-counting differences and Spark's DATE_TRUNC know.
TRUNCATED_UNITS = {
    "YEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MILLISECOND",
    "MICROSECOND",
}


def boundaries(unit: str, start: exp.Expression, end: exp.Expression) -> exp.Expression:
    """The ``unit`` boundaries crossed from ``start`` to ``end`` (Snowflake's DATEDIFF,
    BigQuery's DATE_DIFF and DATETIME_DIFF: one month from 31 January to 1 February; Spark's
    TIMESTAMPDIFF counts whole units, 0): the whole units between the two truncated to it.
    ``start`` / ``end``: already rewritten by the caller."""
    first, last = (_call("DATE_TRUNC", exp.Literal.string(unit), value) for value in (start, end))
    return _call("TIMESTAMPDIFF", exp.var(unit), first, last)


def _call(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))
