"""What a lifecycle run produced, as pandas DataFrames for the quality checks (SPEC R29).

Read without Spark: the catalog (objects, file states, shared clone files, log
cursors), the run's partition of the retention plan and its storage metrics rows
(Delta system tables read with ``storage.arrow_read``), and the warehouse directories.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, select

from rewind import retention
from rewind.catalog.history import held_by_clones
from rewind.catalog.models import CatalogObject, CloneFile, FileState, LogCursor
from rewind.catalog.repository import Catalog
from rewind.constants import FAILSAFE_DAYS, TABLE
from rewind.errors import StorageError
from rewind.identifiers import QualifiedName
from rewind.lifecycle import files, rules
from rewind.lifecycle.context import Run
from rewind.lifecycle.metrics import BYTE_COLUMNS, metrics_path
from rewind.lifecycle.plan import ACCOUNT_ID, PlanRow, read_plan, system_table_exists
from rewind.quality import disk
from rewind.quality.expectations import OBJECT
from rewind.storage import location, log
from rewind.storage.arrow_read import read_arrow
from rewind.storage.location import Root

if TYPE_CHECKING:
    import pandas as pd

LIVE_TABLES = "live_tables"
METRICS = "storage_metrics"
PLAN = "retention_plan"
FAIL_SAFE = "fail_safe_manifest"
TABLE_FILES = "table_files"
VANISHED = "tracked_files"
GUARDS = "external_table_properties"
COUNTED_BYTES = "COUNTED_BYTES"
UNTRACKED = "UNTRACKED"  # in a table directory but in no file state: purged, or never committed
DAY = timedelta(days=1)
# The most tables a validation hands the next run to list for leftovers (the rest: later).
MAX_LEFTOVER_TABLES = 1_000
# A file state as read: table id, path, size, state, left_time_travel_at.
Tracked = Row[int, str, int, str, datetime | None]


@dataclass(frozen=True)
class RunFacts:
    """The frames the checks read, and the independent byte count (SPEC R33)."""

    frames: dict[str, pd.DataFrame]
    metric_ids: list[int]
    stored_bytes: int
    unread_files: int
    unseen: Unseen


def labels(catalog: Catalog) -> dict[int, str]:
    """object id -> "DB.SCHEMA.TABLE id 12" (names as they are now), "ACCOUNT" for 0."""
    place = {
        oid: (name, parent)
        for oid, name, parent in catalog.session.execute(
            select(CatalogObject.id, CatalogObject.name, CatalogObject.parent_id)
        )
    }
    found = {ACCOUNT_ID: "ACCOUNT"}
    for oid in place:
        parts, current = [], oid
        while current in place:
            parts.append(place[current][0])
            current = place[current][1]
        found[oid] = f"{QualifiedName(tuple(reversed(parts)))} id {oid}"
    return found


def name_of(names: dict[int, str], table_id: int) -> str:
    """A table's label; a directory or row no catalog object owns is named by its id."""
    return names.get(table_id, f"table id {table_id}")


def metric_rows(system_root: Root, now: datetime) -> list[dict[str, Any]]:
    """The storage metrics rows of the run at ``now`` (SPEC R33, R35).

    The time series keeps one partition a day, which the day's latest run replaces, so
    a run is validated right after its metrics step (step 6), not days later.
    """
    path = metrics_path(system_root)
    if not system_table_exists(path):
        return []
    table = read_arrow(path, filters=[("AS_OF_DATE", "=", now.date().isoformat())])
    return [row for row in table.to_pylist() if row["AS_OF"] == now]


def frame(
    rows: list[dict[str, Any]] | dict[str, list[Any]], dtypes: dict[str, str]
) -> pd.DataFrame:
    """A DataFrame with fixed columns and types, also when there are no rows; ``rows``
    as dicts, or as columns (a frame of a row per file: no dict a row, issue 28 item 5)."""
    import pandas as pd

    return pd.DataFrame(rows, columns=list(dtypes)).astype(dtypes)


