"""Snowflake's session variables and IDENTIFIER(): ``SET qid = LAST_QUERY_ID()`` then
``... BEFORE(STATEMENT => $qid)``, ``SET (lo, hi) = (SELECT min(x), max(x) FROM t)``,
``UNSET qid``, ``SHOW VARIABLES`` (:mod:`rewind.sql.show`), ``FROM IDENTIFIER($name)``.

A variable lives in its session (``SessionState.variables``), as in Snowflake. SET's
values are one query's result, so a subquery in it reads as any SELECT does: authorized
and audited (SPEC R36, R37). A reference is replaced by its value as a constant before the
statement is analysed, so a time travel point, a LIMIT or a table name may be a variable.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from rewind.errors import InvalidValue, ObjectNotFound, SqlSyntaxError, UnsupportedError
from rewind.identifiers import normalize
from rewind.result import Result
from rewind.statement import Context, SessionState

# Snowflake's limit on a string or binary variable's size.
MAX_BYTES = 256


@dataclass
class Variable:
    """A session variable's value and when it was first and last set."""

    value: Any
    created_on: datetime
    updated_on: datetime


def type_name(value: Any) -> str:
    """The value's type as Snowflake's SHOW VARIABLES names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | Decimal):
        return "fixed"
    if isinstance(value, float):
        return "real"
    if isinstance(value, datetime):
        return "timestamp_ntz" if value.tzinfo is None else "timestamp_ltz"
    if isinstance(value, date):
        return "date"
    return "text"


def set_variables(
    ctx: Context, tree: exp.Set, run: Callable[[Context, exp.Expression], Result]
) -> Result:
    """``SET name = expr [, ...]``, ``SET (a, b) = (x, y)`` or ``= (SELECT x, y ...)``:
    the values of one query (``run``), each kept under its name."""
    if ctx.state.dialect != "snowflake":
        raise UnsupportedError("BigQuery scripting (DECLARE, SET) is not supported.")
    if tree.args.get("unset"):
        return _unset(ctx, tree)
    names, query = _assignments(tree)
    rows = run(ctx, query).rows
    if len(rows) > 1:
        raise InvalidValue("Single-row subquery returns more than one row.")
    values = rows[0] if rows else [None] * len(names)
    for name, value in zip(names, values, strict=True):
        _check(name, value)
    for name, value in zip(names, values, strict=True):
        held = ctx.state.variables.get(name)
        created = held.created_on if held is not None else ctx.now
        ctx.state.variables[name] = Variable(value, created, ctx.now)
    return ctx.status("Statement executed successfully.")


def _assignments(tree: exp.Set) -> tuple[list[str], exp.Expression]:
    """The names SET assigns and the query that computes their values, in order."""
    names: list[str] = []
    values: list[exp.Expression] = []
    for item in tree.expressions:
        pair = item.this if isinstance(item, exp.SetItem) else None
        if item.args.get("kind") != "VARIABLE" or not isinstance(pair, exp.EQ):
            raise UnsupportedError(f"'{item.sql('snowflake')[:80]}' is not supported.")
        tuple_ = isinstance(pair.this, exp.Tuple)
        targets = pair.this.expressions if tuple_ else [pair.this]
        source = pair.expression
        if tuple_ and isinstance(source, exp.Subquery) and isinstance(source.this, exp.Select):
            if len(tree.expressions) > 1:
                raise UnsupportedError("SET (a, b) = (SELECT ...) assigns alone.")
            _same_count(targets, source.this.expressions)
            return [_name(target) for target in targets], source.this.copy()
        found = source.expressions if tuple_ and isinstance(source, exp.Tuple) else [source]
        _same_count(targets, found)
        names.extend(_name(target) for target in targets)
        values.extend(found)
    columns = [value.copy().as_(f"V{i}") for i, value in enumerate(values)]
    return names, exp.select(*columns)


def _same_count(names: list[Any], values: list[exp.Expression]) -> None:
    if len(names) != len(values):
        raise SqlSyntaxError(
            f"SQL compilation error: SET assigns {len(names)} variable(s) {len(values)} value(s)."
        )


def _name(target: exp.Expression) -> str:
    if not isinstance(target, exp.Column) or target.table:
        raise SqlSyntaxError(
            f"SQL compilation error: invalid variable name '{target.sql('snowflake')[:50]}'."
        )
    return normalize(target.this)


def _check(name: str, value: Any) -> None:
    """A variable holds a scalar of at most MAX_BYTES (Snowflake's rule)."""
    if isinstance(value, list | dict | bytes | bytearray):
        raise UnsupportedError(
            f"Variable '{name}' cannot hold a {type(value).__name__}: a variable holds a "
            "number, a string, a boolean, a date or a timestamp."
        )
    if isinstance(value, str) and len(value.encode()) > MAX_BYTES:
        raise InvalidValue(
            f"Assignment to '{name}' not done because value exceeds size limit for variables. "
            f"Its size is {len(value.encode())}; the limit is {MAX_BYTES}."
        )


def unset_statement(statement: str) -> exp.Set | None:
    """``UNSET name`` / ``UNSET (a, b)`` as a SET node marked ``unset``; None for any other
    statement (sqlglot reads UNSET as an expression)."""
    words = statement.split(None, 1)
    if len(words) != 2 or words[0].upper() != "UNSET":
        return None
    try:
        target = sqlglot.parse_one(f"SELECT {words[1]}", read="snowflake").expressions
    except SqlglotError:
        target = []
    found = (
        target[0].expressions if len(target) == 1 and isinstance(target[0], exp.Tuple) else target
    )
    if len(target) != 1 or not found:
        raise SqlSyntaxError(f"SQL compilation error: invalid UNSET '{words[1][:50]}'.")
    for column in found:
        _name(column)  # a name, or a syntax error now
    items = [exp.SetItem(this=column, kind="VARIABLE") for column in found]
    return exp.Set(expressions=items, unset=True)


def _unset(ctx: Context, tree: exp.Set) -> Result:
    names = [_name(item.this) for item in tree.expressions]
    for name in names:
        if name not in ctx.state.variables:
            raise ObjectNotFound(f"Session variable '{name}' does not exist.")
    for name in names:
        del ctx.state.variables[name]
    return ctx.status("Statement executed successfully.")


def substituted(state: SessionState, tree: exp.Expression) -> exp.Expression:
    """``tree`` with each ``$name`` replaced by the variable's value as a constant, and each
    ``IDENTIFIER('name')`` by the name it holds (SPEC R39: an unknown variable is
    refused by name)."""
    if not any(True for _ in tree.find_all(exp.Parameter, exp.DynamicIdentifier)):
        return tree

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Var):
            name = normalize(exp.to_identifier(node.this.name))
            held = state.variables.get(name)
            if held is None:
                raise ObjectNotFound(f"Session variable '${name}' does not exist.")
            return constant(held.value)
        return node

    tree = tree.transform(replace)
    for dynamic in list(tree.find_all(exp.DynamicIdentifier)):
        _identify(dynamic)
    return tree


