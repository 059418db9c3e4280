"""What Snowflake and BigQuery both answer otherwise than Spark (SPEC R26, R27), for
:func:`rewind.sql.spark_sql._snowflake_answers` and :mod:`rewind.sql.bigquery_answers`:
a cast to an integer, a difference of dates counted in unit boundaries, the substring a
regular expression extracts, an ordered ARRAY_AGG, INITCAP and PARSE_JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import sqlglot
from sqlglot import exp

from rewind.errors import InvalidValue, UnsupportedError

_INTEGERS = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}


def rounded_to_integer(
    node: exp.Cast, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression | None:
    """``CAST(x AS INT)`` (``x::INT``, BigQuery's ``INT64``, ``TRY_CAST``): both products
    round half away from zero (``1.5::INT`` is 2, ``-0.5::INT`` -1), Spark's cast truncates
    (1, 0): through Spark's DECIMAL(38, 0), which rounds so. None for an integer literal,
    or a cast to another type. ``inner``: the caller's rewrite of ``x``."""
    value = node.this
    if node.to.this not in _INTEGERS or (isinstance(value, exp.Literal) and value.is_int):
        return None
    rounded = node.copy()
    rounded.set("this", inner(value))
    rounded.set("to", exp.DataType.build("DECIMAL(38, 0)"))
    outer = node.copy()
    outer.set("this", rounded)
    return outer


# Units both products' boundary-counting differences and Spark's DATE_TRUNC know.
TRUNCATED_UNITS = {
    "YEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MILLISECOND",
    "MICROSECOND",
}


def boundaries(unit: str, start: exp.Expression, end: exp.Expression) -> exp.Expression:
    """The ``unit`` boundaries crossed from ``start`` to ``end`` (Snowflake's DATEDIFF,
    BigQuery's DATE_DIFF and DATETIME_DIFF: one month from 31 January to 1 February; Spark's
    TIMESTAMPDIFF counts whole units, 0): the whole units between the two truncated to it.
    ``start`` / ``end``: already rewritten by the caller."""
    first, last = (call("DATE_TRUNC", exp.Literal.string(unit), value) for value in (start, end))
    return call("TIMESTAMPDIFF", exp.var(unit), first, last)


def regexp_extract(
    node: exp.RegexpExtract, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """Snowflake's ``REGEXP_SUBSTR(s, p [, position [, occurrence [, parameters [,
    group]]]])`` and BigQuery's ``REGEXP_EXTRACT(s, p [, position [, occurrence]])``: the
    ``occurrence``-th match at or after character ``position`` (Spark's REGEXP_EXTRACT has
    neither), NULL where there is none (Spark's answered ''); the whole match, or a group:
    the first with Snowflake's ``e`` or a BigQuery pattern that has one."""
    pattern = _regexp_pattern(node, inner)
    group = _regexp_group(node)
    matches = call("REGEXP_EXTRACT_ALL", _regexp_subject(node, inner), pattern, group)
    occurrence = node.args.get("occurrence") or exp.Literal.number(1)
    return call("TRY_ELEMENT_AT", matches, inner(occurrence))


def regexp_instr(
    node: exp.RegexpInstr, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """Snowflake's ``REGEXP_INSTR(s, p [, position [, occurrence [, option [, parameters [,
    group]]]]])``: where the first match at or after ``position`` begins (``option`` 1:
    the character after it ends), 0 where there is none. Spark's REGEXP_INSTR reads its
    third argument as a group, not a position: ``REGEXP_INSTR(s, p, 3)`` was another
    question.

    Raises:
        UnsupportedError: for another occurrence than the first (Spark finds only it).
    """
    occurrence = node.args.get("occurrence")
    if occurrence is not None and occurrence.name != "1":
        raise UnsupportedError(
            "REGEXP_INSTR of another occurrence than the first is not supported."
        )
    pattern = _regexp_pattern(node, inner)
    group = _regexp_group(node)
    subject = _regexp_subject(node, inner)
    found = call("REGEXP_INSTR", subject, pattern, group.copy())
    at: exp.Expression = found
    if (position := node.args.get("position")) is not None and position.name != "1":
        at = exp.Add(
            this=at, expression=exp.Sub(this=inner(position), expression=exp.Literal.number(1))
        )
    if node.args.get("option") is not None and node.args["option"].name != "0":
        matched = call("REGEXP_EXTRACT", subject.copy(), pattern.copy(), group.copy())
        at = exp.Add(this=at, expression=call("LENGTH", matched))
    return exp.If(
        this=exp.EQ(this=found.copy(), expression=exp.Literal.number(0)),
        true=exp.Literal.number(0),
        false=at,
    )


def _regexp_group(node: exp.RegexpExtract | exp.RegexpInstr) -> exp.Expression:
    """The group a regular expression function answers of: its ``group`` argument, 1 for
    Snowflake's ``e`` parameter alone, else 0 (the whole match)."""
    group = node.args.get("group") or exp.Literal.number(0)
    if "e" in node.text("parameters") and group.name == "0":
        return exp.Literal.number(1)
    return group.copy()


def _regexp_subject(
    node: exp.RegexpExtract | exp.RegexpInstr, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """The text a regular expression function searches: from its ``position`` on."""
    subject, position = inner(node.this), node.args.get("position")
    if position is None or position.name == "1":
        return subject
    return exp.Substring(this=subject, start=inner(position))


def _regexp_pattern(
    node: exp.RegexpExtract | exp.RegexpInstr, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """The pattern with Snowflake's regular expression parameters as Java's inline flags:
    ``c`` case matters (the default), ``i`` it does not, the last of them winning; ``m``
    ^ and $ at each line; ``s`` . matches a newline; ``e`` (extract a group) is no flag.

    Raises:
        InvalidValue: for another letter.
        UnsupportedError: for parameters that are not literal text.
    """
    parameters = node.args.get("parameters")
    if parameters is not None and not isinstance(parameters, exp.Literal):
        raise UnsupportedError("Regular expression parameters must be literal text.")
    letters = node.text("parameters")
    if unknown := sorted(set(letters) - set("ciems")):
        raise InvalidValue(
            f"Unknown regular expression parameter {unknown[0]!r}: use c, i, m, e or s."
        )
    flags = ("i" if letters.rfind("i") > letters.rfind("c") else "") + "".join(
        flag for flag in "ms" if flag in letters
    )
    pattern = inner(node.expression)
    return call("CONCAT", exp.Literal.string(f"(?{flags})"), pattern) if flags else pattern


def ordered_array(
    value: exp.Expression,
    keys: list[exp.Ordered],
    limit: exp.Expression | None,
    inner: Callable[[exp.Expression], exp.Expression],
) -> exp.Expression | None:
    """An ordered ARRAY_AGG, which Spark's COLLECT_LIST cannot be (Snowflake's
    ``ARRAY_AGG([DISTINCT] x) WITHIN GROUP (ORDER BY ...)``, BigQuery's ``ARRAY_AGG(x ORDER
    BY ... [LIMIT n])``): the non-NULL values (``value``, a DISTINCT or not) collected with
    their keys, sorted by a comparator on each key in turn with its NULL order (the clause's,
    else Snowflake's: last ascending, first descending), then the values alone, distinct
    where asked, the first ``limit`` of them. None for a DISTINCT of several values."""
    distinct = isinstance(value, exp.Distinct)
    if distinct:
        if len(value.expressions) != 1:
            return None
        value = value.expressions[0]
    fields: list[exp.Expression] = []
    for i, key in enumerate([*(k.this for k in keys), value]):
        fields += [exp.Literal.string(f"k{i}"), inner(key)]
    item = exp.If(
        this=exp.Is(this=inner(value), expression=exp.Null()),
        true=exp.Null(),
        false=call("NAMED_STRUCT", *fields),
    )
    left, right = exp.to_identifier("__rw_l"), exp.to_identifier("__rw_r")
    comparison: exp.Expression = exp.Literal.number(0)
    for i, key in reversed(list(enumerate(keys))):
        comparison = _compare_key(f"k{i}", key, comparison, left, right)
    sort = exp.Lambda(this=comparison, expressions=[left.copy(), right.copy()])
    element = exp.to_identifier("__rw_e")
    sorted_items = call("ARRAY_SORT", call("COLLECT_LIST", item), sort)
    value_of = exp.Lambda(this=_field(element, f"k{len(keys)}"), expressions=[element.copy()])
    values = call("TRANSFORM", sorted_items, value_of)
    if distinct:
        values = call("ARRAY_DISTINCT", values)
    if limit is not None:
        values = call("SLICE", values, exp.Literal.number(1), inner(limit))
    return values


def _field(side: exp.Identifier, name: str) -> exp.Expression:
    return exp.Dot(this=exp.column(side.copy()), expression=exp.to_identifier(name))


def _compare_key(
    field: str,
    key: exp.Ordered,
    then: exp.Expression,
    left: exp.Identifier,
    right: exp.Identifier,
) -> exp.Expression:
    """-1, 0 or 1 as ``left``'s ``field`` sorts before, with or after ``right``'s under
    ``key``, ``then`` where they tie."""
    descending = bool(key.args.get("desc"))
    nulls_first = key.args.get("nulls_first")
    if nulls_first is None:
        nulls_first = descending
    a, b = _field(left, field), _field(right, field)

    def number(n: int) -> exp.Expression:
        return exp.Literal.number(n) if n >= 0 else exp.Neg(this=exp.Literal.number(-n))

    first, later = (-1, 1) if nulls_first else (1, -1)
    before = 1 if descending else -1
    both_null = exp.and_(
        exp.Is(this=a.copy(), expression=exp.Null()), exp.Is(this=b.copy(), expression=exp.Null())
    )
    return exp.Case(
        ifs=[
            exp.If(this=both_null, true=then),
            exp.If(this=exp.Is(this=a.copy(), expression=exp.Null()), true=number(first)),
            exp.If(this=exp.Is(this=b.copy(), expression=exp.Null()), true=number(later)),
            exp.If(this=exp.LT(this=a.copy(), expression=b.copy()), true=number(before)),
            exp.If(this=exp.GT(this=a.copy(), expression=b.copy()), true=number(-before)),
        ],
        default=then,
    )


# INITCAP in both products: a letter after any of these delimiters starts a word (Spark's
# INITCAP knows whitespace only). A character at a time, the one before it deciding.
_INITCAP = (
    "ARRAY_JOIN(TRANSFORM(SEQUENCE(1, LENGTH(__rw_text)), __rw_i -> IF(__rw_i = 1 OR "
    "INSTR(__rw_delimiters, SUBSTR(__rw_text, __rw_i - 1, 1)) > 0, "
    "UPPER(SUBSTR(__rw_text, __rw_i, 1)), LOWER(SUBSTR(__rw_text, __rw_i, 1)))), '')"
)
_DELIMITERS = ' \t\n\r\x0c\x0b!?@"^#$&~_,.:;+-*%/|\\[](){}<>'


@cache
def _sqlglot_initcap_defaults() -> list[exp.Expression]:
    """The delimiters sqlglot gives an INITCAP without any, in each product (a regex
    class: the same characters as :data:`_DELIMITERS`)."""
    parsed = (sqlglot.parse_one("SELECT INITCAP(x)", read=d) for d in ("snowflake", "bigquery"))
    return [p.expressions[0].args["expression"] for p in parsed]


def initcap(node: exp.Initcap, inner: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
    """``INITCAP(text [, delimiters])`` in Spark SQL (see :data:`_INITCAP`); sqlglot's
    Spark refused BigQuery's with its default delimiters as custom ones."""
    delimiters = node.args.get("expression")
    if delimiters is None or delimiters in _sqlglot_initcap_defaults():
        delimiters = exp.Literal.string(_DELIMITERS)
    return template(_INITCAP, text=inner(node.this), delimiters=delimiters)


def template(spark_sql: str, /, **values: exp.Expression) -> exp.Expression:
    """``spark_sql`` with each name ``__rw_<key>`` that is a key of ``values`` replaced
    by a copy of its value (the other ``__rw_`` names are the template's own: lambdas')."""
    tree = sqlglot.parse_one(spark_sql, read="spark")
    assert isinstance(tree, exp.Expression)
    for column in list(tree.find_all(exp.Column)):
        value = values.get(column.name.removeprefix("__rw_"))
        if column.name.startswith("__rw_") and value is not None:
            column.replace(value.copy())
    return tree


# The last day of the period of a date (LAST_DAY(d, unit)); a week's is found by
# NEXT_DAY from the day before, its last weekday the product's (Snowflake's weeks start on
# Monday, BigQuery's WEEK on Sunday and its ISOWEEK on Monday).
_LAST_DAYS = {
    "MONTH": "LAST_DAY(__rw_d)",
    "QUARTER": "LAST_DAY(ADD_MONTHS(TRUNC(__rw_d, 'QUARTER'), 2))",
    "YEAR": "LAST_DAY(ADD_MONTHS(TRUNC(__rw_d, 'YEAR'), 11))",
    "WEEK": "NEXT_DAY(DATE_SUB(__rw_d, 1), __rw_weekday)",
}


_WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def last_day(
    node: exp.LastDay, week_ends: dict[str, str], inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression | None:
    """``LAST_DAY(d [, unit])``: the last day of ``d``'s month, quarter, year or week
    (``week_ends``: the last weekday of each week unit the product names; BigQuery's
    ``WEEK(<weekday>)`` ends the day before it). Spark's LAST_DAY knows months only
    (sqlglot refused the unit, or gave the month's last day). None for another unit."""
    unit = node.args.get("unit")
    day = exp.cast(inner(node.this), "DATE")  # a timestamp's day (both products answer a DATE)
    if isinstance(unit, exp.WeekStart):
        starts = _WEEKDAYS.index(unit.name.upper()[:2])
        weekday = exp.Literal.string(_WEEKDAYS[starts - 1])
        return template(_LAST_DAYS["WEEK"], d=day, weekday=weekday)
    name = unit.name.upper() if isinstance(unit, exp.Var) else "MONTH" if unit is None else ""
    if name in week_ends:
        weekday = exp.Literal.string(week_ends[name])
        return template(_LAST_DAYS["WEEK"], d=day, weekday=weekday)
    if name in ("MONTH", "QUARTER", "YEAR"):
        return template(_LAST_DAYS[name], d=day)
    return None


def parsed_json(
    node: exp.ParseJSON, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """PARSE_JSON (both products), TRY_PARSE_JSON, BigQuery's SAFE.PARSE_JSON: Rewind
    keeps JSON as its text (no VARIANT), which they returned whatever it was. Text that
    is no JSON fails PARSE_JSON, and is NULL for the safe forms, as in Snowflake and
    BigQuery (Spark's GET_JSON_OBJECT reads no other text; 'null' is JSON's null, which
    it also answers NULL for). Text known to be JSON is its own answer: a literal that
    is (``JSON '{"a": 1}'``, which a VALUES row can then hold: Spark's inline tables take
    no RAISE_ERROR), a VARIANT column's text (``TO_JSON``, rewind.sql.paths)."""
    text = inner(node.this)
    if _is_json(text):
        return text
    valid = exp.or_(
        exp.Is(this=text.copy(), expression=exp.Null()),  # NULL's is NULL, not an error
        exp.Is(
            this=call("GET_JSON_OBJECT", text.copy(), exp.Literal.string("$")),
            expression=exp.Null(),
        ).not_(),
        exp.EQ(this=call("TRIM", text.copy()), expression=exp.Literal.string("null")),
    )
    error = exp.Literal.string("Error parsing JSON: the text is not JSON.")
    invalid = exp.Null() if node.args.get("safe") else call("RAISE_ERROR", error)
    return exp.If(this=valid, true=text, false=invalid)


def _is_json(text: exp.Expression) -> bool:
    """Whether ``text`` is JSON whatever the row: a literal that parses, a TO_JSON."""
    if isinstance(text, exp.Anonymous) and text.name.upper() == "TO_JSON":
        return True
    if not (isinstance(text, exp.Literal) and text.is_string):
        return False
    try:
        json.loads(text.this)
    except ValueError:
        return False
    return True


_TEXT_TYPES = {exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT, exp.DataType.Type.CHAR}


def is_variant_cast(node: exp.Expression) -> bool:
    """Whether ``node`` is Snowflake's ``TO_VARIANT(x)`` / ``x::VARIANT``."""
    if isinstance(node, exp.ToVariant):
        return True
    return isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.VARIANT)


def json_as_text(
    node: exp.Cast, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression | None:
    """``PARSE_JSON('"text"')::VARCHAR``, ``TO_VARIANT('text')::VARCHAR``: a JSON string's
    value (``text``; the latter kept its quotes), other JSON
    as its text, as a VARIANT cast to text is in Snowflake (it kept the quotes:
    ``"text"``). None for another cast."""
    given = node.this.unnest()  # (x::VARIANT)::VARCHAR
    variant = isinstance(given, exp.ParseJSON) or is_variant_cast(given)
    if not (variant and node.to.this in _TEXT_TYPES):
        return None
    return call("GET_JSON_OBJECT", inner(node.this), exp.Literal.string("$"))


# (node kinds, their rewrite): a rewrite answers None to leave a node as sqlglot writes it.
Rewrites = list[
    tuple[
        type[exp.Expression] | tuple[type[exp.Expression], ...],
        Callable[[Any], exp.Expression | None],
    ]
]


def rewritten(node: exp.Expression, rewrites: Rewrites) -> exp.Expression:
    """``node`` as the first rewrite of its kind that answers gives it, else itself."""
    for kind, rewrite in rewrites:
        if isinstance(node, kind):
            replacement = rewrite(node)
            if replacement is not None:
                return replacement
    return node


def call(name: str, *args: exp.Expression) -> exp.Anonymous:
    """A call of Spark's function ``name`` (written as it is named here)."""
    return exp.Anonymous(this=name, expressions=list(args))


def distinct_count(
    node: exp.Window, inner: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression | None:
    """``COUNT(DISTINCT x) OVER (...)`` (both products): the size of the window's set of
    values, NULL left out (Spark has no DISTINCT in a window function: refused). None
    for any other window."""
    count = node.this
    distinct = count.this if isinstance(count, exp.Count) else None
    if not isinstance(distinct, exp.Distinct) or len(distinct.expressions) != 1:
        return None
    window = node.copy()
    window.set("this", call("COLLECT_SET", distinct.expressions[0].copy()))
    return call("SIZE", inner(window))


_PARTS = ("year", "month", "day", "hour", "min", "sec")


def wall_clock_from_parts(
    node: exp.TimestampFromParts | exp.TimestampLtzFromParts,
    inner: Callable[[exp.Expression], exp.Expression],
    carry: bool = False,
) -> exp.Expression | None:
    """Snowflake's ``TIMESTAMP_[NTZ_]FROM_PARTS(y, m, d, h, mi, s [, ns])`` (its default
    TIMESTAMP is the wall clock), BigQuery's ``DATETIME(y, m, d, h, mi, s)``: a
    TIMESTAMP_NTZ (sqlglot wrote Spark's TIMESTAMP, an instant, and took the nanoseconds
    for a time zone); ``TIMESTAMP_LTZ_FROM_PARTS``: that instant in UTC. None for
    another form. With ``carry`` (Snowflake's), a part past its usual range carries into
    the next (hour 25 is 1 am the day after, second 3600 an hour, day 0 the last of the
    month before): the first instant of the year plus that many months, days, hours,
    minutes and seconds (Spark's MAKE_TIMESTAMP failed, DATETIME_FIELD_OUT_OF_BOUNDS)."""
    if set(node.args) - {*_PARTS, "nano"} or any(node.args.get(p) is None for p in _PARTS):
        return None
    parts = [inner(node.args[p]) for p in _PARTS]
    if node.args.get("nano") is not None:
        nanos = exp.Div(this=inner(node.args["nano"]), expression=exp.Literal.number(10**9))
        parts[-1] = exp.Add(this=parts[-1], expression=exp.Paren(this=nanos))
    made = "MAKE_TIMESTAMP" if isinstance(node, exp.TimestampLtzFromParts) else "MAKE_TIMESTAMP_NTZ"
    if not carry:
        return call(made, *parts)
    zero, one = exp.Literal.number(0), exp.Literal.number(1)
    year, month, day, *clock = parts
    start = call(made, year, one, one, zero, zero, zero)
    months, days = (exp.Sub(this=p, expression=one.copy()) for p in (month, day))
    since = call("MAKE_INTERVAL", zero.copy(), months, zero.copy(), days, *clock)
    return exp.Add(this=start, expression=since)
