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

``--memory`` (issue 28 item 5: 10,000 tables / 1,000,000 files within 2 GB): each
lifecycle run is made by a child process of its own, the driver a nightly job starts
(this process keeps the builder's ledger, which no run has): it starts its SparkSession
(``spark_start_seconds``, untimed as above), then times ``run_lifecycle``. Meanwhile the
process tree of that child (the Python driver, its Spark JVM, PySpark's Python workers)
is sampled every :data:`SAMPLE_S` seconds from ``/proc/<pid>/status``: each process's
``VmHWM`` (its exact peak resident set) and the tree's summed ``VmRSS`` (its peak as
sampled); the child also reports the driver's and the JVM's peak after each step.
``--driver-memory 512m`` gives that child's JVM a heap of that size (Spark's
``--driver-memory``, through ``PYSPARK_SUBMIT_ARGS``) instead of Spark's default 1 GB.
``--fast-build`` builds the same warehouse faster (benchmarks/warehouse.py). The scale run:

    nice -n 10 .venv/bin/python benchmarks/lifecycle_incremental.py --tables 10000 \
        --changed-tables 1000 --repeat 1 --no-double --fast-build --memory \
        [--driver-memory 512m] --output benchmarks/results/lifecycle_scale_10000_tables.json

    .venv/bin/python benchmarks/lifecycle_incremental.py [--tables 1000] [--initial-files 40]
        [--days 30] [--changed-tables 100] [--files-per-change 20] [--repeat 3]
        [--no-double] [--profile] [--fast-build] [--memory] [--driver-memory SIZE] [--base DIR]
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
import subprocess
import sys
import tempfile
import threading
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
SAMPLE_S = 0.2  # --memory: seconds between two samples of the run's process tree
LIMIT_MB = 2048  # issue 28 item 5: the driver's peak memory


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


# --- --memory: the run in a child process, its process tree sampled -------------------------


