"""Clones of a team's Delta table on S3 (SPEC R24, R30, R47), on a real S3 server (SeaweedFS,
rewind/seaweedfs.py): the clone is a table of Rewind's local warehouse whose Delta versions
reference the source's objects where they are, by absolute ``s3://`` URI, as Delta's shallow
clone does. No object is copied, the source's objects are never written (their ETags stay),
the clone's own writes are local files of its own, and the server's secret key is nowhere
Rewind writes or answers (R45).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from deltalake import DeltaTable, Field, Schema, convert_to_deltalake, write_deltalake
from test_s3_external import (
    ids,
    objects,
    options,
    refused,
    register,
    rows,
    secret_free,
    table_id,
    team,
)
from test_s3_lifecycle import job, step

from rewind.errors import RewindError
from rewind.storage.log import read_commit

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3")]

__all__ = ["team"]  # the team's table on S3, a fixture of test_s3_external

VACUUM = "delta.deletedFileRetentionDuration"
LOG_PREFIX = "team/orders/_delta_log/"


def table_ids(conn: Any, name: str, point: str = "") -> list[int]:
    return [r[0] for r in rows(conn, f"SELECT ID FROM {name} {point} ORDER BY ID")]


def parquet_files(home: Path) -> list[Path]:
    """The data files in the local warehouse: the clones' own files."""
    return sorted((home / "warehouse").rglob("*.parquet"))


def logged_paths(home: Path) -> set[str]:
    """Every data file path the Delta logs of the local warehouse add."""
    found = set()
    for commit in (home / "warehouse").glob("*/_delta_log/*.json"):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                found.add(action["add"]["path"])
    return found


def written_since(bucket: Any, before: dict[str, str]) -> list[str]:
    """The objects written since ``before`` was taken: new ones, or ones of another ETag."""
    return sorted(key for key, etag in objects(bucket).items() if before.get(key) != etag)


def guard_commit(uri: str) -> list[str]:
    """The one object a clone of the team's table writes (SPEC R42, R47): the commit of its
    newest version, which raises the table's VACUUM retention while the clone uses its files."""
    team = DeltaTable(uri, storage_options=options())
    assert team.metadata().configuration[VACUUM] == "interval 36500 days"
    assert team.history(1)[0]["operation"] == "SET TBLPROPERTIES"
    return [f"{LOG_PREFIX}{team.version():020}.json"]


def clone_dir(home: Path, name: str) -> str:
    """The local warehouse directory of the live table ``name`` (a clone)."""
    return str(home / "warehouse" / str(table_id(home, name)))


def every_version(spark: Any, where: str) -> list[list[int]]:
    """The IDs of each version of the Delta table at ``where``, read by delta-spark (R43):
    every object each version references is read."""
    newest = DeltaTable(where).version()
    read = spark.read.format("delta")
    return [
        sorted(r.ID for r in read.option("versionAsOf", v).load(where).collect())
        for v in range(newest + 1)
    ]


def age_removes(bucket: Any, days: int) -> None:
    """The team's removes as if made ``days`` ago: the ``deletionTimestamp`` a VACUUM compares
    with its clock and the table's ``delta.deletedFileRetentionDuration`` (Delta protocol)."""
    client = bucket.server.client()
    then = int((datetime.now(UTC) - timedelta(days=days)).timestamp() * 1000)
    for key in objects(bucket):
        if not (key.startswith(LOG_PREFIX) and key.endswith(".json")):
            continue
        body = client.get_object(Bucket=bucket.name, Key=key)["Body"].read().decode()
        actions = [json.loads(line) for line in body.splitlines() if line]
        removes = [action["remove"] for action in actions if "remove" in action]
        for remove in removes:
            remove["deletionTimestamp"] = then
        if removes:
            text = "\n".join(json.dumps(action) for action in actions)
            client.put_object(Bucket=bucket.name, Key=key, Body=text.encode())


def team_files(uri: str) -> set[str]:
    """The absolute URIs of the data files of the team's table's current version."""
    return set(DeltaTable(uri, storage_options=options()).file_uris())


