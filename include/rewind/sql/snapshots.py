"""BigQuery's table snapshots and table expiration (SPEC R27; the seeds' BigQuery page:
"to preserve table data ... longer than the time travel window, use table snapshots").

A table snapshot (``CREATE SNAPSHOT TABLE s CLONE t [FOR SYSTEM_TIME AS OF ts]``) is a
clone of ``t`` at that instant (SPEC R24: zero-copy, its files shared) that stays as it
was: no statement changes its rows or columns, nor moves it; its options (description,
expiration, retention) may change, and it may be dropped, granted on, read at any point
and cloned — ``CREATE TABLE t2 CLONE s`` is BigQuery's restore of a snapshot.

A table's ``expiration_timestamp`` is the instant it is dropped (:meth:`Catalog.expire`,
before each statement and by the lifecycle's first step): from then on it spends its
time travel (and what follows it) as any table dropped then, and a point before it
reads and clones it (BigQuery's "restore a table that expired"). A dataset's
``default_table_expiration_days`` gives each table created in it afterwards an expiration
that many days after its creation, unless the table names its own.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlglot import exp

from rewind.catalog.models import CatalogObject
from rewind.constants import TABLE
from rewind.errors import InvalidValue, ReadOnlyTable
from rewind.sql import names
from rewind.sql.points import constant_timestamp, point_instant, point_of
from rewind.sql.values import ObjectProperties
from rewind.statement import ALTER, DATA_CHANGES, MOVE, SWAP, Analysis, Context


def expires_on(ctx: Context, kind: str, props: ObjectProperties, parent_id: int) -> datetime | None:
    """When a new object expires: its ``expiration_timestamp``, else a table's dataset's
    ``default_table_expiration_days`` from now, as BigQuery's (None: never)."""
    if props.has_expiration:
        return expiration(ctx, props)
    if kind != TABLE:
        return None
    schema = ctx.catalog.get(parent_id)
    days = schema.table_expiration_days if schema is not None else None
    return None if days is None else ctx.now + timedelta(days=days)


def expiration(ctx: Context, props: ObjectProperties) -> datetime | None:
    """The instant ``OPTIONS (expiration_timestamp = ...)`` names (None: NULL, no
    expiration). It must be after now: a table set to expire in the past would be dropped
    as of then, its time travel already spent (DROP TABLE drops a table now)."""
    node = props.expiration
    if isinstance(node, exp.Null):
        return None
    instant = constant_timestamp(ctx, node, "expiration_timestamp =")
    if instant <= ctx.now:
        raise InvalidValue(
            f"expiration_timestamp {instant.isoformat()} is not in the future "
            f"(now: {ctx.now.isoformat()}); DROP TABLE drops a table now."
        )
    return instant


def mark(ctx: Context, obj: CatalogObject, source: CatalogObject, tree: exp.Create) -> None:
    """Make the clone ``obj`` a snapshot of ``source`` at the statement's point."""
    when = tree.args["clone"].this.args.get("when")
    obj.snapshot_of = source.id
    obj.snapshot_time = point_instant(ctx, point_of(ctx, when) if when is not None else None)


def refuse_write(ctx: Context, obj: CatalogObject, what: str) -> None:
    """READ_ONLY_TABLE where ``obj`` is a snapshot: ``what`` would change it."""
    if obj.snapshot_of is not None:
        raise ReadOnlyTable(
            f"{what} cannot change table snapshot {names.qualified(ctx, obj)}: a snapshot "
            "is read-only; CREATE TABLE ... CLONE it for a table to change."
        )


def refuse_changes(ctx: Context, tree: object, analysis: Analysis) -> None:
    """Before a statement runs: refused where it would write a snapshot's rows, alter
    more than its options (``SET`` / ``UNSET``), rename, move or swap it."""
    options_only = isinstance(tree, exp.Alter) and all(
        isinstance(action, exp.AlterSet)
        or (isinstance(action, exp.Set) and action.args.get("unset"))
        for action in tree.args.get("actions") or []
    )
    for change in analysis.changes:
        if change.object_id is None or change.operation not in (*DATA_CHANGES, ALTER, MOVE, SWAP):
            continue
        if change.operation == ALTER and options_only:
            continue
        obj = ctx.catalog.get(change.object_id)
        if obj is not None:
            refuse_write(ctx, obj, _verb(tree))


def _verb(tree: object) -> str:
    if isinstance(tree, exp.TruncateTable):
        return "TRUNCATE"
    return type(tree).__name__.upper() if isinstance(tree, exp.Expression) else "ALTER"
