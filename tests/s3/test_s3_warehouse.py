"""Rewind's own warehouse and system tables on S3 (SPEC R44), beside a fail-safe store on S3
(R48), on a real S3 server (SeaweedFS, rewind/seaweedfs.py):
``REWIND_WAREHOUSE_URI=s3://<bucket>/warehouse``, ``REWIND_SYSTEM_URI=s3://<bucket>/system``,
``REWIND_FAILSAFE_URI=s3://<bucket>-fs/failsafe``.

Every statement kind runs on tables whose Delta logs and data files are objects: CREATE TABLE
(AS), INSERT, UPDATE, DELETE, MERGE, SELECT ... AT / BEFORE, a clone that references its
source's objects where they are (R47), DROP / UNDROP / SHOW ... HISTORY, a restore in place,
ACCESS_HISTORY. A night moves the files that left time travel into the S3 fail-safe (the
Spark job of the expire step, as Airflow submits it) and writes its plan and metrics as Delta
tables on S3; the metrics equal the objects' sizes, and the quality step agrees. ACCOUNTADMIN
recovers a dropped table from fail-safe into the S3 warehouse; a night 7 days later purges the
fail-safe copies and removes the dropped table's directory from the bucket. Nothing is
written under the local home's ``warehouse/``, ``system/`` or ``failsafe/``, and the server's
secret key is nowhere Rewind writes (R45).

Bad settings are refused before anything is written, each with its stable code: a warehouse
URI with credentials in it (INVALID_LOCATION, the secret not shown), a warehouse in a bucket
that does not exist (INVALID_LOCATION within seconds), and a warehouse or system root that
overlaps the fail-safe store (INVALID_LOCATION, SPEC R12, R38).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from test_s3_external import objects, options, rows, secret_free
from test_s3_failsafe import Store, failsafe_bucket, job
from test_s3_lifecycle import step

import rewind
from rewind.config import Config
from rewind.errors import InvalidLocation, RewindError
from rewind.home import MARKER

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3_lifecycle")]

START = datetime.now(UTC).replace(microsecond=0) - timedelta(days=12)


def at(minutes: float) -> str:
    """The statement clock, ``minutes`` after the scenario's start (SPEC R15)."""
    return (START + timedelta(minutes=minutes)).isoformat()


def ids_of(home: Path, name: str) -> list[int]:
    """The ids of every incarnation of a table name, live or dropped, oldest first."""
    with closing(sqlite3.connect(home / "catalog.db")) as db:
        found = db.execute(
            "SELECT id FROM objects WHERE kind = 'TABLE' AND name = ? ORDER BY id", (name,)
        ).fetchall()
    return [int(row[0]) for row in found]


def sizes(bucket: Any, name: str, prefix: str) -> dict[str, int]:
    """The objects under a prefix of a bucket with their sizes, Delta logs and the
    catalog's marker (rewind.home.own_root) left out."""
    client = bucket.server.client()
    found: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix=prefix):
        for item in page.get("Contents", []):
            if "/_delta_log/" not in item["Key"] and item["Key"] != f"{prefix}{MARKER}":
                found[item["Key"]] = int(item["Size"])
    return found


def logged_adds(uri: str) -> list[str]:
    """The data file paths a table's current version names (delta-rs)."""
    adds = DeltaTable(uri, storage_options=options()).get_add_actions(flatten=True)
    return list(pa.table(adds)["path"].to_pylist())


def storage_metrics(conn: Any) -> dict[str, dict[str, Any]]:
    """REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS (read from S3 by Spark), by table name."""
    columns = "TABLE_NAME, ACTIVE_BYTES, TIME_TRAVEL_BYTES, FAILSAFE_BYTES, "
    columns += "RETAINED_FOR_CLONE_BYTES, DELETED"
    result = conn.sql(f"SELECT {columns} FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS")[-1]
    return {r[0]: dict(zip(result.columns, r, strict=True)) for r in result.rows}


def s3_home(lake: Any, monkeypatch: pytest.MonkeyPatch) -> Store:
    """Warehouse and system tables in the lake's bucket, fail-safe in a bucket of its own."""
    store = failsafe_bucket(lake, monkeypatch)
    store.settings["REWIND_WAREHOUSE_URI"] = f"s3://{lake.name}/warehouse"
    store.settings["REWIND_SYSTEM_URI"] = f"s3://{lake.name}/system"
    for key, value in store.settings.items():
        monkeypatch.setenv(key, value)
    return store


