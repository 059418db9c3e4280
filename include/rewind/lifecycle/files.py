"""The files in the governed table directories, as found on disk (SPEC R29, R33, R41).

``warehouse/<id>/`` of a local warehouse and the local locations of the external tables
Rewind still governs (a table on an object store, in an S3 warehouse or an external one,
is never listed, SPEC R50: :func:`governed_roots`); what Delta's VACUUM leaves alone
(:func:`hidden`: the Delta log, statements' staging areas, other programs' folders and
markers) is not table data. The nightly run reads
them to track files no version references (:func:`track_leftovers`) and the quality
step to count the bytes stored independently of the catalog.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update

from rewind.catalog.models import FileState, LogCursor
from rewind.catalog.repository import Catalog
from rewind.constants import FAILSAFE_DAYS
from rewind.lifecycle.rules import REMOVED
from rewind.lifecycle.scan import commit_actions
from rewind.storage import location, log
from rewind.storage.location import Root

# Hidden names Delta's VACUUM still sweeps: the change data feed's files and Delta's index.
_DATA_PREFIXES = ("_change_data", "_delta_index")

Key = tuple[int, str]  # (table id, data file path relative to the table root)


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A data file found in a table directory (slots: one is made for every file of the
    warehouse, issue 28 item 5)."""

    table_id: int
    path: str
    inode: tuple[int, int]  # (device, inode): a clone's hard link shares its source's
    size: int
    modified: datetime


def hidden(name: str, *, top: bool) -> bool:
    """Whether a file or folder of a table directory is no table data, as Delta's VACUUM
    reads the directory (delta-spark's ``DeltaTableUtils.isHiddenDirectory``; delta-rs's
    vacuum alike): a name that begins with ``_`` or ``.`` (the Delta log, Rewind's staging
    area of statements still being written (SPEC R28), a streaming job's ``_checkpoint``
    folder, Spark's ``_SUCCESS`` and commit markers, Hadoop's ``.crc`` checksums) unless it
    is a partition folder (``column=value``: its column's name may begin with ``_``), the
    change data feed's ``_change_data`` or ``_delta_index``; and at the root
    ``metadata``, where a UniForm table keeps its Iceberg metadata. The lifecycle never
    tracks, moves or counts them: they are another program's (SPEC R41)."""
    if top and name == "metadata":
        return True
    return name.startswith(("_", ".")) and not ("=" in name or name.startswith(_DATA_PREFIXES))


def table_data_files(root: Path, table_id: int) -> Iterator[StoredFile]:
    """Every data file under one table directory, paths '/'-separated as in the log;
    what is not table data (:func:`hidden`) is neither listed nor walked."""
    for folder, dirs, files in os.walk(root):
        top = folder == str(root)
        dirs[:] = [d for d in dirs if not hidden(d, top=top)]
        for name in files:
            if hidden(name, top=top):
                continue
            full = os.path.join(folder, name)
            stat = os.stat(full)
            path = Path(os.path.relpath(full, root)).as_posix()
            yield StoredFile(
                table_id,
                path,
                (stat.st_dev, stat.st_ino),
                stat.st_size,
                datetime.fromtimestamp(stat.st_mtime, UTC),
            )


def unread_adds(root: Path, cursor: int) -> set[str]:
    """Files added by the commits after ``cursor``, which the lifecycle has not read.

    A statement committed after the metrics step (or one that crashed before its
    catalog commit, R28) leaves such files: they are in no file state and no metrics
    row yet, so the checks leave them to the next run instead of failing on them (all
    but a file a listing tracked as a leftover before its commit landed, which the
    metrics count: :mod:`rewind.quality.facts` counts it).
    """
    added: set[str] = set()
    version = cursor + 1
    while (root / "_delta_log" / f"{version:020d}.json").exists():
        for action in commit_actions(root, version):
            if "add" in action:
                added.add(log.relative_path(action["add"]["path"]))
                vector = log.dv_file(action["add"].get("deletionVector"))
                added.update([vector] if vector else [])
        version += 1
    return added


def table_roots(warehouse: Path, external: Mapping[int, Path]) -> dict[int, Path]:
    """table id -> directory of every governed table: ``warehouse/<id>/`` and the
    locations of external tables still governed (SPEC R41)."""
    roots = {
        int(entry.name): entry
        for entry in (sorted(warehouse.iterdir()) if warehouse.is_dir() else [])
        if entry.is_dir() and entry.name.isdigit()
    }
    roots.update(external)
    return roots


