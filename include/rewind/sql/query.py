"""SELECT with AT | BEFORE on any table reference, run on Spark (SPEC R16–R18, R23).

Each table reference becomes a temporary view over the files of the version its
point names, projected onto the table's current columns; the rest of the query is
transpiled from Snowflake SQL to Spark SQL by sqlglot.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from rewind import timetravel
from rewind.catalog.models import CatalogObject
from rewind.clock import format_timestamp, parse_timestamp, parse_timestamp_input
from rewind.constants import TABLE
from rewind.errors import InvalidValue, ObjectNotFound, StorageError, UnsupportedError
from rewind.identifiers import normalize
from rewind.lifecycle import pins
from rewind.lifecycle.views import is_system_view, system_view
from rewind.result import Result
from rewind.security import can_see
from rewind.sql import names
from rewind.sql.frames import collect, version_frame
from rewind.sql.tables import current_version, snapshot
from rewind.sql.values import literal
from rewind.statement import Context
from rewind.storage import timeline
from rewind.storage.columns import table_columns
from rewind.storage.log import HistoryGone

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_view_ids = itertools.count()


@dataclass
class Binding:
    """The temporary views and pins a statement holds, released when it ends."""

    views: list[str] = field(default_factory=list)
    pins: list[Path] = field(default_factory=list)


def view_name(ctx: Context) -> str:
    return f"__rw_{ctx.query_id.replace('-', '')[:12]}_{next(_view_ids)}"


# sqlglot writes Snowflake's DATEADD(unit, n, x) as Spark's DATE_ADD(x, n), which adds
# *days* whatever the unit and truncates a timestamp to a date; TIMESTAMPADD keeps both,
# so that the usual Snowflake idiom AT(TIMESTAMP => DATEADD(hour, -1, CURRENT_TIMESTAMP()))
# names the right instant (SPEC R16). DATE_ADD stays for days on dates (a DATE result).
_SUB_DAY_UNITS = {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}
_TIMESTAMP_TYPES = (
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIMESTAMPLTZ,
    exp.DataType.Type.TIMESTAMPNTZ,
    exp.DataType.Type.DATETIME,
)


def _is_timestamp(node: exp.Expression) -> bool:
    """Whether ``node`` is visibly a timestamp (the clock, a cast, a sub-day DATEADD)."""
    if isinstance(node, exp.CurrentTimestamp):
        return True
    if isinstance(node, exp.Cast | exp.TryCast):
        return node.to.is_type(*_TIMESTAMP_TYPES)
    if isinstance(node, exp.DateAdd | exp.TimestampAdd):
        return node.text("unit").upper() in _SUB_DAY_UNITS or _is_timestamp(node.this)
    return False


def _keep_unit(node: exp.Expression) -> exp.Expression:
    if not isinstance(node, exp.DateAdd | exp.TimestampAdd):
        return node
    unit = node.text("unit").upper()
    if unit in _SUB_DAY_UNITS or (unit in ("DAY", "WEEK") and _is_timestamp(node.this)):
        # transform() does not descend into a replacement: rewrite the arguments here.
        args = [arg.transform(_keep_unit) for arg in (node.expression, node.this)]
        return exp.Anonymous(this="TIMESTAMPADD", expressions=[exp.var(unit), *args])
    return node


def _timestamp_literal(node: exp.Expression) -> exp.Expression:
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
    ):
        return node
    directives = re.sub(r"%f_\w+", "%f", pattern.this.replace("%:z", "%z"))
    try:
        given = datetime.strptime(text.this, directives)
    except ValueError:
        raise InvalidValue(f"Timestamp '{text.this}' does not match its format.") from None
    to = node.args.get("target_type") or exp.DataType.build("TIMESTAMP_NTZ")
    return _instant(given, to if isinstance(to, exp.DataType) else exp.DataType.build(to))


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


def to_spark(tree: exp.Expression) -> str:
    """Spark SQL for a (bound) Snowflake tree; unquoted names fold to upper case (R4).

    Raises:
        UnsupportedError: a function that reaches outside the catalog (SPEC R38).
    """
    for function in tree.find_all(exp.Anonymous):
        if function.name.upper() in _OUTSIDE_FUNCTIONS:
            raise UnsupportedError(
                f"Function {function.name.upper()} is not supported: it reaches outside "
                "the catalog."
            )
    return (
        normalize_identifiers(tree.copy(), dialect="snowflake")
        .transform(_keep_unit, copy=False)
        .transform(_timestamp_literal, copy=False)
        .sql(dialect="spark", identify=True)
    )


def with_clock(ctx: Context, tree: exp.Expression) -> exp.Expression:
    """``tree`` with CURRENT_TIMESTAMP / CURRENT_DATE (and their Snowflake synonyms) as
    constants of the Rewind clock: Spark's would read the wall clock (SPEC R15)."""
    instant = exp.Literal.string(format_timestamp(ctx.now))

    def constant(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.CurrentTimestamp):
            return exp.cast(instant.copy(), "TIMESTAMP")
        if isinstance(node, exp.CurrentDate):
            return exp.cast(exp.cast(instant.copy(), "TIMESTAMP"), "DATE")
        return node

    return tree.transform(constant)


