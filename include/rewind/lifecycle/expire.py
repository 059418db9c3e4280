"""Steps 2 and 3: find what left time travel and move it to fail-safe (SPEC R12, R30, R31).

Crash safety: the intent (state MOVING / DELETING, with the fail-safe dates) is
committed before any file is touched, the file operations are idempotent, and the
outcome is committed after. A run killed at any instant leaves journal rows the next
run finishes first; no file is ever missing from both the table and fail-safe.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import or_, select

from rewind.catalog.models import CatalogObject, FileState
from rewind.catalog.repository import Catalog
from rewind.home import private_dir
from rewind.lifecycle import fileops, rules
from rewind.lifecycle.clones import used_by_clone
from rewind.lifecycle.context import Run
from rewind.lifecycle.pins import live_pins
from rewind.lifecycle.plan import read_plan, read_previous_plan
from rewind.lifecycle.scan import sync


def pinned_files(run: Run) -> set[tuple[int, str]]:
    """Files of versions that live reads pin (SPEC R19)."""
    held: set[tuple[int, str]] = set()
    for pin in live_pins(run.config.home / "pins", run.now):
        snap = run.store.snapshot(pin.table_id, pin.version)
        held.update((pin.table_id, f.path) for f in snap.files)
    return held


def _candidates(catalog: Catalog) -> list[FileState]:
    """Removed files, and current files of dropped tables: the only ones that can expire."""
    dropped = select(CatalogObject.id).where(CatalogObject.dropped_on.is_not(None))
    return list(
        catalog.session.scalars(
            select(FileState).where(
                or_(
                    FileState.state == rules.REMOVED,
                    (FileState.state == rules.LIVE) & FileState.table_id.in_(dropped),
                )
            )
        )
    )


def journal_expired(run: Run) -> dict[str, int]:
    """Read new commits, decide what expired and journal it (MOVING / DELETING)."""
    plan = read_plan(run.config.system_root, run.run_id)
    previous = read_previous_plan(run.config.system_root, run.run_id, run.now)
    with run.catalog() as catalog:
        commits = sync(catalog, run.store)
        held = pinned_files(run)
        journaled = 0
        for row in _candidates(catalog):
            facts = plan[row.table_id].facts
            pinned = (row.table_id, row.path) in held
            before = previous.get(row.table_id)
            # SPEC R9, R12: a window lowered since the last run closes now, not in the past.
            planned = rules.time_travel_end(before.facts, row.removed_at) if before else None
            decision = rules.expiry(
                facts, row.removed_at, run.now, pinned=pinned, planned_end=planned
            )
            if decision is None:
                continue
            row.state = rules.MOVING if decision.to_failsafe else rules.DELETING
            row.left_time_travel_at = decision.left_time_travel_at
            row.purge_at = decision.purge_at if decision.to_failsafe else None
            journaled += 1
    return {"commits_read": commits, "files_journaled": journaled, "objects_seen": len(plan)}


def apply_journal(run: Run) -> dict[str, int]:
    """Carry out every MOVING / DELETING row (this run's and a killed run's)."""
    with run.catalog() as catalog:
        sync(catalog, run.store)  # a commit since the journal may use a file again
        rows = catalog.session.scalars(
            select(FileState).where(FileState.state.in_([rules.MOVING, rules.DELETING]))
        ).all()
        tasks = [
            (
                "move" if row.state == rules.MOVING else "delete",
                str(run.warehouse_path(row.table_id, row.path)),
                str(run.failsafe_path(row.table_id, row.path)),
            )
            for row in rows
        ]
    fileops.fault_point("journal")
    if any(action == "move" for action, _, _ in tasks):
        private_dir(run.config.failsafe_root)  # SPEC R38: owner-only
    outcomes = run.run_tasks(tasks)
    summary = {
        "files_moved": 0,
        "bytes_moved": 0,
        "files_deleted": 0,
        "bytes_deleted": 0,
        "files_missing": 0,
    }
    with run.catalog() as catalog:
        for row in catalog.session.scalars(
            select(FileState).where(FileState.state.in_([rules.MOVING, rules.DELETING]))
        ):
            outcome = outcomes.get(str(run.warehouse_path(row.table_id, row.path)))
            if outcome is None:
                continue
            if outcome == "missing":
                summary["files_missing"] += 1
            elif row.state == rules.MOVING:
                row.state = rules.FAILSAFE
                summary["files_moved"] += 1
                summary["bytes_moved"] += row.size
            else:
                # SPEC R30, R33: a clone's link still holds the bytes of a transient
                # file: the owner keeps them as RETAINED_FOR_CLONE until the clone lets go.
                if used_by_clone(catalog, row):
                    row.state = rules.RETAINED
                else:
                    catalog.session.delete(row)
                summary["files_deleted"] += 1
                summary["bytes_deleted"] += row.size
    return summary


def expire_versions(run: Run) -> dict[str, Any]:
    """Steps 2–3 of SPEC R29; returns the step's JSON summary."""
    start = time.perf_counter()
    summary: dict[str, Any] = {**journal_expired(run), **apply_journal(run)}
    summary["elapsed_s"] = round(time.perf_counter() - start, 3)
    return summary
