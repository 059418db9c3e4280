"""BigQuery functions that sqlglot writes as Spark functions answering otherwise (SPEC
R27): a wrong answer with no error, or a compilation error where BigQuery answers. The
counterpart of :func:`rewind.sql.spark_sql._snowflake_answers` for ``--dialect bigquery``.

- A time zone argument: ``FORMAT_TIMESTAMP(fmt, ts, zone)`` and ``TIMESTAMP_TRUNC(ts,
  unit, zone)`` dropped it (the UTC wall clock, formatted and truncated); ``DATE(ts,
  zone)`` and ``DATETIME(ts, zone)`` failed. Each reads the instant's wall clock in
  ``zone`` (Spark's session time zone is UTC).
- Weeks: BigQuery's ``WEEK`` is ``WEEK(SUNDAY)``, a week that starts on Sunday, and
  ``WEEK(<day>)`` one that starts on that day; Spark's weeks start on Monday (ISO), so
  ``DATE_TRUNC(d, WEEK)`` was refused and ``EXTRACT(WEEK FROM d)`` answered the ISO week
  (1 for Saturday 3 January 2026, BigQuery's 0: the days before the year's first Sunday
  are week 0). ``ISOWEEK`` / ``ISOYEAR`` are Spark's ``WEEK`` / ``YEAROFWEEK`` (Spark's
  TRUNC knows neither: ``DATE_TRUNC(d, ISOWEEK)`` was NULL);
  ``EXTRACT(DATE FROM ts)`` is the date; ``DATETIME_TRUNC`` was no Spark function.
- ``DATE_DIFF`` / ``DATETIME_DIFF`` count unit boundaries (one month from 31 January to
  1 February; Spark's difference counted whole months, 0) and ``CAST(x AS INT64)`` rounds
  half away from zero; ``REGEXP_EXTRACT`` is NULL where nothing matches and the whole
  match of a pattern without a group (it failed); ``ARRAY_AGG(x ORDER BY ... [LIMIT n])``
  keeps its order and limit (Spark refused the clause, and sqlglot dropped the order of a
  DISTINCT one) (:mod:`rewind.sql.answers`).
- Parsing text: ``PARSE_TIMESTAMP(fmt, text, zone)`` dropped its zone (the text read as
  UTC wall clock) and its ``%Ez`` offset (``+02:00``) was no Spark pattern (refused);
  ``PARSE_DATETIME`` was no Spark function; the ``SAFE.`` prefix (NULL where the function
  fails) was an unknown function. ``INITCAP`` without delimiters was refused, and
  ``PARSE_JSON`` took any text (:mod:`rewind.sql.answers`). ``APPROX_QUANTILES`` was no
  Spark function; ``FROM UNNEST([STRUCT(...), ...])`` gave one struct column.
- ``FORMAT`` failed on a decimal (``FORMAT('%.2f', 2.5)``) and knew neither ``%t`` nor
  the ``'`` flag; ``GENERATE_DATE_ARRAY`` of text failed, ``GENERATE_TIMESTAMP_ARRAY``
  was no Spark function; ``ARRAY(SELECT ...)`` failed in Spark's parser; ``LAST_DAY(d,
  WEEK)`` (and ``ISOWEEK``, ``QUARTER``, ``YEAR``) was refused; ``IEEE_DIVIDE`` and
  ``ARRAY_REVERSE`` were no Spark functions; ``GENERATE_ARRAY(5, 1)`` counted down
  (BigQuery's step is 1: []), ``TIMESTAMP(text, zone)``, ``EXTRACT(DAYOFYEAR ...)``,
  ``ARRAY_CONCAT_AGG`` and ``JSON_VALUE_ARRAY`` failed; so did ``ANY_VALUE(x HAVING MAX
  y)`` and ``PERCENTILE_CONT(x, p) OVER (...)``; ``APPROX_TOP_COUNT``'s structs are
  (value, count), as BigQuery's (Spark's: item).
"""

from __future__ import annotations

import re

from sqlglot import exp

