"""The synthetic warehouse of the lifecycle benchmarks (lifecycle_incremental.py on local
disk, lifecycle_s3.py on S3), built without Spark.

Small Parquet files are written with pyarrow and committed through Rewind's own storage
layer and the catalog's version timeline: every table gets INITIAL_FILES files on day 0,
and each day CHANGED_TABLES tables (round robin) replace FILES_PER_CHANGE of their oldest
files, as an UPDATE does. Tables have 1, 3, 7 or 14 days of retention. The warehouse is
wherever the Rewind home's configuration puts it: ``<home>/warehouse``, or an S3 prefix
(``REWIND_WAREHOUSE_URI``, SPEC R44), where the files are written with Rewind's own object
calls (:mod:`rewind.storage.location`). The :class:`Ledger` keeps what was committed, to
check every finder of expired files against.

Aligning the clocks of Rewind and of a vacuum: Rewind decides with its own clock (the
run's ``now``) while a vacuum compares each remove action's ``deletionTimestamp`` (Rewind
writes the Rewind clock's commit time there, in ms) with the wall clock minus its
retention. For a table with retention ``r`` days, :func:`retain_hours` (``ceil((wall_now -
night) / 1 h) + 24 r``) puts the vacuum's cutoff at most one hour before Rewind's (``night
- r days``); the wall clock moving during a vacuum loop shifts it later by the loop's
duration. All commits happen at 12:00 and all runs at 00:00 of the Rewind clock, so no
``deletionTimestamp`` lies within 12 hours of a cutoff: both cutoffs split the removed
files identically. The history is dated in 2025 so that the wall clock is later.

``--fast-build`` (the 10,000-table scale run of lifecycle_incremental.py): the same
warehouse, built in minutes instead of an hour. Every data file holds the same Parquet
bytes (written once by pyarrow; what a file holds is no concern of the lifecycle), and a
table's versions after its ``CREATE TABLE`` are Delta commits written as Rewind's own
commits are (:func:`fast_commit`: the JSON delta-rs writes for Rewind, with Rewind's
marks in ``commitInfo``, a checkpoint at every 10th version) and recorded in the
catalog's version timeline as a statement records them, without a delta-rs transaction
(and its replay of the log) per commit.
"""

from __future__ import annotations

import argparse
import io
import json
import math
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
from rewind.catalog.models import CatalogObject
from rewind.clock import format_timestamp
from rewind.connection import Connection
from rewind.constants import COMMIT_ID_KEY, COMMIT_QUERY_ID_KEY, COMMIT_TIME_KEY, FAILSAFE_DAYS
from rewind.result import Result
from rewind.sql import names
from rewind.sql.tables import commit_files, record_version, snapshot
from rewind.statement import Context
from rewind.storage import location
from rewind.storage.delta import DEFAULT_CHECKPOINT_INTERVAL
from rewind.storage.location import Root
from rewind.storage.snapshot import DataFile, Snapshot

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

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """The warehouse's shape as command-line arguments (defaults: issue 28's scale), and
        ``--no-double``; :meth:`of` reads them back."""
        parser.add_argument("--tables", type=int, default=1_000)
        parser.add_argument("--initial-files", type=int, default=40, help="files per table, day 0")
        parser.add_argument("--days", type=int, default=30, help="days of history")
        parser.add_argument("--changed-tables", type=int, default=100, help="tables changed a day")
        parser.add_argument("--files-per-change", type=int, default=20, help="files each replaces")
        parser.add_argument("--rows", type=int, default=10, help="rows per data file")
        parser.add_argument(
            "--no-double", action="store_true", help="skip the warehouse with twice the tables"
        )
        parser.add_argument(
            "--fast-build",
            action="store_true",
            help="one Parquet payload for every file and commits written directly "
            "(warehouse.fast_commit): the same warehouse, built ~10x faster",
        )

    @classmethod
    def of(cls, args: argparse.Namespace) -> list[Shape]:
        """The warehouses to measure: the shape of ``args``, then (unless ``--no-double``)
        the same with twice the tables."""
        shape = cls(
            args.tables,
            args.initial_files,
            args.days,
            args.changed_tables,
            args.files_per_change,
            args.rows,
        )
        return [shape] if args.no_double else [shape, shape.doubled()]

    def doubled(self) -> Shape:
        """Twice the tables, the same daily change."""
        return Shape(**{**vars(self), "tables": 2 * self.tables})

    def described(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "data_files": self.files,
            "days_of_history": self.days,
            "daily_change": {
                "tables": min(self.changed_tables, self.tables),
                "files_removed": self.changes_per_day,
                "files_added": self.changes_per_day,
            },
        }


