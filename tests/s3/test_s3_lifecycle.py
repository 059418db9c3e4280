"""The nightly lifecycle governs a team's Delta table on S3 where it is (SPEC R12, R29–R33,
R41, R44, R48, R50), on a real S3 server (SeaweedFS, rewind/seaweedfs.py), with the
fail-safe store where it is configured today (the home's local ``failsafe/``).

The team's table is written by a plain delta-rs writer at ``s3://<bucket>/team/orders`` and
registered (R41); the team's writer and Rewind each delete a row, each removing a data
file. Two days later a night reads the new commits from the table's ``_delta_log`` only
(R32, R50) and moves the two removed files into fail-safe: each downloaded, synced and
checked against the object's size before the object leaves the bucket (R48). The night's
expire job is killed (SIGKILL, ``REWIND_FAULT``) before its first move and again between a
copy and the delete of its source, then run to the end: nothing lost, every object in the
bucket or in fail-safe at every instant (R31). Seven days after they left time travel a
later night purges them from fail-safe (R12). The table's current objects are never
touched (their ETags stay), the metrics count its bytes (R33), and it reads at its current
version throughout. Between the nights, fail-safe recovery (ACCOUNTADMIN) brings back the
version before both deletes as a new table, its files copied from fail-safe and from S3.

The expire and purge steps run as Spark jobs of their own (``spark_jobs/``), as Airflow
submits them: their executors reach S3 with the AWS variables of the job's environment.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from lifecycle_jobs import run_job
from test_s3_external import ids, metrics, objects, options, register, secret_free, table_id

from rewind.config import Config
from rewind.constants import FAILSAFE_DAYS
from rewind.errors import ValidationFailed
from rewind.runner import run_step

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3_lifecycle")]

PREFIX = "team/orders/"
JOB_TIMEOUT_S = 300


def job(
    home: Path,
    step: str,
    run_id: str,
    now: datetime,
    fault: str | None = None,
    *,
    fails: bool = False,
    spark: bool = True,
) -> dict:
    """A lifecycle step as a Spark job in a session of its own; its JSON summary. With
    ``fault`` the job must die by SIGKILL there (SPEC R31): a fault that never fires fails.
    With ``fails`` it must stop with an error: ``{"error": its one line}``. ``spark=False``:
    its file operations in plain Python workers (tests/lifecycle_jobs.py), no JVM."""
    code, out, err = run_job(home, step, run_id, now, fault, JOB_TIMEOUT_S, spark=spark)
    expected = 0 if fault is None else -signal.SIGKILL
    if fails:
        assert code == 1, f"{step}: exit {code}\n{err[-3000:]}"
        return {"error": err.strip().splitlines()[-1]}
    assert code == expected, f"{step} {fault}: exit {code}\n{err[-3000:]}"
    return {} if fault is not None else dict(json.loads(out.splitlines()[-1]))


def team_appends(lake: Any, *batches: list[int], value: str | None = None) -> str:
    """The team's delta-rs writer appends each batch of IDs (one commit and one data file
    each; V is ``value`` or ``v<ID>``) to its table on S3; returns the table's URI."""
    uri = f"{lake.uri}team/orders"
    for rows in batches:
        table = pa.table({"ID": rows, "V": [value or f"v{i}" for i in rows]})
        write_deltalake(uri, table, mode="append", storage_options=options())
    return uri


def step(home: Path, name: str, run_id: str, now: datetime) -> dict[str, Any]:
    """A step that needs no Spark (the plan, the metrics, the validation), in process."""
    return run_step(Config.load(home=home), name, run_id, now)


def current_files(uri: str) -> dict[str, int]:
    """The data files of the table's current version, with their sizes (delta-rs)."""
    adds = pa.table(DeltaTable(uri, storage_options=options()).get_add_actions(flatten=True))
    return dict(zip(adds["path"].to_pylist(), adds["size_bytes"].to_pylist(), strict=True))


def data_objects(bucket: Any) -> dict[str, str]:
    """The table's data objects (path under the table -> ETag), its log left out."""
    return {
        key.removeprefix(PREFIX): etag
        for key, etag in objects(bucket).items()
        if key.startswith(PREFIX) and not key.startswith(PREFIX + "_delta_log/")
    }


