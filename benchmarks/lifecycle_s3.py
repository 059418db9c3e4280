"""The nightly lifecycle on S3, counted in requests (issue 28, SPEC R32, R48, R50).

Starts a SeaweedFS server on loopback (rewind/seaweedfs.py, with its Prometheus port) and
builds the synthetic warehouse of lifecycle_incremental.py (benchmarks/warehouse.py) in a
bucket: Rewind's warehouse, its system tables and its fail-safe store under
``s3://<bucket>/warehouse``, ``/system`` and ``/failsafe`` (REWIND_WAREHOUSE_URI,
REWIND_SYSTEM_URI, REWIND_FAILSAFE_URI; the AWS variables of the server in this process's
environment, so the JVM started here reads them too). Then, for the first lifecycle run
and for the next night (after one more simulated day of changes), on the same bucket:

1. delta-rs: ``DeltaTable(uri, storage_options).vacuum(dry_run=True)`` for every table;
2. delta-spark: ``VACUUM delta.`s3a://...` RETAIN n HOURS DRY RUN`` for every table, then
   the same ``LITE``, from one Spark session (Rewind's, its JVM started before timing;
   Delta's cache of table logs emptied before each loop, as a nightly job's new session
   starts without one);
3. first night only, the floor: a plain thread pool (``--floor-threads``, one boto3 client
   made as Rewind makes its own) moving the files Rewind moves that night: CopyObject,
   a HEAD to verify the copy's size, DeleteObjects of the sources, 1,000 keys a request;
   and DeleteObjects of the copies whose fail-safe has ended too (Rewind's purge);
4. Rewind's ``run_lifecycle`` (its SparkSession started before timing).

Each is timed by the wall clock and counted in requests by type, the delta of SeaweedFS's
``SeaweedFS_s3_request_total{bucket, type}`` counters around it (Rewind's run also step
by step: ``steps_requests``). The vacuum cutoffs are
aligned with Rewind's clock (warehouse.py, ``retain_hours``).

Order. The baselines of a night run before Rewind's run of that night, since Rewind moves
the expired files away. The floor also runs before Rewind's first run, on copies: the files
the ledger says expire that night are copied (untimed) to ``floor/source/``, the floor
moves those copies to ``floor/failsafe/`` (timed and counted) and ``floor/`` is deleted
(untimed) before Rewind runs; so Rewind meets the bucket as it would without the floor, and
neither reads objects the other just touched. That the ledger's files are the ones Rewind
moves is checked after its run.

What each finds is compared with the ledger. The first night, every finder should report
exactly the expired files. The next night, Rewind moves only the files that expire that
night; the vacuums, which keep no state, still see the remove actions of the files Rewind's
first run moved away: those are reported apart (``already_moved``), and a baseline matches
when it finds every file that expires that night. delta-spark's VACUUM judges time by the
store's own clock too: a full VACUUM takes a file only when its modification time is older
than the cutoff, and VACUUM LITE reads only the commits whose timestamp (the commit
object's modification time: the tables have no in-commit timestamps) is older than it. The
history is synthetic, dated in 2025 by Rewind's clock, while every object was written
today, so both find none of its expired files (:data:`SPARK_NOTE`): their wall time and
requests are those of a nightly VACUUM DRY RUN loop over these tables (the log replay,
and a full VACUUM's listing), their answers are reported and not required to match.

Then the warehouse is built again with twice the tables and the same daily change, in a
bucket of its own: its first night is Rewind's run only, its next night Rewind's run and
the delta-rs sweep (the delta-spark loops' growth is no target of issue 28, and over 2,000
tables they take an hour on two cores); the JSON gives the next night's growth (SPEC R32:
Rewind's should not grow).

The delta-spark loops take minutes per hundred tables on two cores. ``--spark-tables N``
runs both on a sample of N tables (the same ones for both loops, chosen by a seeded
random draw: :func:`spark_sample`) instead of all: the phase's entry then holds the
figures measured on the sample (``sample``) and their per-table extrapolation to all the
warehouse's tables (``extrapolated_to_all_tables``: seconds and requests of each type
times tables / sample), and the summary's ratios that use them end in ``_extrapolated``.
At the end a table of every phase's seconds and requests is printed on stderr (stdout
has the JSON), extrapolated rows marked as such.

``--memory`` (issue 28 item 5): Rewind's runs are made by a child process each, whose
process tree's memory is sampled as lifecycle_incremental.py's ``--memory`` does (its
requests are counted for the whole run, not step by step); ``--rewind-only`` leaves out
every baseline and the floor (the warehouse at 10,000 tables, where a delta-rs sweep
alone takes minutes); ``--fast-build`` builds it as benchmarks/warehouse.py says.

Ctrl-C, SIGTERM or an exception stops the Spark session and its JVM, then SeaweedFS,
before the process exits (:func:`stop_spark`): neither is left running.

    .venv/bin/python benchmarks/lifecycle_s3.py [--tables 1000] [--initial-files 40]
        [--days 30] [--changed-tables 100] [--files-per-change 20] [--floor-threads 8]
        [--spark-tables N] [--spark-tables-first-night N] [--driver-memory 4g] [--no-double]
        [--output benchmarks/results/lifecycle_s3.json]
        [--fast-build] [--memory] [--rewind-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

from deltalake import DeltaTable
from lifecycle_incremental import LIMIT_MB, lifecycle_in_child
from warehouse import FileKey, Ledger, Shape, build, change_day, night_after, retain_hours

from rewind.config import Config
from rewind.runner import run_lifecycle
from rewind.seaweedfs import REQUESTS as COUNTER
from rewind.seaweedfs import SeaweedFS
from rewind.storage import objectstore
from rewind.storage.objectstore import S3Location

RESULTS = Path(__file__).parent / "results" / "lifecycle_s3.json"
SPARK_NOTE = (
    "delta-spark's VACUUM finds none of the synthetic history's expired files: a full "
    "VACUUM requires a file's modification time to be older than the cutoff, LITE reads only "
    "commits whose modification time is; the history is dated in 2025 (Rewind's clock) but "
    "every object was written today. Its time and requests are reported, its answer is not "
    "required to match."
)
SPARK_PHASES = ("delta_spark_vacuum_dry_run", "delta_spark_vacuum_lite_dry_run")
DELETE_BATCH = 1000  # keys in one DeleteObjects request
SAMPLE_SEED = 28  # draws the delta-spark loops' sample of tables (--spark-tables); any fixed seed
JVM_EXIT_S = 30.0  # how long the Spark JVM gets to exit before it is killed


# --- requests ------------------------------------------------------------------------------


@contextmanager
def counted(server: SeaweedFS, into: dict[str, Any], *buckets: str) -> Iterator[None]:
    """Time the block and count its requests to ``buckets`` into ``into`` (``seconds``,
    ``requests`` by type, ``requests_total``)."""

    def now() -> Counter[str]:
        return sum((server.requests(bucket) for bucket in buckets), Counter())

    before = now()
    start = time.perf_counter()
    yield
    into["seconds"] = round(time.perf_counter() - start, 3)
    after = now()
    delta = {kind: after[kind] - before[kind] for kind in sorted(after)}
    into["requests"] = {kind: n for kind, n in delta.items() if n}
    into["requests_total"] = sum(delta.values())


@contextmanager
def steps_counted(server: SeaweedFS, bucket: str, into: dict[str, Any]) -> Iterator[None]:
    """Count the requests of each step of ``run_lifecycle`` in the block into ``into``
    (step -> requests by type): each step of ``rewind.runner.STEPS`` wrapped for the block
    (the server counts the executors' requests as the driver's)."""
    from rewind import runner

    saved = dict(runner.STEPS)

    def wrapped(name: str, step: Callable[[Any], dict[str, Any]]) -> Callable[[Any], Any]:
        def run(ctx: Any) -> dict[str, Any]:
            entry: dict[str, Any] = {}
            with counted(server, entry, bucket):
                summary = step(ctx)
            into[name] = entry["requests"]
            return summary

        return run

    runner.STEPS.update({name: wrapped(name, step) for name, step in saved.items()})
    try:
        yield
    finally:
        runner.STEPS.update(saved)


# --- the bucket ----------------------------------------------------------------------------


def keys(client: Any, bucket: str, prefix: str) -> dict[str, int]:
    """Every object under ``prefix`` (key -> size)."""
    found: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found.update({item["Key"]: int(item["Size"]) for item in page.get("Contents", [])})
    return found


def object_key(ledger: Ledger, table_id: int, path: str) -> str:
    """The object key of a data file of the warehouse (in the bucket: the benchmark's)."""
    where = ledger.table_root(table_id) / path
    assert isinstance(where, S3Location)
    return where.key


def in_tables(client: Any, ledger: Ledger) -> set[FileKey]:
    """The ledger's removed files still in their tables (one listing, not counted)."""
    assert isinstance(ledger.root, S3Location)
    there = keys(client, ledger.root.bucket, ledger.root.prefix)
    return {key for key in ledger.removed if (ledger.root / str(key[0]) / key[1]).key in there}


def delete_keys(client: Any, bucket: str, names: list[str]) -> None:
    for start in range(0, len(names), DELETE_BATCH):
        batch = [{"Key": key} for key in names[start : start + DELETE_BATCH]]
        answer = client.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
        if answer.get("Errors"):
            raise RuntimeError(f"DeleteObjects refused: {answer['Errors'][:1]}")


# --- the finders ---------------------------------------------------------------------------


def by_name(table_id: int, paths: list[str]) -> set[FileKey]:
    """Files as a finder names them (relative, or a URI) -> ledger keys: every data file
    of the synthetic tables lies right under its table's root."""
    return {(table_id, str(path).rstrip("/").rsplit("/", 1)[-1]) for path in paths}


def delta_rs_sweep(ledger: Ledger, night: datetime) -> set[FileKey]:
    options = objectstore.delta_rs_options(objectstore.settings())
    found: set[FileKey] = set()
    for table_id, days in ledger.retention.items():
        table = DeltaTable(str(ledger.table_root(table_id)), storage_options=options)
        paths = table.vacuum(
            retention_hours=retain_hours(night, days),
            dry_run=True,
            enforce_retention_duration=False,
        )
        found |= by_name(table_id, list(paths))
    return found


def spark_vacuum(spark: Any, ledger: Ledger, night: datetime, mode: str) -> set[FileKey]:
    """delta-spark's ``VACUUM delta.`uri` [LITE] RETAIN n HOURS DRY RUN`` for every table.
    Rewind's sessions refuse SQL on paths (``spark.sql.runSQLOnFiles``, SPEC R38); a team's
    maintenance job names its tables by path, so it is allowed for the loop. A full VACUUM
    lists a table's files in a Spark job of ``parallelPartitionDiscovery.parallelism``
    tasks, 10,000 by default: minutes for a table of 20 files on two cores, so the loop
    uses the session's parallelism (``local[2]``: 2), as a tuned maintenance job would."""
    found: set[FileKey] = set()
    tuned = {
        "spark.sql.runSQLOnFiles": "true",
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": str(
            spark.sparkContext.defaultParallelism
        ),
    }
    saved = {key: spark.conf.get(key) for key in tuned}
    for key, value in tuned.items():
        spark.conf.set(key, value)
    try:
        for table_id, days in ledger.retention.items():
            uri = "s3a" + str(ledger.table_root(table_id)).removeprefix("s3")
            rows = spark.sql(
                f"VACUUM delta.`{uri}` {mode} RETAIN {retain_hours(night, days)} HOURS DRY RUN"
            ).collect()
            found |= by_name(table_id, [row[0] for row in rows])
    finally:
        for key, value in saved.items():
            spark.conf.set(key, value)
    return found


