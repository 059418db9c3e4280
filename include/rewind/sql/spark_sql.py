"""Spark SQL for a bound Snowflake tree (sqlglot's transpiler plus what it misses): the
units of DATEADD, the timestamp spellings Snowflake's and BigQuery's pages print, the
formats of TO_TIMESTAMP_TZ, and the refusal of functions that reach outside the catalog
(SPEC R16, R38)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from typing import Any

import sqlglot
from sqlglot import exp, transforms
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel
from sqlglot.errors import UnsupportedError as SqlglotUnsupported
from sqlglot.generators.spark import SparkGenerator
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.time import format_time
from sqlglot.trie import new_trie

from rewind.clock import format_timestamp, parse_timestamp_input
from rewind.errors import InvalidValue, UnsupportedError
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
    regexp_instr,
    rewritten,
    rounded_to_integer,
    template,
    wall_clock_from_parts,
)
from rewind.sql.bigquery_answers import bigquery_answers
from rewind.sql.variants import (
    SEMI_STRUCTURED_ARRAYS,
    array_function,
    constructed_array,
    constructed_object,
    is_json_text,
    json_fields,
    json_items,
    object_function,
    semi_structured_cast,
    to_variant,
    variant_function,
)

# sqlglot writes Snowflake's DATEADD(unit, n, x) as Spark's DATE_ADD(x, n), which adds
# *days* whatever the unit, and as ADD_MONTHS(x, n) for months, quarters and years: both
# truncate a timestamp to a date. TIMESTAMPADD keeps a sub-day unit and the time, so that
# the usual Snowflake idiom AT(TIMESTAMP => DATEADD(hour, -1, CURRENT_TIMESTAMP())) names
# the right instant (SPEC R16); a calendar unit is added as an interval, which keeps the
# value's type (a DATE stays a DATE, a timestamp keeps its time and its kind) and clamps a
# month's end as Snowflake does (Jan 31 + 1 month: Feb 28). A date given as text stays
# with DATE_ADD / ADD_MONTHS (a DATE, as Snowflake casts it).
_SUB_DAY_UNITS = {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}
# A calendar unit: its place among MAKE_INTERVAL's years, months, weeks, days, and how
# many of that place it is.
_CALENDAR_UNITS = {
    "YEAR": (0, 1),
    "QUARTER": (1, 3),
    "MONTH": (1, 1),
    "WEEK": (2, 1),
    "DAY": (3, 1),
}
_TIMESTAMP_TYPES = (
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIMESTAMPLTZ,
    exp.DataType.Type.TIMESTAMPNTZ,
    exp.DataType.Type.DATETIME,
)


def _keep_unit(node: exp.Expression) -> exp.Expression:
    if not isinstance(node, exp.DateAdd | exp.TimestampAdd):
        return node
    unit = node.text("unit").upper()
    # transform() does not descend into a replacement: rewrite the arguments here.
    count, value = (arg.transform(_keep_unit) for arg in (node.expression, node.this))
    if unit in _SUB_DAY_UNITS:
        return exp.Anonymous(this="TIMESTAMPADD", expressions=[exp.var(unit), count, value])
    if unit in _CALENDAR_UNITS and not value.is_string:
        place, size = _CALENDAR_UNITS[unit]
        amount: exp.Expression = exp.cast(count, exp.DataType.Type.INT)
        if size != 1:
            amount = exp.Mul(this=amount, expression=exp.Literal.number(size))
        parts: list[exp.Expression] = [exp.Literal.number(0)] * 4
        parts[place] = amount
        interval = exp.Anonymous(this="MAKE_INTERVAL", expressions=parts)
        return exp.paren(exp.Add(this=exp.paren(value), expression=interval))
    return node


def timestamp_literal(node: exp.Expression) -> exp.Expression:
    """``'<text>'::timestamp_tz`` in any spelling Snowflake or BigQuery accept, some of
    which Spark does not (RFC 2822, a zone name, an offset after a space), and
    ``TO_TIMESTAMP_TZ('<text>', '<format>')`` (Snowflake's format elements, which Spark's
    patterns do not all have: ``TZH:TZM``): the text becomes ISO 8601, the instant (the
    session is UTC); for TIMESTAMP_NTZ its wall-clock time (Snowflake drops the offset)."""
    if isinstance(node, exp.StrToTime):
        return _formatted_timestamp(node)
    if not (
        isinstance(node, exp.Cast | exp.TryCast)
        and isinstance(node.this, exp.Literal)
        and node.this.is_string
        and node.to.is_type(*_TIMESTAMP_TYPES)
    ):
        return node
    try:
        given = parse_timestamp_input(node.this.this)
    except InvalidValue:
        return node  # Spark's own error names the value (SPEC R39)
    return _instant(given, node.to, node.__class__)


def _instant(given: datetime, to: exp.DataType, cast: type[exp.Cast] = exp.Cast) -> exp.Cast:
    if to.is_type(exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.DATETIME):
        value = given.replace(tzinfo=None).isoformat()
    else:
        value = format_timestamp(given if given.tzinfo else given.replace(tzinfo=UTC))
    return cast(this=exp.Literal.string(value), to=to.copy())


def _formatted_timestamp(node: exp.StrToTime) -> exp.Expression:
    """``TO_TIMESTAMP[_TZ|_NTZ|_LTZ]('<text>', '<format>')`` of two literals, read here
    (sqlglot holds the format as strftime directives, which Python's strptime reads)."""
    text, pattern = node.this, node.args.get("format")
    if not (
        isinstance(text, exp.Literal)
        and text.is_string
        and isinstance(pattern, exp.Literal)
        and pattern.is_string
        and node.args.get("zone") is None  # BigQuery's, read in Spark by bigquery_answers
        and "%E" not in pattern.this
    ):
        return node
    directives = re.sub(r"%f_\w+", "%f", pattern.this.replace("%:z", "%z"))
    to = node.args.get("target_type") or exp.DataType.build("TIMESTAMP_NTZ")
    try:
        given = datetime.strptime(text.this, directives)
    except ValueError:
        if node.args.get("safe"):  # TRY_TO_TIMESTAMP, SAFE.PARSE_TIMESTAMP: NULL
            return exp.cast(exp.null(), to)
        raise InvalidValue(f"Timestamp '{text.this}' does not match its format.") from None
    return _instant(given, to if isinstance(to, exp.DataType) else exp.DataType.build(to))


def _snowflake_answers(node: exp.Expression) -> exp.Expression:
    """Snowflake functions that sqlglot writes as Spark functions answering otherwise —
    a wrong answer, no error:

    - ``DATEDIFF(unit, a, b)`` counts the unit boundaries crossed (Snowflake: one month
      from Jan 31 to Feb 1); Spark's counts whole units (0): the difference of the two
      instants truncated to the unit.
    - ``DAYOFWEEK`` is 0 (Sunday) .. 6, ``DAYOFWEEKISO`` 1 (Monday) .. 7, also through
      ``DATE_PART`` / ``EXTRACT``; Spark's DAYOFWEEK is 1 (Sunday) .. 7 and sqlglot's ISO
      form of it is wrong: both from Spark's WEEKDAY, 0 (Monday) .. 6.
    - ``INITCAP`` starts a word after punctuation too (Spark's: after whitespace only).
    - ``TO_CHAR(n, '9,999.99')`` lost its format, ``TO_CHAR(day, 'YYYY-MM-DD')`` failed
      (see :func:`_to_char`); ``WEEK`` is no Spark function.
    - ``tags[5]`` past an array's end is NULL (ANSI Spark fails the query; Spark's
      ``GET`` is NULL there); an index by name (``addr['city']``) is a struct field or a
      map key, NULL when the key is not there in both.
    - ``GREATEST`` / ``LEAST`` are NULL when an argument is; ``DATE_FROM_PARTS`` carries
      a month or day past its range over; ``TRY_PARSE_JSON`` of text that is no JSON is
      NULL (``PARSE_JSON`` fails); ``SHA2(x)`` is 256 bits; ``DATE_PART(epoch_second, x)``
      and ``RATIO_TO_REPORT`` answer (Spark has neither).
    - ``TO_NUMBER`` / ``TO_DECIMAL`` without a format is NUMBER(38, 0) by default
      (``TO_NUMBER('12.5')`` is 13), not a DOUBLE; the ``TRY_`` forms (and
      ``TRY_TO_DOUBLE``, ``TRY_TO_DATE``, ``TRY_TO_BOOLEAN``) answer NULL where the value
      does not convert, not an error; ``TO_BOOLEAN`` is no Spark function.
    - ``TRUNCATE(x, scale)`` answers (sqlglot's Spark has no form of it), and so does
      ``ARRAY_AGG(x) WITHIN GROUP (ORDER BY ...)`` (Spark's COLLECT_LIST takes no order).
    - ``REGEXP_SUBSTR`` is NULL where nothing matches (Spark's answered ''), and takes
      a position, an occurrence and its parameters (they were refused); ``REGEXP_INSTR``'s
      third argument is a position (Spark's is a group).
    - ``LAST_DAY(d, 'WEEK')`` (and a quarter's, a year's) answers (it was refused);
      ``ARRAY_SLICE(a, from, to)`` counts from 0 and stops before ``to`` (sqlglot's SLICE
      took them as Spark's start and length: ``ARRAY_SLICE(a, 0, 2)`` failed).
    - ``ARRAY_POSITION`` counts from 0 (Spark's from 1: one more, a wrong answer) and is
      NULL where the value is not there; ``ARRAY_CONTAINS('b'::VARIANT, a)`` failed (a
      VARIANT is no string), ``ARRAYS_OVERLAP`` failed in Spark's parser.
    - ``ARRAY_GENERATE_RANGE`` stops before its stop (sqlglot's SEQUENCE stopped a step
      early: a wrong answer), ``TO_CHAR(n, fmt)`` rounds to the format's decimals,
      ``INSERT(s, pos, len, x)`` is Spark's OVERLAY; a time of day is refused.
    - ``KURTOSIS`` and ``SKEW`` are the sample statistics (Spark's the population ones: a
      wrong answer); ``BOOLXOR_AGG`` answers.
    - ``TIME_SLICE`` answers (no Spark function); so do ``BOOLAND`` / ``BOOLOR`` /
      ``BOOLXOR`` / ``BOOLNOT`` of numbers (Spark's parser refused what sqlglot wrote).
    - ``SEQ4()`` / ``SEQ8()`` (:mod:`rewind.sql.generator`), ``CONDITIONAL_TRUE_EVENT`` and
      ``OBJECT_AGG`` answer (no Spark functions).
    - ``HASH_AGG`` answers (:func:`_hash_agg`; Spark has no such aggregate).
    - ``ADD_MONTHS`` keeps a timestamp's time and a month's end (:func:`_added_months`);
      ``HLL`` is APPROX_COUNT_DISTINCT; ``STRTOK``, ``STRTOK_TO_ARRAY`` and
      ``PREVIOUS_DAY`` answer (they were no Spark functions).
    - A cast to an integer type rounds half away from zero (``1.5::INT`` is 2; Spark's
      truncated, :mod:`rewind.sql.answers`).
    """
    return rewritten(node, _REWRITES)


def _inner(arg: exp.Expression) -> exp.Expression:
    """``arg`` rewritten too: transform() does not descend into a replacement."""
    return arg.transform(_snowflake_answers)


def _datediff(node: exp.Expression) -> exp.Expression | None:
    unit = node.text("unit").upper()
    if not node.args.get("date_part_boundary") or unit not in TRUNCATED_UNITS:
        return None
    return boundaries(unit, _inner(node.expression), _inner(node.this))


def _truncated_number(node: exp.Trunc) -> exp.Expression | None:
    """``TRUNCATE(x, scale)`` / ``TRUNC(x, scale)``: toward zero at ``scale`` digits (Spark
    has no such function: FLOOR or CEIL at that scale, by the sign)."""
    scale = node.args.get("decimals")
    if scale is None:
        return None
    value = _inner(node.this)
    down, up = (call(name, value.copy(), _inner(scale)) for name in ("FLOOR", "CEIL"))
    negative = exp.LT(this=value, expression=exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=negative, true=up)], default=down)


