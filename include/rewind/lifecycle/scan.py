"""Read new Delta commits into the per-file lifecycle state (SPEC R30, R32, R40).

First every table's version timeline is extended with the commits other writers made
(:func:`rewind.storage.timeline.sync`; a stat of the next commit file per table, no
listing). Then only versions newer than each table's cursor are read, by version number,
and only versions the timeline knows: a commit of a Rewind statement that crashed before
its catalog commit is not data (SPEC R28). The time a file was removed is the commit
time the timeline recorded (SPEC R15). Where another engine cleaned up JSON commits
after a checkpoint, the state is rebuilt from the checkpoint instead (SPEC R43).
Deletion-vector files are files of the table like the data files that carry them.

An external table on an object store (SPEC R44) is read the same way, through
:mod:`rewind.storage.location`: a HEAD of its next commit object, then GETs of the new
commits by version number; its data files are never listed (SPEC R50).
"""

from __future__ import annotations

from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from rewind.catalog.models import FileState, LogCursor, TableVersion
from rewind.catalog.repository import Catalog
from rewind.lifecycle import progress
from rewind.lifecycle.rules import DELETING, LIVE, MOVING, REMOVED, RETAINED
from rewind.storage import location, log, timeline
from rewind.storage.delta import TableStore
from rewind.storage.location import Root

CHECKS = 16  # stats of next commit files at a time


def newest_versions(catalog: Catalog, now: datetime) -> dict[int, int]:
    """table id -> the newest version its timeline knows, for every governed table (a
    released external table is no longer followed, SPEC R41)."""
    newest = dict(
        catalog.session.execute(
            select(TableVersion.table_id, func.max(TableVersion.version)).group_by(
                TableVersion.table_id
            )
        ).all()
    )
    for table in catalog.external_tables(now, released=True):
        newest.pop(table.id, None)
    return newest


def sync_timelines(
    catalog: Catalog, store: TableStore, now: datetime, tables: Collection[int] | None = None
) -> None:
    """Extend the timeline of every table (of ``tables`` only, where given) another writer
    committed to (SPEC R40). The stats of the next commit files go :data:`CHECKS` at a
    time (on an object store each is a HEAD that waits on the network, SPEC R50); the
    timelines are then extended one table at a time, in this thread (the catalog's
    session)."""
    newest_of = newest_versions(catalog, now)
    if tables is not None:
        newest_of = {t: newest for t, newest in newest_of.items() if t in tables}
    progress.phase("tables checked", tables=len(newest_of))  # a stat each (SPEC R32)
    nexts = {t: log.commit_file(store.root(t), newest + 1) for t, newest in newest_of.items()}

    def committed(table_id: int) -> bool:
        found = location.exists(nexts[table_id])
        progress.advance(tables=1)
        return found

    with ThreadPoolExecutor(CHECKS) as pool:
        found = dict(zip(nexts, pool.map(committed, nexts), strict=True))
    for table_id, new in found.items():
        table = catalog.get(table_id) if new else None
        if table is not None:
            timeline.sync(catalog, store, table)


def tables_with_new_commits(catalog: Catalog, now: datetime) -> dict[int, tuple[int, int]]:
    """table id -> (cursor, newest catalogued version), for tables with unread commits."""
    cursors = dict(catalog.session.execute(select(LogCursor.table_id, LogCursor.version)).all())
    return {
        table_id: (cursors.get(table_id, -1), version)
        for table_id, version in newest_versions(catalog, now).items()
        if cursors.get(table_id, -1) < version
    }


def sync(
    catalog: Catalog, store: TableStore, now: datetime, tables: Collection[int] | None = None
) -> tuple[int, set[int]]:
    """Fold every unread commit into ``file_states`` (another writer's: of ``tables`` only,
    where given); returns the commits read and the tables they belong to."""
    sync_timelines(catalog, store, now, tables)
    read = 0
    changed = tables_with_new_commits(catalog, now)
    progress.phase("tables scanned", tables=len(changed))
    for table_id, (cursor, newest) in changed.items():
        times = dict(
            catalog.session.execute(
                select(TableVersion.version, TableVersion.commit_time).where(
                    TableVersion.table_id == table_id, TableVersion.version > cursor
                )
            ).all()
        )
        root = store.root(table_id)
        gap = False
        configuration: dict[str, str] | None = None
        for version in sorted(times):
            commit = log.read_commit(root, version)
            if commit is None:  # JSON cleaned up after a checkpoint (SPEC R43)
                gap = True
                continue
            if gap or version != cursor + 1:
                state = _reconcile(catalog, table_id, root, version, times[version])
                configuration = dict(state.metadata.get("configuration") or {})
            else:
                _apply(catalog, table_id, root, commit, times[version])
                configuration = _configuration(commit, configuration)
            catalog.session.flush()  # a later commit may remove what this one added
            gap, cursor = False, version
            read += 1
        row = catalog.session.get(LogCursor, table_id)
        if row is None:
            row = LogCursor(table_id=table_id)
            catalog.session.add(row)
        row.version = newest
        if configuration is not None:
            row.configuration = configuration
        catalog.session.flush()
        progress.advance(tables=1)
    return read, set(changed)


