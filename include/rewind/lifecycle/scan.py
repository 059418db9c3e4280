"""Read new Delta commits into the per-file lifecycle state (SPEC R30, R32).

Only commits newer than each table's cursor are read, by version number (no
directory listing), and only versions the catalog's timeline knows: a version left
by a statement that crashed before its catalog commit is not data (SPEC R28). The
time a file was removed is the commit time the timeline recorded (SPEC R15).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from rewind.catalog.models import FileState, LogCursor, TableVersion
from rewind.catalog.repository import Catalog
from rewind.lifecycle.rules import DELETING, LIVE, MOVING, REMOVED
from rewind.storage.delta import TableStore


def commit_actions(table_root: Path, version: int) -> Iterator[dict[str, Any]]:
    """The actions of one commit file (newline-delimited JSON)."""
    log = table_root / "_delta_log" / f"{version:020d}.json"
    with log.open() as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def tables_with_new_commits(catalog: Catalog) -> dict[int, tuple[int, int]]:
    """table id -> (cursor, newest catalogued version), for tables with unread commits."""
    newest = dict(
        catalog.session.execute(
            select(TableVersion.table_id, func.max(TableVersion.version)).group_by(
                TableVersion.table_id
            )
        ).all()
    )
    cursors = dict(catalog.session.execute(select(LogCursor.table_id, LogCursor.version)).all())
    return {
        table_id: (cursors.get(table_id, -1), version)
        for table_id, version in newest.items()
        if cursors.get(table_id, -1) < version
    }


def sync(catalog: Catalog, store: TableStore) -> int:
    """Fold every unread commit into ``file_states``; returns the commits read."""
    read = 0
    for table_id, (cursor, newest) in tables_with_new_commits(catalog).items():
        times = dict(
            catalog.session.execute(
                select(TableVersion.version, TableVersion.commit_time).where(
                    TableVersion.table_id == table_id, TableVersion.version > cursor
                )
            ).all()
        )
        root = store.path(table_id)
        for version in range(cursor + 1, newest + 1):
            for action in commit_actions(root, version):
                _apply(catalog, table_id, version, times[version], action)
            catalog.session.flush()  # a later commit may remove what this one added
            read += 1
        row = catalog.session.get(LogCursor, table_id)
        if row is None:
            catalog.session.add(LogCursor(table_id=table_id, version=newest))
        else:
            row.version = newest
        catalog.session.flush()
    return read


def _apply(
    catalog: Catalog, table_id: int, version: int, when: Any, action: dict[str, Any]
) -> None:
    if "add" in action:
        add = action["add"]
        row = catalog.session.get(FileState, (table_id, add["path"]))
        if row is None:
            catalog.session.add(
                FileState(
                    table_id=table_id,
                    path=add["path"],
                    size=int(add["size"]),
                    added_version=version,
                    state=LIVE,
                )
            )
        elif row.state in (LIVE, REMOVED, MOVING, DELETING):
            # Used again by a newer commit (a restore in place, a concurrent writer):
            # it must not leave the table (SPEC R31).
            row.state, row.removed_version, row.removed_at = LIVE, None, None
    elif "remove" in action:
        row = catalog.session.get(FileState, (table_id, action["remove"]["path"]))
        if row is not None and row.state == LIVE:
            row.state, row.removed_version, row.removed_at = REMOVED, version, when
