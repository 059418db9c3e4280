"""Snowflake's paths into a structured column: ``addr:city``, ``addr:geo.lat``,
``t.events:items[0].sku``, ``GET(tags, 0)``, ``GET_PATH(addr, 'geo.lat')`` on the
ARRAY, OBJECT and MAP columns of another engine's table (Spark's array, struct and map),
and on what OBJECT_CONSTRUCT and ARRAY_CONSTRUCT build.

sqlglot writes a path as Spark's ``GET_JSON_OBJECT``, which reads JSON text: right for a
VARCHAR column holding JSON, a compilation error on a nested column. Which one a column
is only the bound tables know, so :func:`typed` runs on each query of a statement as its
Spark SQL is written (:meth:`rewind.sql.query.Binding.sql`), with the column types of
the catalog tables it reads (a DML statement's target too): a path whose column is
nested becomes the subscripts Spark reads it with (``addr['city']``,
``events['items'][0]['sku']``, which :mod:`rewind.sql.spark_sql` then writes as
Snowflake answers them: NULL past an array's end or for a key that is not there). A path
on any other expression (JSON text, a subquery's column) is left as it is.

The same column types give ``DATE_TRUNC`` of a DATE or TIMESTAMP_NTZ column the type of
its argument, as in Snowflake (Spark's DATE_TRUNC answers a TIMESTAMP whatever it is given:
``2026-11-01 00:00:00 UTC`` for the month of a day), and make a date minus a date the
number of days between them, as Snowflake's (Spark's is an interval: ``30 days, 0:00:00``).

A VARIANT column (:data:`rewind.types.VARIANT`) is read as its JSON text wherever an
expression uses it (a path, a function, a comparison, GROUP BY), as every semi-structured
value of Rewind's; the column selected as it is stays a variant, so that an INSERT ...
SELECT or a statement's rewrite of the rows it keeps stores the value itself (the answer
shows its text: :func:`rewind.spark.to_arrow`).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from rewind.identifiers import normalize
from rewind.sql import flatten
from rewind.types import VARIANT, is_nested, struct_fields

_PATHS = (exp.JSONExtract, exp.JSONExtractScalar, exp.GetExtract)
# The column types DATE_TRUNC keeps (Spark's type -> the type it is cast back to).
_KEPT_BY_TRUNC = {"date": "DATE", "timestamp_ntz": "TIMESTAMPNTZ"}
# DATEADD's units below a day: of a DATE, they answer a TIMESTAMP_NTZ (Snowflake's)
_TIME_UNITS = {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND"}


def typed(tree: exp.Expression, types: Mapping[str, Mapping[str, str]]) -> None:
    """Rewrite, in place, the paths of ``tree`` into nested columns of its bound tables
    (``types``: a bound table's name, then each of its columns' Spark type), and the
    functions Snowflake applies to such a column that sqlglot writes for JSON text:
    ``OBJECT_KEYS(addr)`` is the struct's field names (NULL for a NULL value) or the map's
    keys (an OBJECT_CONSTRUCT's, its keys); and the dates and truncations
    :func:`_typed_dates` types; a VARIANT column used in an expression its JSON text
    (:func:`_variants_as_text`)."""
    _variants_as_text(tree, types)
    for node in list(tree.find_all(*_PATHS)):
        nested = _nested(node.this, types) or isinstance(node.this, exp.Struct | exp.Array)
        steps = _steps(node.expression) if nested else None
        if steps is not None and _missing(node.this, steps[0]):
            node.replace(exp.Null())  # a key OBJECT_CONSTRUCT did not name: NULL
        elif steps is not None:
            steps[0] = _field_named(_nested(node.this, types), steps[0])
            value: exp.Expression = node.this.copy()
            for step in steps:
                value = exp.Bracket(this=value, expressions=[step])
            node.replace(value)
    for bracket in list(tree.find_all(exp.Bracket)):  # a['x'] on an OBJECT column
        if len(bracket.expressions) == 1:
            key = _field_named(_nested(bracket.this, types), bracket.expressions[0])
            bracket.set("expressions", [key])
    for keys in list(tree.find_all(exp.JSONKeys)):
        kind, column = _nested(keys.this, types), keys.this
        if kind.startswith("map<"):
            keys.replace(exp.Anonymous(this="MAP_KEYS", expressions=[column.copy()]))
        elif kind.startswith("struct<") or isinstance(column, exp.Struct):
            fields = struct_fields(kind) if kind else _keys(column)
            names = [exp.Literal.string(name) for name in fields]
            keys.replace(
                exp.If(
                    this=exp.Is(this=column.copy(), expression=exp.Null()),
                    true=exp.Null(),
                    false=exp.Array(expressions=names),
                )
            )
    _typed_dates(tree, types)


def _variants_as_text(tree: exp.Expression, types: Mapping[str, Mapping[str, str]]) -> None:
    """Each VARIANT column of ``tree`` as its JSON text (:func:`_json_text`), but where a
    query selects it as it is (a bare column of a SELECT that is no subquery and neither
    groups nor drops duplicates: Spark neither groups nor compares variants); the input of
    a FLATTEN too, and BigQuery's fields of one (:func:`_field_access`)."""
    for lateral in list(tree.find_all(exp.Lateral)):  # FLATTEN(input => v)
        given = flatten.flattened_input(lateral)
        if isinstance(given, exp.Column):
            given.parent = lateral  # resolved in the lateral's own SELECT
            if _column_type(given, types) == VARIANT.spark:
                flatten.as_json_text(lateral, _json_text(given))
    for column in list(tree.find_all(exp.Column)):
        if isinstance(column.parent, exp.Anonymous) and column.parent.name == "TO_JSON":
            continue  # read as its text already
        fields = _field_access(column, types)
        if fields is not None:
            column.replace(fields)
            continue
        if _column_type(column, types) != VARIANT.spark:
            continue
        parent = column.parent.parent if isinstance(column.parent, exp.Alias) else column.parent
        bare = (
            isinstance(parent, exp.Select)
            and column.arg_key != "group"
            and not parent.args.get("distinct")
            and not parent.args.get("group")
            and parent.find_ancestor(exp.Subquery, exp.CTE) is None
        )
        if not bare:  # JSON text, as PARSE_JSON's: paths, subscripts, TYPEOF read it so
            column.replace(_json_text(column.copy()))


def _json_text(column: exp.Column) -> exp.Expression:
    """A VARIANT column's JSON text, ``PARSE_JSON(TO_JSON(column))``: JSON text to every
    rewrite that reads one (rewind.sql.answers.parsed_json passes it through)."""
    column.parent = None
    return exp.ParseJSON(this=exp.Anonymous(this="TO_JSON", expressions=[column]))


def _field_access(
    column: exp.Column, types: Mapping[str, Mapping[str, str]]
) -> exp.Expression | None:
    """BigQuery's fields of a JSON column, ``j.a.b`` / ``t.j.a`` (a column reference to
    sqlglot): the fields (``exp.Dot``) of the column's JSON text, which
    :func:`rewind.sql.variants.json_fields` reads as a path; None for any other column."""
    parts = column.parts
    for named in (1, 2):
        if len(parts) <= named:
            return None
        base = exp.Column(
            this=parts[named - 1].copy(), table=parts[0].copy() if named == 2 else None
        )
        base.parent = column.parent  # resolved in the column's own SELECT
        if _column_type(base, types) == VARIANT.spark:
            base.parent = None
            value = _json_text(base)
            for part in parts[named:]:
                value = exp.Dot(this=value, expression=part.copy())
            return value
    return None


def _field_named(kind: str, step: exp.Expression) -> exp.Expression:
    """A path's first key into a struct column of Spark type ``kind``: the field of that
    name, else the one that differs from it only in case (an OBJECT column's declared
    fields are upper-cased, SPEC R4: ``a:x`` reads the field ``X``)."""
    if not (kind.startswith("struct<") and step.is_string):
        return step
    fields = struct_fields(kind)
    folded = [f for f in fields if f.upper() == step.name.upper()]
    if step.name in fields or len(folded) != 1:
        return step
    return exp.Literal.string(folded[0])


def _keys(value: exp.Expression) -> list[str]:
    """The keys the OBJECT_CONSTRUCT ``value`` names."""
    return [e.this.name for e in value.expressions if isinstance(e, exp.PropertyEQ)]


def _missing(value: exp.Expression, step: exp.Expression) -> bool:
    """Whether ``step`` is a key that the object ``value`` builds has not (keys are
    case-sensitive, as in Snowflake; Spark refused the statement)."""
    return isinstance(value, exp.Struct) and step.is_string and step.name not in _keys(value)


def _typed_dates(tree: exp.Expression, types: Mapping[str, Mapping[str, str]]) -> None:
    """A date minus a date is a number of days; DATE_TRUNC keeps a DATE or TIMESTAMP_NTZ
    column's (or cast's) type, TIME_SLICE a DATE's (the module's last paragraph); DATEADD
    of hours (minutes, ...) to a DATE is a TIMESTAMP_NTZ, as Snowflake's (Spark's DATE plus
    an interval is a TIMESTAMP, an instant)."""
    for difference in list(tree.find_all(exp.Sub)):
        if _is_date(difference.this, types) and _is_date(difference.expression, types):
            days = exp.Anonymous(
                this="DATEDIFF",
                expressions=[difference.this.copy(), difference.expression.copy()],
            )
            difference.replace(days)
    for time_slice in list(tree.find_all(exp.TimeSlice)):  # a DATE's slice is a DATE
        if _is_date(time_slice.this, types):
            time_slice.replace(exp.Cast(this=time_slice.copy(), to=exp.DataType.build("DATE")))
    for trunc in list(tree.find_all(exp.TimestampTrunc)):
        stored = _wall_clock_type(trunc.this, types)
        if stored in _KEPT_BY_TRUNC:
            kept = exp.DataType.build(_KEPT_BY_TRUNC[stored])
            trunc.replace(exp.Cast(this=trunc.copy(), to=kept))
    for added in list(tree.find_all(exp.DateAdd)):  # DATEADD(hour, n, a DATE): its wall clock
        if added.text("unit").upper() in _TIME_UNITS and _is_date(added.this, types):
            wall_clock = exp.DataType.build("TIMESTAMPNTZ")
            added.replace(exp.Cast(this=added.copy(), to=wall_clock))


def _wall_clock_type(node: exp.Expression, types: Mapping[str, Mapping[str, str]]) -> str | None:
    """The Spark type of ``node`` where it is surely a DATE or a TIMESTAMP_NTZ (a column of
    a bound table, a cast), else None."""
    if isinstance(node, exp.Column):
        return _column_type(node, types)
    if isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.TIMESTAMPNTZ):
        return "timestamp_ntz"
    return "date" if isinstance(node, exp.Cast) and _is_date(node, types) else None


