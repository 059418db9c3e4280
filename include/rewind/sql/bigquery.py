"""The BigQuery dialect (SPEC R27), translated into the trees the Snowflake path runs.

* ``FROM t FOR SYSTEM_TIME AS OF ts``  -> ``FROM t AT(TIMESTAMP => ts)``, and so the
  snapshot decorator ``FROM t@<epoch millis>``
* ``CREATE TABLE x CLONE t FOR SYSTEM_TIME AS OF ts`` and the snapshot decorator
  ``CLONE t@<epoch millis>`` (negative: milliseconds before now) -> a clone at that point
* ``ALTER SCHEMA ds SET OPTIONS (max_time_travel_hours = N)`` and ``CREATE SCHEMA ds
  OPTIONS (...)`` -> the schema's retention, N / 24 days, N in 48..168 and a multiple of
  24; a dataset created without it gets BigQuery's default window, 168 hours (7 days).
  ``description`` is the schema's comment.
* a table's ``OPTIONS (description = '...', expiration_timestamp = ts)``, on CREATE TABLE
  (a clone's after its point) and ``ALTER TABLE ... SET OPTIONS``: its comment, the
  instant it is dropped
* ``CREATE SNAPSHOT TABLE s CLONE t [point] [OPTIONS (...)]`` -> a clone of ``t`` that
  stays read-only (:mod:`rewind.sql.snapshots`); ``DROP SNAPSHOT TABLE s`` drops one
* ``DELETE`` / ``UPDATE`` without WHERE -> BigQuery's syntax error (``WHERE true`` says
  every row)
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from rewind.clock import format_timestamp
from rewind.constants import EXPIRATION_OPTION, RETENTION_PARAM, TABLE_EXPIRATION_OPTION
from rewind.errors import (
    InvalidRetention,
    InvalidValue,
    SqlSyntaxError,
    TimeTravelUnavailable,
    UnsupportedError,
)
from rewind.sql.parse import EMPTY_ONLY, SNAPSHOT, AlterContainer, syntax_detail
from rewind.sql.values import literal

_CLONE_POINT = re.compile(
    r"^(?P<head>.*?\bCLONE\s+(?:`[^`]+`|[\w.\-]+)+?)"
    r"(?:@(?P<millis>-?\d+)|\s+FOR\s+SYSTEM_TIME\s+AS\s+OF\s+(?P<expr>.+?))?"
    r"(?:\s+OPTIONS\s*\((?P<options>.*)\))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
# BigQuery's table snapshots: the statements, less the word SNAPSHOT, are a clone's and a
# table's DROP (SNAPSHOT marks them).
_SNAPSHOT = re.compile(
    r"^(?P<verb>\s*(?:CREATE(?:\s+OR\s+REPLACE)?|DROP))\s+SNAPSHOT(?P<rest>\s+TABLE\b.*)$",
    re.IGNORECASE | re.DOTALL,
)
_UNDROP_SCHEMA = re.compile(r"^\s*UNDROP\s+SCHEMA\s+(?P<name>\S+)\s*$", re.IGNORECASE)
_ALTER_OPTIONS = re.compile(
    r"^ALTER\s+SCHEMA\s+(?P<if>IF\s+EXISTS\s+)?(?P<name>.+?)\s+SET\s+OPTIONS\s*\((?P<opts>.*)\)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_COLUMN_OPTIONS = re.compile(
    r"^\s*ALTER\s+TABLE\s+(?P<table>.+?)\s+ALTER\s+COLUMN\s+(?P<column>\S+)\s+SET\s+OPTIONS\s*"
    r"\((?P<opts>.*)\)\s*$",
    re.IGNORECASE | re.DOTALL,
)
MIN_HOURS, MAX_HOURS = 48, 168
DEFAULT_HOURS = MAX_HOURS  # BigQuery's default time travel window of a dataset


def _parse_one(text: str) -> exp.Expression:
    """sqlglot's BigQuery parser; a ParseError becomes SYNTAX_ERROR (SPEC R39)."""
    try:
        tree = sqlglot.parse_one(text, read="bigquery")
    except RecursionError:  # sqlglot recurses once per nesting level
        raise SqlSyntaxError("Syntax error: the statement is nested too deeply.") from None
    except SqlglotError as exc:
        raise SqlSyntaxError(f"Syntax error: {syntax_detail(exc)}") from None
    assert isinstance(tree, exp.Expression)
    if isinstance(tree, exp.Command):  # a statement sqlglot only knows by its first word
        head = " ".join(text.split()[:3]).upper()
        raise UnsupportedError(f"{head} ... is not supported in BigQuery's dialect.")
    return tree


