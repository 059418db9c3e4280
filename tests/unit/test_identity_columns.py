"""Identity columns' rule (SPEC R40): the values a writer gives new rows and the
high-water mark its commit moves, as delta-spark keeps them (``delta.identity.*``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
