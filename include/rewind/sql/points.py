"""Points in time: ``AT | BEFORE (TIMESTAMP | OFFSET | STATEMENT => ...)`` as a
:class:`rewind.timetravel.Point`, and the instant a point names (SPEC R15, R16)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlglot import exp

from rewind import timetravel
from rewind.clock import format_timestamp, parse_timestamp, parse_timestamp_input
from rewind.errors import InvalidValue
from rewind.spark import query, to_arrow
from rewind.sql.spark_sql import timestamp_literal, to_spark
from rewind.sql.values import literal
from rewind.statement import Context


def with_session(ctx: Context, tree: exp.Expression) -> exp.Expression:
    """``tree`` with the session's values as constants: CURRENT_TIMESTAMP / CURRENT_DATE
    (and their Snowflake synonyms) of the Rewind clock, where Spark's would read the wall
    clock (SPEC R15); CURRENT_USER / ROLE / DATABASE / SCHEMA (BigQuery's SESSION_USER)
    of the Rewind session, where Spark's name its own (the server's OS user, ``default``);
    LAST_QUERY_ID and GET_DDL of the session and the catalog."""
    instant = exp.Literal.string(format_timestamp(ctx.now))
    state = ctx.state
    names: dict[type[exp.Expression], str | None] = {
        exp.CurrentUser: state.user,
        exp.SessionUser: state.user,
        exp.CurrentRole: state.role,
        exp.CurrentDatabase: state.database,
        exp.CurrentSchema: state.schema,
        exp.CurrentWarehouse: None,  # Rewind has no warehouses: none is in use
    }

    def constant(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.upper() == "LAST_QUERY_ID":
            return exp.Literal.string(_last_query_id(ctx, node))
        if isinstance(node, exp.Anonymous) and node.name.upper() == "GET_DDL":
            from rewind.sql.show import get_ddl  # the catalog's: the statements that ask

            return exp.Literal.string(get_ddl(ctx, node))
        if isinstance(node, exp.CurrentTimestamp):
            return exp.cast(instant.copy(), "TIMESTAMP")
        if isinstance(node, exp.CurrentDate | exp.CurrentDatetime):
            # the session's day or wall clock, in UTC or in BigQuery's zone argument
            now: exp.Expression = exp.cast(instant.copy(), "TIMESTAMP")
            if node.this is not None:
                now = exp.Anonymous(this="FROM_UTC_TIMESTAMP", expressions=[now, node.this.copy()])
            kind = "DATE" if isinstance(node, exp.CurrentDate) else "TIMESTAMPNTZ"
            return exp.cast(now, exp.DataType.build(kind))
        if type(node) in names:
            name = names[type(node)]
            return exp.null() if name is None else exp.Literal.string(name)
        return node

    return tree.transform(constant)


def _last_query_id(ctx: Context, call: exp.Anonymous) -> str:
    """Snowflake's LAST_QUERY_ID([n]): the session's n-th statement (1 the first, -1, the
    default, the latest before this one); '' where there is none."""
    n = literal(call.expressions[0]) if len(call.expressions) == 1 else -1
    if len(call.expressions) > 1 or isinstance(n, bool) or not isinstance(n, int):
        raise InvalidValue(f"LAST_QUERY_ID takes one integer: '{call.sql('snowflake')}'.")
    ids = ctx.state.query_ids
    index = n - 1 if n > 0 else len(ids) + n
    return ids[index] if n != 0 and 0 <= index < len(ids) else ""


def point_of(ctx: Context, when: exp.HistoricalData) -> timetravel.Point:
    """Turn ``AT|BEFORE(kind => expr)`` into a :class:`timetravel.Point`."""
    direction = str(when.this).upper()
    kind = str(when.args.get("kind")).upper()
    value = when.expression
    if kind == "OFFSET":
        return timetravel.Point(direction, offset_seconds=_offset(ctx, value))
    if kind == "STATEMENT":
        text = literal(with_session(ctx, value))  # LAST_QUERY_ID() names one too
        if not isinstance(text, str):
            raise InvalidValue("STATEMENT => needs a query id string.")
        if not text.strip():
            raise timetravel.UnknownStatement(
                "STATEMENT => names no statement: its query id is empty (LAST_QUERY_ID() "
                "of a session that has run no statement before this one)."
            )
        return timetravel.Point(direction, statement=text.strip())
    if kind == "TIMESTAMP":
        return timetravel.Point(direction, timestamp=constant_timestamp(ctx, value))
    raise InvalidValue(f"Unknown time travel point kind {kind}.")


_ARITHMETIC: dict[type[exp.Expression], Callable[[Decimal, Decimal], Decimal]] = {
    exp.Add: operator.add,
    exp.Sub: operator.sub,
    exp.Mul: operator.mul,
    exp.Div: operator.truediv,
}


def _offset(ctx: Context, node: exp.Expression) -> float:
    """OFFSET's seconds: constant arithmetic (``-60*5``), or an expression of functions
    computed by Spark (``-DATEDIFF(second, '...'::TIMESTAMP_NTZ, CURRENT_TIMESTAMP())``,
    which was "not a constant"), CURRENT_TIMESTAMP the session's clock (SPEC R15)."""
    if node.find(exp.Func) is None:
        return float(_number(node))
    seconds = _computed(ctx, node, "DOUBLE", "OFFSET =>")
    if abs(seconds) > 10**12:
        raise InvalidValue(f"OFFSET => {seconds} is out of range.")
    return float(seconds)


