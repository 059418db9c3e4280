"""A time-travel SELECT through Delta against the file-list read it replaced (issue 10).

Rewind used to read a table version as ``spark.read.parquet(<the version's files>)``,
the file list replayed from the log in Python. It now reads
``spark.read.format("delta").option("versionAsOf", v)`` (deletion vectors, column
mapping, checkpoints: SPEC R43). Both readers run side by side in one warm
SparkSession (local[2]) on the same Rewind tables, each timed REPEAT times:

- ``delta_version_as_of``: what Rewind does now, an older version (snapshot rebuilt);
- ``delta_latest``: the current version (Delta's cached snapshot);
- ``file_list_read`` (the baseline): the old read of the same older version;
- ``rewind_select_at``: the whole statement ``SELECT count(*) FROM t AT(STATEMENT => ..)``
  through ``Connection.sql`` (parse, resolve, pin, read, collect): a plain version, as
  here, is read as its files (``Snapshot.plain``), one with reader features through Delta.

Tables: VERSIONS single-row INSERT commits each (``--versions 10 100``). Results:
benchmarks/results/time_travel_read.json.

    .venv/bin/python benchmarks/time_travel_read.py [--repeat 7] [--versions 10 100]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from report import write_report

import rewind
from rewind.storage import log

NOW = "2026-11-01T00:00:00+00:00"


def timed(action: Callable[[], Any], repeat: int) -> dict[str, float]:
    action()  # warm-up: class loading, the first plan of its kind
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return {
        "median_s": round(statistics.median(samples), 4),
        "min_s": round(min(samples), 4),
        "max_s": round(max(samples), 4),
    }


def build(home: Path, versions: int) -> tuple[Any, Path, str]:
    """A table with ``versions`` commits after its creation; (session, root, a query id
    of the middle INSERT)."""
    conn = rewind.connect(home=home, now=NOW)
    conn.sql("CREATE DATABASE B; CREATE TABLE T (ID INT, V VARCHAR)")
    ids = [
        conn.sql(f"USE B; INSERT INTO T VALUES ({i}, 'v{i}')")[-1].query_id for i in range(versions)
    ]
    (root,) = [p for p in (home / "warehouse").iterdir() if p.is_dir()]
    return conn, root, ids[versions // 2]


def measure(versions: int, repeat: int) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="rewind-ttread-"))
    try:
        conn, root, middle = build(home, versions)
        spark = conn.spark()
        version = versions // 2 + 1
        files = [str(root / f.path) for f in log.replay(root, version).files]
        figures = {
            "delta_version_as_of": timed(
                lambda: (
                    spark.read.format("delta")
                    .option("versionAsOf", version)
                    .load(str(root))
                    .count()
                ),
                repeat,
            ),
            "delta_latest": timed(
                lambda: spark.read.format("delta").load(str(root)).count(), repeat
            ),
            "file_list_read": timed(lambda: spark.read.parquet(*files).count(), repeat),
            "rewind_select_at": timed(
                lambda: conn.sql(f"USE B; SELECT count(*) FROM T AT(STATEMENT => '{middle}')"),
                repeat,
            ),
        }
        base = figures["file_list_read"]["median_s"]
        ratio = figures["delta_version_as_of"]["median_s"] / base
        conn.close()
        return {
            "versions": versions,
            "read_version": version,
            **figures,
            "delta_over_file_list": round(ratio, 2),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--versions", type=int, nargs="+", default=[10, 100])
    args = parser.parse_args(argv)
    tables = [measure(n, args.repeat) for n in args.versions]
    write_report("time_travel_read", {"repeat": args.repeat, "tables": tables})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