def fresh_delta_cache(spark: Any) -> None:
    """Forget the table logs Delta cached: a nightly job's new session has none."""
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()


def spark_sample(ledger: Ledger, count: int | None) -> Ledger:
    """The tables the delta-spark loops visit: all of them (``count`` None or at least the
    warehouse's), else ``count`` tables drawn by a random generator seeded with
    :data:`SAMPLE_SEED` from the sorted table ids (so the same tables at every run of the
    same shape, and every retention and change pattern in proportion, on average)."""
    ids = sorted(ledger.retention)
    if count is None or count >= len(ids):
        return ledger
    chosen = sorted(random.Random(SAMPLE_SEED).sample(ids, count))
    return Ledger(ledger.root, retention={t: ledger.retention[t] for t in chosen})


def extrapolated(measured: dict[str, Any], sample: int, tables: int) -> dict[str, Any]:
    """A sample's seconds and requests (of ``sample`` tables) scaled to ``tables`` tables
    by the per-table mean; each request type rounded, the total their sum."""
    scale = tables / sample
    scaled = {kind: round(n * scale) for kind, n in measured["requests"].items()}
    return {
        "tables": tables,
        "seconds": round(measured["seconds"] * scale, 3),
        "requests_total": sum(scaled.values()),
        "requests": scaled,
        "method": f"per-table mean of the sample x {tables} tables (measured on {sample})",
    }