def commit_time(day: int) -> datetime:
    return BASE + timedelta(days=day, hours=12)


def night_after(day: int) -> datetime:
    return BASE + timedelta(days=day + 1)


def retain_hours(night: datetime, days: int) -> int:
    """A vacuum's retention, in hours of the wall clock, whose cutoff is Rewind's for a
    table of ``days`` days of retention run at ``night`` (see the module docstring)."""
    offset = math.ceil((time.time() - night.timestamp()) / 3600)
    if offset < 0:
        raise SystemExit(f"the wall clock is earlier than the Rewind clock {night}")
    return offset + 24 * days


@dataclass
class Ledger:
    """What the builder committed, to check every answer against."""

    root: Root
    snapshot: Snapshot | None = None  # a table's first version: its schema and protocol
    retention: dict[int, int] = field(default_factory=dict)
    version: dict[int, int] = field(default_factory=dict)
    current: dict[int, list[DataFile]] = field(default_factory=dict)
    removed: dict[FileKey, datetime] = field(default_factory=dict)
    sizes: dict[FileKey, int] = field(default_factory=dict)  # every file written
    written: int = 0
    fast: bool = False  # --fast-build: one Parquet payload for every file, commits by fast_commit
    payload: bytes = b""

    @property
    def schema(self) -> pa.Schema:
        assert self.snapshot is not None
        return self.snapshot.schema

    def left_time_travel(self, key: FileKey) -> datetime:
        return self.removed[key] + timedelta(days=self.retention[key[0]])

    def expired(self, night: datetime) -> set[FileKey]:
        """Removed files whose time travel has ended by ``night`` (SPEC R30)."""
        return {key for key in self.removed if self.left_time_travel(key) <= night}

    def past_failsafe(self, night: datetime) -> set[FileKey]:
        """Expired files whose 7 days of fail-safe have ended by ``night`` (SPEC R12)."""
        return {
            key
            for key in self.removed
            if self.left_time_travel(key) + timedelta(days=FAILSAFE_DAYS) <= night
        }

    def table_root(self, table_id: int) -> Root:
        return self.root / str(table_id)

    def write_files(self, table_id: int, count: int, rows: int) -> list[DataFile]:
        """``count`` new Parquet files in the table's directory (on S3: one PUT each)."""
        if self.fast:
            return self.write_payloads(table_id, count, rows)
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
            buffer = io.BytesIO()
            pq.write_table(data, buffer)
            location.write(self.table_root(table_id) / name, buffer.getvalue())
            written.append(DataFile(name, len(buffer.getvalue()), rows))
            self.sizes[(table_id, name)] = len(buffer.getvalue())
            self.written += 1
        return written

    def write_payloads(self, table_id: int, count: int, rows: int) -> list[DataFile]:
        """:meth:`write_files` with one Parquet payload for every file (``--fast-build``)."""
        if not self.payload:
            data = pa.table(
                {
                    "ID": pa.array(range(rows), pa.int64()),
                    "V": pa.array([f"v{i}" for i in range(rows)]),
                }
            ).cast(self.schema)
            buffer = io.BytesIO()
            pq.write_table(data, buffer)
            self.payload = buffer.getvalue()
        written = []
        for _ in range(count):
            name = f"part-{uuid.uuid4()}.parquet"
            location.write(self.table_root(table_id) / name, self.payload)
            written.append(DataFile(name, len(self.payload), rows))
            self.sizes[(table_id, name)] = len(self.payload)
            self.written += 1
        return written


def statement(conn: Connection, text: str, action: Callable[[Context], None]) -> None:
    """Run ``action`` as one Rewind statement (one catalog transaction)."""

    def run(ctx: Context) -> Result:
        action(ctx)
        return ctx.status(text)

    conn._statement(f"benchmark set-up: {text}", run)


