"""The nightly clean-up of the Delta log of Rewind's own tables (issue 28 item 4; SPEC R12,
R19, R41, R42, R43; rewind/lifecycle/logs.py), on local disk; on S3 with its request
counts: tests/s3/test_s3_log_cleanup.py.

A table's log entries before a checkpoint go only once no version before that checkpoint
can be read in time travel or recovered from fail-safe; every engine then reads every
version from the checkpoint on (delta-spark as a plain PySpark job, delta-rs), Rewind's
statements and fail-safe recovery work, and a version whose log is gone is refused with a
stable code, never INTERNAL_ERROR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from test_checkpoints_engines import spark_reads
from test_dml import table_root

from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import RewindError
from rewind.lifecycle import pins
from rewind.runner import run_lifecycle
from rewind.storage import log

pytestmark = pytest.mark.spark

FEB = "2027-02-{:02d}T00:00:00+00:00"  # after the wall clock: an external table's commits


def night(home: Path, day: int) -> dict[str, Any]:
    """The lifecycle on day ``day`` at midnight; its purge step's summary."""
    steps = run_lifecycle(Config.load(home=home), parse_timestamp(FEB.format(day)))
    return next(s for s in steps if s["step"] == "purge_failsafe")


def entries(root: Path) -> set[str]:
    return {p.name for p in (root / log.LOG).iterdir()}


def before(names: set[str], version: int) -> set[str]:
    """The log entries of the versions before ``version``."""
    return {n for n in names if n[:20].isdigit() and int(n[:20]) < version}


def delta_rs_rows(root: Path, version: int) -> list[int]:
    """Column ID of ``version`` as plain delta-rs lists its files (no Arrow read of the
    table: delta-rs #2184's exit abort)."""
    ids: list[int] = []
    for uri in DeltaTable(str(root), version=version).file_uris():
        ids += pq.read_table(uri.removeprefix("file://")).column("ID").to_pylist()
    return sorted(ids)


def recoverable(conn: Any, table_id: int) -> str:
    listed = conn.failsafe_list()
    return str(listed.column("recoverable_versions")[listed.column("table_id").index(table_id)])


def test_a_log_is_cleaned_up_once_no_version_before_its_checkpoint_is_held_r12_r43(
    connect: Any, home: Path
) -> None:
    """T: created (version 0) and 24 INSERTs on day 1 (checkpoints at 10 and 20); a DELETE
    on day 2 (version 25) sends the first row's file into time travel, fail-safe from day 3
    to day 10. Until its purge every version holds a held file: the log stays whole and
    recovery offers every version. The night of day 10 purges it and deletes the entries
    before checkpoint 20; the next nights make no further clean-up."""
    conn = connect(now=FEB.format(1))
    conn.sql("CREATE DATABASE D; CREATE TABLE T (ID INT)")
    conn.sql("; ".join(f"INSERT INTO T VALUES ({n})" for n in range(1, 25)))
    connect(now=FEB.format(2)).sql("DELETE FROM D.PUBLIC.T WHERE ID = 1")
    root = table_root(home, "T")
    whole = entries(root)
    assert {
        "00000000000000000010.checkpoint.parquet",
        "00000000000000000020.checkpoint.parquet",
    } <= whole
    table_id = int(root.name)

    for day in (3, 9):
        assert night(home, day)["log_entries_removed"] == 0
    assert entries(root) == whole
    assert recoverable(connect(now=FEB.format(9)), table_id) == ",".join(
        map(str, range(25, -1, -1))
    )

    purge = night(home, 10)
    assert purge["files_purged"] == 1
    assert (purge["tables_log_cleaned"], purge["log_entries_removed"]) == (
        1,
        len(before(whole, 20)),
    )
    assert entries(root) == whole - before(whole, 20)
    assert "00000000000000000020.json" in entries(root) and "_last_checkpoint" in entries(root)
    assert night(home, 11)["log_entries_removed"] == 0

    # Every engine reads every version from the checkpoint on; none reads one before it.
    conn = connect(now=FEB.format(11))
    conn.sql("USE DATABASE D")
    assert conn.sql("SELECT COUNT(*), MIN(ID) FROM T")[-1].rows == [[23, 2]]
    assert conn.sql("SELECT COUNT(*) FROM T AT(OFFSET => -3600)")[-1].rows == [[23]]
    # Version 20 (from its checkpoint) names the purged file: its log is still readable.
    assert len(DeltaTable(str(root), version=20).file_uris()) == 20
    seen = spark_reads(root, [25])
    assert seen["25"] == seen["latest"] == delta_rs_rows(root, 25) == list(range(2, 25))
    with pytest.raises(Exception, match=r"(?i)version|log|checkpoint|not found"):
        DeltaTable(str(root), version=19)

    # Fail-safe after the clean-up: a second DELETE's file is held from day 12; recovery
    # lists the versions it can give back (those before 25 held the purged file), and a
    # version before the log's start is refused as such.
    connect(now=FEB.format(11)).sql("DELETE FROM D.PUBLIC.T WHERE ID = 2")
    night(home, 13)
    admin = connect(now=FEB.format(13))
    assert recoverable(admin, table_id) == "26,25"
    with pytest.raises(RewindError, match="log was cleaned up") as refused:
        admin.failsafe_recover(table_id, "D.PUBLIC.OLD", version=19)
    assert refused.value.code == "NOT_RECOVERABLE"
    with pytest.raises(RewindError, match="purged") as refused:
        admin.failsafe_recover(table_id, "D.PUBLIC.OLD", version=22)
    assert refused.value.code == "NOT_RECOVERABLE"
    admin.failsafe_recover(table_id, "D.PUBLIC.BACK", version=25)
    assert admin.sql("SELECT COUNT(*) FROM D.PUBLIC.BACK")[-1].rows == [[23]]