def figures(entry: dict[str, Any]) -> dict[str, Any]:
    """A phase's seconds and requests for the whole warehouse: measured, or extrapolated
    from a sample (:func:`extrapolated`)."""
    whole: dict[str, Any] = entry.get("extrapolated_to_all_tables", entry)
    return whole


def floor_move(client: Any, bucket: str, moves: list[tuple[str, str, int]], threads: int) -> None:
    """The floor: copy each (source, target) server-side, verify the copy's size by a HEAD,
    then delete the sources, 1,000 keys a request."""

    def one(move: tuple[str, str, int]) -> None:
        source, target, size = move
        client.copy_object(Bucket=bucket, Key=target, CopySource={"Bucket": bucket, "Key": source})
        if int(client.head_object(Bucket=bucket, Key=target)["ContentLength"]) != size:
            raise RuntimeError(f"copy of {source} differs in size")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, moves))
        batches = [
            [source for source, _, _ in moves[start : start + DELETE_BATCH]]
            for start in range(0, len(moves), DELETE_BATCH)
        ]
        list(pool.map(lambda names: delete_keys(client, bucket, names), batches))


# --- one night -----------------------------------------------------------------------------


def compare(found: set[FileKey], tonight: set[FileKey], gone: set[FileKey]) -> dict[str, Any]:
    """A finder's answer against the files that expire tonight (``tonight``) and those a
    previous run moved away already (``gone``)."""
    return {
        "found": len(found),
        "matches": tonight <= found and not (found - tonight - gone),
        "missing": len(tonight - found),
        "already_moved": len(found & gone),
        "unexpected": len(found - tonight - gone),
    }