def _ordered_array_agg(node: exp.WithinGroup) -> exp.Expression | None:
    """``ARRAY_AGG([DISTINCT] x) WITHIN GROUP (ORDER BY ...)`` (:func:`answers.ordered_array`)."""
    aggregate, order = node.this, node.expression
    if not isinstance(aggregate, exp.ArrayAgg) or not isinstance(order, exp.Order):
        return None
    return ordered_array(aggregate.this, list(order.expressions), None, _inner)


def _added_months(node: exp.AddMonths) -> exp.Expression | None:
    """Snowflake's ``ADD_MONTHS`` keeps a timestamp's time of day (Spark's answers a DATE)
    and takes a month's last day to the last day of the month it reaches (2016-02-29 plus
    one month is 2016-03-31; Spark's 2016-03-29)."""
    if not node.args.get("preserve_end_of_month"):
        return None
    value = _inner(node.this)
    months = call("MAKE_INTERVAL", exp.Literal.number(0), exp.cast(_inner(node.expression), "INT"))
    moved = exp.paren(exp.Add(this=exp.paren(value), expression=months))
    left = call("DATEDIFF", call("LAST_DAY", moved.copy()), moved.copy())  # days to its end
    zero = exp.Literal.number(0)
    at_end = exp.paren(
        exp.Add(this=moved.copy(), expression=call("MAKE_INTERVAL", zero, zero, zero, left))
    )
    last_day = exp.EQ(
        this=call("LAST_DAY", value.copy()), expression=exp.cast(value.copy(), "DATE")
    )
    return exp.If(this=last_day, true=at_end, false=moved)


# HASH_AGG's sum of the rows' 64-bit hashes, modulo 2^64 (__rw_s: SUM or SUM(DISTINCT ...)).
_HASH_SUM = "PMOD(__rw_s, 18446744073709551616)"
_HASH_AGG = (
    f"COALESCE(CAST({_HASH_SUM} - IF({_HASH_SUM} >= 9223372036854775808, "
    "18446744073709551616, 0) AS BIGINT), 0)"
)


def _hash_agg(node: exp.HashAgg) -> exp.Expression:
    """``HASH_AGG([DISTINCT] x, ...)`` / ``HASH_AGG(*)``: one signed 64-bit hash of the
    group's rows whatever their order, each duplicate counted, NULLs hashed, 0 for no row,
    as Snowflake's; its values are Rewind's own (Spark's XXHASH64 summed), so compare a
    HASH_AGG with another of Rewind's (a table now and at a point), not with Snowflake's."""
    distinct = isinstance(node.this, exp.Distinct)
    values = node.this.expressions if distinct else [node.this, *node.expressions]
    hashed = exp.cast(call("XXHASH64", *(_inner(v) for v in values)), "DECIMAL(38, 0)")
    total = exp.Sum(this=exp.Distinct(expressions=[hashed]) if distinct else hashed)
    return template(_HASH_AGG, s=total)


def _tokens(text: exp.Expression, delimiters: exp.Expression | None) -> exp.Expression | None:
    """The tokens of Snowflake's STRTOK / STRTOK_TO_ARRAY: the non-empty runs of ``text``
    between any of the characters of ``delimiters`` (a set of characters, a space by
    default; none: the whole text); None for delimiters that are no literal."""
    chars = " " if delimiters is None else delimiters.name if delimiters.is_string else None
    if chars is None:
        return None
    if not chars:
        pieces: exp.Expression = exp.Array(expressions=[_inner(text)])
    else:
        escaped = "".join("\\" + c if c in "\\[]^-&" else c for c in chars)
        pieces = call("SPLIT", _inner(text), exp.Literal.string(f"[{escaped}]"))
    token = exp.to_identifier("__rw_t")
    kept = exp.Lambda(
        this=exp.NEQ(this=token, expression=exp.Literal.string("")), expressions=[token.copy()]
    )
    return call("FILTER", pieces, kept)


