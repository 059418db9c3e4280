"""Row tracking (SPEC R40): the row ids and row commit versions Rewind's commits give the
files they add, as Delta's writer requirements for row tracking ask."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from rewind.storage import log
from rewind.storage.delta import TableStore
from rewind.storage.log import DataFile

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PROTOCOL = {"minReaderVersion": 1, "minWriterVersion": 7}
FEATURES = ["domainMetadata", "rowTracking"]


def domain(mark: int) -> dict[str, object]:
    configuration = {"rowIdHighWaterMark": mark, "domainName": "delta.rowTracking"}
    return {"domain": "delta.rowTracking", "configuration": json.dumps(configuration)}


def commit(root: Path, version: int, *actions: dict[str, object]) -> None:
    text = "".join(json.dumps(a) + "\n" for a in actions)
    (root / "_delta_log" / f"{version:020d}.json").write_text(text)


def test_new_files_get_fresh_row_ids_past_the_mark_even_after_another_writers_r40(
    tmp_path: Path,
) -> None:
    """A new file gets ids past the high-water mark and the commit's version as its row
    commit version, and the mark moves in the same commit; a file put back keeps its ids.
    After another writer's append that took ids (their mark moved), Rewind's commit goes
    on top of theirs with ids past their mark: no id is given twice."""
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"ID": pa.array([1], pa.int64())}))
    commit(
        team,
        1,
        {"protocol": {**PROTOCOL, "writerFeatures": FEATURES}},
        {"domainMetadata": domain(9)},
    )
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    base = store.snapshot(7, 1)
    kept = DataFile("kept.parquet", 10, 4, base_row_id=3, row_commit_version=0)
    new = [DataFile("a.parquet", 10, 2), DataFile("b.parquet", 10, 5)]
    # another writer's append, after Rewind read version 1
    theirs = {"path": "theirs.parquet", "size": 1, "baseRowId": 10, "defaultRowCommitVersion": 2}
    commit(
        team,
        2,
        {"add": {**theirs, "partitionValues": {}, "dataChange": True}},
        {"domainMetadata": domain(12)},
    )
    writes = {"removes": [], "schema": base.schema, "query_id": "q", "now": NOW, "by_rewind": True}
    assert store.commit(7, 1, adds=[kept, *new], **writes) == 3  # type: ignore[arg-type]
    ours = log.read_commit(team, 3)
    assert ours is not None
    given = {a["path"]: (a.get("baseRowId"), a.get("defaultRowCommitVersion")) for a in ours.adds()}
    assert given == {"kept.parquet": (3, 0), "a.parquet": (13, 3), "b.parquet": (15, 3)}
    assert json.loads(log.replay(team, 3).domains["delta.rowTracking"])["rowIdHighWaterMark"] == 19
    assert ours.info["tags"] == {"delta.rowTracking.preserved": "true"}


def test_a_table_without_row_tracking_gets_no_row_ids_r40(tmp_path: Path) -> None:
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"ID": pa.array([1], pa.int64())}))
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    base = store.snapshot(7, 0)
    writes = {"removes": [], "schema": base.schema, "query_id": "q", "now": NOW, "by_rewind": True}
    assert store.commit(7, 0, adds=[DataFile("a.parquet", 10, 2)], **writes) == 1  # type: ignore[arg-type]
    ours = log.read_commit(team, 1)
    assert ours is not None
    (add,) = ours.adds()
    assert "baseRowId" not in add and "defaultRowCommitVersion" not in add
    assert "tags" not in ours.info and "delta.rowTracking" not in log.replay(team, 1).domains
