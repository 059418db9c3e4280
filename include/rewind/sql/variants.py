"""Snowflake's functions of a VARIANT's type (SPEC R27): ``TYPEOF``, ``IS_<type>``,
``AS_<type>`` and ``STRIP_NULL_VALUE``.

Rewind's VARIANT is JSON text (PARSE_JSON's value, a path into it: ``v:a``, ``v['a']``);
its type is the one Spark's own VARIANT reads in it (``SCHEMA_OF_VARIANT``), in
Snowflake's words: OBJECT, ARRAY, VARCHAR, INTEGER, DECIMAL, DOUBLE, BOOLEAN, NULL_VALUE
(JSON's null). Any other value's is its Spark type's (``TYPEOF(1)`` is INTEGER, a
string's VARCHAR, OBJECT_CONSTRUCT's OBJECT), as Snowflake's TYPEOF of a value cast to
VARIANT. Spark's TYPEOF answered its own names ('string' for every JSON value).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from rewind.sql.answers import call, template

Inner = Callable[[exp.Expression], exp.Expression]

# A Spark type name (SCHEMA_OF_VARIANT's, upper-cased TYPEOF's) as Snowflake's TYPEOF names it
_SNOWFLAKE_TYPE = r"""CASE
  WHEN __rw_t IS NULL THEN NULL
  WHEN __rw_t LIKE 'OBJECT%' OR __rw_t LIKE 'STRUCT%' OR __rw_t LIKE 'MAP%' THEN 'OBJECT'
  WHEN __rw_t LIKE 'ARRAY%' THEN 'ARRAY'
  WHEN __rw_t = 'STRING' OR __rw_t LIKE 'VARCHAR%' OR __rw_t LIKE 'CHAR%' THEN 'VARCHAR'
  WHEN __rw_t = 'VOID' THEN 'NULL_VALUE'
  WHEN __rw_t IN ('BIGINT', 'INT', 'SMALLINT', 'TINYINT') OR __rw_t RLIKE '^DECIMAL\\(\\d+,0\\)$'
    THEN 'INTEGER'
  WHEN __rw_t LIKE 'DECIMAL%' THEN 'DECIMAL'
  WHEN __rw_t IN ('DOUBLE', 'FLOAT') THEN 'DOUBLE'
  WHEN __rw_t = 'TIMESTAMP' THEN 'TIMESTAMP_LTZ'
  ELSE __rw_t
END"""
# IS_<type>(v): the Snowflake types it is true for (IS_DECIMAL of an integer is true too)
_IS = {
    "IS_ARRAY": ("ARRAY",),
    "IS_OBJECT": ("OBJECT",),
    "IS_VARCHAR": ("VARCHAR",),
    "IS_CHAR": ("VARCHAR",),
    "IS_BOOLEAN": ("BOOLEAN",),
    "IS_INTEGER": ("INTEGER",),
    "IS_DECIMAL": ("INTEGER", "DECIMAL"),
    "IS_DOUBLE": ("INTEGER", "DECIMAL", "DOUBLE"),
    "IS_REAL": ("INTEGER", "DECIMAL", "DOUBLE"),
    "IS_NULL_VALUE": ("NULL_VALUE",),
}
# AS_<type>(v): the value as that Spark type where the VARIANT holds one, else NULL
_AS = {
    "AS_VARCHAR": (_IS["IS_VARCHAR"], "string"),
    "AS_CHAR": (_IS["IS_VARCHAR"], "string"),
    "AS_BOOLEAN": (_IS["IS_BOOLEAN"], "boolean"),
    "AS_INTEGER": (_IS["IS_INTEGER"], "bigint"),
    "AS_DOUBLE": (_IS["IS_DOUBLE"], "double"),
    "AS_REAL": (_IS["IS_DOUBLE"], "double"),
}


def variant_function(node: exp.Expression, inner: Inner) -> exp.Expression | None:
    """``node`` as Snowflake answers it where it is one of this module's functions (its
    arguments rewritten by ``inner``); None for anything else."""
    name = node.name.upper() if isinstance(node, exp.Anonymous) else _NAMED.get(type(node), "")
    if isinstance(node, exp.Typeof):
        return _type_of(node.this, inner)
    if name in _IS:
        return _is(_argument(node), _IS[name], inner)
    if name in _AS:
        kinds, spark = _AS[name]
        value = _argument(node)
        variant = _variant(value, inner)
        if variant is None:
            return None
        got = call("VARIANT_GET", variant, exp.Literal.string("$"), exp.Literal.string(spark))
        return exp.If(this=_is(value, kinds, inner), true=got, false=exp.null())
    if isinstance(node, exp.StripNullValue) and _variant(node.this, inner) is not None:
        return template("IF(TRIM(__rw_v) = 'null', NULL, __rw_v)", v=inner(node.this))
    return None


# The functions of this module sqlglot reads as its own expressions, by their names
_NAMED: dict[type[exp.Expression], str] = {
    exp.IsArray: "IS_ARRAY",
    exp.IsNullValue: "IS_NULL_VALUE",
}


def _is(value: exp.Expression, kinds: tuple[str, ...], inner: Inner) -> exp.Expression:
    """Whether Snowflake's TYPEOF of ``value`` is one of ``kinds``."""
    return exp.In(this=_type_of(value, inner), expressions=[exp.Literal.string(k) for k in kinds])


def _argument(node: exp.Expression) -> exp.Expression:
    return node.expressions[0] if isinstance(node, exp.Anonymous) else node.this


def _type_of(value: exp.Expression, inner: Inner) -> exp.Expression:
    """Snowflake's TYPEOF of ``value``: its VARIANT's type, or its Spark type's (NULL for
    NULL: Spark's TYPEOF names the type of a NULL too)."""
    variant = _variant(value, inner)
    if variant is not None:
        return template(_SNOWFLAKE_TYPE, t=call("SCHEMA_OF_VARIANT", variant))
    given = inner(value)
    named = template(_SNOWFLAKE_TYPE, t=call("UPPER", call("TYPEOF", given)))
    return exp.If(
        this=exp.Is(this=given.copy(), expression=exp.null()), true=exp.null(), false=named
    )


def _variant(value: exp.Expression, inner: Inner) -> exp.Expression | None:
    """Spark's VARIANT of Rewind's (JSON text: PARSE_JSON's value, or a path into it); None
    for any other value. A path that is not there is NULL (Snowflake's NULL, not JSON's)."""
    if isinstance(value, exp.ParseJSON):
        return call("PARSE_JSON", inner(value))
    path = value
    if isinstance(value, exp.Bracket):
        path = inner(value)  # a subscript of JSON text: its path (spark_sql._json_subscript)
    if isinstance(path, exp.JSONExtract) and isinstance(path.expression, exp.JSONPath):
        base = _variant(path.this, inner) or call("TRY_PARSE_JSON", inner(path.this))
        steps = path.expression.sql("spark").strip("'")
        return call("VARIANT_GET", base, exp.Literal.string(steps))
    return None
