"""``read_arrow``: a local Delta table's latest version as Arrow, without delta-rs'
Python filesystem bridge (issue 26; the exit codes are tests/spark/test_process_exit.py).

What it must keep from ``DeltaTable.to_pyarrow_table``: the latest version's files only,
partition values (as written, also when the directory name is URL-encoded), filters,
and the refusal of tables whose deletion vectors or column mapping a pyarrow dataset
would read wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from rewind.errors import UnsupportedTableFeature
from rewind.storage.arrow_read import read_arrow

pytestmark = pytest.mark.unit

RUN = "scheduled__2026-03-02T13:00:00+00:00 a%b/c é"  # an Airflow run id, and worse


def rows(table: pa.Table) -> list[dict[str, object]]:
    return sorted(table.to_pylist(), key=lambda r: (str(r["RUN_ID"]), int(r["N"])))


def test_reads_the_latest_version_of_a_partition_with_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "plan"
    first = pa.table({"RUN_ID": [RUN, RUN, "other"], "N": [1, 2, 3]})
    write_deltalake(str(path), first, partition_by=["RUN_ID"])
    # What write_partition does on a retry: the run's partition replaced, the other kept.
    write_deltalake(
        str(path),
        pa.table({"RUN_ID": [RUN], "N": [4]}),
        mode="overwrite",
        partition_by=["RUN_ID"],
        predicate=f"RUN_ID = '{RUN}'",
    )

    assert rows(read_arrow(path)) == [{"RUN_ID": "other", "N": 3}, {"RUN_ID": RUN, "N": 4}]
    assert rows(read_arrow(path, filters=[("RUN_ID", "=", RUN)])) == [{"RUN_ID": RUN, "N": 4}]
    assert read_arrow(path, filters=[("RUN_ID", "=", "other"), ("N", ">", 3)]).num_rows == 0
    monkeypatch.chdir(tmp_path)
    assert read_arrow(Path("plan")).num_rows == 2


@pytest.mark.parametrize("feature", ["deletionVectors", "columnMapping"])
def test_refuses_what_a_pyarrow_dataset_would_read_wrong(tmp_path: Path, feature: str) -> None:
    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [{"name": "a", "type": "long", "nullable": True, "metadata": {}}],
    }
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": [feature],
        "writerFeatures": [feature],
    }
    metadata = {
        "id": "8c6a8b7e-0000-4000-8000-000000000000",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(schema),
        "partitionColumns": [],
        "configuration": {},
        "createdTime": 0,
    }
    commit = [{"protocol": protocol}, {"metaData": metadata}]
    (log / f"{0:020}.json").write_text("\n".join(json.dumps(a) for a in commit) + "\n")

    with pytest.raises(UnsupportedTableFeature, match=feature):
        read_arrow(tmp_path / "t")


def test_a_snapshot_names_its_check_constraints_and_invariants() -> None:
    """SPEC R40: what every Rewind write checks (rewind.sql.frames.write_frame): the CHECK
    constraints in the table's properties and delta-spark's column invariants."""
    from rewind.storage.snapshot import Snapshot

    invariant = json.dumps({"expression": {"expression": "qty >= 0"}})
    schema = {
        "type": "struct",
        "fields": [
            {"name": "qty", "type": "long", "nullable": True, "metadata": {}},
            {
                "name": "n",
                "type": "long",
                "nullable": True,
                "metadata": {"delta.invariants": invariant},
            },
        ],
    }
    metadata = {
        "schemaString": json.dumps(schema),
        "configuration": {"delta.constraints.positive": "qty > 0", "delta.appendOnly": "false"},
    }
    snap = Snapshot(1, (), Path("/nowhere"), metadata=metadata)
    assert snap.checks == {"positive": "qty > 0", "invariant of n": "qty >= 0"}
    assert Snapshot(1, (), Path("/nowhere")).checks == {}
