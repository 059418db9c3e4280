"""Table roots, local or on S3 (rewind.storage.location, SPEC R41, R44, R45): how a stored
location becomes a root, how roots join, compare and name files, and the local side of the
file operations the Delta log reader and the writer of staged files use. No network: the
S3 side runs against a real server in tests/s3/test_s3_external.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from deltalake.schema import Schema as DeltaSchema

from rewind.errors import InvalidLocation
from rewind.storage import location, log, objectstore
from rewind.storage.delta import TableStore
from rewind.storage.objectstore import S3Location
from rewind.storage.snapshot import DataFile

pytestmark = pytest.mark.unit

MAPPED = {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "2"}
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"


def test_an_s3_location_joins_like_a_path() -> None:
    root = S3Location("lake", "team/orders")
    commit = root / "_delta_log" / "00000000000000000000.json"
    assert commit == S3Location("lake", "team/orders/_delta_log/00000000000000000000.json")
    assert str(commit) == "s3://lake/team/orders/_delta_log/00000000000000000000.json"
    assert (commit.name, commit.parent.parent) == ("00000000000000000000.json", root)
    assert S3Location("lake") / "t" == S3Location("lake", "t")
    assert (root.prefix, S3Location("lake").prefix) == ("team/orders/", "")


@pytest.mark.parametrize(
    ("text", "root"),
    [
        ("s3://lake/team/orders", S3Location("lake", "team/orders")),
        ("s3a://lake/team/orders/", S3Location("lake", "team/orders")),
        ("S3://lake/t", S3Location("lake", "t")),
        ("/data/lake/orders", Path("/data/lake/orders")),
    ],
)
def test_a_stored_location_is_a_root_of_its_kind(text: str, root: location.Root) -> None:
    assert location.of(text) == root


def test_a_location_with_credentials_is_no_root_r45() -> None:
    with pytest.raises(InvalidLocation) as refused:
        location.of(f"s3://AKIAEXAMPLE:{SECRET}@lake/orders")
    assert SECRET not in refused.value.message


@pytest.mark.parametrize(
    ("one", "other", "overlap"),
    [
        ("s3://lake/team/orders", "s3a://lake/team/orders/", True),
        ("s3://lake/team", "s3://lake/team/orders", True),
        ("s3://lake/team/orders", "s3://lake/team/orders2", False),  # whole segments only
        ("s3://lake/team/orders", "s3://other/team/orders", False),
        ("s3://lake/", "s3://lake/anything", True),
        ("s3://lake/team/orders", "/lake/team/orders", False),  # never across kinds
        ("/lake/team", "/lake/team/orders", True),
    ],
)
def test_locations_overlap_by_whole_segments(one: str, other: str, overlap: bool) -> None:
    assert location.overlaps(location.of(one), location.of(other)) is overlap


def test_spark_file_uris_name_the_files_of_a_root(tmp_path: Path) -> None:
    """Spark's ``_metadata.file_path`` (s3a://, file:, percent-encoded) and a root joined
    with a log path spell a file alike (UPDATE / DELETE find their files by it)."""
    root = S3Location("lake", "team/orders")
    assert location.identity("s3a://lake/team/orders/a%20b.parquet") == location.canonical(
        root / "a b.parquet"
    )
    local = tmp_path / "t"
    local.mkdir()
    assert location.identity(f"file:{local}/a%20b.parquet") == location.canonical(
        local / "a b.parquet"
    )


def test_a_task_names_an_object_by_its_key_as_it_is_r44() -> None:
    """A lifecycle task's source (``str(root / path)``) splits at the bucket, the rest the
    key, undecoded, ``#`` and ``?`` included; anything else is a local path."""
    assert location.file("s3://lake/t/p=a#b?c/x%20y.parquet") == S3Location(
        "lake", "t/p=a#b?c/x%20y.parquet"
    )
    assert location.file("/lake/t/x.parquet") == Path("/lake/t/x.parquet")


def test_statement_text_keeps_no_credentials_r45() -> None:
    text = (
        f"CREATE EXTERNAL TABLE T LOCATION = 's3://AKIAEXAMPLE:{SECRET}@lake/orders' "
        "TABLE_FORMAT = DELTA; SELECT 's3a://lake/a@b' AS KEY_WITH_AT"
    )
    redacted = objectstore.redact_text(text)
    assert SECRET not in redacted
    assert "'s3://***@lake/orders'" in redacted
    assert "'s3a://lake/a@b'" in redacted  # a real key with an @ is no user info


