"""The nightly lifecycle on a large warehouse: Rewind's incremental run against a vacuum scan.

Builds a synthetic warehouse of TABLES tables with DAYS days of history (small Parquet
files written with pyarrow and committed through Rewind's own storage layer and the
catalog's version timeline, so that set-up does not start Spark): every table gets
INITIAL_FILES files on day 0, and each day CHANGED_TABLES tables (round robin) replace
FILES_PER_CHANGE of their oldest files, as an UPDATE does. Tables have 1, 3, 7 or 14
days of retention. Then it times, in this process:

(a) the first full lifecycle run (``rewind.runner.run_lifecycle``), which
    reads every commit of the warehouse once, and
(b) the run of the next night, after one more simulated day of changes,

each against the baseline of ``DeltaTable.vacuum(dry_run=True, ...)`` for every table,
which re-derives the expired files of each table from its whole log every night. Both
must find the same expired files, and both must match the builder's own ledger. The
comparison favours the baseline: a dry run only lists, while Rewind's run also moves
the expired files to fail-safe and purges old ones (file operations on Spark,
``local[2]``; the JVM is started before timing), and writes the retention plan and the
storage metrics. Run (b) is repeated REPEAT times, each on its own copy of the same
prepared home (data files hard-linked), and the medians are reported.

Aligning the two clocks: Rewind decides with its own clock (the run's ``now``) while
vacuum compares each remove action's ``deletionTimestamp`` (Rewind writes the Rewind
clock's commit time there, in ms) with the wall clock minus ``retention_hours``. For a
table with retention ``r`` days, ``retention_hours = ceil((wall_now - night) / 1 h) +
24 r`` puts vacuum's cutoff at most one hour before Rewind's (``night - r days``); the
wall clock moving during the vacuum loop shifts it later by the loop's duration. All
commits happen at 12:00 and all runs at 00:00 of the Rewind clock, so no
``deletionTimestamp`` lies within 12 hours of a cutoff: both cutoffs split the removed
files identically. The history is dated in 2025 so that the wall clock is later.

The warehouse is then built again with twice the tables but the same daily change, to
show how the incremental run grows with the warehouse (SPEC R32: it should not).
Results go to benchmarks/results/lifecycle_incremental.json.

    .venv/bin/python benchmarks/lifecycle_incremental.py [--tables 1000] [--initial-files 40]
        [--days 30] [--changed-tables 100] [--files-per-change 20] [--repeat 3]
        [--no-double] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

import rewind
from rewind.config import Config
from rewind.connection import Connection
from rewind.result import Result
from rewind.runner import run_lifecycle
from rewind.sql import names
from rewind.sql.tables import commit_files, snapshot
from rewind.statement import Context
from rewind.storage.snapshot import DataFile, Snapshot

RESULTS = Path(__file__).parent / "results" / "lifecycle_incremental.json"
BASE = datetime(2025, 1, 1, tzinfo=UTC)  # day 0; the wall clock must be later
RETENTIONS = (1, 3, 7, 14)  # days, assigned round robin
DATABASE = "BENCH"

FileKey = tuple[int, str]  # (table id, path)


@dataclass(frozen=True)
class Shape:
    tables: int
    initial_files: int
    days: int
    changed_tables: int
    files_per_change: int
    rows: int

    @property
    def files(self) -> int:
        return self.tables * self.initial_files + self.days * self.changes_per_day

    @property
    def changes_per_day(self) -> int:
        return min(self.changed_tables, self.tables) * self.files_per_change


def commit_time(day: int) -> datetime:
    return BASE + timedelta(days=day, hours=12)


def night_after(day: int) -> datetime:
    return BASE + timedelta(days=day + 1)


@dataclass
class Ledger:
    """What the builder committed, to check both answers against."""

    root: Path
    schema: pa.Schema | None = None
    retention: dict[int, int] = field(default_factory=dict)
    version: dict[int, int] = field(default_factory=dict)
    current: dict[int, list[DataFile]] = field(default_factory=dict)
    removed: dict[FileKey, datetime] = field(default_factory=dict)
    written: int = 0

    def expired(self, night: datetime) -> set[FileKey]:
        """Removed files whose time travel has ended by ``night`` (SPEC R30)."""
        return {
            key
            for key, removed_at in self.removed.items()
            if removed_at + timedelta(days=self.retention[key[0]]) <= night
        }

    def write_files(self, table_id: int, count: int, rows: int) -> list[DataFile]:
        assert self.schema is not None
        written = []
        for _ in range(count):
            start = self.written * rows
            data = pa.table(
                {
                    "ID": pa.array(range(start, start + rows), pa.int64()),
                    "V": pa.array([f"v{i}" for i in range(start, start + rows)]),
                }
            ).cast(self.schema)
            name = f"part-{uuid.uuid4()}.parquet"
            path = self.root / str(table_id) / name
            pq.write_table(data, path)
            written.append(DataFile(name, path.stat().st_size, rows))
            self.written += 1
        return written


def statement(conn: Connection, text: str, action: Callable[[Context], None]) -> None:
    """Run ``action`` as one Rewind statement (one catalog transaction)."""

    def run(ctx: Context) -> Result:
        action(ctx)
        return ctx.status(text)

    conn._statement(f"benchmark set-up: {text}", run)


def commit(ctx: Context, ledger: Ledger, table_id: int, adds: list[DataFile], removes: int) -> None:
    """One version of a table: drop its ``removes`` oldest files, add ``adds``."""
    obj = ctx.catalog.get(table_id)
    assert obj is not None and ledger.schema is not None
    gone, kept = ledger.current[table_id][:removes], ledger.current[table_id][removes:]
    base = Snapshot(ledger.version[table_id], ledger.schema, (), ledger.root / str(table_id))
    version = commit_files(ctx, obj, base, adds, gone, "UPDATE" if gone else "INSERT")
    assert version is not None
    ledger.version[table_id] = version
    ledger.current[table_id] = kept + adds
    ledger.removed.update({(table_id, f.path): ctx.now for f in gone})


def create_tables(home: Path, shape: Shape) -> Ledger:
    """Day 0: the tables, each with ``initial_files`` files."""
    conn = rewind.connect(home=home, now=commit_time(0))
    ledger = Ledger(conn.store.warehouse)
    try:
        conn.sql(f"CREATE DATABASE {DATABASE}")
        for start in range(0, shape.tables, 200):
            conn.sql(
                "; ".join(
                    f"CREATE TABLE {DATABASE}.PUBLIC.T{n:05d} (ID INT, V VARCHAR) "
                    f"DATA_RETENTION_TIME_IN_DAYS = {RETENTIONS[n % len(RETENTIONS)]}"
                    for n in range(start, min(start + 200, shape.tables))
                )
            )

        def fill(ctx: Context) -> None:
            for n in range(shape.tables):
                obj = names.table(ctx, [DATABASE, "PUBLIC", f"T{n:05d}"])
                if ledger.schema is None:
                    ledger.schema = snapshot(ctx, obj).schema
                ledger.retention[obj.id] = RETENTIONS[n % len(RETENTIONS)]
                ledger.version[obj.id] = 0
                ledger.current[obj.id] = []
                files = ledger.write_files(obj.id, shape.initial_files, shape.rows)
                commit(ctx, ledger, obj.id, files, 0)

        statement(conn, "day 0", fill)
    finally:
        conn.close()
    return ledger


def change_day(home: Path, shape: Shape, ledger: Ledger, day: int) -> None:
    """One day of changes: ``changed_tables`` tables (round robin) rewrite files."""
    ids = sorted(ledger.current)
    count = min(shape.changed_tables, len(ids))
    first = (day - 1) * count
    chosen = [ids[(first + k) % len(ids)] for k in range(count)]
    conn = rewind.connect(home=home, now=commit_time(day))

    def change(ctx: Context) -> None:
        for table_id in chosen:
            adds = ledger.write_files(table_id, shape.files_per_change, shape.rows)
            commit(ctx, ledger, table_id, adds, shape.files_per_change)

    try:
        statement(conn, f"day {day}", change)
    finally:
        conn.close()


def build(home: Path, shape: Shape) -> Ledger:
    ledger = create_tables(home, shape)
    for day in range(1, shape.days + 1):
        change_day(home, shape, ledger, day)
    return ledger


def vacuum_all(ledger: Ledger, warehouse: Path, night: datetime) -> tuple[float, set[FileKey]]:
    """The baseline: a dry-run vacuum of every table, cutoffs aligned with ``night``."""
    offset_hours = math.ceil((time.time() - night.timestamp()) / 3600)
    if offset_hours < 0:
        raise SystemExit(f"the wall clock is earlier than the Rewind clock {night}")
    found: set[FileKey] = set()
    start = time.perf_counter()
    for table_id, days in ledger.retention.items():
        table = DeltaTable(str(warehouse / str(table_id)))
        paths = table.vacuum(
            retention_hours=offset_hours + 24 * days,
            dry_run=True,
            enforce_retention_duration=False,
        )
        found.update((table_id, path) for path in paths)
    return time.perf_counter() - start, found


def left_the_tables(ledger: Ledger, warehouse: Path) -> set[FileKey]:
    """Removed files Rewind has moved out of the warehouse (to fail-safe or purged)."""
    return {key for key in ledger.removed if not (warehouse / str(key[0]) / key[1]).exists()}


def clone_home(source: Path, target: Path) -> None:
    """A copy of a prepared home to run one night on. Data files are hard links (the
    lifecycle only renames and unlinks them); the catalog and system tables are copied."""

    def link(src: str, dst: str) -> None:
        os.link(src, dst)

    for item in source.iterdir():
        if item.name in ("warehouse", "failsafe"):
            shutil.copytree(item, target / item.name, copy_function=link)
        elif item.is_dir():
            shutil.copytree(item, target / item.name)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(item, target / item.name)


def lifecycle(
    home: Path, night: datetime, profile: bool
) -> tuple[float, list[dict[str, Any]], str | None]:
    """One timed ``run_lifecycle``; with ``profile``, also cProfile's top functions."""
    config = Config.load(home=home)
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    steps = run_lifecycle(config, night)
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - start
    report = None
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        report = out.getvalue()
    return seconds, steps, report


