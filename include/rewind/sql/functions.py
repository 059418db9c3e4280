"""SQL user-defined functions: ``CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] name(arg type,
...) RETURNS type [LANGUAGE SQL] AS '<expression>' | $$<expression>$$``, ``DROP FUNCTION
[IF EXISTS] name(type, ...)`` and their calls (Snowflake's SQL UDFs, the lineage example of
its ACCESS_HISTORY page).

A function is a scalar expression over its arguments only (no table, no subquery), so
calling one reads nothing its caller could not read: using a function needs no privilege,
creating one needs CREATE FUNCTION on the schema (SPEC R37). A call is inlined before the
statement is authorized, audited and run — ``f(col2)`` becomes ``CAST((CAST(col2 AS INT)) * 2
AS INT)`` — so ACCESS_HISTORY records ``col2`` as the direct source of the column it fills
(SPEC R36) and Spark runs plain SQL.
"""

from __future__ import annotations

import sqlglot
from sqlalchemy import delete, select
from sqlglot import exp
from sqlglot.errors import SqlglotError

from rewind.catalog.models import Function
from rewind.errors import (
    InvalidValue,
    NoCurrentContainer,
    ObjectAlreadyExists,
    ObjectNotFound,
    UnsupportedError,
)
from rewind.identifiers import normalize
from rewind.result import Result
from rewind.security import CREATE_FUNCTION, OWNERSHIP, Need, check
from rewind.sql import names
from rewind.statement import Context

FUNCTION = "FUNCTION"
_DEPTH = 16  # functions calling functions, deeper than any real use; stops recursion


def is_function_ddl(tree: object) -> bool:
    kind = str(tree.args.get("kind")).upper() if isinstance(tree, exp.Create | exp.Drop) else ""
    return kind == FUNCTION


def create(ctx: Context, tree: exp.Create) -> Result:
    udf = tree.this
    assert isinstance(udf, exp.UserDefinedFunction)
    schema, name = names.table_parent(ctx, names.parts(udf.this))
    check(ctx, [Need(CREATE_FUNCTION, schema)])
    arguments = [(normalize(a.this), a.args["kind"]) for a in udf.expressions]
    returns = _returns(tree)
    body = _body(tree, [a for a, _ in arguments])
    found = _find(ctx, schema.id, name, len(arguments))
    if found is not None:
        if tree.args.get("exists"):
            return ctx.result(["status"], [[f"{name} already exists, statement succeeded."]])
        if not tree.args.get("replace"):
            raise ObjectAlreadyExists(f"Function '{name}' already exists.")
        check(ctx, [Need(OWNERSHIP, schema)] if found.owner_role != ctx.state.role else [])
        ctx.catalog.session.delete(found)
        ctx.catalog.session.flush()
    ctx.catalog.session.add(
        Function(
            schema_id=schema.id,
            name=name,
            arity=len(arguments),
            arguments=[[a, t.sql("snowflake")] for a, t in arguments],
            returns=returns.sql("snowflake"),
            body=body.sql("snowflake"),
            owner_role=ctx.state.role,
            created_on=ctx.now,
        )
    )
    return ctx.result(["status"], [[f"Function {name} successfully created."]])


def drop(ctx: Context, tree: exp.Drop) -> Result:
    (target,) = tree.args.get("tables") or [None]
    schema, name = names.table_parent(ctx, names.parts(target))
    types = [_type_family(t) for t in tree.expressions or []]
    arity = len(types)
    found = _find(ctx, schema.id, name, arity)
    if found is not None and types != [_type_family(t) for _, t in found.arguments]:
        found = None
    if found is None:
        if tree.args.get("exists"):
            done = f"Drop statement executed successfully ({name} already dropped)."
            return ctx.result(["status"], [[done]])
        raise ObjectNotFound(f"Function '{name}' with {arity} argument(s) does not exist.")
    if found.owner_role != ctx.state.role:
        check(ctx, [Need(OWNERSHIP, schema)])
    ctx.catalog.session.execute(delete(Function).where(Function.id == found.id))
    return ctx.result(["status"], [[f"{name} successfully dropped."]])


