"""Snowflake's ``FLATTEN`` over an array: ``, LATERAL FLATTEN(input => x [, outer => b]) f``
and ``, TABLE(FLATTEN(x)) f`` — how Snowflake's users read ACCESS_HISTORY's arrays.

sqlglot reads FLATTEN as Spark's EXPLODE with Snowflake's six output columns (SEQ, KEY,
PATH, INDEX, VALUE, THIS), which Spark's one-column EXPLODE cannot fill. The parser
rewrites it into a Spark generator that fills them::

    LATERAL INLINE(TRANSFORM(x, (v, i) -> STRUCT(NULL AS SEQ, NULL AS KEY, '[i]' AS PATH,
                                                  i AS INDEX, v AS VALUE, x AS THIS))) f

so ``f.value``, ``f.index`` and ``f.value:field`` (JSON text) read as in Snowflake. An input
that is JSON text (PARSE_JSON, a path ``f.value:"columns"``) is read as an object's
entries (``f.key``, ``f.value``; it flattened to no row) or an array's elements, each as
JSON text. SEQ is NULL (Spark has no per-input-row sequence here); ``path``,
``recursive`` and ``mode`` are refused.
"""

from __future__ import annotations

from typing import TypeVar

from sqlglot import exp

from rewind.errors import UnsupportedError
from rewind.sql.answers import template

T = TypeVar("T")

COLUMNS = ("SEQ", "KEY", "PATH", "INDEX", "VALUE", "THIS")
_GENERATOR = (
    "{name}(TRANSFORM(__rw_input, (__rw_v, __rw_i) -> STRUCT(CAST(NULL AS BIGINT) AS SEQ, "
    "CAST(NULL AS STRING) AS KEY, CONCAT('[', __rw_i, ']') AS PATH, __rw_i AS INDEX, "
    "__rw_v AS VALUE, __rw_input AS THIS)))"
)
_JSON_TEXT = (exp.JSONExtract, exp.JSONExtractScalar, exp.ParseJSON)
# JSON text: an object's entries (KEY and PATH its key, INDEX NULL), else an array's
# elements, each value as JSON text.
_JSON_GENERATOR = (
    "{name}(IF(LTRIM(__rw_input) LIKE '{{%', TRANSFORM(MAP_ENTRIES(FROM_JSON(__rw_input, "
    "'MAP<STRING, STRING>')), (__rw_e, __rw_i) -> STRUCT(CAST(NULL AS BIGINT) AS SEQ, "
    "__rw_e['key'] AS KEY, __rw_e['key'] AS PATH, CAST(NULL AS INT) AS INDEX, __rw_e['value'] AS "
    "VALUE, __rw_input AS THIS)), TRANSFORM(FROM_JSON(__rw_input, 'ARRAY<STRING>'), "
    "(__rw_v, __rw_i) -> STRUCT(CAST(NULL AS BIGINT) AS SEQ, CAST(NULL AS STRING) AS KEY, "
    "CONCAT('[', __rw_i, ']') AS PATH, __rw_i AS INDEX, __rw_v AS VALUE, __rw_input AS "
    "THIS))))"
)


def rewrite(tree: T) -> T:
    """``tree`` with every FLATTEN table source turned into Spark's generator."""
    if not isinstance(tree, exp.Expression):
        return tree
    for source in list(tree.find_all(exp.Lateral, exp.TableFromRows)):
        if isinstance(source, exp.Lateral | exp.TableFromRows) and isinstance(
            source.this, exp.Explode
        ):
            source.replace(_lateral(source))
    return tree


def _lateral(source: exp.Lateral | exp.TableFromRows) -> exp.Lateral:
    call = source.this
    arguments = [call.this, *(call.expressions or [])]
    values: dict[str, exp.Expression] = {}
    for position, argument in enumerate(arguments):
        if isinstance(argument, exp.Kwarg):
            values[argument.this.name.upper()] = argument.expression
        elif position == 0:
            values["INPUT"] = argument
        else:
            raise UnsupportedError("FLATTEN takes named arguments after its input.")
    extra = sorted(set(values) - {"INPUT", "OUTER"})
    if extra or "INPUT" not in values:
        raise UnsupportedError(
            f"FLATTEN supports INPUT => <array> and OUTER => TRUE|FALSE, not {extra or 'none'}."
        )
    outer = values.get("OUTER")
    if outer is not None and not isinstance(outer, exp.Boolean):
        raise UnsupportedError("FLATTEN's OUTER => takes TRUE or FALSE.")
    name = "INLINE_OUTER" if outer is not None and outer.this else "INLINE"
    given = values["INPUT"]
    shape = _JSON_GENERATOR if isinstance(given, _JSON_TEXT) else _GENERATOR
    generator = template(shape.format(name=name), input=given)
    alias = source.args.get("alias")
    named = (
        alias.this.copy() if alias is not None and alias.this else exp.to_identifier("_flattened")
    )
    lateral = exp.Lateral(
        this=generator,
        alias=exp.TableAlias(this=named, columns=[exp.to_identifier(c) for c in COLUMNS]),
    )
    lateral.meta[_INPUT] = (name, given.copy())
    return lateral


_INPUT = "rewind.flatten"  # a rewritten FLATTEN's generator name and input, in its meta


def flattened_input(lateral: exp.Lateral) -> exp.Expression | None:
    """The input of the FLATTEN ``lateral`` was rewritten from; None for another."""
    kept = lateral.meta.get(_INPUT)
    return kept[1] if kept is not None else None


def as_json_text(lateral: exp.Lateral, text: exp.Expression) -> None:
    """Flatten ``text``, the JSON text of the rewritten FLATTEN ``lateral``'s input (a
    VARIANT column's, which :func:`rewrite` could not know for one), as JSON text."""
    name, _ = lateral.meta[_INPUT]
    lateral.set("this", template(_JSON_GENERATOR.format(name=name), input=text))
