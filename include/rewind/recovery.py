"""Fail-safe recovery (SPEC R12, R38): the only code that reads the fail-safe store.

ACCOUNTADMIN only, at table level: a dropped table as it was when dropped, or a table
as of a version whose files are all still held (in the table or in fail-safe). The
recovered data becomes a new table (its files, and their deletion vectors' files, copied
out of fail-safe and out of the old table's location, each a local directory or an S3
prefix, SPEC R44; a clone's references to another table's objects out of where their
owner keeps them, its table or its fail-safe, SPEC R47), as the version reads:
partitioned as it is, under its column mapping; nothing is written back into the old one.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pyarrow as pa
from deltalake.schema import Schema as DeltaSchema
from sqlalchemy import func, select
from sqlglot import exp

from rewind.catalog.models import CatalogObject, CloneFile, FileState
from rewind.constants import TABLE
from rewind.errors import ObjectNotFound, RewindError
from rewind.lifecycle import rules
from rewind.result import Result
from rewind.security import require_accountadmin
from rewind.sql import names
from rewind.sql.tables import claim_storage, create_table_storage
from rewind.sql.values import ObjectProperties
from rewind.statement import Context
from rewind.storage import location, log, objectstore, timeline
from rewind.storage.columns import table_columns
from rewind.storage.location import Root
from rewind.storage.log import HistoryGone
from rewind.storage.snapshot import DataFile, Snapshot

FAILSAFE_COLUMNS = [
    "table_id",
    "table_name",
    "dropped_on",
    "files",
    "bytes",
    "next_purge_at",
    "recoverable_versions",
]


def _held(
    ctx: Context, failsafe: Root, table: CatalogObject, files: tuple[DataFile, ...]
) -> dict[str, Root] | None:
    """Where each file of a version is held now, and the file of each deletion vector its
    files carry (the lifecycle moves both alike), by its path in the recovered table
    (:func:`_own`); None if any is gone."""
    places: dict[str, Root] = {}
    vectors = sorted({str(f.dv_path) for f in files if f.dv_path})
    for path, vector in [*((f.path, False) for f in files), *((v, True) for v in vectors)]:
        held = _place(ctx, failsafe, table, path)
        if held is None:
            return None
        places[_own_path(path, vector=vector)] = held
    return places


def _place(
    ctx: Context,
    failsafe: Root,
    table: CatalogObject,
    path: str,
    known: dict[str, Root | None] | None = None,
) -> Root | None:
    """Where a file of ``table`` is held now: in the table, else in its fail-safe; a
    clone's reference to another table's object (SPEC R47) where its owner keeps it.
    ``known``: the places found so far, by path (each file is looked for once)."""
    if known is not None and path in known:
        return known[path]
    if objectstore.is_object_store(path):
        candidates = [location.file(path), *_owners_copy(ctx, failsafe, table, path)]
    else:
        candidates = [ctx.store.root(table.id) / path, failsafe / str(table.id) / path]
    held = next((where for where in candidates if location.exists(where)), None)
    if known is not None:
        known[path] = held
    return held


def _owners_copy(ctx: Context, failsafe: Root, table: CatalogObject, uri: str) -> list[Root]:
    """Where its owner's fail-safe holds an object the clone ``table`` referenced (SPEC
    R47): once no clone used it, its owner's night moved it there like any of its files
    (``clone_files`` names the owner and the object's path in it, SPEC R30)."""
    shared = ctx.catalog.session.get(CloneFile, (table.id, uri))
    return [] if shared is None else [failsafe / str(shared.source_id) / shared.source_path]


def _own_path(path: str, *, vector: bool = False) -> str:
    """A file's path in the recovered table: its own; for a referenced object, its bucket
    and key (names alone repeat across folders: a writer that names each partition's file
    ``data_0.parquet``), but a deletion vector's file its name, which a vector stored in
    the table spells (``deletion_vector_<uuid>.bin``, :func:`rewind.storage.log.stored_vector`)."""
    where = location.file(path)
    if not isinstance(where, objectstore.S3Location):
        return path
    return where.name if vector else f"{where.bucket}/{where.key}"


def _own(file: DataFile) -> DataFile:
    """``file`` as the recovered table holds it, a copy of its own: a clone's reference to
    an object (and to its vector's object) becomes the file under its name (SPEC R12)."""
    vector = file.deletion_vector
    if vector and file.dv_path and objectstore.is_object_store(file.dv_path):
        stored = log.stored_vector(vector, _own_path(file.dv_path, vector=True))
        file = dataclasses.replace(file, vector=json.dumps(stored, sort_keys=True))
    return dataclasses.replace(file, path=_own_path(file.path))


def recoverable_versions(ctx: Context, failsafe: Root, table: CatalogObject) -> list[int]:
    """Versions whose data files are all still held, newest first, back to the oldest
    version the table's log can still give (a log cleaned up, by the lifecycle or by
    another engine, keeps a suffix of the versions: :mod:`rewind.lifecycle.logs`).

    The log is replayed once, oldest version first, each commit applied to the version
    before it; each file is looked for once, and only the files a commit adds are checked
    (``missing``: the live files not held, by path): a table of thousands of versions (a
    streaming writer's) is listed in the time of its commits, not of its versions times
    its files (every version replayed and checked whole, as before: quadratic)."""
    root = ctx.store.root(table.id)
    earliest = log.earliest_commit(root)
    known: dict[str, Root | None] = {}

    def unheld(file: DataFile) -> bool:
        paths = (file.path, file.dv_path) if file.dv_path else (file.path,)
        return any(_place(ctx, failsafe, table, p, known) is None for p in paths)

    state: log.Replay | None = None
    missing: set[str] = set()
    found = []
    for version in sorted(v.version for v in ctx.catalog.versions(table.id)):
        if earliest is not None and version < earliest - 1:
            continue  # its commit and the checkpoint of it are cleaned up
        follows = state is not None and state.version == version - 1
        if follows and (commit := log.read_commit(root, version)) is not None:
            assert state is not None
            for action in commit.actions:
                state.apply(action)
            state.version = version
            missing = {path for path in missing if path in state.live}
            for add in commit.adds():
                path = log.file_key(add)[0]
                missing.discard(path)
                if path in state.live and unheld(state.live[path][1]):
                    missing.add(path)
        else:
            try:
                state = log.replay(root, version)
            except HistoryGone:
                state = None
                continue
            missing = {f.path for f in state.files if unheld(f)}
        if not missing:
            found.append(version)
    return found[::-1]


def list_failsafe(ctx: Context, failsafe: Root) -> Result:
    """``rewind failsafe list``: tables with data in fail-safe and what can be recovered."""
    require_accountadmin(ctx, "Fail-safe recovery")
    held = ctx.catalog.session.execute(
        select(
            FileState.table_id, func.count(), func.sum(FileState.size), func.min(FileState.purge_at)
        )
        .where(FileState.state == rules.FAILSAFE)
        .group_by(FileState.table_id)
        .order_by(FileState.table_id)
    ).all()
    rows: list[list[Any]] = []
    for table_id, files, size, purge_at in held:
        table = ctx.catalog.get(table_id)
        if table is None:
            continue
        versions = recoverable_versions(ctx, failsafe, table)
        rows.append(
            [
                table_id,
                str(names.qualified(ctx, table)),
                table.dropped_on,
                files,
                int(size),
                purge_at,
                ",".join(map(str, versions)),
            ]
        )
    return ctx.result(FAILSAFE_COLUMNS, rows)


def recover(
    ctx: Context, failsafe: Root, table_id: int, into: str, version: int | None = None
) -> Result:
    """``rewind failsafe recover TABLE_ID --into DB.SCHEMA.NAME [--version N]``."""
    from rewind.sql.ddl import new_object

    require_accountadmin(ctx, "Fail-safe recovery")
    table = ctx.catalog.get(table_id)
    if table is None or table.kind != TABLE:
        raise ObjectNotFound(f"Table id {table_id} does not exist.")
    # An external table's location on an object store is the team's, never removed by
    # Rewind (SPEC R41): a log gone from there fails as the snapshot's STORAGE_ERROR.
    if ctx.store.purged(table.id):
        raise RewindError(f"Table id {table_id} was purged for good.", code="NOT_RECOVERABLE")
    if version is None:  # a dropped table as it was when dropped; a live one as of now
        latest = ctx.catalog.latest_version(table.id)
        version = latest.version if latest else 0
    try:
        snap = ctx.store.snapshot(table.id, version)
    except HistoryGone:
        raise RewindError(
            f"Version {version} of table id {table_id} cannot be recovered: its Delta log "
            "was cleaned up.",
            code="NOT_RECOVERABLE",
        ) from None
    places = _held(ctx, failsafe, table, snap.files)
    if places is None:
        raise RewindError(
            f"Version {version} of table id {table_id} cannot be recovered: some of its files "
            "were purged.",
            code="NOT_RECOVERABLE",
        )
    parent, name = names.table_parent(ctx, names.parts(exp.to_table(into, dialect="snowflake")))
    if ctx.catalog.live(TABLE, parent.id, name) is not None:
        raise RewindError(f"Object '{name}' already exists.", code="OBJECT_ALREADY_EXISTS")
    target = new_object(ctx, TABLE, parent.id, name, ObjectProperties(), source=table)
    claim_storage(ctx, target)
    for path, place in places.items():
        # Copied, not linked: the recovered table owns its bytes, and the old
        # incarnation's fail-safe copies still purge on their date (SPEC R12). Into a
        # warehouse on S3 an object is copied server-side, verified (SPEC R48).
        location.copy(place, ctx.store.root(target.id) / path)
    _create_as(ctx, table, snap, target)
    ctx.catalog.record_access(ctx.query_id, table.id, "READ", operation="RECOVER", version=version)
    ctx.catalog.record_access(ctx.query_id, target.id, "DDL", operation="CREATE")
    return ctx.status(
        f"Table id {table_id} version {version} recovered into {names.qualified(ctx, target)} "
        f"({snap.rows} rows)."
    )


def _create_as(ctx: Context, table: CatalogObject, snap: Snapshot, target: CatalogObject) -> None:
    """Version 0 of the recovered table: ``snap``'s files (copied under their paths in it,
    :func:`_own`) as ``snap`` reads them, partitioned as it is (the files hold no
    partition column), their deletion vectors with them, and, under another engine's
    column mapping, its mapping (the files name columns by physical names) and its own
    columns (those of the version recovered: a column renamed since keeps the name the
    mapping gives it). Otherwise the table's columns, a physical column the version lacks
    NULL in it."""
    physical: pa.Schema | DeltaSchema
    mapping = None
    if snap.column_mapped:
        text, mapping = log.mapping_schema(snap.metadata or {})
        physical = DeltaSchema.from_json(text)
        columns = timeline.columns_of(snap.metadata or {}, str(snap.root))
    else:
        columns = table_columns(table)
        schema = snap.schema
        for column in columns:
            if column.physical not in schema.names:
                kind = column.column_type.arrow()
                schema = schema.append(pa.field(column.physical, kind, True))
        physical = schema
    target.columns = [c.as_json() for c in columns]
    partitioned_by = snap.partition_columns
    files = [_own(f) for f in snap.files]
    create_table_storage(ctx, target, columns, files, physical, partitioned_by, mapping)
