"""Delta checkpoints on the tables Rewind writes (issue 28 item 4; SPEC R40-R43, R50).

Rewind's commits (:class:`rewind.storage.delta.TableStore`, through real delta-rs) get
a checkpoint at each multiple of the table's ``delta.checkpointInterval`` (10 when unset,
delta-spark's rule), ``_last_checkpoint`` naming the newest; delta-rs reads every version
as Rewind's own log reader does, also once the JSON before a checkpoint is gone; an
external table gets checkpoints and never loses a log file (R42); the undo of a failed
statement's commit (R28) takes its checkpoint with it; Rewind's reader starts from
``_last_checkpoint`` without listing the log, and reads delta-rs's checkpoints of a
partitioned table. delta-spark's reads of the same tables: tests/spark/test_checkpoints.py.
Also the store's commits that are not plain appends: a property commit after another
writer's, a restore's commit that replaces the schema.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from rewind.errors import ConcurrentWrite, StorageError
from rewind.storage import location, log
from rewind.storage.delta import FieldChange, TableStore
from rewind.storage.snapshot import DataFile, Snapshot

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([pa.field("ID", pa.int64(), True)])
TABLE = 7


def data_file(root: Path, number: int) -> DataFile:
    """A data file holding the row ``number``, written into the table's directory."""
    name = f"part-{number:05d}.parquet"
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"ID": pa.array([number], pa.int64())}), root / name)
    return DataFile(name, (root / name).stat().st_size, 1)


def checkpoints(root: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (root / "_delta_log").glob("*.checkpoint*.parquet"))


def json_versions(root: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (root / "_delta_log").glob("*.json"))


def hint(root: Path) -> int:
    return int(json.loads((root / "_delta_log" / "_last_checkpoint").read_text())["version"])


def rewind_files(store: TableStore, version: int) -> set[str]:
    return {f.path for f in store.snapshot(TABLE, version).files}


def delta_rs_files(root: Path, version: int | None = None) -> set[str]:
    uris = DeltaTable(str(root), version=version).file_uris()
    return {uri.rsplit("/", 1)[-1] for uri in uris}  # the tests' files are all at the root


def delta_rs_ids(root: Path, version: int | None = None) -> list[int]:
    table = DeltaTable(str(root), version=version).to_pyarrow_table()
    return sorted(table.column("ID").to_pylist())


def grow(store: TableStore, commits: int, *, first: int = 1) -> int:
    """Commit ``commits`` versions after the newest: each adds one file, and every third
    also removes the oldest live one (an UPDATE's shape). Returns the newest version."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    version = store.latest_version(TABLE)
    for number in range(first, first + commits):
        live = sorted(store.snapshot(TABLE, version).files, key=lambda f: f.path)
        removes = live[:1] if number % 3 == 0 else []
        version = store.commit(
            TABLE,
            version,
            adds=[data_file(root, number)],
            removes=removes,
            schema=SCHEMA,
            query_id=f"q-{number}",
            now=NOW,
        )
    return version


@pytest.fixture
def store(tmp_path: Path) -> TableStore:
    """A Rewind-created table (version 0, empty) under a local warehouse."""
    store = TableStore(tmp_path / "warehouse")
    store.create(TABLE, SCHEMA, "q-create", NOW)
    return store


def test_rewind_commits_checkpoint_at_each_multiple_of_ten_and_delta_rs_reads_every_version(
    store: TableStore,
) -> None:
    root = store.root(TABLE)
    assert isinstance(root, Path)
    assert store.snapshot(TABLE, 0).configuration.get("delta.checkpointInterval") is None
    newest = grow(store, 25)
    assert newest == 25
    assert checkpoints(root) == [10, 20]
    assert hint(root) == 20
    assert json_versions(root) == list(range(26))  # nothing of the log is cleaned up
    for version in (0, 5, 10, 15, 20, 25):
        assert delta_rs_files(root, version) == rewind_files(store, version)
    assert delta_rs_files(root) == rewind_files(store, 25)
    assert delta_rs_ids(root, 15) == sorted(
        int(p[5:10]) for p in rewind_files(store, 15)
    )  # the data, not just the names, as of version 15
    assert log.latest_checkpoint(root, 19) == (
        10,
        [root / "_delta_log" / "00000000000000000010.checkpoint.parquet"],
    )


def test_the_table_s_checkpoint_interval_is_followed(store: TableStore) -> None:
    """``delta.checkpointInterval`` = 4 set through Rewind (a metadata-only version 1):
    checkpoints at 4, 8, 12; a version at a multiple made by set_properties counts too."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    version = store.set_properties(TABLE, 0, {"delta.checkpointInterval": "4"}, "q-props", NOW)
    assert version == 1
    assert grow(store, 11) == 12
    assert checkpoints(root) == [4, 8, 12]
    assert delta_rs_files(root) == rewind_files(store, 12)
    assert TableStore.checkpoint_interval({"delta.checkpointInterval": "x"}) == 10
    assert TableStore.checkpoint_interval({"delta.checkpointInterval": "0"}) == 10