def constant(value: Any) -> exp.Expression:
    """A variable's value as a SQL constant of its type."""
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | Decimal):  # 0E-10 would read as a DOUBLE
        return exp.Literal.number(format(value, "f") if isinstance(value, Decimal) else value)
    if isinstance(value, float):
        return exp.cast(exp.Literal.string(repr(value)), "DOUBLE")
    if isinstance(value, datetime):
        kind = "TIMESTAMP_NTZ" if value.tzinfo is None else "TIMESTAMP_LTZ"
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), kind, dialect="snowflake")
    if isinstance(value, date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    return exp.Literal.string(str(value))


def _identify(dynamic: exp.DynamicIdentifier) -> None:
    """``IDENTIFIER('db.schema.t')`` in a table's place becomes that table's name (its
    alias and time travel clause kept); elsewhere, the column it names. The text is a
    name and nothing else (``'t WHERE ...'``, ``'t; DROP ...'`` are refused)."""
    text = dynamic.this
    if not isinstance(text, exp.Literal) or not text.is_string:
        raise InvalidValue(
            f"{dynamic.sql('snowflake')[:80]}: IDENTIFIER takes a string constant or a "
            "session variable holding one."
        )
    parts = name_parts(text.this)
    table = dynamic.parent
    if isinstance(table, exp.Table) and table.this is dynamic:
        for key, part in zip(("this", "db", "catalog"), reversed(parts), strict=False):
            table.set(key, part)
        return
    keys = ("this", "table", "db", "catalog")
    dynamic.replace(exp.Column(**dict(zip(keys, reversed(parts), strict=False))))


_UNQUOTED = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def name_parts(text: str) -> list[exp.Identifier]:
    """The parts of a dotted name (``db.schema."My table"``, IDENTIFIER's, GET_DDL's): at
    most three, each an unquoted or a double-quoted identifier."""
    try:
        tokens = sqlglot.tokenize(text, read="snowflake")
    except SqlglotError:
        tokens = []
    parts = [
        exp.Identifier(this=token.text, quoted=token.token_type == TokenType.IDENTIFIER)
        for token in tokens[::2]
        if token.token_type == TokenType.IDENTIFIER or _UNQUOTED.fullmatch(token.text)
    ]
    dots = all(token.token_type == TokenType.DOT for token in tokens[1::2])
    if not 1 <= len(parts) <= 3 or len(tokens) != 2 * len(parts) - 1 or not dots:
        raise InvalidValue(f"'{text}' is not a name (at most three dotted parts).")
    return parts