def _apply(catalog: Catalog, table_id: int, root: Root, commit: log.Commit, when: datetime) -> None:
    """One commit: its removes, then its adds (a data file whose deletion vector changed
    is removed and added again in one commit) and change files, then the vector files no
    file carries."""
    vectors: set[str] = set()
    for remove in commit.removes():
        path = log.relative_path(remove["path"])
        row = catalog.session.get(FileState, (table_id, path))
        if row is not None and row.dv_path:
            vectors.add(row.dv_path)
        _removed(row, commit.version, when)
    for add in commit.adds():
        _added(catalog, table_id, root, add, commit.version)
    for change in commit.changes():
        _changes(catalog, table_id, change, commit.version, when)
    catalog.session.flush()
    for vector in vectors:
        carried = catalog.session.scalar(
            select(func.count()).where(
                FileState.table_id == table_id, FileState.dv_path == vector, FileState.state == LIVE
            )
        )
        if not carried:
            _removed(catalog.session.get(FileState, (table_id, vector)), commit.version, when)


def _removed(row: FileState | None, version: int, when: datetime) -> None:
    if row is not None and row.state == LIVE:
        row.state, row.removed_version, row.removed_at = REMOVED, version, when


def _added(catalog: Catalog, table_id: int, root: Root, add: dict[str, Any], version: int) -> None:
    path = log.relative_path(add["path"])
    vector = log.dv_file(add.get("deletionVector"))
    _live(catalog, table_id, path, int(add.get("size") or 0), version).dv_path = vector
    if vector is not None:
        _live(catalog, table_id, vector, location.data_file_size(root, vector), version)


def _changes(
    catalog: Catalog, table_id: int, change: dict[str, Any], version: int, when: datetime
) -> None:
    """A change data feed's file (SPEC R30, R33): its version's history, never a current
    file, so in time travel from its commit on, as Delta's VACUUM dates it; counted and
    moved into fail-safe as a removed file is, on an object store too (read from the
    commit, never from a listing, SPEC R50)."""
    path = log.relative_path(change["path"])
    if catalog.session.get(FileState, (table_id, path)) is None:
        catalog.session.add(
            FileState(
                table_id=table_id,
                path=path,
                size=int(change.get("size") or 0),
                added_version=version,
                state=REMOVED,
                removed_version=version,
                removed_at=when,
            )
        )


def _live(catalog: Catalog, table_id: int, path: str, size: int, version: int) -> FileState:
    row = catalog.session.get(FileState, (table_id, path))
    if row is None:
        row = FileState(table_id=table_id, path=path, size=size, added_version=version, state=LIVE)
        catalog.session.add(row)
    elif row.state in (LIVE, REMOVED, MOVING, DELETING, RETAINED):
        # Used again by a newer commit (a restore in place, a concurrent writer):
        # it must not leave the table (SPEC R31). RETAINED too: an object on S3 that a
        # clone kept where it is (SPEC R47) and its table's own writer brought back.
        # The commit's size is the file's: a listing that tracked it as a leftover may
        # have seen it while its writer was still writing it (SPEC R33, R40).
        row.state, row.removed_version, row.removed_at = LIVE, None, None
        row.size = size
    return row


def _configuration(commit: log.Commit, before: dict[str, str] | None) -> dict[str, str] | None:
    """The table's Delta configuration after ``commit``: its ``metaData``'s, else ``before``."""
    metadata = commit.metadata()
    return before if metadata is None else dict(metadata.get("configuration") or {})


def _reconcile(
    catalog: Catalog, table_id: int, root: Root, version: int, when: datetime
) -> log.Replay:
    """The file states of ``version`` rebuilt from the log's checkpoint (SPEC R43): files
    the lifecycle holds LIVE that the version lacks were removed by the commits that
    are gone; the version's files are LIVE. Returns the version's state."""
    state = log.replay(root, version)
    present = {f.path: f for f in state.files}
    vectors = {f.dv_path: f for f in state.files if f.dv_path}
    for row in catalog.session.scalars(
        select(FileState).where(FileState.table_id == table_id, FileState.state == LIVE)
    ):
        if row.path not in present and row.path not in vectors:
            _removed(row, version, when)
    for file in state.files:
        _live(catalog, table_id, file.path, file.size, version).dv_path = file.dv_path
        if file.dv_path:
            size = location.data_file_size(root, file.dv_path)
            _live(catalog, table_id, file.dv_path, size, version)
    return state


def commit_actions(table_root: Root, version: int) -> list[dict[str, Any]]:
    """The actions of one commit file (none where it is gone)."""
    commit = log.read_commit(table_root, version)
    return list(commit.actions) if commit is not None else []
