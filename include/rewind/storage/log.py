"""Reading a Delta log as the truth about a table's versions (SPEC R40, R43).

Pure reading, no writes: the commits after a version (JSON files, probed by number, no
listing), their commit times, the deletion-vector files their actions name, and the
snapshot of any version replayed from the newest checkpoint at or before it plus the
JSON commits after it. Any writer's table reads the same way, whatever engine wrote it,
in a local directory or under an S3 prefix (:mod:`rewind.storage.location`, SPEC R44):
a commit is one GET, a listing names ``_delta_log`` only (SPEC R50).
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from rewind.clock import parse_timestamp
from rewind.constants import COMMIT_QUERY_ID_KEY, COMMIT_TIME_KEY
from rewind.errors import StorageError, UnsupportedError, UnsupportedTableFeature
from rewind.storage import location, objectstore
from rewind.storage.location import Root
from rewind.types import DECLARED_TYPE, delta_spark, spark_arrow

if TYPE_CHECKING:
    import pyarrow as pa

LOG = "_delta_log"
# Reader features Rewind reads correctly: through delta-spark for data, through this
# module for the file list (deletion-vector cardinalities, column mapping's names).
READABLE_READER_FEATURES = {
    "deletionVectors",
    "columnMapping",
    "timestampNtz",
    "v2Checkpoint",
    "typeWidening",
    "variantType",  # read by Spark's own reader, unshredded (shredding is another feature)
}
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?\.parquet$")
# A log entry of one version (a commit, its checksum, a classic checkpoint or a part of
# one) or of a range (a compacted commit ``<first>.<last>.compacted.json``: group 2).
_ENTRY = re.compile(
    r"^(\d{20})\.(?:json|crc|checkpoint(?:\.\d{10}\.\d{10})?\.parquet|(\d{20})\.compacted\.json)$"
)


class HistoryGone(StorageError):
    """A version whose log entries another engine cleaned up: nobody can read it."""


def commit_file(root: Root, version: int) -> Root:
    return root / LOG / f"{version:020d}.json"


@dataclass(frozen=True)
class Commit:
    """One commit of a table: its version, actions, ``commitInfo`` and file time."""

    version: int
    actions: tuple[dict[str, Any], ...]
    info: dict[str, Any]
    mtime: datetime

    @property
    def rewind_query_id(self) -> str | None:
        value = self.info.get(COMMIT_QUERY_ID_KEY)
        return str(value) if value else None

    @property
    def operation(self) -> str:
        return str(self.info.get("operation") or "WRITE")[:32]

    def raw_time(self) -> datetime:
        """The time the writer recorded: Rewind's clock for Rewind's commits, else the
        in-commit timestamp, else the commit file's modification time (Delta's rule)."""
        if self.info.get(COMMIT_TIME_KEY):
            return parse_timestamp(str(self.info[COMMIT_TIME_KEY]))
        ict = self.info.get("inCommitTimestamp")
        if isinstance(ict, int):
            return datetime.fromtimestamp(ict / 1000, tz=UTC)
        return self.mtime

    def derived_query_id(self, table_key: str) -> str:
        """A statement id for another writer's commit (SPEC R40): its own transaction id
        when it is a UUID, else one derived from the table, version and timestamp."""
        txn = str(self.info.get("txnId") or "")
        try:
            return str(uuid.UUID(txn))
        except ValueError:
            seed = f"{table_key}#{self.version}#{self.info.get('timestamp')}"
            return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))

    def adds(self) -> list[dict[str, Any]]:
        return [a["add"] for a in self.actions if "add" in a]

    def removes(self) -> list[dict[str, Any]]:
        return [a["remove"] for a in self.actions if "remove" in a]

    def changes(self) -> list[dict[str, Any]]:
        """The change data feed's files the commit wrote (``cdc`` actions)."""
        return [a["cdc"] for a in self.actions if "cdc" in a]

    def metadata(self) -> dict[str, Any] | None:
        return next((a["metaData"] for a in self.actions if "metaData" in a), None)


def read_commit(root: Root, version: int) -> Commit | None:
    """The commit ``version``, or None when its JSON file is not there."""
    path = commit_file(root, version)
    try:
        data, mtime = location.read(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"Cannot read the Delta log {path}: {exc.strerror}.") from None
    text = data.decode()
    try:
        actions = tuple(json.loads(line) for line in text.splitlines() if line.strip())
    except json.JSONDecodeError:
        raise StorageError(f"The Delta log entry {path} is corrupt.") from None
    info: dict[str, Any] = next((a["commitInfo"] for a in actions if "commitInfo" in a), {})
    return Commit(version, actions, dict(info), mtime)


