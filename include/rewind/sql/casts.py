"""A cast to an integer type as Snowflake and BigQuery answer it (SPEC R26, R27)."""

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