def _day_of_week(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.Extract):
        if node.name.upper() not in ("DAYOFWEEK", "DAYOFWEEKISO"):
            return None
        day, iso = node.expression, node.name.upper() == "DAYOFWEEKISO"
    else:
        day, iso = node.this, isinstance(node, exp.DayOfWeekIso)
    one_based = exp.paren(
        exp.Add(this=call("WEEKDAY", _inner(day)), expression=exp.Literal.number(1))
    )
    return (
        one_based if iso else exp.paren(exp.Mod(this=one_based, expression=exp.Literal.number(7)))
    )


def _converted(node: exp.Expression) -> exp.Expression | None:
    """TO_NUMBER / TO_DECIMAL / TO_DOUBLE / TO_BOOLEAN and their TRY_ forms, TRY_TO_DATE,
    without a format: a cast (a TRY_CAST for the TRY_ forms)."""
    if node.args.get("format") is not None:
        return None
    if isinstance(node, exp.ToNumber):
        precision = node.args.get("precision") or exp.Literal.number(38)
        scale = node.args.get("scale") or exp.Literal.number(0)
        to = exp.DataType.build(f"DECIMAL({precision.name}, {scale.name})")
    elif isinstance(node, exp.TsOrDsToDate):
        if not node.args.get("safe"):
            return None
        to = exp.DataType.build("DATE")
    else:
        to = exp.DataType.build("DOUBLE" if isinstance(node, exp.ToDouble) else "BOOLEAN")
    cast = exp.TryCast if node.args.get("safe") else exp.Cast
    return cast(this=_inner(node.this), to=to)


# Snowflake's ARRAY_SLICE(array, from, to): from ``from`` up to ``to`` excluded, counted
# from 0, or from the end where negative; Spark's SLICE counts from 1 and takes a length.
_ARRAY_SLICE = (
    "SLICE(__rw_a, GREATEST(IF(__rw_from < 0, SIZE(__rw_a) + __rw_from, __rw_from), 0) + 1, "
    "GREATEST(LEAST(IF(__rw_to < 0, SIZE(__rw_a) + __rw_to, __rw_to), SIZE(__rw_a)) - "
    "GREATEST(IF(__rw_from < 0, SIZE(__rw_a) + __rw_from, __rw_from), 0), 0))"
)


def _true_events(node: exp.Window) -> exp.Expression | None:
    """``CONDITIONAL_TRUE_EVENT(cond) OVER (...)``: how many rows of the window so far, this
    one included, met ``cond`` (no Spark function)."""
    call_ = node.this
    if not (isinstance(call_, exp.Anonymous) and call_.name.upper() == "CONDITIONAL_TRUE_EVENT"):
        return None
    if len(call_.expressions) != 1 or node.args.get("spec") is not None:
        raise UnsupportedError("CONDITIONAL_TRUE_EVENT takes one condition and no window frame.")
    counted = exp.If(
        this=_inner(call_.expressions[0]), true=exp.Literal.number(1), false=exp.Literal.number(0)
    )
    window = node.copy()
    window.set("this", exp.Sum(this=counted))
    window.set("partition_by", [_inner(p) for p in node.args.get("partition_by") or []])
    if node.args.get("order") is not None:
        window.set("order", _inner(node.args["order"]))
    window.set(
        "spec",
        exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"),
    )
    return window


def _element(value: exp.Expression) -> exp.Expression:
    """An array function's value argument: Snowflake's ``'b'::VARIANT`` (which its
    ARRAY_CONTAINS requires of a semi-structured array) is the value itself, as Rewind's
    arrays are typed (a VARIANT never equals a string in Spark: the call failed)."""
    if isinstance(value, exp.Cast) and value.to.is_type(exp.DataType.Type.VARIANT):
        return _inner(value.this)
    return _inner(value)


def _random(node: exp.Rand) -> exp.Expression | None:
    """Snowflake's ``RANDOM([seed])``: a random 64-bit integer (sqlglot wrote a DOUBLE,
    which UNIFORM and the arithmetic users do on it refused or answered wrong)."""
    if node.args.get("lower") is None:  # Spark's RAND, BigQuery's
        return None
    draw = call("RAND", _inner(node.this)) if node.this is not None else call("RAND")
    return template("CAST((__rw_u - 0.5) * 1.8E19 AS BIGINT)", u=draw)


# A number in [0, 1) that is a function of the generator __rw_g (53 bits of its hash).
_UNIT = "(PMOD(XXHASH64(__rw_g{salt}), 9007199254740992) / 9007199254740992)"
_DRAWN = {
    "integer": "__rw_lo + PMOD(XXHASH64(__rw_g), __rw_hi - __rw_lo + 1)",
    "float": "__rw_lo + (__rw_hi - __rw_lo) * " + _UNIT.format(salt=""),
    "normal": "__rw_lo + __rw_hi * SQRT(-2 * LN(1 - "
    + _UNIT.format(salt="")
    + ")) * COS(2 * PI() * "
    + _UNIT.format(salt=", 1")
    + ")",
}


def _integral(node: exp.Expression) -> bool:
    """Whether a bound of UNIFORM is an integer (a literal, a cast; any other expression
    is taken for one, as a column of ids usually is)."""
    if isinstance(node, exp.Neg | exp.Paren):
        return _integral(node.this)
    if isinstance(node, exp.Literal):
        return node.is_int
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.INTEGER_TYPES)
    return True


def _drawn(node: exp.Uniform | exp.Normal) -> exp.Expression:
    """``UNIFORM(min, max, gen)`` / ``NORMAL(mean, stddev, gen)``: a value that is a
    function of ``gen`` (random per row with ``RANDOM()``, the same on every row with a
    constant), an integer in [min, max] where both bounds are integers, as Snowflake's
    (Spark's UNIFORM takes only a constant seed: the call failed)."""
    if isinstance(node, exp.Normal):
        kind, high = "normal", node.args["stddev"]
    else:
        high = node.expression
        kind = "integer" if _integral(node.this) and _integral(high) else "float"
    return template(_DRAWN[kind], lo=_inner(node.this), hi=_inner(high), g=_inner(node.args["gen"]))


# HAVERSINE(lat1, lon1, lat2, lon2): the great-circle distance in km on Snowflake's
# sphere of radius 6,371 km.
_HAVERSINE = (
    "2 * 6371 * ASIN(SQRT(POWER(SIN(RADIANS(__rw_c - __rw_a) / 2), 2) + COS(RADIANS(__rw_a)) "
    "* COS(RADIANS(__rw_c)) * POWER(SIN(RADIANS(__rw_d - __rw_b) / 2), 2)))"
)


def _haversine(node: exp.Anonymous) -> exp.Expression | None:
    """Snowflake's HAVERSINE (no Spark function); None for any other call."""
    if node.name.upper() != "HAVERSINE" or len(node.expressions) != 4:
        return None
    a, b, c, d = (_inner(e) for e in node.expressions)
    return template(_HAVERSINE, a=a, b=b, c=c, d=d)


def _unix_to_ntz(node: exp.UnixToTime) -> exp.Expression | None:
    """``TO_TIMESTAMP_NTZ(seconds [, scale])``: a TIMESTAMP_NTZ, the epoch's wall clock in
    UTC, as Snowflake's (sqlglot wrote Spark's TIMESTAMP, a time zone's instant)."""
    target = node.args.get("target_type")
    if target is None or not target.is_type(exp.DataType.Type.TIMESTAMPNTZ):
        return None
    instant = node.copy()
    instant.set("target_type", None)
    return exp.Cast(this=_inner(instant), to=exp.DataType.build("TIMESTAMPNTZ"))