def the_teams_vacuum(uri: str, *, dry_run: bool) -> list[str]:
    """The team's own VACUUM (delta-rs) with the table's own retention and its safety check
    on, as a Delta-conformant VACUUM runs: the data files it deletes (or would)."""
    return list(
        DeltaTable(uri, storage_options=options()).vacuum(
            retention_hours=None, enforce_retention_duration=True, dry_run=dry_run
        )
    )


def clone_files(home: Path) -> list[tuple[str, str, str]]:
    """The catalog's record of the files clones share: (clone, path, the source's path)."""
    with closing(sqlite3.connect(home / "catalog.db")) as db:
        return db.execute(
            "SELECT o.name, c.path, c.source_path FROM clone_files c "
            "JOIN objects o ON o.id = c.clone_id ORDER BY o.name, c.path"
        ).fetchall()


def test_a_clone_of_an_s3_table_references_its_objects_where_they_are_r24_r47(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path, spark: Any
) -> None:
    """Clones of now and of an earlier point (AT(OFFSET)) read the right rows without an
    object copied (R47): their logs add the source's absolute URIs, the warehouse holds no
    data file of theirs, the catalog records each shared file with its owner's path (R30),
    and delta-spark reads them (R43).
    The team's writer changes the source afterwards, the clone does not change (R24);
    INSERT and DELETE on the clone write local files of its own and no object (R24), a
    restore in place references the source's object again; after DROP TABLE of the source
    the clones read as before; a clone of the clone shares both."""
    uri, between = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    before = objects(lake)

    conn.sql("CREATE TABLE NOW_COPY CLONE ORDERS")
    offset = round((datetime.now(UTC) - between).total_seconds())
    conn.sql(f"CREATE TABLE THEN_COPY CLONE ORDERS AT(OFFSET => -{offset})")
    assert table_ids(conn, "NOW_COPY") == [1, 3]
    assert table_ids(conn, "THEN_COPY") == [1, 2]
    assert written_since(lake, before) == guard_commit(uri)  # no data object copied (R42)
    assert parquet_files(home) == []
    paths = logged_paths(home)
    assert paths and all(path.startswith(f"{uri}/part-") for path in paths), paths
    shared = clone_files(home)
    assert {path for _, path, _ in shared} == paths
    assert all(path == f"{uri}/{source}" for _, path, source in shared)
    for clone_dir in [log.parent for log in (home / "warehouse").glob("*/_delta_log")]:
        read = spark.read.format("delta").load(str(clone_dir)).collect()  # delta-spark (R43)
        assert sorted(r.ID for r in read) in ([1, 3], [1, 2])

    write_deltalake(
        uri, pa.table({"ID": [5], "V": ["e"]}), mode="append", storage_options=options()
    )
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    assert ids(conn) == [3, 5]
    assert table_ids(conn, "NOW_COPY") == [1, 3]  # the source's later commits are not the clone's

    kept = objects(lake)
    conn.sql("INSERT INTO NOW_COPY VALUES (7, 'g')")
    deleted = conn.sql("DELETE FROM NOW_COPY WHERE ID = 1")[-1].query_id
    assert table_ids(conn, "NOW_COPY") == [3, 7]
    assert table_ids(conn, "NOW_COPY", f"BEFORE(STATEMENT => '{deleted}')") == [1, 3, 7]
    assert objects(lake) == kept  # the clone's writes are its own local files (R24)
    assert parquet_files(home)
    conn.restore("NOW_COPY", before=deleted)  # the reference to the source's object again
    assert table_ids(conn, "NOW_COPY") == [1, 3, 7]

    conn.sql("CREATE TABLE SECOND CLONE NOW_COPY")  # the source's objects and local files
    assert table_ids(conn, "SECOND") == [1, 3, 7]
    conn.sql("DROP TABLE ORDERS")
    assert table_ids(conn, "NOW_COPY") == [1, 3, 7]
    assert table_ids(conn, "THEN_COPY") == [1, 2]
    assert table_ids(conn, "SECOND") == [1, 3, 7]
    assert objects(lake) == kept
    history = rows(conn, "SELECT QUERY_TEXT FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY")
    secret_free(lake.server.secret_key, home, *(str(t) for (t,) in history))