def test_every_statement_and_the_lifecycle_run_on_a_warehouse_on_s3_r44_r47_r48(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R44: with warehouse, system tables and fail-safe on S3, every statement kind works on
    tables that are objects; a clone references its source's objects (R47); a night moves
    what left time travel into the S3 fail-safe by a verified copy (R48) and counts every
    object's bytes exactly once (R33); recovery (R12) and purge (R12, R31) work there; the
    quality step passes (R29); nothing lands in the local home but its catalog (R44)."""
    store = s3_home(lake, monkeypatch)
    warehouse = f"s3://{lake.name}/warehouse"
    conn = connect(now=at(0))
    conn.sql("CREATE DATABASE LAKE")
    conn.sql(  # with change tracking: every write keeps Delta's row ids, on S3 too
        "CREATE TABLE ORDERS (ID INT, V VARCHAR) CHANGE_TRACKING = TRUE; "
        "INSERT INTO ORDERS VALUES (1, 'a'), (2, 'b')"
    )
    (orders,) = ids_of(home, "ORDERS")
    orders_uri = f"{warehouse}/{orders}"
    assert logged_adds(orders_uri), "ORDERS' log is an object of the warehouse bucket"
    connect(now=at(1)).sql("INSERT INTO LAKE.PUBLIC.ORDERS VALUES (3, 'c')")
    connect(now=at(2)).sql("UPDATE LAKE.PUBLIC.ORDERS SET V = 'B' WHERE ID = 2")
    deleted = connect(now=at(3)).sql("DELETE FROM LAKE.PUBLIC.ORDERS WHERE ID = 3")[-1].query_id
    merged = connect(now=at(4)).sql(
        "MERGE INTO LAKE.PUBLIC.ORDERS O USING (SELECT 4 AS ID, 'd' AS V) S ON O.ID = S.ID "
        "WHEN MATCHED THEN UPDATE SET V = S.V "
        "WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (S.ID, S.V)"
    )[-1]
    assert merged.rows == [[1, 0, 0]]  # inserted, updated, deleted
    conn = connect(now=at(5))
    conn.sql("USE DATABASE LAKE")
    conn.sql("CREATE TABLE TOTALS AS SELECT COUNT(*) AS N, SUM(ID) AS S FROM ORDERS")
    assert rows(conn, "SELECT N, S FROM TOTALS") == [(3, 7)]

    # R16, R23: time travel reads the objects of each version.
    assert rows(conn, f"SELECT ID FROM ORDERS AT(TIMESTAMP => '{at(1.5)}') ORDER BY ID") == [
        (1,),
        (2,),
        (3,),
    ]
    assert rows(conn, f"SELECT ID FROM ORDERS BEFORE(STATEMENT => '{deleted}') ORDER BY ID") == [
        (1,),
        (2,),
        (3,),
    ]
    assert rows(conn, "SELECT ID, V FROM ORDERS ORDER BY ID") == [(1, "a"), (2, "B"), (4, "d")]
    # R40: the net changes since the first INSERT (3, inserted and deleted, in neither)
    changed = (
        "SELECT ID, V, METADATA$ACTION, METADATA$ISUPDATE FROM ORDERS CHANGES(INFORMATION "
        f"=> DEFAULT) AT(TIMESTAMP => '{at(0.5)}') ORDER BY ID, METADATA$ACTION"
    )
    assert rows(conn, changed) == [
        (2, "b", "DELETE", True),
        (2, "B", "INSERT", True),
        (4, "d", "INSERT", False),
    ]

    # R24, R47: a zero-copy clone of the past: its log names the source's objects by URI.
    before_clone = sizes(lake, lake.name, "warehouse/")
    conn.sql(f"CREATE TABLE ORDERS_CLONE CLONE ORDERS AT(TIMESTAMP => '{at(1.5)}')")
    (clone,) = ids_of(home, "ORDERS_CLONE")
    assert all(p.startswith(f"{orders_uri}/") for p in logged_adds(f"{warehouse}/{clone}"))
    assert sizes(lake, lake.name, "warehouse/") == before_clone  # no object copied
    assert rows(conn, "SELECT ID FROM ORDERS_CLONE ORDER BY ID") == [(1,), (2,), (3,)]

    # R21, R22: DROP / UNDROP / SHOW ... HISTORY.
    conn.sql("DROP TABLE TOTALS")
    conn.sql("UNDROP TABLE TOTALS")
    assert rows(conn, "SELECT N FROM TOTALS") == [(3,)]
    conn.sql("DROP TABLE TOTALS")
    shown = conn.sql("SHOW TABLES HISTORY LIKE 'TOTALS'")[-1]
    (dropped,) = [dict(zip(shown.columns, r, strict=True)) for r in shown.rows]
    assert dropped["dropped_on"] is not None
    (totals,) = ids_of(home, "TOTALS")

    # Restore in place (Delta RESTORE's semantics): one new version holding the point's
    # files; MERGE's file leaves the table (into time travel).
    restored = connect(now=at(6)).restore("LAKE.PUBLIC.ORDERS", at=at(3.5))
    assert "restored to the state of version" in restored.rows[0][0], restored.rows
    assert rows(conn, "SELECT ID, V FROM ORDERS ORDER BY ID") == [(1, "a"), (2, "B")]

    # R41, R38: a Delta table inside Rewind's own S3 roots cannot be registered.
    stray = f"s3://{lake.name}/system/stray"
    write_deltalake(stray, pa.table({"ID": [1]}), storage_options=options())
    with pytest.raises(InvalidLocation, match="overlaps Rewind's own storage"):
        conn.sql(f"CREATE EXTERNAL TABLE STRAY LOCATION = '{stray}' TABLE_FORMAT = DELTA")

    # R36: the audit trail of the statements on S3 tables.
    audit = rows(
        conn,
        "SELECT OBJECTS_MODIFIED FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY "
        "WHERE QUERY_ID = '" + deleted + "'",
    )
    assert [json.loads(o)["objectName"] for o in audit[0][0]] == ["LAKE.PUBLIC.ORDERS"]

    # Night 1, two days on: TOTALS (dropped) and MERGE's file leave time travel into the S3
    # fail-safe; the files the clone uses stay where they are (R30, R47).
    night = ("night-1", START + timedelta(days=2))
    assert step(home, "effective_retention", *night)["objects_seen"] > 0
    expired = job(home, store, "expire_versions", *night)
    assert expired["files_missing"] == 0, expired
    moved = sizes(lake, store.name, "failsafe/")
    assert expired["files_moved"] == len(moved) >= 2, (expired, moved)
    assert {key.split("/")[1] for key in moved} == {str(orders), str(totals)}
    assert expired["bytes_moved"] == sum(moved.values())
    counted = step(home, "storage_metrics", *night)
    assert step(home, "validate", *night)["failed"] == 0

    # R33: every object's bytes counted exactly once, as the server reports their sizes.
    stored = sizes(lake, lake.name, "warehouse/")
    assert not [key for key in stored if "_rewind_staging" in key]
    metrics = storage_metrics(conn)
    kept = ("ACTIVE_BYTES", "TIME_TRAVEL_BYTES", "RETAINED_FOR_CLONE_BYTES")
    assert sum(m[c] for m in metrics.values() for c in kept) == sum(stored.values())
    assert sum(m["FAILSAFE_BYTES"] for m in metrics.values()) == sum(moved.values())
    assert counted["failsafe_bytes"] == sum(moved.values()), counted
    assert metrics["ORDERS"]["RETAINED_FOR_CLONE_BYTES"] > 0, metrics  # the clone's files
    assert metrics["ORDERS_CLONE"]["ACTIVE_BYTES"] == 0, metrics  # it owns no object
    totals_bytes = sum(size for key, size in moved.items() if key.split("/")[1] == str(totals))
    assert metrics["TOTALS"]["FAILSAFE_BYTES"] == totals_bytes and metrics["TOTALS"]["DELETED"]

    # R12: ACCOUNTADMIN recovers the dropped table from the S3 fail-safe into the warehouse.
    after = connect(now=(START + timedelta(days=2, hours=1)).isoformat())
    assert after.failsafe_list().column("table_id") == sorted([orders, totals])
    after.failsafe_recover(totals, "LAKE.PUBLIC.TOTALS_BACK")
    assert rows(after, "SELECT N, S FROM LAKE.PUBLIC.TOTALS_BACK") == [(3, 7)]
    (back,) = ids_of(home, "TOTALS_BACK")
    assert all(not p.startswith("s3://") for p in logged_adds(f"{warehouse}/{back}"))

    # Night 2, ten days on: the fail-safe copies are purged, TOTALS' directory is removed
    # from the bucket and its metrics row goes (R12, R33); the clone's files stay.
    late = ("night-2", START + timedelta(days=10))
    step(home, "effective_retention", *late)
    assert step(home, "expire_versions", *late)["files_moved"] == 0  # no task: no Spark
    purged = job(home, store, "purge_failsafe", *late)
    assert (purged["files_purged"], purged["tables_purged"]) == (len(moved), 1), purged
    assert sizes(lake, store.name, "failsafe/") == {}
    assert not [key for key in objects(lake) if key.startswith(f"warehouse/{totals}/")]
    step(home, "storage_metrics", *late)
    assert step(home, "validate", *late)["failed"] == 0
    assert set(storage_metrics(after)) == {"ORDERS", "ORDERS_CLONE", "TOTALS_BACK"}
    assert rows(after, "SELECT ID FROM LAKE.PUBLIC.ORDERS_CLONE ORDER BY ID") == [
        (1,),
        (2,),
        (3,),
    ]

    # R44: the local home holds the catalog and logs only.
    for name in ("warehouse", "system", "failsafe"):
        assert not (home / name).exists(), name
    secret_free(lake.server.secret_key, home)


def test_bad_warehouse_settings_are_refused_before_anything_is_written_r44_r45_r49(
    s3_bucket: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R45: a warehouse URI with credentials in it is refused (INVALID_LOCATION), its secret in
    no message; R49: a warehouse in a bucket that does not exist stops the session within
    seconds (INVALID_LOCATION naming the URI); R12, R38: a warehouse or system root that
    overlaps the fail-safe store is refused (INVALID_LOCATION). Each time no home is created
    and no object written."""
    home = tmp_path / "home"
    secret = s3_bucket.server.secret_key
    monkeypatch.setenv("REWIND_SPARK_SERVER", "off")
    leaked = f"s3://{s3_bucket.server.access_key}:{secret}@{s3_bucket.name}/warehouse"
    overlapping = {
        "REWIND_WAREHOUSE_URI": f"s3://{s3_bucket.name}/lakehouse",
        "REWIND_FAILSAFE_URI": f"s3://{s3_bucket.name}/lakehouse/failsafe",
    }
    cases: list[tuple[dict[str, str], str]] = [
        ({"REWIND_WAREHOUSE_URI": leaked}, "must not carry credentials"),
        ({"REWIND_SYSTEM_URI": leaked.replace("/warehouse", "/system")}, "carry credentials"),
        (
            {"REWIND_WAREHOUSE_URI": f"s3://{s3_bucket.name}-gone-{secrets.token_hex(3)}/wh"},
            "does not exist",
        ),
        (overlapping, "overlaps the fail-safe store"),
        (
            {
                "REWIND_SYSTEM_URI": f"s3://{s3_bucket.name}/failsafe/system",
                "REWIND_FAILSAFE_URI": f"s3://{s3_bucket.name}/failsafe",
            },
            "overlaps the fail-safe store",
        ),
    ]
    messages = []
    for settings, reason in cases:
        for name in ("REWIND_WAREHOUSE_URI", "REWIND_SYSTEM_URI", "REWIND_FAILSAFE_URI"):
            monkeypatch.delenv(name, raising=False)
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        started = time.monotonic()
        with pytest.raises(RewindError) as caught:
            rewind.connect(home=home)
        assert time.monotonic() - started < 10, settings
        error = caught.value
        assert (error.code, reason in error.message) == ("INVALID_LOCATION", True), error
        messages.append(error.message)
        assert not home.exists(), settings
        assert objects(s3_bucket) == {}, settings
    assert "s3://***@" in messages[0]
    for message in messages:
        assert secret not in message
    monkeypatch.delenv("REWIND_FAILSAFE_URI")
    monkeypatch.setenv("REWIND_SYSTEM_URI", f"file://{tmp_path / 'elsewhere'}")
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", f"s3://{s3_bucket.name}/warehouse")
    config = Config.load(home=home)
    assert str(config.warehouse_root) == f"s3://{s3_bucket.name}/warehouse"
    assert config.system_root == tmp_path / "elsewhere"


def test_a_warehouse_on_s3_another_home_uses_is_refused_r4_r44(
    s3_bucket: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R4, R44: the first home to connect to ``s3://<bucket>/warehouse`` marks it and its
    system root as its catalog's (one object each, ``_rewind_catalog.json``, written with
    ``If-None-Match: *``); a second home pointed at it is refused at its first connection
    (INVALID_LOCATION naming the setting and the first home) and writes nothing to the
    bucket; the first home goes on. Before, the second home's tables took the first one's
    ids there."""
    monkeypatch.setenv("REWIND_SPARK_SERVER", "off")
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", f"s3://{s3_bucket.name}/warehouse")
    monkeypatch.setenv("REWIND_SYSTEM_URI", f"s3://{s3_bucket.name}/system")
    first = rewind.connect(home=tmp_path / "a")
    first.sql("CREATE DATABASE D")
    first.close()
    kept = objects(s3_bucket)
    assert sorted(kept) == ["system/_rewind_catalog.json", "warehouse/_rewind_catalog.json"]
    with pytest.raises(InvalidLocation) as caught:
        rewind.connect(home=tmp_path / "b")
    assert caught.value.message.startswith(
        f"REWIND_WAREHOUSE_URI is set to s3://{s3_bucket.name}/warehouse, which another "
        f"Rewind catalog uses (its home: {tmp_path / 'a'};"
    ), caught.value.message
    assert objects(s3_bucket) == kept
    again = rewind.connect(home=tmp_path / "a")
    shown = again.sql("SHOW DATABASES")[-1]
    assert [dict(zip(shown.columns, r, strict=True))["name"] for r in shown.rows] == ["D"]
    again.close()