def _json_subscript(node: exp.Bracket) -> exp.Expression | None:
    """``PARSE_JSON(t)['a']`` / ``v:a[0]['b']``: Snowflake's subscript of a VARIANT is its
    path (``v:a``), which Rewind reads from the JSON text (a Spark subscript of text failed
    to compile). None for any other subscript."""
    if not is_json_text(node.this) or len(node.expressions) != 1:
        return None
    key = node.expressions[0]
    if key.is_string:
        step: exp.Expression = exp.JSONPathKey(this=key.name, quoted=True)
    elif key.is_int:
        step = exp.JSONPathSubscript(this=int(key.name))
    else:
        return None
    path = exp.JSONPath(expressions=[exp.JSONPathRoot(), step])
    return exp.JSONExtract(this=_inner(node.this), expression=path)


def _arrays_zip(node: exp.ArraysZip) -> exp.Expression:
    """Snowflake's ``ARRAYS_ZIP(a, b, ...)``: an array of objects whose keys are ``$1``,
    ``$2``, ... (Spark's are its arguments' names or positions: ``0``, ``1``), as long as
    the longest array, NULL where a shorter one has no element; NULL if an array is (a
    NULL literal has no type Spark's GET takes: the call failed to compile)."""
    arrays = [_inner(a) for a in node.expressions]
    if any(isinstance(a, exp.Null) for a in arrays):
        return exp.null()
    fields: list[exp.Expression] = []
    for i, array in enumerate(arrays, 1):
        fields += [exp.Literal.string(f"${i}"), call("GET", array, exp.column("__rw_i"))]
    longest = call("GREATEST", *[call("SIZE", a) for a in arrays])
    zipped = template(
        "TRANSFORM(SEQUENCE(0, __rw_n - 1), __rw_i -> __rw_o)",
        n=longest,
        o=call("NAMED_STRUCT", *fields),
    )
    return exp.If(
        this=exp.or_(*[exp.Is(this=a.copy(), expression=exp.null()) for a in arrays]),
        true=exp.null(),
        false=exp.If(this=longest.copy().eq(0), true=call("ARRAY"), false=zipped),
    )


def _array_position(node: exp.ArrayPosition) -> exp.Expression | None:
    """Snowflake's ``ARRAY_POSITION(value, array)``: counted from 0, NULL where the value is
    not there (Spark's counts from 1, 0 where it is not: one more than Snowflake's)."""
    if not node.args.get("zero_based"):
        return None
    found = call("ARRAY_POSITION", _inner(node.this), _element(node.expression))
    return exp.Sub(
        this=exp.Nullif(this=found, expression=exp.Literal.number(0)),
        expression=exp.Literal.number(1),
    )


# TIME_SLICE(x, n, unit [, 'START' | 'END']): slices of n units from 1970-01-01 00:00:00
# (a week's from Monday 1969-12-29, Snowflake's default weeks), counted in seconds or in
# months; __rw_end is 1 for a slice's end. A TIMESTAMP_NTZ (paths.typed casts a DATE's
# slice back to a DATE).
_SLICE_SECONDS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400, "WEEK": 604800}
_SLICE_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_SLICES = {
    "seconds": "CAST(TIMESTAMP_SECONDS(__rw_origin + (FLOOR((UNIX_SECONDS(CAST(__rw_x AS "
    "TIMESTAMP)) - __rw_origin) / __rw_width) + __rw_end) * __rw_width) AS TIMESTAMP_NTZ)",
    "months": "CAST(ADD_MONTHS(DATE '1970-01-01', CAST((FLOOR(((YEAR(__rw_x) - 1970) * 12 + "
    "MONTH(__rw_x) - 1) / __rw_width) + __rw_end) * __rw_width AS INT)) AS TIMESTAMP_NTZ)",
}


def _time_slice(node: exp.TimeSlice) -> exp.Expression:
    """Snowflake's ``TIME_SLICE`` (:data:`_SLICES`; no Spark function).

    Raises:
        InvalidValue: for a length that is no literal whole number of 1 or more, an unknown
            unit, or a fourth argument other than START or END.
    """
    length, unit = node.expression, node.text("unit").upper()
    kind = (node.text("kind") or "START").upper()
    if not (isinstance(length, exp.Literal) and length.is_int and int(length.name) >= 1):
        raise InvalidValue("TIME_SLICE's slice length must be a whole number, 1 or more.")
    if (unit not in _SLICE_SECONDS and unit not in _SLICE_MONTHS) or kind not in ("START", "END"):
        raise InvalidValue(
            f"TIME_SLICE takes YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE or SECOND, and "
            f"START or END: not {unit!r}, {kind!r}."
        )
    in_months = unit in _SLICE_MONTHS
    width = int(length.name) * (_SLICE_MONTHS[unit] if in_months else _SLICE_SECONDS[unit])
    origin = -3 * 86400 if unit == "WEEK" else 0  # Monday 29 December 1969
    return template(
        _SLICES["months" if in_months else "seconds"],
        x=_inner(node.this),
        width=exp.Literal.number(width),
        origin=exp.Literal.number(origin),
        end=exp.Literal.number(int(kind == "END")),
    )


def _truth(value: exp.Expression) -> exp.Expression:
    """A number as BOOLAND / BOOLOR / BOOLXOR / BOOLNOT read it: rounded, not zero."""
    rounded = exp.Round(this=_inner(value))
    return exp.Paren(this=exp.NEQ(this=rounded, expression=exp.Literal.number(0)))


def _boolean_of_numbers(node: exp.Expression) -> exp.Expression | None:
    """Snowflake's BOOLAND, BOOLOR, BOOLXOR, BOOLNOT of numbers (sqlglot wrote ``1 AND
    0``, which Spark's parser refused, and BOOLNOT, no Spark function)."""
    if not node.args.get("round_input"):
        return None
    if isinstance(node, exp.Boolnot):
        return exp.Not(this=_truth(node.this))
    left, right = _truth(node.this), _truth(node.expression)
    if isinstance(node, exp.Xor):
        return exp.Paren(this=exp.NEQ(this=left, expression=right))
    kind = exp.And if isinstance(node, exp.Booland) else exp.Or
    return exp.Paren(this=kind(this=left, expression=right))


# Snowflake's ARRAY_GENERATE_RANGE(start, stop [, step]): stop excluded, [] where the range
# is empty (Spark's SEQUENCE includes its stop, and fails on a range going the other way).
_RANGE = (
    "IF((__rw_step > 0 AND __rw_start >= __rw_stop) OR (__rw_step < 0 AND __rw_start <= "
    "__rw_stop), ARRAY(), SEQUENCE(__rw_start, IF(__rw_step > 0, __rw_stop - 1, __rw_stop + 1), "
    "__rw_step))"
)


def _generated_range(node: exp.GenerateSeries) -> exp.Expression | None:
    """``ARRAY_GENERATE_RANGE`` (:data:`_RANGE`; sqlglot's SEQUENCE(start, stop - step,
    step) lost the last element: ``ARRAY_GENERATE_RANGE(0, 5, 2)`` was [0, 2])."""
    if not node.args.get("is_end_exclusive"):
        return None
    step = node.args.get("step") or exp.Literal.number(1)
    bounds = {"start": _inner(node.args["start"]), "stop": _inner(node.args["end"])}
    return template(_RANGE, step=_inner(step), **bounds)


# Snowflake's KURTOSIS and SKEW are the sample statistics (Excel's KURT and SKEW: its
# documentation's KURTOSIS of 1, 3, 10, 1, 3 is 3.6137); Spark's are the population ones
# (-0.0965 there): the sample ones from them and the count n.
_SAMPLE_MOMENTS = {
    exp.Kurtosis: "(__rw_n - 1) * ((__rw_n + 1) * KURTOSIS(__rw_x) + 6) / "
    "NULLIF((__rw_n - 2) * (__rw_n - 3), 0)",
    exp.Skewness: "SQRT(__rw_n * (__rw_n - 1)) * SKEWNESS(__rw_x) / NULLIF(__rw_n - 2, 0)",
}