def test_what_time_travel_fail_safe_and_reads_still_hold_keeps_its_log_r9_r19_r41(
    connect: Any, home: Path, tmp_path: Path
) -> None:
    """Three tables with eleven INSERTs on day 1 (versions 0..11, a checkpoint at 10):
    - U (retention 30) deletes its first row on day 2 and has its retention lowered to 1
      on day 20: the file, still in time travel on day 19's night, leaves it on day 20's
      and stays in fail-safe until day 27 (R9, R12); every version that holds it keeps its
      log until then;
    - P, append-only, has version 3 pinned by a read on day 19 (R19): its log stays that
      night and goes the next;
    - E, a team's table written by delta-rs and registered (R41), is never cleaned up
      (R42), however old its log."""
    outside = tmp_path / "team" / "e"
    for n in range(12):
        write_deltalake(str(outside), _rows(n), mode="append")
    DeltaTable(str(outside)).create_checkpoint()
    conn = connect(now=FEB.format(1))
    conn.sql(
        "CREATE DATABASE D; USE DATABASE D; "
        "CREATE TABLE U (ID INT) DATA_RETENTION_TIME_IN_DAYS = 30; CREATE TABLE P (ID INT); "
        f"CREATE EXTERNAL TABLE E LOCATION = '{outside}' TABLE_FORMAT = DELTA"
    )
    conn.sql(
        "; ".join(f"INSERT INTO U VALUES ({n}); INSERT INTO P VALUES ({n})" for n in range(1, 12))
    )
    connect(now=FEB.format(2)).sql("DELETE FROM D.PUBLIC.U WHERE ID = 1")
    u_root, p_root = table_root(home, "U"), table_root(home, "P")
    u_whole, p_whole, e_whole = entries(u_root), entries(p_root), entries(outside)

    pins.hold(home / "pins", int(p_root.name), 3, "a-long-read", parse_timestamp(FEB.format(19)))
    assert night(home, 19)["log_entries_removed"] == 0  # U's file in time travel, P pinned
    assert (entries(u_root), entries(p_root)) == (u_whole, p_whole)

    connect(now=FEB.format(20)).sql("ALTER TABLE D.PUBLIC.U SET DATA_RETENTION_TIME_IN_DAYS = 1")
    assert night(home, 20)["log_entries_removed"] == len(before(p_whole, 10))  # the pin ended
    assert entries(p_root) == p_whole - before(p_whole, 10)
    assert entries(u_root) == u_whole
    admin = connect(now=FEB.format(20))
    assert recoverable(admin, int(u_root.name)) == ",".join(map(str, range(12, -1, -1)))
    admin.failsafe_recover(int(u_root.name), "D.PUBLIC.U1", version=1)
    assert admin.sql("SELECT ID FROM D.PUBLIC.U1")[-1].rows == [[1]]
    seen = spark_reads(p_root, [10, 11])  # every file of P is live: its data too
    assert seen["10"] == delta_rs_rows(p_root, 10) == list(range(1, 11))
    assert seen["11"] == seen["latest"] == list(range(1, 12))
    with pytest.raises(Exception, match=r"(?i)version|log|checkpoint|not found"):
        DeltaTable(str(p_root), version=9)

    assert night(home, 27)["log_entries_removed"] == len(before(u_whole, 10))  # purged: gone
    assert entries(u_root) == u_whole - before(u_whole, 10)
    assert entries(outside) == e_whole
    conn = connect(now=FEB.format(27))
    conn.sql("USE DATABASE D")
    assert conn.sql("SELECT COUNT(*) FROM U")[-1].rows == [[10]]
    assert conn.sql("SELECT COUNT(*) FROM P")[-1].rows == [[11]]
    assert conn.sql("SELECT COUNT(*) FROM E")[-1].rows == [[12]]


def _rows(n: int) -> Any:
    import pyarrow as pa

    return pa.table({"ID": pa.array([n], pa.int32())})
