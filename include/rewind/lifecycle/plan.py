"""Step 1: the effective retention of every object, written as the run's plan (SPEC R5–R11).

The plan is a Delta system table under ``<system root>/retention_plan`` (a local
directory or an S3 prefix, SPEC R44), one partition per run; the later steps read their
run's partition, so a retry of a later step decides exactly what the first attempt
decided.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from sqlalchemy import select

from rewind.catalog.models import CatalogObject
from rewind.catalog.repository import Catalog
from rewind.constants import MIN_RETENTION_PARAM, RETENTION_PARAM
from rewind.errors import RewindError
from rewind.lifecycle import progress
from rewind.lifecycle.rules import TableFacts
from rewind.storage import location
from rewind.storage.arrow_read import read_arrow
from rewind.storage.location import Root

if TYPE_CHECKING:
    from rewind.lifecycle.context import Run

PLAN_SCHEMA = pa.schema(
    [
        ("RUN_ID", pa.string()),
        ("OBJECT_ID", pa.int64()),
        ("KIND", pa.string()),
        ("NAME", pa.string()),
        ("PARENT_ID", pa.int64()),
        ("IS_TRANSIENT", pa.bool_()),
        ("DROPPED_ON", pa.timestamp("us", tz="UTC")),
        ("EFFECTIVE_RETENTION_DAYS", pa.int64()),
        ("AS_OF", pa.timestamp("us", tz="UTC")),
    ]
)


ACCOUNT_ID = 0  # databases have parent_id 0


@dataclass(frozen=True)
class PlanRow:
    object_id: int
    kind: str
    facts: TableFacts


def plan_path(system_root: Root) -> Root:
    return system_root / "retention_plan"


def compute_plan(catalog: Catalog) -> list[tuple[CatalogObject, TableFacts]]:
    """Every database, schema and table incarnation with its retention facts."""
    found = []
    objects = catalog.session.scalars(select(CatalogObject).order_by(CatalogObject.id)).all()
    progress.phase("objects planned", objects=len(objects))
    for obj in objects:
        facts = TableFacts(
            transient=catalog.is_transient(obj),
            retention_days=catalog.effective_retention(obj),
            dropped_on=obj.dropped_on,
        )
        found.append((obj, facts))
        progress.advance(objects=1)
    return found


def account_row(catalog: Catalog) -> dict[str, Any]:
    """The account itself (id 0, the parent of every database).

    SPEC R29, R31: a plan is never empty, so a run on an account without objects yet is
    told apart from a run whose first step never ran (LIFECYCLE_ORDER).
    """
    days = catalog.account_parameter(RETENTION_PARAM)
    return {
        "OBJECT_ID": ACCOUNT_ID,
        "KIND": "ACCOUNT",
        "NAME": "ACCOUNT",
        "PARENT_ID": None,
        "IS_TRANSIENT": False,
        "DROPPED_ON": None,
        "EFFECTIVE_RETENTION_DAYS": max(days, catalog.account_parameter(MIN_RETENTION_PARAM)),
    }


def write_plan(catalog: Catalog, system_root: Root, run_id: str, now: datetime) -> int:
    """Write the run's plan partition (replacing it on a retry); returns its row count."""
    rows = [account_row(catalog)] + [
        {
            "OBJECT_ID": o.id,
            "KIND": o.kind,
            "NAME": o.name,
            "PARENT_ID": o.parent_id,
            "IS_TRANSIENT": f.transient,
            "DROPPED_ON": f.dropped_on,
            "EFFECTIVE_RETENTION_DAYS": f.retention_days,
        }
        for o, f in compute_plan(catalog)
    ]
    table = pa.Table.from_pylist(
        [{"RUN_ID": run_id, **row, "AS_OF": now} for row in rows], schema=PLAN_SCHEMA
    )
    path = plan_path(system_root)
    location.make_dir(path)
    write_partition(path, table, "RUN_ID", run_id)
    return len(rows)


def system_table_exists(path: Root) -> bool:
    """Whether a system table has been written at ``path`` (its Delta log is there)."""
    return location.is_dir(path / "_delta_log")


def write_partition(path: Root, table: pa.Table, column: str, value: str) -> None:
    """Replace one partition of a system table (append when the table is new); on S3
    committed conditionally by delta-rs (SPEC R46)."""
    options = location.storage_options(path)
    if system_table_exists(path):
        write_deltalake(
            str(path),
            table,
            mode="overwrite",
            partition_by=[column],
            predicate=f"{column} = '{value}'",
            storage_options=options,
        )
    else:
        write_deltalake(
            str(path), table, mode="append", partition_by=[column], storage_options=options
        )


def read_plan(system_root: Root, run_id: str) -> dict[int, PlanRow]:
    """The plan a run wrote: object id -> its retention facts."""
    path = plan_path(system_root)
    table = None
    if system_table_exists(path):
        table = read_arrow(path, filters=[("RUN_ID", "=", run_id)])
    if table is None or table.num_rows == 0:
        raise RewindError(
            f"No retention plan for run {run_id}: run effective_retention first.",
            code="LIFECYCLE_ORDER",
        )
    return _plan_rows(table)


def read_previous_plan(system_root: Root, run_id: str, now: datetime) -> dict[int, PlanRow]:
    """The plan of the latest other run at or before ``now``; empty if there is none.

    SPEC R9, R12: it tells when the last run expected each window to end, so a window
    lowered since is known to have been open until after that run. The run is found
    from the Delta log's file statistics, without reading the older plans (SPEC R32).
    """
    path = plan_path(system_root)
    if not system_table_exists(path):
        return {}
    plans = DeltaTable(str(path), storage_options=location.storage_options(path))
    files = pa.table(plans.get_add_actions(flatten=True))
    runs = [
        (row["max.AS_OF"], row["partition.RUN_ID"])
        for row in files.select(["partition.RUN_ID", "max.AS_OF"]).to_pylist()
        if row["partition.RUN_ID"] != run_id
        and row["max.AS_OF"] is not None
        and row["max.AS_OF"] <= now
    ]
    if not runs:
        return {}
    previous = max(runs)[1]
    return _plan_rows(read_arrow(path, filters=[("RUN_ID", "=", previous)]))


def _plan_rows(table: pa.Table) -> dict[int, PlanRow]:
    plan = {}
    for row in table.to_pylist():
        facts = TableFacts(row["IS_TRANSIENT"], row["EFFECTIVE_RETENTION_DAYS"], row["DROPPED_ON"])
        plan[row["OBJECT_ID"]] = PlanRow(row["OBJECT_ID"], row["KIND"], facts)
    return plan


def effective_retention(run: Run) -> dict[str, Any]:
    """Step 1 of SPEC R29; returns the step's JSON summary."""
    start = time.perf_counter()
    with run.catalog() as catalog:
        catalog.expire(run.now)  # a table past its expiration is dropped then (SPEC R27)
        objects = write_plan(catalog, run.config.system_root, run.run_id, run.now)
    return {"objects_seen": objects, "elapsed_s": round(time.perf_counter() - start, 3)}