class Night:
    """The measurements of one night on one warehouse."""

    def __init__(self, bench: Bench, ledger: Ledger, night: datetime) -> None:
        self.bench, self.ledger, self.night = bench, ledger, night
        self.present = in_tables(bench.client, ledger)
        self.gone = set(ledger.removed) - self.present
        self.tonight = ledger.expired(night) - self.gone
        self.floor_files: set[FileKey] = set()
        self.report: dict[str, Any] = {
            "night": night.isoformat(),
            "expiring_tonight": len(self.tonight),
            "moved_by_earlier_runs": len(self.gone),
        }

    def phase(
        self, name: str, finder: Callable[[], set[FileKey]], sample: Ledger | None = None
    ) -> None:
        """Time and count ``finder`` and compare its answer; run on ``sample`` (fewer
        tables than the ledger's), measured on those tables and extrapolated to all."""
        measured: dict[str, Any] = {}
        with counted(self.bench.server, measured, self.bench.bucket):
            found = finder()
        tables = len(self.ledger.retention)
        if sample is None or len(sample.retention) >= tables:
            entry = {**measured, **compare(found, self.tonight, self.gone)}
        else:
            size = len(sample.retention)
            ours = {key for key in self.tonight | self.gone if key[0] in sample.retention}
            entry = {
                "sample": {
                    "tables": size,
                    "of_tables": tables,
                    "seed": SAMPLE_SEED,
                    **measured,
                    **compare(found, self.tonight & ours, self.gone & ours),
                },
                "extrapolated_to_all_tables": extrapolated(measured, size, tables),
            }
        self.report[name] = entry
        print(f"  {name}: {entry}", file=sys.stderr)

    def baselines(self, spark_tables: int | None, spark_loops: bool = True) -> None:
        self.phase("delta_rs_vacuum_dry_run", lambda: delta_rs_sweep(self.ledger, self.night))
        if not spark_loops:
            return
        spark = self.bench.spark()
        sample = spark_sample(self.ledger, spark_tables)
        fresh_delta_cache(spark)
        self.phase(
            "delta_spark_vacuum_dry_run",
            lambda: spark_vacuum(spark, sample, self.night, ""),
            sample,
        )
        fresh_delta_cache(spark)
        self.phase(
            "delta_spark_vacuum_lite_dry_run",
            lambda: spark_vacuum(spark, sample, self.night, "LITE"),
            sample,
        )

    def floor(self, threads: int) -> None:
        """Move copies of tonight's files as Rewind will (see the module docstring)."""
        client, bucket = self.bench.client, self.bench.bucket
        purge = self.ledger.past_failsafe(self.night) & self.tonight
        staged = [
            (
                object_key(self.ledger, t, path),
                f"floor/source/{t}/{path}",
                f"floor/failsafe/{t}/{path}",
                self.ledger.sizes[(t, path)],
                (t, path) in purge,
            )
            for t, path in sorted(self.tonight)
        ]
        with ThreadPoolExecutor(threads) as pool:  # untimed: the copies the floor moves
            list(
                pool.map(
                    lambda s: client.copy_object(
                        Bucket=bucket, Key=s[1], CopySource={"Bucket": bucket, "Key": s[0]}
                    ),
                    staged,
                )
            )
        self.floor_files = {(t, path) for t, path in self.tonight}
        entry: dict[str, Any] = {"threads": threads, "files_moved": len(staged)}
        with counted(self.bench.server, entry, bucket):
            floor_move(client, bucket, [(s[1], s[2], s[3]) for s in staged], threads)
            delete_keys(client, bucket, [s[2] for s in staged if s[4]])
        entry["files_purged"] = sum(s[4] for s in staged)
        delete_keys(client, bucket, sorted(keys(client, bucket, "floor/")))
        self.report["floor_thread_pool"] = entry
        print(f"  floor: {entry}", file=sys.stderr)

    def rewind(self, memory: bool = False) -> None:
        entry: dict[str, Any] = {}
        server, bucket = self.bench.server, self.bench.bucket
        if memory:  # a child process of its own (lifecycle_incremental.lifecycle_in_child)
            with counted(server, entry, bucket):
                seconds, steps, entry["memory"] = lifecycle_in_child(self.bench.home, self.night)
            # the run's own seconds; the child's (with its Spark start) apart
            entry["child_process_seconds"] = entry["seconds"]
            entry["seconds"] = round(seconds, 3)
        else:
            self.bench.spark()
            by_step: dict[str, Any] = {}
            with counted(server, entry, bucket), steps_counted(server, bucket, by_step):
                steps = run_lifecycle(Config.load(home=self.bench.home), self.night)
            entry["steps_requests"] = by_step
        entry["steps_seconds"] = {s["step"]: s["elapsed_s"] for s in steps}
        entry["summaries"] = [
            {k: v for k, v in s.items() if k not in ("run_id", "elapsed_s")} for s in steps
        ]
        present = in_tables(self.bench.client, self.ledger)
        moved = self.present - present
        entry.update(compare(moved, self.tonight, set()))
        failsafe = keys(self.bench.client, self.bench.bucket, "failsafe/")
        held = self.ledger.expired(self.night) - self.ledger.past_failsafe(self.night)
        entry["failsafe_holds_every_unpurged_file"] = all(
            f"failsafe/{t}/{path}" in failsafe for t, path in held
        )
        tables = keys(self.bench.client, self.bench.bucket, "warehouse/")
        entry["current_files_missing"] = sum(
            object_key(self.ledger, t, f.path) not in tables
            for t, files in self.ledger.current.items()
            for f in files
        )
        self.report["rewind_run_lifecycle"] = entry
        if "floor_thread_pool" in self.report:  # the floor moved what Rewind then moved
            self.report["floor_thread_pool"]["matches"] = self.floor_files == moved
        print(
            f"  rewind: { {k: v for k, v in entry.items() if k != 'summaries'} }", file=sys.stderr
        )