from rewind.errors import RewindError, UnsupportedError
from rewind.sql.answers import (
    TRUNCATED_UNITS,
    Rewrites,
    boundaries,
    call,
    distinct_count,
    initcap,
    json_as_text,
    last_day,
    ordered_array,
    parsed_json,
    regexp_extract,
    rewritten,
    rounded_to_integer,
    template,
    wall_clock_from_parts,
)
from rewind.sql.variants import BIGQUERY_JSON, bigquery_json

_DAYS = ("SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY")
_EXTRACTED = {"ISOWEEK": "WEEK", "ISOYEAR": "YEAROFWEEK", "DAYOFYEAR": "DOY"}
_OFFSET = re.compile(r"%:?[zZ]")  # a format that reads the text's own offset or zone
# A directive of FORMAT's format: its flags, width, precision and conversion.
_DIRECTIVE = re.compile(r"%([-+ #0']*)(\*|\d*)(\.(?:\d+|\*))?(.)")
# The type each conversion takes, as Java's formatter (Spark's FORMAT_STRING) takes it:
# its decimals are Spark's own Decimal, which no conversion of Java's formats.
_FORMAT_TYPES = {
    **dict.fromkeys("dioxX", "BIGINT"),
    **dict.fromkeys("fFeEgG", "DOUBLE"),
    **dict.fromkeys("stT", "STRING"),
}


def _inner(node: exp.Expression) -> exp.Expression:
    """``node`` answered too: transform() does not descend into a replacement."""
    return node.transform(bigquery_answers)


def _wall_clock(value: exp.Expression, zone: exp.Expression) -> exp.Expression:
    """The instant ``value`` as the wall clock in ``zone`` reads it (in UTC terms)."""
    return call("FROM_UTC_TIMESTAMP", _inner(value), zone.copy())


def _week_start(unit: exp.Expression | None) -> int | None:
    """0 (Sunday) .. 6 for a week unit (``WEEK`` alone: Sunday; ``ISOWEEK``: Monday), None
    for another unit."""
    if isinstance(unit, exp.WeekStart):
        return _DAYS.index(unit.name.upper())
    name = unit.name.upper() if isinstance(unit, exp.Var | exp.Literal) else ""
    return {"WEEK": 0, "ISOWEEK": 1}.get(name)


def _days_into_week(value: exp.Expression, start: int) -> exp.Expression:
    """How many days ``value`` is past its week's first day (0 .. 6)."""
    weekday = exp.Sub(this=call("DAYOFWEEK", value.copy()), expression=exp.Literal.number(1))
    offset = exp.Sub(this=weekday, expression=exp.Literal.number(start))
    return call("PMOD", offset, exp.Literal.number(7))


def _days_into_iso_year(value: exp.Expression) -> exp.Expression:
    """How many days ``value`` is past the Monday its ISO year begins on."""
    weeks = exp.Sub(
        this=exp.Extract(this=exp.var("WEEK"), expression=value.copy()),
        expression=exp.Literal.number(1),
    )
    return exp.Add(
        this=exp.Mul(this=exp.paren(weeks), expression=exp.Literal.number(7)),
        expression=_days_into_week(value, 1),
    )


def _days_back(value: exp.Expression, back: exp.Expression) -> exp.Expression:
    """The start of the day ``back`` days before ``value``'s (a TIMESTAMP)."""
    day = call("DATE_TRUNC", exp.Literal.string("DAY"), value.copy())
    return call("TIMESTAMPADD", exp.var("DAY"), exp.Neg(this=exp.paren(back)), day)


def _difference(node: exp.DateDiff | exp.DatetimeDiff) -> exp.Expression | None:
    """DATE_DIFF / DATETIME_DIFF count unit boundaries (:func:`answers.boundaries`), weeks
    from each week's first day; TIMESTAMP_DIFF counts whole units, as Spark's does."""
    unit = node.args.get("unit")
    end, start = _inner(node.this), _inner(node.expression)
    name = unit.name.upper() if isinstance(unit, exp.Var | exp.Literal) else ""
    week = _week_start(unit)
    if week is not None:
        first, last = (_days_back(v, _days_into_week(v, week)) for v in (start, end))
        return call("TIMESTAMPDIFF", exp.var("WEEK"), first, last)
    if name == "ISOYEAR":
        years = (exp.Extract(this=exp.var("YEAROFWEEK"), expression=v) for v in (end, start))
        return exp.Sub(this=next(years), expression=next(years))
    return boundaries(name, start, end) if name in TRUNCATED_UNITS else None