def test_a_version_past_the_checkpoint_reads_without_the_json_before_it_r43(
    store: TableStore,
) -> None:
    """The issue's 'done when': once the JSON commits before a checkpoint are gone (what
    another engine's log clean-up does), the versions from the checkpoint on still read,
    by Rewind and by delta-rs, and an earlier one is a clear error, never a wrong answer."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    grow(store, 23)
    before = {v: rewind_files(store, v) for v in (20, 21, 23)}
    for version in range(20):
        (root / "_delta_log" / f"{version:020d}.json").unlink()
    for version, files in before.items():
        assert rewind_files(store, version) == files
        assert delta_rs_files(root, version) == files
    with pytest.raises(StorageError, match="no entry for version 11"):
        store.snapshot(TABLE, 15)


def test_an_external_table_gets_checkpoints_and_keeps_every_log_file_r42(
    tmp_path: Path,
) -> None:
    """Another team's table, registered in place, whose own properties would have delta-rs
    clean its expired log (retention of a second, clean-up on, every JSON a year old):
    Rewind's commits checkpoint it (what any Delta writer does) and delete nothing."""
    team = tmp_path / "team" / "orders"
    write_deltalake(
        str(team),
        pa.table({"ID": pa.array([0], pa.int64())}),
        configuration={
            "delta.logRetentionDuration": "interval 1 second",
            "delta.enableExpiredLogCleanup": "true",
        },
    )
    for number in (100, 101):
        write_deltalake(str(team), pa.table({"ID": pa.array([number], pa.int64())}), mode="append")
    old = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    for entry in (team / "_delta_log").glob("*.json"):
        os.utime(entry, (old, old))
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    assert grow(store, 20) == 22
    assert checkpoints(team) == [10, 20]
    assert hint(team) == 20
    assert json_versions(team) == list(range(23))
    assert delta_rs_files(team) == rewind_files(store, 22)
    assert delta_rs_ids(team, 2) == [0, 100, 101]


