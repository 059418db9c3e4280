"""What the Rewind views of the Airflow UI show, read-only (SPEC R12, R21, R33, R35).

The views' JSON API (:mod:`rewind.plugin_api`, mounted by ``plugins/rewind_plugin.py``
at ``/rewind/api/v1/``) serves it; this module gathers the data as plain typed values:

- the four byte figures of SPEC R33 per day over the last 30 days, and per database,
  schema or table incarnation at the latest lifecycle run, from the storage-metrics
  time series (read with ``deltalake``: the Airflow api-server never starts a JVM);
- dropped objects that UNDROP can still restore, with their deadline, ``dropped_on +
  retention at drop`` (SPEC R10, R21, R30);
- what fail-safe holds and when it is purged, from the catalog's manifest rows — the
  fail-safe store itself is never opened (SPEC R12, R38);
- the summaries of the last lifecycle runs (SPEC R29, R35).

Each dashboard is for one Rewind user, the viewer, acting with its default role (SPEC R37):
it shows the objects SHOW would list to that role and their bytes; fail-safe contents
and the lifecycle runs (account-wide) only to ACCOUNTADMIN (SPEC R12, R38).

Read-only means: no migration, no bootstrap, only SELECTs; a home without a catalog or
without metrics yet gives an empty dashboard, not an error.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import Engine, func, inspect, make_url, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from rewind.catalog.db import make_engine
from rewind.catalog.grants import Grants
from rewind.catalog.models import CatalogObject, FileState, LifecycleRun
from rewind.catalog.repository import Catalog
from rewind.config import Config
from rewind.constants import ACCOUNTADMIN
from rewind.dashboard_model import (
    GROUP_KEYS,
    LAST_RUNS,
    Dashboard,
    Day,
    DroppedObject,
    FailsafeBatch,
    Figures,
    Group,
    RunDetail,
    RunSummary,
    Scope,
    first_day,
)
from rewind.errors import AccessDenied, CatalogError, StorageError, UnknownUser
from rewind.identifiers import QualifiedName
from rewind.lifecycle import rules
from rewind.lifecycle.metrics import BYTE_COLUMNS, metrics_path
from rewind.lifecycle.plan import system_table_exists
from rewind.retention import in_time_travel, time_travel_end
from rewind.security import session_role, visible_to
from rewind.storage.arrow_read import read_arrow
from rewind.storage.location import Root


def load_dashboard(
    config: Config, now: datetime, viewer: str, scope: Scope | None = None
) -> Dashboard:
    """Read the dashboard of the Rewind home ``config.home`` as of ``now``, as the Rewind
    user ``viewer`` sees it.

    Reads the catalog (SELECT only) and the storage-metrics Delta table; writes nothing.

    Raises:
        UnknownUser: ``viewer`` is not a Rewind user (of a catalog that exists).
        CatalogError: the catalog exists but cannot be read.
        StorageError: the metrics table exists but cannot be read.
    """
    board = Dashboard(home="", now=now, scope=scope or Scope(), viewer=viewer)
    engine = _catalog_engine(config.catalog_url)
    if engine is None:
        return board
    try:
        with Session(engine) as session:
            visible = _viewer(board, session)
            if board.role == ACCOUNTADMIN:  # where the home is, only its administrator
                board.home = str(config.home)
            _read_catalog(board, session, visible)
    except SQLAlchemyError as exc:
        raise CatalogError(f"Cannot read the catalog: {str(exc).splitlines()[0]}") from None
    finally:
        engine.dispose()
    _read_storage(board, metrics_path(config.system_root), visible)
    return board


def load_run(config: Config, viewer: str, run_id: str) -> RunDetail | None:
    """One lifecycle run's record (SPEC R29, R35) and the tables of its night, as the
    Rewind user ``viewer`` may see them: runs are account-wide, so only ACCOUNTADMIN
    sees them, as on the dashboard. None: no catalog yet, or no such run.

    Raises:
        UnknownUser: ``viewer`` is not a Rewind user (of a catalog that exists).
        AccessDenied: ``viewer``'s default role is not ACCOUNTADMIN.
        CatalogError: the catalog exists but cannot be read.
        StorageError: the metrics table exists but cannot be read.
    """
    engine = _catalog_engine(config.catalog_url)
    if engine is None:
        return None
    board = Dashboard(home="", now=datetime.min, scope=Scope(), viewer=viewer)
    try:
        with Session(engine) as session:
            _viewer(board, session)
            if board.role != ACCOUNTADMIN:
                raise AccessDenied(
                    f"Lifecycle runs are account-wide: role {board.role} may not see them "
                    f"(ACCOUNTADMIN only)."
                )
            row = session.get(LifecycleRun, run_id)
            run = _summary(row) if row is not None else None
    except SQLAlchemyError as exc:
        raise CatalogError(f"Cannot read the catalog: {str(exc).splitlines()[0]}") from None
    finally:
        engine.dispose()
    if run is None:
        return None
    tables = _run_tables(metrics_path(config.system_root), run.now)
    return RunDetail(run, tables, _totals(tables))


def _viewer(board: Dashboard, session: Session) -> set[int] | None:
    """The viewer's role, and the ids it may see (None: all, for ACCOUNTADMIN)."""
    grants = Grants(session)
    user = grants.user(board.viewer)
    if user is None:
        raise UnknownUser(f"User '{board.viewer}' does not exist.")
    board.role = session_role(grants, user)
    return visible_to(grants, board.role)