def commits_after(root: Root, version: int) -> Iterator[Commit]:
    """The commits after ``version`` in order, until the first missing number."""
    while (commit := read_commit(root, version + 1)) is not None:
        yield commit
        version += 1


LAST_CHECKPOINT = "_last_checkpoint"


def checkpoint_files(root: Root, version: int, parts: int | None = None) -> list[Root]:
    """The file names of the classic checkpoint of ``version`` (``parts`` > 1: multi-part)."""
    if not parts or parts <= 1:
        return [root / LOG / f"{version:020d}.checkpoint.parquet"]
    return [
        root / LOG / f"{version:020d}.checkpoint.{part:010d}.{parts:010d}.parquet"
        for part in range(1, parts + 1)
    ]


def last_checkpoint(root: Root) -> tuple[int, list[Root]] | None:
    """The classic checkpoint ``_last_checkpoint`` names (one GET, no listing: SPEC R50),
    or None when there is none, it names a V2 checkpoint, or it is unreadable (the file
    is a hint, as Delta's protocol says; :func:`latest_checkpoint` then lists)."""
    try:
        data, _ = location.read(root / LOG / LAST_CHECKPOINT)
        hint = json.loads(data)
        if not isinstance(hint, dict) or "v2Checkpoint" in hint:
            return None
        version = int(hint["version"])
        parts = int(hint.get("parts") or 1)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return version, checkpoint_files(root, version, parts)


def latest_checkpoint(root: Root, at_most: int | None = None) -> tuple[int, list[Root]] | None:
    """The newest classic checkpoint (single or multi-part) at or before ``at_most``.

    ``_last_checkpoint`` first: when it names a checkpoint at or before ``at_most`` whose
    files are all there, that one (the newest of a log whose writers keep the hint, as
    Delta's writers and Rewind do); else the log is listed (an older version, a missing or
    stale hint)."""
    hint = last_checkpoint(root)
    if (
        hint is not None
        and (at_most is None or hint[0] <= at_most)
        and all(location.exists(file) for file in hint[1])
    ):
        return hint
    return listed_checkpoint(root, at_most)


def listed_checkpoint(root: Root, at_most: int | None = None) -> tuple[int, list[Root]] | None:
    """The newest complete classic checkpoint at or before ``at_most``, from a listing of
    the log (whatever ``_last_checkpoint`` says)."""
    try:
        names = location.names(root / LOG)
    except FileNotFoundError:
        return None
    return _newest_checkpoint(root, names, at_most)


def expired_entries(root: Root, keep: int) -> tuple[int, list[Root]] | None:
    """What Delta's log clean-up deletes so that version ``keep`` and every later one stay
    readable: the entries of the versions before the newest complete classic checkpoint at
    or before ``keep`` (their commits, checksums, checkpoints and compacted commits), in
    version order, with that checkpoint's version; None without such a checkpoint. One
    listing of the log. ``_last_checkpoint``, sidecars, V2 checkpoints and any name Delta
    does not give a log entry are never among them."""
    try:
        names = location.names(root / LOG)
    except FileNotFoundError:
        return None
    checkpoint = _newest_checkpoint(root, names, keep)
    if checkpoint is None:
        return None
    first = checkpoint[0]
    expired = []
    for name in sorted(names):
        match = _ENTRY.match(name)
        if match and int(match[2] or match[1]) < first:
            expired.append(root / LOG / name)
    return first, expired


def _newest_checkpoint(
    root: Root, names: list[str], at_most: int | None
) -> tuple[int, list[Root]] | None:
    found: dict[int, list[Root]] = {}
    parts_expected: dict[int, int] = {}
    for name in names:
        match = _CHECKPOINT.match(name)
        if match is None:
            continue
        version = int(match[1])
        if at_most is not None and version > at_most:
            continue
        found.setdefault(version, []).append(root / LOG / name)
        parts_expected[version] = int(match[3] or 1)
    complete = [v for v, files in found.items() if len(files) == parts_expected[v]]
    if not complete:
        return None
    best = max(complete)
    return best, sorted(found[best], key=str)