def point_of(ctx: Context, when: exp.HistoricalData) -> timetravel.Point:
    """Turn ``AT|BEFORE(kind => expr)`` into a :class:`timetravel.Point`."""
    direction = str(when.this).upper()
    kind = str(when.args.get("kind")).upper()
    value = when.expression
    if kind == "OFFSET":
        return timetravel.Point(direction, offset_seconds=float(_number(value)))
    if kind == "STATEMENT":
        text = literal(value)
        if not isinstance(text, str):
            raise InvalidValue("STATEMENT => needs a query id string.")
        return timetravel.Point(direction, statement=text.strip())
    if kind == "TIMESTAMP":
        return timetravel.Point(direction, timestamp=_timestamp(ctx, value))
    raise InvalidValue(f"Unknown time travel point kind {kind}.")


_ARITHMETIC: dict[type[exp.Expression], Callable[[Decimal, Decimal], Decimal]] = {
    exp.Add: operator.add,
    exp.Sub: operator.sub,
    exp.Mul: operator.mul,
    exp.Div: operator.truediv,
}


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
        raise InvalidValue(f"OFFSET => needs a number of seconds, got '{node.sql('snowflake')}'.")
    number = Decimal(value)
    if abs(number) > 10**12:
        raise InvalidValue(f"OFFSET => {value} is out of range.")
    return number


def _timestamp(ctx: Context, node: exp.Expression) -> datetime:
    """A constant timestamp; CURRENT_TIMESTAMP means the Rewind clock (SPEC R15)."""
    node = node.transform(_timestamp_literal)  # TO_TIMESTAMP_TZ(text, format) read here
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
    bound = with_clock(ctx, node)
    if list(bound.find_all(exp.Column, exp.Select)):
        raise InvalidValue(f"TIMESTAMP => needs a constant, got '{node.sql('snowflake')}'.")
    sql = to_spark(exp.select(exp.cast(bound, "TIMESTAMP").as_("ts")))
    try:
        value = ctx.spark().sql(sql).toArrow().column(0)[0].as_py()
    except OverflowError:  # Spark reaches years Python's datetime does not (R39)
        raise InvalidValue(f"TIMESTAMP => '{node.sql('snowflake')}' is out of range.") from None
    if value is None:
        raise InvalidValue(f"TIMESTAMP => '{node.sql('snowflake')}' is NULL.")
    return parse_timestamp(value.isoformat())


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


def table_read(ctx: Context, table: exp.Table, parts: list[str]) -> CatalogObject:
    """The table a reference reads: the live one by that name — and in BigQuery's
    dialect, for a reference with a point in time, the incarnation that existed at that
    instant: a table deleted or replaced since (BigQuery's undelete is ``CREATE TABLE
    t2 CLONE t@<epoch ms>``), while the point is within its window (SPEC R27).
    Authorization, the audit trail and execution all resolve a reference here."""
    when = table.args.get("when")
    if when is None or ctx.state.dialect != "bigquery":
        return names.table(ctx, parts)
    try:
        live: CatalogObject | None = names.table(ctx, parts)
    except ObjectNotFound:
        live = None
    instant = point_instant(ctx, point_of(ctx, when))
    if live is not None and instant >= live.created_on:
        return live
    parent, name = names.table_parent(ctx, parts)
    for old in ctx.catalog.dropped(TABLE, parent.id, name):
        assert old.dropped_on is not None
        if old.created_on <= instant < old.dropped_on and can_see(ctx, old):
            return old
    return live if live is not None else names.table(ctx, parts)


