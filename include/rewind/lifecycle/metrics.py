"""Step 5: storage metrics per table incarnation (SPEC R33–R35).

Every stored byte is counted once, by the table that first wrote it: a clone's hard
links to its source's files count for the source (ACTIVE while the source uses them,
RETAINED_FOR_CLONE once only clones do). Written as a daily time series to the Delta
system table ``<system root>/table_storage_metrics`` (one partition per AS_OF date; a
local directory or an S3 prefix, SPEC R44).
"""

from __future__ import annotations

import time
from collections import defaultdict
from datetime import datetime
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from sqlalchemy import and_, exists, func, select

from rewind.catalog.models import CatalogObject, CloneFile, FileState
from rewind.catalog.repository import Catalog
from rewind.constants import TABLE
from rewind.lifecycle import progress, rules
from rewind.lifecycle.context import Run
from rewind.lifecycle.plan import system_table_exists, write_partition
from rewind.retention import time_travel_end
from rewind.storage import location
from rewind.storage.arrow_read import read_arrow
from rewind.storage.location import Root

BYTE_COLUMNS = [
    rules.ACTIVE_BYTES,
    rules.TIME_TRAVEL_BYTES,
    rules.FAILSAFE_BYTES,
    rules.RETAINED_FOR_CLONE_BYTES,
]
METRICS_SCHEMA = pa.schema(
    [
        ("ID", pa.int64()),
        ("TABLE_NAME", pa.string()),
        ("TABLE_SCHEMA", pa.string()),
        ("TABLE_CATALOG", pa.string()),
        ("IS_TRANSIENT", pa.string()),
        *[(c, pa.int64()) for c in BYTE_COLUMNS],
        ("DELETED", pa.bool_()),
        ("TABLE_CREATED", pa.timestamp("us", tz="UTC")),
        ("TABLE_DROPPED", pa.timestamp("us", tz="UTC")),
        ("TABLE_ENTERED_FAILSAFE", pa.timestamp("us", tz="UTC")),
        ("AS_OF", pa.timestamp("us", tz="UTC")),
        ("AS_OF_DATE", pa.string()),
    ]
)


def metrics_path(system_root: Root) -> Root:
    return system_root / "table_storage_metrics"


def rows_before(system_root: Root, now: datetime) -> list[dict[str, Any]]:
    """The rows of the last run on a day before ``now``'s: each day's partition holds
    that day's latest run (:func:`storage_metrics` replaces it). Reads the Delta log's
    partition list and that one partition; nothing before the first run."""
    path = metrics_path(system_root)
    if not system_table_exists(path):
        return []
    table = DeltaTable(str(path), storage_options=location.storage_options(path))
    today = now.date().isoformat()
    days = [day for p in table.partitions() if (day := p["AS_OF_DATE"]) < today]
    if not days:
        return []
    rows: list[dict[str, Any]] = read_arrow(
        path, filters=[("AS_OF_DATE", "=", max(days))]
    ).to_pylist()
    return rows


def owned_bytes(catalog: Catalog) -> dict[int, dict[str, int]]:
    """table id -> byte column -> bytes, over the files each table owns."""
    shared = exists().where(
        and_(CloneFile.clone_id == FileState.table_id, CloneFile.path == FileState.path)
    )
    rows = catalog.session.execute(
        select(FileState.table_id, FileState.state, func.sum(FileState.size))
        .where(~shared)
        .group_by(FileState.table_id, FileState.state)
    ).all()
    live = set(
        catalog.session.scalars(
            select(CatalogObject.id).where(
                CatalogObject.kind == TABLE, CatalogObject.dropped_on.is_(None)
            )
        )
    )
    totals: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(BYTE_COLUMNS, 0))
    for table_id, state, size in rows:
        column = rules.metric_of(state, table_live=table_id in live)
        if column is not None:
            totals[table_id][column] += int(size or 0)
    return totals


def metric_rows(catalog: Catalog, run: Run) -> list[dict[str, Any]]:
    """One row per table incarnation until it is purged (SPEC R33).

    Reports its progress (issue 28): the dropped tables checked for storage left (one
    stat each, S3: one LIST of one key), then the tables measured with their bytes."""
    totals = owned_bytes(catalog)
    tables = list(
        catalog.session.scalars(
            select(CatalogObject).where(CatalogObject.kind == TABLE).order_by(CatalogObject.id)
        )
    )
    dropped = [table for table in tables if table.dropped_on is not None]
    progress.phase("dropped tables checked", tables=len(dropped))
    purged: set[int] = set()
    for table in dropped:
        if run.store.purged(table.id):
            purged.add(table.id)  # purged for good: its storage is gone (SPEC R33)
        progress.advance(tables=1)
    measured = [table for table in tables if table.id not in purged]
    progress.phase(
        "tables measured",
        tables=len(measured),
        nbytes=sum(sum(totals[t.id].values()) for t in measured if t.id in totals),
    )
    rows = []
    for table in measured:
        schema, database = catalog.ancestors(table)[1:3]
        entered = None
        if table.dropped_on is not None:
            end = time_travel_end(table.dropped_on, table.dropped_retention_days or 0)
            entered = end if end <= run.now else None
        owned = totals.get(table.id, dict.fromkeys(BYTE_COLUMNS, 0))
        rows.append(
            {
                "ID": table.id,
                "TABLE_NAME": table.name,
                "TABLE_SCHEMA": schema.name,
                "TABLE_CATALOG": database.name,
                "IS_TRANSIENT": "YES" if catalog.is_transient(table) else "NO",
                **owned,
                "DELETED": table.dropped_on is not None,
                "TABLE_CREATED": table.created_on,
                "TABLE_DROPPED": table.dropped_on,
                "TABLE_ENTERED_FAILSAFE": entered,
                "AS_OF": run.now,
                "AS_OF_DATE": run.now.date().isoformat(),
            }
        )
        progress.advance(tables=1, nbytes=sum(owned.values()))
    return rows


def storage_metrics(run: Run) -> dict[str, Any]:
    """Compute and store the day's metrics; returns the summary with account totals."""
    start = time.perf_counter()
    with run.catalog() as catalog:
        rows = metric_rows(catalog, run)
    table = pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)
    path = metrics_path(run.config.system_root)
    location.make_dir(path)
    write_partition(path, table, "AS_OF_DATE", run.now.date().isoformat())
    totals = {c: sum(r[c] for r in rows) for c in BYTE_COLUMNS}
    return {
        "tables": len(rows),
        **{c.lower(): v for c, v in totals.items()},
        "elapsed_s": round(time.perf_counter() - start, 3),
    }
