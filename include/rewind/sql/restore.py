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
from rewind.sql import names, snapshots
from rewind.sql.query import own_columns, resolve_version
from rewind.sql.tables import commit_files, snapshot, writable_snapshot
from rewind.statement import Context
from rewind.storage.snapshot import Snapshot

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
    snapshots.refuse_write(ctx, obj, "RESTORE")  # a snapshot keeps its instant
    version = resolve_version(ctx, obj, when)
    current = writable_snapshot(ctx, obj)  # re-adds files it held, with their values
    then = snapshot(ctx, obj, version)
    name = names.qualified(ctx, obj)
    own = own_columns(obj, then, current)
    if own is not None:  # another engine replaced the table since: its schema comes back too
        _check_replaceable(name, version, then, current)
    # The files that differ: a file is its path and its deletion vector
    now_files = {(f.path, f.vector) for f in current.files}
    then_files = {(f.path, f.vector) for f in then.files}
    adds = [f for f in then.files if (f.path, f.vector) not in now_files]
    removes = [f for f in current.files if (f.path, f.vector) not in then_files]
    ctx.catalog.record_access(ctx.query_id, obj.id, "READ", version=version)
    new = commit_files(
        ctx,
        obj,
        current,
        adds,
        removes,
        "RESTORE",
        readds=True,
        replacing=None if own is None else then,
    )
    if own is not None:
        obj.columns = [c.as_json() for c in own]
    if new is None:
        return ctx.status(f"Table {name} already holds the state of version {version}.")
    columns = "" if own is None else ", and its columns then, which another engine replaced"
    return ctx.status(
        f"Table {name} restored to the state of version {version} ({then.rows} rows"
        f"{columns}) as version {new}."
    )


def _check_replaceable(name: object, version: int, then: Snapshot, now: Snapshot) -> None:
    """A version of a table another engine replaced since comes back whole, its schema and
    partitioning too, as Delta's own RESTORE brings it back (SPEC R16): its files under
    today's columns would be a table nobody reads (a VARCHAR read as a NUMBER). Refused
    where the table's properties and protocol, which stay, would not fit it: column
    mapping turned on or off since (its files' names), liquid clustering changed (the
    clustering columns name today's), or a feature the table no longer lists."""
    clustering = "delta.clustering"
    reason = (
        "column mapping was turned on or off since"
        if then.column_mapped != now.column_mapped
        else "its clustering changed"
        if dict(then.domains).get(clustering) != dict(now.domains).get(clustering)
        else "a Delta feature it used is gone"
        if not then.features <= now.features
        else None
    )
    if reason is not None:
        raise UnsupportedError(
            f"Table {name} was replaced by another engine after version {version} (its "
            f"columns changed type or are gone), and Rewind cannot restore it in place to "
            f"that version ({reason}): copy that point instead (CREATE TABLE ... AS "
            f"SELECT * FROM {name} AT|BEFORE(...), or CLONE), which keeps the columns it had."
        )
