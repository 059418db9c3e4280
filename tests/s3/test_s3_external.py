"""A Delta table another engine keeps on S3, put under Rewind where it is (SPEC R41–R46), on
a real S3 server (SeaweedFS, rewind/seaweedfs.py): registered with ``CREATE EXTERNAL TABLE
... LOCATION = 's3://...'``, read at every point of its history, written by Rewind and by
its own writer, dropped and undropped, and governed by the nightly lifecycle where it is.
No object of the team's is moved, copied or rewritten by any of it, and the server's secret
key is nowhere Rewind writes or answers (R45).
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from test_s3_spark import run_jobs

from rewind.errors import RewindError
from rewind.lifecycle.metrics import metrics_path
from rewind.storage import objectstore
from rewind.storage.log import dv_file, read_commit

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3")]

GAP = 2.0  # seconds between the team's commits: S3's LastModified has whole seconds


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.sql(sql)[-1].rows]


def ids(conn: Any, point: str = "") -> list[int]:
    return [r[0] for r in rows(conn, f"SELECT ID FROM ORDERS {point} ORDER BY ID")]


def register(conn: Any, name: str, where: str) -> None:
    conn.sql(f"CREATE EXTERNAL TABLE {name} LOCATION = '{where}' TABLE_FORMAT = DELTA")


def refused(conn: Any, sql: str) -> RewindError:
    with pytest.raises(RewindError) as caught:
        conn.sql(sql)
    return caught.value


def objects(bucket: Any) -> dict[str, str]:
    """Every object in the bucket, with its ETag: what any write of it would change."""
    client = bucket.server.client()
    found: dict[str, str] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket.name):
        found.update({item["Key"]: item["ETag"] for item in page.get("Contents", [])})
    return found


def options() -> dict[str, str]:
    """The team's delta-rs writer's settings: the same AWS variables (SPEC R44)."""
    return objectstore.delta_rs_options(objectstore.settings())


def table_id(home: Path, name: str) -> int:
    with closing(sqlite3.connect(home / "catalog.db")) as db:
        ((found,),) = db.execute(
            "SELECT id FROM objects WHERE kind = 'TABLE' AND name = ? AND dropped_on IS NULL",
            (name,),
        ).fetchall()
    return int(found)


def team_rows(uri: str) -> list[tuple[Any, ...]]:
    table = DeltaTable(uri, storage_options=options()).to_pyarrow_table().sort_by("ID")
    return list(zip(table["ID"].to_pylist(), table["V"].to_pylist(), strict=True))


@pytest.fixture
def team(lake: Any) -> tuple[str, datetime]:
    """The team's table, written by a plain delta-rs writer at ``s3://<bucket>/team/orders``:
    rows 1, 2 (v0), row 3 (v1), then a DELETE of row 2 (v2); and an instant between v0
    and v1."""
    uri = f"{lake.uri}team/orders"
    write_deltalake(uri, pa.table({"ID": [1, 2], "V": ["a", "b"]}), storage_options=options())
    time.sleep(GAP)
    between = datetime.now(UTC)
    time.sleep(GAP)
    write_deltalake(
        uri, pa.table({"ID": [3], "V": ["c"]}), mode="append", storage_options=options()
    )
    DeltaTable(uri, storage_options=options()).delete("ID = 2")
    return uri, between


def secret_free(secret: str, home: Path, *texts: str) -> None:
    """SPEC R45: the secret is in no file of the home (catalog, QUERY_HISTORY, logs) and no
    text Rewind answered."""
    assert secret
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    for text in texts:
        assert secret not in text


def test_a_team_table_on_s3_is_governed_where_it_is_r41_r42_r46(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path
) -> None:
    """Registered from S3 with its history (R41): read now, AT a timestamp, AT an offset,
    BEFORE a statement; written by Rewind through delta-rs's conditional commits (R46) and
    by the team's writer after registration (R40), each side reading the other's rows;
    its Delta retention raised on S3 (R42); cloned without a copy (R47); DROP and UNDROP keep
    every object, and the clone reads after the DROP."""
    uri, between = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    assert ids(conn) == [1, 3]
    assert ids(conn, f"AT(TIMESTAMP => '{between.isoformat()}')") == [1, 2]
    offset = round((datetime.now(UTC) - between).total_seconds())
    assert ids(conn, f"AT(OFFSET => -{offset})") == [1, 2]
    configuration = DeltaTable(uri, storage_options=options()).metadata().configuration
    assert configuration["delta.deletedFileRetentionDuration"] == "interval 8 days"
    assert "delta.logRetentionDuration" not in configuration  # Delta's 30 days cover it

    inserted = conn.sql("INSERT INTO ORDERS VALUES (4, 'd')")[-1].query_id
    conn.sql("UPDATE ORDERS SET V = 'C' WHERE ID = 3")
    conn.sql("DELETE FROM ORDERS WHERE ID = 1")
    assert team_rows(uri) == [(3, "C"), (4, "d")]  # the team's reader sees Rewind's commits
    assert ids(conn, f"BEFORE(STATEMENT => '{inserted}')") == [1, 3]
    staged = [key for key in objects(lake) if "_rewind_staging" in key]
    assert staged == []  # statements leave no staging object behind (R28)

    write_deltalake(
        uri, pa.table({"ID": [9], "V": ["z"]}), mode="append", storage_options=options()
    )
    assert ids(conn) == [3, 4, 9]  # the team's commit after registration (R40)
    shown = conn.sql("SHOW TABLES")[-1]
    table = dict(zip(shown.columns, shown.rows[0], strict=True))
    assert (table["is_external"], table["rows"], table["change_tracking"]) == ("Y", 3, "OFF")

    conn.sql("CREATE TABLE COPY CLONE ORDERS")  # zero-copy (R47): tests/s3/test_s3_clone.py
    kept = objects(lake)
    conn.sql("DROP TABLE ORDERS")
    assert objects(lake) == kept  # the team's objects stay (R41)
    assert rows(conn, "SELECT ID FROM COPY ORDER BY ID") == [(3,), (4,), (9,)]
    dropped = conn.sql("SHOW TABLES HISTORY LIKE 'ORDERS' IN SCHEMA LAKE.PUBLIC")[-1]
    assert dropped.column("dropped_on")[0] is not None
    conn.sql("UNDROP TABLE ORDERS")
    assert rows(conn, "SELECT * FROM ORDERS ORDER BY ID") == [(3, "C"), (4, "d"), (9, "z")]
    assert objects(lake) == kept
    history = rows(conn, "SELECT QUERY_TEXT FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY")
    assert any(uri in str(text) for (text,) in history)
    secret_free(lake.server.secret_key, home, *(str(t) for (t,) in history))


def test_the_nightly_lifecycle_governs_a_table_on_s3_where_it_is_r29_r30_r33_r50(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path
) -> None:
    """A run right after the changes reads the S3 table's commits from its ``_delta_log``
    (R32, R50), tracks its files and counts its bytes (R33): current ones ACTIVE, the ones
    removed today in time travel (R30), so it moves none of its objects; a local table
    beside it is governed as ever; the validation step agrees (R29). A later night's moves
    into fail-safe: tests/s3/test_s3_lifecycle.py."""
    uri, _ = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    conn.sql("CREATE TABLE LOCAL_ONE (ID INT); INSERT INTO LOCAL_ONE VALUES (1)")
    conn.sql("DELETE FROM ORDERS WHERE ID = 1")
    kept = objects(lake)
    steps = conn.lifecycle()
    merged = {key: value for step in steps for key, value in step.items()}
    assert "object_store_tables_left_alone" not in merged
    versions = DeltaTable(uri, storage_options=options()).version() + 1
    assert merged["commits_read"] >= versions + 2  # the S3 table's and the local table's
    assert (merged["files_journaled"], merged["files_moved"]) == (0, 0)
    assert objects(lake) == kept
    (orders,) = [r for r in metrics(home) if r["TABLE_NAME"] == "ORDERS"]
    adds = DeltaTable(uri, storage_options=options()).get_add_actions(flatten=True)
    assert orders["ACTIVE_BYTES"] == sum(pa.table(adds)["size_bytes"].to_pylist())
    assert orders["TIME_TRAVEL_BYTES"] > 0  # rows 1 and 2's files (R41: before and after)
    assert orders["FAILSAFE_BYTES"] == 0
    assert ids(conn) == [3]
    secret_free(lake.server.secret_key, home)


def metrics(home: Path) -> list[dict[str, Any]]:
    """The latest storage metrics row of each table (SPEC R33)."""
    table = DeltaTable(str(metrics_path(home / "system"))).to_pyarrow_table()
    latest: dict[int, dict[str, Any]] = {}
    for row in sorted(table.to_pylist(), key=lambda r: r["AS_OF"]):
        latest[row["ID"]] = row
    return list(latest.values())


def test_each_refusal_of_an_s3_location_has_its_code_and_writes_nothing_r41_r45_r49(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path, monkeypatch: Any
) -> None:
    """Credentials in the URI, a missing bucket, a prefix with no Delta log, a wrong secret,
    a location already governed under another spelling: each refused with its code before
    anything is written, and no message shows the secret (R45)."""
    uri, _ = team
    secret = lake.server.secret_key
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    kept = objects(lake)
    path = uri.removeprefix("s3://")
    attempts = {
        f"s3://{lake.server.access_key}:{secret}@{path}": "INVALID_LOCATION",
        f"s3://no-such-bucket-{lake.name[-8:]}/orders": "INVALID_LOCATION",
        f"{lake.uri}team": "INVALID_LOCATION",  # no _delta_log right under it
        f"s3a://{path}/": "LOCATION_IN_USE",
    }
    messages = []
    for where, code in attempts.items():
        error = refused(
            conn, f"CREATE EXTERNAL TABLE OTHER LOCATION = '{where}' TABLE_FORMAT = DELTA"
        )
        assert error.code == code, (where, error.message)
        messages.append(error.message)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-" + "x" * 20)
    error = refused(conn, f"CREATE EXTERNAL TABLE OTHER LOCATION = '{uri}' TABLE_FORMAT = DELTA")
    assert error.code == "CONFIGURATION_ERROR", error.message
    messages.append(error.message)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    assert objects(lake) == kept
    assert conn.sql("SHOW TABLES IN SCHEMA LAKE.PUBLIC")[-1].column("name") == ["ORDERS"]
    secret_free(secret, home, *messages)


def test_rewinds_writes_to_a_partitioned_team_table_on_s3_go_by_partition_r41_r43_r46(
    lake: Any, connect: Any
) -> None:
    """Rewind's INSERT, UPDATE and DELETE on a table partitioned by REGION on S3: the files
    Spark writes under ``REGION=<value>/`` prefixes of the staging area are each committed
    with their partition values (NULL too), the rows it rewrites read theirs from the log,
    and the team's delta-rs reader reads the rows back."""
    uri = f"{lake.uri}team/sales"
    first = pa.table({"ID": [1, 2], "REGION": ["eu", "us"]})
    write_deltalake(uri, first, partition_by=["REGION"], storage_options=options())
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "SALES", uri)
    conn.sql("INSERT INTO SALES VALUES (3, 'eu'), (4, NULL)")
    conn.sql("UPDATE SALES SET REGION = 'us' WHERE ID = 3; DELETE FROM SALES WHERE ID = 1")
    read = DeltaTable(uri, storage_options=options()).to_pyarrow_table().sort_by("ID")
    assert list(zip(read["ID"].to_pylist(), read["REGION"].to_pylist(), strict=True)) == [
        (2, "us"),
        (3, "us"),
        (4, None),
    ]
    assert [key for key in objects(lake) if "_rewind_staging" in key] == []