def _sample_moment(node: exp.Kurtosis | exp.Skewness) -> exp.Expression:
    """Snowflake's KURTOSIS / SKEW (:data:`_SAMPLE_MOMENTS`; Spark's answered the population
    statistic: a wrong answer).

    Raises:
        UnsupportedError: over a window (the count would be the window's too).
    """
    if isinstance(node.parent, exp.Window):
        raise UnsupportedError(f"{node.sql_name()} over a window is not supported.")
    x = _inner(node.this)
    count = exp.Count(this=x.copy())
    return exp.Paren(this=template(_SAMPLE_MOMENTS[type(node)], x=x, n=count))


def _array_slice(node: exp.ArraySlice) -> exp.Expression | None:
    """``ARRAY_SLICE(a, from, to)`` (:data:`_ARRAY_SLICE`; sqlglot's SLICE took them as
    Spark's start and length: ``ARRAY_SLICE(a, 0, 2)`` failed)."""
    if not node.args.get("zero_based") or node.args.get("end") is None:
        return None
    bounds = {"from": _inner(node.args["start"]), "to": _inner(node.args["end"])}
    if not is_json_text(node.this):
        return template(_ARRAY_SLICE, a=_inner(node.this), **bounds)
    # a semi-structured array's (rewind.sql.variants.array_function): its JSON text again
    return call("TO_JSON", template(_ARRAY_SLICE, a=json_items(node.this, _inner), **bounds))


_REWRITES: Rewrites = [
    (SEMI_STRUCTURED_ARRAYS, lambda node: array_function(node, _inner)),
    (exp.Array, lambda node: constructed_array(node, _inner)),
    (exp.Struct, lambda node: constructed_object(node, _inner)),
    ((exp.ObjectInsert, exp.Anonymous), lambda node: object_function(node, _inner)),
    (exp.DateDiff, _datediff),
    (exp.AddMonths, _added_months),
    (  # STRTOK(text, delimiters, n): its n-th token, NULL past the last (no Spark function)
        exp.Strtok,
        lambda node: (
            None
            if (tokens := _tokens(node.this, node.args.get("delimiter"))) is None
            else call(
                "GET",
                tokens,
                exp.Sub(
                    this=_inner(node.args.get("part_index") or exp.Literal.number(1)),
                    expression=exp.Literal.number(1),
                ),
            )
        ),
    ),
    (exp.StrtokToArray, lambda node: _tokens(node.this, node.expression)),
    (  # PREVIOUS_DAY(d, 'mo'): the last such day before d (no Spark function)
        exp.PreviousDay,
        lambda node: call(
            "NEXT_DAY", call("DATE_SUB", _inner(node.this), exp.Literal.number(8)), node.expression
        ),
    ),
    (exp.Hll, lambda node: call("APPROX_COUNT_DISTINCT", _inner(node.this))),  # HLL's NDV
    (exp.Cast, lambda node: semi_structured_cast(node, _inner)),
    (exp.Cast, lambda node: rounded_to_integer(node, _inner)),
    (exp.Cast, lambda node: json_as_text(node, _inner)),
    ((exp.Cast, exp.ToVariant), lambda node: to_variant(node, _inner)),
    (exp.RegexpExtract, lambda node: regexp_extract(node, _inner)),
    (exp.RegexpInstr, lambda node: regexp_instr(node, _inner)),
    (exp.LastDay, lambda node: last_day(node, {"WEEK": "SU"}, _inner)),
    (exp.ArraySlice, lambda node: _array_slice(node)),
    (exp.ArrayPosition, _array_position),
    (  # ARRAY_SIZE of JSON text (PARSE_JSON, a path into JSON text): its array's length
        exp.ArraySize,
        lambda node: (
            call("JSON_ARRAY_LENGTH", _inner(node.this)) if is_json_text(node.this) else None
        ),
    ),
    ((exp.Kurtosis, exp.Skewness), _sample_moment),
    (  # BOOLXOR_AGG(b): exactly one of the group's values is true (NULL: all are NULL)
        exp.BoolxorAgg,
        lambda node: template(
            "IF(COUNT(__rw_b) = 0, NULL, COUNT_IF(CAST(__rw_b AS BOOLEAN)) = 1)",
            b=_inner(node.this),
        ),
    ),
    (exp.GenerateSeries, _generated_range),
    (exp.HashAgg, _hash_agg),
    (  # INSERT(base, position, length, text): Spark's OVERLAY (sqlglot wrote STUFF)
        exp.Stuff,
        lambda node: template(
            "OVERLAY(__rw_base PLACING __rw_text FROM __rw_at FOR __rw_length)",
            base=_inner(node.this),
            text=_inner(node.expression),
            at=_inner(node.args["start"]),
            length=_inner(node.args["length"]),
        ),
    ),
    ((exp.Booland, exp.Boolor, exp.Xor, exp.Boolnot), _boolean_of_numbers),
    (exp.TimeSlice, _time_slice),
    (
        exp.ArrayContains,
        lambda node: call("ARRAY_CONTAINS", _inner(node.this), _element(node.expression)),
    ),
    (  # sqlglot wrote Postgres's && operator
        exp.ArrayOverlaps,
        lambda node: call("ARRAYS_OVERLAP", _inner(node.this), _inner(node.expression)),
    ),
    (exp.Window, _true_events),
    (exp.Window, lambda node: distinct_count(node, _inner)),
    (  # BASE64_ENCODE(x) (a line length or alphabet is Snowflake's own: left as written)
        exp.Base64Encode,
        lambda node: None if len(node.args) > 1 else call("BASE64", _inner(node.this)),
    ),
    (  # the text BASE64 or hex encodes: invalid input fails, or is NULL for TRY_
        (exp.Base64DecodeString, exp.TryBase64DecodeString, exp.HexDecodeString),
        lambda node: exp.cast(
            call(
                "TRY_TO_BINARY" if isinstance(node, exp.TryBase64DecodeString) else "TO_BINARY",
                _inner(node.this),
                exp.Literal.string("hex" if isinstance(node, exp.HexDecodeString) else "base64"),
            ),
            "STRING",
        ),
    ),
    (exp.RtrimmedLength, lambda node: call("LENGTH", call("RTRIM", _inner(node.this)))),
    (
        (exp.Typeof, exp.IsArray, exp.IsNullValue, exp.StripNullValue, exp.Anonymous),
        lambda node: variant_function(node, _inner),
    ),
    (exp.ArraysZip, _arrays_zip),
    (  # ARRAY_REMOVE_AT(a, i): a without its element i (from 0; from the end if negative)
        exp.ArrayRemoveAt,
        lambda node: template(
            "FILTER(__rw_a, (__rw_x, __rw_i) -> __rw_i != IF(__rw_p < 0, SIZE(__rw_a) + __rw_p, "
            "__rw_p))",
            a=_inner(node.this),
            p=_inner(node.args["position"]),
        ),
    ),
    (  # CURRENT_VERSION(): Rewind's (Spark's named the Spark build)
        exp.CurrentVersion,
        lambda node: exp.Literal.string(metadata.version("rewind")),
    ),
    (exp.Anonymous, lambda node: _haversine(node)),
    (exp.ByteLength, lambda node: call("OCTET_LENGTH", _inner(node.this))),
    (  # CHECK_JSON(t): NULL for JSON (or NULL), else why it is not
        exp.CheckJson,
        lambda node: template(
            "IF(__rw_t IS NULL OR GET_JSON_OBJECT(__rw_t, '$') IS NOT NULL OR TRIM(__rw_t) = "
            "'null', NULL, 'Error parsing JSON: the text is not JSON.')",
            t=_inner(node.this),
        ),
    ),
    (  # SPLIT_PART(s, d, 0) is the first part, as 1 (Spark refused index 0)
        exp.SplitPart,
        lambda node: (
            template(
                "SPLIT_PART(__rw_s, __rw_d, IF(__rw_n = 0, 1, __rw_n))",
                s=_inner(node.this),
                d=_inner(node.args["delimiter"]),
                n=_inner(node.args["part_index"]),
            )
            if node.args.get("part_index_zero_as_one") and node.args.get("part_index")
            else None
        ),
    ),
    (  # OBJECT_CONSTRUCT_KEEP_NULL(k, v, ...): an object, as OBJECT_CONSTRUCT's
        exp.JSONObject,
        lambda node: (
            exp.Struct(
                expressions=[
                    exp.PropertyEQ(this=pair.this.copy(), expression=_inner(pair.expression))
                    for pair in node.expressions
                ]
            )
            if all(isinstance(p, exp.JSONKeyValue) and p.this.is_string for p in node.expressions)
            else None
        ),
    ),
    (  # OBJECT_AGG(k, v): a MAP of the rows whose key and value are not NULL
        exp.ObjectAgg,
        lambda node: template(
            "MAP_FROM_ENTRIES(COLLECT_LIST(IF(__rw_k IS NULL OR __rw_v IS NULL, NULL, "
            "STRUCT(__rw_k, __rw_v))))",
            k=_inner(node.this),
            v=_inner(node.expression),
        ),
    ),
    (  # SEQ4() / SEQ8(): 0, 1, 2, ... (Spark has neither; rewind.sql.generator)
        (exp.Seq4, exp.Seq8),
        lambda node: template("ROW_NUMBER() OVER (ORDER BY MONOTONICALLY_INCREASING_ID()) - 1"),
    ),
    (exp.Trunc, lambda node: _truncated_number(node)),
    (  # PERCENTILE_CONT / _DISC(p) WITHIN GROUP (ORDER BY x): Spark's own, exact
        # (sqlglot wrote PERCENTILE_APPROX: 10 for the median of 10 and 20, DESC dropped)
        exp.WithinGroup,
        lambda node: (
            exp.WithinGroup(
                this=exp.Anonymous(
                    this=type(node.this).__name__.replace("Percentile", "PERCENTILE_").upper(),
                    expressions=[_inner(node.this.this)],
                ),
                expression=_inner(node.expression),
            )
            if isinstance(node.this, exp.PercentileCont | exp.PercentileDisc)
            else None
        ),
    ),
    (exp.WithinGroup, lambda node: _ordered_array_agg(node)),
    (  # Spark has no YEAR_OF_WEEK: its EXTRACT's ISO year (Snowflake's default policy)
        (exp.YearOfWeek, exp.YearOfWeekIso),
        lambda node: exp.Extract(this=exp.var("YEAROFWEEK"), expression=_inner(node.this)),
    ),
    ((exp.DayOfWeek, exp.DayOfWeekIso, exp.Extract), _day_of_week),
    ((exp.ToNumber, exp.ToDouble, exp.ToBoolean, exp.TsOrDsToDate), _converted),
    (exp.Initcap, lambda node: initcap(node, _inner)),
    (  # Spark has no WEEK function
        exp.Week,
        lambda node: None if node.args.get("mode") else call("WEEKOFYEAR", _inner(node.this)),
    ),
    (exp.UnixToTime, lambda node: _unix_to_ntz(node)),
    (
        (exp.TimestampFromParts, exp.TimestampLtzFromParts),
        lambda node: wall_clock_from_parts(node, _inner, carry=True),
    ),
    (exp.Rand, _random),
    ((exp.Uniform, exp.Normal), _drawn),
    (exp.Bracket, lambda node: _json_subscript(node)),
    (  # TO_JSON of a VARIANT (JSON text): its text, an object's or array's compact
        exp.JSONFormat,
        lambda node: (
            template(
                "IF(TRIM(__rw_j) RLIKE '^[\\\\[{]', GET_JSON_OBJECT(__rw_j, '$'), TRIM(__rw_j))",
                j=_inner(node.this),
            )
            if is_json_text(node.this)
            else None
        ),
    ),
    (  # Snowflake's ARRAY[i] is NULL past either end, ANSI Spark's fails: Spark's GET
        exp.Bracket,
        lambda node: (
            None
            if len(node.expressions) != 1 or node.expressions[0].is_string
            else call("GET", _inner(node.this), _inner(node.expressions[0]))
        ),
    ),
    (exp.ToChar, lambda node: _to_char(node)),
    (exp.Extract, lambda node: _epoch(node)),
    (exp.Window, lambda node: _ratio_to_report(node)),
    (exp.DateFromParts, lambda node: _date_from_parts(node)),
    (exp.ParseJSON, lambda node: parsed_json(node, _inner)),
    ((exp.Greatest, exp.Least), lambda node: _null_if_any_null(node)),
    (  # SHA2(x): 256 bits by default (Spark's SHA2 needs them named)
        exp.SHA2,
        lambda node: (
            None
            if node.args.get("length") is not None
            else call("SHA2", _inner(node.this), exp.Literal.number(256))
        ),
    ),
    (exp.TimeToStr, lambda node: _date_format(node.this, node.args["format"])),
]