def test_local_files_read_list_and_move_as_before(tmp_path: Path) -> None:
    """The local side: read with the file's mtime, a missing file as FileNotFoundError,
    a missing directory too, Spark's part files in name order, a move, a tree removed."""
    (tmp_path / "log").mkdir()
    commit = tmp_path / "log" / "00000000000000000000.json"
    commit.write_text('{"commitInfo": {}}\n')
    data, mtime = location.read(commit)
    assert data == b'{"commitInfo": {}}\n'
    assert mtime == datetime.fromtimestamp(commit.stat().st_mtime, tz=UTC)
    with pytest.raises(FileNotFoundError):
        location.read(tmp_path / "log" / "missing.json")
    with pytest.raises(FileNotFoundError):
        location.names(tmp_path / "nowhere")
    assert location.names(tmp_path / "log") == ["00000000000000000000.json"]

    staging = tmp_path / "_rewind_staging" / "q1"
    staging.mkdir(parents=True)
    for name, count in (("part-00001.parquet", 0), ("part-00000.parquet", 3)):
        pq.write_table(pa.table({"ID": list(range(count))}), staging / name)
    (staging / "_SUCCESS").touch()
    (staging / "R=eu").mkdir()
    pq.write_table(pa.table({"ID": [7]}), staging / "R=eu" / "part-00002.parquet")
    parts = location.parts(staging)
    assert [(p.name, name, size) for p, name, size in parts] == [
        (p, p, (staging / p).stat().st_size) for p in ("part-00000.parquet", "part-00001.parquet")
    ]
    assert [location.parquet_metadata(p).num_rows for p, _, _ in parts] == [3, 0]
    nested = [name for _, name, _ in location.parts(staging, nested=True)]
    assert nested == ["R=eu/part-00002.parquet", "part-00000.parquet", "part-00001.parquet"]
    location.move(staging / "part-00000.parquet", tmp_path / "new.parquet")
    assert location.exists(tmp_path / "new.parquet")
    assert not location.exists(staging / "part-00000.parquet")
    location.remove_tree(staging)
    location.remove_if_empty(staging.parent)
    assert not (tmp_path / "_rewind_staging").exists()
    location.unlink(tmp_path / "new.parquet")
    location.unlink(tmp_path / "new.parquet")  # a missing file is no error


def test_the_warehouse_and_system_roots_come_from_the_environment_r44_r12_r38(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R44: ``REWIND_WAREHOUSE_URI`` / ``REWIND_SYSTEM_URI`` take an S3 prefix or a path
    (``file://`` too), default ``<home>/warehouse`` and ``<home>/system``, the system
    tables under a warehouse that is set (R44: under the warehouse root); R12, R38: a root
    that holds the fail-safe store or lies in it is refused, locally as on S3."""
    from rewind.config import Config

    home = tmp_path / "home"
    for name in ("REWIND_WAREHOUSE_URI", "REWIND_SYSTEM_URI", "REWIND_FAILSAFE_URI"):
        monkeypatch.delenv(name, raising=False)
    config = Config.load(home=home)
    assert (config.warehouse_root, config.system_root) == (home / "warehouse", home / "system")
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", "s3a://lake/rewind/warehouse/")
    monkeypatch.setenv("REWIND_SYSTEM_URI", f"file://{tmp_path / 'system'}")
    config = Config.load(home=home)
    assert config.warehouse_root == S3Location("lake", "rewind/warehouse")
    assert config.system_root == tmp_path / "system"
    monkeypatch.delenv("REWIND_SYSTEM_URI")
    assert Config.load(home=home).system_root == S3Location("lake", "rewind/warehouse/system")
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", str(home))  # holds <home>/failsafe
    with pytest.raises(InvalidLocation, match=r"REWIND_WAREHOUSE_URI .* overlaps the fail-safe"):
        Config.load(home=home)
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", f"s3://AKIAEXAMPLE:{SECRET}@lake/w")
    with pytest.raises(InvalidLocation) as caught:
        Config.load(home=home)
    assert "s3://***@lake/w" in str(caught.value) and SECRET not in str(caught.value)
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", "s3://lake/rewind")
    monkeypatch.setenv("REWIND_FAILSAFE_URI", "s3://lake/rewind/failsafe")
    with pytest.raises(InvalidLocation, match="overlaps the fail-safe store s3://lake/rewind"):
        Config.load(home=home)
    assert not home.exists()  # the configuration writes nothing


def test_a_partitioned_spark_writes_folders_are_deltas_partition_values_r43() -> None:
    """Spark's ``col=value/`` folders (``%XX`` escapes, Hive's NULL, the session's UTC
    wall clock for a timestamp) become the values Delta's log holds: a timestamp as its
    instant in UTC, as delta-spark writes it."""
    from rewind.sql.frames import _partition_values

    kinds = {"R": pa.string(), "TS": pa.timestamp("us", "UTC"), "D": pa.date32()}
    name = "R=a%2Fb%3Ac/TS=2026-11-03 12%3A00%3A00.5/D=__HIVE_DEFAULT_PARTITION__/part-0.parquet"
    assert _partition_values(name, kinds) == (
        ("R", "a/b:c"),
        ("TS", "2026-11-03T12:00:00.500000Z"),
        ("D", None),
    )


def test_a_clone_shares_a_files_deletion_vector_where_it_is_r24_r47(tmp_path: Path) -> None:
    """A local source's vector file is linked into the clone under its path (its descriptor
    kept); an S3 source's is referenced where it is, the descriptor made absolute (``p``,
    URI-encoded), which the lifecycle tracks as the object it names, never a local file
    another engine's absolute descriptor names (rewind.storage.log.dv_file)."""
    vector = {"storageType": "u", "pathOrInlineDv": "ab" + "0" * 20, "offset": 1}
    vector |= {"sizeInBytes": 34, "cardinality": 1}
    name = log.dv_file(vector)
    assert name is not None and name.startswith("ab/deletion_vector_")
    file = DataFile("part-0.parquet", 10, 3, vector=json.dumps(vector))
    other = DataFile("part-1.parquet", 10, 3, vector=json.dumps({**vector, "offset": 35}))
    store = TableStore(tmp_path / "warehouse")
    source = tmp_path / "lake" / "orders"
    (source / "ab").mkdir(parents=True)
    for path in ("part-0.parquet", "part-1.parquet", name):
        (source / path).write_bytes(b"x" * 10)
    # two files whose vectors are in one vector file: linked once
    assert store.share_files(7, [file, other], source) == [file, other]
    assert (store.root(7) / name).stat().st_ino == (source / name).stat().st_ino

    bucket = S3Location("lake", "team/my orders")
    (referenced,) = store.share_files(8, [file], bucket)
    assert referenced.path == "s3://lake/team/my orders/part-0.parquet"
    absolute = referenced.deletion_vector
    assert absolute is not None
    assert absolute["pathOrInlineDv"] == f"s3://lake/team/my%20orders/{name}"
    assert absolute | {"storageType": "u", "pathOrInlineDv": vector["pathOrInlineDv"]} == vector
    assert referenced.dv_path == f"s3://lake/team/my orders/{name}"
    # its file copied under the recovered table's root (rewind.recovery): stored there
    stored = log.stored_vector(absolute, name.rpartition("/")[2])
    assert stored == {**vector, "pathOrInlineDv": "0" * 20}
    assert log.dv_file(stored) == name.rpartition("/")[2]
    other = "deletion_vector_1b4e28ba-2fa1-11d2-883f-0016d3cca427.bin"
    assert log.dv_file(log.stored_vector(absolute, other)) == other
    assert log.dv_file({**absolute, "pathOrInlineDv": f"file:/elsewhere/{name}"}) is None
    assert (
        log.dv_file(
            {
                "storageType": "i",
                "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
            }
        )
        is None
    )