# --- one warehouse -------------------------------------------------------------------------


class Bench:
    """One warehouse in a bucket of its own, with a Rewind home of its own."""

    def __init__(self, server: SeaweedFS, base: Path, shape: Shape, name: str) -> None:
        self.server, self.shape = server, shape
        self.bucket = f"{name}-{secrets.token_hex(3)}"
        self.home = base / name
        server.create_bucket(self.bucket)
        os.environ.update(
            {
                "REWIND_WAREHOUSE_URI": f"s3://{self.bucket}/warehouse",
                "REWIND_SYSTEM_URI": f"s3://{self.bucket}/system",
                "REWIND_FAILSAFE_URI": f"s3://{self.bucket}/failsafe",
            }
        )
        self.client = objectstore.s3_client()

    def spark(self) -> Any:
        """The SparkSession Rewind's run uses (started once, before any timing)."""
        from rewind.spark import get_spark

        config = Config.load(home=self.home)
        spark = get_spark(config.spark_master, config.home / "logs" / "spark.log")
        spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        return spark

    def measure(
        self,
        floor_threads: int,
        base_warehouse: bool,
        spark_tables: tuple[int | None, int | None],
        fast: bool = False,
        memory: bool = False,
        rewind_only: bool = False,
    ) -> dict[str, Any]:
        start = time.perf_counter()
        ledger = build(self.home, self.shape, fast)
        build_s = time.perf_counter() - start
        print(
            f"  built in {build_s:.0f} s ({self.shape.files / build_s:.0f} files/s)",
            file=sys.stderr,
        )
        spark_s = 0.0
        if not rewind_only:
            start = time.perf_counter()
            spark = self.spark()
            spark_s = time.perf_counter() - start
            self.warm(spark, ledger)

        print(f"first night, {self.shape.tables} tables:", file=sys.stderr)
        first = Night(self, ledger, night_after(self.shape.days))
        if base_warehouse and not rewind_only:
            first.baselines(spark_tables[0])
            first.floor(floor_threads)
        first.rewind(memory)
        change_day(self.home, self.shape, ledger, self.shape.days + 1)
        print(f"next night, {self.shape.tables} tables:", file=sys.stderr)
        second = Night(self, ledger, night_after(self.shape.days + 1))
        if not rewind_only:
            second.baselines(spark_tables[1], spark_loops=base_warehouse)
        second.rewind(memory)
        return {
            **self.shape.described(),
            "bucket": self.bucket,
            "build_seconds": round(build_s, 1),
            "fast_build": fast,
            "build_files_per_second": round(self.shape.files / build_s),
            "spark_start_seconds_untimed": round(spark_s, 1),
            "first_night": first.report,
            "next_night": second.report,
        }

    def warm(self, spark: Any, ledger: Ledger) -> None:
        """One untimed call of each client on one table (s3a's file system, delta-rs's
        runtime, Delta's code paths), so no phase pays a first call's set-up."""
        one = {next(iter(ledger.retention)): 1}
        sample = Ledger(ledger.root, retention=one)
        delta_rs_sweep(sample, night_after(0))
        spark_vacuum(spark, sample, night_after(0), "LITE")
        fresh_delta_cache(spark)