def inline(ctx: Context, tree: exp.Expression) -> exp.Expression:
    """``tree`` with every call of a catalog function replaced by its body."""
    for _ in range(_DEPTH):
        if not any(isinstance(n, exp.Anonymous) for n in tree.walk()):
            return tree
        changed = False

        def expand(node: exp.Expression) -> exp.Expression:
            nonlocal changed
            found = _call(ctx, node)
            if found is None:
                return node
            changed = True
            return found

        tree = tree.transform(expand)
        if not changed:
            return tree
    raise InvalidValue(f"Functions call each other more than {_DEPTH} levels deep.")


# -- helpers --------------------------------------------------------------------------------------
def _returns(tree: exp.Create) -> exp.DataType:
    props = tree.args.get("properties")
    found = props.find(exp.ReturnsProperty) if props is not None else None
    language = props.find(exp.LanguageProperty) if props is not None else None
    if language is not None and language.name.upper() != "SQL":
        raise UnsupportedError(f"Functions in {language.name.upper()} are not supported: SQL only.")
    if found is None or found.args.get("is_table") or not isinstance(found.this, exp.DataType):
        raise UnsupportedError(
            "A function must RETURNS a scalar type (table functions are not supported)."
        )
    return found.this


def _body(tree: exp.Create, arguments: list[str]) -> exp.Expression:
    text = tree.expression
    if not isinstance(text, exp.Literal | exp.RawString) or not str(text.this).strip():
        raise InvalidValue("A function needs a body: AS '<expression>'.")
    try:
        select_ = sqlglot.parse_one(f"SELECT {text.this}", read="snowflake")
    except SqlglotError as exc:
        raise InvalidValue(f"Invalid function body: {str(exc).splitlines()[0]}") from None
    if (
        not isinstance(select_, exp.Select)
        or len(select_.expressions) != 1
        or any(v for k, v in select_.args.items() if k != "expressions")
    ):
        raise UnsupportedError("A function body must be one scalar expression over its arguments.")
    body = select_.expressions[0]
    if any(isinstance(n, exp.Query | exp.Table | exp.Star) for n in body.walk()):
        raise UnsupportedError("A function body must not read tables (only its arguments).")
    unknown = {normalize(c.this) for c in body.find_all(exp.Column)} - set(arguments)
    if unknown or any(c.table for c in body.find_all(exp.Column)):
        raise InvalidValue(f"The function body names what is not an argument: {sorted(unknown)}.")
    return body


def _type_family(kind: exp.DataType | str) -> str:
    """A type as DROP FUNCTION matches it: Snowflake's INT is NUMBER(38,0), so every exact
    numeric type is one; the others by name without their parameters."""
    built = _type(kind)
    if built.this in exp.DataType.INTEGER_TYPES or built.this == exp.DataType.Type.DECIMAL:
        return "NUMBER"
    return built.this.value


def _find(ctx: Context, schema_id: int, name: str, arity: int) -> Function | None:
    return ctx.catalog.session.scalars(
        select(Function).where(
            Function.schema_id == schema_id, Function.name == name, Function.arity == arity
        )
    ).one_or_none()


def _call(ctx: Context, node: exp.Expression) -> exp.Expression | None:
    """The inlined body when ``node`` calls a catalog function ([[db.]schema.]name(...))."""
    prefix: list[str] = []
    call = node
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
        call = node.expression
        prefix = [normalize(p) for p in node.this.find_all(exp.Identifier)]
        if len(prefix) > 2:
            return None
    if not isinstance(call, exp.Anonymous) or not isinstance(call.this, str):
        return None
    if isinstance(node, exp.Anonymous) and isinstance(node.parent, exp.Dot):
        return None  # the qualified call is expanded from its Dot
    try:
        schema, name = names.table_parent(ctx, [*prefix, normalize(exp.to_identifier(call.this))])
    except (ObjectNotFound, InvalidValue, NoCurrentContainer):
        return None  # not a function of ours: Spark's, or an unknown one Spark reports
    found = _find(ctx, schema.id, name, len(call.expressions))
    if found is None:
        return None
    body = sqlglot.parse_one(f"SELECT {found.body}", read="snowflake").expressions[0]
    values = {
        arg: exp.Cast(this=exp.Paren(this=given.copy()), to=_type(kind))
        for (arg, kind), given in zip(found.arguments, call.expressions, strict=True)
    }
    body = body.transform(
        lambda n: values[normalize(n.this)].copy() if isinstance(n, exp.Column) else n
    )
    return exp.Cast(this=exp.Paren(this=body), to=_type(found.returns))


def _type(kind: exp.DataType | str) -> exp.DataType:
    return exp.DataType.build(kind, dialect="snowflake")