def earliest_commit(root: Root) -> int | None:
    """The oldest version whose JSON commit is still there (others may be cleaned up)."""
    try:
        names = location.names(root / LOG)
    except FileNotFoundError:
        return None
    versions = [
        int(n[:20]) for n in names if len(n) == 25 and n.endswith(".json") and n[:20].isdigit()
    ]
    return min(versions) if versions else None


# What a checkpoint holds of a version's state. Its ``remove`` rows are tombstones of
# files no longer in the state (kept for VACUUM, for as long as the table's
# deletedFileRetentionDuration: for Rewind's tables, for ever, SPEC R42); they change
# nothing in a replay, so they are not read.
_CHECKPOINT_STATE = ("add", "metaData", "protocol", "domainMetadata")


def _checkpoint_actions(files: list[Root]) -> Iterator[dict[str, Any]]:
    """The state actions of a checkpoint as dicts, like a JSON commit's lines: Parquet
    maps (``partitionValues``, ``tags``, ``configuration``, ``format.options``), which
    Arrow gives as lists of pairs, become dicts as in JSON."""
    import pyarrow.compute as pc  # a log without checkpoints is read without Arrow
    import pyarrow.parquet as pq

    for file in files:
        parquet = pq.ParquetFile(location.parquet(file))
        kinds = [k for k in _CHECKPOINT_STATE if k in parquet.schema_arrow.names]
        table = parquet.read(columns=kinds)
        for kind in kinds:
            column = table.column(kind)
            for value in column.filter(pc.is_valid(column)).to_pylist():
                yield {kind: _as_json(value, column.type)}


@functools.cache
def _map_fields(kind: pa.DataType) -> tuple[tuple[str, pa.DataType], ...]:
    """The fields of a struct type that hold a map somewhere (those to convert)."""
    return tuple(
        (kind.field(i).name, kind.field(i).type)
        for i in range(kind.num_fields)
        if _has_map(kind.field(i).type)
    )


