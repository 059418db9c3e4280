"""The nightly lifecycle on a large warehouse: Rewind's incremental run against a vacuum scan.

Builds a synthetic warehouse of TABLES tables with DAYS days of history on local disk
(benchmarks/warehouse.py, shared with lifecycle_s3.py: small Parquet files committed
through Rewind's own storage layer, so that set-up does not start Spark; every table gets
INITIAL_FILES files on day 0, and each day CHANGED_TABLES tables replace FILES_PER_CHANGE
of their oldest files; 1, 3, 7 or 14 days of retention). Then it times, in this process:

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

The vacuum's cutoffs are aligned with Rewind's clock as benchmarks/warehouse.py describes
(``retain_hours``).

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
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from deltalake import DeltaTable
from warehouse import (
    RETENTIONS,
    FileKey,
    Ledger,
    Shape,
    build,
    change_day,
    night_after,
    retain_hours,
)

from rewind.config import Config
from rewind.runner import run_lifecycle

RESULTS = Path(__file__).parent / "results" / "lifecycle_incremental.json"


def vacuum_all(ledger: Ledger, warehouse: Path, night: datetime) -> tuple[float, set[FileKey]]:
    """The baseline: a dry-run vacuum of every table, cutoffs aligned with ``night``."""
    found: set[FileKey] = set()
    start = time.perf_counter()
    for table_id, days in ledger.retention.items():
        table = DeltaTable(str(warehouse / str(table_id)))
        paths = table.vacuum(
            retention_hours=retain_hours(night, days),
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
        **shape.described(),
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
    Shape.add_arguments(parser)
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of the next night (median reported)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="print cProfile's top functions (slows the runs)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    shapes = Shape.of(args)
    warehouses = []
    for each in shapes:
        print(f"building {each.tables} tables, {each.files} data files ...", file=sys.stderr)
        warehouses.append(measure(each, args.repeat, args.profile))
    base = warehouses[0]
    report: dict[str, Any] = {
        "benchmark": "lifecycle_incremental",
        "rows_per_file": shapes[0].rows,
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