# --- the report ----------------------------------------------------------------------------

PHASES = (
    "rewind_run_lifecycle",
    "delta_rs_vacuum_dry_run",
    "delta_spark_vacuum_dry_run",
    "delta_spark_vacuum_lite_dry_run",
    "floor_thread_pool",
)


FIGURES = ("seconds", "requests_total", "requests")


def brief(night: dict[str, Any]) -> dict[str, Any]:
    """A night's seconds and requests, phase by phase (a sampled phase's as measured on
    its sample and as extrapolated to all tables)."""
    out: dict[str, Any] = {}
    for phase in (p for p in PHASES if p in night):
        entry = night[phase]
        if "sample" in entry:
            sample = entry["sample"]
            whole = entry["extrapolated_to_all_tables"]
            out[phase] = {
                "sample": {k: sample[k] for k in ("tables", *FIGURES, "matches")},
                "extrapolated_to_all_tables": {k: whole[k] for k in ("tables", *FIGURES)},
            }
        else:
            out[phase] = {k: entry[k] for k in (*FIGURES, "matches") if k in entry}
    return out


def sampled(*entries: dict[str, Any]) -> str:
    """``_extrapolated``, the suffix of a figure computed from a sampled phase's."""
    return "_extrapolated" if any("sample" in entry for entry in entries) else ""


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def summary(warehouses: list[dict[str, Any]]) -> dict[str, Any]:
    base = warehouses[0]
    first, second = base["first_night"], base["next_night"]
    rewind_1, rewind_2 = first["rewind_run_lifecycle"], second["rewind_run_lifecycle"]
    out: dict[str, Any] = {
        "first_run": {
            **brief(first),
            "rewind_over_floor_seconds": ratio(
                rewind_1["seconds"], first["floor_thread_pool"]["seconds"]
            ),
            "rewind_over_floor_requests": ratio(
                rewind_1["requests_total"], first["floor_thread_pool"]["requests_total"]
            ),
        },
        "next_night": {
            **brief(second),
            **{
                f"{phase.removesuffix('_dry_run')}_over_rewind_{unit}{sampled(second[phase])}": (
                    ratio(figures(second[phase])[key], rewind_2[key])
                )
                for phase in PHASES[1:4]
                for unit, key in (("seconds", "seconds"), ("requests", "requests_total"))
            },
        },
    }
    if len(warehouses) == 2:
        big = warehouses[1]["next_night"]
        out["next_night_when_tables_double"] = {
            phase: growth(second[phase], big[phase]) for phase in PHASES[:4] if phase in big
        }
    return out


