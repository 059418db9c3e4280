"""Identity columns' rule (SPEC R40): the values a writer gives new rows and the
high-water mark its commit moves, as delta-spark keeps them (``delta.identity.*``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from rewind.errors import ConcurrentWrite
from rewind.storage import log
from rewind.storage.delta import TableStore
from rewind.storage.snapshot import Identity, Snapshot

pytestmark = pytest.mark.unit


def snapshot_with(metadata: dict[str, object]) -> Snapshot:
    fields = [
        {"name": "ID", "type": "long", "nullable": True, "metadata": metadata},
        {"name": "V", "type": "string", "nullable": True, "metadata": {}},
    ]
    schema = json.dumps({"type": "struct", "fields": fields})
    return Snapshot(0, (), Path("/t"), metadata={"schemaString": schema, "partitionColumns": []})


@pytest.mark.parametrize(
    ("rule", "first", "span", "mark"),
    [
        (Identity(10, 5, None, True), 10, (10, 20), 20),  # no mark yet: from START
        (Identity(10, 5, 20, True), 25, (25, 30), 30),
        (Identity(10, 5, 20, False), 25, (1, 3), None),  # values given below the mark
        (Identity(10, 5, None, False), 10, (1, 3), None),  # ... and below START
        (Identity(-1, -1, -2, False), -3, (-100, -3), -100),  # counting down, one given
        (Identity(-1, -1, -2, False), -3, (5, 7), None),
    ],
)
def test_new_rows_start_past_the_mark_and_the_mark_moves_only_forward_r40(
    rule: Identity, first: int, span: tuple[int, int], mark: int | None
) -> None:
    assert rule.first == first
    assert rule.past(*span) == mark


def test_identity_columns_are_read_from_the_log_and_their_mark_written_back_r40() -> None:
    """delta-spark's field metadata: ALWAYS unless explicit inserts are allowed; the mark
    is written into the field's metadata, the rest of the schema as it was."""
    meta = {
        "delta.identity.start": 10,
        "delta.identity.step": 5,
        "delta.identity.allowExplicitInsert": False,
    }
    snap = snapshot_with(meta)
    assert snap.identity == {"ID": Identity(10, 5, None, True)}
    moved = snapshot_with(meta).with_high_water_marks({"ID": 30})
    again = Snapshot(0, (), Path("/t"), metadata=moved)
    assert again.identity == {"ID": Identity(10, 5, 30, True)}
    fields = json.loads(str(moved["schemaString"]))["fields"]
    assert fields[1] == {"name": "V", "type": "string", "nullable": True, "metadata": {}}
    by_default = snapshot_with({**meta, "delta.identity.allowExplicitInsert": True})
    assert by_default.identity["ID"].always is False
    assert snapshot_with({}).identity == {}


def test_a_commit_that_moves_the_mark_is_not_made_over_another_writers_r40(
    tmp_path: Path,
) -> None:
    """Rewind's commit of new identity values carries the moved mark (a ``metaData``
    action). After another writer's commit that moved it too (their INSERT), it would
    hand out their values again: CONCURRENT_WRITE, nothing committed; on the version it
    read it commits, the mark moved."""
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"ID": pa.array([10], pa.int64())}))
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    base = store.snapshot(7, 0)
    theirs = base.with_high_water_marks({"ID": 15})
    (team / "_delta_log" / f"{1:020d}.json").write_text(json.dumps({"metaData": theirs}) + "\n")
    ours = base.with_high_water_marks({"ID": 20})
    commit = {"adds": [], "removes": [], "schema": base.schema, "query_id": "q", "metadata": ours}
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ConcurrentWrite):
        store.commit(7, 0, now=now, **commit)  # type: ignore[arg-type]
    assert log.read_commit(team, 2) is None
    assert store.commit(7, 1, now=now, **commit) == 2  # type: ignore[arg-type]
    assert log.replay(team, 2).metadata["schemaString"] == ours["schemaString"]