# What only a Snowflake date or time format holds (a year, a day, an hour, a month's
# name or number, seconds and their fractions, AM/PM, a time zone), never a number format
# (0, 9, D, G, S, MI, EEEE, ...).
_DATETIME_FORMAT = re.compile(r"YY|DD|DY|HH|MON|MM|SS|FF|AM|PM|TZ", re.IGNORECASE)


# Snowflake's EPOCH date parts (DATE_PART / EXTRACT): Spark's function of the instant, and
# how many of its units one of Snowflake's is.
_EPOCH_PARTS = {
    "EPOCH": ("UNIX_SECONDS", 1),
    "EPOCH_SECOND": ("UNIX_SECONDS", 1),
    "EPOCH_SECONDS": ("UNIX_SECONDS", 1),
    "EPOCH_MILLISECOND": ("UNIX_MILLIS", 1),
    "EPOCH_MILLISECONDS": ("UNIX_MILLIS", 1),
    "EPOCH_MICROSECOND": ("UNIX_MICROS", 1),
    "EPOCH_MICROSECONDS": ("UNIX_MICROS", 1),
    "EPOCH_NANOSECOND": ("UNIX_MICROS", 1000),
    "EPOCH_NANOSECONDS": ("UNIX_MICROS", 1000),
}


def _epoch(node: exp.Extract) -> exp.Expression | None:
    """``DATE_PART(epoch_second, x)`` and the other EPOCH parts (Spark knows none): the
    seconds (milli-, micro-, nanoseconds) since 1970-01-01 00:00 UTC of x as an instant
    (a DATE at its midnight, a TIMESTAMP_NTZ's wall-clock time in UTC, as Snowflake)."""
    part = _EPOCH_PARTS.get(node.name.upper())
    if part is None:
        return None
    function, factor = part
    instant = exp.cast(_inner(node.expression), exp.DataType.Type.TIMESTAMP)
    value = call(function, instant)
    return value if factor == 1 else exp.paren(value * exp.Literal.number(factor))


def _ratio_to_report(node: exp.Window) -> exp.Expression | None:
    """``RATIO_TO_REPORT(x) OVER (PARTITION BY ...)`` (no Spark function): x over the sum of
    x in its partition, NULL where that sum is 0 or NULL, as in Snowflake."""
    call = node.this
    if not (isinstance(call, exp.Anonymous) and call.name.upper() == "RATIO_TO_REPORT"):
        return None
    (value,) = [_inner(arg) for arg in call.expressions] or [exp.Null()]
    total = exp.Window(
        this=exp.Sum(this=value.copy()),
        partition_by=[_inner(p) for p in node.args.get("partition_by") or []],
        over="OVER",
    )
    return exp.Div(this=value, expression=exp.Nullif(this=total, expression=exp.Literal.number(0)))


