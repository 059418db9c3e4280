"""The fail-safe store on S3 (SPEC R12, R31, R44, R45, R48, R49), on a real S3 server
(SeaweedFS, rewind/seaweedfs.py): ``REWIND_FAILSAFE_URI=s3://<bucket>/failsafe``.

A night moves an expired file of a table in the local warehouse (an upload) and an expired
object of a team's table on S3 (a server-side copy: no byte of it passes through Rewind)
into the fail-safe bucket; each copy is verified against its source (size, and MD5 where
both ETags are one) before the source goes, so a copy that is not the source's bytes is
never trusted. Killed between a copy and the delete of its source, the night converges.
ACCOUNTADMIN recovers both tables from the S3 fail-safe; the metrics count its bytes.
Where the fail-safe bucket has Object Lock, every copy is locked in COMPLIANCE mode until
its purge instant: the server refuses its delete to any credential, and a purge before
the lock ends skips it and reports it, then purges it once the lock has passed. Every copy
takes ``REWIND_FAILSAFE_STORAGE_CLASS``. A fail-safe URI with credentials in it is refused
(INVALID_LOCATION), and a missing fail-safe bucket stops a night within seconds, naming
the URI, before anything is written.

The steps that move or purge objects run as Spark jobs of their own (``spark_jobs/``), as
Airflow submits them, with the fail-safe settings in their environment.
"""

from __future__ import annotations

import json
import re
import secrets
import signal
import sqlite3
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from deltalake import DeltaTable, write_deltalake
from lifecycle_jobs import run_job
from s3_proxy import FaultyProxy
from test_s3_external import ids, objects, options, register, secret_free
from test_s3_lifecycle import PREFIX, current_files, data_objects, requests, step, table_id

from rewind.config import Config
from rewind.constants import FAILSAFE_DAYS
from rewind.errors import InvalidLocation, InvalidValue
from rewind.storage import location

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3_lifecycle")]

JOB_TIMEOUT_S = 300
FAILSAFE_PREFIX = "failsafe"


@dataclass
class Store:
    """The fail-safe bucket of a test: ``uri`` (``s3://<name>/failsafe``) and ``settings``
    (its ``REWIND_*`` variables, set in this process too)."""

    name: str
    uri: str
    settings: dict[str, str]
    client: Any

    def key(self, home: Path, table: str, path: str) -> str:
        return f"{FAILSAFE_PREFIX}/{table_id(home, table)}/{path}"

    def read(self, key: str) -> bytes | None:
        try:
            return bytes(self.client.get_object(Bucket=self.name, Key=key)["Body"].read())
        except ClientError:
            return None


def failsafe_bucket(
    lake: Any,
    monkeypatch: pytest.MonkeyPatch,
    *,
    locked: bool = False,
    storage_class: str | None = None,
) -> Store:
    """A bucket of its own for fail-safe (with Object Lock: ``locked``), configured."""
    name = f"{lake.name}-fs"
    client = lake.server.client()
    client.create_bucket(Bucket=name, ObjectLockEnabledForBucket=locked)
    settings = {"REWIND_FAILSAFE_URI": f"s3://{name}/{FAILSAFE_PREFIX}"}
    if storage_class:
        settings["REWIND_FAILSAFE_STORAGE_CLASS"] = storage_class
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    return Store(name, settings["REWIND_FAILSAFE_URI"], settings, client)


def job(home: Path, store: Store, step_name: str, run_id: str, now: datetime, **kw: Any) -> dict:
    """A lifecycle step as a Spark job with the fail-safe settings: its JSON summary. With
    ``fault`` it must die by SIGKILL there (SPEC R31); with ``fails`` stop with an error
    (``{"error": its one line}``); ``spark=False``: the same job with its file operations
    in plain Python workers (tests/lifecycle_jobs.py), no JVM."""
    fault, fails = kw.get("fault"), kw.get("fails", False)
    code, out, err = run_job(
        home,
        step_name,
        run_id,
        now,
        fault,
        JOB_TIMEOUT_S,
        store.settings,
        spark=kw.get("spark", True),
    )
    if fails:
        assert code == 1, f"{step_name}: exit {code}\n{err[-3000:]}"
        return {"error": err.strip().splitlines()[-1]}
    expected = 0 if fault is None else -signal.SIGKILL
    assert code == expected, f"{step_name} {fault}: exit {code}\n{err[-3000:]}"
    return {} if fault is not None else dict(json.loads(out.splitlines()[-1]))