def _truncated(node: exp.Expression) -> exp.Expression | None:
    """DATE_TRUNC / DATETIME_TRUNC / TIMESTAMP_TRUNC to a week or an ISO year, in a zone,
    and DATETIME_TRUNC at all."""
    unit, zone = node.args.get("unit"), node.args.get("zone")
    value = _wall_clock(node.this, zone) if zone is not None else _inner(node.this)
    name = unit.name.upper() if isinstance(unit, exp.Var | exp.Literal) else ""
    start = _week_start(unit)
    if start is not None or name == "ISOYEAR":
        back = _days_into_week(value, start) if start is not None else _days_into_iso_year(value)
        first: exp.Expression = _days_back(value, back)
    elif isinstance(node, exp.DatetimeTrunc) or zone is not None:
        first = call("DATE_TRUNC", exp.Literal.string(name or "DAY"), value)
    else:
        return None
    if zone is not None:
        return call("TO_UTC_TIMESTAMP", first, zone.copy())
    if isinstance(node, exp.DateTrunc):
        return exp.cast(first, "DATE")
    if isinstance(node, exp.DatetimeTrunc):
        return exp.cast(first, exp.DataType.build("TIMESTAMPNTZ"))
    return first


def _extracted(node: exp.Extract) -> exp.Expression | None:
    part, value = node.this, node.expression
    name = part.name.upper() if isinstance(part, exp.Var) else ""
    if name in _EXTRACTED:
        return exp.Extract(this=exp.var(_EXTRACTED[name]), expression=_inner(value))
    if name == "DATE":
        return exp.cast(_inner(value), "DATE")
    start = _week_start(part)
    if start is not None:  # the weeks begun on or before the day, within its year
        begun = exp.Sub(
            this=call("DAYOFYEAR", _inner(value)), expression=_days_into_week(_inner(value), start)
        )
        weeks = exp.Div(
            this=exp.paren(exp.Add(this=begun, expression=exp.Literal.number(6))),
            expression=exp.Literal.number(7),
        )
        return exp.cast(call("FLOOR", weeks), "BIGINT")
    return None


def _ordered_array_agg(node: exp.ArrayAgg) -> exp.Expression | None:
    """``ARRAY_AGG([DISTINCT] x ORDER BY ... [LIMIT n])`` (:func:`answers.ordered_array`;
    sqlglot wrote COLLECT_LIST with an ORDER BY Spark refuses, or without its order)."""
    body, limit = node.this, None
    if isinstance(body, exp.Limit):
        body, limit = body.this, body.expression
    if not isinstance(body, exp.Order):
        return None
    return ordered_array(body.this, list(body.expressions), limit, _inner)


def _parsed_time(node: exp.StrToTime | exp.ParseDatetime, safe: bool) -> exp.Expression:
    """PARSE_TIMESTAMP (its text the wall clock in its zone, UTC by default, unless the
    format reads an offset: ``%z``, ``%Ez``) and PARSE_DATETIME (a TIMESTAMP_NTZ)."""
    form = node.args.get("format")
    if isinstance(form, exp.Literal) and form.is_string:
        form = exp.Literal.string(form.name.replace("%Ez", "%:z"))  # +02:00, as Snowflake's
    parsed: exp.Expression = exp.StrToTime(this=_inner(node.this), format=form, safe=safe)
    if isinstance(node, exp.ParseDatetime):
        return exp.cast(parsed, exp.DataType.build("TIMESTAMPNTZ"))
    zone = node.args.get("zone")
    if zone is not None and not (form is not None and _OFFSET.search(form.name)):
        parsed = call("TO_UTC_TIMESTAMP", parsed, _inner(zone))
    return parsed


# BigQuery's functions whose SAFE. form Rewind answers (NULL where they fail).
_SAFE = "PARSE_DATE, PARSE_DATETIME, PARSE_TIMESTAMP, PARSE_JSON and CAST"


