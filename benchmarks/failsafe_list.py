"""`rewind failsafe list` on a table of many versions (SPEC R12): what ACCOUNTADMIN reads
first when data must come back from fail-safe.

The listing names, per table with files in fail-safe, every version whose files are all
still held (in the table or in fail-safe). A table another writer appends to often (a
streaming job: a commit a minute is 1,440 versions a day) has thousands of versions
within its retention. This benchmark builds such a table with a plain delta-rs writer
(one file a commit, a checkpoint every 10 commits as delta-spark writes them, local
disk), registers it (CREATE EXTERNAL TABLE), deletes its first rows (delta-rs), and runs
a night two days on, which moves the removed files into fail-safe. Then, median of
REPEATS each, side by side:

- ``replay_each_version`` (the baseline: Rewind before, reproduced here): each version
  replayed from its checkpoint on its own, every file of it looked for again;
- ``rewind``: ``Connection.failsafe_list()`` (the log replayed once, oldest version
  first, each file looked for once, :func:`rewind.recovery.recoverable_versions`).

Both must find the same versions. Results go to benchmarks/results/failsafe_list.json.

    .venv/bin/python benchmarks/failsafe_list.py [--versions 300 1000 3000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from report import write_report

import rewind
from rewind.storage import log

CHECKPOINT_INTERVAL = 10  # delta-spark's default


def build(base: Path, versions: int) -> tuple[Any, Path, Path]:
    """The team's table, registered, its first rows deleted and moved into fail-safe by
    a night; returns a connection two days on, the table's root and its fail-safe."""
    lake = base / "lake" / "events"
    for number in range(versions):
        write_deltalake(str(lake), pa.table({"ID": [number]}), mode="append")
        if number % CHECKPOINT_INTERVAL == CHECKPOINT_INTERVAL - 1:
            DeltaTable(str(lake)).create_checkpoint()
    now = datetime.now(UTC)
    conn = rewind.connect(base / "home", now=now.isoformat())
    conn.sql("CREATE DATABASE LAKE")
    conn.sql(f"CREATE EXTERNAL TABLE LAKE.PUBLIC.EVENTS LOCATION = '{lake}' TABLE_FORMAT = DELTA")
    DeltaTable(str(lake)).delete("ID < 5")
    later = rewind.connect(base / "home", now=(now + timedelta(days=2)).isoformat())
    assert later.lifecycle()[-1]["failed"] == 0
    ((table_id, *_),) = later.failsafe_list().rows
    return later, lake, base / "home" / "failsafe" / str(table_id)


def replay_each_version(root: Path, failsafe: Path, newest: int) -> list[int]:
    """The baseline: newest first, each version replayed on its own, each of its files
    looked for in the table, then in fail-safe, back to the first the log cannot give."""
    found = []
    for version in range(newest, -1, -1):
        try:
            state = log.replay(root, version)
        except log.HistoryGone:
            break
        if all((root / f.path).exists() or (failsafe / f.path).exists() for f in state.files):
            found.append(version)
    return found


def median_s(read: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = read()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 4), result


def measure(versions: int, repeats: int) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="failsafe-list-"))
    try:
        conn, root, failsafe = build(base, versions)
        newest = DeltaTable(str(root)).version()
        baseline_s, expected = median_s(
            lambda: replay_each_version(root, failsafe, newest), repeats
        )
        rewind_s, rows = median_s(conn.failsafe_list, repeats)
        ((*_, listed),) = rows.rows
        assert [int(v) for v in listed.split(",")] == expected, "the two disagree"
        return {
            "versions": newest + 1,
            "recoverable": len(expected),
            "replay_each_version_s": baseline_s,
            "rewind_s": rewind_s,
            "speedup": round(baseline_s / rewind_s, 1),
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, nargs="+", default=[300, 1000, 3000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = [measure(count, args.repeats) for count in args.versions]
    write_report("failsafe_list", {"repeats": args.repeats, "runs": runs})


if __name__ == "__main__":
    main()
