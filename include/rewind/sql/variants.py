"""Snowflake's functions of a VARIANT's type (SPEC R27): ``TYPEOF``, ``IS_<type>``,
``AS_<type>`` and ``STRIP_NULL_VALUE``; BigQuery's of JSON (:func:`bigquery_json`).

Rewind's VARIANT is JSON text (PARSE_JSON's value, a path into it: ``v:a``, ``v['a']``);
its type is the one Spark's own VARIANT reads in it (``SCHEMA_OF_VARIANT``), in
Snowflake's words: OBJECT, ARRAY, VARCHAR, INTEGER, DECIMAL, DOUBLE, BOOLEAN, NULL_VALUE
(JSON's null). Any other value's is its Spark type's (``TYPEOF(1)`` is INTEGER, a
string's VARCHAR, OBJECT_CONSTRUCT's OBJECT), as Snowflake's TYPEOF of a value cast to
VARIANT. Spark's TYPEOF answered its own names ('string' for every JSON value).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlglot import exp

from rewind.errors import UnsupportedError
from rewind.sql.answers import call, is_variant_cast, template

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


def to_variant(node: exp.Expression, inner: Inner) -> exp.Expression | None:
    """``TO_VARIANT(x)`` / ``x::VARIANT`` as Rewind's VARIANT, JSON text: that of JSON text
    as it is (``PARSE_JSON('{"a": 1}')::VARIANT`` was the string ``"{\"a\":1}"``), of an
    object or array its JSON (a cast of OBJECT_CONSTRUCT's struct failed), of any other
    value its JSON value (``'abc'`` is ``"abc"``). TO_VARIANT was an unknown function.
    None for any other node."""
    if not is_variant_cast(node):
        return None
    variant = _variant(node, inner)
    assert variant is not None
    return call("TO_JSON", variant)


def _variant(value: exp.Expression, inner: Inner) -> exp.Expression | None:
    """Spark's VARIANT of Rewind's (JSON text: PARSE_JSON's value, or a path into it; a
    TO_VARIANT's, :func:`to_variant`); None for any other value. A path that is not there is
    NULL (Snowflake's NULL, not JSON's)."""
    paths = isinstance(value, exp.JSONExtract | exp.Bracket)  # below
    if is_json_text(value) and not paths and not is_variant_cast(value):
        # PARSE_JSON's, an array or object function's, a mixed ARRAY_CONSTRUCT's, x::ARRAY
        return call("PARSE_JSON", inner(value))
    if is_variant_cast(value):
        given = value.this
        if isinstance(given, exp.Struct | exp.Array | exp.VarMap | exp.Map):
            return call("TO_VARIANT_OBJECT", inner(given))
        return _variant(given, inner) or exp.Cast(
            this=inner(given), to=exp.DataType.build("VARIANT")
        )
    path, written = value, isinstance(value, exp.Bracket)
    if written:  # a subscript of JSON text: its path (spark_sql._json_subscript), written
        path = inner(value)
    steps = _spark_path(path.expression) if isinstance(path, exp.JSONExtract) else None
    if steps is None:
        return None
    base: exp.Expression
    if written:  # its text is Spark's already: not rewritten twice
        base = call("TRY_PARSE_JSON", path.this)
    else:
        base = _variant(path.this, inner) or call("TRY_PARSE_JSON", inner(path.this))
    return call("VARIANT_GET", base, exp.Literal.string(steps))


def _spark_path(path: exp.Expression) -> str | None:
    """A JSON path (sqlglot's) as Spark's VARIANT_GET reads it (``$["a b"][0]``); None for
    one it has no form of (a wildcard, a slice)."""
    if not isinstance(path, exp.JSONPath):
        return None
    text = "$"
    for step in path.expressions:
        if isinstance(step, exp.JSONPathKey) and isinstance(step.this, str):
            text += "[" + json.dumps(step.this) + "]"
        elif isinstance(step, exp.JSONPathSubscript) and isinstance(step.this, int):
            text += f"[{step.this}]"
        elif not isinstance(step, exp.JSONPathRoot):
            return None
    return text


# -- Snowflake's semi-structured arrays (SPEC R26, R27) ---------------------------------------
# The array functions that answer an array: of a semi-structured one, its JSON text again.
_ARRAY_ANSWERS = (
    exp.ArrayConcat,
    exp.ArrayAppend,
    exp.ArrayPrepend,
    exp.ArrayCompact,
    exp.ArrayDistinct,
    exp.ArrayReverse,
    exp.ArraySlice,
    exp.ArrayRemove,
)
# Those Rewind has no form of for one yet (Snowflake's bag semantics, variants' order): refused
_NO_JSON_FORM: dict[type[exp.Expression], str] = {
    exp.ArrayExcept: "ARRAY_EXCEPT",
    exp.ArrayIntersect: "ARRAY_INTERSECTION",
    exp.ArrayMax: "ARRAY_MAX",
    exp.ArrayMin: "ARRAY_MIN",
    exp.ArraySort: "ARRAY_SORT",
    exp.Flatten: "ARRAY_FLATTEN",
    exp.ArrayInsert: "ARRAY_INSERT",
    exp.ArrayRemoveAt: "ARRAY_REMOVE_AT",
    exp.ArraySum: "ARRAY_SUM",
    exp.ArraysZip: "ARRAYS_ZIP",
}
# What array_function rewrites (ARRAY_SLICE: spark_sql's own rewrite, of either array)
SEMI_STRUCTURED_ARRAYS: tuple[type[exp.Expression], ...] = (
    *(a for a in _ARRAY_ANSWERS if a is not exp.ArraySlice),
    exp.ArrayToString,
    exp.ArrayContains,
    exp.ArrayPosition,
    exp.ArrayOverlaps,
    *_NO_JSON_FORM,
)


def _semi_structured(node: exp.Expression) -> str | None:
    """``ARRAY`` / ``OBJECT`` where ``node`` is a cast to Snowflake's semi-structured one
    (``x::ARRAY``, no element types named), else None."""
    if not isinstance(node, exp.Cast) or node.to.expressions:
        return None
    kinds = {exp.DataType.Type.ARRAY: "ARRAY", exp.DataType.Type.OBJECT: "OBJECT"}
    return kinds.get(node.to.this)


def semi_structured_cast(node: exp.Cast, inner: Inner) -> exp.Expression | None:
    """``x::ARRAY`` / ``x::OBJECT`` (Spark: an incomplete type) as JSON text: JSON text of
    that kind as it is, of another kind an error (Snowflake's "Failed to cast variant
    value"), Spark's array or struct (ARRAY_CONSTRUCT's, OBJECT_CONSTRUCT's) its JSON.
    None for any other cast."""
    kind = _semi_structured(node)
    if kind is None:
        return None
    variant = _variant(node.this, inner)
    if variant is None:
        return call("TO_JSON", inner(node.this))
    return template(
        f"IF(__rw_v IS NULL OR SCHEMA_OF_VARIANT(__rw_v) LIKE '{kind}%', TO_JSON(__rw_v), "
        f"RAISE_ERROR('Failed to cast a variant value to {kind}: it holds no {kind}.'))",
        v=variant,
    )


def _kind(value: exp.Expression) -> str | None:
    """What an ARRAY_CONSTRUCT's element is, where Spark's ARRAY would coerce it: a
    literal's kind, JSON text, an object of its keys, another nested value; None for
    another (a column: its type)."""
    if isinstance(value, exp.Literal):
        return "text" if value.is_string else "number"
    if isinstance(value, exp.Boolean):
        return "boolean"
    if is_json_text(value):
        return "json"
    if isinstance(value, exp.Struct):  # objects of other keys are other struct types
        keys = [f.this.name for f in value.expressions if isinstance(f, exp.PropertyEQ)]
        return "object " + ",".join(sorted(keys))
    return "nested" if isinstance(value, exp.Array | exp.Map | exp.VarMap) else None


def _of_variants(node: exp.Array) -> bool:
    """Whether Snowflake's ``ARRAY_CONSTRUCT(...)`` ``node`` is an array of variants Spark's
    ARRAY cannot type: elements of several kinds (``'z', 2``: Spark made 'z' a number and
    failed) or JSON text (kept as strings, not as the values they hold)."""
    kinds = {_kind(e) for e in node.expressions if not isinstance(e, exp.Null)}
    return "json" in kinds or len(kinds - {None}) > 1


def constructed_array(node: exp.Array, inner: Inner) -> exp.Expression | None:
    """``ARRAY_CONSTRUCT`` of elements of several kinds or of JSON text
    (:func:`_of_variants`): the JSON text of an array of each element's value. None for
    one Spark's ARRAY types (elements of one kind)."""
    if not _of_variants(node):
        return None
    return call("TO_JSON", call("ARRAY", *[_as_variant(e, inner) for e in node.expressions]))


def _holds_json(node: exp.Struct) -> bool:
    """Whether Snowflake's ``OBJECT_CONSTRUCT(...)`` ``node`` has a value of JSON text
    (an ARRAY or VARIANT column's, a mixed ARRAY_CONSTRUCT's)."""
    fields = node.expressions
    return all(  # OBJECT_CONSTRUCT's keys are text (a STRUCT's fields are names)
        isinstance(f, exp.PropertyEQ) and isinstance(f.this, exp.Literal) for f in fields
    ) and any(is_json_text(f.expression) for f in fields)


def constructed_object(node: exp.Struct, inner: Inner) -> exp.Expression | None:
    """``OBJECT_CONSTRUCT`` with a value of JSON text (:func:`_holds_json`): the JSON text
    of an object of each value's value (the text was kept as a string: ``{"c":
    "[1,\"y\"]"}``); a NULL value's key is left out, as Snowflake's. None for another."""
    if not _holds_json(node):
        return None
    fields = [
        x
        for f in node.expressions
        for x in (exp.Literal.string(f.this.name), _as_variant(f.expression, inner))
    ]
    return call("TO_JSON", call("NAMED_STRUCT", *fields))


def _object_answer(node: exp.Expression) -> bool:
    """Whether ``node`` is OBJECT_INSERT, OBJECT_DELETE or OBJECT_PICK (their answer is JSON)."""
    if isinstance(node, exp.ObjectInsert):
        return True
    return isinstance(node, exp.Anonymous) and node.name.upper() in ("OBJECT_DELETE", "OBJECT_PICK")


def is_json_text(node: exp.Expression) -> bool:
    """Whether ``node`` is JSON text (Rewind's VARIANT): PARSE_JSON's value (a VARIANT or
    ARRAY column's, :mod:`rewind.sql.paths`), a path into it (``v:a``), a subscript of
    either (``v['a']``), a cast to VARIANT, an array function's answer of one
    (:func:`array_function`)."""
    while isinstance(node, exp.Bracket):
        node = node.this
    if isinstance(node, _ARRAY_ANSWERS):
        return any(is_json_text(a) for a in _arrays(node))
    return (
        isinstance(node, exp.ParseJSON | exp.JSONExtract)
        or is_variant_cast(node)
        or _semi_structured(node) is not None
        or (isinstance(node, exp.Array) and _of_variants(node))
        or (isinstance(node, exp.Struct) and _holds_json(node))
        or _object_answer(node)
    )


def _arrays(node: exp.Expression) -> list[exp.Expression]:
    """The array arguments of an array function (ARRAY_CAT's every argument)."""
    if isinstance(node, exp.ArrayConcat | exp.ArraysZip):
        return [node.this, *node.expressions]
    if isinstance(node, exp.ArrayContains | exp.ArrayPosition):
        return [node.this]  # sqlglot's: the array first, the value in ``expression``
    if isinstance(node, exp.ArrayExcept | exp.ArrayIntersect | exp.ArrayOverlaps):
        return [node.this, node.expression]
    return [node.this]


def json_items(array: exp.Expression, inner: Inner) -> exp.Expression:
    """The elements of ``array`` as Spark's variants (an ``array<variant>``): of JSON text
    its array's (NULL where it holds no array), of Spark's array each element's JSON."""
    text = inner(array) if is_json_text(array) else call("TO_JSON", inner(array))
    return call("FROM_JSON", text, exp.Literal.string("array<variant>"))


def _as_variant(value: exp.Expression, inner: Inner) -> exp.Expression:
    """``value`` as Spark's VARIANT: JSON text's value, else the value itself (an array or
    object as the same value)."""
    variant = _variant(value, inner)
    if variant is not None:
        return variant
    given = inner(value)
    if isinstance(value, exp.Struct | exp.Array | exp.Map | exp.VarMap):
        return call("TO_VARIANT_OBJECT", given)
    return exp.Cast(this=given, to=exp.DataType.build("VARIANT"))


def array_function(node: exp.Expression, inner: Inner) -> exp.Expression | None:
    """Snowflake's array functions of a semi-structured array (JSON text, :func:`is_json_text`),
    which Spark's take only its own arrays (``ARRAY_CAT`` of two concatenated their text,
    a wrong answer; the others failed to compile): the elements as variants, the answer
    an array's JSON text again, so that an UPDATE stores every element with its type.
    ``ARRAY_TO_STRING`` writes a string without its quotes and NULL as '', as Snowflake;
    ``ARRAY_CONTAINS``, ``ARRAY_POSITION``, ``ARRAYS_OVERLAP`` and ``ARRAY_REMOVE`` compare
    JSON values (``'1'::VARIANT`` is no 1). Those Rewind has no
    form of for one (:data:`_NO_JSON_FORM`) are refused by name. None where no argument is
    JSON text."""
    if not any(is_json_text(a) for a in _arrays(node)):
        return None
    if type(node) in _NO_JSON_FORM:
        raise UnsupportedError(
            f"{_NO_JSON_FORM[type(node)]} of a semi-structured array (a VARIANT or ARRAY "
            "column's, PARSE_JSON's) is not supported: LATERAL FLATTEN it and ARRAY_AGG "
            "the values, or cast it to a typed ARRAY first (ARRAY(VARCHAR))."
        )
    if isinstance(node, exp.ArrayToString):
        strings = call("FROM_JSON", inner(node.this), exp.Literal.string("array<string>"))
        return call("ARRAY_JOIN", strings, inner(node.expression), exp.Literal.string(""))
    items = json_items(node.this, inner)
    if isinstance(node, exp.ArrayOverlaps):  # a JSON value both hold
        other = template(
            "TRANSFORM(__rw_b, __rw_e -> TO_JSON(__rw_e))", b=json_items(node.expression, inner)
        )
        return template(
            "EXISTS(__rw_a, __rw_e -> ARRAY_CONTAINS(__rw_b, TO_JSON(__rw_e)))", a=items, b=other
        )
    compared = isinstance(node, exp.ArrayContains | exp.ArrayPosition | exp.ArrayRemove)
    value = call("TO_JSON", _as_variant(node.expression, inner)) if compared else exp.null()
    if isinstance(node, exp.ArrayContains):
        return template("EXISTS(__rw_a, __rw_e -> TO_JSON(__rw_e) = __rw_v)", a=items, v=value)
    if isinstance(node, exp.ArrayPosition):  # from 0, NULL where it is not there
        return template(
            "NULLIF(ARRAY_POSITION(TRANSFORM(__rw_a, __rw_e -> TO_JSON(__rw_e)), __rw_v), 0) - 1",
            a=items,
            v=value,
        )
    answers: dict[type[exp.Expression], Callable[[], exp.Expression]] = {
        exp.ArrayConcat: lambda: call("CONCAT", *[json_items(a, inner) for a in _arrays(node)]),
        exp.ArrayAppend: lambda: call("ARRAY_APPEND", items, _as_variant(node.expression, inner)),
        exp.ArrayPrepend: lambda: call("ARRAY_PREPEND", items, _as_variant(node.expression, inner)),
        exp.ArrayCompact: lambda: template(
            "FILTER(__rw_a, __rw_e -> __rw_e IS NOT NULL AND NOT IS_VARIANT_NULL(__rw_e))",
            a=items,
        ),
        exp.ArrayReverse: lambda: call("REVERSE", items),
        exp.ArrayRemove: lambda: template(  # every element equal to the value
            "FILTER(__rw_a, __rw_e -> TO_JSON(__rw_e) <> __rw_v)", a=items, v=value
        ),
    }
    answer = answers.get(type(node))
    if answer is not None:
        return call("TO_JSON", answer())
    if isinstance(node, exp.ArrayDistinct):  # variants compare as their JSON text
        return template(
            "CONCAT('[', ARRAY_JOIN(ARRAY_DISTINCT(TRANSFORM(__rw_a, __rw_e -> TO_JSON(__rw_e))),"
            " ','), ']')",
            a=items,
        )
    return None


# OBJECT_INSERT / OBJECT_DELETE / OBJECT_PICK on an object's entries, a map of variants
_OBJECT_ENTRIES = "map<string,variant>"
_INSERTED = (
    "IF(__rw_m IS NULL, NULL, IF(__rw_update OR NOT ARRAY_CONTAINS(MAP_KEYS(__rw_m), __rw_k), "
    "TO_JSON(IF(__rw_v IS NULL, MAP_FILTER(__rw_m, (__rw_key, __rw_val) -> __rw_key <> __rw_k), "
    "MAP_CONCAT(MAP_FILTER(__rw_m, (__rw_key, __rw_val) -> __rw_key <> __rw_k), "
    "MAP(__rw_k, __rw_v)))), RAISE_ERROR(CONCAT('OBJECT_INSERT: the object has the key ', "
    "__rw_k, ' already (a fourth argument TRUE replaces its value).'))))"
)
_KEPT = (
    "TO_JSON(MAP_FILTER(__rw_m, (__rw_key, __rw_val) -> {negated} "
    "ARRAY_CONTAINS(__rw_keys, __rw_key)))"
)


def object_function(node: exp.Expression, inner: Inner) -> exp.Expression | None:
    """Snowflake's ``OBJECT_INSERT(o, key, value [, update])``, ``OBJECT_DELETE(o, key,
    ...)`` and ``OBJECT_PICK(o, key, ... | array)`` (unknown functions), on an OBJECT
    column's JSON or OBJECT_CONSTRUCT's object: the object's JSON with the key added (an
    existing key an error unless ``update`` is TRUE; a NULL value leaves it out), the keys
    removed, only the keys kept. None for any other node."""
    if not _object_answer(node):
        return None
    target = node.this if isinstance(node, exp.ObjectInsert) else node.expressions[0]
    text = inner(target) if is_json_text(target) else call("TO_JSON", inner(target))
    entries = call("FROM_JSON", text, exp.Literal.string(_OBJECT_ENTRIES))
    if isinstance(node, exp.ObjectInsert):
        update = node.args.get("update_flag")
        return template(
            _INSERTED,
            m=entries,
            k=inner(node.args["key"]),
            v=_as_variant(node.args["value"], inner),
            update=inner(update) if update is not None else exp.false(),
        )
    given = node.expressions[1:]
    keys = (
        inner(given[0])
        if len(given) == 1 and isinstance(given[0], exp.Array)
        else call("ARRAY", *[inner(k) for k in given])
    )
    negated = "NOT" if node.name.upper() == "OBJECT_DELETE" else ""
    return template(_KEPT.format(negated=negated), m=entries, keys=keys)


# -- BigQuery's JSON (SPEC R27) ------------------------------------------------------------------
# JSON_TYPE's names of a JSON value's type (SCHEMA_OF_VARIANT's, in BigQuery's words)
_BIGQUERY_JSON_TYPE = """CASE
  WHEN __rw_t IS NULL THEN NULL
  WHEN __rw_t LIKE 'OBJECT%' THEN 'object'
  WHEN __rw_t LIKE 'ARRAY%' THEN 'array'
  WHEN __rw_t = 'STRING' THEN 'string'
  WHEN __rw_t = 'BOOLEAN' THEN 'boolean'
  WHEN __rw_t = 'VOID' THEN 'null'
  ELSE 'number'
END"""
# BigQuery's conversions of a JSON value: STRING(j), INT64(j), ... (LAX_: NULL where the
# value does not convert)
_CONVERSIONS: dict[type[exp.Expression], tuple[str, str]] = {
    exp.String: ("VARIANT_GET", "string"),
    exp.Int64: ("VARIANT_GET", "bigint"),
    exp.Float64: ("VARIANT_GET", "double"),
    exp.JSONBool: ("VARIANT_GET", "boolean"),
    exp.LaxString: ("TRY_VARIANT_GET", "string"),
    exp.LaxInt64: ("TRY_VARIANT_GET", "bigint"),
    exp.LaxFloat64: ("TRY_VARIANT_GET", "double"),
    exp.LaxBool: ("TRY_VARIANT_GET", "boolean"),
}
BIGQUERY_JSON: tuple[type[exp.Expression], ...] = (
    exp.JSONExtract,
    exp.JSONArray,
    exp.JSONObject,
    exp.JSONType,
    exp.JSONFormat,
    *_CONVERSIONS,
)


def bigquery_json(node: exp.Expression, inner: Inner) -> exp.Expression | None:
    """BigQuery's functions of JSON (Rewind's JSON text), as BigQuery answers them:
    ``JSON_QUERY`` / ``JSON_EXTRACT`` and a field access (``j.a[0]``,
    :func:`json_fields`) are JSON, a string's quotes kept (Spark's GET_JSON_OBJECT dropped
    them); ``JSON_TYPE``; ``STRING``, ``INT64``, ``FLOAT64``, ``BOOL`` and their ``LAX_``
    forms of JSON; ``TO_JSON_STRING`` of JSON (it failed); ``JSON_ARRAY`` and
    ``JSON_OBJECT`` (unknown, a syntax error). None for anything else."""
    if isinstance(node, exp.JSONExtract):
        variant = _variant(node, inner)
        return None if variant is None else call("TO_JSON", variant)
    if isinstance(node, exp.JSONArray):  # JSON_ARRAY(v, ...): each value a JSON value
        values = [exp.cast(_json_value(v, inner), "VARIANT") for v in node.expressions]
        return call("TO_JSON", call("ARRAY", *values))
    if isinstance(node, exp.JSONObject):  # JSON_OBJECT(k, v, ...): NULL values kept
        pairs = node.expressions
        if not all(isinstance(p, exp.JSONKeyValue) and p.this.is_string for p in pairs):
            return None
        fields = [x for p in pairs for x in (p.this.copy(), _json_value(p.expression, inner))]
        return call("TO_JSON", call("TO_VARIANT_OBJECT", call("NAMED_STRUCT", *fields)))
    argument = node.this
    variant = (
        call("PARSE_JSON", inner(argument))  # JSON_OBJECT's, JSON_ARRAY's
        if isinstance(argument, exp.JSONObject | exp.JSONArray)
        else _variant(argument, inner)
        if isinstance(argument, exp.Expression)
        else None
    )
    if variant is None:
        return None
    if isinstance(node, exp.JSONType):
        return template(_BIGQUERY_JSON_TYPE, t=call("SCHEMA_OF_VARIANT", variant))
    if isinstance(node, exp.JSONFormat):
        return call("TO_JSON", variant)
    function, spark = _CONVERSIONS[type(node)]
    return call(function, variant, exp.Literal.string("$"), exp.Literal.string(spark))


def _json_value(value: exp.Expression, inner: Inner) -> exp.Expression:
    """``value`` as a JSON value: JSON text's VARIANT, a NULL JSON's null, else itself."""
    if isinstance(value, exp.Null):
        return exp.cast(exp.null(), "VARIANT")
    return _variant(value, inner) or inner(value)


def json_fields(tree: exp.Expression) -> None:
    """BigQuery's field access of JSON (``PARSE_JSON(t).a``, ``.a[0].b``, ``['a']``) as
    the JSON path it is, in place, before names are folded to upper case (a JSON key
    keeps its case); Spark failed ("Can't extract a value from ...")."""
    for node in list(tree.find_all(exp.Dot, exp.Bracket)):
        steps: list[exp.Expression] = []
        base: exp.Expression = node
        while isinstance(base, exp.Dot | exp.Bracket):
            step = _field_step(base)
            if step is None:
                break
            steps.insert(0, step)
            base = base.this
        if steps and isinstance(base, exp.ParseJSON) and node.parent is not None:
            path = exp.JSONPath(expressions=[exp.JSONPathRoot(), *steps])
            node.replace(exp.JSONExtract(this=base.copy(), expression=path))


def _field_step(node: exp.Dot | exp.Bracket) -> exp.Expression | None:
    if isinstance(node, exp.Dot):
        name = node.expression
        return exp.JSONPathKey(this=name.name) if isinstance(name, exp.Identifier) else None
    if len(node.expressions) != 1:
        return None
    key = node.expressions[0]
    if key.is_string:
        return exp.JSONPathKey(this=key.name)
    return exp.JSONPathSubscript(this=int(key.name)) if key.is_int else None