def _safe(node: exp.SafeFunc) -> exp.Expression:
    """``SAFE.f(...)``: NULL where ``f`` fails, for the functions of :data:`_SAFE`
    (Spark has no form of any other that answers NULL where BigQuery's fails: refused by
    name, never an answer that differs)."""
    function = node.this
    if isinstance(function, exp.Cast):
        return _inner(exp.TryCast(this=function.this.copy(), to=function.to.copy()))
    if isinstance(function, exp.StrToTime | exp.ParseDatetime):
        return _parsed_time(function, True)
    if isinstance(function, exp.StrToDate | exp.ParseJSON):
        safe = function.copy()
        safe.set("safe", True)
        return _inner(safe)
    raise UnsupportedError(
        f"{node.sql('bigquery')}: the SAFE. prefix is supported for {_SAFE} only "
        "(see also SAFE_CAST, SAFE_DIVIDE)."
    )


def _formatted(node: exp.TimeToStr) -> exp.Expression | None:
    """FORMAT_TIMESTAMP / FORMAT_DATE: ``%Ez`` is the offset with a colon; a zone argument
    formats the instant's wall clock there (an offset or zone name in the format would
    be UTC's, not the zone's: refused)."""
    form, zone = node.args.get("format"), node.args.get("zone")
    if not (isinstance(form, exp.Literal) and form.is_string):
        return None
    if zone is not None and _OFFSET.search(form.name.replace("%Ez", "%z")):
        raise UnsupportedError(
            "FORMAT_TIMESTAMP(format, timestamp, time_zone) with an offset or zone name "
            "(%z, %Ez, %Z) in its format is not supported: Rewind would show UTC's."
        )
    replacement = node.copy()
    replacement.set("format", exp.Literal.string(form.name.replace("%Ez", "%:z")))
    value = _wall_clock(node.this, zone) if zone is not None else _inner(node.this)
    replacement.set("this", value)
    replacement.set("zone", None)
    return replacement


def _quantiles(node: exp.ApproxQuantiles) -> exp.Expression | None:
    """``APPROX_QUANTILES(x, n)``: the minimum, the n - 1 quantiles between and the
    maximum, NULLs left out (Spark's APPROX_PERCENTILE of those n + 1 fractions; it was no
    Spark function)."""
    count = node.expression
    if isinstance(node.this, exp.Distinct) or not (
        isinstance(count, exp.Literal) and count.is_int and int(count.name) > 0
    ):
        return None
    n = int(count.name)
    fractions = [exp.Literal.number(repr(i / n)) for i in range(n + 1)]
    return call("APPROX_PERCENTILE", _inner(node.this), exp.Array(expressions=fractions))


def _unnested_structs(node: exp.Unnest) -> exp.Expression | None:
    """``FROM UNNEST([STRUCT(1 AS a, 'x' AS b), ...])``: a row per struct, a column per
    field, as BigQuery answers (Spark's EXPLODE gave one struct column, ``col``): Spark's
    INLINE. Only a literal array of structs, with no alias or offset (an alias names the
    struct itself, ``t.a``, which EXPLODE keeps)."""
    values = node.expressions
    if (
        not isinstance(node.parent, exp.From | exp.Join)
        or node.args.get("alias") is not None
        or node.args.get("offset")
        or len(values) != 1
        or not isinstance(values[0], exp.Array)
        or not values[0].expressions
        or not all(isinstance(v, exp.Struct) for v in values[0].expressions)
    ):
        return None
    return exp.Table(this=exp.Inline(this=_inner(values[0])))


def _format(node: exp.Format) -> exp.Expression | None:
    """``FORMAT(format, value, ...)`` with a literal format, as Spark's FORMAT_STRING
    (Java's formatter) prints it: each value cast to the type its directive takes
    (:data:`_FORMAT_TYPES`: ``FORMAT('%.2f', 2.5)`` failed on Spark's decimal), ``%t`` /
    ``%T`` (a value as text) and ``%F`` as Java's ``%s`` / ``%f``, the ``'`` flag (group
    thousands) as Java's ``,``. None for a format that is not literal.

    Raises:
        UnsupportedError: for a ``*`` width or precision, or a conversion BigQuery has not.
    """
    if not node.this.is_string:
        return None
    values, written, parts = list(node.expressions), [], []
    for directive in _DIRECTIVE.finditer(node.this.name):
        flags, width, precision, conversion = directive.groups()
        if conversion == "%":
            continue
        if "*" in width + (precision or "") or conversion not in _FORMAT_TYPES or not values:
            raise UnsupportedError(f"FORMAT's directive {directive.group(0)!r} is not supported.")
        java = {"t": "s", "T": "s", "F": "f"}.get(conversion, conversion)
        parts.append(
            (directive.span(), f"%{flags.replace(chr(39), ',')}{width}{precision or ''}{java}")
        )
        written.append(exp.cast(_inner(values.pop(0)), _FORMAT_TYPES[conversion]))
    text = node.this.name
    for (start, end), replacement in reversed(parts):
        text = text[:start] + replacement + text[end:]
    return call("FORMAT_STRING", exp.Literal.string(text), *written, *map(_inner, values))


