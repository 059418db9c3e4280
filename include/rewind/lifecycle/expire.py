"""Steps 2 and 3: find what left time travel and move it to fail-safe (SPEC R12, R30, R31).

Crash safety: the intent (state MOVING / DELETING, with the fail-safe dates) is
committed before any file is touched, the file operations are idempotent, and the
outcome is committed after. A run killed at any instant leaves journal rows the next
run finishes first; no file is ever missing from both the table and fail-safe.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, or_, select

from rewind.catalog.models import (
    CatalogObject,
    FileState,
    LifecycleRun,
    LogCursor,
    TableVersion,
)
from rewind.catalog.repository import Catalog
from rewind.faults import fault_point
from rewind.lifecycle import fileops, files, pages, progress, rules
from rewind.lifecycle.clones import cloned_owners, clones_of, used_by_clone
from rewind.lifecycle.context import Run
from rewind.lifecycle.pins import live_pins
from rewind.lifecycle.plan import read_plan, read_previous_plan
from rewind.lifecycle.scan import sync
from rewind.storage import objectstore

# Journaled files a page (:func:`apply_journal`): each page is one Spark job of file
# operations (~0.2 s to set up), its rows' outcomes committed after it.
JOURNAL_PAGE = 50_000


def pinned_files(run: Run) -> set[tuple[int, str]]:
    """Files of versions that live reads pin (SPEC R19)."""
    held: set[tuple[int, str]] = set()
    for pin in live_pins(run.config.home / "pins", run.now):
        snap = run.store.snapshot(pin.table_id, pin.version)
        held.update((pin.table_id, f.path) for f in snap.files)
    return held


def _candidates(catalog: Catalog) -> Iterator[FileState]:
    """Removed files, and current files of dropped tables Rewind created: the only ones
    that can expire. A dropped external table's current files stay the team's, where
    they are (SPEC R41); a dropped table another engine still committed to after the
    drop is held whole (SPEC R42, :func:`held_tables`). Read a page at a time
    (:func:`pages.rows`): the caller may change or delete each."""
    dropped = select(CatalogObject.id).where(
        CatalogObject.dropped_on.is_not(None), CatalogObject.location.is_(None)
    )
    return pages.rows(
        catalog,
        or_(
            FileState.state == rules.REMOVED,
            (FileState.state == rules.LIVE) & FileState.table_id.in_(dropped),
        ),
    )


def held_tables(catalog: Catalog) -> set[int]:
    """The ids of dropped tables another engine committed to after the drop (SPEC R42).
    None of their files leaves, and their directories stay, until someone decides."""
    written_after_drop = (
        select(TableVersion.table_id)
        .where(
            TableVersion.table_id == CatalogObject.id,
            TableVersion.commit_time > CatalogObject.dropped_on,
        )
        .exists()
    )
    rows = catalog.session.scalars(
        select(CatalogObject.id).where(CatalogObject.dropped_on.is_not(None), written_after_drop)
    )
    return set(rows)


def release_dropped_external(catalog: Catalog, now: datetime) -> int:
    """Stop tracking the files at a dropped external table's location once its time
    travel is over (SPEC R41): they stay there, the team's, counted by no metric."""
    released = [table.id for table in catalog.external_tables(now, released=True)]
    rows = catalog.session.scalars(
        select(FileState).where(
            FileState.table_id.in_(released), FileState.state.in_([rules.LIVE, rules.REMOVED])
        )
    ).all()
    for row in rows:
        catalog.session.delete(row)
    return len(rows)


def _track_leftovers(catalog: Catalog, run: Run, changed: set[int], plan: dict[int, Any]) -> int:
    """Files no version references in the directories of the tables that got commits
    since the last run (SPEC R32: only those are listed; see :func:`files.track_leftovers`),
    and of those where the last validation found such a file written since their last
    listing (:func:`unseen_leftovers`). Tables on an object store are not listed (SPEC R50,
    :func:`files.governed_roots`)."""
    roots = files.governed_roots(catalog, run.store.warehouse, run.now)
    cursors = dict(catalog.session.execute(select(LogCursor.table_id, LogCursor.version)).all())
    listed = changed | unseen_leftovers(catalog, run)
    return files.track_leftovers(
        catalog,
        {t: roots[t] for t in listed if t in roots and roots[t].is_dir()},
        cursors,
        {t: plan[t].facts.retention_days for t in listed if t in plan},
    )


def unseen_leftovers(catalog: Catalog, run: Run) -> set[int]:
    """The tables in which the validation of the latest earlier run found a leftover file
    written after their last listing (its summary's ``leftover_tables``,
    :func:`rewind.quality.facts.unseen_files`): a failed writer's, in a table that got no
    commit since, which no run had listed. Read from the run's record in the catalog."""
    summary = catalog.session.scalars(
        select(LifecycleRun.summary)
        .where(LifecycleRun.now <= run.now, LifecycleRun.run_id != run.run_id)
        .order_by(LifecycleRun.now.desc())
        .limit(1)
    ).first()
    steps = (summary or {}).get("steps", [])
    return {int(t) for s in steps if s["step"] == "validate" for t in s.get("leftover_tables", [])}


