"""Reading a table Rewind writes: many commits cost about what few do (issue 28 item 4).

Rewind checkpoints its tables at every ``delta.checkpointInterval`` commits (10, as
delta-spark does; :meth:`rewind.storage.delta.TableStore._checkpointed`), and its own log
reader starts from ``_last_checkpoint`` (:func:`rewind.storage.log.replay`). This
benchmark builds, through Rewind's own commit path (``TableStore.commit``, real delta-rs,
local disk), a table of FEW commits and one of MANY, each commit an UPDATE's shape (one
new file, one old file removed, ten live files throughout, so only the log's length
differs), and a copy of the MANY table's log with its checkpoints deleted: the table as
Rewind wrote it before checkpoints (the baseline). Then, median of REPEATS reads each:

- ``delta_rs_latest``: ``DeltaTable(path)`` and its file list (what any delta-rs reader
  or a Polars / DuckDB scan pays before reading data);
- ``delta_rs_middle``: ``DeltaTable(path, version=commits // 2 + 5)``, a time-travel
  read between checkpoints;
- ``rewind_latest``: ``TableStore.snapshot`` of the newest version (Rewind's own log
  replay, what each statement and the lifecycle's sync of a version's state do).

Results go to benchmarks/results/checkpoint_read.json.

    .venv/bin/python benchmarks/checkpoint_read.py [--many 2000] [--few 20] [--repeats 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable
from report import write_report

from rewind.storage.delta import TableStore
from rewind.storage.snapshot import DataFile

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([pa.field("ID", pa.int64(), True)])
LIVE = 10  # live files of every version past the first ten commits


def data_file(root: Path, number: int) -> DataFile:
    name = f"part-{number:06d}.parquet"
    pq.write_table(pa.table({"ID": pa.array([number], pa.int64())}), root / name)
    return DataFile(name, (root / name).stat().st_size, 1)


def build(store: TableStore, table_id: int, commits: int) -> float:
    """A Rewind table of ``commits`` commits after its creation; returns the seconds."""
    started = time.perf_counter()
    store.create(table_id, SCHEMA, "create", NOW)
    root = store.root(table_id)
    assert isinstance(root, Path)
    live: list[DataFile] = []
    version = 0
    for number in range(1, commits + 1):
        added = data_file(root, number)
        removes = live[:1] if len(live) >= LIVE else []
        version = store.commit(
            table_id,
            version,
            adds=[added],
            removes=removes,
            schema=SCHEMA,
            query_id=f"q-{number}",
            now=NOW,
        )
        live = [*live[len(removes) :], added]
    return time.perf_counter() - started


def median_ms(read: Callable[[], Any], repeats: int) -> float:
    read()  # warm: imports, the file system's cache
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 2)


def reads(store: TableStore, table_id: int, commits: int, repeats: int) -> dict[str, float]:
    root = str(store.root(table_id))
    middle = min(commits, commits // 2 + 5)

    def rewind_latest() -> None:
        assert len(store.snapshot(table_id, commits).files) == min(commits, LIVE)

    return {
        "delta_rs_latest_ms": median_ms(lambda: DeltaTable(root).file_uris(), repeats),
        "delta_rs_middle_ms": median_ms(
            lambda: DeltaTable(root, version=middle).file_uris(), repeats
        ),
        "rewind_latest_ms": median_ms(rewind_latest, repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--many", type=int, default=2000)
    parser.add_argument("--few", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rewind-checkpoints-") as tmp:
        warehouse = Path(tmp) / "warehouse"
        store = TableStore(warehouse)
        few_s = build(store, 1, args.few)
        many_s = build(store, 2, args.many)
        # The baseline: the MANY table's log as Rewind wrote it before checkpoints.
        shutil.copytree(warehouse / "2", warehouse / "3")
        log_dir = warehouse / "3" / "_delta_log"
        for checkpoint in log_dir.glob("*.checkpoint*.parquet"):
            checkpoint.unlink()
        (log_dir / "_last_checkpoint").unlink()
        checkpoints = len(list((warehouse / "2" / "_delta_log").glob("*.checkpoint.parquet")))
        few = reads(store, 1, args.few, args.repeats)
        many = reads(store, 2, args.many, args.repeats)
        baseline = reads(store, 3, args.many, args.repeats)
    report = {
        "shape": {
            "few_commits": args.few,
            "many_commits": args.many,
            "live_files": LIVE,
            "checkpoint_interval": 10,
            "checkpoints_in_many": checkpoints,
            "repeats": args.repeats,
            "storage": "local disk",
        },
        "build_seconds": {"few": round(few_s, 2), "many": round(many_s, 2)},
        "few": few,
        "many": many,
        "many_without_checkpoints": baseline,
        "ratio_many_over_few": {k: round(many[k] / few[k], 2) for k in few},
        "ratio_without_over_with_checkpoints": {k: round(baseline[k] / many[k], 1) for k in many},
    }
    write_report("checkpoint_read", report)


if __name__ == "__main__":
    main()