# -- storage metrics (SPEC R33, R35) ---------------------------------------------------
def _metric_rows(path: Root, filters: list[tuple[str, str, str]]) -> pa.Table | None:
    """The metrics time series' rows the partition ``filters`` keep; None before the
    first storage_metrics step made the table."""
    if not system_table_exists(path):
        return None
    try:
        return read_arrow(path, filters=filters)
    except Exception as exc:  # delta-rs raises several types for a broken table
        raise StorageError(f"Cannot read the storage metrics: {str(exc).splitlines()[0]}") from None


def _as_of(rows: pa.Table, instant: datetime) -> pc.Expression:
    return pc.field("AS_OF") == pa.scalar(instant, rows["AS_OF"].type)


def _read_storage(board: Dashboard, path: Root, visible: set[int] | None) -> None:
    """Days of the window and the latest run's groups, from the metrics time series
    (only the tables in ``visible`` unless it is None)."""
    rows = _metric_rows(path, [("AS_OF_DATE", ">=", first_day(board.now).isoformat())])
    if rows is None:
        return
    board.metrics_found = True
    rows = rows.filter(pc.field("AS_OF") <= pa.scalar(board.now, pa.timestamp("us", "UTC")))
    if visible is not None:
        rows = rows.filter(pc.field("ID").isin(sorted(visible)))
    if rows.num_rows == 0:
        return
    board.latest_as_of = pc.max(rows["AS_OF"]).as_py()
    rows = rows.filter(board.scope.expression())
    board.days = _days(rows)
    board.groups = _groups(
        rows.filter(_as_of(rows, board.latest_as_of)), GROUP_KEYS[board.scope.depth]
    )
    board.totals = _totals(board.groups)


def _run_tables(path: Root, now: datetime) -> list[Group]:
    """Per table incarnation, the metrics rows of the run made at ``now`` (SPEC R33)."""
    rows = _metric_rows(path, [("AS_OF_DATE", "=", now.date().isoformat())])
    if rows is None:
        return []
    return _groups(rows.filter(_as_of(rows, now)), GROUP_KEYS[-1])


def _totals(groups: list[Group]) -> Figures:
    return {c: sum(g.bytes[c] for g in groups) for c in BYTE_COLUMNS}


def _summed(rows: pa.Table, keys: list[str], extra: list[tuple[str, str]]) -> list[dict[str, Any]]:
    aggregated = rows.group_by(keys).aggregate([(c, "sum") for c in BYTE_COLUMNS] + extra)
    return sorted(aggregated.to_pylist(), key=lambda r: [str(r[k]) for k in keys])


def _figures(row: dict[str, Any]) -> Figures:
    return {c: int(row[f"{c}_sum"]) for c in BYTE_COLUMNS}


def _days(rows: pa.Table) -> list[Day]:
    return [
        Day(r["AS_OF_DATE"], r["AS_OF_max"], _figures(r))
        for r in _summed(rows, ["AS_OF_DATE"], [("AS_OF", "max")])
    ]


def _groups(rows: pa.Table, keys: list[str]) -> list[Group]:
    return [
        Group(
            database=r["TABLE_CATALOG"],
            schema=r.get("TABLE_SCHEMA"),
            table=r.get("TABLE_NAME"),
            table_id=r.get("ID"),
            deleted=bool(r.get("DELETED")),
            bytes=_figures(r),
        )
        for r in _summed(rows, keys, [])
    ]