def warm_spark(home: Path) -> float:
    """Start the run's SparkSession before timing: a JVM start is not lifecycle work."""
    from rewind.spark import get_spark

    config = Config.load(home=home)
    start = time.perf_counter()
    get_spark(config.spark_master, config.home / "logs" / "spark.log")
    return time.perf_counter() - start


def night_report(ledger: Ledger, home: Path, night: datetime, profile: bool) -> dict[str, Any]:
    """Vacuum baseline, then the Rewind run, then the check of both against the ledger."""
    warehouse = home / "warehouse"
    vacuum_s, vacuumed = vacuum_all(ledger, warehouse, night)
    warm_spark(home)
    rewind_s, steps, profiled = lifecycle(home, night, profile)
    if profiled is not None:
        print(f"--- cProfile, run of {night.isoformat()}, {len(ledger.retention)} tables ---")
        print(profiled)
    expected = ledger.expired(night)
    moved = left_the_tables(ledger, warehouse)
    current_missing = sum(
        not (warehouse / str(t) / f.path).exists()
        for t, files in ledger.current.items()
        for f in files
    )
    report = {
        "night": night.isoformat(),
        "rewind_seconds": round(rewind_s, 3),
        "rewind_steps_seconds": {s["step"]: s["elapsed_s"] for s in steps},
        "rewind_summaries": [
            {k: v for k, v in s.items() if k not in ("run_id", "elapsed_s")} for s in steps
        ],
        "vacuum_dry_run_seconds": round(vacuum_s, 3),
        "expired_files_total": len(expected),
        "vacuum_matches_ledger": vacuumed == expected,
        "rewind_matches_ledger": moved == expected,
        "same_expired_files": vacuumed == moved,
        "current_files_missing": current_missing,
    }
    if vacuumed != moved:
        report["only_vacuum"] = len(vacuumed - moved)
        report["only_rewind"] = len(moved - vacuumed)
    return report


