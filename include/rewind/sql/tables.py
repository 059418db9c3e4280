"""Table storage inside a statement: versions recorded in the catalog, undo on failure."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from deltalake.schema import Field, PrimitiveType
from deltalake.schema import Schema as DeltaSchema
from sqlalchemy.exc import SQLAlchemyError
from sqlglot import exp

from rewind import retention
from rewind.catalog.history import held_by_clones
from rewind.catalog.models import CatalogObject
from rewind.errors import ClockBehind, RewindError, StorageError
from rewind.faults import fault_point
from rewind.sql import names
from rewind.statement import Context
from rewind.storage import timeline
from rewind.storage.columns import Column, add_column, table_columns
from rewind.storage.delta import FieldChange
from rewind.storage.location import Root
from rewind.storage.snapshot import DataFile, Snapshot
from rewind.types import DECLARED_TYPE, is_nested

if TYPE_CHECKING:
    import pyarrow as pa


def arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    """The physical Arrow schema of ``columns`` (what their data files are written as)."""
    import pyarrow as pa

    return pa.schema([pa.field(c.physical, c.column_type.arrow(), True) for c in columns])


def delta_field(column: Column, nullable: bool = True, comment: str | None = None) -> Field:
    """``column``'s physical Delta field: the one delta-rs makes of its Arrow field
    (:func:`arrow_schema`), built without Arrow, so DDL imports neither pyarrow nor numpy
    (but for a nested column's, which delta-rs makes of Arrow's);
    a VARCHAR(n)'s declared length (:func:`declared`) and a comment in its metadata, where
    delta-spark keeps them."""
    if is_nested(column.column_type.spark):  # ARRAY / OBJECT / MAP: delta-rs's of Arrow's
        import pyarrow as pa

        arrow = pa.field(column.physical, column.column_type.arrow(), nullable)
        return declared(Field.from_arrow(arrow), column, comment)
    kind = PrimitiveType(column.column_type.delta())
    return declared(Field(column.physical, kind, nullable=nullable), column, comment)


def declared(field: Field, column: Column | None, comment: str | None = None) -> Field:
    """``field`` with ``column``'s declared length in its metadata, as delta-spark records a
    VARCHAR(n) (:data:`DECLARED_TYPE`), so that every writer, Rewind and delta-spark,
    checks it (SPEC R40); and with ``comment``, the column's."""
    kind = column.column_type.declared() if column is not None else None
    metadata = {
        **field.metadata,
        **({DECLARED_TYPE: kind} if kind is not None else {}),
        **({"comment": comment} if comment is not None else {}),
    }
    return Field(field.name, field.type, nullable=field.nullable, metadata=metadata)


def delta_schema(
    columns: Sequence[Column],
    not_null: Collection[str] = (),
    comments: Mapping[str, str] | None = None,
) -> DeltaSchema:
    """The Delta schema of ``columns``, field by field as :func:`delta_field`; the physical
    columns in ``not_null`` are not nullable, those in ``comments`` have that comment."""
    said = comments or {}
    fields = [delta_field(c, c.physical not in not_null, said.get(c.physical)) for c in columns]
    return DeltaSchema(fields)


def record_version(ctx: Context, obj: CatalogObject, version: int, operation: str) -> None:
    ctx.catalog.add_version(obj.id, version, ctx.now, ctx.query_id, operation)
    ctx.catalog.record_access(ctx.query_id, obj.id, "WRITE", operation=operation, version=version)


def create_table_storage(
    ctx: Context,
    obj: CatalogObject,
    columns: Sequence[Column],
    files: Sequence[DataFile] = (),
    schema: pa.Schema | DeltaSchema | None = None,
    partition_by: Sequence[str] = (),
    mapping: dict[str, str] | None = None,
    comments: Mapping[str, str] | None = None,
) -> None:
    """Version 0 of a new table incarnation under ``warehouse/<id>/`` (SPEC R4), in the
    directory the statement claimed (:func:`claim_storage`).

    ``schema`` is the physical schema, by default the one of ``columns``;
    ``partition_by`` its partition columns (a clone keeps its source's); ``mapping``:
    the column mapping properties of a clone of a column-mapped table; ``comments``: the
    columns' (a clone's, its source's), by physical name.
    """
    by_physical = {c.physical: c for c in columns}
    said = comments or {}
    physical = delta_schema(columns) if schema is None else schema
    if not isinstance(physical, DeltaSchema):  # a CTAS's or a clone's: lengths and comments
        fields = DeltaSchema.from_arrow(physical).fields
        physical = DeltaSchema(
            [declared(f, by_physical.get(f.name), said.get(f.name)) for f in fields]
        )
    ctx.store.create(obj.id, physical, ctx.query_id, ctx.now, files, partition_by, mapping)
    fault_point("created")  # crash tests: killed here, the next CREATE takes it back
    record_version(ctx, obj, 0, "CREATE")