def resolve_version(ctx: Context, obj: CatalogObject, when: exp.HistoricalData | None) -> int:
    """The version a table reference reads: current, or the one its point names (R16, R17)."""
    if when is None:
        return current_version(ctx, obj)
    timeline.sync(ctx.catalog, ctx.store, obj)  # other writers' versions too (SPEC R40)
    point = point_of(ctx, when)
    versions = [
        timetravel.VersionInfo(v.version, v.commit_time) for v in ctx.catalog.versions(obj.id)
    ]
    facts = None
    if point.statement is not None:
        stmt = ctx.catalog.statement(point.statement)
        if stmt is not None:
            accesses = ctx.catalog.accesses(point.statement, obj.id)
            written = [a.version for a in accesses if a.access == "WRITE" and a.version is not None]
            read = [a.version for a in accesses if a.access == "READ" and a.version is not None]
            facts = timetravel.StatementFacts(
                stmt.start_time, max(written) if written else None, max(read) if read else None
            )
    created_on = obj.created_on
    if obj.location is not None and versions:  # SPEC R41: history before registration
        created_on = min(created_on, versions[0].commit_time - timedelta(microseconds=1))
    version = timetravel.resolve(
        point,
        table=str(names.qualified(ctx, obj)),
        versions=versions,
        created_on=created_on,
        now=ctx.now,
        retention_days=ctx.catalog.effective_retention(obj),
        statement=facts,
    )
    _check_files_held(ctx, obj, version)  # SELECT, CLONE and restore alike
    return version


def table_frame(ctx: Context, obj: CatalogObject, version: int) -> DataFrame:
    """Version ``version`` of ``obj`` with its current columns (SPEC R18); a column another
    engine renamed under column mapping reads by its identity, not its name (R43)."""
    then = snapshot(ctx, obj, version)
    columns = table_columns(obj)
    now_ids = snapshot(ctx, obj).field_ids or {} if version != current_version(ctx, obj) else {}
    if any(name != key for name, key in now_ids.items()):
        name_then = {key: name for name, key in (then.field_ids or {}).items()}
        columns = [
            replace(c, physical=name_then.get(now_ids.get(c.physical, ""), c.physical))
            for c in columns
        ]
    return version_frame(ctx, then, columns)


def table_references(tree: exp.Expression) -> list[tuple[exp.Table, list[str]]]:
    """The table references ``tree`` reads, with their name parts (CTE names excluded).

    One rule for :func:`bind` and the access check, so both see the same tables (R37).
    """
    ctes = {normalize(c.args["alias"].this) for c in tree.find_all(exp.CTE) if c.args.get("alias")}
    found = []
    for table in tree.find_all(exp.Table, exp.TableFromRows):
        if flow_index(table) is not None:
            continue  # an earlier result of the session's own ->> chain: no catalog table
        if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
            # Only catalog names are table references: no table functions, stages or
            # IDENTIFIER('format.`/path`') that Spark would read by path (SPEC R38).
            raise UnsupportedError(
                f"Only catalog tables can be read: '{table.sql('snowflake')[:100]}' "
                "is not a table name."
            )
        parts = names.parts(table)
        if len(parts) == 1 and parts[0] in ctes and table.args.get("when") is None:
            continue
        found.append((table, parts))
    return found


def flow_index(table: exp.Expression) -> int | None:
    """n of a ``FROM $n`` reference to the n-th result of a ``->>`` chain, else None."""
    if isinstance(table, exp.Table) and isinstance(table.this, exp.Parameter):
        number = table.this.this
        if isinstance(number, exp.Literal) and not number.is_string and number.this.isdigit():
            return int(number.this)
    return None


def _bind_flow(ctx: Context, tree: exp.Expression, binding: Binding) -> None:
    """``$n``: the n-th earlier result of the chain, as a view of its rows."""
    for table in list(tree.find_all(exp.Table)):
        n = flow_index(table)
        if n is None:
            continue
        if not 1 <= n <= len(ctx.state.flow):
            raise InvalidValue(
                f"${n} names no earlier statement of this ->> chain "
                f"({len(ctx.state.flow)} before it)."
            )
        result = ctx.state.flow[n - 1]
        rows = pa.Table.from_pylist(
            [dict(zip(result.columns, row, strict=True)) for row in result.rows],
            schema=None if result.rows else pa.schema([(c, pa.string()) for c in result.columns]),
        )
        view = view_name(ctx)
        binding.views.append(view)
        ctx.spark().createDataFrame(rows).createOrReplaceTempView(view)
        alias = table.args.get("alias")
        table.replace(exp.Table(this=exp.to_identifier(view, quoted=True), alias=alias))