def removed_file(home: Path, table: str) -> tuple[str, datetime | None]:
    """The one file a night took out of a table: its path and purge instant."""
    with closing(sqlite3.connect(home / "catalog.db")) as db:
        ((path, purge_at),) = db.execute(
            "SELECT path, purge_at FROM file_states WHERE table_id = ? AND state != 'LIVE'",
            (table_id(home, table),),
        ).fetchall()
    at = datetime.fromisoformat(purge_at).replace(tzinfo=UTC) if purge_at else None
    return str(path), at


def local_files(root: Path, version: int) -> set[str]:
    """The data files of a local table's version."""
    adds = DeltaTable(str(root), version=version).get_add_actions(flatten=True)
    return set(pa.table(adds)["path"].to_pylist())


def local_table(conn: Any) -> None:
    """LOCAL_T in the warehouse: rows 1, 2, then 3 in a file of its own, which the DELETE
    of row 3 removes."""
    conn.sql("CREATE TABLE LOCAL_T (ID INT); INSERT INTO LOCAL_T VALUES (1), (2)")
    conn.sql("INSERT INTO LOCAL_T VALUES (3)")
    conn.sql("DELETE FROM LOCAL_T WHERE ID = 3")


def team_table(lake: Any, *, noise: int = 0) -> str:
    """The team's table on S3 (delta-rs): row 1 in a file of its own (``noise`` random
    bytes of V, so that its size shows whether it went through a client), then rows 2, 3;
    returns its URI."""
    uri = f"{lake.uri}team/orders"
    first = pa.table({"ID": [1], "V": [secrets.token_hex(noise // 2)]})
    write_deltalake(uri, first, storage_options=options())
    write_deltalake(
        uri, pa.table({"ID": [2, 3], "V": ["b", "c"]}), mode="append", storage_options=options()
    )
    return uri


def test_a_night_copies_expired_files_into_an_s3_failsafe_verified_and_recovers_them_r12_r31_r48(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R12, R31, R33, R44, R48: a night moves LOCAL_T's removed file (uploaded) and the
    team's removed object (copied server-side: the fail-safe bucket served one COPY and the
    team's bucket sent far fewer bytes than the object has) into the S3 fail-safe, in the
    configured storage class, with the source's bytes; killed after its first copy, before
    that copy's source was deleted, it converges. ACCOUNTADMIN then recovers both tables
    from the S3 fail-safe, and the metrics count its bytes as FAILSAFE_BYTES."""
    store = failsafe_bucket(lake, monkeypatch, storage_class="STANDARD_IA")
    uri = team_table(lake, noise=2_000_000)
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    local_table(conn)
    register(conn, "ORDERS", uri)
    registered = DeltaTable(uri, storage_options=options()).version()
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    (s3_path,) = sorted(set(data_objects(lake)) - set(current_files(uri)))
    s3_bytes = lake.server.client().get_object(Bucket=lake.name, Key=PREFIX + s3_path)
    s3_bytes = s3_bytes["Body"].read()
    assert len(s3_bytes) > 1_000_000
    local_root = home / "warehouse" / str(table_id(home, "LOCAL_T"))
    latest = DeltaTable(str(local_root)).version()
    (local_path,) = local_files(local_root, latest - 1) - local_files(local_root, latest)
    local_source = local_root / local_path
    local_bytes = local_source.read_bytes()
    copies = {
        store.key(home, "ORDERS", s3_path): s3_bytes,
        store.key(home, "LOCAL_T", local_path): local_bytes,
    }
    night = ("night", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night)
    before_lake, before_store = lake.server.counted(lake.name), lake.server.counted(store.name)

    job(home, store, "expire_versions", *night, fault="copied:1")
    held = {key: store.read(key) for key in copies}
    assert local_source.exists() and s3_path in data_objects(lake)  # no source deleted yet
    assert [key for key, data in held.items() if data is not None] != [], held
    assert all(data in (None, copies[key]) for key, data in held.items())  # whole or none
    expired = job(home, store, "expire_versions", *night)
    assert (expired["files_moved"], expired["files_missing"]) == (2, 0), expired
    assert expired["bytes_moved"] == len(s3_bytes) + len(local_bytes)

    lake_made = lake.server.counted(lake.name) - before_lake
    store_made = lake.server.counted(store.name) - before_store
    # The object: a server-side copy (R48); the local file: an upload. (The two moves run in
    # parallel, so the killed run may have had both under way: one of each, or two.) One
    # PUT more: the catalog's marker, at the store's first use (rewind.home.own_root).
    assert store_made["COPY"] in (1, 2) and store_made["PUT"] in (2, 3), store_made
    assert lake_made["SENT_BYTES"] < len(s3_bytes) / 10, lake_made  # never downloaded
    for key, data in copies.items():
        assert store.read(key) == data, key
        head = store.client.head_object(Bucket=store.name, Key=key)
        assert head["StorageClass"] == "STANDARD_IA", key  # REWIND_FAILSAFE_STORAGE_CLASS
    assert not local_source.exists()
    assert s3_path not in data_objects(lake)
    assert not (home / "failsafe").exists()  # nothing in the home's default store

    counted = step(home, "storage_metrics", *night)
    assert counted["failsafe_bytes"] == len(s3_bytes) + len(local_bytes), counted  # R33
    step(home, "validate", *night)

    # R12: recovery reads the S3 fail-safe (and each table's current files where they are).
    listed = conn.failsafe_list()
    assert sorted(listed.column("table_id")) == sorted(
        [table_id(home, "LOCAL_T"), table_id(home, "ORDERS")]
    )
    conn.failsafe_recover(table_id(home, "ORDERS"), "LAKE.PUBLIC.ORDERS_BACK", registered)
    back = conn.sql("SELECT ID FROM ORDERS_BACK ORDER BY ID")[-1].rows
    assert [r[0] for r in back] == [1, 2, 3]
    conn.failsafe_recover(table_id(home, "LOCAL_T"), "LAKE.PUBLIC.LOCAL_BACK", 2)
    back = conn.sql("SELECT ID FROM LOCAL_BACK ORDER BY ID")[-1].rows
    assert [r[0] for r in back] == [1, 2, 3]
    assert all(store.read(key) == data for key, data in copies.items())  # copied, not moved
    assert ids(conn) == [2, 3]

    # R12, R50: past the 7 days the purge deletes the copies by DeleteObjects, one request
    # per Spark task (local[2] may give each copy a task of its own), after one GET of the
    # bucket's versioning: it never had any, so no ListObjectVersions per copy (the one LIST
    # is the store's probe, R49; the one GET more, the catalog's marker, rewind.home.own_root).
    before = lake.server.counted(store.name)
    purged = job(home, store, "purge_failsafe", "late", night[1] + timedelta(days=FAILSAFE_DAYS))
    made = lake.server.counted(store.name) - before
    assert purged["files_purged"] == 2, purged
    assert made["LIST"] == 1 and 1 <= made["DELETE"] == made["GET"] - 1 <= 2, made
    assert all(store.read(key) is None for key in copies)
    secret_free(lake.server.secret_key, home)


def settled(server: Any, bucket: str, kind: str, at_least: int) -> Counter[str]:
    """The server's counts for ``bucket`` once its ``kind`` requests number ``at_least``:
    SeaweedFS counts a request a moment after it answers it, so a count read right after
    the test's own request can miss it (seen once under a loaded suite: the test's PUT
    counted in the night's requests)."""
    deadline = time.monotonic() + 10
    while True:
        counted: Counter[str] = server.counted(bucket)
        if counted[kind] >= at_least or time.monotonic() > deadline:
            return counted
        time.sleep(0.05)


def test_a_copy_that_is_not_its_source_is_never_trusted_r31_r48(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R31, R48, R50: an object already at the copy's place with the source's size but
    other bytes (a copy a killed run left, gone wrong) is never trusted: the night copies
    over it and verifies. A copy whose answer reports other bytes than the source's (a
    proxy rewrites the MD5 of CopyObject's answer) stops the night with STORAGE_ERROR
    naming the object: the source stays, the copy is deleted; the next night copies again,
    verified, and only then deletes the source. Each verified move of an object makes one
    HEAD of its source and one COPY, nothing more in the fail-safe bucket (R50)."""
    store = failsafe_bucket(lake, monkeypatch)
    uri = team_table(lake)
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    (path,) = sorted(set(data_objects(lake)) - set(current_files(uri)))
    source = lake.server.client().get_object(Bucket=lake.name, Key=PREFIX + path)["Body"].read()
    key = store.key(home, "ORDERS", path)
    night = ("night", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night)

    lying = FaultyProxy(
        lake.server.endpoint,
        rewrite=lambda body: re.sub(
            rb"(<CopyObjectResult.*<ETag>)[^<]*(</ETag>)",
            rb"\1&quot;" + b"0" * 32 + rb"&quot;\2",
            body,
            flags=re.S,
        ),
    ).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", lying.endpoint)
        error = job(home, store, "expire_versions", *night, fails=True)["error"]
    finally:
        lying.stop()
        monkeypatch.setenv("AWS_ENDPOINT_URL", lake.server.endpoint)
    assert error.startswith("error: STORAGE_ERROR: A lifecycle file operation failed: "), error
    assert "the copy differs from its source (MD5)" in error, error
    assert f"{lake.uri}{PREFIX}{path}" in error, error
    assert path in data_objects(lake)
    assert store.read(key) is None  # the copy that did not verify is gone

    wrong = bytes(b ^ 0xFF for b in source)
    puts = lake.server.counted(store.name)["PUT"]
    store.client.put_object(Bucket=store.name, Key=key, Body=wrong)
    before = settled(lake.server, store.name, "PUT", puts + 1)  # the test's own PUT
    moved = job(home, store, "expire_versions", *night)
    assert (moved["files_moved"], moved["files_missing"]) == (1, 0), moved
    made = lake.server.counted(store.name) - before
    assert store.read(key) == source
    assert path not in data_objects(lake)
    before = lake.server.counted(store.name)
    idle = job(home, store, "expire_versions", *night)  # nothing left: the fixed requests
    assert idle["files_moved"] == 0, idle
    fixed = lake.server.counted(store.name) - before
    del made["SENT_BYTES"], fixed["SENT_BYTES"]
    # One COPY, no HEAD of the copy (its answer verifies it), and the bucket's Object Lock
    # configuration (a GET), read once by a run that moves files.
    assert made - fixed == Counter(COPY=1, GET=1), (made, fixed)
    secret_free(lake.server.secret_key, home, error)


def test_object_lock_holds_every_failsafe_copy_until_its_purge_instant_r12_r48(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R12, R48: in a fail-safe bucket with Object Lock, the night's copies (LOCAL_T's and
    SHORT_T's files, uploaded; the team's object, copied) are locked in COMPLIANCE mode until
    their purge instants, the end of their 7 days; the server refuses a delete of LOCAL_T's
    or the team's with the admin's keys. A purge run at a logical instant past every purge
    instant, while the wall clock is before LOCAL_T's and the team's locks end, deletes
    neither: it reports them (files_locked) and they stay listed in fail-safe. Once SHORT_T's
    lock has passed, the same purge deletes its copy with every version.

    The files were removed at statement clocks 8 days back, less a margin: LOCAL_T's purge
    instant is a minute and a half ahead on the wall clock (the steps before its checks
    must run within it), SHORT_T's 15 s ahead (the test waits for that one only, if the
    steps took less); the team's table keeps no time travel (0 days), so its object's purge
    instant is 7 days ahead. The jobs move and purge in plain Python workers (no JVM start;
    the Spark-run moves into S3 are test_a_night_copies_expired_files_... above), so that
    the margins hold on a loaded machine: 240 s with Spark jobs was once just enough at a
    load of ~10."""
    store = failsafe_bucket(lake, monkeypatch, locked=True)
    margins = {"SHORT_T": timedelta(seconds=15), "LOCAL_T": timedelta(seconds=90)}
    back = datetime.now(UTC) - timedelta(days=1 + FAILSAFE_DAYS)
    connect(now=(back - timedelta(hours=1)).isoformat()).sql("CREATE DATABASE LAKE")
    for table, margin in margins.items():
        past = connect(now=(back - timedelta(hours=1)).isoformat())
        past.sql(f"CREATE TABLE LAKE.PUBLIC.{table} (ID INT)")
        past.sql(f"INSERT INTO LAKE.PUBLIC.{table} VALUES (1), (2)")
        past.sql(f"INSERT INTO LAKE.PUBLIC.{table} VALUES (3)")
        connect(now=(back + margin).isoformat()).sql(
            f"DELETE FROM LAKE.PUBLIC.{table} WHERE ID = 3"
        )
    uri = team_table(lake)
    conn = connect()
    conn.sql(
        f"CREATE EXTERNAL TABLE LAKE.PUBLIC.ORDERS LOCATION = '{uri}' TABLE_FORMAT = DELTA "
        "DATA_RETENTION_TIME_IN_DAYS = 0"
    )
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    night = ("night", datetime.now(UTC) + timedelta(seconds=5))
    step(home, "effective_retention", *night)
    expired = job(home, store, "expire_versions", *night, spark=False)
    assert expired["files_moved"] == 3, expired

    ends = {}
    for table in ("LOCAL_T", "SHORT_T", "ORDERS"):
        path, purge_at = removed_file(home, table)
        assert purge_at is not None
        key = store.key(home, table, path)
        head = store.client.head_object(Bucket=store.name, Key=key)
        assert head["ObjectLockMode"] == "COMPLIANCE", (table, head)
        until = head["ObjectLockRetainUntilDate"]
        assert abs(until - purge_at) < timedelta(seconds=1), (table, until, purge_at)
        ends[table] = (key, purge_at)
    local_key, local_end = ends["LOCAL_T"]
    short_key, short_end = ends["SHORT_T"]
    orders_key, orders_end = ends["ORDERS"]
    assert orders_end - datetime.now(UTC) > timedelta(days=FAILSAFE_DAYS - 1)
    for key in (local_key, orders_key):
        version = store.client.head_object(Bucket=store.name, Key=key)["VersionId"]
        with pytest.raises(ClientError) as refused:  # the admin's keys, by version
            store.client.delete_object(Bucket=store.name, Key=key, VersionId=version)
        assert refused.value.response["Error"]["Code"] == "AccessDenied"

    time.sleep(max(0.0, (short_end - datetime.now(UTC)).total_seconds()) + 2)
    late = ("late", orders_end)  # every purge instant passed on the run's clock
    step(home, "effective_retention", *late)
    purged = job(home, store, "purge_failsafe", *late, spark=False)
    assert datetime.now(UTC) < local_end, "the purge ran after the lock ended: raise margin"
    assert (purged["files_purged"], purged["files_locked"]) == (1, 2), purged
    versions = store.client.list_object_versions(Bucket=store.name, Prefix=short_key)
    assert not versions.get("Versions") and not versions.get("DeleteMarkers"), versions
    assert store.read(local_key) is not None and store.read(orders_key) is not None
    listed = conn.failsafe_list()
    assert sorted(listed.column("table_id")) == sorted(
        table_id(home, table) for table in ("LOCAL_T", "ORDERS")
    ), listed.rows  # still in fail-safe
    assert sorted(listed.column("files")) == [1, 1], listed.rows
    assert step(home, "storage_metrics", *late)["failsafe_bytes"] > 0


def test_a_failsafe_uri_with_credentials_or_a_wrong_storage_class_is_refused_r44_r45_r48(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R45: a fail-safe URI that embeds credentials is refused at load with INVALID_LOCATION,
    its secret in no message; R48: a storage class is for an S3 fail-safe only, and one
    whose objects need a restore before a recovery can read them is refused."""
    secret = "wJalr/" + secrets.token_urlsafe(16)
    monkeypatch.setenv("REWIND_FAILSAFE_URI", f"s3://AKIAEXAMPLE:{secret}@vault/failsafe")
    with pytest.raises(InvalidLocation) as caught:
        Config.load(home=home)
    assert caught.value.code == "INVALID_LOCATION"
    assert "s3://***@vault/failsafe" in str(caught.value) and secret not in str(caught.value)
    monkeypatch.setenv("REWIND_FAILSAFE_URI", str(home / "vault"))
    monkeypatch.setenv("REWIND_FAILSAFE_STORAGE_CLASS", "GLACIER_IR")
    with pytest.raises(InvalidValue, match="applies to an s3:// fail-safe store"):
        Config.load(home=home)
    monkeypatch.setenv("REWIND_FAILSAFE_URI", "s3://vault/failsafe")
    monkeypatch.setenv("REWIND_FAILSAFE_STORAGE_CLASS", "DEEP_ARCHIVE")
    with pytest.raises(InvalidValue, match="readable at once"):
        Config.load(home=home)
    monkeypatch.setenv("REWIND_FAILSAFE_STORAGE_CLASS", "glacier_ir")
    assert Config.load(home=home).failsafe_storage_class == "GLACIER_IR"


def test_no_table_is_registered_inside_an_s3_failsafe_store_r38_r41(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R38, R41: a Delta table inside the S3 fail-safe prefix is in Rewind's own storage:
    its registration is refused with INVALID_LOCATION, and nothing is registered."""
    store = failsafe_bucket(lake, monkeypatch)
    inside = f"{store.uri}/7"
    write_deltalake(inside, pa.table({"ID": [1]}), storage_options=options())
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    with pytest.raises(InvalidLocation, match="overlaps Rewind's own storage"):
        register(conn, "INSIDE", inside)
    assert conn.sql("SHOW TABLES")[-1].rows == []


def test_a_missing_failsafe_bucket_stops_the_night_fast_and_writes_nothing_r49(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R49: with the fail-safe bucket missing, the night's expire step stops within seconds
    with INVALID_LOCATION naming the URI, before anything is written: the expired object
    stays in its table and is not journaled, no bucket appears, no secret is shown."""
    uri = team_table(lake)
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    missing = f"{lake.name}-gone"
    monkeypatch.setenv("REWIND_FAILSAFE_URI", f"s3://{missing}/{FAILSAFE_PREFIX}")
    kept = objects(lake)
    night = ("night", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night)
    started = time.monotonic()
    with pytest.raises(InvalidLocation) as caught:
        step(home, "expire_versions", *night)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert f"s3://{missing}/{FAILSAFE_PREFIX}" in message and "does not exist" in message
    assert objects(lake) == kept
    with closing(sqlite3.connect(home / "catalog.db")) as db:
        states = {state for (state,) in db.execute("SELECT state FROM file_states")}
    assert not states & {"MOVING", "DELETING", "FAILSAFE"}, states  # nothing journaled
    buckets = [b["Name"] for b in lake.server.client().list_buckets()["Buckets"]]
    assert missing not in buckets
    secret_free(lake.server.secret_key, home, message)


@pytest.mark.parametrize(
    ("source", "copy", "same"),
    [
        ({"ETag": '"aa"'}, {"ETag": '"aa"'}, True),
        ({"ETag": '"aa"'}, {"ETag": '"bb"'}, False),  # same size, other bytes
        ({"ETag": '"aa-3"'}, {"ETag": '"bb"'}, True),  # a multipart source: size only
        ({"ETag": '"aa"'}, {"ETag": '"bb-2"'}, True),  # a multipart copy: size only
        ({"ETag": '"aa"', "ServerSideEncryption": "aws:kms"}, {"ETag": '"bb"'}, True),
        ({"ETag": '"aa"'}, {"ETag": '"bb"', "SSECustomerAlgorithm": "AES256"}, True),
        ({"ETag": '"aa"', "ServerSideEncryption": "AES256"}, {"ETag": '"bb"'}, False),
    ],
)
def test_a_copy_is_compared_by_md5_only_where_both_etags_are_one_r48(
    source: dict[str, str], copy: dict[str, str], same: bool
) -> None:
    """R48: sizes always; ETags only where each is the MD5 of the bytes (written in one
    request, not SSE-KMS or SSE-C), since a multipart or encrypted object's ETag differs
    from its copy's with the same bytes; a different size never matches."""
    one = location.Fingerprint.of_head({"ContentLength": 7, **source})
    other = location.Fingerprint.of_head({"ContentLength": 7, **copy})
    assert one.matches(other) is same
    assert not one.matches(location.Fingerprint.of_head({"ContentLength": 8, **source}))


def test_a_purge_in_a_versioned_bucket_lists_versions_by_folder_r48_r50(s3_bucket: Any) -> None:
    """SPEC R48, R50: a purge in a versioned fail-safe bucket (Object Lock turns versioning
    on) deletes every version and delete marker of each purged object and nothing of any
    other, and lists the versions by folder: a ListObjectVersions per 1,000 versions, not
    one per object. A few objects at the end of a large folder cost at most twice the
    listings they did one by one; a single object, one."""
    client, bucket = s3_bucket.server.client(), s3_bucket.name
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    folder = f"{FAILSAFE_PREFIX}/7/"
    keys = [f"{folder}part-{n:04d}.parquet" for n in range(1200)]
    # keys the purged ones begin with, or that begin like them, in the folder and beside it
    others = [f"{folder}part-0001.parquet.crc", f"{folder}sub/part-0001.parquet"]
    others.append(f"{FAILSAFE_PREFIX}/70/part-0001.parquet")

    def write(key: str) -> None:  # two versions each; every 7th a delete marker too, so
        client.put_object(Bucket=bucket, Key=key, Body=b"1")  # that pages end inside a key
        client.put_object(Bucket=bucket, Key=key, Body=b"22")
        if key in keys and keys.index(key) % 7 == 0:
            client.delete_object(Bucket=bucket, Key=key)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(write, keys + others))

    def versions() -> Counter[str]:
        pages = client.get_paginator("list_object_versions").paginate(Bucket=bucket)
        return Counter(
            item["Key"]
            for page in pages
            for item in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
        )

    def purge(purged: list[str]) -> int:
        """The LISTs of purging ``purged``, once its versions are checked gone."""
        before, listed = versions(), requests(s3_bucket)["LIST"]
        held = location.purge_all([location.S3Location(bucket, key) for key in purged])
        listed = requests(s3_bucket)["LIST"] - listed
        assert held == set()
        assert versions() == Counter({k: n for k, n in before.items() if k not in purged})
        return listed

    assert purge([keys[1188]]) == 1  # one object: listed alone, as before
    # two at the folder's end: two pages of the folder, then each alone (at most twice)
    assert purge([keys[1189], keys[1199]]) <= 4
    kept = keys[::12]
    assert purge([key for key in keys if key not in kept]) <= 4  # ~2,500 versions: 3 pages
    assert set(versions()) == set(kept[:-1] + others)
