"""Snowflake's row generator: ``TABLE(GENERATOR(ROWCOUNT => n))`` and ``SEQ4()`` /
``SEQ8()``, how Snowflake's users make rows from nothing (a date spine: ``SELECT
DATEADD(day, SEQ4(), '2026-01-01') FROM TABLE(GENERATOR(ROWCOUNT => 365))``).

The parser turns the table function into a subquery of ``n`` rows that reads no table (a
table function is otherwise refused: only catalog tables are read, SPEC R38), and SEQ4 /
SEQ8 answer 0, 1, 2, ... in the rows' order (:func:`rewind.sql.spark_sql`).
"""

from __future__ import annotations

from typing import TypeVar

import sqlglot
from sqlglot import exp

from rewind.errors import InvalidValue, UnsupportedError

T = TypeVar("T")

_ROWS = "SELECT EXPLODE(IF({n} > 0, SEQUENCE(0, {n} - 1), ARRAY())) AS __rw_row"


def rewrite(tree: T) -> T:
    """``tree`` with every ``TABLE(GENERATOR(...))`` source a subquery of its rows.

    Raises:
        UnsupportedError: for GENERATOR's TIMELIMIT.
        InvalidValue: for a ROWCOUNT that is not a literal count.
    """
    if not isinstance(tree, exp.Expression):
        return tree
    for source in list(tree.find_all(exp.TableFromRows)):
        generator = source.this
        if not isinstance(generator, exp.Generator):
            continue
        if generator.args.get("timelimit") is not None:
            raise UnsupportedError("GENERATOR's TIMELIMIT is not supported: give ROWCOUNT.")
        count = generator.args.get("rowcount")
        if not (isinstance(count, exp.Literal) and count.is_int and int(count.name) >= 0):
            raise InvalidValue("GENERATOR's ROWCOUNT must be a whole number of rows, 0 or more.")
        rows = sqlglot.parse_one(_ROWS.format(n=int(count.name)), read="spark")
        alias = source.args.get("alias")
        source.replace(exp.Subquery(this=rows, alias=alias.copy() if alias else None))
    return tree
