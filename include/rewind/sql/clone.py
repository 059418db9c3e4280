"""CREATE TABLE | SCHEMA | DATABASE x CLONE y [AT | BEFORE (...)] (SPEC R24, R30).

A clone is a new, independent, writable object holding the source's data as of the
point, in the warehouse. Data files are shared, not copied: the clone's Delta log adds
hard links of a local source's files under the same relative paths, or the absolute
URIs of an object store's files where they are (SPEC R47, Delta's shallow clone); the
catalog remembers which files each clone shares with whom, for the lifecycle (SPEC R30,
R33). A clone's writes add files of its own, in the warehouse; its source's data files are
never written. An external source whose objects the clone references gets, before the
clone's first version commits, the Delta retention that keeps them from its team's VACUUM
(SPEC R42's guard, rewind.sql.tables.keep_history).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind import security
from rewind.catalog.history import members_at, record_shared_files
from rewind.catalog.models import CatalogObject
from rewind.constants import SCHEMA, TABLE
from rewind.errors import TimeTravelUnavailable
from rewind.sql import names
from rewind.sql.parse import IGNORE_SHORT
from rewind.sql.points import point_instant, point_of
from rewind.sql.query import (
    check_changes_read,
    own_columns,
    resolve_version,
    table_frame,
    table_read,
)
from rewind.sql.tables import (
    claim_storage,
    create_table_storage,
    current_version,
    keep_history,
    snapshot,
)
from rewind.sql.values import ObjectProperties
from rewind.statement import Context
from rewind.storage import location, log
from rewind.storage.columns import Column, table_columns
from rewind.storage.log import arrow_schema
from rewind.storage.snapshot import DataFile, Snapshot

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake.schema import Schema as DeltaSchema


@dataclass
class CloneReport:
    """What a container clone took and what IGNORE TABLES ... skipped."""

    tables: int = 0
    skipped: list[str] = field(default_factory=list)


def clone_table_into(
    ctx: Context,
    source: CatalogObject,
    version: int,
    target: CatalogObject,
    *,
    direct: bool = True,
    rows: bool = True,
) -> None:
    """Give ``target`` (a new catalog row) the data of ``source`` at ``version``.

    The clone keeps the source's current columns (historical data reads under the
    current schema, SPEC R18) and their nullability; physical columns added since
    ``version`` stay NULL. ``direct`` False: the statement named the source's container,
    not the source (R36). ``rows`` False: the column definitions only, no file and no
    partitioning (``CREATE TABLE ... LIKE``).

    The data files are shared (SPEC R24, R47), with the deletion vectors another engine
    gave them, and a column-mapped table's too: its files name columns by physical names,
    which the clone's version 0 maps as the source's current version does
    (:meth:`TableStore._created_own`: the columns as they are now, renamed ones by their
    new names, dropped ones gone, added ones NULL in older files). Copied instead: every
    row where the clone's columns are not the mapped table's current ones (columns only
    Rewind's catalog added, or another partitioning then: a deep clone, by Spark, each
    column read by its identity, R43).
    """
    import pyarrow as pa  # the version's schema is Arrow (Snapshot.schema)

    snap = snapshot(ctx, source, version)
    current = current_version(ctx, source)
    now = snap if version == current else ctx.store.snapshot(source.id, current)
    own = own_columns(source, snap, now)  # a version of a table replaced since: its own
    columns = table_columns(source) if own is None else own
    target.columns = [c.as_json() for c in columns]
    # its declared layout too (Snowflake's clones and LIKE keep the clustering key)
    target.cluster_by = target.cluster_by or source.cluster_by
    target.partition_by = target.partition_by or source.partition_by
    mapped = snap.column_mapped or now.column_mapped
    schema = (  # copied rows: the columns as named now, or as named then
        (now if mapped else snap).schema
        if own is None
        else arrow_schema(snap.metadata or {}, source.name)
    )
    for column in columns:
        if column.physical not in schema.names:
            schema = schema.append(pa.field(column.physical, column.column_type.arrow(), True))
    claim_storage(ctx, target)
    files: list[DataFile] = []
    partitioned_by: list[str] = []
    mapping: dict[str, str] | None = None
    physical: pa.Schema | DeltaSchema = schema
    if rows and mapped and _maps_as_now(snap, now, own, schema):
        files = _shared_files(ctx, source, snap, target)
        from deltalake.schema import Schema as DeltaSchema

        text, mapping = log.mapping_schema(now.metadata or {})
        physical = DeltaSchema.from_json(text)
        partitioned_by = list((now.metadata or {}).get("partitionColumns") or [])
    elif rows and mapped:
        files = _copied_rows(ctx, source, version, target, columns, schema)
    elif rows:
        files = _shared_files(ctx, source, snap, target)
        partitioned_by = snap.partition_columns
    metadata = (now if own is None else snap).kept_metadata
    create_table_storage(
        ctx, target, columns, files, physical, partitioned_by, mapping, metadata=metadata
    )
    ctx.catalog.record_access(
        ctx.query_id,
        source.id,
        "READ",
        version=version,
        columns=[c.name for c in columns],
        direct=direct,
    )


def _maps_as_now(
    snap: Snapshot, now: Snapshot, own: list[Column] | None, schema: pa.Schema
) -> bool:
    """Whether a clone of column-mapped ``snap`` shares its files under the mapping of
    the table's current version ``now``: the clone's columns are its current columns
    (not a replaced table's own, ``own``; none only the catalog holds) and the version
    is partitioned by the same columns as now, renamed since or not (else the files'
    partition values would not match the mapping)."""

    def partitioning(version: Snapshot) -> list[str]:
        names = (version.metadata or {}).get("partitionColumns") or []
        return [version.physical_name(name) for name in names]

    return (
        own is None
        and now.column_mapped
        and schema.names == now.schema.names
        and partitioning(snap) == partitioning(now)
    )


def _copied_rows(
    ctx: Context,
    source: CatalogObject,
    version: int,
    target: CatalogObject,
    columns: list[Column],
    schema: pa.Schema,
) -> list[DataFile]:
    """The clone's data files: ``source``'s rows at ``version``, written anew."""
    from rewind.sql.frames import write_frame  # Spark: only for such a clone

    root = ctx.store.root(target.id)
    location.make_dir(root, exist_ok=False)
    frame = table_frame(ctx, source, version)
    return write_frame(ctx, root, frame, columns, schema)


def _shared_files(
    ctx: Context, source: CatalogObject, snap: Snapshot, target: CatalogObject
) -> list[DataFile]:
    """The clone's data files: ``snap``'s, shared (SPEC R24, R47) and recorded as such,
    their deletion vectors' files too (once each: one holds the vectors of many files)."""
    files = ctx.store.share_files(target.id, snap.files, snap.root)
    pairs = list(zip(files, snap.files, strict=True))
    shared = [(mine.path, their.path, mine.size) for mine, their in pairs]
    vectors = {mine.dv_path: their.dv_path for mine, their in pairs if their.dv_path}
    for mine_dv, their_dv in vectors.items():
        assert mine_dv is not None
        size = location.data_file_size(snap.root, their_dv)
        shared.append((mine_dv, their_dv, size))
    owners = record_shared_files(ctx.catalog, target.id, source.id, shared)
    for owner_id in sorted(owners):
        owner = ctx.catalog.get(owner_id)
        if owner is not None and owner.location is not None:
            # SPEC R24, R42, R47: the team's VACUUM keeps the objects the clone will
            # reference from before its first version commits (refused: no clone).
            keep_history(ctx, owner)
    return files


def _check_container(ctx: Context, container: CatalogObject, instant: datetime) -> None:
    """SPEC R24: a container clone fails at or before the container's creation."""
    if instant <= container.created_on or instant > ctx.now:
        raise TimeTravelUnavailable(
            f"Time travel data is not available for {container.kind.lower()} "
            f"{names.qualified(ctx, container)}. The requested time is either beyond the "
            "allowed time travel period or before the object creation time."
        )


def _tables_at(
    ctx: Context, schema: CatalogObject, instant: datetime, now_clone: bool
) -> dict[int, str]:
    if now_clone:
        return {t.id: t.name for t in ctx.catalog.children(schema.id, TABLE, include_dropped=False)}
    return members_at(ctx.catalog, schema.id, TABLE, instant)


def clone_schema_into(
    ctx: Context,
    source: CatalogObject,
    target: CatalogObject,
    when: exp.HistoricalData | None,
    ignore_short: bool,
    report: CloneReport,
) -> None:
    """Clone every table the schema held at the point, under the names it had then."""
    from rewind.sql.ddl import new_object

    instant = point_instant(ctx, point_of(ctx, when) if when is not None else None)
    plans: list[tuple[CatalogObject, str, int]] = []
    for table_id, name in sorted(_tables_at(ctx, source, instant, when is None).items()):
        table = ctx.catalog.get(table_id)
        assert table is not None
        security.require(ctx, security.SELECT, table)  # SPEC R37: a clone reads each table
        try:
            version = resolve_version(ctx, table, when)
        except TimeTravelUnavailable:
            if not ignore_short:
                raise
            report.skipped.append(f"{names.qualified(ctx, source)}.{name}")
            continue
        plans.append((table, name, version))
    for table, name, version in plans:
        props = ObjectProperties(transient=table.is_transient)
        clone = new_object(ctx, TABLE, target.id, name, props, source=table)
        security.copy_grants(ctx, table, clone)  # a container's children keep theirs
        clone_table_into(ctx, table, version, clone, direct=False)
        report.tables += 1


def schemas_at(
    ctx: Context, database: CatalogObject, when: exp.HistoricalData | None
) -> dict[int, str]:
    if when is None:
        return {
            s.id: s.name for s in ctx.catalog.children(database.id, SCHEMA, include_dropped=False)
        }
    instant = point_instant(ctx, point_of(ctx, when))
    return members_at(ctx.catalog, database.id, SCHEMA, instant)


def _check_point(ctx: Context, source: CatalogObject, when: exp.HistoricalData | None) -> None:
    if when is not None:
        _check_container(ctx, source, point_instant(ctx, point_of(ctx, when)))


def clone_source(ctx: Context, kind: str, tree: exp.Create) -> CatalogObject:
    """The live object ``CLONE y`` names, resolved before OR REPLACE drops anything."""
    source = tree.args["clone"].this
    if source.args.get("changes") is not None:
        check_changes_read(source)  # a clone of changes is refused, not the table's
    parts = names.parts(source)
    if kind == TABLE:
        return table_read(ctx, source, parts)
    if kind == SCHEMA:
        return names.schema(ctx, parts)
    return names.database(ctx, parts[0] if len(parts) == 1 else None)


def create_clone(
    ctx: Context,
    tree: exp.Create,
    source: CatalogObject,
    parent_id: int,
    name: str,
    props: ObjectProperties,
) -> tuple[CatalogObject, CloneReport]:
    """Create ``name`` under ``parent_id`` as a clone of ``source`` (SPEC R24). As in
    Snowflake, the clone itself starts with no grants (COPY GRANTS aside) and each child
    of a container clone keeps the privileges granted on its source.

    Schema and database clones fail as a whole (nothing is created, SPEC R28) when a
    table's retention does not reach the point, unless IGNORE TABLES WITH
    INSUFFICIENT DATA RETENTION, which skips exactly those tables.
    """
    from rewind.sql.ddl import new_object

    when = tree.args["clone"].this.args.get("when")
    ignore_short = bool(tree.meta.get(IGNORE_SHORT))
    report = CloneReport()
    props.transient = props.transient or source.is_transient
    if source.kind == TABLE:
        version = resolve_version(ctx, source, when)
        clone = new_object(ctx, TABLE, parent_id, name, props, source=source)
        clone_table_into(ctx, source, version, clone)
        report.tables = 1
        return clone, report
    _check_point(ctx, source, when)
    ctx.catalog.record_access(ctx.query_id, source.id, "READ")  # SPEC R36: the named container
    clone = new_object(ctx, source.kind, parent_id, name, props, source=source)
    if source.kind == SCHEMA:
        clone_schema_into(ctx, source, clone, when, ignore_short, report)
        return clone, report
    for schema_id, schema_name in sorted(schemas_at(ctx, source, when).items()):
        schema = ctx.catalog.get(schema_id)
        assert schema is not None
        kept = ObjectProperties(transient=schema.is_transient)
        copy = new_object(ctx, SCHEMA, clone.id, schema_name, kept, source=schema)
        security.copy_grants(ctx, schema, copy)
        clone_schema_into(ctx, schema, copy, when, ignore_short, report)
    return clone, report