def plan_frames(plan: dict[int, PlanRow], names: dict[int, str]) -> dict[str, pd.DataFrame]:
    """The run's retention plan, and the tables it saw live (SPEC R5, R7, R33)."""
    live = [
        {OBJECT: names[oid], "ID": oid}
        for oid, row in plan.items()
        if row.kind == TABLE and row.facts.dropped_on is None
    ]
    retention = [
        {
            OBJECT: names[oid],
            "IS_TRANSIENT": row.facts.transient,
            "EFFECTIVE_RETENTION_DAYS": row.facts.retention_days,
        }
        for oid, row in plan.items()
    ]
    return {
        LIVE_TABLES: frame(live, {OBJECT: "object", "ID": "int64"}),
        PLAN: frame(
            retention,
            {OBJECT: "object", "IS_TRANSIENT": "bool", "EFFECTIVE_RETENTION_DAYS": "int64"},
        ),
    }


def metrics_frame(rows: list[dict[str, Any]], names: dict[int, str]) -> pd.DataFrame:
    counted = [
        {
            OBJECT: name_of(names, r["ID"]),
            **{c: r[c] for c in BYTE_COLUMNS},
            COUNTED_BYTES: sum(r[c] for c in BYTE_COLUMNS),
        }
        for r in rows
    ]
    return frame(
        counted, {OBJECT: "object", **dict.fromkeys([*BYTE_COLUMNS, COUNTED_BYTES], "int64")}
    )


def in_failsafe(state: str) -> bool:
    """The fail-safe manifest: what counts as FAILSAFE_BYTES (journal states included)."""
    return rules.metric_of(state, table_live=True) == rules.FAILSAFE_BYTES


def file_frames(
    states: list[Tracked], found: list[files.StoredFile], names: dict[int, str], now: datetime
) -> dict[str, pd.DataFrame]:
    """Fail-safe rows by age (SPEC R12) and the files in table directories by state."""
    held = [s for s in states if in_failsafe(s.state)]
    failsafe: dict[str, list[Any]] = {
        OBJECT: [f"{names[s.table_id]} file {s.path}" for s in held],
        "DAYS_IN_FAILSAFE": [
            (now - s.left_time_travel_at) / DAY if s.left_time_travel_at else None for s in held
        ],
    }
    del held
    state = disk.by_table((s.table_id, s.path, s.state) for s in states)
    present: dict[str, list[Any]] = {
        OBJECT: [f"{name_of(names, f.table_id)} file {f.path}" for f in found],
        "STATE": [state.get(f.table_id, {}).get(f.path, UNTRACKED) for f in found],
    }
    del state
    return {
        FAIL_SAFE: frame(failsafe, {OBJECT: "object", "DAYS_IN_FAILSAFE": "float64"}),
        TABLE_FILES: frame(present, {OBJECT: "object", "STATE": "object"}),
    }


def vanished_frame(
    states: list[Tracked],
    present: disk.Found,
    names: dict[int, str],
    roots: Mapping[int, Path],
) -> pd.DataFrame:
    """Every file still in a table (current or in time travel) and whether its directory
    holds it: one that vanished outside Rewind (another engine's VACUUM with its safety
    check off, a manual delete) is named, never silently uncounted (SPEC R42)."""
    tracked = [s for s in states if s.state in (rules.LIVE, rules.REMOVED)]
    columns: dict[str, list[Any]] = {
        OBJECT: [f"{name_of(names, s.table_id)} file {s.path}" for s in tracked],
        "ON_DISK": [
            s.path in present.get(s.table_id, {}) or _unlisted_or_there(roots, s) for s in tracked
        ],
    }
    return frame(columns, {OBJECT: "object", "ON_DISK": "bool"})


def _unlisted_or_there(roots: Mapping[int, Path], state: Tracked) -> bool:
    """Whether a tracked file is not the listing's to check (a table on an object store,
    or a clone's reference to an object, SPEC R47, R50: never probed) or is there."""
    if state.table_id not in roots:
        return True
    where = location.data_file(roots[state.table_id], state.path)
    return not isinstance(where, Path) or where.exists()