def places(bucket: Any, failsafe: Path, content: dict[str, bytes]) -> dict[str, set[str]]:
    """Where each removed file is now: "table" (its object), "failsafe" (a whole copy:
    the same bytes), both or neither."""
    in_table = data_objects(bucket)
    found: dict[str, set[str]] = {}
    for path, data in content.items():
        held = failsafe / path
        found[path] = {"table"} if path in in_table else set()
        if held.exists():
            assert held.read_bytes() == data, path  # never a partial or other copy
            found[path].add("failsafe")
    return found


def test_a_night_moves_removed_files_from_s3_into_failsafe_and_a_later_one_purges_them_r12_r31_r48(
    lake: Any, connect: Any, home: Path
) -> None:
    """R12, R30, R31, R33, R48, R50: see the module docstring."""
    uri = team_appends(lake, [1, 2], [3], [4, 5])  # one data file each
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    registered = DeltaTable(uri, storage_options=options()).version()  # rows 1 to 5
    DeltaTable(uri, storage_options=options()).delete("ID = 3")  # the team's own writer
    conn.sql("DELETE FROM ORDERS WHERE ID = 4")  # Rewind (R40: both are versions)
    assert ids(conn) == [1, 2, 5]

    current = current_files(uri)
    before = data_objects(lake)
    removed = sorted(set(before) - set(current))
    assert len(removed) == 2, (before, current)  # the team's file of row 3, the file of 4, 5
    client = lake.server.client()
    content = {
        path: client.get_object(Bucket=lake.name, Key=PREFIX + path)["Body"].read()
        for path in removed
    }
    failsafe = home / "failsafe" / str(table_id(home, "ORDERS"))
    changed = datetime.now(UTC)
    night_1 = ("night-1", changed + timedelta(days=2))  # a day after the 1-day window closed
    night_2 = ("night-2", changed + timedelta(days=2 + FAILSAFE_DAYS))

    # Night 1: the expire job killed before its first move, then between a copy and the
    # delete of its source (the file in both places), then run to the end (R31). The two
    # killed runs move in plain Python workers (no JVM start: every depth of such a kill
    # is tests/spark/test_lifecycle_crash.py's); the run to the end is a Spark job.
    step(home, "effective_retention", *night_1)
    job(home, "expire_versions", *night_1, fault="move:1", spark=False)
    where = places(lake, failsafe, content)
    assert all(where[path] == {"table"} for path in removed), where  # nothing moved yet
    job(home, "expire_versions", *night_1, fault="copied:1", spark=False)
    where = places(lake, failsafe, content)
    assert all("table" in where[path] for path in removed), where  # no source deleted yet
    assert any(where[path] == {"table", "failsafe"} for path in removed), where
    expired = job(home, "expire_versions", *night_1)
    assert (expired["files_moved"], expired["files_missing"]) == (2, 0), expired
    assert expired["bytes_moved"] == sum(len(data) for data in content.values())
    where = places(lake, failsafe, content)
    assert all(where[path] == {"failsafe"} for path in removed), where  # gone from S3 (R48)
    assert not list(failsafe.rglob("*.part"))
    after = data_objects(lake)
    assert after == {path: before[path] for path in current}  # the current ones untouched

    counted = step(home, "storage_metrics", *night_1)
    assert counted["active_bytes"] == sum(current.values()), counted  # R33
    assert counted["failsafe_bytes"] == sum(len(data) for data in content.values()), counted
    assert counted["time_travel_bytes"] == 0, counted
    assert step(home, "validate", *night_1)["stored_bytes"] == sum(current.values()) + sum(
        len(data) for data in content.values()
    )
    assert ids(conn) == [1, 2, 5]

    # R12: ACCOUNTADMIN recovers the version before both deletes into a new table, its
    # files copied from fail-safe and from the bucket; the team's objects stay as they are.
    listed = conn.failsafe_list()
    assert listed.column("table_id") == [table_id(home, "ORDERS")]
    assert str(registered) in listed.column("recoverable_versions")[0].split(",")
    conn.failsafe_recover(table_id(home, "ORDERS"), "LAKE.PUBLIC.RECOVERED", registered)
    recovered = conn.sql("SELECT ID FROM RECOVERED ORDER BY ID")[-1].rows
    assert [r[0] for r in recovered] == [1, 2, 3, 4, 5]
    assert data_objects(lake) == after
    assert places(lake, failsafe, content) == {path: {"failsafe"} for path in removed}

    # Night 2: the 7 days of fail-safe are over (R12).
    step(home, "effective_retention", *night_2)
    assert job(home, "expire_versions", *night_2)["files_moved"] == 0
    purged = job(home, "purge_failsafe", *night_2)
    assert purged["files_purged"] == 2, purged
    assert places(lake, failsafe, content) == {path: set() for path in removed}
    step(home, "storage_metrics", *night_2)
    (orders,) = [r for r in metrics(home) if r["TABLE_NAME"] == "ORDERS"]
    assert (orders["ACTIVE_BYTES"], orders["FAILSAFE_BYTES"]) == (sum(current.values()), 0)
    step(home, "validate", *night_2)
    assert data_objects(lake) == after
    assert ids(conn) == [1, 2, 5]
    assert DeltaTable(uri, storage_options=options()).to_pyarrow_table().num_rows == 3
    secret_free(lake.server.secret_key, home)


