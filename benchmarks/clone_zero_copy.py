"""Cloning a table of many data files: hard links (Rewind) against a byte copy.

Builds a table of FILES small Parquet files (written with pyarrow and committed through
Rewind's own storage layer, so that set-up does not start Spark), then times
``CREATE TABLE c CLONE t`` against the baseline of copying the same files byte for
byte (``shutil.copy2``), both in this process. Results go to
benchmarks/results/clone_zero_copy.json with the ratio and the bytes each approach
added on disk.

    .venv/bin/python benchmarks/clone_zero_copy.py [--files 10000] [--rows 2000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from report import write_report

import rewind
from rewind.sql import names
from rewind.sql.tables import commit_files, snapshot
from rewind.storage.snapshot import DataFile

NOW = "2026-11-01T00:00:00+00:00"


def disk_bytes(root: Path) -> int:
    """Bytes of distinct inodes under ``root`` (hard links count once)."""
    seen: dict[int, int] = {}
    for path in root.rglob("*"):
        if path.is_file():
            stat = path.stat()
            seen[stat.st_ino] = stat.st_blocks * 512
    return sum(seen.values())


def build_table(conn: rewind.connection.Connection, files: int, rows: int) -> Path:
    """``BENCH.PUBLIC.T`` with ``files`` data files of ``rows`` rows each."""
    conn.sql("CREATE DATABASE BENCH; CREATE TABLE T (ID INT, V VARCHAR)")

    def add_files(ctx):  # type: ignore[no-untyped-def]
        table = names.table(ctx, ["BENCH", "PUBLIC", "T"])
        base = snapshot(ctx, table)
        written = []
        for n in range(files):
            data = pa.table(
                {
                    "ID": pa.array(range(n * rows, (n + 1) * rows), pa.int64()),
                    "V": pa.array([f"value {i} of file {n}" for i in range(rows)]),
                }
            )
            name = f"part-{uuid.uuid4()}.parquet"
            pq.write_table(data, base.root / name)
            written.append(DataFile(name, (base.root / name).stat().st_size, rows))
        commit_files(ctx, table, base, written, [], "INSERT")
        return ctx.status(f"{files} files")

    conn._statement("benchmark set-up: add files", add_files)
    return conn.store.warehouse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=2_000, help="rows per file")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="rewind-clone-bench-"))
    try:
        conn = rewind.connect(home=home, now=NOW)
        warehouse = build_table(conn, args.files, args.rows)
        source = next(p for p in warehouse.iterdir() if p.is_dir())
        before = disk_bytes(home)

        start = time.perf_counter()
        conn.sql("USE BENCH; CREATE TABLE C CLONE T")
        clone_s = time.perf_counter() - start
        clone_added = disk_bytes(home) - before

        copy_root = home / "byte-copy"
        copy_root.mkdir()
        start = time.perf_counter()
        for file in source.glob("*.parquet"):
            shutil.copy2(file, copy_root / file.name)
        copy_s = time.perf_counter() - start
        copy_added = disk_bytes(copy_root)
        rows = conn.sql("SELECT count(*) FROM C")[0].rows[0][0]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    report = {
        "files": args.files,
        "rows_per_file": args.rows,
        "source_bytes": copy_added,
        "rows_in_clone": rows,
        "rewind_clone_hard_links": {"seconds": round(clone_s, 3), "bytes_added": clone_added},
        "baseline_byte_copy": {"seconds": round(copy_s, 3), "bytes_added": copy_added},
        "time_ratio_copy_over_clone": round(copy_s / clone_s, 2),
        "bytes_ratio_copy_over_clone": round(copy_added / max(clone_added, 1), 1),
    }
    write_report("clone_zero_copy", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