def guards_frame(
    catalog: Catalog, names: dict[int, str], cursors: Mapping[int, int], now: datetime
) -> pd.DataFrame:
    """Each governed external table and whether its Delta retention properties still
    cover its time travel (SPEC R42), and keep every removed file while a clone references
    its objects (SPEC R24, R47): another engine's ``ALTER TABLE ... SET TBLPROPERTIES``
    that lowered them is named, with what is needed, before a VACUUM elsewhere acts on it.
    As of the last version the lifecycle read: the configuration its sync recorded (no
    request to the table's store, SPEC R50), else (a cursor from before it recorded one)
    the log replayed to that version."""
    recorded = dict(
        catalog.session.execute(select(LogCursor.table_id, LogCursor.configuration)).all()
    )
    rows = []
    tables = catalog.external_tables(now, released=False)
    cloned = held_by_clones(catalog, [t.id for t in tables])
    for table in tables:
        if table.id not in cursors:  # never read by the lifecycle yet
            continue
        have = recorded.get(table.id)
        if have is None:
            try:
                state = log.replay(location.of(str(table.location)), cursors[table.id])
            except StorageError:  # a broken log: the vanished-files check names its losses
                continue
            have = state.metadata.get("configuration") or {}
        needed = retention.guarded_properties(
            catalog.effective_retention(table), have, clone_held=table.id in cloned
        )
        lowered = ", ".join(
            f"{key} is {have.get(key) or 'unset'}, needs {value}" for key, value in needed.items()
        )
        rows.append(
            {OBJECT: f"{name_of(names, table.id)}: {lowered}".rstrip(": "), "COVERED": not needed}
        )
    return frame(rows, {OBJECT: "object", "COVERED": "bool"})


@dataclass(frozen=True)
class Unseen:
    """The untracked files of the table directories no lifecycle run could have tracked."""

    in_flight: int  # written less than 7 days ago: a write not committed yet
    leftovers: int  # older, written since the table's last listing
    # The tables the next run lists (:func:`rewind.lifecycle.expire.unseen_leftovers`):
    # those holding such leftovers, and those where a file changed size since the listing
    # that tracked it.
    leftover_tables: list[int]


def unseen_files(
    found: list[files.StoredFile],
    states: list[Tracked],
    listed: Mapping[int, datetime | None],
    wall_now: datetime,
) -> tuple[list[files.StoredFile], Unseen]:
    """``found`` without the files in no file state that no lifecycle run could have
    tracked yet, by the machine's clock (the clock of the files' times):

    - written less than 7 days ago: a write another engine has not committed yet, as far
      as anyone can tell. A Spark job writes its files for minutes or hours before its
      commit, and Delta's VACUUM leaves an uncommitted file alone for 7 days for that
      reason (the lifecycle's leftover tracking waits as long, :func:`files.track_leftovers`);
    - older, but written after the table's last listing (``listed``: when it began; None:
      no listing recorded): a leftover of a failed writer in a table that got no commit
      since, which a run lists only then (SPEC R32). The next run lists those tables
      (``leftover_tables``, :func:`rewind.lifecycle.expire.journal_expired`).

    The run cannot count such a file or expect it gone. An untracked file older than 7
    days that a listing should have seen is a leftover a run missed, or a file that left
    time travel and is back: the checks name it.

    A tracked file written to since its table's last listing, at a size other than the
    one tracked, is one another engine was still writing when the listing tracked it as
    a leftover (Spark writes a Delta table's data files in place, and a delta-spark
    appender beside a run met this): the run counted the bytes it saw, so the file is
    counted at that size here, and its table is listed again by the next run, which
    tracks its size then (a commit naming it gives it sooner, :mod:`rewind.lifecycle.scan`)."""
    since = wall_now - timedelta(days=FAILSAFE_DAYS)

    def unseen(f: files.StoredFile) -> bool:
        last = listed.get(f.table_id)
        return f.modified > since or last is None or f.modified >= last

    candidates = [f for f in found if unseen(f)]
    tracked = _tracked(candidates, states)
    young: set[tuple[int, str]] = set()
    old: set[tuple[int, str]] = set()
    grown: dict[tuple[int, str], int] = {}
    for f in candidates:
        size = tracked.get(f.table_id, {}).get(f.path)
        last = listed.get(f.table_id)
        if size is None:
            (young if f.modified > since else old).add((f.table_id, f.path))
        elif size != f.size and last is not None and f.modified >= last:
            grown[(f.table_id, f.path)] = size
    relist = sorted({t for t, _ in old} | {t for t, _ in grown})[:MAX_LEFTOVER_TABLES]
    result = Unseen(len(young), len(old), relist)
    if not young and not old and not grown:
        return found, result
    kept = []
    for f in found:
        key = (f.table_id, f.path)
        if key in grown:
            kept.append(replace(f, size=grown[key]))
        elif key not in young and key not in old:
            kept.append(f)
    return kept, result