def requests(bucket: Any) -> Counter[str]:
    """The S3 requests the server answered for the bucket so far, by type (GET counts
    HEADs too; LIST, PUT, DELETE, ...): what an object store bills (SPEC R50). Read until
    two reads 0.3 s apart agree: the server counts a request once its handler returns,
    which on a loaded machine can be after the client has its answer (a LIST a delta-rs
    write made just before was once counted in the next night's requests)."""
    counted = bucket.server.requests(bucket.name)
    for _ in range(20):
        time.sleep(0.3)
        again = bucket.server.requests(bucket.name)
        if again == counted:
            break
        counted = again
    return counted


def test_a_next_night_reads_new_commits_and_lists_no_data_files_r32_r50(
    lake: Any, connect: Any, home: Path
) -> None:
    """R32, R50: after the first night has read the log of a table on S3 once, a next night's
    steps read only the commits made since (a HEAD of the next commit object, GETs of the
    new ones) and LIST nothing: neither the table's data files nor its log. The quality
    step checks the table's retention properties (R42) as the sync recorded them."""
    uri = team_appends(lake, [1], value="a")
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    start = datetime.now(UTC)
    first = step(home, "effective_retention", "first", start)  # the first night: log once
    assert first["objects_seen"] >= 3
    assert step(home, "expire_versions", "first", start)["commits_read"] >= 2
    team_appends(lake, [2], [3], value="b")  # the team's two commits of the day

    before = requests(lake)
    later = start + timedelta(hours=1)
    step(home, "effective_retention", "next", later)
    expired = step(home, "expire_versions", "next", later)
    step(home, "purge_failsafe", "next", later)
    step(home, "storage_metrics", "next", later)
    step(home, "validate", "next", later)  # raises if an expectation fails
    made = requests(lake) - before
    assert expired["commits_read"] == 2, expired
    assert made["LIST"] == 0, made
    assert made["GET"] <= 4 * 2 + 4, made  # 8 here: per new commit a few GETs, HEADs
    assert set(made) <= {"GET"}, made  # nothing written, moved or deleted: all in time travel
    assert ids(conn) == [1, 2, 3]


def test_a_next_night_with_nothing_changed_reads_next_to_nothing_of_a_large_table_r32_r50(
    lake: Any, connect: Any, home: Path
) -> None:
    """Issue 28, R32, R50: a team's table on S3 of 3,000 data files and 50 commits. Once the
    first night has read its log, a next night in which nothing changed makes no LIST
    (neither of its data files nor of its log), no GET of any of its commits and writes
    nothing: only the HEAD by which it learns that no commit came."""
    uri = f"{lake.uri}team/events"
    for commit in range(50):  # 60 partitions: 60 data files a commit
        batch = pa.table({"P": list(range(60)), "N": [commit] * 60})
        write_deltalake(uri, batch, mode="append", partition_by=["P"], storage_options=options())
    assert len(current_files(uri)) == 3000
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "EVENTS", uri)
    start = datetime.now(UTC)
    step(home, "effective_retention", "first", start)
    assert step(home, "expire_versions", "first", start)["commits_read"] >= 50

    before = requests(lake)
    later = start + timedelta(days=1)
    for name in ("effective_retention", "expire_versions", "purge_failsafe", "storage_metrics"):
        step(home, name, "next", later)
    step(home, "validate", "next", later)  # raises if an expectation fails
    made = requests(lake) - before
    assert made == Counter({"GET": 1}), made  # the HEAD of the commit that did not come