def _number(node: exp.Expression) -> Decimal:
    """Constant arithmetic (``-60*5``) for OFFSET."""
    for op, fn in _ARITHMETIC.items():
        if isinstance(node, op):
            try:
                return fn(_number(node.this), _number(node.expression))
            except ArithmeticError:
                text = node.sql("snowflake")
                raise InvalidValue(f"OFFSET => '{text}' is not a number.") from None
    if isinstance(node, exp.Neg):
        return -_number(node.this)
    if isinstance(node, exp.Paren):
        return _number(node.this)
    value = literal(node)
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise InvalidValue(f"OFFSET => needs a number of seconds, got {node.sql('snowflake')}.")
    number = Decimal(value)
    if abs(number) > 10**12:
        raise InvalidValue(f"OFFSET => {value} is out of range.")
    return number


def constant_timestamp(ctx: Context, node: exp.Expression, what: str = "TIMESTAMP =>") -> datetime:
    """A constant timestamp; CURRENT_TIMESTAMP means the Rewind clock (SPEC R15). ``what``
    names the value in an error (the clause it is given in)."""
    node = node.transform(timestamp_literal)  # TO_TIMESTAMP_TZ(text, format) read here
    inner = node
    while isinstance(inner, exp.Cast | exp.TryCast | exp.Paren) or (
        isinstance(inner, exp.Anonymous | exp.StrToTime | exp.TsOrDsToTimestamp)
        and len(inner.expressions or []) <= 1
        and inner.this is not None
        and isinstance(inner.this, exp.Expression)
    ):
        inner = inner.this
    if isinstance(inner, exp.Literal) and inner.is_string:
        return parse_timestamp_input(inner.this).astimezone(UTC)
    value = _computed(ctx, node, "TIMESTAMP", what)
    return parse_timestamp(value.isoformat())


def _computed(ctx: Context, node: exp.Expression, spark_type: str, what: str) -> Any:
    """The value of the constant expression ``node`` as Spark computes it, cast to
    ``spark_type``, CURRENT_TIMESTAMP and the session's functions read first (SPEC R15).

    Raises:
        InvalidValue: for an expression of columns or a query, out of range, or NULL.
    """
    bound = with_session(ctx, node)
    if list(bound.find_all(exp.Column, exp.Select)):
        raise InvalidValue(f"{what} needs a constant, got '{node.sql('snowflake')}'.")
    sql = to_spark(exp.select(exp.cast(bound, spark_type).as_("value")))
    try:
        value = to_arrow(query(ctx.spark(), sql, {})).column(0)[0].as_py()
    except OverflowError:  # Spark reaches years Python's datetime does not (R39)
        raise InvalidValue(f"{what} '{node.sql('snowflake')}' is out of range.") from None
    if value is None:
        raise InvalidValue(f"{what} '{node.sql('snowflake')}' is NULL.")
    return value


def point_instant(ctx: Context, point: timetravel.Point | None) -> datetime:
    """The instant a point names (a container clone's, a BigQuery decorator's)."""
    if point is None:
        return ctx.now
    if point.statement is not None:
        statement = ctx.catalog.statement(point.statement)
        if statement is None:
            raise timetravel.UnknownStatement(f"Statement {point.statement} not found.")
        return statement.start_time
    if point.offset_seconds is not None:
        return ctx.now + timedelta(seconds=point.offset_seconds)
    assert point.timestamp is not None
    return point.timestamp
