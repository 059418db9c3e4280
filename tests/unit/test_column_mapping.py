"""Column mapping (SPEC R40): the names and ids a column-mapped table's new data files
carry, and the column Rewind adds to such a table (Delta's writer requirements for
column mapping)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import Field, write_deltalake

from rewind.errors import ConcurrentWrite
from rewind.storage import log
from rewind.storage.delta import TableStore
from rewind.storage.snapshot import Snapshot

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, tzinfo=UTC)
MAX = "delta.columnMapping.maxColumnId"


def mapped(name: str, ident: int, kind: object) -> dict[str, object]:
    meta = {"delta.columnMapping.id": ident, "delta.columnMapping.physicalName": f"col-{ident}"}
    return {"name": name, "type": kind, "nullable": True, "metadata": meta}


SCHEMA = {
    "type": "struct",
    "fields": [
        mapped("ID", 1, "long"),
        mapped("S", 2, {"type": "struct", "fields": [mapped("X", 3, "string")]}),
        mapped(
            "L",
            4,
            {
                "type": "array",
                "elementType": {"type": "struct", "fields": [mapped("Y", 5, "integer")]},
                "containsNull": True,
            },
        ),
    ],
}


def test_new_files_name_every_column_nested_ones_too_by_physical_name_and_id_r40() -> None:
    physical = log.physical_schema({"schemaString": json.dumps(SCHEMA)})
    top = physical["fields"]
    assert [f["name"] for f in top] == ["col-1", "col-2", "col-4"]
    assert [f["metadata"] for f in top] == [{"parquet.field.id": i} for i in (1, 2, 4)]
    assert top[1]["type"]["fields"][0]["name"] == "col-3"
    assert top[2]["type"]["elementType"]["fields"][0] == {
        "name": "col-5",
        "type": "integer",
        "nullable": True,
        "metadata": {"parquet.field.id": 5},
    }
    snap = Snapshot(
        0,
        (),
        Path("/t"),
        field_ids=log.field_ids({"schemaString": json.dumps(SCHEMA)}),
        metadata={
            "schemaString": json.dumps(SCHEMA),
            "configuration": {"delta.columnMapping.mode": "name"},
        },
    )
    assert snap.physical_name("S") == "col-2"
    unmapped = Snapshot(0, (), Path("/t"), field_ids={"S": "col-2"}, metadata={"configuration": {}})
    assert unmapped.physical_name("S") == "S"


def test_added_columns_get_new_ids_past_the_last_and_unique_physical_names_r40() -> None:
    new = [
        {"name": "A", "type": "string", "nullable": True, "metadata": {}},
        {
            "name": "B",
            "type": {"type": "struct", "fields": [{"name": "C", "type": "long", "metadata": {}}]},
            "nullable": True,
            "metadata": {"comment": "kept"},
        },
    ]
    fields, last = log.mapped_fields(new, 5)
    ids = [
        fields[0]["metadata"]["delta.columnMapping.id"],
        fields[1]["metadata"]["delta.columnMapping.id"],
    ]
    nested = fields[1]["type"]["fields"][0]["metadata"]["delta.columnMapping.id"]
    assert sorted([*ids, nested]) == [6, 7, 8] and last == 8
    names = [
        fields[0]["metadata"]["delta.columnMapping.physicalName"],
        fields[1]["metadata"]["delta.columnMapping.physicalName"],
        fields[1]["type"]["fields"][0]["metadata"]["delta.columnMapping.physicalName"],
    ]
    assert len(set(names)) == 3 and all(n.startswith("col-") for n in names)
    assert fields[1]["metadata"]["comment"] == "kept"
    assert [f["name"] for f in fields] == ["A", "B"]
    # the last id given: maxColumnId, or a field's past it (a writer that did not move it)
    metadata = {"schemaString": json.dumps(SCHEMA), "configuration": {MAX: "3"}}
    assert log.last_column_id(metadata) == 5
    assert log.last_column_id({**metadata, "configuration": {MAX: "9"}}) == 9


def test_a_column_added_to_a_mapped_table_moves_max_column_id_and_yields_to_theirs_r40(
    tmp_path: Path,
) -> None:
    """Rewind's ADD COLUMN on a table delta-rs does not write (column mapping) is its own
    ``metaData`` commit: the column gets the next id and the table's maxColumnId moves;
    after another writer's commit that added a column of the same name it is
    CONCURRENT_WRITE, nothing committed."""
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"ID": pa.array([1], pa.int64())}))
    first = log.replay(team, 0).metadata
    schema = {"type": "struct", "fields": [mapped("ID", 1, "long")]}
    configuration = {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "1"}
    metadata = {**first, "schemaString": json.dumps(schema), "configuration": configuration}
    (team / "_delta_log" / f"{1:020d}.json").write_text(json.dumps({"metaData": metadata}) + "\n")
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    note = Field("NOTE", "string", nullable=True)
    assert store.add_columns(7, 1, [note], "q", NOW, by_rewind=True) == 2
    after = log.replay(team, 2).metadata
    assert after["configuration"]["delta.columnMapping.maxColumnId"] == "2"
    (added,) = json.loads(after["schemaString"])["fields"][1:]
    assert added["name"] == "NOTE" and added["metadata"]["delta.columnMapping.id"] == 2
    theirs = {
        **after,
        "schemaString": json.dumps(
            {"type": "struct", "fields": [*schema["fields"], mapped("EXTRA", 3, "long")]}
        ),
    }
    (team / "_delta_log" / f"{3:020d}.json").write_text(json.dumps({"metaData": theirs}) + "\n")
    with pytest.raises(ConcurrentWrite):
        store.add_columns(7, 2, [Field("extra", "long", nullable=True)], "q", NOW, by_rewind=True)
    assert log.read_commit(team, 4) is None