def commit(ctx: Context, ledger: Ledger, table_id: int, adds: list[DataFile], removes: int) -> None:
    """One version of a table: drop its ``removes`` oldest files, add ``adds``. The base
    snapshot is the ledger's (no read of the table's log): every table has one schema."""
    obj = ctx.catalog.get(table_id)
    assert obj is not None and ledger.snapshot is not None
    gone, kept = ledger.current[table_id][:removes], ledger.current[table_id][removes:]
    first = ledger.snapshot
    operation = "UPDATE" if gone else "INSERT"
    if ledger.fast:
        version = fast_commit(ctx, ledger, obj, adds, gone, operation)
    else:
        base = Snapshot(
            ledger.version[table_id],
            (),
            ledger.table_root(table_id),
            protocol=first.protocol,
            metadata=first.metadata,
        )
        committed = commit_files(ctx, obj, base, adds, gone, operation)
        assert committed is not None
        version = committed
    ledger.version[table_id] = version
    ledger.current[table_id] = kept + adds
    ledger.removed.update({(table_id, f.path): ctx.now for f in gone})


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def fast_commit(
    ctx: Context,
    ledger: Ledger,
    obj: CatalogObject,
    adds: list[DataFile],
    removes: list[DataFile],
    operation: str,
) -> int:
    """The next version of a table, as ``commit_files`` makes it, written directly: the
    actions delta-rs writes for Rewind's commit (``commitInfo`` with Rewind's marks, the
    removes, the adds), created only if absent (one writer), a checkpoint at every 10th
    version as Rewind writes one, and the version recorded in the catalog's timeline and
    access history as a statement records it (``record_version``)."""
    version = ledger.version[obj.id] + 1
    now = _ms(ctx.now)
    commit_id = str(uuid.uuid4())
    info = {
        "timestamp": int(time.time() * 1000),
        "operation": "WRITE",
        "operationParameters": {"partitionBy": "[]", "mode": "Append"},
        "engineInfo": "delta-rs:py-benchmark",
        COMMIT_QUERY_ID_KEY: ctx.query_id,
        COMMIT_TIME_KEY: format_timestamp(ctx.now),
        COMMIT_ID_KEY: commit_id,
        "clientVersion": "delta-rs.py-benchmark",
        "userMetadata": ctx.query_id,
    }
    actions: list[dict[str, Any]] = [{"commitInfo": info}]
    actions += [
        {
            "remove": {
                "path": f.path,
                "dataChange": True,
                "deletionTimestamp": now,
                "extendedFileMetadata": True,
                "partitionValues": {},
                "size": f.size,
            }
        }
        for f in removes
    ]
    actions += [
        {
            "add": {
                "path": f.path,
                "partitionValues": {},
                "size": f.size,
                "modificationTime": now,
                "dataChange": True,
                "stats": json.dumps({"numRecords": f.num_records}),
            }
        }
        for f in adds
    ]
    root = ledger.table_root(obj.id)
    commit = root / "_delta_log" / f"{version:020d}.json"
    body = "\n".join(json.dumps(a, separators=(",", ":")) for a in actions).encode() + b"\n"
    if isinstance(commit, Path):
        with open(commit, "xb") as handle:  # one writer: never over another commit
            handle.write(body)
    else:
        location.write(commit, body)
    if version % DEFAULT_CHECKPOINT_INTERVAL == 0:
        options = location.storage_options(root)
        DeltaTable(str(root), version=version, storage_options=options).create_checkpoint()
    record_version(ctx, obj, version, operation)
    return version


def create_tables(home: Path, shape: Shape, fast: bool = False) -> Ledger:
    """Day 0: the tables, each with ``initial_files`` files."""
    conn = rewind.connect(home=home, now=commit_time(0))
    ledger = Ledger(conn.store.warehouse, fast=fast)
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
                if ledger.snapshot is None:
                    ledger.snapshot = snapshot(ctx, obj)
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


def build(home: Path, shape: Shape, fast: bool = False) -> Ledger:
    ledger = create_tables(home, shape, fast)
    for day in range(1, shape.days + 1):
        change_day(home, shape, ledger, day)
    return ledger
