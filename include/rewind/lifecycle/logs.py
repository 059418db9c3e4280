"""The Delta log clean-up of Rewind's own tables, in step 4 (issue 28, SPEC R12, R32, R42).

A table Rewind writes gets a checkpoint every ``delta.checkpointInterval`` commits, so no
read replays its whole log; its log would still grow for ever, since Rewind's tables keep
``delta.enableExpiredLogCleanup=false`` (no other engine may cut into time travel, R42).
Rewind cleans it up itself, the way Delta does (the entries of the versions before a
checkpoint), where it knows what must stay: every version that time travel can read and
every version fail-safe can still give back.

A table's **kept version** is the oldest of
- the version current just before the start of its time travel and fail-safe (``now``
  minus its effective retention minus the 7 days of fail-safe; none for a transient
  table): every version time travel can read, and every version that left it within 7
  days, is at or after it;
- the version that added the oldest of its files still in time travel or fail-safe:
  every version holding such a file stays recoverable (R12), however long ago it was
  current (a retention lowered since keeps its files there until they leave, R9; a
  night that ran late has not moved them yet);
- a version a live read pins (R19);
- the newest version the lifecycle has read.

A version before it whose files are all still in the table (an append-only table's old
versions) is past time travel and fail-safe: the clean-up ends its recovery, as Delta's
ends its time travel; no data file is touched. Versions from the newest checkpoint at or
before it stay readable by every engine; the entries before that checkpoint are deleted.
Only tables Rewind created and that are live: an external table's log is its team's
(R41, R42), a dropped table keeps its whole log for UNDROP and recovery until its directory
is purged with it.

Cost (SPEC R32, R50): the catalog says which tables' history has aged another checkpoint
interval past the last clean-up (``LogCursor.log_cutoff``); only those are listed (one LIST)
and their entries deleted (S3: one DeleteObjects). A night with nothing changed makes no
request. Crash-safe (R31): the cut-off is recorded after the deletes, so a run killed
between them lists and deletes again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select

from rewind.catalog.models import CatalogObject, FileState, LogCursor, TableVersion
from rewind.catalog.repository import Catalog
from rewind.constants import FAILSAFE_DAYS, IN_FAILSAFE, REMOVED, TABLE
from rewind.errors import StorageError
from rewind.lifecycle import progress
from rewind.lifecycle.context import Run
from rewind.lifecycle.pins import live_pins
from rewind.storage import location, log
from rewind.storage.delta import TableStore


def clean_up_logs(run: Run) -> dict[str, int]:
    """Clean up the log of every live table Rewind created whose history has aged a
    checkpoint interval since its last clean-up; returns the tables and entries cleaned.

    Raises:
        StorageError: the store refused a listing or a delete (named by URI); the tables
            cleaned before stay cleaned and the next run carries on.
    """
    pinned: dict[int, int] = {}
    for pin in live_pins(run.config.home / "pins", run.now):
        pinned[pin.table_id] = min(pin.version, pinned.get(pin.table_id, pin.version))
    with run.catalog() as catalog:
        due = _aged_tables(catalog, run.now, pinned)
    progress.phase("table logs cleaned up", tables=len(due))
    tables = entries = 0
    for table_id, keep in due:
        root = run.store.root(table_id)
        try:
            found = log.expired_entries(root, keep)
            if found is not None:
                location.unlink_many(found[1])
        except OSError as exc:
            raise StorageError(f"Log clean-up of {root}: {exc.strerror or exc}.") from None
        with run.catalog() as catalog:
            cursor = catalog.session.get(LogCursor, table_id)
            if cursor is not None:
                cursor.log_cutoff = keep
        if found is not None and found[1]:
            tables += 1
            entries += len(found[1])
        progress.advance(tables=1)
    return {"tables_log_cleaned": tables, "log_entries_removed": entries}


def _aged_tables(catalog: Catalog, now: datetime, pinned: dict[int, int]) -> list[tuple[int, int]]:
    """(table id, kept version) of each live table Rewind created whose kept version is a
    checkpoint interval past its last clean-up's (or past version 0)."""
    cursors = catalog.session.execute(
        select(CatalogObject.id, LogCursor.version, LogCursor.configuration, LogCursor.log_cutoff)
        .join(LogCursor, LogCursor.table_id == CatalogObject.id)
        .where(
            CatalogObject.kind == TABLE,
            CatalogObject.dropped_on.is_(None),
            CatalogObject.location.is_(None),
        )
    ).all()
    held_from = dict(  # a file of no commit (added_version -1) belongs to no version
        catalog.session.execute(
            select(FileState.table_id, func.min(FileState.added_version))
            .where(FileState.state.in_((REMOVED, *IN_FAILSAFE)), FileState.added_version >= 0)
            .group_by(FileState.table_id)
        ).all()
    )
    due = []
    for table_id, newest, configuration, cutoff in cursors:
        interval = TableStore.checkpoint_interval(configuration or {})
        if newest < (cutoff or 0) + interval:
            continue  # not even its newest version is an interval past: no query
        table = catalog.get(table_id)
        if table is None:
            continue
        failsafe_days = 0 if table.is_transient else FAILSAFE_DAYS
        start = now - timedelta(days=catalog.effective_retention(table) + failsafe_days)
        keep = _version_before(catalog, table.id, start)
        # Never past what the lifecycle has read (a statement's own sync may be ahead).
        for floor in (newest, held_from.get(table.id), pinned.get(table.id)):
            if keep is not None and floor is not None:
                keep = min(keep, int(floor))
        if keep is not None and keep >= (cutoff or 0) + interval:
            due.append((table.id, keep))
    return due


def _version_before(catalog: Catalog, table_id: int, moment: datetime) -> int | None:
    """The version current just before ``moment`` (None: the table had none yet)."""
    version = catalog.session.scalar(
        select(func.max(TableVersion.version)).where(
            TableVersion.table_id == table_id, TableVersion.commit_time < moment
        )
    )
    return None if version is None else int(version)
