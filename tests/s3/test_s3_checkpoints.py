"""Checkpoints of a table Rewind writes on S3 (issue 28 item 4; SPEC R43, R44, R50):
Rewind's commits through delta-rs checkpoint it at every 10 versions on a real S3
server (SeaweedFS on loopback), and the newest version is then read from
``_last_checkpoint`` with no LIST of ``_delta_log``. No Spark: the local-disk side is
tests/unit/test_checkpoints.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from rewind.storage import location, log
from rewind.storage.delta import TableStore
from rewind.storage.snapshot import DataFile

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3")]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([pa.field("ID", pa.int64(), True)])


def test_rewind_checkpoints_a_table_on_s3_and_reads_it_without_listing_r50(
    s3_bucket: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = TableStore(location.of(f"{s3_bucket.uri}warehouse"), home=tmp_path)
    store.create(1, SCHEMA, "q-create", NOW)
    root = store.root(1)
    version = 0
    for number in range(1, 13):
        local = tmp_path / f"part-{number:05d}.parquet"
        pq.write_table(pa.table({"ID": pa.array([number], pa.int64())}), local)
        location.copy(local, root / local.name)
        version = store.commit(
            1,
            version,
            adds=[DataFile(local.name, local.stat().st_size, 1)],
            removes=[],
            schema=SCHEMA,
            query_id=f"q-{number}",
            now=NOW,
        )
    assert version == 12
    names = location.names(root / log.LOG)
    assert sorted(n for n in names if "checkpoint" in n) == [
        "00000000000000000010.checkpoint.parquet",
        "_last_checkpoint",
    ]
    assert log.last_checkpoint(root) == (10, log.checkpoint_files(root, 10))
    listed: list[object] = []
    real_names = location.names

    def counting(directory: Any) -> list[str]:
        listed.append(directory)
        return real_names(directory)

    monkeypatch.setattr(location, "names", counting)
    files = {f.path for f in store.snapshot(1, 12).files}
    assert listed == []
    assert files == {f"part-{n:05d}.parquet" for n in range(1, 13)}
    table = DeltaTable(str(root), storage_options=location.storage_options(root))
    assert sorted(table.to_pyarrow_table().column("ID").to_pylist()) == list(range(1, 13))