# -- catalog (SPEC R10, R12, R21, R29) --------------------------------------------------
def _catalog_engine(url: str) -> Engine | None:
    """An engine on an existing, migrated catalog; None when there is none yet.

    A missing SQLite file is not created (connecting would create it).
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and not Path(parsed.database or "").is_file():
        return None
    engine = make_engine(url)
    needed = (CatalogObject.__tablename__, FileState.__tablename__, LifecycleRun.__tablename__)
    try:
        inspector = inspect(engine)
        if all(inspector.has_table(name) for name in needed):
            return engine
    except SQLAlchemyError as exc:
        engine.dispose()
        raise CatalogError(f"Cannot open the catalog: {str(exc).splitlines()[0]}") from None
    engine.dispose()
    return None


def _read_catalog(board: Dashboard, session: Session, visible: set[int] | None) -> None:
    board.catalog_found = True
    objects = {o.id: o for o in session.scalars(select(CatalogObject))}
    paths = _paths(objects)
    shown = {i: o for i, o in objects.items() if visible is None or i in visible}
    board.dropped = _undroppable(shown, objects, paths, board, Catalog(session))
    if board.role == ACCOUNTADMIN:  # SPEC R12, R38; the runs are account-wide
        board.failsafe = _failsafe(session, paths, board.scope)
        board.runs = _runs(session, board.now)


def _paths(objects: dict[int, CatalogObject]) -> dict[int, tuple[str, ...]]:
    """Object id -> (database, schema, table) names, as far as the object goes."""
    paths: dict[int, tuple[str, ...]] = {}

    def path(obj: CatalogObject) -> tuple[str, ...]:
        if obj.id not in paths:
            parent = objects.get(obj.parent_id)
            paths[obj.id] = (*(path(parent) if parent else ()), obj.name)
        return paths[obj.id]

    for obj in objects.values():
        path(obj)
    return paths


def _undroppable(
    shown: dict[int, CatalogObject],
    objects: dict[int, CatalogObject],
    paths: dict[int, tuple[str, ...]],
    board: Dashboard,
    catalog: Catalog,
) -> list[DroppedObject]:
    """Dropped objects still in time travel: UNDROP restores them (SPEC R8, R10, R21). A
    table past its expiration (BigQuery's ``expiration_timestamp``, SPEC R27) is one,
    dropped then, though no statement has dropped it in the catalog yet (the next one
    does, :meth:`Catalog.expire`): it showed as a live table."""
    found = []
    for obj in shown.values():
        dropped_on = obj.dropped_on
        if dropped_on is None and obj.expires_on is not None and obj.expires_on <= board.now:
            dropped_on = obj.expires_on
        if dropped_on is None or dropped_on > board.now:
            continue
        days = catalog.effective_retention(obj)  # frozen at its drop for a dropped one
        if not in_time_travel(dropped_on, days, board.now):
            continue
        if not board.scope.covers(paths[obj.id]):
            continue
        taken_by = objects.get(obj.dropped_with) if obj.dropped_with else None
        found.append(
            DroppedObject(
                object_id=obj.id,
                kind=obj.kind,
                name=str(QualifiedName(paths[obj.id])),
                dropped_on=dropped_on,
                retention_days=days,
                undrop_until=time_travel_end(dropped_on, days),
                dropped_with=str(QualifiedName(paths[taken_by.id])) if taken_by else None,
            )
        )
    return sorted(found, key=lambda d: (d.undrop_until, d.name, d.object_id))


def _failsafe(
    session: Session, paths: dict[int, tuple[str, ...]], scope: Scope
) -> list[FailsafeBatch]:
    """The fail-safe manifest, grouped by table and purge date (SPEC R12, R38).

    Manifest rows are the file states counted as FAILSAFE_BYTES (SPEC R33), so the
    batches of a table add up to its FAILSAFE_BYTES figure.
    """
    rows = session.execute(
        select(
            FileState.table_id,
            FileState.state,
            FileState.left_time_travel_at,
            FileState.purge_at,
            func.count(),
            func.sum(FileState.size),
        ).group_by(
            FileState.table_id, FileState.state, FileState.left_time_travel_at, FileState.purge_at
        )
    ).all()
    batches: dict[tuple[int, datetime, datetime], list[int]] = defaultdict(lambda: [0, 0])
    for table_id, state, left, purge_at, files, size in rows:
        held = rules.metric_of(state, table_live=True) == rules.FAILSAFE_BYTES
        if not (held and scope.covers(paths[table_id])):
            continue
        # Journaling a file for fail-safe sets both dates at once (lifecycle/expire.py).
        assert left is not None and purge_at is not None
        batch = batches[(table_id, left, purge_at)]
        batch[0] += int(files)
        batch[1] += int(size)
    return sorted(
        (
            FailsafeBatch(table_id, str(QualifiedName(paths[table_id])), files, size, left, purge)
            for (table_id, left, purge), (files, size) in batches.items()
        ),
        key=lambda b: (b.purge_at, b.table, b.table_id),
    )


def _runs(session: Session, now: datetime) -> list[RunSummary]:
    """The last lifecycle runs at or before ``now``, newest first (SPEC R35)."""
    runs = session.scalars(
        select(LifecycleRun)
        .where(LifecycleRun.now <= now)
        .order_by(LifecycleRun.now.desc(), LifecycleRun.run_id)
        .limit(LAST_RUNS)
    )
    return [_summary(r) for r in runs]


def _summary(run: LifecycleRun) -> RunSummary:
    return RunSummary(run.run_id, run.now, list((run.summary or {}).get("steps", [])) or None)
