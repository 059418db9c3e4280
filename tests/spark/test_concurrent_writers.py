"""A delta-spark job appends in a loop while Rewind runs INSERT, UPDATE, MERGE, a restore
and a lifecycle run on the same table (SPEC R28, R31, R40).

Rewind runs on the wall clock here, as in production, so both writers' commit times
interleave as they really happened. Before the lifecycle runs, the table's retention is
lowered to 0 days, so it really moves what the restore and the DML removed while the
other job keeps committing.
Afterwards: every commit of both sides is in the log, in order, none rewritten; every
appended row is in the current version or (removed by the restore) in fail-safe; and no
file that the current version references was moved.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from other_engines import finish, start_delta_spark, versions
from test_dml import catalog, query, table_root

from rewind.storage import log

pytestmark = pytest.mark.spark

APPENDS = 12
APPENDER = f"""
import time
for i in range({APPENDS}):
    spark.createDataFrame([(1000 + i, "w")], "ID long, V string").coalesce(1) \\
        .write.format("delta").mode("append").save(path)
    time.sleep(0.5)
"""


def test_rewind_and_a_delta_spark_appender_lose_nothing_r40(
    connect: Callable[..., Any], home: Path
) -> None:
    conn = connect()  # the wall clock (SPEC R15's default)
    conn.sql(
        "CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR);"
        "INSERT INTO T VALUES (1, 'a'), (2, 'b'), (3, 'c')"
    )
    root = table_root(home, "T")
    job = start_delta_spark(root, APPENDER)
    deadline = time.monotonic() + 120
    while versions(root)[-1] < 2 and time.monotonic() < deadline:
        time.sleep(0.2)  # the other job has started committing
    assert job.poll() is None, "the appender ended before Rewind started"
    ours = {}
    for name, sql in [
        ("insert", "INSERT INTO T VALUES (4, 'd')"),
        ("update", "UPDATE T SET V = 'u' WHERE ID <= 3"),
        (
            "merge",
            "MERGE INTO T USING (SELECT 2 AS ID, 'm' AS V UNION ALL SELECT 50, 'n') S "
            "ON T.ID = S.ID WHEN MATCHED THEN UPDATE SET V = S.V "
            "WHEN NOT MATCHED THEN INSERT (ID, V) VALUES (S.ID, S.V)",
        ),
    ]:
        ours[name] = conn.sql(f"USE D; {sql}")[-1].query_id
    ours["restore"] = conn.restore("D.PUBLIC.T", at=ours["update"]).query_id
    conn.sql("ALTER TABLE D.PUBLIC.T SET DATA_RETENTION_TIME_IN_DAYS = 0")  # SPEC R8, R9
    conn.lifecycle()
    finish(job)
    later = connect()
    later.lifecycle()  # the appends after the first run reach file_states too
    current = query(later, "USE D; SELECT ID, V FROM T ORDER BY ID")

    # Every commit of both sides, in one unbroken log, none rewritten.
    numbers = versions(root)
    assert numbers == list(range(numbers[-1] + 1))
    commits = [log.read_commit(root, v) for v in numbers]
    theirs = [c for c in commits if c and str(c.info.get("engineInfo", "")).startswith("Apache")]
    assert len(theirs) == APPENDS
    by_query = {c.rewind_query_id: c.version for c in commits if c and c.rewind_query_id}
    assert set(ours.values()) <= set(by_query)
    timeline = catalog(
        home,
        "SELECT version FROM table_versions WHERE table_id = ? ORDER BY version",
        int(root.name),
    )
    assert [v for (v,) in timeline] == numbers

    # Each appended row: in the current version, or removed by the restore (the state of
    # the UPDATE) and then in fail-safe, never lost.
    update_v, restore_v = by_query[ours["update"]], by_query[ours["restore"]]
    now_ids = {row[0] for row in current}
    states = dict(
        catalog(home, "SELECT path, state FROM file_states WHERE table_id = ?", int(root.name))
    )
    for commit in theirs:
        (add,) = commit.adds()
        path = log.relative_path(add["path"])
        located = root / path if (root / path).exists() else None
        row_id = _appended_id(home, root, path, located)
        if update_v < commit.version < restore_v:
            assert row_id not in now_ids and states[path] == "FAILSAFE"
        else:
            assert row_id in now_ids and states[path] == "LIVE"
    assert {1, 2, 3, 4} <= now_ids and 50 not in now_ids
    assert {v for i, v in current if i <= 3} == {"u"}

    # No file the current version references was moved (SPEC R31).
    live = log.replay(root, numbers[-1]).files
    assert all((root / f.path).exists() and states[f.path] == "LIVE" for f in live)


def _appended_id(home: Path, root: Path, path: str, located: Path | None) -> int:
    """The ID the appender wrote into ``path``, read where the file is now (the table,
    or the fail-safe store, which this test may open: it is no user's read, SPEC R38)."""
    import pyarrow.parquet as pq

    where = located or home / "failsafe" / root.name / path
    (row,) = pq.read_table(where).to_pylist()
    return int(row["ID"])