def table_files(
    roots: Mapping[int, Path], cursors: Mapping[int, int]
) -> tuple[list[StoredFile], list[StoredFile]]:
    """The data files of every governed table directory.

    Args:
        roots: table id -> its directory (:func:`table_roots`).
        cursors: table id -> the last Delta version the lifecycle read (SPEC R32).

    Returns:
        The files, and the files of unread commits, left out of the first.
    """
    found: list[StoredFile] = []
    unread: list[StoredFile] = []
    for table_id, root in sorted(roots.items()):
        # Listed before the unread commits are read: a commit another engine lands between
        # the two then names its files (read after the listing, it would leave them as
        # files of no commit, "expired" to the checks).
        listed = list(table_data_files(root, table_id))
        skip = unread_adds(root, cursors.get(table_id, -1))
        for file in listed:
            if file.path in skip:
                unread.append(file)
            else:
                found.append(file)
    return found, unread


def governed_roots(catalog: Catalog, warehouse: Root, now: datetime) -> dict[int, Path]:
    """:func:`table_roots` of a local warehouse, with the external tables the catalog still
    governs that are local directories. A table on an object store (the tables of an S3
    warehouse, SPEC R44, and external ones) is left out: listing its data files is what a
    lifecycle run never does there (SPEC R50), so no leftover file of its is tracked
    (:func:`track_leftovers`) and the quality step counts its bytes from the catalog
    (:mod:`rewind.quality.facts`)."""
    external = {
        table.id: root
        for table in catalog.external_tables(now, released=False)
        if isinstance(root := location.of(str(table.location)), Path)
    }
    if not isinstance(warehouse, Path):
        return external
    return table_roots(warehouse, external)


def track_leftovers(
    catalog: Catalog,
    roots: Mapping[int, Path],
    cursors: Mapping[int, int],
    retention_days: Mapping[int, int],
) -> int:
    """Start tracking the files in a table directory that no version references (a failed
    writer's leftovers, which Delta's VACUUM deletes), as removed files (SPEC.md, R33):
    counted as TIME_TRAVEL_BYTES, and leaving time travel for fail-safe only once older
    than the table's retention and at least 7 days (Delta's rule: a writer may still be
    about to commit a younger file). A file a later commit adds becomes current again.
    ``roots`` are local directories only: a table on an object store has its files
    listed by no lifecycle run (SPEC R50, :func:`governed_roots`), so a leftover object
    of a failed writer there stays untracked and uncounted. Each listed table's cursor
    records when its listing began (``LogCursor.listed_at``, the machine's clock, the
    clock of the files' times): a file written since is one no run could have tracked,
    which the validation tells from one a listing missed.

    Returns:
        How many files started being tracked.
    """
    tracked = 0
    for table_id, root in roots.items():
        if table_id not in retention_days:
            continue
        catalog.session.execute(
            update(LogCursor)
            .where(LogCursor.table_id == table_id)
            .values(listed_at=datetime.now(UTC))
        )
        known = set(
            catalog.session.scalars(select(FileState.path).where(FileState.table_id == table_id))
        )
        files, _ = table_files({table_id: root}, cursors)
        wait = timedelta(days=max(0, FAILSAFE_DAYS - retention_days[table_id]))
        _refresh_leftovers(catalog, table_id, files, wait)
        for file in files:
            if file.path in known:
                continue
            catalog.session.add(
                FileState(
                    table_id=table_id,
                    path=file.path,
                    size=file.size,
                    added_version=-1,
                    state=REMOVED,
                    removed_version=-1,
                    removed_at=file.modified + wait,
                )
            )
            tracked += 1
    catalog.session.flush()
    return tracked


def _refresh_leftovers(
    catalog: Catalog, table_id: int, listed: list[StoredFile], wait: timedelta
) -> None:
    """A leftover of ``table_id`` still in time travel that a new listing finds at another
    size takes that size and its time: an earlier listing tracked it while its writer was
    still writing it (SPEC R33, R40), and Delta's 7 days run from a file's last write."""
    rows = catalog.session.scalars(
        select(FileState).where(
            FileState.table_id == table_id,
            FileState.added_version == -1,
            FileState.removed_version == -1,
            FileState.state == REMOVED,
            FileState.left_time_travel_at.is_(None),
        )
    )
    leftovers = {row.path: row for row in rows}
    for file in listed:
        row = leftovers.get(file.path)
        if row is not None and row.size != file.size:
            row.size, row.removed_at = file.size, file.modified + wait