def test_schema_and_database_clones_take_the_s3_table_along_r24_r47(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path
) -> None:
    """A schema clone BEFORE(STATEMENT) and a database clone of now, holding the S3 table
    beside a local one, clone each table at the point (R24), the S3 one zero-copy (R47)."""
    uri, _ = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    conn.sql("CREATE TABLE LOCAL_ONE (ID INT); INSERT INTO LOCAL_ONE VALUES (1)")
    deleted = conn.sql("DELETE FROM ORDERS WHERE ID = 1")[-1].query_id
    kept = objects(lake)

    conn.sql(f"CREATE SCHEMA PAST CLONE LAKE.PUBLIC BEFORE(STATEMENT => '{deleted}')")
    conn.sql("CREATE DATABASE COPY CLONE LAKE")
    assert table_ids(conn, "LAKE.PAST.ORDERS") == [1, 3]
    assert table_ids(conn, "COPY.PUBLIC.ORDERS") == [3]
    assert table_ids(conn, "COPY.PUBLIC.LOCAL_ONE") == [1]
    assert written_since(lake, kept) == guard_commit(uri)  # once, by the first clone (R42)
    referenced = {p for p in logged_paths(home) if "://" in p}
    assert referenced and all(p.startswith(f"{uri}/part-") for p in referenced), referenced
    assert all("://" not in p for p in logged_paths(home) - referenced)
    secret_free(lake.server.secret_key, home)


def test_a_refused_clone_of_an_s3_table_has_its_code_and_leaves_nothing_r17_r28_r45(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path, monkeypatch: Any
) -> None:
    """A point before the table's first version, and a wrong secret (the source's log
    unreadable): each refused with its code naming the table or its URI (R17, R39, R49),
    nothing created (R28), no object written, no message with the secret (R45)."""
    uri, _ = team
    secret = lake.server.secret_key
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    kept = objects(lake)
    messages = []
    error = refused(conn, "CREATE TABLE OLD CLONE ORDERS AT(OFFSET => -86000)")
    assert error.code == "TIME_TRAVEL_UNAVAILABLE", error.message
    messages.append(error.message)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-" + "x" * 20)
    error = refused(conn, "CREATE TABLE WRONG CLONE ORDERS")
    assert error.code == "STORAGE_ERROR", error.message  # as any read of the table (R49)
    assert uri in error.message and "SignatureDoesNotMatch" in error.message
    messages.append(error.message)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    assert conn.sql("SHOW TABLES IN SCHEMA LAKE.PUBLIC")[-1].column("name") == ["ORDERS"]
    assert logged_paths(home) == set()  # no clone's table left in the warehouse
    assert objects(lake) == kept
    secret_free(secret, home, *messages)