def test_undoing_a_checkpointed_commit_takes_its_checkpoint_with_it_r28(
    store: TableStore,
) -> None:
    """A failed statement's commit at version 10 got its checkpoint; undoing the commit
    (the newest, so its log entry goes) removes the checkpoint and the hint naming it
    first, and the next commit at 10 gets a checkpoint of its own state."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    grow(store, 9)
    failed = store.commit(
        TABLE, 9, adds=[data_file(root, 50)], removes=[], schema=SCHEMA, query_id="q-x", now=NOW
    )
    assert (failed, checkpoints(root), hint(root)) == (10, [10], 10)
    store.undo_commit(TABLE, 10, "q-x", NOW)
    assert checkpoints(root) == []
    assert not (root / "_delta_log" / "_last_checkpoint").exists()
    assert json_versions(root) == list(range(10))
    assert delta_rs_files(root) == rewind_files(store, 9)
    assert grow(store, 1, first=60) == 10
    assert checkpoints(root) == [10]
    assert "part-00050.parquet" not in rewind_files(store, 10)
    assert delta_rs_files(root) == rewind_files(store, 10)
    assert 60 in delta_rs_ids(root)


def test_the_newest_version_is_read_from_last_checkpoint_without_listing_the_log_r50(
    store: TableStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the newest version: one read of ``_last_checkpoint``, the checkpoint and the
    commits after it; no listing of ``_delta_log`` (a LIST per read on S3). A version
    before the hint's checkpoint, or a hint naming a checkpoint that is not there, lists."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    grow(store, 23)
    expected = {v: rewind_files(store, v) for v in (5, 23)}
    listed: list[object] = []
    real_names = location.names

    def names(directory: object) -> list[str]:
        listed.append(directory)
        return real_names(directory)  # type: ignore[arg-type]

    monkeypatch.setattr(location, "names", names)
    assert rewind_files(store, 23) == expected[23]
    assert listed == []
    assert rewind_files(store, 5) == expected[5]  # before the hint: the log is listed
    assert len(listed) == 1
    (root / "_delta_log" / "_last_checkpoint").write_text('{"version": 30, "size": 1}')
    assert rewind_files(store, 23) == expected[23]  # a hint past the version: listed
    (root / "_delta_log" / "00000000000000000020.checkpoint.parquet").unlink()
    (root / "_delta_log" / "_last_checkpoint").write_text('{"version": 20, "size": 1}')
    assert rewind_files(store, 23) == expected[23]  # from checkpoint 10, listed


def test_rewind_reads_delta_rs_checkpoints_of_a_partitioned_table_r43(tmp_path: Path) -> None:
    """Parquet checkpoints hold partition values and properties as maps: Rewind's reader
    gives them as the JSON commits do (this failed before: a map read as a list)."""
    root = tmp_path / "sales"
    rows = pa.table({"ID": pa.array([1, 2], pa.int64()), "REGION": ["eu", "us"]})
    write_deltalake(
        str(root), rows, partition_by=["REGION"], configuration={"delta.appendOnly": "false"}
    )
    write_deltalake(str(root), rows, mode="append")
    DeltaTable(str(root)).create_checkpoint()
    write_deltalake(str(root), rows, mode="append")
    state = log.replay(root, 2)
    by_json = log.Replay(2)
    for version in range(3):
        commit = log.read_commit(root, version)
        assert commit is not None
        for action in commit.actions:
            by_json.apply(action)
    assert sorted(state.files, key=lambda f: f.path) == sorted(by_json.files, key=lambda f: f.path)
    assert {f.partition_values for f in state.files} == {(("REGION", "eu"),), (("REGION", "us"),)}
    assert state.metadata["configuration"] == {"delta.appendOnly": "false"}
    assert state.metadata["format"] == {"provider": "parquet", "options": {}}


def test_rewinds_property_commit_keeps_the_protocol_and_lands_after_another_writers_r40_r42(
    tmp_path: Path,
) -> None:
    """A team's table with table features (a TIMESTAMP_NTZ column: reader 3, writer 7;
    in-commit timestamps).
    delta-rs's ``set_table_properties`` added ``variantType`` to such a protocol; Rewind's
    own metaData-only commit keeps it. Made from a version another writer has committed
    after, it lands on top, keeping their commit; on a table with in-commit timestamps
    its own comes after the previous commit's (here one in the future), and it writes no
    checkpoint of a table whose features it cannot write."""
    team = tmp_path / "team"
    ntz = pa.table({"ID": pa.array([1], pa.int64()), "AT": pa.array([1], pa.timestamp("us"))})
    write_deltalake(str(team), ntz)
    write_deltalake(str(team), ntz, mode="append")  # after the version Rewind read
    first, second = (team / "_delta_log" / f"{v:020d}.json" for v in (0, 1))
    on = '"configuration":{"delta.enableInCommitTimestamps":"true"}'
    ict = '"writerFeatures":["timestampNtz","inCommitTimestamp"]'
    first.write_text(
        first.read_text()
        .replace('"configuration":{}', on)
        .replace('"writerFeatures":["timestampNtz"]', ict)
    )
    protocol = DeltaTable(str(team)).protocol()
    assert protocol.reader_features == ["timestampNtz"]
    assert protocol.writer_features == ["timestampNtz", "inCommitTimestamp"]
    future = int(NOW.timestamp() * 1000) * 2
    actions = [json.loads(line) for line in second.read_text().splitlines()]
    for action in actions:
        action.get("commitInfo", {})["inCommitTimestamp"] = future
    second.write_text("".join(json.dumps(a) + "\n" for a in actions))
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    values = {"delta.logRetentionDuration": "interval 40 days", "delta.checkpointInterval": "2"}
    assert store.set_properties(TABLE, 0, values, "q", NOW) == 2
    after = DeltaTable(str(team))
    assert after.protocol() == protocol
    assert after.metadata().configuration == {"delta.enableInCommitTimestamps": "true", **values}
    # Version 2 is at the interval, but Rewind does not write this table's features:
    # no delta-rs checkpoint of it (its own writers checkpoint it).
    assert checkpoints(team) == []
    assert len(after.file_uris()) == 2
    commit = log.read_commit(team, 2)
    assert commit is not None and commit.info["inCommitTimestamp"] == future + 1


def schema_restore(store: TableStore, then: Snapshot, base: int) -> int:
    """The commit of a restore (query "q") to ``then``, a version another engine replaced
    by ``base``: its files, schema and partitioning back, on ``base`` only."""
    now = store.snapshot(TABLE, base)
    return store.commit(
        TABLE,
        base,
        adds=then.files,
        removes=now.files,
        schema=now.schema,
        query_id="q",
        now=NOW,
        readds=True,
        metadata=now.restored_to(then),
        exclusive=True,
    )


def test_a_commit_that_replaces_the_schema_lands_on_the_version_it_read_or_not_at_all_r28_r40(
    tmp_path: Path,
) -> None:
    """A restore of a version another engine replaced since commits that version's files
    with its schema (``exclusive``, with the ``metaData`` that brings it back). delta-rs
    made such an overwrite after another writer's append without a conflict, their file
    left in the table under the restored schema (a table nobody reads). Now it is
    CONCURRENT_WRITE with nothing committed (the statement then runs again on the newer
    version), and on the version it read it commits."""
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"id": pa.array([1], pa.int64()), "region": ["EU"]}))
    replacing = {"mode": "overwrite", "schema_mode": "overwrite"}
    numbers = pa.table({"id": pa.array([2], pa.int64()), "region": pa.array([5], pa.int32())})
    write_deltalake(str(team), numbers, **replacing)  # type: ignore[arg-type]
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    then = store.snapshot(TABLE, 0)
    write_deltalake(str(team), numbers, mode="append")  # after the version the restore read

    with pytest.raises(ConcurrentWrite):
        schema_restore(store, then, 1)
    assert DeltaTable(str(team)).version() == 2
    assert schema_restore(store, then, 2) == 3
    restored = DeltaTable(str(team))
    assert restored.schema().to_arrow() == DeltaTable(str(team), version=0).schema().to_arrow()
    assert [uri.rsplit("/", 1)[-1] for uri in restored.file_uris()] == [f.path for f in then.files]


def test_a_column_change_lands_after_another_writers_append_unless_it_must_be_alone_r40(
    store: TableStore,
) -> None:
    """ALTER COLUMN's commit (``change_field``): one ``metaData`` action changing the
    field's nullability and metadata keys, every other field and the protocol kept. Made
    on a version another writer has since appended to, a comment or a length lands on
    top of theirs; SET NOT NULL (``alone``: it was checked on the version it read, and the
    append may hold NULL) is CONCURRENT_WRITE with nothing committed."""
    grow(store, 1)  # version 1, a row
    root = store.root(TABLE)
    assert isinstance(root, Path)
    write_deltalake(str(root), pa.table({"ID": pa.array([9], pa.int64())}), mode="append")
    protocol = DeltaTable(str(root)).protocol()
    with pytest.raises(ConcurrentWrite):
        store.change_field(TABLE, 1, "ID", FieldChange(nullable=False, alone=True), "q", NOW)
    assert DeltaTable(str(root)).version() == 2
    comment = FieldChange(metadata={"comment": "the key", "__CHAR_VARCHAR_TYPE_STRING": None})
    assert store.change_field(TABLE, 1, "ID", comment, "q2", NOW) == 3
    after = DeltaTable(str(root))
    (field,) = json.loads(after.schema().to_json())["fields"]
    assert (field["nullable"], field["metadata"]) == (True, {"comment": "the key"})
    assert after.protocol() == protocol
    assert sorted(delta_rs_files(root)) == sorted(delta_rs_files(root, 2))  # their row kept
    assert store.change_field(TABLE, 3, "ID", FieldChange(nullable=False, alone=True), "q3", NOW)
    assert DeltaTable(str(root)).schema().fields[0].nullable is False


def test_a_schema_restore_another_writer_committed_after_is_not_taken_back_r28_r40(
    tmp_path: Path,
) -> None:
    """A restore that brought back a replaced version's schema, then killed, is taken back
    by deleting its commit while it is the newest; after another writer's append, made
    against the restored schema, taking it back would swap the replacement's files in
    under that schema (a table nobody reads) or leave theirs unreadable: it stays."""
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"id": pa.array([1], pa.int64()), "region": ["EU"]}))
    numbers = pa.table({"id": pa.array([2], pa.int64()), "region": pa.array([5], pa.int32())})
    write_deltalake(str(team), numbers, mode="overwrite", schema_mode="overwrite")
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    then = store.snapshot(TABLE, 0)
    assert schema_restore(store, then, 1) == 2
    store.undo_commit(TABLE, 2, "q", NOW)  # the newest: its commit goes
    assert log.read_commit(team, 2) is None
    assert schema_restore(store, then, 1) == 2
    write_deltalake(
        str(team), pa.table({"id": pa.array([3], pa.int64()), "region": ["US"]}), mode="append"
    )
    store.undo_commit(TABLE, 2, "q", NOW)
    assert log.read_commit(team, 4) is None
    rows = DeltaTable(str(team)).to_pyarrow_dataset().to_table().sort_by("id").to_pylist()
    assert rows == [{"id": 1, "region": "EU"}, {"id": 3, "region": "US"}]


def test_commits_of_files_with_deletion_vectors_carry_them_verbatim_and_undo_with_them_r28_r40(
    tmp_path: Path,
) -> None:
    """A file another writer gave a deletion vector (delta-spark's DELETE) is removed, or
    put back without it (a restore to before that DELETE), by an action that names the
    vector: Delta's file identity is the path and the vector, and a remove without it
    left the file in the table (delta-rs's actions carry none). The commit lands after
    another writer's blind append, is CONCURRENT_WRITE after their remove, and its undo
    (SPEC R28) brings the file back with its vector."""
    team = tmp_path / "team"
    write_deltalake(str(team), pa.table({"ID": pa.array([1, 2, 3], pa.int64())}))
    vector = {"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0", "sizeInBytes": 20,
              "cardinality": 1}  # fmt: skip
    whole = DeltaTable(str(team)).get_add_actions(flatten=True).column("path")[0].as_py()
    size = (team / whole).stat().st_size
    stats = json.dumps({"numRecords": 3})
    deleted = {"path": whole, "partitionValues": {}, "size": size, "dataChange": True}
    (team / "_delta_log" / f"{1:020d}.json").write_text(  # the team's DELETE of one row
        json.dumps({"commitInfo": {"operation": "DELETE"}})
        + "\n"
        + json.dumps(
            {"add": {**deleted, "modificationTime": 1, "stats": stats, "deletionVector": vector}}
        )
        + "\n"
        + json.dumps({"remove": {**deleted, "deletionTimestamp": 1}})
        + "\n"
    )
    store = TableStore(tmp_path / "warehouse", locate=lambda _: str(team))
    then, now = store.snapshot(TABLE, 0), store.snapshot(TABLE, 1)
    assert now.files[0].deletion_vector == vector and now.rows == 2
    restore = {"schema": then.schema, "now": NOW, "readds": True}
    write_deltalake(str(team), pa.table({"ID": pa.array([4], pa.int64())}), mode="append")
    assert store.commit(TABLE, 1, adds=then.files, removes=now.files, query_id="q", **restore) == 3
    removed = log.read_commit(team, 3)
    assert removed is not None
    assert [r["deletionVector"] for r in removed.removes()] == [vector]
    assert [a.get("deletionVector") for a in removed.adds()] == [None]
    restored = store.snapshot(TABLE, 3)
    assert (whole, None) in {(f.path, f.vector) for f in restored.files}
    assert restored.rows == 4  # the three of version 0 and the append's
    # Taken back while newest: its entry goes, the file it re-added stays (SPEC R28).
    store.undo_commit(TABLE, 3, "q", NOW)
    assert json_versions(team) == [0, 1, 2] and (team / whole).exists()
    # After another writer's remove: nothing committed.
    latest = store.snapshot(TABLE, 2)
    dropped = next(f for f in latest.files if f.path != whole)
    TableStore(team.parent / "other", locate=lambda _: str(team)).commit(
        TABLE, 2, adds=[], removes=[dropped], schema=then.schema, query_id="other", now=NOW
    )
    with pytest.raises(ConcurrentWrite):
        store.commit(TABLE, 2, adds=then.files, removes=now.files, query_id="q2", **restore)
    assert json_versions(team) == [0, 1, 2, 3]
    # Taken back after another writer's commit: a new commit brings the file back with
    # the vector it had, deleting nothing.
    assert store.commit(TABLE, 3, adds=then.files, removes=now.files, query_id="q3", **restore) == 4
    write_deltalake(str(team), pa.table({"ID": pa.array([5], pa.int64())}), mode="append")
    store.undo_commit(TABLE, 4, "q3", NOW)
    undone = store.snapshot(TABLE, 6)
    assert {(f.path, f.vector) for f in undone.files} >= {(whole, now.files[0].vector)}
    assert undone.rows == 2 + 1  # IDs 1 and 3 through the vector, and the append's 5


def test_a_rewrite_with_change_files_commits_them_as_cdc_and_undo_takes_them_back_r28_r40(
    store: TableStore,
) -> None:
    """A rewrite of a table with the change data feed on commits its change files as
    ``cdc`` actions (no data change: the version's rows are its adds and removes), beside
    its adds; taken back while it is the newest (a failed statement), its change files go
    with its data files."""
    root = store.root(TABLE)
    assert isinstance(root, Path)
    first = store.commit(
        TABLE, 0, adds=[data_file(root, 1)], removes=[], schema=SCHEMA, query_id="q1", now=NOW
    )
    change = data_file(root / "_change_data", 2)
    change = DataFile(f"_change_data/{change.path}", change.size, 1)
    version = store.commit(
        TABLE,
        first,
        adds=[data_file(root, 3)],
        removes=store.snapshot(TABLE, first).files,
        schema=SCHEMA,
        query_id="q2",
        now=NOW,
        changes=[change],
    )
    commit = log.read_commit(root, version)
    assert commit is not None
    (cdc,) = [a["cdc"] for a in commit.actions if "cdc" in a]
    assert cdc == {
        "path": change.path,
        "partitionValues": {},
        "size": change.size,
        "dataChange": False,
    }
    assert rewind_files(store, version) == {"part-00003.parquet"}  # not a data file
    assert delta_rs_ids(root, version) == [3]
    store.undo_commit(TABLE, version, "q2", NOW)
    assert log.read_commit(root, version) is None
    assert not (root / change.path).exists() and not (root / "part-00003.parquet").exists()
    assert (root / "part-00001.parquet").exists()