def test_rewinds_rewrites_of_a_team_table_with_a_change_feed_on_s3_write_its_changes_r40_r46(
    lake: Any, connect: Any
) -> None:
    """The team's delta-rs table on S3, partitioned, with the change data feed on: Rewind's
    UPDATE (a row moved to another partition), DELETE and MERGE put their change files
    under ``_change_data/`` beside the data files, and the team's delta-rs reader of the
    feed (``load_cdf``) reads each statement's changes exactly, not the whole files they
    rewrote; a column named as the feed's readers name theirs is refused."""
    uri = f"{lake.uri}team/feed"
    first = pa.table({"ID": [1, 2, 3], "REGION": ["eu", "eu", "us"], "V": ["a", "b", "c"]})
    feed = {"delta.enableChangeDataFeed": "true"}
    write_deltalake(
        uri, first, partition_by=["REGION"], configuration=feed, storage_options=options()
    )
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "FEED", uri)  # version 1: the retention guard (R42)
    shown = conn.sql("SHOW TABLES LIKE 'FEED'")[-1]
    # Snowflake's change tracking is Delta's row tracking (the CHANGES clause's row ids):
    # a change data feed alone is not it
    assert shown.column("change_tracking") == ["OFF"]
    # A column the feed's readers name themselves is refused, as delta-spark refuses it
    for sql in [
        "ALTER TABLE FEED ADD COLUMN _change_type STRING",
        'ALTER TABLE FEED RENAME COLUMN V TO "_commit_version"',
    ]:
        assert refused(conn, sql).code == "INVALID_VALUE", sql
    conn.sql("UPDATE FEED SET REGION = 'us' WHERE ID = 1; DELETE FROM FEED WHERE ID = 3")
    conn.sql(
        "MERGE INTO FEED USING (SELECT 2 AS ID, 'B' AS V UNION ALL SELECT 4, 'd') S "
        "ON FEED.ID = S.ID WHEN MATCHED THEN UPDATE SET V = S.V "
        "WHEN NOT MATCHED THEN INSERT VALUES (S.ID, 'eu', S.V)"
    )
    changes = pa.table(DeltaTable(uri, storage_options=options()).load_cdf(starting_version=2))

    def columns(*names: str) -> list[tuple[Any, ...]]:
        return sorted(zip(*(changes[c].to_pylist() for c in names), strict=True))

    assert columns("_commit_version", "_change_type", "ID", "V") == [
        (2, "update_postimage", 1, "a"),
        (2, "update_preimage", 1, "a"),
        (3, "delete", 3, "c"),
        (4, "insert", 4, "d"),
        (4, "update_postimage", 2, "B"),
        (4, "update_preimage", 2, "b"),
    ]
    regions = columns("_change_type", "ID", "REGION")
    assert {(kind, region) for kind, row, region in regions if row == 1} == {
        ("update_preimage", "eu"),
        ("update_postimage", "us"),
    }
    written = [key for key in objects(lake) if key.startswith("team/feed/_change_data/")]
    assert len(written) >= 3
    assert [key for key in objects(lake) if "_rewind_staging" in key] == []


