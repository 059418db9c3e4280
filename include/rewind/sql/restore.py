"""Restore a table in place as of a point (``rewind restore``, the Airflow restore DAG).

Why not "clone the point, then swap": the table would become a new incarnation
created now, and ``AT`` queries of its earlier history would fail as "before the
object creation time". Instead the restore is one new version of the same table
whose files are exactly those of the point (files are immutable and still in time
travel, so nothing is copied), like Delta's RESTORE: the name shows the old data and
the replaced state stays in the table's own history (SPEC R16, R28).
"""

from __future__ import annotations

import re

from sqlglot import exp

from rewind import security
from rewind.errors import InvalidValue, UnsupportedError
from rewind.result import Result
from rewind.sql import names
from rewind.sql.query import own_columns, resolve_version
from rewind.sql.tables import commit_files, snapshot, writable_snapshot
from rewind.statement import Context

_OFFSET = re.compile(r"^-?\d+(\.\d+)?$")
_QUERY_ID = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


def point(at: str | None, before: str | None) -> exp.HistoricalData:
    """``--at`` / ``--before`` VALUE: a timestamp, an offset in seconds or a query id."""
    if (at is None) == (before is None):
        raise InvalidValue("Give exactly one of --at and --before.")
    value = (at if at is not None else before or "").strip()
    if _OFFSET.match(value):
        kind, literal = "OFFSET", exp.Literal.number(value)
    elif _QUERY_ID.match(value):
        kind, literal = "STATEMENT", exp.Literal.string(value)
    else:
        kind, literal = "TIMESTAMP", exp.Literal.string(value)
    return exp.HistoricalData(
        this="AT" if at is not None else "BEFORE", kind=kind, expression=literal
    )


def restore_text(table: str, *, at: str | None = None, before: str | None = None) -> str:
    """The statement text logged for a restore."""
    when = point(at, before)
    return f"RESTORE TABLE {table} {when.this}({when.args['kind']} => {when.expression.sql()})"


def restore_table(ctx: Context, table: str, *, at: str | None, before: str | None) -> Result:
    """Make the current version of ``table`` equal to its state at the point."""
    when = point(at, before)
    obj = names.table(ctx, names.parts(exp.to_table(table, dialect="snowflake")))
    # SPEC R37: rewinding a table in place is its owner's call, as its clone + swap is.
    security.require(ctx, security.OWNERSHIP, obj)
    version = resolve_version(ctx, obj, when)
    current = writable_snapshot(ctx, obj)  # re-adds files it held, with their values
    then = snapshot(ctx, obj, version)
    name = names.qualified(ctx, obj)
    if own_columns(obj, then, current) is not None:
        # Its files under today's columns would be a table nobody reads (a VARCHAR read as
        # a NUMBER): Delta's own RESTORE puts the old schema back, which Rewind does not.
        raise UnsupportedError(
            f"Table {name} was replaced by another engine after version {version} (its "
            "columns changed type or are gone), so it cannot be restored in place to it: "
            f"clone that point instead (CREATE TABLE ... CLONE {name} AT|BEFORE(...)), "
            "which keeps the columns it had."
        )
    now_paths = {f.path for f in current.files}
    then_paths = {f.path for f in then.files}
    adds = [f for f in then.files if f.path not in now_paths]
    removes = [f for f in current.files if f.path not in then_paths]
    ctx.catalog.record_access(ctx.query_id, obj.id, "READ", version=version)
    new = commit_files(ctx, obj, current, adds, removes, "RESTORE", readds=True)
    if new is None:
        return ctx.status(f"Table {name} already holds the state of version {version}.")
    return ctx.status(
        f"Table {name} restored to the state of version {version} ({then.rows} rows) "
        f"as version {new}."
    )