def _at(expression: exp.Expression, offset: bool = False) -> exp.HistoricalData:
    return exp.HistoricalData(
        this="AT", kind="OFFSET" if offset else "TIMESTAMP", expression=expression
    )


def _decorator_point(millis: str) -> exp.HistoricalData:
    value = int(millis)
    if value < 0:  # BigQuery: a negative decorator is relative to now
        return _at(exp.Literal.number(value / 1000), offset=True)
    try:
        instant = datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):  # past year 9999 (SPEC R39)
        raise InvalidValue(f"Snapshot decorator @{millis} is out of range.") from None
    return _at(exp.Literal.string(format_timestamp(instant)))


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _plain_names(node: exp.Expression) -> exp.Expression:
    """Backticks in BigQuery only delimit paths; plain names fold like unquoted ones."""
    if isinstance(node, exp.Identifier) and node.quoted and _PLAIN.fullmatch(node.this):
        node.set("quoted", False)
    return node


def _system_time(node: exp.Expression) -> exp.Expression:
    """``FROM t FOR SYSTEM_TIME AS OF ts`` and ``FROM t@<epoch millis>`` (the snapshot
    decorator, which sqlglot reads as an alias ``@<millis>``): ``t`` at that instant."""
    if not isinstance(node, exp.Table):
        return node
    version, alias = node.args.get("version"), node.args.get("alias")
    if isinstance(version, exp.Version) and str(version.this).upper() == "TIMESTAMP":
        node.set("version", None)
        node.set("when", _at(version.expression))
    elif (
        isinstance(alias, exp.TableAlias)
        and isinstance(alias.this, exp.Parameter)
        and isinstance(alias.this.this, exp.Literal)
        and alias.this.this.is_int
    ):
        node.set("alias", None)
        node.set("when", _decorator_point(alias.this.this.name))
    return node


def parse_bigquery(statement: str) -> exp.Expression | AlterContainer:
    """Parse one BigQuery statement into the Snowflake-shaped tree Rewind executes."""
    snapshot = _SNAPSHOT.match(statement)
    if snapshot:
        tree = _parse_statement(snapshot["verb"] + snapshot["rest"])
        if not isinstance(tree, exp.Create | exp.Drop) or (
            isinstance(tree, exp.Create) and tree.args.get("clone") is None
        ):
            raise SqlSyntaxError("Syntax error: CREATE SNAPSHOT TABLE needs CLONE source.")
        tree.meta[SNAPSHOT] = True
        return tree
    return _parse_statement(statement)


def _parse_statement(statement: str) -> exp.Expression | AlterContainer:
    alter = _ALTER_OPTIONS.match(statement)
    if alter:
        return _alter_options(alter)
    column = _COLUMN_OPTIONS.match(statement)
    if column:
        return _column_options(column)
    undrop = _UNDROP_SCHEMA.match(statement)
    if undrop:  # BigQuery's UNDROP SCHEMA: a deleted dataset back, within its window
        source = _bigquery_tree(_parse_one(f"SELECT * FROM {undrop['name']}"))
        return exp.Undrop(kind="SCHEMA", this=source.args["from_"].this)
    clone = _CLONE_POINT.match(statement)
    if clone:
        tree = _parse_one(clone["head"])
        if not isinstance(tree, exp.Create) or tree.args.get("clone") is None:
            raise SqlSyntaxError("Syntax error: CLONE needs CREATE TABLE ... CLONE source.")
        if clone["millis"] is not None:
            tree.args["clone"].this.set("when", _decorator_point(clone["millis"]))
        elif clone["expr"] is not None:
            select = _parse_one(f"SELECT {clone['expr']}")
            tree.args["clone"].this.set("when", _at(select.expressions[0]))
        if clone["options"] is not None:  # after the point, where sqlglot reads none
            options = _parse_one(f"CREATE TABLE t (c INT64) OPTIONS ({clone['options']})")
            tree.set("properties", options.args.get("properties"))
        return _bigquery_tree(tree)
    return _bigquery_tree(_parse_one(statement))