@functools.cache
def _has_map(kind: pa.DataType) -> bool:
    import pyarrow as pa

    if pa.types.is_map(kind):
        return True
    if pa.types.is_struct(kind):
        return any(_has_map(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_map(kind.value_type)
    return False


def _as_json(value: Any, kind: pa.DataType) -> Any:
    """An Arrow value of type ``kind`` (from ``to_pylist``) as JSON would give it."""
    import pyarrow as pa

    if value is None or not _has_map(kind):
        return value
    if pa.types.is_map(kind):
        return {k: _as_json(v, kind.item_type) for k, v in value}
    if pa.types.is_struct(kind):
        for name, field_type in _map_fields(kind):
            value[name] = _as_json(value.get(name), field_type)
        return value
    return [_as_json(v, kind.value_type) for v in value]


def dv_file(dv: dict[str, Any] | None) -> str | None:
    """The file a deletion vector is stored in, if any, as a data file's path is given
    (:func:`~rewind.storage.location.data_file`): relative to the table root, or an
    object's absolute URI.

    ``u``: a UUID in Z85 (20 characters) after an optional directory prefix, under the
    table root; ``p``: an absolute path (URI-encoded), which Rewind tracks when it names an
    object store's object (how a clone references its source's vector where it is, SPEC
    R47), not a local file elsewhere (another engine's, not Rewind's to manage);
    ``i``: inline, no file.
    """
    if dv and dv.get("storageType") == "p":
        uri = unquote(str(dv["pathOrInlineDv"]))
        return uri if objectstore.is_object_store(uri) else None
    if not dv or dv.get("storageType") != "u":
        return None
    text = str(dv["pathOrInlineDv"])
    prefix, encoded = text[:-20], text[-20:]
    name = f"deletion_vector_{_z85_uuid(encoded)}.bin"
    return f"{prefix}/{name}" if prefix else name


_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _z85_uuid(text: str) -> uuid.UUID:
    data = bytearray()
    for i in range(0, len(text), 5):
        value = 0
        for char in text[i : i + 5]:
            value = value * 85 + _Z85.index(char)
        data += value.to_bytes(4, "big")
    return uuid.UUID(bytes=bytes(data))


def stored_vector(dv: dict[str, Any], name: str) -> dict[str, Any]:
    """``dv``, a vector stored elsewhere (an absolute path, ``p``), as one stored under the
    table root in the file ``name``, which :func:`dv_file` names
    ``deletion_vector_<uuid>.bin``: storage type ``u``, the UUID in Z85."""
    found = re.fullmatch(r"deletion_vector_([0-9a-fA-F-]{36})\.bin", name)
    if found is None:
        raise StorageError(f"{name} is not the name of a deletion vector's file.")
    data = uuid.UUID(found[1]).bytes
    text = ""
    for i in range(0, 16, 4):
        value = int.from_bytes(data[i : i + 4], "big")
        text += "".join(_Z85[value // 85**k % 85] for k in range(4, -1, -1))
    return {**dv, "storageType": "u", "pathOrInlineDv": text}


def file_key(add_or_remove: dict[str, Any]) -> tuple[str, str | None]:
    """Delta's identity of a file action: its path and its deletion vector's id."""
    dv = add_or_remove.get("deletionVector")
    dv_id = f"{dv['storageType']}{dv['pathOrInlineDv']}@{dv.get('offset')}" if dv else None
    return relative_path(add_or_remove["path"]), dv_id


def relative_path(path: str) -> str:
    """A file action's path as a path under the table root (Delta stores URI-encoded)."""
    return unquote(path)


@dataclass(frozen=True)
class DataFile:
    """A data file of one table version (path relative to the table root, or the absolute
    URI of a source's file a clone references, :func:`~rewind.storage.location.data_file`);
    in a partitioned table, its partition values (its rows' values of the partition
    columns, which are in the log only, never in the file); another writer's file may
    carry a deletion vector: ``vector``, its descriptor as the log has it (JSON), which a
    commit that removes or re-adds the file gives back verbatim (Delta's file identity is
    the path and the vector, :func:`file_key`), as it gives its ``stats`` back (a
    clustered table's readers skip files by them) and, in a table with row tracking, the
    first row id and the row commit version its add gave it."""

    path: str
    size: int
    num_records: int
    partition_values: tuple[tuple[str, str | None], ...] = ()
    vector: str | None = None
    stats: str | None = None  # the log's statistics of it, as given (JSON), if any
    base_row_id: int | None = None  # row tracking: its rows' ids are this + their index
    row_commit_version: int | None = None  # row tracking: the version that added its rows

    @property
    def deletion_vector(self) -> dict[str, Any] | None:
        return json.loads(self.vector) if self.vector else None

    @property
    def deleted_rows(self) -> int:
        """How many of the file's rows its deletion vector deletes."""
        dv = self.deletion_vector
        return int(dv.get("cardinality") or 0) if dv else 0

    @property
    def dv_path(self) -> str | None:
        """Its deletion vector's file (:func:`dv_file`), if one stores it."""
        return dv_file(self.deletion_vector)


@dataclass
class Replay:
    """A version replayed: its protocol, metadata and live files (by path, with the id of
    the deletion vector each carries: Delta's file identity)."""

    version: int
    protocol: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    live: dict[str, tuple[str | None, DataFile]] = field(default_factory=dict)
    domains: dict[str, str] = field(default_factory=dict)  # domain -> its configuration

    @property
    def files(self) -> list[DataFile]:
        return [file for _, file in self.live.values()]

    def apply(self, action: dict[str, Any]) -> None:
        if "add" in action:
            path, dv_id = file_key(action["add"])
            self.live[path] = (dv_id, data_file(action["add"]))
        elif "remove" in action:
            path, dv_id = file_key(action["remove"])
            # The remove of (path, old vector) may come after the add of (path, new one).
            if path in self.live and self.live[path][0] == dv_id:
                del self.live[path]
        elif "metaData" in action:
            self.metadata = action["metaData"]
        elif "protocol" in action:
            self.protocol = action["protocol"]
        elif "domainMetadata" in action:
            domain = action["domainMetadata"]
            if domain.get("removed"):
                self.domains.pop(domain["domain"], None)
            else:
                self.domains[domain["domain"]] = str(domain.get("configuration") or "")


def data_file(action: dict[str, Any]) -> DataFile:
    """The file an add (or a remove that kept its details) action names, with its row
    count from the action's statistics (0 where it has none)."""
    stats = action.get("stats")
    records = 0
    if stats:
        try:
            records = int(json.loads(stats).get("numRecords") or 0)
        except (ValueError, AttributeError):
            records = 0
    dv = action.get("deletionVector")
    return DataFile(
        relative_path(action["path"]),
        int(action.get("size") or 0),
        records,
        partition_values(action),
        json.dumps(dv, sort_keys=True) if dv else None,
        stats or None,
        _int(action.get("baseRowId")),
        _int(action.get("defaultRowCommitVersion")),
    )


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def partition_values(action: dict[str, Any]) -> tuple[tuple[str, str | None], ...]:
    """A file action's partition values, in column order of the log (empty: none)."""
    return tuple((add or {}).items()) if (add := action.get("partitionValues")) else ()


def replay(root: Root, version: int) -> Replay:
    """The state of ``version``: from the newest checkpoint at or before it, then the
    JSON commits after that checkpoint (SPEC R43: cleaned-up early JSON is fine).

    The checkpoint is found from ``_last_checkpoint`` where it names one at or before
    ``version`` (reading the newest version of a table costs one GET of the hint, the
    checkpoint and the commits after it, however long its history: issue 28); a hint
    that leads to a missing entry is not trusted and the log is listed instead.

    Raises:
        StorageError: the log cannot reach ``version`` (missing or corrupt entries).
    """
    hint = last_checkpoint(root)
    if hint is None or hint[0] > version:
        return _replay(root, version, listed_checkpoint(root, version))
    try:
        return _replay(root, version, hint)  # its files not probed first: read (R50)
    except (FileNotFoundError, HistoryGone):
        listed = listed_checkpoint(root, version)
        if listed == hint:
            raise
        return _replay(root, version, listed)


def _replay(root: Root, version: int, checkpoint: tuple[int, list[Root]] | None) -> Replay:
    state = Replay(version)
    start = 0
    if checkpoint is not None:
        for action in _checkpoint_actions(checkpoint[1]):
            state.apply(action)
        start = checkpoint[0] + 1
    for number in range(start, version + 1):
        commit = read_commit(root, number)
        if commit is None:
            raise HistoryGone(
                f"The Delta log of {root} has no entry for version {number} "
                "(cleaned up without a checkpoint)."
            )
        for action in commit.actions:
            state.apply(action)
    if not state.metadata:
        raise StorageError(f"The Delta log of {root} has no table metadata at version {version}.")
    return state


def check_readable(protocol: dict[str, Any], table: str) -> None:
    """Refuse a table using a reader feature Rewind cannot read correctly (SPEC R41, R43)."""
    features = set(protocol.get("readerFeatures") or [])
    unknown = sorted(features - READABLE_READER_FEATURES)
    if unknown or int(protocol.get("minReaderVersion") or 1) > 3:
        raise UnsupportedTableFeature(
            f"Table {table} uses Delta reader features Rewind cannot read correctly: "
            f"{', '.join(unknown) or 'reader version ' + str(protocol.get('minReaderVersion'))}."
        )


def delta_fields(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    return list(json.loads(metadata["schemaString"]).get("fields", []))


def field_ids(metadata: dict[str, Any]) -> dict[str, str]:
    """Column name -> identity: column mapping's physical name (kept across a rename, and
    equal to the name the column had before mapping was turned on), else the name."""
    return {
        f["name"]: str((f.get("metadata") or {}).get(_PHYSICAL_NAME, f["name"]))
        for f in delta_fields(metadata)
    }


_PHYSICAL_NAME = "delta.columnMapping.physicalName"
_COLUMN_ID = "delta.columnMapping.id"
COLUMN_MAPPING_MODE = "delta.columnMapping.mode"
MAX_COLUMN_ID = "delta.columnMapping.maxColumnId"
PARQUET_FIELD_ID = "parquet.field.id"  # Spark's key for a Parquet field id


def column_mapped(configuration: dict[str, str]) -> bool:
    """Whether a table's properties put it under column mapping (``name`` or ``id``)."""
    return configuration.get(COLUMN_MAPPING_MODE, "none").lower() != "none"


def _each_field(value: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A Delta type (its JSON) with ``change`` made to each struct field in it, nested
    ones too (in arrays, maps, structs; a field's own type changed first)."""
    if not isinstance(value, dict):
        return value
    if value.get("type") == "struct":
        fields = [change({**f, "type": _each_field(f["type"], change)}) for f in value["fields"]]
        return {**value, "fields": fields}
    if value.get("type") == "array":
        return {**value, "elementType": _each_field(value["elementType"], change)}
    if value.get("type") == "map":
        key, item = (_each_field(value[k], change) for k in ("keyType", "valueType"))
        return {**value, "keyType": key, "valueType": item}
    return value


def mapping_schema(metadata: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """A column-mapped table's schema (JSON) and column mapping properties for a new
    table that reads its files (a clone, SPEC R24): each field, nested ones too, keeps
    its column id, physical name, comment and declared length (a VARCHAR(n)'s), and no
    other Delta rule (a generated or identity column's, an invariant: the clone is a plain
    table)."""
    kept = {_PHYSICAL_NAME, _COLUMN_ID, "comment", DECLARED_TYPE}

    def mapped(f: dict[str, Any]) -> dict[str, Any]:
        return {**f, "metadata": {k: v for k, v in (f.get("metadata") or {}).items() if k in kept}}

    schema = _each_field(json.loads(metadata["schemaString"]), mapped)
    configuration = metadata.get("configuration") or {}
    keys = (COLUMN_MAPPING_MODE, MAX_COLUMN_ID)
    properties = {k: configuration[k] for k in keys if k in configuration}
    return json.dumps(schema, separators=(",", ":")), properties


def physical_schema(metadata: dict[str, Any]) -> dict[str, Any]:
    """The schema a column-mapped table's data files are written with (Delta's writer
    requirements for column mapping): each field, nested ones too, under its physical
    name, with its column id as its Parquet field id; Spark's JSON form of a struct."""

    def physical(f: dict[str, Any]) -> dict[str, Any]:
        meta = f.get("metadata") or {}
        return {
            "name": meta.get(_PHYSICAL_NAME, f["name"]),
            "type": f["type"],
            "nullable": f.get("nullable", True),
            "metadata": {PARQUET_FIELD_ID: meta[_COLUMN_ID]} if _COLUMN_ID in meta else {},
        }

    return dict(_each_field(json.loads(metadata["schemaString"]), physical))


def last_column_id(metadata: dict[str, Any]) -> int:
    """The highest column id a column-mapped table has given: its ``maxColumnId``, or a
    field's id past it (nested fields too), so that no id is given twice."""
    found = [int((metadata.get("configuration") or {}).get(MAX_COLUMN_ID) or 0)]

    def seen(f: dict[str, Any]) -> dict[str, Any]:
        found.append(int((f.get("metadata") or {}).get(_COLUMN_ID) or 0))
        return f

    _each_field(json.loads(metadata["schemaString"]), seen)
    return max(found)


def mapped_fields(fields: list[dict[str, Any]], last_id: int) -> tuple[list[dict[str, Any]], int]:
    """New fields (Delta's JSON) for a column-mapped table: each, nested ones too, given
    a new column id past ``last_id`` and a globally unique physical name, as column
    mapping's writer requirements ask of a column added. Returns them and the last id."""
    ids = iter(range(last_id + 1, 2**31))

    def assign(f: dict[str, Any]) -> dict[str, Any]:
        meta = {**(f.get("metadata") or {}), _COLUMN_ID: next(ids)}
        return {**f, "metadata": {**meta, _PHYSICAL_NAME: f"col-{uuid.uuid4()}"}}

    mapped = _each_field({"type": "struct", "fields": fields}, assign)["fields"]
    return mapped, next(ids) - 1


def column_types(metadata: dict[str, Any], table: str) -> list[tuple[str, str, bool]]:
    """(name, Spark DDL type, nullable) of each column of a Delta ``metaData`` (logical
    names; :func:`rewind.types.delta_spark`: nested types too).

    Raises:
        UnsupportedTableFeature: a type Rewind cannot read.
    """
    found = []
    for column in delta_fields(metadata):
        try:
            kind = delta_spark(column["type"])
        except UnsupportedError as exc:
            raise UnsupportedTableFeature(
                f"Column '{column['name']}' of table {table}: {exc.message}"
            ) from None
        found.append((str(column["name"]), kind, bool(column.get("nullable", True))))
    return found


def arrow_schema(metadata: dict[str, Any], table: str) -> pa.Schema:
    """The Arrow schema of a Delta ``metaData`` (logical names, Delta's nullability: a
    writer must not put NULL in a column that is not nullable); raises as
    :func:`column_types`."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(name, spark_arrow(kind), nullable)
            for name, kind, nullable in column_types(metadata, table)
        ]
    )
