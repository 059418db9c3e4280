"""Step 4: purge fail-safe entries older than 7 days, files first, then rows (SPEC R12, R31).

A file a clone still uses keeps its bytes through the clone's own hard link, or, on an
object store, where it is (the clone references it, SPEC R47); its owner's row stays as
RETAINED (counted as RETAINED_FOR_CLONE, SPEC R30, R33) until no clone uses it any more.
The same step cleans up the Delta log of Rewind's own tables before what time travel and
fail-safe still need (:mod:`rewind.lifecycle.logs`), and removes the audit trail older
than 365 days (SPEC R36), in one catalog transaction of its own.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, CursorResult, delete, exists, func, or_, select, update

from rewind.audit.cleanup import purge_audit
from rewind.catalog.models import CatalogObject, FileState
from rewind.catalog.repository import Catalog
from rewind.faults import fault_point
from rewind.lifecycle import fileops, pages, progress, rules
from rewind.lifecycle.clones import cloned_owners, used_by_clone
from rewind.lifecycle.context import Run
from rewind.lifecycle.expire import held_tables
from rewind.lifecycle.logs import clean_up_logs
from rewind.storage import location, objectstore, running

# Purging files a page (:func:`purge_failsafe`): each page one Spark job of deletes.
PURGE_PAGE = 50_000


def purge_failsafe(run: Run) -> dict[str, Any]:
    """Delete fail-safe files whose 7 days are over (and finish a killed run's purge); one
    an Object Lock still holds stays until a later run (``files_locked``, SPEC R48).

    The purging rows a page of :data:`PURGE_PAGE` at a time: its deletes, then its rows
    settled and committed (a run killed between two pages leaves the later ones PURGING,
    which the next run finishes, SPEC R31); then the rows a clone retained before this run,
    each looked at once, as before."""
    start = time.perf_counter()
    run.open_failsafe()  # SPEC R49: a store that does not answer stops the step first
    purging = FileState.state == rules.PURGING
    with run.catalog() as catalog:
        retained_before = set(
            catalog.session.execute(
                select(FileState.table_id, FileState.path).where(FileState.state == rules.RETAINED)
            ).tuples()
        )
        due = (FileState.state == rules.FAILSAFE) & (FileState.purge_at <= run.now)
        # SPEC R12, R47: a clone's reference held in fail-safe where its owner keeps the
        # object: its 7 days are over, and the object is its owner's (no delete here);
        # the owner's row, RETAINED for it, is settled below with the others.
        released = catalog.session.execute(
            delete(FileState).where(due, _referenced()).execution_options(synchronize_session=False)
        )
        assert isinstance(released, CursorResult)
        catalog.session.execute(
            update(FileState)
            .where(due)
            .values(state=rules.PURGING)
            .execution_options(synchronize_session=False)
        )
    fault_point("purge_journal")
    with run.catalog() as catalog:
        count, nbytes = catalog.session.execute(
            select(func.count(), func.coalesce(func.sum(FileState.size), 0)).where(purging)
        ).one()
        owners = cloned_owners(catalog)
    progress.phase("files purged", files=int(count), nbytes=int(nbytes))
    done = Counter[str]()
    pages.carry_out(
        run,
        purging,
        PURGE_PAGE,
        lambda table_id, path, _: fileops.Task("purge", str(run.failsafe_path(table_id, path))),
        lambda catalog, row, outcomes: _settle(catalog, run, row, outcomes, done, owners),
    )
    with run.catalog() as catalog:
        for row in pages.rows(catalog, FileState.state == rules.RETAINED):
            if (row.table_id, row.path) in retained_before:
                _settle(catalog, run, row, {}, done, owners)
        catalog.session.flush()
        dirs = _forget_purged_tables(catalog, run)
        killed = _forget_killed_creates(catalog, run)
    logs = clean_up_logs(run)
    with run.catalog() as catalog:
        audit_removed = purge_audit(catalog, run.now)
    return {
        "files_purged": done["purged"],
        "bytes_purged": done["purged_bytes"],
        "files_retained_for_clone": done["retained"],
        "files_locked": done["locked"],
        "shared_references_purged": int(released.rowcount),
        "tables_purged": dirs,
        "killed_creates_removed": killed,
        **logs,
        "audit_rows_removed": audit_removed,
        "elapsed_s": round(time.perf_counter() - start, 3),
    }


def _referenced() -> ColumnElement[bool]:
    """The file states that name an object by its URI (:func:`objectstore.is_object_store`):
    a clone's references to its source's objects (SPEC R47)."""
    return or_(
        *(func.lower(FileState.path).startswith(f"{scheme}://") for scheme in objectstore.SCHEMES)
    )


def _settle(
    catalog: Catalog,
    run: Run,
    row: FileState,
    outcomes: dict[str, str],
    done: Counter[str],
    owners: frozenset[int],
) -> None:
    """A PURGING row after its delete, or a RETAINED one (no outcome): gone, kept by a
    lock or a clone (``owners``: :func:`~rewind.lifecycle.clones.cloned_owners`), or back
    in its table's time travel."""
    if outcomes.get(str(run.failsafe_path(row.table_id, row.path))) == "locked":
        # SPEC R48: its Object Lock has not ended (the store's clock): it stays in
        # fail-safe, reported, and a later night purges it.
        row.state = rules.FAILSAFE
        done["locked"] += 1
        return
    if used_by_clone(catalog, row, owners):
        done["retained"] += row.state == rules.PURGING
        row.state = rules.RETAINED
        return
    if row.state == rules.RETAINED and not isinstance(run.store.root(row.table_id), Path):
        # SPEC R30, R47: an object a clone referenced where it is, which no clone
        # uses now: still in its table, it leaves it at the next run as any other.
        row.state = rules.REMOVED
        return
    done["purged"] += row.state == rules.PURGING
    done["purged_bytes"] += row.size if row.state == rules.PURGING else 0
    catalog.session.delete(row)


def _forget_killed_creates(catalog: Catalog, run: Run) -> int:
    """Remove what a CREATE / CTAS / CLONE / recovery killed before its catalog commit left
    in the directory it claimed, once no statement can be given that id again: it is at
    most the catalog's highest id (a Postgres sequence never gives it again; SQLite gave it
    to a later object, a database or a schema) and no table has it. A SQLite catalog that
    gives the id to the next CREATE takes the directory back there instead
    (``TableStore.claim``). Only the killed statement's own (``TableStore.discard``: its
    version 0, or none); the claim is forgotten either way (SPEC R28, R31).

    Returns:
        How many such directories were looked at and released.
    """
    highest = catalog.session.scalar(select(func.max(CatalogObject.id))) or 0
    count = 0
    for query_id, table_id in running.killed_claims(run.config.home):
        if table_id > highest:
            continue  # the next CREATE may be given it, and takes it back then
        found = catalog.get(table_id)
        if found is None or found.kind != "TABLE":
            run.store.discard(table_id, query_id)
            count += 1
        running.forget(run.config.home, query_id, table_id)
    return count


def _forget_purged_tables(catalog: Catalog, run: Run) -> int:
    """A dropped table with no file left anywhere: remove its log and fail-safe dirs. An
    external table's location is never removed (SPEC R41), nor the directory of a table
    another engine committed to after the drop (SPEC R42)."""
    gone = catalog.session.scalars(
        select(CatalogObject).where(
            CatalogObject.kind == "TABLE",
            CatalogObject.dropped_on.is_not(None),
            CatalogObject.location.is_(None),
            ~exists().where(FileState.table_id == CatalogObject.id),
        )
    ).all()
    kept = held_tables(catalog)
    count = 0
    for table in gone:
        if table.id in kept:
            continue
        end = rules.time_travel_end(
            rules.TableFacts(False, table.dropped_retention_days or 0, table.dropped_on), None
        )
        if end is None or run.now < end or run.store.purged(table.id):
            continue
        # SPEC R12, R31: the table was Rewind's own (no location), every file of it has
        # been purged from fail-safe, and no other writer committed after its drop (R42).
        location.remove_tree(run.store.root(table.id))
        location.remove_tree(run.config.failsafe_root / str(table.id))
        count += 1
    return count
