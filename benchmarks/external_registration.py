"""Registering a lakehouse's existing Delta tables, and the nights after (SPEC R41, R42).

A plain PySpark job with delta-spark (``examples/orders_job.py``'s session, no Rewind
code) writes DISTINCT Delta tables: each gets ROWS rows in two files (version 0), then a
DELETE that rewrites them (version 1). Their directories are then copied to TABLES
locations (a Delta table is its directory; delta-spark commits at about one a second
here, so writing a thousand tables one by one would take the benchmark half an hour —
the copies are byte-identical delta-spark tables, sharing their Delta table id). Commit
times are the wall clock's (the copies' log files are touched, as a copy does). Then,
timed in this process, each side by side with a named baseline:

(a) ``CREATE EXTERNAL TABLE`` of every table in one Rewind session (the log read, the
    columns, the R42 retention guard committed to each table) — against
    ``open_each_log_delta_rs``: opening every table with delta-rs and listing its files
    and schema, the least any registration must do;
(b) the first nightly lifecycle, two days on (every table's log is new to the catalog;
    the files the DELETE removed have left time travel and move to fail-safe), and
    (c) the next night's (nothing changed: SPEC R32, the run reads no log) — each against
    ``vacuum_dry_run_delta_rs``: ``DeltaTable.vacuum(dry_run=True)`` over every table,
    what a team runs today to find the same expired files. Every removal happened
    before the benchmark's wall clock and more than the retention before the night, so
    a dry run with no retention finds exactly the files Rewind must move.

Spark's JVM is started and Great Expectations imported before (b) is timed (one-time
costs of a process, reported apart). Results go to
benchmarks/results/external_registration.json.

    .venv/bin/python benchmarks/external_registration.py [--tables 1000] [--distinct 10]
        [--rows 100]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from deltalake import DeltaTable
from report import write_report

import rewind
from rewind.config import Config
from rewind.runner import run_lifecycle
from rewind.spark import DEFAULT_DELTA_JARS, get_spark

REPO = Path(__file__).resolve().parents[1]
RETENTION_DAYS = 1
WRITER = """
import sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, sys.argv[1])
from delta.tables import DeltaTable
from orders_job import session
spark = session("bench-writer")
root, tables, rows = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def write(i):
    path = f"{root}/t{i:05d}"
    spark.range(rows + i).repartition(2).write.format("delta").save(path)
    DeltaTable.forPath(spark, path).delete("id < 5")
with ThreadPoolExecutor(2) as pool:  # Spark runs jobs from two threads side by side
    list(pool.map(write, range(tables)))
spark.stop()
"""


def write_tables(root: Path, tables: int, distinct: int, rows: int) -> float:
    """The team's job writes ``distinct`` tables; copies bring them to ``tables``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    env["DELTA_JARS"] = str(os.environ.get("REWIND_DELTA_JARS") or DEFAULT_DELTA_JARS)
    start = time.perf_counter()
    job = [sys.executable, "-c", WRITER, str(REPO / "examples"), str(root), str(distinct)]
    subprocess.run([*job, str(rows)], env=env, check=True, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    for i in range(distinct, tables):
        shutil.copytree(root / f"t{i % distinct:05d}", root / f"t{i:05d}")
    return seconds


def timed(action: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def open_each_log(tables: list[Path]) -> int:
    opened = [DeltaTable(str(table)) for table in tables]
    return sum(len(t.file_uris()) + len(t.schema().fields) for t in opened)


def register(home: Path, tables: list[Path], now: datetime) -> None:
    with rewind.connect(home=home, now=now.isoformat()) as conn:
        conn.sql(f"CREATE DATABASE LAKE DATA_RETENTION_TIME_IN_DAYS = {RETENTION_DAYS}")
        for table in tables:
            conn.sql(
                f"CREATE EXTERNAL TABLE LAKE.PUBLIC.{table.name.upper()} "
                f"LOCATION = '{table.as_uri()}' TABLE_FORMAT = DELTA"
            )


def vacuum_all(tables: list[Path]) -> set[str]:
    """delta-rs dry-run vacuum of every table: every file no version references."""
    found: set[str] = set()
    for table in tables:
        paths = DeltaTable(str(table)).vacuum(
            retention_hours=0, dry_run=True, enforce_retention_duration=False
        )
        found.update(f"{table.name}/{path}" for path in paths)
    return found


def night(home: Path, tables: list[Path], when: datetime) -> dict[str, Any]:
    """One lifecycle run at ``when``, and the baseline's dry run over the same tables."""
    vacuum_s, expired = timed(lambda: vacuum_all(tables))
    rewind_s, steps = timed(lambda: run_lifecycle(Config.load(home=home), when))
    moved = next(s for s in steps if s["step"] == "expire_versions")["files_moved"]
    return {
        "rewind_seconds": round(rewind_s, 3),
        "vacuum_dry_run_delta_rs_seconds": round(vacuum_s, 3),
        "ratio_vacuum_over_rewind": round(vacuum_s / rewind_s, 3),
        "files_moved_to_failsafe": moved,
        "files_vacuum_would_delete": len(expired),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--distinct", type=int, default=10)
    parser.add_argument("--rows", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rewind-bench-external-") as tmp:
        root, home = Path(tmp) / "lake", Path(tmp) / "home"
        root.mkdir()
        write_s = write_tables(root, args.tables, min(args.distinct, args.tables), args.rows)
        tables = sorted(root.iterdir())
        written = datetime.now(UTC)
        open_s, _ = timed(lambda: open_each_log(tables))
        register_s, _ = timed(lambda: register(home, tables, written + timedelta(minutes=1)))
        config = Config.load(home=home)
        jvm_s, _ = timed(lambda: get_spark(config.spark_master, home / "logs" / "spark.log"))
        gx_s, _ = timed(lambda: importlib.import_module("great_expectations"))
        first = night(home, tables, written + timedelta(days=2))
        second = night(home, tables, written + timedelta(days=3))
    write_report(
        "external_registration",
        {
            "shape": {
                "tables": args.tables,
                "distinct_tables_written_by_delta_spark": args.distinct,
                "rows": args.rows,
                "retention_days": RETENTION_DAYS,
            },
            "delta_spark_write_seconds": round(write_s, 1),
            "registration": {
                "rewind_seconds": round(register_s, 3),
                "per_table_ms": round(1000 * register_s / args.tables, 1),
                "open_each_log_delta_rs_seconds": round(open_s, 3),
                "ratio_rewind_over_open": round(register_s / open_s, 2),
            },
            "spark_start_seconds": round(jvm_s, 1),
            "great_expectations_import_seconds": round(gx_s, 1),
            "first_night": first,
            "next_night": second,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