def bind(ctx: Context, tree: exp.Expression, binding: Binding) -> exp.Expression:
    """Replace every table reference in ``tree`` by a view of the version it names,
    and the clock functions by the Rewind clock (SPEC R15)."""
    tree = with_clock(ctx, tree)
    for table, parts in table_references(tree):
        view = view_name(ctx)
        binding.views.append(view)
        alias = table.args.get("alias") or exp.TableAlias(this=table.this.copy())
        if is_system_view(parts):
            system_view(ctx, parts).createOrReplaceTempView(view)
            table.replace(exp.Table(this=exp.to_identifier(view, quoted=True), alias=alias))
            continue
        obj = table_read(ctx, table, parts)
        when = table.args.get("when")
        version = resolve_version(ctx, obj, when)
        if when is not None:  # SPEC R19: hold the version until the statement ends
            binding.pins.append(pins.hold(pin_root(ctx), obj.id, version, ctx.query_id, ctx.now))
        table_frame(ctx, obj, version).createOrReplaceTempView(view)
        ctx.catalog.record_access(
            ctx.query_id,
            obj.id,
            "READ",
            version=version,
            columns=[c.name for c in table_columns(obj)],
        )
        table.replace(exp.Table(this=exp.to_identifier(view, quoted=True), alias=alias))
    _bind_flow(ctx, tree, binding)  # after: its views are no catalog tables
    return tree


def pin_root(ctx: Context) -> Path:
    return ctx.store.warehouse.parent / "pins"


def _check_files_held(ctx: Context, obj: CatalogObject, version: int) -> None:
    """A version whose files left time travel is unavailable, never a missing file (R17);
    the current version's files never leave, so one missing there is broken storage;
    a version whose log another engine cleaned up is unavailable too (SPEC R43)."""
    try:
        snap = snapshot(ctx, obj, version)
    except HistoryGone:
        raise timetravel.unavailable(
            str(names.qualified(ctx, obj)),
            f"the Delta log of version {version} was cleaned up by another engine",
            ctx.now,
        ) from None
    missing = [f.path for f in snap.files if not (snap.root / f.path).exists()]
    if missing and version == current_version(ctx, obj):
        raise StorageError(
            f"Data file {missing[0]} of table {names.qualified(ctx, obj)} is missing."
        )
    if missing:
        raise timetravel.unavailable(
            str(names.qualified(ctx, obj)),
            f"data of version {version} left time travel",
            ctx.now,
        )


def release(ctx: Context, binding: Binding) -> None:
    pins.release(binding.pins)
    if not binding.views:
        return
    catalog = ctx.spark().catalog
    for view in binding.views:
        catalog.dropTempView(view)


def _headed(tree: exp.Expression, dialect: str) -> exp.Expression:
    """A query whose unnamed result columns carry the product's header: Snowflake's is the
    expression's text (``COUNT(*)``, not Spark's ``count(1)``), BigQuery's ``f0_``, ``f1_``."""
    first = tree
    while isinstance(first, exp.SetOperation):
        first = first.this
    if not isinstance(first, exp.Select):
        return tree
    unnamed = 0
    for projection in list(first.expressions):
        if isinstance(projection, exp.Alias | exp.Column | exp.Star | exp.Dot):
            continue
        text = projection.sql("snowflake").upper()
        name = f"f{unnamed}_" if dialect == "bigquery" else text
        unnamed += 1
        projection.replace(exp.alias_(projection.copy(), exp.to_identifier(name, quoted=True)))
    return tree


def query_frame(ctx: Context, tree: exp.Expression, binding: Binding) -> DataFrame:
    """A DataFrame for a query tree (table references bound to their versions)."""
    bound = bind(ctx, tree.copy(), binding)
    return ctx.spark().sql(to_spark(bound))


def select(ctx: Context, tree: exp.Expression) -> Result:
    binding = Binding()
    try:
        headed = _headed(tree.copy(), ctx.state.dialect)
        columns, rows = collect(query_frame(ctx, headed, binding))
    finally:
        release(ctx, binding)
    return ctx.result(columns, rows)