def claim_storage(ctx: Context, obj: CatalogObject) -> Root:
    """A new table's directory, the statement's before anything is written into it
    (:meth:`TableStore.claim`), and taken back if the statement fails (SPEC R28); only
    what it wrote there (:meth:`TableStore.discard`). Returns the directory."""
    ctx.store.claim(obj.id, ctx.query_id)
    ctx.undo.append(lambda: ctx.store.discard(obj.id, ctx.query_id))
    return ctx.store.root(obj.id)


def current_version(ctx: Context, obj: CatalogObject) -> int:
    """The newest version of the table's Delta log, whoever committed it (SPEC R40)."""
    version = timeline.sync(ctx.catalog, ctx.store, obj)
    assert version >= 0, f"table {obj.id} has no versions"
    return version


def writable_snapshot(ctx: Context, obj: CatalogObject) -> Snapshot:
    """The current version of a table a statement is about to write (SPEC R40, R43):
    its files, new ones too, carry their partition values (``write_frame``) where it has
    partition columns."""
    base = snapshot(ctx, obj)
    base.check_writable(str(names.qualified(ctx, obj)), new_files=False)
    return base


def snapshot(ctx: Context, obj: CatalogObject, version: int | None = None) -> Snapshot:
    return ctx.store.snapshot(obj.id, current_version(ctx, obj) if version is None else version)


def check_clock(ctx: Context, obj: CatalogObject) -> None:
    """Commit times per table never go backwards (SPEC R14, R15), other writers' too.

    On the system clock, a statement that another writer's commit overtook while it ran
    commits at the clock's time, later than its start: R14's commit time is when it
    commits. A fixed clock is the caller's: there CLOCK_BEHIND is the answer."""
    timeline.sync(ctx.catalog, ctx.store, obj)
    last = ctx.catalog.last_commit_time(obj.id)
    if last is not None and ctx.now < last and ctx.clock.fixed is None:
        ctx.now = ctx.clock.now()
    if last is not None and ctx.now < last:
        raise ClockBehind(
            f"The clock ({ctx.now.isoformat()}) is earlier than the last commit of table "
            f"'{obj.name}' ({last.isoformat()}); refusing to write history out of order."
        )


def commit_files(
    ctx: Context,
    obj: CatalogObject,
    base: Snapshot,
    adds: Sequence[DataFile],
    removes: Sequence[DataFile],
    operation: str,
    *,
    readds: bool = False,
    replacing: Snapshot | None = None,
    changes: Sequence[DataFile] = (),
    stable_rows: bool = False,
) -> int | None:
    """Commit a new version that removes ``removes`` and adds ``adds`` (SPEC R13, R14):
    files the statement wrote, or with ``readds`` files earlier versions hold (a restore);
    ``changes``: its change data feed's files (a rewrite of a table with the feed on);
    ``stable_rows``: the rewrite kept its rows' stable row ids (row tracking).
    ``replacing``: a version of the table another engine replaced since, whose schema
    and partitioning the commit brings back with its files (a restore, as Delta's own
    RESTORE), the table's id, properties and protocol kept; on ``base`` only.

    Nothing changes (and no version is made) when both are empty.
    """
    if not adds and not removes and replacing is None:
        return None
    base.check_writable(
        str(names.qualified(ctx, obj)), any(not f.partition_values for f in adds), bool(removes)
    )
    check_clock(ctx, obj)
    version = ctx.store.commit(
        obj.id,
        base.version,
        adds=adds,
        removes=list(removes),
        schema=base.schema,
        query_id=ctx.query_id,
        now=ctx.now,
        readds=readds,
        metadata=(
            base.restored_to(replacing)
            if replacing is not None
            else None
            if readds
            else _high_water_marks(base, adds)
        ),
        exclusive=replacing is not None,
        by_rewind=base.by_rewind,
        changes=changes,
        stable_rows=stable_rows,
    )
    _recorded(ctx, obj, version, operation)
    return version