def test_a_transient_table_on_s3_has_its_expired_objects_deleted_not_moved_r8_r12(
    lake: Any, connect: Any, home: Path
) -> None:
    """R12: data of a transient table leaving time travel is deleted, not moved: the night
    deletes the object the team's DELETE removed from the bucket (one DeleteObject each,
    idempotent), puts nothing into fail-safe, and leaves the current objects alone."""
    uri = team_appends(lake, [1], [2], value="a")
    conn = connect()
    conn.sql("CREATE DATABASE LAKE; CREATE TRANSIENT SCHEMA SCRATCH; USE SCHEMA SCRATCH")
    register(conn, "ORDERS", uri)
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    current = current_files(uri)
    before = data_objects(lake)
    assert len(set(before) - set(current)) == 1

    night = ("night", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night)
    expired = job(home, "expire_versions", *night)
    assert (expired["files_deleted"], expired["files_moved"]) == (1, 0), expired
    assert data_objects(lake) == {path: before[path] for path in current}
    assert not (home / "failsafe" / str(table_id(home, "ORDERS"))).exists()
    counted = step(home, "storage_metrics", *night)
    assert (counted["active_bytes"], counted["time_travel_bytes"]) == (sum(current.values()), 0)
    assert counted["failsafe_bytes"] == 0
    step(home, "validate", *night)
    assert ids(conn) == [2]


def test_an_object_a_clone_references_stays_in_its_bucket_until_no_clone_uses_it_r30_r47(
    lake: Any, connect: Any, home: Path
) -> None:
    """R12, R30, R47: a zero-copy clone references the S3 table's objects where they are, so
    an object the team's writer removed from the source stays in the bucket,
    RETAINED_FOR_CLONE for its owner, while the clone uses it. A reference that leaves the
    clone's time travel enters the clone's fail-safe where the object is, for its 7 days,
    never moved (the object is its owner's): a dropped clone is recoverable for its
    fail-safe week, as a local clone whose links move into fail-safe. Once the clone's week
    is over, the object leaves the bucket for the owner's fail-safe like any other (R48),
    and the clone is purged for good."""
    uri = team_appends(lake, [1, 2], [3], [4, 5])
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    conn.sql("CREATE TABLE COPY CLONE ORDERS")
    DeltaTable(uri, storage_options=options()).delete("ID = 3")  # the source's file of 3
    conn.sql("DELETE FROM COPY WHERE ID = 1")  # the clone's reference to the file of 1, 2
    (shared,) = sorted(set(data_objects(lake)) - set(current_files(uri)))
    content = lake.server.client().get_object(Bucket=lake.name, Key=PREFIX + shared)
    data = content["Body"].read()
    kept = objects(lake)
    changed = datetime.now(UTC)

    night_1 = ("night-1", changed + timedelta(days=2))
    step(home, "effective_retention", *night_1)
    expired = step(home, "expire_versions", *night_1)
    assert (expired["files_journaled"], expired["shared_references_to_failsafe"]) == (0, 1)
    assert expired["shared_references_released"] == 0
    assert objects(lake) == kept
    step(home, "storage_metrics", *night_1)
    (orders,) = [r for r in metrics(home) if r["TABLE_NAME"] == "ORDERS"]
    assert orders["RETAINED_FOR_CLONE_BYTES"] == len(data), orders
    assert orders["ACTIVE_BYTES"] == sum(current_files(uri).values()), orders
    step(home, "validate", *night_1)
    assert [r[0] for r in conn.sql("SELECT ID FROM COPY ORDER BY ID")[-1].rows] == [2, 3, 4, 5]

    copy = table_id(home, "COPY")
    conn.sql("DROP TABLE COPY")
    dropped = datetime.now(UTC)
    night_2 = ("night-2", dropped + timedelta(days=2))
    step(home, "effective_retention", *night_2)
    held = step(home, "expire_versions", *night_2)
    # Its references to the objects of 3 and of 4, 5 enter its fail-safe where they are;
    # its own file (the row 2 its DELETE wrote) moves into it.
    assert (held["shared_references_to_failsafe"], held["files_journaled"]) == (2, 1), held
    assert step(home, "purge_failsafe", *night_2)["tables_purged"] == 0
    night_3 = ("night-3", night_2[1] + timedelta(hours=1))
    step(home, "effective_retention", *night_3)
    assert job(home, "expire_versions", *night_3, spark=False)["files_moved"] == 0
    assert objects(lake) == kept  # the clone's fail-safe holds the object where it is
    step(home, "storage_metrics", *night_3)
    step(home, "validate", *night_3)
    # R12: within the clone's fail-safe week, ACCOUNTADMIN recovers it as it was dropped.
    week = connect(now=(night_3[1] + timedelta(hours=1)).isoformat())
    listed = {row[0]: row for row in week.failsafe_list().rows}
    assert listed[copy][1] == "LAKE.PUBLIC.COPY", listed
    week.failsafe_recover(copy, "LAKE.PUBLIC.BACK")
    back = "SELECT ID FROM LAKE.PUBLIC.BACK ORDER BY ID"
    assert [r[0] for r in week.sql(back)[-1].rows] == [2, 3, 4, 5]
    assert objects(lake) == kept

    # The clone's 7 days end a day after its drop plus seven: its references are let go
    # (nothing deleted), the owner's object is no longer retained, and the next night moves
    # it into the owner's fail-safe (its own week is over too: purged the same night).
    night_4 = ("night-4", dropped + timedelta(days=1 + FAILSAFE_DAYS, hours=1))
    step(home, "effective_retention", *night_4)
    step(home, "expire_versions", *night_4)
    purged = step(home, "purge_failsafe", *night_4)
    assert (purged["shared_references_purged"], purged["tables_purged"]) == (3, 1), purged
    assert objects(lake) == kept
    night_5 = ("night-5", night_4[1] + timedelta(hours=1))
    step(home, "effective_retention", *night_5)
    moved = job(home, "expire_versions", *night_5, spark=False)
    assert (moved["files_moved"], moved["files_missing"]) == (1, 0), moved
    assert shared not in data_objects(lake)
    assert {k: v for k, v in kept.items() if k != PREFIX + shared} == objects(lake)
    assert step(home, "purge_failsafe", *night_5)["files_purged"] == 1
    step(home, "storage_metrics", *night_5)
    step(home, "validate", *night_5)
    later = connect(now=(night_5[1] + timedelta(hours=1)).isoformat())
    assert copy not in {row[0] for row in later.failsafe_list().rows}
    assert ids(conn) == [1, 2, 4, 5]
    assert [r[0] for r in later.sql(back)[-1].rows] == [2, 3, 4, 5]


