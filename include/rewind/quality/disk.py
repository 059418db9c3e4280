"""What the warehouse holds on disk, for the data-quality checks (SPEC R12, R29, R33).

Only ``warehouse/`` is listed. The fail-safe store is never opened outside the moving
steps and recovery (SPEC R38), so the fail-safe bytes come from the catalog's manifest.
Listing the warehouse is the point: it is the count independent of the catalog that
the storage metrics are checked against, so this step's work grows with the number of
files stored, unlike the steps that move data (SPEC R32).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from rewind.lifecycle.scan import commit_actions
from rewind.storage import log
from rewind.storage.delta import STAGING

# Not table data: the Delta log (its checkpoints are parquet too) and the files of
# statements still being written (SPEC R28), which no table version holds yet.
NOT_DATA = {"_delta_log", STAGING}

Key = tuple[int, str]  # (table id, data file path relative to the table root)


@dataclass(frozen=True)
class StoredFile:
    """A data file found in a table directory."""

    table_id: int
    path: str
    inode: tuple[int, int]  # (device, inode): a clone's hard link shares its source's
    size: int


def table_data_files(root: Path, table_id: int) -> Iterator[StoredFile]:
    """Every data file under one table directory, paths '/'-separated as in the log.

    Hidden files (``.``-prefixed: the checksums Hadoop's file system writes beside
    delta-spark's files) are no table data, as Delta itself reads them.
    """
    for folder, dirs, files in os.walk(root):
        if folder == str(root):
            dirs[:] = [d for d in dirs if d not in NOT_DATA]
        for name in files:
            if name.startswith("."):
                continue
            full = os.path.join(folder, name)
            stat = os.stat(full)
            path = Path(os.path.relpath(full, root)).as_posix()
            yield StoredFile(table_id, path, (stat.st_dev, stat.st_ino), stat.st_size)


def unread_adds(root: Path, cursor: int) -> set[str]:
    """Files added by the commits after ``cursor``, which the lifecycle has not read.

    A statement committed after the metrics step (or one that crashed before its
    catalog commit, R28) leaves such files: they are in no file state and no metrics
    row yet, so the checks leave them to the next run instead of failing on them.
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


def warehouse_files(warehouse: Path, cursors: Mapping[int, int]) -> tuple[list[StoredFile], int]:
    """The data files of every table directory the lifecycle has read.

    Args:
        warehouse: the warehouse root (``warehouse/<table id>/``).
        cursors: table id -> the last Delta version the lifecycle read (SPEC R32).

    Returns:
        The files, and how many files of unread commits were left out.
    """
    found: list[StoredFile] = []
    unread = 0
    if not warehouse.is_dir():
        return found, unread
    for entry in sorted(warehouse.iterdir()):
        if not (entry.is_dir() and entry.name.isdigit()):
            continue
        table_id = int(entry.name)
        skip = unread_adds(entry, cursors.get(table_id, -1))
        for file in table_data_files(entry, table_id):
            if file.path in skip:
                unread += 1
            else:
                found.append(file)
    return found, unread


def stored_bytes(
    files: list[StoredFile], manifest: Mapping[Key, int], origin: Mapping[Key, Key]
) -> int:
    """The bytes stored for the tables: every byte once (SPEC R33).

    A clone shares its source's files through hard links (SPEC R24), so the warehouse
    counts distinct inodes. A fail-safe entry whose file another table directory still
    links (a clone's, or the source's for a clone's entry) is that same inode, so the
    manifest adds only the files no other table directory holds, each original file
    once. A file found under the fail-safe entry's own name is a second copy (moved
    back, or not yet removed), so it does not stand in for the fail-safe one.

    Args:
        files: the data files found in the table directories.
        manifest: the fail-safe manifest, (table id, path) -> size.
        origin: (clone id, path) -> (source id, source path) for files clones share.
    """
    inodes = {f.inode: f.size for f in files}
    holders: dict[Key, set[Key]] = defaultdict(set)  # original file -> keys linking it
    for key in ((f.table_id, f.path) for f in files):
        holders[origin.get(key, key)].add(key)
    held = {
        origin.get(key, key): size
        for key, size in manifest.items()
        if not holders.get(origin.get(key, key), set()) - {key}
    }
    return sum(inodes.values()) + sum(held.values())