def _high_water_marks(base: Snapshot, adds: Sequence[DataFile]) -> dict[str, Any] | None:
    """``base``'s ``metaData`` with each identity column's high-water mark moved past the
    values the new files hold (their statistics, ``write_frame``'s: the new rows' values
    and any a statement gave), as delta-spark moves it in the commit of its write (SPEC
    R40); None where no mark moves."""
    if not base.identity:
        return None
    marks: dict[str, int] = {}
    stats = [json.loads(f.stats) for f in adds if f.stats]
    for name, rule in base.identity.items():
        values = [
            int(s[bound][key]) for s in stats for bound in ("minValues", "maxValues")
            if (key := base.physical_name(name)) in s.get(bound, {})
        ]  # fmt: skip
        far = rule.past(min(values), max(values)) if values else None
        if far is not None:
            marks[name] = far
    return base.with_high_water_marks(marks) if marks else None


def _recorded(ctx: Context, obj: CatalogObject, version: int, operation: str) -> None:
    """Record this statement's commit after the other writers' commits before it, and
    take back only that commit if the statement fails (SPEC R28, R40)."""
    ctx.undo.append(lambda: ctx.store.undo_commit(obj.id, version, ctx.query_id, ctx.now))
    fault_point("committed")  # crash tests: killed here, the next sync takes it back
    timeline.sync(ctx.catalog, ctx.store, obj, upto=version - 1)
    record_version(ctx, obj, version, operation)


def add_physical_column(
    ctx: Context, obj: CatalogObject, name: str, data_type: exp.DataType, comment: str | None
) -> None:
    """ALTER TABLE ADD COLUMN: a metadata-only Delta version with the new field."""
    check_clock(ctx, obj)
    base = writable_snapshot(ctx, obj)
    base.check_column_name(str(names.qualified(ctx, obj)), name)
    columns = add_column(table_columns(obj), name, data_type, base.column_names)
    version = ctx.store.add_columns(
        obj.id,
        base.version,
        [delta_field(columns[-1], comment=comment)],
        ctx.query_id,
        ctx.now,
        by_rewind=base.by_rewind,
    )
    _recorded(ctx, obj, version, "ADD COLUMN")
    obj.columns = [c.as_json() for c in columns]


def change_physical_column(
    ctx: Context, obj: CatalogObject, base: Snapshot, name: str, change: FieldChange
) -> None:
    """ALTER COLUMN: a metadata-only Delta version of ``base``'s table changing the field
    ``name`` (:meth:`TableStore.change_field`)."""
    version = ctx.store.change_field(obj.id, base.version, name, change, ctx.query_id, ctx.now)
    _recorded(ctx, obj, version, "ALTER COLUMN")


# -- SPEC R42: other engines' VACUUM and log clean-up cannot cut into time travel -------------
def keep_history(ctx: Context, obj: CatalogObject) -> None:
    """Raise ``obj``'s Delta retention properties to cover its effective retention (R42),
    and, while a clone references its objects where they are, to keep every removed file
    from a VACUUM (SPEC R24, R47)."""
    current = snapshot(ctx, obj)
    values = retention.guarded_properties(
        ctx.catalog.effective_retention(obj),
        current.configuration,
        clone_held=bool(held_by_clones(ctx.catalog, [obj.id])),
    )
    if not values:
        return
    check_clock(ctx, obj)
    version = ctx.store.set_properties(obj.id, current.version, values, ctx.query_id, ctx.now)
    _recorded(ctx, obj, version, "SET TBLPROPERTIES")


def naming_table(ctx: Context, error: RewindError) -> RewindError:
    """A STORAGE_ERROR about a path under ``warehouse/<id>/`` also names the table (R39).

    Called before the failed statement's catalog transaction is rolled back, so that a
    table the statement was creating is found as well.
    """
    table_id = ctx.store.table_id_in(error.message) if isinstance(error, StorageError) else None
    if table_id is None:
        return error
    try:
        with ctx.catalog.session.no_autoflush:
            table = ctx.catalog.get(table_id)
            name = str(names.qualified(ctx, table)) if table is not None else None
    except SQLAlchemyError:  # the catalog is what failed: keep the storage message
        return error
    if name is None or name in error.message:
        return error
    return StorageError(f"{error.message.rstrip('.')} (table {name}).")