def test_the_change_feed_s_objects_are_time_travel_then_failsafe_read_from_the_commits_r30_r50(
    lake: Any, connect: Any, home: Path
) -> None:
    """R30, R33, R50: a team's table on S3 with the change data feed on; the team's delta-rs
    DELETE and Rewind's UPDATE each write a change object under ``_change_data/``. The
    night reads them from the commits (no LIST): time travel from their commits, counted
    in TIME_TRAVEL_BYTES (uncounted and never moved before: no listing finds them on S3),
    then, with their versions' day of time travel over, moved into fail-safe."""
    uri = f"{lake.uri}team/orders"
    feed = {"delta.enableChangeDataFeed": "true"}
    first = pa.table({"ID": [1, 2], "V": ["a", "b"]})
    write_deltalake(uri, first, configuration=feed, storage_options=options())
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    conn.sql("UPDATE ORDERS SET V = 'B' WHERE ID = 2")
    client = lake.server.client()
    changes = {
        key: client.head_object(Bucket=lake.name, Key=PREFIX + key)["ContentLength"]
        for key in data_objects(lake)
        if key.startswith("_change_data/")
    }
    assert len(changes) >= 2, changes  # the team's and Rewind's
    start = datetime.now(UTC)

    night_1 = ("night-1", start + timedelta(hours=12))
    step(home, "effective_retention", *night_1)
    assert job(home, "expire_versions", *night_1, spark=False)["files_moved"] == 0
    step(home, "storage_metrics", *night_1)
    (orders,) = [r for r in metrics(home) if r["TABLE_NAME"] == "ORDERS"]
    assert orders["TIME_TRAVEL_BYTES"] >= sum(changes.values()), orders
    step(home, "validate", *night_1)

    night_2 = ("night-2", start + timedelta(days=2))
    step(home, "effective_retention", *night_2)
    job(home, "expire_versions", *night_2, spark=False)
    assert not set(changes) & set(data_objects(lake))
    failsafe = home / "failsafe" / str(table_id(home, "ORDERS"))
    assert {key: (failsafe / key).stat().st_size for key in changes} == changes
    step(home, "storage_metrics", *night_2)
    (orders,) = [r for r in metrics(home) if r["TABLE_NAME"] == "ORDERS"]
    assert orders["FAILSAFE_BYTES"] >= sum(changes.values()), orders
    step(home, "validate", *night_2)
    assert ids(conn) == [2]