_DATES = (exp.CurrentDate, exp.TsOrDsToDate, exp.StrToDate, exp.DateFromParts)


def _is_date(node: exp.Expression, types: Mapping[str, Mapping[str, str]]) -> bool:
    """Whether ``node`` is surely a DATE: a DATE column of a bound table, a cast to DATE,
    a function that answers one."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Cast):  # TRY_CAST too
        return node.to.is_type(exp.DataType.Type.DATE)
    if isinstance(node, exp.Column):
        return _column_type(node, types) == "date"
    return isinstance(node, _DATES)


def _nested(node: exp.Expression, types: Mapping[str, Mapping[str, str]]) -> str:
    """The Spark type of ``node`` where it is a nested column of a bound table, else ''."""
    kind = _column_type(node, types) if isinstance(node, exp.Column) else None
    return kind if kind is not None and is_nested(kind) else ""


def _steps(path: exp.Expression) -> list[exp.Expression] | None:
    """A path's keys and indexes, or None for what has no subscript (a wildcard)."""
    if isinstance(path, exp.Literal):  # GET(x, 'key') / GET(x, 0)
        return [path.copy()]
    if not isinstance(path, exp.JSONPath):
        return None
    steps: list[exp.Expression] = []
    for part in path.expressions:
        if isinstance(part, exp.JSONPathRoot):
            continue
        if isinstance(part, exp.JSONPathKey) and isinstance(part.this, str):
            steps.append(exp.Literal.string(part.this))
        elif isinstance(part, exp.JSONPathSubscript) and isinstance(part.this, int):
            steps.append(exp.Literal.number(part.this))
        else:
            return None
    return steps


def _column_type(column: exp.Column, types: Mapping[str, Mapping[str, str]]) -> str | None:
    """The Spark type of the bound table column ``column`` names in its own SELECT, or
    None where it may name anything else (a subquery's or CTE's column, two tables')."""
    select = column.find_ancestor(exp.Select)
    if select is None or not isinstance(column.this, exp.Identifier):
        return None
    sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
    tables = [source.this for source in sources if source is not None]
    name = normalize(column.this)
    qualifier = column.args.get("table")
    found = []
    for table in tables:
        if column.find_ancestor(type(table)) is table:
            continue  # the column is the input of this source (LATERAL FLATTEN(input => v))
        columns = types.get(table.name) if isinstance(table, exp.Table) else None
        if qualifier is not None:
            named = table.args.get("alias")
            called = named.this if named is not None else table.this
            if isinstance(called, exp.Identifier) and normalize(called) == normalize(qualifier):
                found.append(columns.get(name) if columns is not None else None)
        elif columns is None:
            return None  # a source whose columns are not known here: it may hold the name
        elif name in columns:
            found.append(columns[name])
    return found[0] if len(found) == 1 else None