def _column_options(match: re.Match[str]) -> exp.Expression:
    """``ALTER TABLE t ALTER COLUMN c SET OPTIONS (description = '...')``: the column's
    comment, as Snowflake's ``ALTER TABLE t ALTER COLUMN c COMMENT '...'`` (sqlglot read
    no such statement); another option is refused by name."""
    tree = _bigquery_tree(_parse_one(f"ALTER TABLE {match['table']} DROP COLUMN {match['column']}"))
    options = _parse_one(f"CREATE TABLE t (c INT64) OPTIONS ({match['opts']})")
    comment: exp.Expression | None = None
    for option in options.find_all(exp.Property):
        if option.name.lower() != "description":
            raise UnsupportedError(f"Column option {option.name} is not supported.")
        comment = option.args["value"]
    if comment is None:
        raise UnsupportedError("ALTER COLUMN ... SET OPTIONS: only description is supported.")
    (drop,) = tree.args["actions"]
    column = drop.args["tables"][0].this
    text = literal(comment)
    tree.set(
        "actions",
        [exp.AlterColumn(this=column.copy(), comment=exp.Literal.string(text or ""))],
    )
    return tree


def _numeric(node: exp.Expression) -> exp.Expression:
    """BigQuery's NUMERIC (DECIMAL) without parameters is NUMERIC(38, 9), not Snowflake's
    NUMBER(38, 0) nor Spark's DECIMAL(10, 0): read either way, 1.5 would be stored as 2."""
    if isinstance(node, exp.DataType):
        if node.this == exp.DataType.Type.DECIMAL and not node.expressions:
            return exp.DataType.build("DECIMAL(38, 9)")
        if node.this == exp.DataType.Type.BIGDECIMAL:
            raise UnsupportedError(
                "BIGNUMERIC is not supported: a Delta decimal holds at most 38 digits "
                "(NUMERIC: 38, 9 of them after the point)."
            )
    return node


def _civil_time(node: exp.Expression) -> exp.Expression:
    """BigQuery's DATETIME, a civil (wall-clock) time, which sqlglot's reader calls a
    TIMESTAMP without zone (and BigQuery's TIMESTAMP, an instant, one with): Snowflake's
    TIMESTAMP_NTZ, not an instant in UTC."""
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.TIMESTAMP:
        return exp.DataType.build("TIMESTAMP_NTZ", dialect="snowflake")
    return node


def _table_options(node: exp.Expression) -> exp.Expression:
    """A table's ``OPTIONS (...)`` (CREATE, ALTER ... SET OPTIONS): ``description`` is its
    comment, as a dataset's is (:func:`_dataset_options`); ``expiration_timestamp`` the
    instant it is dropped (NULL: never)."""
    if type(node) is exp.Property and node.name.lower() == "description":
        return exp.SchemaCommentProperty(this=node.args["value"])
    if type(node) is exp.Property and node.name.lower() == "expiration_timestamp":
        statement = node.find_ancestor(exp.Create, exp.Alter)
        if statement is not None and str(statement.args.get("kind", "")).upper() == "TABLE":
            return exp.Property(this=exp.var(EXPIRATION_OPTION), value=node.args["value"])
    return node


def _bigquery_tree(tree: exp.Expression) -> exp.Expression:
    tree = tree.transform(_system_time).transform(_plain_names).transform(_numeric)
    tree = tree.transform(_civil_time)
    tree = tree.transform(_table_options)
    tables = tree.args.get("tables") if isinstance(tree, exp.Delete) else None
    if tables and len(tables) == 1 and not tree.this:  # BigQuery's DELETE t WHERE ...
        tree.set("this", tables[0])
        tree.set("tables", None)
    if isinstance(tree, exp.Delete | exp.Update) and tree.args.get("where") is None:
        # BigQuery's safety: every row goes only with WHERE true, never by a forgotten
        # clause (Snowflake's dialect runs it, as Snowflake does).
        verb = "DELETE" if isinstance(tree, exp.Delete) else "UPDATE"
        raise SqlSyntaxError(f"Syntax error: {verb} must have a WHERE clause.")
    if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "SCHEMA":
        _dataset_options(tree)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "SCHEMA":
        # BigQuery's DROP SCHEMA is RESTRICT unless it says CASCADE: a dataset that still
        # holds tables is not deleted (Snowflake's default is CASCADE).
        tree.meta[EMPTY_ONLY] = not tree.args.get("cascade")
    return tree