def test_a_move_the_executors_cannot_finish_stops_the_run_with_a_storage_error_r31_r39(
    lake: Any, connect: Any, home: Path
) -> None:
    """R31, R39, R49: when the executors cannot finish a move (here: fail-safe's table
    directory is blocked by a file), the job stops with STORAGE_ERROR in one line naming
    the path, no traceback; the object stays in the bucket; once the cause is gone the
    next attempt finishes the journaled move."""
    uri = team_appends(lake, [1], [2], value="a")
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    kept = objects(lake)
    (removed,) = sorted(set(data_objects(lake)) - set(current_files(uri)))
    failsafe = home / "failsafe" / str(table_id(home, "ORDERS"))
    failsafe.parent.mkdir(parents=True)
    failsafe.write_text("in the way")

    night = ("night", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night)
    error = job(home, "expire_versions", *night, fails=True)["error"]
    assert error.startswith("error: STORAGE_ERROR: A lifecycle file operation failed: "), error
    assert str(failsafe) in error
    assert objects(lake) == kept
    failsafe.unlink()
    moved = job(home, "expire_versions", *night)
    assert (moved["files_moved"], moved["files_missing"]) == (1, 0), moved
    assert removed not in data_objects(lake)
    assert (failsafe / removed).exists()
    secret_free(lake.server.secret_key, home, error)


def test_an_object_a_clone_kept_that_its_team_brings_back_stays_where_it_is_r30_r31_r47(
    lake: Any, connect: Any, home: Path
) -> None:
    """R30, R31, R47: an object kept in the bucket for a clone (RETAINED_FOR_CLONE) that the
    team's own writer brings back (a Delta RESTORE re-adds it) is current data again: while
    the dropped clone's fail-safe still references it and once the clone is gone, no night
    hands it back to time travel or moves it out. The RESTORE also brought back the
    registration's retention properties, which the validation names while a clone holds
    the table's objects (R42), until the team's ALTER raises them again."""
    uri = team_appends(lake, [1], [2], value="a")
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    registered = DeltaTable(uri, storage_options=options()).version()
    conn.sql("CREATE TABLE COPY CLONE ORDERS")
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    kept = data_objects(lake)

    night_1 = ("night-1", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night_1)
    assert step(home, "expire_versions", *night_1)["files_journaled"] == 0  # kept for COPY
    DeltaTable(uri, storage_options=options()).restore(registered)  # the team's RESTORE
    assert ids(conn) == [1, 2]
    conn.sql("DROP TABLE COPY")
    lowered = r"LAKE\.PUBLIC\.ORDERS id \d+: delta\.deletedFileRetentionDuration is interval 8 days"
    for name, days in (("night-2", 4), ("night-3", 5), ("night-4", 10)):
        night = (name, datetime.now(UTC) + timedelta(days=days))
        step(home, "effective_retention", *night)
        assert step(home, "expire_versions", *night)["files_journaled"] == 0
        step(home, "purge_failsafe", *night)
        step(home, "storage_metrics", *night)
        if name != "night-2":
            step(home, "validate", *night)
            continue
        # The dropped clone's fail-safe references the objects: the next night reads the
        # team's ALTER that raised the properties again.
        with pytest.raises(ValidationFailed, match=lowered):
            step(home, "validate", *night)
        conn.sql("ALTER TABLE ORDERS SET DATA_RETENTION_TIME_IN_DAYS = 1")
    assert data_objects(lake) == kept
    (orders,) = [r for r in metrics(home) if r["TABLE_NAME"] == "ORDERS"]
    assert orders["ACTIVE_BYTES"] == sum(current_files(uri).values()), orders
    assert orders["RETAINED_FOR_CLONE_BYTES"] == orders["TIME_TRAVEL_BYTES"] == 0, orders
    assert ids(conn) == [1, 2]