def _array_subquery(node: exp.Array) -> exp.Expression | None:
    """``ARRAY(SELECT x FROM ... [WHERE ...] [ORDER BY ...] [LIMIT n])`` (Spark has no
    ARRAY subquery: its parser failed on the statement Rewind wrote) as a subquery of one
    aggregate, the values in their order (:func:`answers.ordered_array`). None for an
    ARRAY of values.

    Raises:
        UnsupportedError: for a subquery of several columns, or one that groups, is
            DISTINCT, aggregates, or combines queries.
    """
    if len(node.expressions) != 1 or not isinstance(node.expressions[0], exp.Query):
        return None
    query = node.expressions[0]
    grouped = any(query.args.get(k) for k in ("group", "having", "distinct", "qualify"))
    if (
        not isinstance(query, exp.Select)
        or len(query.expressions) != 1
        or grouped
        or query.find(exp.AggFunc, exp.Star)
    ):
        raise UnsupportedError(
            "ARRAY(subquery) is supported for one column of a SELECT without GROUP BY, "
            "DISTINCT, aggregates or set operations."
        )
    base = query.copy()
    order, limit = base.args.pop("order", None), base.args.pop("limit", None)
    value = base.expressions[0].unalias()
    keys = list(order.expressions) if order is not None else []
    collected = ordered_array(value, keys, limit.expression if limit else None, _inner)
    base.set("expressions", [])
    answered = _inner(base)
    answered.set("expressions", [collected])
    return exp.Subquery(this=answered)


# IEEE_DIVIDE(x, y): a DOUBLE division that never fails (Spark's ANSI division does at 0).
_IEEE_DIVIDE = (
    "CASE WHEN CAST(__rw_y AS DOUBLE) <> 0 OR ISNAN(CAST(__rw_y AS DOUBLE)) "
    "THEN CAST(__rw_x AS DOUBLE) / CAST(__rw_y AS DOUBLE) "
    "WHEN __rw_x > 0 THEN DOUBLE('Infinity') WHEN __rw_x < 0 THEN DOUBLE('-Infinity') "
    "WHEN __rw_x IS NOT NULL AND __rw_y IS NOT NULL THEN DOUBLE('NaN') END"
)


def _ieee_divide(node: exp.Anonymous) -> exp.Expression | None:
    """``IEEE_DIVIDE(x, y)``: ``x / y`` as a DOUBLE, +/-Infinity or NaN by zero (no Spark
    function)."""
    if node.name.upper() != "IEEE_DIVIDE" or len(node.expressions) != 2:
        return None
    x, y = (_inner(argument) for argument in node.expressions)
    return template(_IEEE_DIVIDE, x=x, y=y)


# GENERATE_ARRAY / GENERATE_DATE_ARRAY / GENERATE_TIMESTAMP_ARRAY: [] where the step goes
# away from the end (Spark's SEQUENCE(5, 1) counted down with its own step of -1, a wrong
# answer, and failed on dates the other way); __rw_up is whether the step is positive.
_GENERATED = (
    "IF((__rw_up AND __rw_start > __rw_end) OR (NOT __rw_up AND __rw_start < __rw_end), "
    "ARRAY(), SEQUENCE(__rw_start, __rw_end, __rw_step))"
)


