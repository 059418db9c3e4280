"""Checkpoints of the tables Rewind writes, read by the other engines and by Rewind's own
statements (issue 28 item 4; SPEC R40, R43). delta-spark runs as itself
(``other_engines``: a plain PySpark job, no Rewind code). The delta-rs side, an external
table's log and the undo of a checkpointed commit: tests/unit/test_checkpoints.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from other_engines import delta_spark
from test_dml import clock, open_at, query, table_root

from rewind.storage.delta import TableStore
from rewind.storage.snapshot import DataFile

pytestmark = pytest.mark.spark

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([pa.field("ID", pa.int64(), True)])
TABLE = 3


def checkpoints(root: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (root / "_delta_log").glob("*.checkpoint*.parquet"))


def grow(store: TableStore, first: int, last: int) -> int:
    """Rewind commits adding the rows ``first``..``last``, one file each; every third
    also removes the oldest live file (an UPDATE's shape). Returns the newest version."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    version = store.latest_version(TABLE)
    for number in range(first, last + 1):
        name = f"part-{number:05d}.parquet"
        pq.write_table(pa.table({"ID": pa.array([number], pa.int64())}), root / name)
        live = sorted(store.snapshot(TABLE, version).files, key=lambda f: f.path)
        version = store.commit(
            TABLE,
            version,
            adds=[DataFile(name, (root / name).stat().st_size, 1)],
            removes=live[:1] if number % 3 == 0 else [],
            schema=SCHEMA,
            query_id=f"q-{number}",
            now=NOW,
        )
    return version


def rewind_ids(store: TableStore, version: int) -> list[int]:
    """The rows of ``version`` as Rewind's log replay lists its files (one row a file)."""
    ids = []
    for file in store.snapshot(TABLE, version).files:
        ids.extend(pq.read_table(store.root(TABLE) / file.path).column("ID").to_pylist())
    return sorted(ids)


SPARK_READS = """
import json
versions = {versions}
out = {{}}
for v in versions:
    rows = spark.read.format("delta").option("versionAsOf", v).load(path).collect()
    out[v] = sorted(r.ID for r in rows)
out["latest"] = sorted(r.ID for r in spark.read.format("delta").load(path).collect())
print(json.dumps(out))
"""


def spark_reads(root: Path, versions: list[int]) -> dict[str, list[int]]:
    printed = delta_spark(root, SPARK_READS.format(versions=versions))
    return dict(json.loads(printed.strip().splitlines()[-1]))


def test_delta_spark_reads_a_rewind_table_past_its_checkpoints_and_writes_to_it_r43(
    tmp_path: Path,
) -> None:
    store = TableStore(tmp_path / "warehouse")
    store.create(TABLE, SCHEMA, "q-create", NOW)
    root = store.root(TABLE)
    assert isinstance(root, Path)
    assert grow(store, 1, 23) == 23
    assert checkpoints(root) == [10, 20]
    seen = spark_reads(root, [5, 10, 15, 20, 23])
    for version in (5, 10, 15, 20, 23):
        assert seen[str(version)] == rewind_ids(store, version), version
    assert seen["latest"] == rewind_ids(store, 23)
    # delta-spark's own append (version 24) is in the state Rewind checkpoints at 30.
    delta_spark(
        root,
        """
        spark.createDataFrame([(900,)], "ID long").write.format("delta").mode("append").save(path)
        """,
    )
    assert 900 in rewind_ids(store, 24)
    assert grow(store, 24, 29) == 30
    assert checkpoints(root) == [10, 20, 30]
    assert json.loads((root / "_delta_log" / "_last_checkpoint").read_text())["version"] == 30
    seen = spark_reads(root, [24, 30])
    assert seen["30"] == seen["latest"] == rewind_ids(store, 30)
    assert seen["24"] == rewind_ids(store, 24)
    # The JSON before the newest checkpoint gone (another engine's log clean-up): every
    # engine still reads the versions from the checkpoint on.
    copy = tmp_path / "cleaned"
    shutil.copytree(root, copy)
    for version in range(30):
        (copy / "_delta_log" / f"{version:020d}.json").unlink()
    seen = spark_reads(copy, [30])
    assert seen["30"] == seen["latest"] == rewind_ids(store, 30)
    assert len(DeltaTable(str(copy)).file_uris()) == len(store.snapshot(TABLE, 30).files)


def test_rewind_statements_checkpoint_and_time_travel_across_them_r16_r43(
    conn: Any, connect: Callable[..., Any], home: Path
) -> None:
    """T (versions 0 and 1) gets eleven INSERTs an hour apart (versions 2..12): a
    checkpoint at 10; Rewind reads the current version and an hour between, before and
    after the checkpoint; delta-rs and delta-spark read the same rows."""
    for hour in range(1, 12):
        open_at(connect, hours=hour).sql(f"INSERT INTO T VALUES ({10 + hour}, 'h{hour}')")
    root = table_root(home, "T")
    assert checkpoints(root) == [10]
    later = open_at(connect, hours=12)
    every = [1, 2, *range(11, 22)]
    assert [r[0] for r in query(later, "SELECT ID FROM T ORDER BY ID")] == every
    for hour, upto in ((5, 15), (9, 19), (10, 20)):
        at = f"AT(TIMESTAMP => '{clock(hours=hour, minutes=30)}')"
        ids = [r[0] for r in query(later, f"SELECT ID FROM T {at} ORDER BY ID")]
        assert ids == [1, 2, *range(11, upto + 1)], hour
    seen = spark_reads(root, [9, 10, 12])
    assert seen["9"] == [1, 2, *range(11, 19)]
    assert seen["10"] == [1, 2, *range(11, 20)]
    assert seen["latest"] == seen["12"] == every
    table = DeltaTable(str(root), version=10).to_pyarrow_table()
    assert sorted(table.column("ID").to_pylist()) == [1, 2, *range(11, 20)]
