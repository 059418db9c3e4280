"""Other Delta writers on Rewind's tables (SPEC R40, R43): delta-rs and delta-spark as
writers and readers, deletion vectors, column mapping, cleaned-up logs, a killed Rewind
statement. Every other engine runs as itself (``other_engines``): a plain delta-rs
writer, a plain PySpark job with delta-spark in its own process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from other_engines import delta_rs_append, delta_spark, stamp, versions
from test_dml import T0, catalog, clock, open_at, query, table_root

from rewind.errors import RewindError
from rewind.storage import log

pytestmark = pytest.mark.spark


def version_ids(home: Path, name: str = "T") -> dict[int, str]:
    """Version -> query id, as Rewind's timeline has them."""
    root = table_root(home, name)
    return dict(
        catalog(
            home,
            "SELECT version, query_id FROM table_versions WHERE table_id = ? ORDER BY version",
            int(root.name),
        )
    )


def ids_at(conn: Any, point: str) -> list[int]:
    return [r[0] for r in query(conn, f"SELECT ID FROM T {point} ORDER BY ID")]


def test_a_delta_rs_commit_is_a_version_rewind_reads_and_never_removes_r40(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """The defect this rule exists for: another writer's commit was invisible to Rewind
    and deleted by its next INSERT. Now it is a version like Rewind's own."""
    root = table_root(home, "T")
    delta_rs_append(root, {"ID": pa.array([3], pa.int64()), "V": ["c"]})
    stamp(root, 2, T0.replace(hour=1))
    later = open_at(connect, hours=2)
    assert query(later, "SELECT COUNT(*) FROM T") == [(3,)]
    later.sql("INSERT INTO T VALUES (4, 'd')")
    assert versions(root) == [0, 1, 2, 3]
    assert ids_at(later, "") == [1, 2, 3, 4]
    # SPEC R16 on the other writer's version: by time and by its derived statement id.
    assert ids_at(later, f"AT(TIMESTAMP => '{clock(hours=1, minutes=30)}')") == [1, 2, 3]
    assert ids_at(later, f"BEFORE(TIMESTAMP => '{clock(hours=1)}')") == [1, 2]
    foreign = version_ids(home)[2]
    assert ids_at(later, f"AT(STATEMENT => '{foreign}')") == [1, 2, 3]
    assert ids_at(later, f"BEFORE(STATEMENT => '{foreign}')") == [1, 2]
    history = query(
        later,
        "SELECT QUERY_TYPE, USER_NAME FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
        f"WHERE QUERY_ID = '{foreign}'",
    )
    assert history == [("DELTA_COMMIT", "delta-rs:py-1.6.6")]


def test_delta_spark_reads_every_rewind_version_and_writes_back_r43(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """delta-spark reads each version Rewind made, DESCRIBE HISTORY shows Rewind's query
    ids; delta-spark's own append, update and delete are versions Rewind reads."""
    later = open_at(connect, hours=1)
    later.sql("UPDATE T SET V = 'B' WHERE ID = 2; DELETE FROM T WHERE ID = 1")
    root = table_root(home, "T")
    ours = version_ids(home)
    out = delta_spark(
        root,
        """
        import json
        counts = [spark.read.format("delta").option("versionAsOf", v).load(path).count()
                  for v in range(4)]
        history = {r.version: r.userMetadata
                   for r in DeltaTable.forPath(spark, path).history().collect()}
        spark.createDataFrame([(7, "g")], "ID long, V string").write.format("delta") \\
            .mode("append").save(path)
        DeltaTable.forPath(spark, path).update("ID = 2", {"V": "'bb'"})
        DeltaTable.forPath(spark, path).delete("ID = 7")
        print(json.dumps({"counts": counts, "history": history}))
        """,
    )
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["counts"] == [0, 2, 2, 1]
    assert {int(v): q for v, q in seen["history"].items()} == ours
    for version in (4, 5, 6):
        stamp(root, version, T0.replace(hour=2, minute=version))
    after = open_at(connect, hours=3)
    assert query(after, "SELECT * FROM T") == [(2, "bb")]
    ids = version_ids(home)
    assert ids_at(after, f"AT(STATEMENT => '{ids[4]}')") == [2, 7]
    assert sorted(query(after, f"SELECT V FROM T BEFORE(STATEMENT => '{ids[5]}')")) == [
        ("B",),
        ("g",),
    ]
    shown = query(after, "SHOW TABLES")
    assert shown[0][7] == 1  # rows of the current version, whoever wrote it (R22)


def test_deletion_vectors_read_right_at_every_version_and_take_rewinds_writes_r16_r43(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """A delta-spark DELETE with deletion vectors: every version reads right through
    Rewind, rows count right, the vector file is a file of the table for the lifecycle;
    a restore to before the DELETE and back, UPDATE, DELETE, MERGE and the recovery of
    the deleted row run (every write was refused before, then all but appends), and
    delta-spark reads each version they made."""
    root = table_root(home, "T")
    delta_spark(
        root,
        """
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
                  "('delta.enableDeletionVectors' = 'true')")
        spark.createDataFrame([(3, "c"), (4, "d")], "ID long, V string").coalesce(1) \\
            .write.format("delta").mode("append").save(path)
        DeltaTable.forPath(spark, path).delete("ID = 3")
        """,
    )
    for version in (2, 3, 4):
        stamp(root, version, T0.replace(hour=1, minute=version))
    commit = log.read_commit(root, 4)
    assert commit is not None and any(a.get("deletionVector") for a in commit.adds())
    vector = next(
        log.dv_file(a["deletionVector"]) for a in commit.adds() if a.get("deletionVector")
    )
    assert vector is not None and (root / vector).exists()
    later = open_at(connect, hours=2)
    assert ids_at(later, "") == [1, 2, 4]
    ids = version_ids(home)
    assert ids_at(later, f"BEFORE(STATEMENT => '{ids[4]}')") == [1, 2, 3, 4]
    assert query(later, "SHOW TABLES")[0][7] == 3
    # A clone of a version with a vector shares every file with its vector: the vector's
    # file linked too (delta-rs cannot create such a version: Rewind writes it; without
    # the vector ID 3 came back, and the file's other rows were copied before). A clone of
    # the version before the vector holds what that version held (R24).
    later.sql("CREATE TABLE C CLONE T")
    assert [r[0] for r in query(later, "SELECT ID FROM C ORDER BY ID")] == [1, 2, 4]
    clone = table_root(home, "C")
    theirs = log.replay(root, 4).files
    assert log.replay(clone, 0).files == theirs
    linked = [f.path for f in theirs] + [vector]
    assert all((clone / path).stat().st_ino == (root / path).stat().st_ino for path in linked)
    # Only Rewind writes the clone: its tenth commit gets a checkpoint (delta-rs's, which
    # keeps each file's vector), which Rewind's replay and Delta's reader start from.
    later.sql("; ".join(f"INSERT INTO C VALUES ({n}, 'n')" for n in range(10, 20)))
    assert sorted(p.name[:20] for p in (clone / "_delta_log").glob("*.checkpoint.parquet")) == [
        f"{10:020d}"
    ]
    vectors = [f.vector for f in theirs if f.vector]
    assert [f.vector for f in log.replay(clone, 10).files if f.vector] == vectors
    clone_ids = [1, 2, 4, *range(10, 20)]
    assert [r[0] for r in query(later, "SELECT ID FROM C ORDER BY ID")] == clone_ids
    later.sql(f"CREATE TABLE B CLONE T BEFORE(STATEMENT => '{ids[4]}')")
    assert [r[0] for r in query(later, "SELECT ID FROM B ORDER BY ID")] == [1, 2, 3, 4]
    # A restore to before the DELETE puts the file back without its vector: its remove
    # names the vector (one without it left the file in the table; by path alone the
    # restore said the table "already holds" that state, ID 3 still gone). Restored to
    # the DELETE again, the file carries its vector again (R16).
    later.restore("D.PUBLIC.T", before=ids[4])
    assert ids_at(later, "") == [1, 2, 3, 4]
    undeleted = versions(root)[-1]
    commit = log.read_commit(root, undeleted)
    assert commit is not None
    assert [bool(r.get("deletionVector")) for r in commit.removes()] == [True]
    assert [bool(a.get("deletionVector")) for a in commit.adds()] == [False]
    later.restore("D.PUBLIC.T", at=ids[4])
    assert ids_at(later, "") == [1, 2, 4]
    # The lifecycle tracks the vector file, carried again, and validation (every file
    # LIVE or REMOVED, every byte counted once) passes.
    night = connect(now=clock(days=1))
    steps = night.lifecycle()
    assert steps[-1]["failed"] == 0
    states = catalog(
        home,
        "SELECT state FROM file_states WHERE table_id = ? AND path = ?",
        int(root.name),
        vector,
    )
    assert states == [("LIVE",)]
    # Row-level writes read the target through Delta's reader, which drops the rows a
    # vector deletes: rewriting the file does not bring ID 3 back. Snowflake's recovery
    # of the DELETE and a MERGE run too; the protocol stays as it was.
    protocol = log.replay(root, versions(root)[-1]).protocol
    later = open_at(connect, days=1, hours=1)
    later.sql("UPDATE T SET V = 'D' WHERE ID = 4")
    assert query(later, "SELECT * FROM T ORDER BY ID") == [(1, "a"), (2, "b"), (4, "D")]
    later.sql("DELETE FROM T WHERE ID = 1")
    later.sql(f"INSERT INTO T SELECT * FROM T BEFORE(STATEMENT => '{ids[4]}') WHERE ID = 3")
    later.sql(
        "MERGE INTO T USING (SELECT 4 AS ID, 'x' AS V UNION ALL SELECT 5, 'e') S "
        "ON T.ID = S.ID WHEN MATCHED THEN UPDATE SET V = S.V "
        "WHEN NOT MATCHED THEN INSERT VALUES (S.ID, S.V)"
    )
    final = [(2, "b"), (3, "c"), (4, "x"), (5, "e")]
    assert query(later, "SELECT * FROM T ORDER BY ID") == final
    assert log.replay(root, versions(root)[-1]).protocol == protocol
    read = f"""
        def rows(v=None):
            reader = spark.read.format('delta')
            reader = reader if v is None else reader.option('versionAsOf', v)
            return sorted((r.ID, r.V) for r in reader.load(path).collect())
        print([rows({undeleted}), rows({undeleted + 1}), rows()])
        print(sorted(r.ID for r in spark.read.format('delta').load('{clone}').collect()))
        """
    seen = delta_spark(root, read).strip().splitlines()[-2:]
    assert seen == [
        str([[(1, "a"), (2, "b"), (3, "c"), (4, "d")], [(1, "a"), (2, "b"), (4, "d")], final]),
        str(clone_ids),
    ]


def test_column_mapping_renames_follow_and_old_versions_read_by_identity_r18_r43(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """delta-spark turns on column mapping, renames V and adds a column: Rewind shows
    the new names, and a version before the rename reads V's values under its new name
    (the current schema, SPEC R18); so do clones of either (R24)."""
    root = table_root(home, "T")
    delta_spark(
        root,
        """
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ("
                  "'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
                  "'delta.minWriterVersion' = '5')")
        spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN V TO LABEL")
        spark.sql(f"ALTER TABLE delta.`{path}` ADD COLUMNS (EXTRA string)")
        spark.createDataFrame([(3, "c", "x")], "ID long, LABEL string, EXTRA string") \\
            .write.format("delta").mode("append").save(path)
        """,
    )
    for version in (2, 3, 4, 5):
        stamp(root, version, T0.replace(hour=1, minute=version))
    later = open_at(connect, hours=2)
    current = later.sql("SELECT * FROM T ORDER BY ID")[-1]
    assert current.columns == ["ID", "LABEL", "EXTRA"]
    assert [tuple(r) for r in current.rows] == [(1, "a", None), (2, "b", None), (3, "c", "x")]
    old = later.sql(f"SELECT * FROM T AT(TIMESTAMP => '{clock(minutes=30)}') ORDER BY ID")[-1]
    assert [tuple(r) for r in old.rows] == [(1, "a", None), (2, "b", None)]
    # A clone, now and as of before the rename, holds the values (its files were shared
    # as they were, and read as NULL columns: the clone had no mapping); a clone is
    # Rewind's own table, writable; LIKE takes the columns as named now. T is untouched.
    before = versions(root)
    then = clock(minutes=30)
    later.sql(f"CREATE TABLE C CLONE T; CREATE TABLE C_THEN CLONE T AT(TIMESTAMP => '{then}')")
    later.sql("INSERT INTO C VALUES (4, 'd', 'y'); CREATE TABLE L LIKE T")
    assert query(later, "SELECT * FROM C ORDER BY ID") == [
        (1, "a", None),
        (2, "b", None),
        (3, "c", "x"),
        (4, "d", "y"),
    ]
    assert query(later, "SELECT * FROM C_THEN ORDER BY ID") == [(1, "a", None), (2, "b", None)]
    assert later.sql("SELECT * FROM L")[-1].columns == ["ID", "LABEL", "EXTRA"]
    assert versions(root) == before


def test_json_commits_cleaned_up_after_a_checkpoint_r43(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """Another engine checkpoints and deletes the early JSON commits: the current version
    and the later ones read right, the lifecycle rebuilds its file states from the
    checkpoint, and a cleaned-up version is a clear TIME_TRAVEL_UNAVAILABLE."""
    root = table_root(home, "T")
    delta_spark(
        root,
        """
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES "
                  "('delta.checkpointInterval' = '2')")
        for i in (3, 4, 5):
            spark.createDataFrame([(i, "x")], "ID long, V string").write.format("delta") \\
                .mode("append").save(path)
        """,
    )
    checkpoint = log.latest_checkpoint(root)
    assert checkpoint is not None
    for version in versions(root):
        if version < checkpoint[0]:
            log.commit_file(root, version).unlink()  # what a short logRetention does
        else:
            stamp(root, version, T0.replace(hour=1, minute=version))
    later = open_at(connect, hours=2)
    assert ids_at(later, "") == [1, 2, 3, 4, 5]
    with pytest.raises(RewindError) as gone:
        query(later, f"SELECT * FROM T AT(TIMESTAMP => '{clock(seconds=1)}')")
    assert gone.value.code == "TIME_TRAVEL_UNAVAILABLE"
    night = connect(now=clock(days=1))
    assert night.lifecycle()[-1]["failed"] == 0
    live = catalog(
        home, "SELECT path FROM file_states WHERE table_id = ? AND state = 'LIVE'", int(root.name)
    )
    current = log.replay(root, versions(root)[-1]).files
    assert sorted(p for (p,) in live) == sorted(f.path for f in current)
    assert len(current) == 5  # the INSERT's two files (local[2]) and the three appends


KILLED_INSERT = """
import os, signal, sys
import rewind
from rewind.sql import tables

def die(*args, **kwargs):  # right after the Delta commit, before the catalog commit
    os.kill(os.getpid(), signal.SIGKILL)

tables.record_version = die
conn = rewind.connect(home=sys.argv[1], now=sys.argv[2])
conn.sql("USE D; INSERT INTO T VALUES (9, 'killed')")
"""


def test_a_killed_rewind_statement_leaves_a_later_commit_of_another_writer_intact_r28_r40(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """A Rewind INSERT is SIGKILLed between its Delta commit and its catalog commit; a
    delta-rs writer commits on top. The next statement takes back the killed INSERT's
    rows only (a new commit), and the other writer's commit and row stay."""
    root = table_root(home, "T")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_INSERT), str(home), clock(minutes=10)],
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    assert versions(root) == [0, 1, 2]
    delta_rs_append(root, {"ID": pa.array([3], pa.int64()), "V": ["c"]})
    stamp(root, 3, T0.replace(minute=20))
    later = open_at(connect, hours=1)
    assert ids_at(later, "") == [1, 2, 3]
    assert versions(root) == [0, 1, 2, 3, 4]  # nothing deleted; version 4 takes back 2
    undo = log.read_commit(root, 4)
    assert undo is not None and undo.info.get("rewind.undo") == "true"
    assert {a["path"] for a in undo.removes()} == {
        a["path"] for a in log.read_commit(root, 2).adds()
    }