def median_of(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeated runs of one night: the median figures, every run's seconds, all checks."""
    merged = dict(reports[0])
    for key in ("rewind_seconds", "vacuum_dry_run_seconds"):
        merged[key] = round(statistics.median(r[key] for r in reports), 3)
        merged[key.replace("_seconds", "_runs_seconds")] = [r[key] for r in reports]
    merged["rewind_steps_seconds"] = {
        step: round(statistics.median(r["rewind_steps_seconds"][step] for r in reports), 3)
        for step in reports[0]["rewind_steps_seconds"]
    }
    for key in ("vacuum_matches_ledger", "rewind_matches_ledger", "same_expired_files"):
        merged[key] = all(r[key] for r in reports)
    merged["current_files_missing"] = max(r["current_files_missing"] for r in reports)
    merged["ratio_vacuum_over_rewind"] = round(
        merged["vacuum_dry_run_seconds"] / merged["rewind_seconds"], 3
    )
    return merged


def measure(shape: Shape, repeat: int, profile: bool) -> dict[str, Any]:
    """Build one warehouse, time its first full run, then the next night's run ``repeat``
    times, each on its own copy of the same prepared home."""
    base = Path(tempfile.mkdtemp(prefix="rewind-lifecycle-bench-"))
    home = base / "home"
    try:
        start = time.perf_counter()
        ledger = build(home, shape)
        build_s = time.perf_counter() - start
        spark_s = warm_spark(home)
        first = median_of([night_report(ledger, home, night_after(shape.days), profile)])
        change_day(home, shape, ledger, shape.days + 1)
        nights = []
        for rep in range(repeat):
            copy = base / f"next-night-{rep}"
            clone_home(home, copy)
            nights.append(night_report(ledger, copy, night_after(shape.days + 1), profile))
            shutil.rmtree(copy, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        "tables": shape.tables,
        "data_files": shape.files,
        "days_of_history": shape.days,
        "daily_change": {
            "tables": min(shape.changed_tables, shape.tables),
            "files_removed": shape.changes_per_day,
            "files_added": shape.changes_per_day,
        },
        "build_seconds": round(build_s, 1),
        "spark_start_seconds_untimed": round(spark_s, 1),
        "first_full_run": first,
        "incremental_run": median_of(nights),
        "profiled": profile,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=1_000)
    parser.add_argument("--initial-files", type=int, default=40, help="files per table, day 0")
    parser.add_argument("--days", type=int, default=30, help="days of history")
    parser.add_argument("--changed-tables", type=int, default=100, help="tables changed a day")
    parser.add_argument("--files-per-change", type=int, default=20, help="files each replaces")
    parser.add_argument("--rows", type=int, default=10, help="rows per data file")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of the next night (median reported)"
    )
    parser.add_argument(
        "--no-double", action="store_true", help="skip the warehouse with twice the tables"
    )
    parser.add_argument(
        "--profile", action="store_true", help="print cProfile's top functions (slows the runs)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    shape = Shape(
        args.tables,
        args.initial_files,
        args.days,
        args.changed_tables,
        args.files_per_change,
        args.rows,
    )
    shapes = (
        [shape] if args.no_double else [shape, Shape(**{**vars(shape), "tables": 2 * shape.tables})]
    )
    warehouses = []
    for each in shapes:
        print(f"building {each.tables} tables, {each.files} data files ...", file=sys.stderr)
        warehouses.append(measure(each, args.repeat, args.profile))
    base = warehouses[0]
    report: dict[str, Any] = {
        "benchmark": "lifecycle_incremental",
        "rows_per_file": shape.rows,
        "retention_days_round_robin": list(RETENTIONS),
        "first_full_run": {
            "rewind_seconds": base["first_full_run"]["rewind_seconds"],
            "vacuum_dry_run_seconds": base["first_full_run"]["vacuum_dry_run_seconds"],
            "ratio_vacuum_over_rewind": base["first_full_run"]["ratio_vacuum_over_rewind"],
        },
        "incremental_run": {
            "rewind_seconds": base["incremental_run"]["rewind_seconds"],
            "vacuum_dry_run_seconds": base["incremental_run"]["vacuum_dry_run_seconds"],
            "ratio_vacuum_over_rewind": base["incremental_run"]["ratio_vacuum_over_rewind"],
        },
        "same_expired_files": all(
            w[run]["same_expired_files"] and w[run]["rewind_matches_ledger"]
            for w in warehouses
            for run in ("first_full_run", "incremental_run")
        ),
        "warehouses": warehouses,
    }
    if len(warehouses) == 2:
        small, big = (w["incremental_run"] for w in warehouses)
        report["incremental_when_tables_double"] = {
            "rewind_seconds": [small["rewind_seconds"], big["rewind_seconds"]],
            "rewind_growth": round(big["rewind_seconds"] / small["rewind_seconds"], 2),
            "rewind_steps_growth": {
                step: round(big["rewind_steps_seconds"][step] / max(seconds, 1e-3), 2)
                for step, seconds in small["rewind_steps_seconds"].items()
            },
            "vacuum_growth": round(
                big["vacuum_dry_run_seconds"] / small["vacuum_dry_run_seconds"], 2
            ),
        }
    args.output.parent.mkdir(exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if report["same_expired_files"] else 1


if __name__ == "__main__":
    sys.exit(main())