def test_the_teams_own_vacuum_keeps_every_object_a_clone_references_r24_r42_r47(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path, spark: Any
) -> None:
    """SPEC R24, R30, R42, R47: the statement that clones the team's S3 table raises its
    ``delta.deletedFileRetentionDuration`` to the clone-holding 36500 days before the clone's
    first version commits (the log retention stays: the clone needs no commit of the
    team's). The team then removes every row the clones reference and runs its own VACUUM
    (delta-rs, the table's retention, safety check on) a month after those removes, past the
    8 days time travel alone needs: it deletes nothing, and both clones read all their
    rows at every version, in Rewind and in delta-spark."""
    uri, between = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    configuration = DeltaTable(uri, storage_options=options()).metadata().configuration
    assert configuration[VACUUM] == "interval 8 days"  # time travel's 1 day and a week
    offset = round((datetime.now(UTC) - between).total_seconds())
    conn.sql(f"CREATE TABLE THEN_COPY CLONE ORDERS AT(OFFSET => -{offset})")  # removed at v2
    conn.sql("CREATE TABLE NOW_COPY CLONE ORDERS")
    guard_commit(uri)
    configuration = DeltaTable(uri, storage_options=options()).metadata().configuration
    assert "delta.logRetentionDuration" not in configuration
    deleted = conn.sql("DELETE FROM NOW_COPY WHERE ID = 3")[-1].query_id  # the clone's v1

    mine = DeltaTable(uri, storage_options=options())
    mine.delete("ID = 1")
    mine.delete("ID = 3")
    assert ids(conn) == []
    referenced = {path for path in logged_paths(home) if "://" in path}
    assert referenced and not referenced & team_files(uri)  # the team removed every one
    age_removes(lake, days=30)
    assert the_teams_vacuum(uri, dry_run=False) == []

    assert {f"{lake.uri}{key}" for key in objects(lake)} >= referenced
    assert table_ids(conn, "THEN_COPY") == [1, 2]
    assert table_ids(conn, "NOW_COPY") == [1]
    assert table_ids(conn, "NOW_COPY", f"BEFORE(STATEMENT => '{deleted}')") == [1, 3]
    assert every_version(spark, clone_dir(home, "THEN_COPY")) == [[1, 2]]
    assert every_version(spark, clone_dir(home, "NOW_COPY")) == [[1, 3], [1]]


def test_the_night_names_a_vacuum_retention_lowered_under_a_clone_r24_r42_r47(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path
) -> None:
    """SPEC R42, R47: the team lowers its table's VACUUM retention back to the 8 days time
    travel needs while a clone references its objects: the night's validation fails naming
    the table, the property and the 36500 days needed, and rightly: the team's own VACUUM
    would now delete the object the clone reads (its dry run lists it). Rewind's ALTER of
    the table's retention raises it again (R42), and the next night passes."""
    uri, _ = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    conn.sql("CREATE TABLE COPY CLONE ORDERS")
    DeltaTable(uri, storage_options=options()).delete("ID = 3")
    DeltaTable(uri, storage_options=options()).alter.set_table_properties(
        {VACUUM: "interval 8 days"}
    )
    age_removes(lake, days=30)

    with pytest.raises(RewindError) as failed:
        conn.lifecycle()
    assert failed.value.code == "VALIDATION_FAILED"
    assert "LAKE.PUBLIC.ORDERS id" in failed.value.message
    assert f"{VACUUM} is interval 8 days, needs interval 36500 days" in failed.value.message
    (of_three,) = [p for p in logged_paths(home) if p not in team_files(uri)]
    assert of_three.removeprefix(f"{uri}/") in the_teams_vacuum(uri, dry_run=True)

    conn.sql("ALTER TABLE ORDERS SET DATA_RETENTION_TIME_IN_DAYS = 1")
    assert DeltaTable(uri, storage_options=options()).metadata().configuration[VACUUM] == (
        "interval 36500 days"
    )
    assert the_teams_vacuum(uri, dry_run=True) == []
    assert conn.lifecycle()[-1]["failed"] == 0
    assert table_ids(conn, "COPY") == [1, 3]


def test_a_clone_whose_source_refuses_the_guard_commit_leaves_nothing_r28_r42_r47(
    lake: Any, team: tuple[str, datetime], connect: Any, home: Path, monkeypatch: Any
) -> None:
    """SPEC R28, R39, R42, R47: with keys that may read the team's bucket but not write it,
    the clone's guard commit to the source's log is refused: the statement fails with its
    code naming the table's URI, and no clone, no shared-file record, no object and no
    change of the source's properties is left; no secret is in the message (R45)."""
    uri, _ = team
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    kept = objects(lake)
    ((key, secret),) = lake.server.readers.items()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    assert ids(conn) == [1, 3]  # the reader reads the table
    error = refused(conn, "CREATE TABLE COPY CLONE ORDERS")
    assert error.code == "STORAGE_ERROR", error.message
    assert f"Cannot write the Delta log of {uri}" in error.message, error.message
    assert "AccessDenied" in error.message, error.message  # the 403
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", lake.server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", lake.server.secret_key)
    assert conn.sql("SHOW TABLES IN SCHEMA LAKE.PUBLIC")[-1].column("name") == ["ORDERS"]
    assert logged_paths(home) == set()
    assert clone_files(home) == []
    assert objects(lake) == kept
    configuration = DeltaTable(uri, storage_options=options()).metadata().configuration
    assert configuration[VACUUM] == "interval 8 days"
    secret_free(secret, home, error.message)
    secret_free(lake.server.secret_key, home, error.message)