def _sequence(
    node: exp.GenerateSeries | exp.GenerateDateArray | exp.GenerateTimestampArray,
) -> exp.Expression | None:
    """BigQuery's generated arrays (:data:`_GENERATED`), their bounds as dates or timestamps
    for the date and timestamp ones (Spark refused text, which BigQuery reads as either).
    None for a date or timestamp step that is no literal interval."""
    step = _inner(node.args.get("step") or exp.Literal.number(1))
    bounds = {bound: _inner(node.args[bound]) for bound in ("start", "end")}
    if isinstance(node, exp.GenerateSeries):
        up: exp.Expression = exp.GT(this=step.copy(), expression=exp.Literal.number(0))
    else:
        to = "DATE" if isinstance(node, exp.GenerateDateArray) else "TIMESTAMP"
        bounds = {bound: exp.cast(value, to) for bound, value in bounds.items()}
        if not (isinstance(step, exp.Interval) and isinstance(step.this, exp.Literal)):
            return None
        up = exp.Boolean(this=not step.this.name.strip().startswith("-"))
    return template(_GENERATED, up=up, step=step, **bounds)


def _named_window(node: exp.Window) -> exp.Expression | None:
    """``OVER (w ORDER BY ...)``: the select's ``WINDOW w AS (...)`` with what the call
    adds to it (Spark reads ``OVER w`` alone: a syntax error). None for other windows."""
    extended = any(node.args.get(k) for k in ("partition_by", "order", "spec"))
    select = node.find_ancestor(exp.Select)
    if node.args.get("alias") is None or not extended or select is None:
        return None
    named = {w.name: w for w in select.args.get("windows") or []}
    base = named.get(node.alias)
    if base is None:
        raise RewindError(
            f"SQL compilation error: Unrecognized window alias {node.alias}.",
            code="SQL_COMPILATION_ERROR",
        )
    window = node.copy()
    window.set("alias", None)
    for key in ("partition_by", "order", "spec"):
        if not node.args.get(key) and base.args.get(key):
            window.set(key, base.args[key])
    return _inner(window)