def growth(small: dict[str, Any], big: dict[str, Any]) -> dict[str, Any]:
    """A phase's next night in the warehouse and in the one with twice its tables."""
    mark = sampled(small, big)
    a, b = figures(small), figures(big)
    return {
        f"seconds{mark}": [a["seconds"], b["seconds"]],
        f"seconds_growth{mark}": ratio(b["seconds"], a["seconds"]),
        f"requests{mark}": [a["requests_total"], b["requests_total"]],
        f"requests_growth{mark}": ratio(b["requests_total"], a["requests_total"]),
    }


def printed_table(warehouses: list[dict[str, Any]]) -> str:
    """Every phase's seconds and requests by type, night by night, as text; a sampled
    phase in two rows: measured on its sample, and EXTRAPOLATED to all tables."""
    kinds = sorted(
        {
            kind
            for w in warehouses
            for night in (w["first_night"], w["next_night"])
            for phase in PHASES
            if phase in night
            for entry in (night[phase], night[phase].get("sample", {}))
            for kind in entry.get("requests", {})
        }
    )
    rows = [["warehouse", "night", "phase", "tables", "seconds", "requests", *kinds]]
    for w in warehouses:
        for label, night in (("first", w["first_night"]), ("next", w["next_night"])):
            for phase in (p for p in PHASES if p in night):
                entry = night[phase]
                shown = [(phase, str(w["tables"]), entry)]
                if "sample" in entry:
                    sample = entry["sample"]
                    shown = [
                        (f"{phase} (measured on a sample)", str(sample["tables"]), sample),
                        (
                            f"{phase} (EXTRAPOLATED)",
                            f"{w['tables']} (extrapolated)",
                            entry["extrapolated_to_all_tables"],
                        ),
                    ]
                for name, tables, numbers in shown:
                    rows.append(
                        [
                            f"{w['tables']} tables",
                            label,
                            name,
                            tables,
                            f"{numbers['seconds']:.2f}",
                            str(numbers["requests_total"]),
                            *(str(numbers["requests"].get(kind, 0)) for kind in kinds),
                        ]
                    )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(width) if i < 3 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    return "\n".join(lines)


def all_agree(warehouses: list[dict[str, Any]]) -> bool:
    """Every finder that must match did (delta-spark's answers are reported only)."""
    return all(
        night[phase]["matches"]
        and night[phase].get("failsafe_holds_every_unpurged_file", True)
        and not night[phase].get("current_files_missing", 0)
        for w in warehouses
        for night in (w["first_night"], w["next_night"])
        for phase in PHASES
        if phase in night and phase not in SPARK_PHASES
    )


def stop_spark() -> None:
    """Stop the SparkSession this process started, if any, then its JVM (pyspark's gateway
    process, started to ignore SIGINT: Ctrl-C does not reach it; it exits when its stdin
    closes, which is only when this process has exited), killed if it has not exited
    within :data:`JVM_EXIT_S`. An interrupted stop still ends the JVM."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    gateway, context = SparkContext._gateway, SparkContext._active_spark_context
    process: subprocess.Popen[bytes] | None = getattr(gateway, "proc", None)
    try:
        if context is not None:
            with suppress(Exception):
                context.stop()
    finally:
        if gateway is not None:
            with suppress(Exception):
                gateway.shutdown()
            SparkContext._gateway = SparkContext._jvm = None
        if process is not None:
            end_process(process)


def end_process(process: subprocess.Popen[bytes]) -> None:
    """Close the JVM's stdin (its signal to exit), then SIGTERM, then SIGKILL."""
    with suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    for stop in (lambda: None, process.terminate, process.kill):
        stop()
        try:
            process.wait(timeout=JVM_EXIT_S)
            return
        except subprocess.TimeoutExpired:
            continue


def counter_names(server: SeaweedFS) -> dict[str, list[str]]:
    """The S3 counter families the server exports and the request types counted."""
    text = server.metrics()
    families = sorted(set(re.findall(r"^(SeaweedFS_s3_\w+?)(?:\{| )", text, re.M)))
    types = sorted(set(re.findall(rf'^{COUNTER}\{{[^}}]*type="([^"]*)"', text, re.M)))
    return {"s3_counter_families": families, "request_types_seen": types}