def team_orders(lake: Any, connect: Any) -> tuple[str, Any]:
    """The team's two-row delta-rs table on S3, registered as LAKE.PUBLIC.ORDERS; its URI
    and the connection."""
    uri = f"{lake.uri}team/appends"
    write_deltalake(uri, pa.table({"ID": [1, 2], "V": ["a", "b"]}), storage_options=options())
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    return uri, conn


def test_a_dropped_clone_of_an_s3_table_is_recovered_from_failsafe_with_copies_r12_r47(
    lake: Any, connect: Any, home: Path
) -> None:
    """SPEC R12, R47: a clone references the team's objects where they are and holds one
    file of its own; dropped, a night two days on moves its own file into fail-safe and
    keeps its references in its fail-safe where the objects are. Fail-safe recovery brings
    its last version back as a table of its own: the referenced objects copied from where
    their owner keeps them, its own file out of fail-safe; no object of the team's is
    written, and the recovered log names no URI. The team's DELETE then removes the
    object the dropped clone referenced: within the clone's fail-safe week it stays in the
    bucket (RETAINED for the clone, R30), and a recovery finds it there again."""
    uri, conn = team_orders(lake, connect)
    conn.sql("CREATE TABLE COPY CLONE ORDERS; INSERT INTO COPY VALUES (3, 'c'); DROP TABLE COPY")
    later = connect(now=(datetime.now(UTC) + timedelta(days=2)).isoformat())
    assert later.lifecycle()[-1]["failed"] == 0
    ((dropped, name, *_),) = later.failsafe_list().rows
    assert name == "LAKE.PUBLIC.COPY"
    kept = objects(lake)
    later.failsafe_recover(dropped, "LAKE.PUBLIC.BACK")
    assert table_ids(later, "LAKE.PUBLIC.BACK") == [1, 2, 3]
    assert objects(lake) == kept
    back = home / "warehouse" / str(table_id(home, "BACK"))
    version_0 = read_commit(back, 0)
    assert version_0 is not None
    assert len(version_0.adds()) == 2  # the team's file and the clone's own
    assert all("://" not in a["path"] and (back / a["path"]).is_file() for a in version_0.adds())
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    night = ("night", datetime.now(UTC) + timedelta(days=4))
    step(home, "effective_retention", *night)
    assert job(home, "expire_versions", *night, spark=False)["files_moved"] == 0
    assert set(objects(lake)) > set(kept)  # the DELETE's new object and its commit beside
    latest = connect(now=(night[1] + timedelta(hours=1)).isoformat())
    latest.failsafe_recover(dropped, "LAKE.PUBLIC.BACK_AGAIN")
    assert table_ids(latest, "LAKE.PUBLIC.BACK_AGAIN") == [1, 2, 3]