def test_a_team_table_with_deletion_vectors_on_s3_is_restored_cloned_and_written_r16_r41_r46(
    lake: Any, connect: Any, home: Path
) -> None:
    """The team's delta-spark job on S3 (s3a) deletes a row of a table with a new
    Databricks table's defaults (deletion vectors, row tracking, column mapping): Rewind
    restores the table to before that DELETE and back (its commits, which name the vector
    and keep the files' row ids, put on S3 by conditional PUT, R46), clones the DELETE's
    version (both files referenced where they are, by URI, under the clone's own column
    mapping, and the vector by its object's URI: no object copied, R47) and rewrites the
    vector's file in an UPDATE (physical names, row ids kept); the team's next job reads
    every version right, its row ids unique. Two days on, the night finds the vector's
    object out of the table's time travel and keeps it where it is, for the clone (R24,
    R30): the clone reads the same rows after it."""
    uri = f"{lake.uri}team/dv"
    job = ["spark-sql", "s3a://" + uri.split("://", 1)[1]]
    dv = (
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
        "'delta.enableRowTracking' = 'true', 'delta.columnMapping.mode' = 'name')"
    )
    create = f"CREATE TABLE {{t}} (ID BIGINT, V STRING) USING delta {dv}"
    fill = "INSERT INTO {t} SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c')"
    more = "INSERT INTO {t} VALUES (4, 'd')"
    run_jobs([[*job, create, fill, more, "DELETE FROM {t} WHERE ID = 2"]], lake.env)
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "DV", uri)
    assert rows(conn, "SELECT ID FROM DV ORDER BY ID") == [(1,), (3,), (4,)]
    ((deleted,),) = rows(
        conn,
        "SELECT QUERY_ID FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
        "WHERE QUERY_TYPE = 'DELTA_COMMIT' ORDER BY START_TIME DESC LIMIT 1",
    )
    conn.restore("LAKE.PUBLIC.DV", before=deleted)
    assert rows(conn, "SELECT ID FROM DV ORDER BY ID") == [(1,), (2,), (3,), (4,)]
    before_clone = objects(lake)
    conn.sql(f"CREATE TABLE CL CLONE DV AT(STATEMENT => '{deleted}')")
    assert rows(conn, "SELECT ID FROM CL ORDER BY ID") == [(1,), (3,), (4,)]
    ((clone_log,),) = [list((home / "warehouse").glob("*/_delta_log"))]
    version_0 = read_commit(clone_log.parent, 0)
    assert version_0 is not None
    shared = [a["path"] for a in version_0.adds() if a["path"].startswith(uri)]
    assert len(shared) == len(version_0.adds()) == 2
    (vector,) = [a["deletionVector"] for a in version_0.adds() if a.get("deletionVector")]
    assert vector["storageType"] == "p" and vector["pathOrInlineDv"].startswith(f"{uri}/")
    written = set(objects(lake)) - set(before_clone)
    assert written and all("/_delta_log/" in key for key in written), written  # R42's guard
    conn.restore("LAKE.PUBLIC.DV", at=deleted)
    conn.sql("UPDATE DV SET V = 'C' WHERE ID = 3")
    # versions: 0 CREATE, 1 and 2 INSERTs, 3 the DELETE, 4 the registration's retention
    # (R42), 5 the restore before the DELETE, 6 the retention a clone that references the
    # table's objects holds (R24, R47), 7 the restore to the DELETE, 8 the UPDATE
    unique = "SELECT count(DISTINCT _metadata.row_id) = count(*) FROM {t}"
    reads = ["SELECT * FROM {v5}", "SELECT * FROM {v7}", "SELECT * FROM {t}", unique]
    (answer,) = run_jobs([[*job, *reads]], lake.env)
    assert answer["results"] == [
        [[1, "a"], [2, "b"], [3, "c"], [4, "d"]],  # the restore to before the DELETE
        [[1, "a"], [3, "c"], [4, "d"]],  # the restore to it
        [[1, "a"], [3, "C"], [4, "d"]],
        [[True]],
    ]
    # The UPDATE took the vector out of the table (version 8), a day of time travel ago:
    # its object stays where it is, RETAINED for the clone (R30), not moved to fail-safe.
    key = vector["pathOrInlineDv"].removeprefix(lake.uri)
    later = connect(now=(datetime.now(UTC) + timedelta(days=2)).isoformat())
    assert later.lifecycle()[-1]["failed"] == 0
    assert key in objects(lake)
    assert rows(later, "SELECT ID FROM LAKE.PUBLIC.CL ORDER BY ID") == [(1,), (3,), (4,)]
    # Fail-safe recovery of the clone's version 0 (R12): a table of its own, the objects
    # and the vector copied from where the team keeps them, the vector stored as its own
    later.failsafe_recover(table_id(home, "CL"), "LAKE.PUBLIC.CL_BACK", version=0)
    assert rows(later, "SELECT ID FROM LAKE.PUBLIC.CL_BACK ORDER BY ID") == [(1,), (3,), (4,)]
    back = home / "warehouse" / str(table_id(home, "CL_BACK"))
    recovered = read_commit(back, 0)
    assert recovered is not None
    (copied,) = [a["deletionVector"] for a in recovered.adds() if a.get("deletionVector")]
    assert copied["storageType"] == "u" and (back / str(dv_file(copied))).is_file()