def rewind_only_report(
    args: argparse.Namespace,
    shapes: list[Shape],
    names: dict[str, list[str]],
    warehouses: list[dict[str, Any]],
) -> int:
    """``--rewind-only``: Rewind's runs, their requests and (``--memory``) memory."""
    runs = {
        f"{w['tables']}_tables": {
            night: {
                k: w[night]["rewind_run_lifecycle"][k]
                for k in ("seconds", "requests_total", "requests", "matches", "memory")
                if k in w[night]["rewind_run_lifecycle"]
            }
            for night in ("first_night", "next_night")
        }
        for w in warehouses
    }
    report: dict[str, Any] = {
        "benchmark": "lifecycle_s3",
        "rewind_only": True,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "spark_driver_memory": args.driver_memory or "1g (default)",
        "store": "SeaweedFS (weed mini) on loopback, one bucket per warehouse",
        "request_counter": COUNTER,
        **names,
        "rows_per_file": shapes[0].rows,
        "memory_limit_mb": LIMIT_MB if args.memory else None,
        "all_finders_agree": all_agree(warehouses),
        "rewind_runs": runs,
        "warehouses": warehouses,
    }
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0 if report["all_finders_agree"] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    Shape.add_arguments(parser)
    parser.add_argument(
        "--floor-threads", type=int, default=8, help="the floor's threads (boto3 pool: 10)"
    )
    parser.add_argument(
        "--spark-tables",
        type=int,
        default=None,
        metavar="N",
        help="run the delta-spark VACUUM loops on a seeded sample of N tables, extrapolated "
        "to all (default: every table)",
    )
    parser.add_argument(
        "--spark-tables-first-night",
        type=int,
        default=None,
        metavar="N",
        help="the same for the first night's loops only (default: --spark-tables); the "
        "targets compare the next night's",
    )
    parser.add_argument(
        "--driver-memory",
        help="the benchmark's Spark JVM heap (spark-submit's --driver-memory; default "
        "Spark's 1g): its session runs the delta-spark loops and Rewind's runs",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="Rewind's runs in a child process whose tree's memory is sampled",
    )
    parser.add_argument(
        "--rewind-only", action="store_true", help="no baseline, no floor: Rewind's runs only"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    first_night_tables = args.spark_tables_first_night or args.spark_tables
    if min(args.spark_tables or 1, first_night_tables or 1) < 1:
        parser.error("--spark-tables and --spark-tables-first-night must be at least 1")
    if args.driver_memory:  # before the JVM starts
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {args.driver_memory} pyspark-shell"
    shapes = Shape.of(args)
    # SIGTERM (a timeout, a job's cancel) unwinds like Ctrl-C, through the finally below.
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    with tempfile.TemporaryDirectory(prefix="rewind-lifecycle-s3-") as scratch:
        base = Path(scratch)
        server = SeaweedFS.with_new_keys(base / "seaweedfs", "BENCH")
        try:
            server.start()
            with objectstore.environment(server.env()):
                warehouses = []
                for number, each in enumerate(shapes):
                    print(f"building {each.tables} tables, {each.files} files ...", file=sys.stderr)
                    bench = Bench(server, base, each, f"warehouse-{number + 1}")
                    warehouses.append(
                        bench.measure(
                            args.floor_threads,
                            number == 0,
                            (first_night_tables, args.spark_tables),
                            args.fast_build,
                            args.memory,
                            args.rewind_only,
                        )
                    )
                    args.output.parent.mkdir(exist_ok=True)  # so far, should a later step fail
                    args.output.write_text(json.dumps({"warehouses": warehouses}, indent=2))
                names = counter_names(server)
        finally:
            try:
                stop_spark()  # first: its JVM may still be talking to the server
            finally:
                server.stop()
    if args.rewind_only:
        return rewind_only_report(args, shapes, names, warehouses)
    report: dict[str, Any] = {
        "benchmark": "lifecycle_s3",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "spark_driver_memory": args.driver_memory or "1g (default)",
        "store": "SeaweedFS (weed mini) on loopback, one bucket per warehouse",
        "request_counter": COUNTER,
        **names,
        "rows_per_file": shapes[0].rows,
        "all_finders_agree": all_agree(warehouses),
        "delta_spark_answers": SPARK_NOTE,
        **summary(warehouses),
        "warehouses": warehouses,
    }
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(printed_table(warehouses), file=sys.stderr)
    return 0 if report["all_finders_agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
