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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from test_s3_external import ids, objects, options, refused, register, rows, secret_free, team

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3")]

__all__ = ["team"]  # the team's table on S3, a fixture of test_s3_external


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
    assert objects(lake) == before  # no object copied or written
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
    assert objects(lake) == kept
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
