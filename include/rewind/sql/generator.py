"""Snowflake's row generator: ``TABLE(GENERATOR(ROWCOUNT => n))`` and ``SEQ4()`` /
``SEQ8()``, how Snowflake's users make rows from nothing (a date spine: ``SELECT
DATEADD(day, SEQ4(), '2026-01-01') FROM TABLE(GENERATOR(ROWCOUNT => 365))``).

The parser turns the table function into a subquery of ``n`` rows that reads no table (a
table function is otherwise refused: only catalog tables are read, SPEC R38), and SEQ4 /
SEQ8 answer 0, 1, 2, ...: over a generator its row's number, elsewhere in the rows' order
(:func:`rewind.sql.spark_sql`).
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
        _numbered(source, alias.name if alias else None)
        source.replace(exp.Subquery(this=rows, alias=alias.copy() if alias else None))
    return tree


def _numbered(source: exp.TableFromRows, alias: str | None) -> None:
    """``SEQ4()`` / ``SEQ8()`` of the select whose source is the generator ``source``:
    its row's number (which WHERE can read, as in Snowflake; elsewhere they stay a
    window's row number)."""
    select = source.find_ancestor(exp.Select)
    if select is None:
        return
    for seq in list(select.find_all(exp.Seq4, exp.Seq8)):
        if seq.find_ancestor(exp.Select) is not select:
            continue
        number: exp.Expr = exp.column("__rw_row", table=alias)
        if seq.parent is select:  # a result column, headed as written (SEQ4())
            header = exp.to_identifier(seq.sql("snowflake").upper(), quoted=True)
            number = exp.alias_(number, header)
        seq.replace(number)