def _held(unread: list[files.StoredFile], states: list[Tracked]) -> list[files.StoredFile]:
    """The files of ``unread`` (of commits the lifecycle has not read) that a file state
    already holds.

    A run's listing can see another engine's data file before the commit naming it lands
    and track it as a leftover (:func:`files.track_leftovers`, "a later commit makes it
    current"): the run's metrics count it, so the stored bytes count it too (SPEC R33,
    R40). The other unread files are in no file state and no metrics row: left to the
    next run."""
    tracked = _tracked(unread, states)
    return [f for f in unread if f.path in tracked.get(f.table_id, {})]


def _tracked(found: list[files.StoredFile], states: list[Tracked]) -> disk.Found:
    """The tracked sizes of the files of the tables of ``found``, by table and path."""
    tables = {f.table_id for f in found}
    return disk.by_table((s[0], s[1], s[2]) for s in states if s[0] in tables)


def gather(run: Run) -> RunFacts:
    """Everything the checks of ``run`` read.

    Raises:
        RewindError: LIFECYCLE_ORDER when the run wrote no retention plan.
    """
    plan = read_plan(run.config.system_root, run.run_id)
    rows = metric_rows(run.config.system_root, run.now)
    with run.catalog() as catalog:
        names = labels(catalog)
        states = list(
            catalog.session.execute(
                select(
                    FileState.table_id,
                    FileState.path,
                    FileState.size,
                    FileState.state,
                    FileState.left_time_travel_at,
                )
            )
        )
        read = catalog.session.execute(
            select(LogCursor.table_id, LogCursor.version, LogCursor.listed_at)
        ).all()
        cursors = {table_id: version for table_id, version, _ in read}
        listed = {table_id: at for table_id, _, at in read}
        origin = {
            (c.clone_id, c.path): (c.source_id, c.source_path)
            for c in catalog.session.scalars(select(CloneFile))
        }
        roots = files.governed_roots(catalog, run.store.warehouse, run.now)
        on_store = {t.id for t in catalog.external_tables(run.now, released=False)}
        if not isinstance(run.store.warehouse, Path):  # SPEC R44: every own table on S3
            on_store.update(
                catalog.session.scalars(
                    select(CatalogObject.id).where(
                        CatalogObject.kind == TABLE, CatalogObject.location.is_(None)
                    )
                )
            )
        unlisted = on_store - set(roots)
        guards = guards_frame(catalog, names, cursors, run.now)
    found, unread = files.table_files(roots, cursors)
    held = _held(unread, states)
    found, unseen = unseen_files(found + held, states, listed, datetime.now(UTC))
    # SPEC R33, R50: the tables on an object store are not listed (files.governed_roots),
    # so their stored bytes are the catalog's, like fail-safe's: the count independent of
    # the catalog covers the local tables.
    manifest = {
        (s.table_id, s.path): s.size
        for s in states
        if in_failsafe(s.state)
        or (s.table_id in unlisted and rules.metric_of(s.state, table_live=True) is not None)
    }
    present = disk.by_table((f.table_id, f.path, True) for f in found)  # one index, two uses
    return RunFacts(
        frames={
            **plan_frames(plan, names),
            METRICS: metrics_frame(rows, names),
            **file_frames(states, found, names, run.now),
            VANISHED: vanished_frame(states, present, names, roots),
            GUARDS: guards,
        },
        metric_ids=[int(r["ID"]) for r in rows],
        stored_bytes=disk.stored_bytes(found, present, manifest, origin),
        unread_files=len(unread) - len(held),
        unseen=unseen,
    )