def test_a_clone_s_version_is_recovered_from_its_owner_s_failsafe_r12_r30_r47(
    lake: Any, connect: Any, home: Path
) -> None:
    """SPEC R12, R30, R47: a live clone (retention 0) deletes a row, and the team's writer
    deletes it too, both removing the one object the clone's version 0 referenced. The
    clone's reference spends its 7 days of fail-safe where the object is (RETAINED for the
    clone in the team's bucket); then the object leaves for the team table's fail-safe,
    whose week (a day of time travel later) is not over yet. ACCOUNTADMIN recovers the
    clone's version 0: its files are still held, the object in its owner's fail-safe."""
    uri, conn = team_orders(lake, connect)
    conn.sql("CREATE TABLE COPY CLONE ORDERS DATA_RETENTION_TIME_IN_DAYS = 0")
    clone_0 = read_commit(home / "warehouse" / str(table_id(home, "COPY")), 0)
    assert clone_0 is not None
    (referenced,) = [a["path"] for a in clone_0.adds()]
    assert referenced.startswith(f"{uri}/")
    conn.sql("DELETE FROM COPY WHERE ID = 1")
    DeltaTable(uri, storage_options=options()).delete("ID = 1")
    start = datetime.now(UTC)
    nights = [
        start + timedelta(hours=1),  # the clone's reference leaves its time travel
        start + timedelta(days=7, hours=2),  # its fail-safe week is over: let go
        start + timedelta(days=7, hours=3),  # the object moves to its owner's fail-safe
    ]
    for number, now in enumerate(nights):
        step(home, "effective_retention", f"night-{number}", now)
        job(home, "expire_versions", f"night-{number}", now, spark=False)
        step(home, "purge_failsafe", f"night-{number}", now)
    key = referenced.removeprefix(lake.uri)
    assert key not in objects(lake)
    owner = home / "failsafe" / str(table_id(home, "ORDERS"))
    assert (owner / referenced.removeprefix(f"{uri}/")).is_file()
    later = connect(now=(nights[-1] + timedelta(hours=1)).isoformat())
    later.failsafe_recover(table_id(home, "COPY"), "LAKE.PUBLIC.BACK", version=0)
    assert table_ids(later, "LAKE.PUBLIC.BACK") == [1, 2]
    assert table_ids(later, "LAKE.PUBLIC.COPY") == [2]


def test_a_recovered_clone_keeps_apart_the_team_s_objects_of_one_name_r12_r47(
    lake: Any, connect: Any, home: Path, tmp_path: Path
) -> None:
    """SPEC R12, R47: another writer names each partition's file alike
    (``P=1/data_0.parquet``, ``P=2/data_0.parquet``) and the team makes a Delta table of
    them in place (delta-rs's ``convert_to_deltalake``, Delta's CONVERT TO DELTA). A
    clone references both objects and holds a file of its own; dropped and recovered from
    fail-safe, each object's copy keeps its own rows (copied under its name alone, one
    overwrote the other: the recovered table lost the rows of partition 1)."""
    written = tmp_path / "events"
    ds.write_dataset(
        pa.table({"ID": [1, 2, 3], "P": [1, 2, 2]}),
        written,
        format="parquet",
        partitioning=["P"],
        partitioning_flavor="hive",
        basename_template="data_{i}.parquet",
    )
    client = lake.server.client()
    for file in sorted(written.rglob("*.parquet")):
        client.upload_file(str(file), lake.name, f"team/events/{file.relative_to(written)}")
    uri = f"{lake.uri}team/events"
    convert_to_deltalake(
        uri,
        partition_by=Schema([Field("P", "long")]),
        partition_strategy="hive",
        storage_options=options(),
    )
    names = sorted(a.split("/")[-1] for a in DeltaTable(uri, storage_options=options()).file_uris())
    assert names == ["data_0.parquet", "data_0.parquet"]
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "EVENTS", uri)
    conn.sql("CREATE TABLE COPY CLONE EVENTS; INSERT INTO COPY (ID, P) VALUES (4, 1)")
    conn.sql("DROP TABLE COPY")
    later = connect(now=(datetime.now(UTC) + timedelta(days=2)).isoformat())
    assert later.lifecycle()[-1]["failed"] == 0
    ((dropped, name, *_),) = later.failsafe_list().rows
    assert name == "LAKE.PUBLIC.COPY"
    later.failsafe_recover(dropped, "LAKE.PUBLIC.BACK")
    assert rows(later, "SELECT ID, P FROM LAKE.PUBLIC.BACK ORDER BY ID") == [
        (1, 1),
        (2, 2),
        (3, 2),
        (4, 1),
    ]