_REWRITES: Rewrites = [
    (BIGQUERY_JSON, lambda node: bigquery_json(node, _inner)),
    (exp.TimeToStr, _formatted),
    (exp.Format, _format),
    (exp.Anonymous, _ieee_divide),
    (exp.ArrayReverse, lambda node: call("REVERSE", _inner(node.this))),
    (exp.LastDay, lambda node: last_day(node, {"ISOWEEK": "SU"}, _inner)),
    (exp.Array, _array_subquery),
    ((exp.GenerateSeries, exp.GenerateDateArray, exp.GenerateTimestampArray), _sequence),
    (  # ANY_VALUE(x HAVING MAX|MIN y): x of the row with the largest | smallest y
        exp.AnyValue,
        lambda node: (
            call(
                "MAX_BY" if node.this.args.get("max") else "MIN_BY",
                _inner(node.this.this),
                _inner(node.this.expression),
            )
            if isinstance(node.this, exp.HavingMax)
            else None
        ),
    ),
    (  # PERCENTILE_CONT(x, p) OVER (...): Spark's PERCENTILE interpolates alike
        exp.PercentileCont,
        lambda node: (
            call("PERCENTILE", _inner(node.this), _inner(node.expression))
            if node.expression is not None
            else None
        ),
    ),
    (  # PERCENTILE_DISC(x, p) OVER (...): Spark's takes p, its values ordered
        exp.PercentileDisc,
        lambda node: (
            exp.WithinGroup(
                this=call("PERCENTILE_DISC", _inner(node.expression)),
                expression=exp.Order(expressions=[exp.Ordered(this=_inner(node.this))]),
            )
            if node.expression is not None
            else None
        ),
    ),
    (exp.Window, lambda node: distinct_count(node, _inner)),
    (exp.Window, _named_window),
    (  # APPROX_TOP_COUNT(x, n): BigQuery's structs are (value, count); Spark's (item, count)
        exp.ApproxTopK,
        lambda node: template(
            "TRANSFORM(APPROX_TOP_K(__rw_x, __rw_n), __rw_e -> NAMED_STRUCT('value', "
            "__rw_e.item, 'count', __rw_e.count))",
            x=_inner(node.this),
            n=_inner(node.expression),
        ),
    ),
    (exp.ArrayConcatAgg, lambda node: call("FLATTEN", call("COLLECT_LIST", _inner(node.this)))),
    (  # JSON_VALUE_ARRAY(json [, path]): its array's scalar values as text
        exp.JSONValueArray,
        lambda node: call(
            "FROM_JSON",
            exp.JSONExtractScalar(this=_inner(node.this), expression=node.expression.copy()),
            exp.Literal.string("ARRAY<STRING>"),
        ),
    ),
    (
        exp.Timestamp,
        lambda node: (
            call(
                "TO_UTC_TIMESTAMP",
                exp.cast(_inner(node.this), "TIMESTAMP"),
                _inner(node.args["zone"]),
            )
            if node.args.get("zone") is not None
            else None
        ),
    ),
    ((exp.DateTrunc, exp.DatetimeTrunc, exp.TimestampTrunc), _truncated),
    (exp.Extract, _extracted),
    (
        (exp.DateDiff, exp.DatetimeDiff),
        lambda node: _difference(node) if node.args.get("date_part_boundary") else None,
    ),
    (exp.Cast, lambda node: rounded_to_integer(node, _inner)),
    (exp.Cast, lambda node: json_as_text(node, _inner)),
    (exp.RegexpExtract, lambda node: regexp_extract(node, _inner)),
    (  # ARRAY_AGG(x IGNORE NULLS ...): its NULLs are left out anyway
        exp.IgnoreNulls,
        lambda node: _ordered_array_agg(node.this) if isinstance(node.this, exp.ArrayAgg) else None,
    ),
    (exp.ArrayAgg, _ordered_array_agg),
    (
        exp.Date,
        lambda node: (
            exp.cast(_wall_clock(node.this, node.args["zone"]), "DATE")
            if node.args.get("zone") is not None
            else None
        ),
    ),
    (
        exp.Datetime,
        lambda node: (
            exp.cast(_wall_clock(node.this, node.expression), exp.DataType.build("TIMESTAMPNTZ"))
            if node.expression is not None
            else None
        ),
    ),
    (exp.TimestampFromParts, lambda node: wall_clock_from_parts(node, _inner)),
    (  # SHA256 / SHA512 / SHA1 are BYTES in BigQuery (TO_HEX(SHA256(x)) hexed the hex text)
        exp.SHA2Digest,
        lambda node: call(
            "UNHEX",
            call("SHA2", _inner(node.this), node.args.get("length") or exp.Literal.number(256)),
        ),
    ),
    (exp.SHA1Digest, lambda node: call("UNHEX", call("SHA1", _inner(node.this)))),
    (exp.ByteLength, lambda node: call("OCTET_LENGTH", _inner(node.this))),
    (  # IS_INF(x): +inf or -inf
        exp.IsInf,
        lambda node: template("ABS(__rw_x) = CAST('Infinity' AS DOUBLE)", x=_inner(node.this)),
    ),
    (  # JSON_EXTRACT_ARRAY(json [, path]): the array's elements, each as JSON text
        exp.JSONExtractArray,
        lambda node: template(
            "TRANSFORM(FROM_JSON(__rw_a, 'ARRAY<VARIANT>'), __rw_v -> TO_JSON(__rw_v))",
            a=exp.JSONExtract(this=_inner(node.this), expression=node.expression.copy()),
        ),
    ),
    (  # DATETIME('2026-01-02 03:04:05') / DATETIME(a_date): a DATETIME, not a TIMESTAMP
        exp.TsOrDsToDatetime,
        lambda node: exp.cast(_inner(node.this), exp.DataType.build("TIMESTAMPNTZ")),
    ),
    (exp.SafeFunc, _safe),
    (
        (exp.StrToTime, exp.ParseDatetime),
        lambda node: _parsed_time(node, bool(node.args.get("safe"))),
    ),
    (exp.Initcap, lambda node: initcap(node, _inner)),
    (exp.ParseJSON, lambda node: parsed_json(node, _inner)),
    (exp.ApproxQuantiles, _quantiles),
    (exp.Unnest, _unnested_structs),
]


def bigquery_answers(node: exp.Expression) -> exp.Expression:
    """``node`` as BigQuery answers it, in Spark's functions (see the module)."""
    return rewritten(node, _REWRITES)