def _date_from_parts(node: exp.DateFromParts) -> exp.Expression | None:
    """``DATE_FROM_PARTS(y, m, d)``: Snowflake carries a month or day past its range into
    the next (month 13 of 2026 is January 2027, day 0 the last of the month before);
    Spark's MAKE_DATE fails. The first of year y, plus m - 1 months, plus d - 1 days."""
    if not node.args.get("allow_overflow"):
        return None
    year, month, day = (_inner(node.args[k]) for k in ("year", "month", "day"))
    first = call("MAKE_DATE", year, exp.Literal.number(1), exp.Literal.number(1))
    months = call("ADD_MONTHS", first, exp.Sub(this=month, expression=exp.Literal.number(1)))
    return call("DATE_ADD", months, exp.Sub(this=day, expression=exp.Literal.number(1)))


def _null_if_any_null(node: exp.Greatest | exp.Least) -> exp.Expression | None:
    """GREATEST / LEAST are NULL when an argument is NULL, in Snowflake and BigQuery;
    Spark's skip NULLs."""
    if node.args.get("ignore_nulls"):
        return None
    args = [_inner(a) for a in (node.this, *node.expressions)]
    which = node.copy()
    which.set("this", args[0])
    which.set("expressions", args[1:])
    which.set("ignore_nulls", True)  # rewritten once
    any_null = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in args])
    return exp.If(this=any_null, true=exp.Null(), false=which)


def _to_char(node: exp.ToChar) -> exp.Expression | None:
    """``TO_CHAR`` / ``TO_VARCHAR`` with a format of a value sqlglot cannot type (a
    column): a date or time format (``'YYYY-MM-DD'``) is Spark's DATE_FORMAT of its
    pattern (:func:`_date_format`, ``yyyy-MM-dd``; Spark's TO_CHAR read it as its own
    and failed, or answered with the week-based year and the day of the year); a number
    format (``'9,999.99'``) stays with Spark's TO_CHAR, which knows those, of the value
    rounded to the format's decimals (Spark's printed ``###.##`` for 123.456)."""
    form = node.args.get("format")
    if form is None:
        return None
    if form.is_string and _DATETIME_FORMAT.search(form.name):
        snowflake = sqlglot.Dialect.get_or_raise("snowflake")
        return _date_format(node.this, snowflake.format_time(form) or form)
    value = _inner(node.this)
    if form.is_string:  # rounded to the format's decimals (Spark's printed ###.## instead)
        fraction = re.split(r"[.D]", form.name.upper(), maxsplit=1)[1:]
        decimals = sum(digit in "09" for digit in fraction[0]) if fraction else 0
        value = exp.Round(this=value, decimals=exp.Literal.number(decimals))
    return call("TO_CHAR", value, form)


def _date_format(value: exp.Expression, form: exp.Expr) -> exp.Expression | None:
    """Spark's DATE_FORMAT of a date or time format as sqlglot's parser gives it
    (strftime's ``%Y-%m-%d``), turned into Spark's (Java's) pattern with sqlglot's own
    mapping and what it lacks: Snowflake's ``FF0`` .. ``FF9`` (that many digits of the
    second's fraction; ``FF``: nine) and ``TZH:TZM`` / ``TZH`` (``+02:00`` / ``+02``),
    which sqlglot wrote as ``_three`` or ``%:`` (an error, or those characters shown)."""
    if not form.is_string:
        return None
    mapping, trie = _java_mapping()
    pattern = format_time(form.name, mapping, trie) or ""
    return call("DATE_FORMAT", _inner(value), exp.Literal.string(pattern))


@cache
def _java_mapping() -> tuple[dict[str, str], dict[Any, Any]]:
    digits = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
    fractions = {f"%f_{word}": "S" * n for n, word in enumerate(digits)}
    mapping = {**Spark.INVERSE_TIME_MAPPING, **fractions, "%:z": "xxx", "%-z": "x"}
    return mapping, new_trie(mapping)


# Spark functions that reach outside the catalog: Java static methods (with which a
# statement could, say, link any file on the machine under a table) and file paths.
_OUTSIDE_FUNCTIONS = {
    "REFLECT",
    "JAVA_METHOD",
    "TRY_REFLECT",
    "INPUT_FILE_NAME",
    "INPUT_FILE_BLOCK_START",
    "INPUT_FILE_BLOCK_LENGTH",
}


def _unnest_joins(select: exp.Expr) -> exp.Expr:
    """sqlglot's ``JOIN UNNEST(arr) AS x ON <condition>`` to Spark's LATERAL VIEW EXPLODE
    dropped the condition (every element joined every row) and a LEFT JOIN's rows whose
    array is empty: an inner join's condition filters the rows (WHERE), a LEFT JOIN
    (``ON TRUE``) is LATERAL VIEW OUTER; a LEFT JOIN on a condition is refused."""
    if not isinstance(select, exp.Select):
        return transforms.unnest_to_explode(select)
    outer: list[exp.Expression] = []
    for join in select.args.get("joins") or []:
        unnest = join.this
        if not isinstance(unnest, exp.Unnest):
            continue
        on = join.args.get("on")
        always = on is None or (isinstance(on, exp.Boolean) and on.this is True)
        if join.side == "LEFT":
            if not always or len(unnest.expressions) != 1:
                raise SqlglotUnsupported(
                    "LEFT JOIN UNNEST(...) ON a condition, or of several arrays, is not "
                    "supported (ON TRUE is, and an inner JOIN on a condition)"
                )
            outer.append(unnest.expressions[0])
        elif not always:
            select.where(on.copy(), copy=False)
        join.set("on", None)
    exploded = transforms.unnest_to_explode(select)
    for lateral in exploded.args.get("laterals") or []:
        if any(lateral.this.this is array for array in outer):
            lateral.set("outer", True)
    return exploded


class _Spark4(Spark):
    """Spark SQL as Spark 4 reads it: sqlglot's Spark generator rewrites QUALIFY as a
    subquery with a ``_w`` column, which ``SELECT *`` then returned (and CTAS stored,
    INSERT ... SELECT * refused as one column too many); Spark 4 has QUALIFY itself. And
    it writes a TRY_CAST that is not marked ``safe`` (Snowflake's ``TRY_TO_DATE('...')``)
    as CAST, and a parse with a format marked ``safe`` (``TRY_TO_DATE(s, 'MM/DD/YYYY')``,
    ``TRY_TO_TIMESTAMP(s, fmt)``, BigQuery's ``SAFE.PARSE_DATE``) as TO_DATE / TO_TIMESTAMP,
    which fail in Spark 4's ANSI mode instead of answering NULL. Its patterns know an
    offset with a colon (``%:z``, ``+02:00``: Snowflake's TZH:TZM, BigQuery's %Ez)."""

    TIME_MAPPING = {**Spark.TIME_MAPPING, "xxx": "%:z"}

    class Generator(SparkGenerator):
        TRANSFORMS = {
            **SparkGenerator.TRANSFORMS,
            exp.TryCast: lambda self, e: self.trycast_sql(e),
            **{
                parse: lambda self, e: (
                    self.func(
                        "TRY_TO_TIMESTAMP" if isinstance(e, exp.StrToTime) else "TRY_TO_DATE",
                        e.this,
                        self.format_time(e),
                    )
                    if e.args.get("safe")
                    else SparkGenerator.TRANSFORMS[type(e)](self, e)
                )
                for parse in (exp.StrToDate, exp.StrToTime, exp.TsOrDsToDate)
            },
            exp.Select: transforms.preprocess(
                [
                    transforms.eliminate_distinct_on,
                    _unnest_joins,
                    transforms.any_to_exists,
                ]
            ),
        }