@pytest.mark.parametrize(
    ("mapping", "column", "protocol"),
    [
        ({}, "string", (3, 7, ["deletionVectors"])),
        ({}, "timestamp_ntz", (3, 7, ["deletionVectors", "timestampNtz"])),
        (MAPPED, "timestamp_ntz", (3, 7, ["columnMapping", "deletionVectors", "timestampNtz"])),
    ],
)
def test_a_clones_version_0_lists_the_features_its_files_and_columns_need_r24_r40(
    tmp_path: Path, mapping: dict[str, str], column: str, protocol: tuple[Any, ...]
) -> None:
    """The version 0 Rewind writes for a clone with deletion vectors (delta-rs creates
    none) names every feature a reader needs: the vectors, column mapping, and a
    TIMESTAMP_NTZ column, which no legacy protocol reads; delta-rs loads it."""
    vector = {"storageType": "u", "pathOrInlineDv": "0" * 20, "offset": 1}
    vector |= {"sizeInBytes": 34, "cardinality": 1}
    file = DataFile("part-0.parquet", 10, 3, vector=json.dumps(vector))
    store = TableStore(tmp_path / "warehouse")
    fields = [
        {"name": name, "type": kind, "nullable": True, "metadata": {}}
        for name, kind in (("ID", "long"), ("AT", column))
    ]
    for number, field in enumerate(fields, 1):
        if mapping:
            field["metadata"] = {
                "delta.columnMapping.id": number,
                "delta.columnMapping.physicalName": f"col-{number}",
            }
    schema = DeltaSchema.from_json(json.dumps({"type": "struct", "fields": fields}))
    assert store.create(7, schema, "q", datetime(2026, 1, 1, tzinfo=UTC), [file], (), mapping) == 0
    commit = log.read_commit(store.root(7), 0)
    assert commit is not None
    (written,) = [a["protocol"] for a in commit.actions if "protocol" in a]
    reader, writer, features = protocol
    assert written == {
        "minReaderVersion": reader,
        "minWriterVersion": writer,
        "readerFeatures": features,
        "writerFeatures": features,
    }
    assert [a["deletionVector"] for a in commit.adds()] == [vector]
    loaded = DeltaTable(str(store.root(7))).protocol()
    assert sorted(loaded.reader_features or []) == sorted(features)