def journal_expired(run: Run) -> dict[str, Any]:
    """Read new commits, decide what expired and journal it (MOVING / DELETING)."""
    plan = read_plan(run.config.system_root, run.run_id)
    previous = read_previous_plan(run.config.system_root, run.run_id, run.now)
    with run.catalog() as catalog:
        commits, changed = sync(catalog, run.store, run.now)
        released = release_dropped_external(catalog, run.now)
        leftovers = _track_leftovers(catalog, run, changed, plan)
        held = pinned_files(run)
        kept = held_tables(catalog)
        registered = dict(
            catalog.session.execute(
                select(CatalogObject.id, CatalogObject.created_on).where(
                    CatalogObject.location.is_not(None)
                )
            ).all()
        )
        journaled = shared_released = references_held = 0
        owners = cloned_owners(catalog)
        for row in _candidates(catalog):
            if row.table_id in kept:
                continue
            facts = plan[row.table_id].facts
            pinned = (row.table_id, row.path) in held
            before = previous.get(row.table_id)
            # SPEC R9, R12: a window lowered since the last run closes now, not in the past.
            planned = rules.time_travel_end(before.facts, row.removed_at) if before else None
            decision = rules.expiry(
                facts,
                row.removed_at,
                run.now,
                pinned=pinned,
                planned_end=planned,
                governed_since=registered.get(row.table_id),
            )
            if decision is None:
                continue
            row.left_time_travel_at = decision.left_time_travel_at
            row.purge_at = decision.purge_at if decision.to_failsafe else None
            if objectstore.is_object_store(row.path):
                # SPEC R12, R47: a clone's reference to its source's object, where it is:
                # the object is its owner's to move, and a permanent clone's fail-safe
                # holds it there for its 7 days (the owner's row stays RETAINED while it
                # does, as a local clone's link in fail-safe keeps the bytes); a transient
                # clone's time travel of it is simply over.
                if decision.to_failsafe:
                    row.state = rules.FAILSAFE
                    references_held += 1
                else:
                    catalog.session.delete(row)
                    shared_released += 1
                continue
            if not isinstance(run.store.root(row.table_id), Path) and used_by_clone(
                catalog, row, owners
            ):
                # SPEC R30, R47: a clone references this object where it is (no link of its
                # own holds the bytes): it stays in its table, RETAINED_FOR_CLONE, until no
                # clone uses it (rewind.lifecycle.purge then hands it back).
                row.state = rules.RETAINED
                continue
            row.state = rules.MOVING if decision.to_failsafe else rules.DELETING
            journaled += 1
    return {
        "commits_read": commits,
        "files_journaled": journaled,
        "shared_references_released": shared_released,
        "shared_references_to_failsafe": references_held,
        "objects_seen": len(plan),
        "files_released": released,
        "leftover_files_tracked": leftovers,
        # Ids, not names: Airflow shows this summary to every reader of the run (R37).
        "tables_written_after_drop": sorted(kept),
    }


def apply_journal(run: Run) -> dict[str, int]:
    """Carry out every MOVING / DELETING row (this run's and a killed run's), a page of
    :data:`JOURNAL_PAGE` rows at a time: its file operations, then its outcomes committed
    (a run killed between two pages leaves the later pages journaled, which the next run
    finishes, SPEC R31)."""
    journaled = FileState.state.in_([rules.MOVING, rules.DELETING])
    with run.catalog() as catalog:
        # A commit since the journal may use a file again: the journaled files' tables and
        # their clones are read again (a stat each), not every table (SPEC R50).
        owners = set(catalog.session.scalars(select(FileState.table_id).where(journaled)))
        sync(catalog, run.store, run.now, owners | clones_of(catalog, owners))
        count, nbytes = catalog.session.execute(
            select(func.count(), func.coalesce(func.sum(FileState.size), 0)).where(journaled)
        ).one()
        cloned = cloned_owners(catalog)
    fault_point("journal")
    progress.phase("files moved or deleted", files=int(count), nbytes=int(nbytes))
    summary = {
        "files_moved": 0,
        "bytes_moved": 0,
        "files_deleted": 0,
        "bytes_deleted": 0,
        "files_missing": 0,
    }

    def task(table_id: int, path: str, state: str, purge_at: Any, _: int) -> fileops.Task:
        if state == rules.MOVING:
            return run.to_failsafe(table_id, path, purge_at)
        return fileops.Task("delete", str(run.table_file(table_id, path)))

    pages.carry_out(
        run,
        journaled,
        JOURNAL_PAGE,
        task,
        lambda catalog, row, outcomes: _settle(catalog, run, row, outcomes, summary, cloned),
        FileState.state,
        FileState.purge_at,
    )
    return summary


def _settle(
    catalog: Catalog,
    run: Run,
    row: FileState,
    outcomes: dict[str, str],
    summary: dict[str, int],
    owners: frozenset[int],
) -> None:
    """A journaled row after its file operation: in fail-safe, deleted, or left as it is
    (no outcome: not in this page's operations); ``owners``: the tables a clone took files
    from (:func:`~rewind.lifecycle.clones.cloned_owners`)."""
    outcome = outcomes.get(str(run.table_file(row.table_id, row.path)))
    if outcome is None:
        return
    if outcome == "missing":
        summary["files_missing"] += 1
    elif row.state == rules.MOVING:
        row.state = rules.FAILSAFE
        summary["files_moved"] += 1
        summary["bytes_moved"] += row.size
    else:
        # SPEC R30, R33: a clone's link still holds the bytes of a transient
        # file: the owner keeps them as RETAINED_FOR_CLONE until the clone lets go.
        if used_by_clone(catalog, row, owners):
            row.state = rules.RETAINED
        else:
            catalog.session.delete(row)
        summary["files_deleted"] += 1
        summary["bytes_deleted"] += row.size


def expire_versions(run: Run) -> dict[str, Any]:
    """Steps 2–3 of SPEC R29; returns the step's JSON summary."""
    start = time.perf_counter()
    run.open_failsafe()  # SPEC R49: a store that cannot take files stops the step first
    summary: dict[str, Any] = {**journal_expired(run), **apply_journal(run)}
    summary["elapsed_s"] = round(time.perf_counter() - start, 3)
    return summary