def _refuse_unwritable(tree: exp.Expression) -> None:
    """Refuse what no Spark SQL reads as the statement means: functions that reach
    outside the catalog (SPEC R38), ``$1`` / ``$var``, ``SELECT * RENAME|REPLACE|ILIKE``
    over a join (over one table, ``rewind.sql.query`` names its columns first) and
    ``SAMPLE ... SEED`` (Spark answered those with errors naming its own syntax)."""
    for function in tree.find_all(exp.Anonymous):
        if function.name.upper() in _OUTSIDE_FUNCTIONS:
            raise UnsupportedError(
                f"Function {function.name.upper()} is not supported: it reaches outside "
                "the catalog."
            )
        if "$" in function.name:  # Spark's parser failed on the name, naming its own syntax
            raise UnsupportedError(
                f"Function {function.name.upper()} is not supported: Snowflake's system "
                "functions have no counterpart in Rewind."
            )
    for parameter in tree.find_all(exp.Parameter):
        name = parameter.name.upper()
        raise UnsupportedError(
            f"Positional column reference ${name} is not supported: name the column."
            if name.isdigit()
            # the statement's own $name were replaced by their values (sql.variables)
            else f"Session variable ${name} cannot be read in a SQL function's body: pass "
            "its value as an argument."
        )
    for star in tree.find_all(exp.Star):
        clause = next((k for k in ("rename", "replace", "ilike") if star.args.get(k)), None)
        if clause:
            raise UnsupportedError(
                f"SELECT * {clause.upper()} is not supported over a join: name the columns "
                "(over one table it is, and SELECT * EXCLUDE (...) is)."
            )
    for sample in tree.find_all(exp.TableSample):
        percent = sample.args.get("percent")
        if isinstance(percent, exp.Literal) and not 0 <= float(percent.name) <= 100:
            raise InvalidValue(
                f"SAMPLE ({percent.name}) is out of range: a percentage is 0 to 100."
            )
        if sample.args.get("seed"):
            raise UnsupportedError(
                "SAMPLE ... SEED (REPEATABLE) is not supported: Spark draws a sample without "
                "a seed. Drop SEED for a sample that differs per run."
            )


# Snowflake's query forms Spark SQL has none of (its parser answered SYNTAX_ERROR, as if
# the statement were not valid Snowflake), and how to write them instead.
_NO_SPARK_FORM: dict[type[exp.Expression], str] = {
    exp.MatchRecognize: "MATCH_RECOGNIZE is not supported: use window functions (LAG, "
    "CONDITIONAL_TRUE_EVENT) over the rows.",
    exp.Connect: "CONNECT BY is not supported: write the hierarchy as WITH RECURSIVE.",
    exp.PivotAny: "PIVOT ... IN (ANY) is not supported: name the values, IN ('a', 'b').",
}


def in_for_quantified(node: exp.Expression) -> exp.Expression:
    """``x = ANY (subquery)`` as ``x IN (subquery)`` and ``x <> ALL (subquery)`` as ``NOT x
    IN (subquery)``, the same comparisons NULLs included, in the form Spark has: sqlglot
    reads Snowflake's ``x NOT IN (SELECT ...)`` as the latter, which was refused."""
    quantified = node.expression if isinstance(node, exp.EQ | exp.NEQ) else None
    wanted = exp.Any if isinstance(node, exp.EQ) else exp.All
    if not isinstance(quantified, wanted) or not isinstance(quantified.this, exp.Query):
        return node
    query = quantified.this
    if not isinstance(query, exp.Subquery):
        query = exp.Subquery(this=query)
    found = exp.In(this=node.this, query=query)
    return found if isinstance(node, exp.EQ) else exp.Not(this=found)


def _refuse_without_spark_form(tree: exp.Expression) -> None:
    """Refuse, by name, what Spark SQL has no form of: :data:`_NO_SPARK_FORM`, an ASOF
    JOIN, a comparison with ``ANY`` / ``ALL (subquery)``."""
    for kind, message in _NO_SPARK_FORM.items():
        if tree.find(kind):
            raise UnsupportedError(message)
    if any(join.args.get("match_condition") is not None for join in tree.find_all(exp.Join)):
        raise UnsupportedError(
            "ASOF JOIN is not supported: join on the latest earlier row with a window "
            "(MAX_BY, or ROW_NUMBER over the candidates)."
        )
    for quantified in tree.find_all(exp.Any, exp.All):
        if isinstance(quantified.this, exp.Subquery | exp.Query):
            word = "ANY" if isinstance(quantified, exp.Any) else "ALL"
            raise UnsupportedError(
                f"A comparison with {word} (subquery) is not supported: compare with the "
                f"subquery's {'MIN or MAX' if word == 'ANY' else 'MAX or MIN'} instead."
            )


_TIMES_OF_DAY = (exp.Localtime, exp.CurrentTime, exp.TsOrDsToTime, exp.TimeFromParts)


def _refuse_times_of_day(tree: exp.Expression) -> None:
    """Refuse a time of day (``x::TIME``, ``TO_TIME``, ``CURRENT_TIME``): Rewind has no TIME
    type, and Spark read one as a timestamp of the machine's today (a wrong answer that
    also broke the one clock, SPEC R15)."""
    for node in tree.find_all(exp.Cast, *_TIMES_OF_DAY):
        if not isinstance(node, exp.Cast) or node.to.is_type(exp.DataType.Type.TIME):
            raise UnsupportedError(
                "TIME values (a time of day) are not supported: use a TIMESTAMP_NTZ "
                "(TO_TIMESTAMP_NTZ) or the time as text (TO_CHAR(ts, 'HH24:MI:SS'))."
            )


def _values_columns(tree: exp.Expression) -> None:
    """``FROM VALUES (1, 'a'), ...`` without column names: Snowflake names its columns
    COLUMN1, COLUMN2, ... (Spark: col1, col2; ``SELECT column1`` failed)."""
    for values in tree.find_all(exp.Values):
        alias = values.args.get("alias")
        if (alias is not None and alias.columns) or not values.expressions:
            continue
        first = values.expressions[0]
        width = len(first.expressions) if isinstance(first, exp.Tuple) else 1
        named = alias.this.copy() if alias is not None and alias.this else None
        columns = [exp.to_identifier(f"COLUMN{i + 1}") for i in range(width)]
        values.set("alias", exp.TableAlias(this=named, columns=columns))


def _keys_as_written(tree: exp.Expression) -> None:
    """Snowflake's object literal's keys (``{'a': 1}``) keep their case: they are text,
    not names (sqlglot read them as names, which R4 upper-cased). BigQuery's STRUCT field
    names are names (``s.a`` reads ``STRUCT(1 AS A)``)."""
    for struct in tree.find_all(exp.Struct):
        for field in struct.expressions:
            if isinstance(field, exp.PropertyEQ) and isinstance(field.this, exp.Identifier):
                field.this.set("quoted", True)


def to_spark(tree: exp.Expression, dialect: str = "snowflake") -> str:
    """Spark SQL for a (bound) tree of a statement in ``dialect`` (Snowflake's functions
    answer as in Snowflake: :func:`_snowflake_answers`); unquoted names fold to upper
    case (R4).

    Raises:
        UnsupportedError: what :func:`_refuse_unwritable` refuses, and what sqlglot
            cannot write for Spark.
    """
    spark_tree = tree.copy().transform(in_for_quantified, copy=False)
    _refuse_unwritable(spark_tree)
    _refuse_without_spark_form(spark_tree)
    _refuse_times_of_day(spark_tree)
    if dialect == "snowflake":
        _keys_as_written(spark_tree)
        _values_columns(spark_tree)
    else:
        json_fields(spark_tree)
    spark_tree = (
        normalize_identifiers(spark_tree, dialect="snowflake")
        .transform(_keep_unit, copy=False)
        .transform(timestamp_literal, copy=False)
    )
    if dialect == "snowflake":
        spark_tree = spark_tree.transform(_snowflake_answers, copy=False)
    else:
        spark_tree = spark_tree.transform(bigquery_answers, copy=False)
    try:
        # sqlglot drops what Spark has no form for with a warning (LAST_DAY(d, 'week') as
        # the month's last day, TO_CHAR(n, '9,999.99') without its format): a wrong
        # answer; raised instead, it is refused by name (SPEC R39).
        return spark_tree.sql(dialect=_Spark4, identify=True, unsupported_level=ErrorLevel.RAISE)
    except SqlglotUnsupported as exc:
        reason = str(exc).strip().splitlines()[0].rstrip(".").replace(" when targeting _Spark4", "")
        raise UnsupportedError(f"{reason} (Spark has no form of it).") from None