def _status(pid: int) -> dict[str, str]:
    """``/proc/<pid>/status`` as a dict (empty when the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def _kb(status: dict[str, str], key: str) -> int:
    return int(status.get(key, "0 kB").split()[0])


def _pss_kb(pid: int) -> int:
    """The process's proportional set size (``/proc/<pid>/smaps_rollup``): each page it
    shares with others (a PySpark worker with the daemon it was forked from) counted in
    proportion, so that a tree's sum is the memory it holds; 0 when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith("Pss:")), 0)


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (from each process's parent in /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def role(pid: int, root: int, status: dict[str, str]) -> str:
    if pid == root:
        return "python_driver"
    return "jvm" if status.get("Name", "").startswith("java") else "python_workers"


class TreeSampler:
    """Samples a process tree's memory every :data:`SAMPLE_S` s on a thread of its own:
    each process's ``VmHWM`` (exact peak) and the tree's summed ``VmRSS``, by role."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.hwm: dict[int, tuple[str, int]] = {}  # pid -> (role, peak kB)
        self.peak_total = 0
        self.peak_by_role: dict[str, int] = {}
        self.peak_pss_total = 0  # proportional set size: shared pages counted once in all
        self.peak_pss_by_role: dict[str, int] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(SAMPLE_S)

    def sample(self) -> None:
        total = pss_total = 0
        by_role: dict[str, int] = {}
        pss_by_role: dict[str, int] = {}
        for pid in descendants(self.root):
            status = _status(pid)
            if not status:
                continue
            rss, hwm, pss = _kb(status, "VmRSS"), _kb(status, "VmHWM"), _pss_kb(pid)
            kind = role(pid, self.root, status)
            self.hwm[pid] = (kind, max(hwm, self.hwm.get(pid, (kind, 0))[1]))
            total += rss
            pss_total += pss
            by_role[kind] = by_role.get(kind, 0) + rss
            pss_by_role[kind] = pss_by_role.get(kind, 0) + pss
        self.samples += 1
        self.peak_total = max(self.peak_total, total)
        self.peak_pss_total = max(self.peak_pss_total, pss_total)
        for kind, rss in by_role.items():
            self.peak_by_role[kind] = max(self.peak_by_role.get(kind, 0), rss)
        for kind, pss in pss_by_role.items():
            self.peak_pss_by_role[kind] = max(self.peak_pss_by_role.get(kind, 0), pss)

    def report(self) -> dict[str, Any]:
        def mb(kb: int) -> float:
            return round(kb / 1024, 1)

        peaks = {
            kind: mb(max((kb for k, kb in self.hwm.values() if k == kind), default=0))
            for kind in ("python_driver", "jvm")
        }
        return {
            "python_driver_peak_rss_mb": peaks["python_driver"],
            "jvm_peak_rss_mb": peaks["jvm"],
            "python_workers_peak_rss_mb_sampled": mb(self.peak_by_role.get("python_workers", 0)),
            "total_peak_rss_mb_sampled": mb(self.peak_total),
            "python_workers_peak_pss_mb_sampled": mb(
                self.peak_pss_by_role.get("python_workers", 0)
            ),
            "total_peak_pss_mb_sampled": mb(self.peak_pss_total),
            "total_upper_bound_mb": mb(sum(kb for _, kb in self.hwm.values())),
            "processes_seen": len(self.hwm),
            "samples": self.samples,
            "sample_interval_s": SAMPLE_S,
            "method": "python_driver and jvm: VmHWM of the process (exact peak); workers and "
            "total: the summed VmRSS of the process tree, sampled (pss: the summed "
            "proportional set sizes, shared pages counted once); upper bound: the sum "
            "of every process's VmHWM",
        }


def lifecycle_in_child(
    home: Path, night: datetime
) -> tuple[float, list[dict[str, Any]], dict[str, Any]]:
    """One ``run_lifecycle`` by a child process (:func:`child_main`), its tree sampled."""
    command = [sys.executable, __file__, "--child-run", str(home), night.isoformat()]
    with tempfile.NamedTemporaryFile("w+", suffix=".json") as out:
        child = subprocess.Popen(command, stdout=out)
        with TreeSampler(child.pid) as sampler:
            code = child.wait()
        if code != 0:
            raise SystemExit(f"the lifecycle run's child failed with exit code {code}")
        out.seek(0)
        result = json.loads(out.read().strip().splitlines()[-1])  # its last line
    memory = {**sampler.report(), **result["memory"]}
    # Issue 28 item 5 bounds the driver (the Python driver and its JVM: the sum of their
    # exact peaks, an upper bound of their peak together); the whole tree, which adds the
    # executors' Python workers (on a cluster: the workers' machines), is judged too.
    memory["driver_peak_rss_mb"] = round(
        memory["python_driver_peak_rss_mb"] + memory["jvm_peak_rss_mb"], 1
    )
    memory["driver_within_2_gb"] = memory["driver_peak_rss_mb"] <= LIMIT_MB
    memory["within_2_gb"] = memory["total_peak_rss_mb_sampled"] <= LIMIT_MB
    return result["seconds"], result["steps"], memory


def child_main(home: Path, night: datetime) -> int:
    """The child of :func:`lifecycle_in_child`: start Spark, run the lifecycle, write
    seconds, steps and the peaks after each step as JSON on stdout."""
    from rewind import runner

    spark_s = warm_spark(home)
    jvm = [p for p in descendants(os.getpid()) if _status(p).get("Name", "").startswith("java")]
    after: dict[str, dict[str, float]] = {}

    def peaks() -> dict[str, float]:
        own = _status(os.getpid())
        out = {
            "python_driver_rss_mb": round(_kb(own, "VmRSS") / 1024, 1),
            "python_driver_peak_mb": round(_kb(own, "VmHWM") / 1024, 1),
        }
        for pid in jvm:
            out["jvm_peak_mb"] = round(_kb(_status(pid), "VmHWM") / 1024, 1)
        return out

    def wrapped(name: str, step: Any) -> Any:
        def run(ctx: Any) -> dict[str, Any]:
            summary = step(ctx)
            after[name] = peaks()
            return dict(summary)

        return run

    runner.STEPS.update({name: wrapped(name, step) for name, step in runner.STEPS.items()})
    before = peaks()
    seconds, steps, _ = lifecycle(home, night, False)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "steps": steps,
                "memory": {
                    "spark_start_seconds_untimed": round(spark_s, 1),
                    "before_run": before,
                    "after_each_step": after,
                },
            }
        )
    )
    return 0


def warm_spark(home: Path) -> float:
    """Start the run's SparkSession before timing: a JVM start is not lifecycle work."""
    from rewind.spark import get_spark

    config = Config.load(home=home)
    start = time.perf_counter()
    get_spark(config.spark_master, config.home / "logs" / "spark.log")
    return time.perf_counter() - start


def night_report(
    ledger: Ledger, home: Path, night: datetime, profile: bool, memory: bool = False
) -> dict[str, Any]:
    """Vacuum baseline, then the Rewind run, then the check of both against the ledger."""
    warehouse = home / "warehouse"
    vacuum_s, vacuumed = vacuum_all(ledger, warehouse, night)
    measured = None
    if memory:
        rewind_s, steps, measured = lifecycle_in_child(home, night)
        profiled = None
    else:
        warm_spark(home)
        rewind_s, steps, profiled = lifecycle(home, night, profile)
    print(f"  rewind run of {night.isoformat()}: {rewind_s:.1f} s", file=sys.stderr)
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
    if measured is not None:
        report["memory"] = measured
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


def measure(
    shape: Shape,
    repeat: int,
    profile: bool,
    fast: bool = False,
    memory: bool = False,
    scratch: Path | None = None,
) -> dict[str, Any]:
    """Build one warehouse, time its first full run, then the next night's run ``repeat``
    times, each on its own copy of the same prepared home (one run: on the home itself).
    ``memory``: each run in a child process, its memory sampled (:func:`lifecycle_in_child`)."""
    base = Path(tempfile.mkdtemp(prefix="rewind-lifecycle-bench-", dir=scratch))
    home = base / "home"
    try:
        start = time.perf_counter()
        ledger = build(home, shape, fast)
        build_s = time.perf_counter() - start
        print(f"  built in {build_s:.0f} s", file=sys.stderr)
        spark_s = 0.0 if memory else warm_spark(home)
        first = median_of([night_report(ledger, home, night_after(shape.days), profile, memory)])
        change_day(home, shape, ledger, shape.days + 1)
        nights = []
        for rep in range(repeat):
            copy = home if repeat == 1 else base / f"next-night-{rep}"
            if copy != home:
                clone_home(home, copy)
            night = night_after(shape.days + 1)
            nights.append(night_report(ledger, copy, night, profile, memory))
            if copy != home:
                shutil.rmtree(copy, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        **shape.described(),
        "build_seconds": round(build_s, 1),
        "fast_build": fast,
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
    parser.add_argument(
        "--memory",
        action="store_true",
        help="each run in a child process whose tree's memory is sampled (issue 28 item 5)",
    )
    parser.add_argument(
        "--driver-memory", help="the lifecycle run's JVM heap, as spark-submit's --driver-memory"
    )
    parser.add_argument(
        "--base", type=Path, default=None, help="the directory to build in (default: the temp dir)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--child-run", nargs=2, metavar=("HOME", "NIGHT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_run:
        return child_main(Path(args.child_run[0]), datetime.fromisoformat(args.child_run[1]))
    if args.driver_memory:  # every Spark JVM started from here on, the runs' children too
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {args.driver_memory} pyspark-shell"
    shapes = Shape.of(args)
    warehouses = []
    for each in shapes:
        print(f"building {each.tables} tables, {each.files} data files ...", file=sys.stderr)
        warehouses.append(
            measure(each, args.repeat, args.profile, args.fast_build, args.memory, args.base)
        )
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
    if args.memory:
        report["driver_memory"] = {
            run: {
                key: base[run]["memory"][key]
                for key in (
                    "python_driver_peak_rss_mb",
                    "jvm_peak_rss_mb",
                    "python_workers_peak_rss_mb_sampled",
                    "python_workers_peak_pss_mb_sampled",
                    "total_peak_rss_mb_sampled",
                    "total_peak_pss_mb_sampled",
                    "driver_peak_rss_mb",
                    "driver_within_2_gb",
                    "within_2_gb",
                )
            }
            for run in ("first_full_run", "incremental_run")
        }
        report["driver_memory"]["limit_mb"] = LIMIT_MB
        report["driver_memory"]["spark_driver_memory"] = args.driver_memory or "1g (default)"
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