def _dataset_options(tree: exp.Create) -> None:
    """CREATE SCHEMA ... OPTIONS (...): ``max_time_travel_hours`` (default 168) becomes the
    schema's retention, ``description`` its comment, ``default_table_expiration_days`` the
    lifetime of the tables created in it; another option is refused."""
    properties = tree.args.get("properties")
    hours: exp.Expression = exp.Literal.number(DEFAULT_HOURS)
    kept: list[exp.Expression] = []
    for option in properties.expressions if properties else []:
        key = option.name.lower() if type(option) is exp.Property else ""
        if key == "max_time_travel_hours":
            hours = option.args["value"]
        elif isinstance(option, exp.SchemaCommentProperty):  # description (_table_options)
            kept.append(option)
        elif key == "default_table_expiration_days":
            kept.append(_table_lifetime(option.args["value"]))
        else:
            raise SqlSyntaxError(f"Unsupported dataset option {option.sql('bigquery')}.")
    retention = exp.Property(this=exp.var(RETENTION_PARAM), value=_retention_days(hours))
    tree.set("properties", exp.Properties(expressions=[retention, *kept]))


def _table_lifetime(option: exp.Expression) -> exp.Property:
    """``default_table_expiration_days`` (NULL: none), at least an hour as BigQuery's."""
    days = literal(option)
    if days is not None and (
        isinstance(days, bool) or not isinstance(days, int | Decimal) or days * 24 < 1
    ):
        raise InvalidValue(
            f"Invalid value for default_table_expiration_days: {option.sql('bigquery')}. "
            "It must be a number of days, at least 0.041667 (an hour)."
        )
    value = exp.null() if days is None else exp.Literal.number(days)
    return exp.Property(this=exp.var(TABLE_EXPIRATION_OPTION), value=value)


def _retention_days(option: exp.Expression) -> exp.Expression:
    """``max_time_travel_hours`` as days of retention, validated as BigQuery does."""
    hours = literal(option)
    if (
        isinstance(hours, bool)
        or not isinstance(hours, int)
        or not MIN_HOURS <= hours <= MAX_HOURS
        or hours % 24
    ):
        raise InvalidRetention(
            f"Invalid value for max_time_travel_hours: {hours}. It must be a multiple of "
            f"24 between {MIN_HOURS} and {MAX_HOURS}."
        )
    return exp.Literal.number(hours // 24)


def _alter_options(match: re.Match[str]) -> AlterContainer:
    name = _bigquery_tree(_parse_one(f"SELECT * FROM {match['name']}")).find(exp.Table)
    assert name is not None
    properties: dict[str, exp.Expression] = {}
    for option in _parse_one(f"SELECT {match['opts']}").expressions:
        if not isinstance(option, exp.EQ) or not isinstance(option.this, exp.Column):
            raise SqlSyntaxError(f"Syntax error: unexpected option {option.sql('bigquery')}.")
        key = option.this.name.lower()
        if key == "max_time_travel_hours":
            properties[RETENTION_PARAM] = _retention_days(option.expression)
        elif key == "description":
            properties["COMMENT"] = option.expression
        elif key == "default_table_expiration_days":
            properties[TABLE_EXPIRATION_OPTION] = _table_lifetime(option.expression).args["value"]
        else:
            raise SqlSyntaxError(f"Unsupported dataset option {key}.")
    return AlterContainer(
        "SCHEMA",
        exp.Table(this=name.this, db=name.args.get("db")),
        "SET",
        properties,
        if_exists=bool(match["if"]),
    )


def _millis(instant: datetime) -> int:
    return int(instant.timestamp() * 1000)


def reword(error: TimeTravelUnavailable) -> TimeTravelUnavailable:
    """BigQuery's wording for a point outside the window or before creation (SPEC R27)."""
    table = error.table or "the table"
    if error.instant is None or error.earliest is None:
        return TimeTravelUnavailable(f"Invalid snapshot time for table {table}.")
    asked = _millis(error.instant)
    message = (
        f"Invalid snapshot time {asked} for table {table}@{asked}. "
        f"Cannot read before {_millis(error.earliest)}"
    )
    if error.created:  # 001: "Table ID was created at time ... Creation time: timestamp"
        created = _millis(error.earliest)
        when = "after it" if created > asked else "at that very time"  # R17: not readable
        message = (
            f"Invalid snapshot time {asked} for table {table}@{asked}: table {table} was "
            f"created at time {created}, {when}. Creation time: {created}"
        )
    if error.instant > error.earliest:
        message = f"Invalid snapshot time {asked} for table {table}@{asked}: it is in the future"
    return TimeTravelUnavailable(
        message,
        table=error.table,
        instant=error.instant,
        earliest=error.earliest,
        created=error.created,
    )
