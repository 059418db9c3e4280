"""One Delta table per table incarnation under ``warehouse/<table id>/`` (SPEC R4, R14).

Rewind decides its own commits: Spark writes data files, and this module commits
explicit add/remove actions through delta-rs, stamped with the Rewind clock, the query
id and a commit id, so that the removal time of each file is the clock's (SPEC R13,
R15, R30). The Delta log is the truth (SPEC R40): other writers commit to the same
tables, Rewind's commits go through delta-rs's optimistic concurrency (conflicts are
retried by delta-rs, then refused as CONCURRENT_WRITE), and undoing a failed statement
touches only the commit that statement made. Snapshots are replayed from the log
(:mod:`rewind.storage.log`), so deletion vectors count right whoever wrote them. The
commits delta-rs cannot make, or not right (one that names a file's deletion vector,
moves an identity column's mark or restores a replaced version's schema, any commit to a
table whose features delta-rs refuses, an added column of such a table, a property commit
that must keep the protocol), Rewind writes itself, put-if-absent (:meth:`TableStore._put`).

The warehouse (``REWIND_WAREHOUSE_URI``) and an external table may live on S3 (SPEC R41,
R44): a log is read through :mod:`rewind.storage.location` and delta-rs commits with the
object store's ``storage_options``, so conditionally (SPEC R46). :meth:`TableStore.root`
is a table's root of either kind, and every file operation here goes through
:mod:`rewind.storage.location`, which has one implementation per kind of root.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from deltalake import CommitProperties, DeltaTable, PostCommitHookProperties
from deltalake.exceptions import CommitFailedError, DeltaProtocolError
from deltalake.schema import Field
from deltalake.schema import Schema as DeltaSchema
from deltalake.transaction import AddAction, RemoveAction, create_table_with_add_actions

from rewind.clock import format_timestamp
from rewind.constants import (
    COMMIT_ID_KEY,
    COMMIT_QUERY_ID_KEY,
    COMMIT_READDS_KEY,
    COMMIT_TIME_KEY,
    COMMIT_UNDO_KEY,
    DELTA_TABLE_CONFIG,
)
from rewind.errors import ConcurrentWrite, StorageError, UnsupportedTableFeature
from rewind.storage import location, log, running
from rewind.storage.location import Root
from rewind.storage.snapshot import (
    CURRENT_DEFAULT,
    ROW_DOMAIN,
    ROW_ID_PROPERTY,
    ROW_IDS_PRESERVED,
    ROW_TRACKING,
    ROW_VERSION_PROPERTY,
    DataFile,
    Snapshot,
    legacy_features,
)

if TYPE_CHECKING:
    import pyarrow as pa

# delta-rs's own hooks stay off: its checkpoint hook counts ``(version + 1) % interval``
# with an interval of 100 when ``delta.checkpointInterval`` is unset (delta-rs 1.6.6,
# measured), where delta-spark checkpoints at ``version % interval`` with 10; Rewind
# checkpoints as delta-spark does (:meth:`TableStore._checkpointed`). Expired-log clean-up
# would cut into time travel and is never Rewind's to do to another team's log (R42).
_HOOKS = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
_COMMIT_ATTEMPTS = 10  # as delta-rs's max_commit_retries (:func:`_props`)
_IN_COMMIT_TIMESTAMPS = "delta.enableInCommitTimestamps"
# Tables whose checkpoints Rewind leaves to their own writers: a V2-checkpoint table, whose
# checkpoints need a checkpointMetadata action delta-rs 1.6.6 does not write, one with
# in-commit timestamps, which delta-rs 1.6.6 cannot load, and one with type widening, whose
# checkpoint by delta-rs no test checked. Its classic
# checkpoint of the other features Rewind writes keeps what they need (compared with the
# JSON log it replaces on a delta-spark table with deletion vectors, row tracking,
# clustering, identity and generated columns, constraints and TIMESTAMP_NTZ: the same
# schema, properties, protocol and domains; delta-spark's next INSERT continued the
# identity and the row ids), and delta-spark reads and writes on from it:
# tests/spark/test_other_writers.py (vectors), test_external_tables.py (row tracking).
_OWN_CHECKPOINTS = {"v2Checkpoint", "inCommitTimestamp", "typeWidening"}
# Row tracking: the domain that holds a table's row id high-water mark, and the commit tag
# that says whether a rewrite kept its copied rows' ids (Delta's writer requirements).
_ROW_TRACKING_FEATURE = "rowTracking"
_ROW_ID_MARK = "rowIdHighWaterMark"
CHECKPOINT_INTERVAL = "delta.checkpointInterval"
DEFAULT_CHECKPOINT_INTERVAL = 10  # delta-spark's default
_URI_SAFE = "/:=@!$&'()*+,;-._~"  # what a path in Delta's log keeps unencoded
_log = logging.getLogger("rewind.storage")
STAGING = "_rewind_staging"


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def _not_null(schema_json: str) -> bool:
    """Whether a field of the schema ``schema_json`` is NOT NULL: delta-spark reads that
    as an invariant, which a protocol with a feature list must list (``invariants``)."""
    return '"nullable":false' in schema_json.replace(" ", "")


_READER_WRITER_FEATURES = {
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "typeWidening",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "variantType",
}


def _protocol_for(protocol: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The protocol a version with ``metadata`` needs after ``protocol``; None where that
    one serves. A TIMESTAMP_NTZ column needs ``timestampNtz`` (reader 3 / writer 7: a
    legacy protocol's features listed as its version implies them), a NOT NULL column
    ``invariants`` once features are listed: delta-spark refused to read a table whose
    ALTER TABLE added the first or set the second without them ("features enabled in
    metadata but not listed in protocol"); a column default ``allowColumnDefaults``, a
    writer feature (the reader version kept); a variant column ``variantType``."""
    text = metadata.get("schemaString") or ""
    writer = int(str(protocol.get("minWriterVersion") or 1))
    listed = {*(protocol.get("readerFeatures") or []), *(protocol.get("writerFeatures") or [])}
    needed = {"timestampNtz"} if '"timestamp_ntz"' in text else set()
    needed |= {"allowColumnDefaults"} if _DEFAULT in text else set()
    needed |= {"variantType"} if _has_variant(text) else set()
    if writer >= 7 and _not_null(text):
        needed.add("invariants")
    if writer < 7 and needed:
        listed = legacy_features(writer, metadata)
    if needed <= listed and (writer >= 7 or not needed):
        return None
    features = sorted(listed | needed)
    readers = [f for f in features if f in _READER_WRITER_FEATURES]
    return {
        "minReaderVersion": 3 if readers else int(str(protocol.get("minReaderVersion") or 1)),
        "minWriterVersion": 7,
        **({"readerFeatures": readers} if readers else {}),
        "writerFeatures": features,
    }


def _schema_actions(protocol: dict[str, Any], metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """A schema change's actions: its ``metaData``, and the ``protocol`` it needs
    (:func:`_protocol_for`) where the table's does not serve."""
    needed = _protocol_for(protocol, metadata)
    return [{"metaData": metadata}] + ([{"protocol": needed}] if needed else [])


_IDENTITY_START = '"delta.identity.start"'
_DEFAULT = f'"{CURRENT_DEFAULT}"'  # a column default (the writer feature allowColumnDefaults)
_EXPLICIT = '"delta.identity.allowExplicitInsert"'


def _needs_feature_list(schema: DeltaSchema) -> bool:
    """Whether version 0 of ``schema`` needs a protocol with a feature list that delta-rs
    would write without ``invariants``: a TIMESTAMP_NTZ column (writer 7) and a NOT NULL
    one. delta-spark then refused to read the table at all ("features enabled in metadata
    but not listed in protocol: invariants"); Rewind writes that version itself. So too a
    table with an identity, a default or a variant column, which delta-rs cannot create."""
    text = schema.to_json()
    return (
        ('"timestamp_ntz"' in text and _not_null(text))
        or _has_variant(text)
        or any(key in text for key in (_IDENTITY_START, _DEFAULT))
    )


_VARIANT = re.compile(r'"(?:type|elementType|keyType|valueType)":\s*"variant"')


def _has_variant(schema_json: str) -> bool:
    """Whether the schema ``schema_json`` has a variant column (Delta's ``variantType``)."""
    return _VARIANT.search(schema_json) is not None


def _props(
    query_id: str,
    commit_time: datetime,
    commit_id: str = "",
    *,
    undo: bool = False,
    readds: bool = False,
) -> CommitProperties:
    """Rewind's marks on its commits: the statement (also Delta's ``userMetadata``, so
    delta-spark's DESCRIBE HISTORY shows it, SPEC R43), the clock, the commit's id, and
    whether it takes back that statement's earlier commit or adds files earlier versions
    hold (:meth:`TableStore.undo_commit`)."""
    metadata = {
        COMMIT_QUERY_ID_KEY: query_id,
        COMMIT_TIME_KEY: format_timestamp(commit_time),
        COMMIT_ID_KEY: commit_id or query_id,
        "userMetadata": query_id,
    }
    if undo:
        metadata[COMMIT_UNDO_KEY] = "true"
    if readds:
        metadata[COMMIT_READDS_KEY] = "true"
    return CommitProperties(custom_metadata=metadata, max_commit_retries=_COMMIT_ATTEMPTS)


def _log_errors() -> tuple[type[Exception], ...]:
    """What a broken Delta log raises while it is replayed: a JSON commit's errors, and
    Arrow's from a checkpoint (whose read imported pyarrow)."""
    arrow = sys.modules.get("pyarrow")
    return (OSError, ValueError, KeyError) + ((arrow.ArrowException,) if arrow else ())


def _reason(exc: Exception) -> str:
    """One line from a delta-rs error: its first line, and its innermost cause when it
    lists causes below it (``↳ Operation not permitted (os error 1)``); never the
    backtrace some errors carry."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).split("Backtrace:")[0]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    causes = [line.removeprefix("↳").strip() for line in lines if line.startswith("↳")]
    first = lines[0] if lines else type(exc).__name__
    return f"{first}: {causes[-1]}" if causes else first


def link_or_copy(source: Path, destination: Root) -> None:
    """Share a local file with a new table: a hard link, else (another device, no support,
    a table on S3) a copy of its bytes (:func:`location.copy`)."""
    if isinstance(destination, Path):
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, destination)
            return
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
    location.copy(source, destination)


def _add(file: DataFile, now: datetime) -> AddAction:
    """The add action of ``file``, with its partition values. A file with a deletion
    vector is refused: delta-rs cannot commit one, and the file without it would bring
    the rows it deletes back (a clone or restore of such a version)."""
    if file.dv_path or file.deleted_rows:
        raise UnsupportedTableFeature(
            f"Data file {file.path} carries a deletion vector, which Rewind cannot commit yet "
            "(a clone or restore of this version would bring deleted rows back)."
        )
    return AddAction(
        file.path,
        file.size,
        dict(file.partition_values),
        _ms(now),
        True,
        file.stats or json.dumps({"numRecords": file.num_records}),
    )


def _file_action(file: DataFile, now: datetime, *, remove: bool = False) -> dict[str, Any]:
    """The add (or remove) action of ``file`` in a commit Rewind writes itself
    (:meth:`TableStore._commit_own`): its path URI-encoded as Delta stores it, its
    partition values, its statistics (or row count), its deletion vector and its row
    tracking fields, verbatim."""
    action: dict[str, Any] = {
        "path": quote(file.path, safe=_URI_SAFE),
        "partitionValues": dict(file.partition_values),
        "size": file.size,
        "dataChange": True,
    }
    if remove:
        action.update(deletionTimestamp=_ms(now), extendedFileMetadata=True)
    else:
        action["modificationTime"] = _ms(now)
    if file.stats or file.num_records:
        action["stats"] = file.stats or json.dumps({"numRecords": file.num_records})
    if file.vector:
        action["deletionVector"] = file.deletion_vector
    if file.base_row_id is not None:
        action["baseRowId"] = file.base_row_id
    if file.row_commit_version is not None:
        action["defaultRowCommitVersion"] = file.row_commit_version
    return action


def _change_action(file: DataFile) -> dict[str, Any]:
    """The ``cdc`` action of a change data feed's file: no data change (the version's
    rows are its adds and removes)."""
    path = quote(file.path, safe=_URI_SAFE)
    values = dict(file.partition_values)
    return {"path": path, "partitionValues": values, "size": file.size, "dataChange": False}


def _absolute(file: DataFile, root: Root) -> str | None:
    """``file``'s deletion vector descriptor (JSON) with the path of its file under
    ``root`` made absolute (storage type ``p``, the URI encoded as Delta's are), so that
    another table's log can name it (:meth:`TableStore.share_files`); any other
    descriptor as it is."""
    dv = file.deletion_vector
    if not dv or dv.get("storageType") != "u" or file.dv_path is None:
        return file.vector
    uri = str(location.data_file(root, file.dv_path))
    absolute = {**dv, "storageType": "p", "pathOrInlineDv": quote(uri, safe=_URI_SAFE)}
    return json.dumps(absolute, sort_keys=True)


def _commit_text(actions: Sequence[dict[str, Any]]) -> bytes:
    """A commit file's bytes: one JSON action per line, as Delta writes them."""
    return "".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions).encode()


def _tracks_rows(state: log.Replay) -> bool:
    return _ROW_TRACKING_FEATURE in (state.protocol.get("writerFeatures") or [])


def _row_ids(
    state: log.Replay, adds: Sequence[DataFile], version: int
) -> tuple[list[DataFile], dict[str, Any] | None]:
    """``adds`` as a commit to ``state``'s table writes them as version ``version``: on a
    table with row tracking (Delta's writer requirements for it, SPEC R40), a file without
    a first row id (a new one, or one an earlier version held before the table tracked
    rows) gets fresh ids past the table's high-water mark and this version as its row
    commit version; a file put back keeps its own. Returns them and the
    ``delta.rowTracking`` domain with its mark moved (None where none moved)."""
    if not _tracks_rows(state):
        return list(adds), None
    domain = json.loads(state.domains.get(ROW_DOMAIN) or "{}")
    mark = int(domain.get(_ROW_ID_MARK, -1))
    files = []
    for file in adds:
        if file.base_row_id is None:
            file = dataclasses.replace(file, base_row_id=mark + 1)
            mark += file.num_records
        if file.row_commit_version is None:
            file = dataclasses.replace(file, row_commit_version=version)
        files.append(file)
    if mark == int(domain.get(_ROW_ID_MARK, -1)):
        return files, None
    configuration = {_ROW_ID_MARK: mark, "domainName": ROW_DOMAIN}
    return files, {
        "domain": ROW_DOMAIN,
        "configuration": json.dumps({**domain, **configuration}, separators=(",", ":")),
        "removed": False,
    }


def _with_row_tracking(protocol: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """``protocol`` with the writer features row tracking needs listed (writer version 7:
    a legacy protocol's features listed as its version implies them)."""
    writer = int(str(protocol.get("minWriterVersion") or 1))
    listed = set(protocol.get("writerFeatures") or []) | legacy_features(writer, metadata)
    needed = {_ROW_TRACKING_FEATURE, "domainMetadata"}
    if writer >= 7 and needed <= listed:
        return protocol
    return {**protocol, "minWriterVersion": 7, "writerFeatures": sorted(listed | needed)}


@dataclasses.dataclass(frozen=True)
class FieldChange:
    """What :meth:`TableStore.change_field` changes in a field: its nullability (None:
    kept) and metadata keys (a value of None removes the key); ``alone``: the change holds
    only on the version it was checked on, so no other writer may commit before it."""

    nullable: bool | None = None
    metadata: dict[str, str | None] = dataclasses.field(default_factory=dict)
    alone: bool = False


class TableStore:
    """Reads and commits the Delta tables Rewind governs: those it created, under one
    warehouse root, and external ones at their own locations (SPEC R41).

    Args:
        warehouse: the root of Rewind's own tables, a local directory or an S3 prefix
            (SPEC R44).
        locate: an external table's location by table id (None: the table is Rewind's
            own); asked once per id, the answer kept (an incarnation never moves).
        home: the local home, where the pins of running reads (SPEC R19) and the markers
            of running statements are kept; default: a local warehouse's parent.
        system: the root of the system tables (SPEC R44); default: ``<home>/system``.
    """

    def __init__(
        self,
        warehouse: Root,
        locate: Callable[[int], str | None] | None = None,
        *,
        home: Path | None = None,
        system: Root | None = None,
    ) -> None:
        if home is None:
            if not isinstance(warehouse, Path):
                raise ValueError(f"A warehouse on an object store ({warehouse}) needs a home.")
            home = warehouse.parent
        self.warehouse = warehouse
        self.home = home
        self.system = system if system is not None else home / "system"
        self._locate = locate
        self._external: dict[int, Root | None] = {}

    def external(self, table_id: int) -> Root | None:
        """The location of an external table; None for a table under the warehouse."""
        table_id = int(table_id)
        if table_id not in self._external:
            found = self._locate(table_id) if self._locate is not None else None
            self._external[table_id] = location.of(found) if found else None
        return self._external[table_id]

    def register(self, table_id: int, root: Root | None) -> None:
        """Know (or, with None, forget) a table's external location in this process."""
        if root is None:
            self._external.pop(int(table_id), None)
        else:
            self._external[int(table_id)] = root

    def root(self, table_id: int) -> Root:
        """Locations come from ids, never from names (SPEC R4, R41)."""
        return self.external(table_id) or self.warehouse / str(int(table_id))

    def purged(self, table_id: int) -> bool:
        """Whether a table Rewind created has no storage left (its directory removed for
        good, SPEC R12; S3: one LIST of one key). An external table's location is the
        team's, never removed by Rewind (SPEC R41) nor probed (SPEC R50): never purged."""
        if self.external(table_id) is not None:
            return False
        return not location.is_dir(self.root(table_id))

    def _options(self, root: Root) -> dict[str, str] | None:
        """delta-rs's ``storage_options`` for a root on S3 (conditional commits, R46)."""
        return location.storage_options(root)

    def table_id_in(self, text: str) -> int | None:
        """The id of the table whose directory ``text`` (an error message) names, if any."""
        where = re.escape(str(self.warehouse).split("://", 1)[-1])
        found = re.search(r"(?:s3a?://)?" + where + r"/(\d+)(?:/|\b)", text)
        return int(found[1]) if found else None

    @contextlib.contextmanager
    def _writing(self, table_id: int) -> Iterator[None]:
        """delta-rs write failures as a StorageError naming the table directory (R39);
        a conflict with another writer's commit as CONCURRENT_WRITE (SPEC R40)."""
        try:
            yield
        except (StorageError, UnsupportedTableFeature):
            raise
        except CommitFailedError as exc:
            raise ConcurrentWrite(
                f"Another writer's commit to {self.root(table_id)} conflicts with this "
                f"statement's ({_reason(exc)}); nothing was committed: run it again."
            ) from None
        except DeltaProtocolError as exc:
            raise UnsupportedTableFeature(
                f"Cannot write {self.root(table_id)}: {_reason(exc)}."
            ) from None
        except Exception as exc:  # delta-rs raises OSError and its own exception types
            raise StorageError(
                f"Cannot write the Delta log of {self.root(table_id)}: {_reason(exc)}."
            ) from None

    def create(
        self,
        table_id: int,
        schema: pa.Schema | DeltaSchema,
        query_id: str,
        now: datetime,
        adds: Sequence[DataFile] = (),
        partition_by: Sequence[str] = (),
        mapping: dict[str, str] | None = None,
    ) -> int:
        """Create version 0 of a new table, holding ``adds`` (already in its dir), partitioned
        by ``partition_by`` (a clone of a partitioned table); returns 0. ``mapping``: the
        column mapping properties of a clone of a column-mapped table; it, or an add with
        a deletion vector, makes Rewind write the version itself (:meth:`_created_own`)."""
        path = self.root(table_id)
        if location.is_dir(path / "_delta_log"):
            raise self._not_ours(table_id)
        location.make_dir(path)
        own = schema if isinstance(schema, DeltaSchema) else DeltaSchema.from_arrow(schema)
        if mapping or any(f.vector for f in adds) or _needs_feature_list(own):
            return self._created_own(
                table_id, own, query_id, now, adds, partition_by, mapping or {}
            )
        with self._writing(table_id):
            create_table_with_add_actions(
                str(path),
                schema if isinstance(schema, DeltaSchema) else DeltaSchema.from_arrow(schema),
                [_add(f, now) for f in adds],
                partition_by=list(partition_by) or None,
                configuration=DELTA_TABLE_CONFIG,
                commit_properties=_props(query_id, now),
                post_commithook_properties=_HOOKS,
                storage_options=self._options(path),
            )
        return 0

    def _created_own(
        self,
        table_id: int,
        schema: DeltaSchema,
        query_id: str,
        now: datetime,
        adds: Sequence[DataFile],
        partition_by: Sequence[str],
        mapping: dict[str, str],
    ) -> int:
        """Version 0 of a clone that delta-rs cannot create, written by Rewind: of a
        column-mapped table, ``schema`` with its fields' column ids and physical names (the
        source's) and the mapping ``mapping`` gives (``delta.columnMapping.*``), ``adds``'
        columns, partition values and statistics going by those physical names; with
        ``adds`` that carry deletion vectors (the source's, verbatim or by absolute URI,
        :meth:`share_files`), the ``deletionVectors`` feature, so that every reader
        applies them (SPEC R24, R40, R47). The protocol is the one delta-spark gives such a
        table: reader 2 / writer 5 for column mapping alone, else reader 3 / writer 7 with
        the features listed (``timestampNtz`` too where a column is a TIMESTAMP_NTZ, which
        no legacy protocol reads, and the writer feature ``invariants`` where one is NOT
        NULL). Row tracking is the source's, not the clone's: its files' row ids are left
        out. Also version 0 of a new table that delta-rs would list too few features for
        (:func:`_needs_feature_list`)."""
        root = self.root(table_id)
        configuration = {**DELTA_TABLE_CONFIG, **mapping}
        # delta-rs's schema keeps a boolean of a field's metadata as text ("true"), which
        # delta-spark reads as no identity flag (its INSERT failed): JSON's true
        text = schema.to_json().replace(f'{_EXPLICIT}:"true"', f"{_EXPLICIT}:true")
        features = ["columnMapping"] if mapping else []
        features += ["deletionVectors"] if any(f.vector for f in adds) else []
        features += ["timestampNtz"] if '"timestamp_ntz"' in text else []
        features += ["variantType"] if _has_variant(text) else []
        writer_only = ["invariants"] if _not_null(text) else []
        writer_only += ["identityColumns"] if _IDENTITY_START in text else []
        writer_only += ["allowColumnDefaults"] if _DEFAULT in text else []
        protocol: dict[str, Any] = {"minReaderVersion": 2, "minWriterVersion": 5}
        if features != ["columnMapping"] or writer_only:
            protocol = {
                "minReaderVersion": 3 if features else 1,
                "minWriterVersion": 7,
                **({"readerFeatures": features} if features else {}),
                "writerFeatures": features + writer_only,
            }
        marks = _props(query_id, now, str(uuid.uuid4()))
        info = self._info(root, -1, configuration, "CREATE TABLE", {}, marks)
        metadata = {
            "id": str(uuid.uuid4()),
            "format": {"provider": "parquet", "options": {}},
            "schemaString": text,
            "partitionColumns": list(partition_by),
            "configuration": configuration,
            "createdTime": _ms(now),
        }
        actions: list[dict[str, Any]] = [
            {"commitInfo": info},
            {"protocol": protocol},
            {"metaData": metadata},
        ]
        for file in adds:
            own = dataclasses.replace(file, base_row_id=None, row_commit_version=None)
            actions.append({"add": _file_action(own, now)})
        with self._writing(table_id):
            location.make_dir(root / "_delta_log", exist_ok=True)
            try:
                location.write_new(log.commit_file(root, 0), _commit_text(actions))
            except FileExistsError:
                raise self._not_ours(table_id) from None
        return 0

    def share_files(
        self, target_id: int, files: Sequence[DataFile], source_root: Root
    ) -> list[DataFile]:
        """The data files of a new clone of the table at ``source_root``: ``files`` as the
        clone's Delta log names them (SPEC R24, R47).

        Files are immutable, so a clone never copies bytes where the storage allows: a
        local source's files are hard-linked into the clone under the same relative paths
        (where the file system refuses links, another device or no support, or the clone
        is on S3, the bytes are copied); an object store's are referenced where they are,
        by absolute URI, as Delta's shallow clone does (SPEC R47), and so stay those a
        clone of a clone references, whether the clone's own table is local or on S3.
        delta-rs and delta-spark read the clone either way.

        A file's deletion vector goes with it: a local source's vector file is linked
        (or copied) under its same path, its descriptor unchanged; an object store's is
        referenced where it is, its descriptor's path made absolute (``p``, Delta's
        absolute-path vector), as the file's is.
        """
        target = self.root(target_id)
        shared: list[DataFile] = []
        linked: set[str] = set()  # one vector file holds the vectors of many data files
        for file in files:
            where = location.data_file(source_root, file.path)
            vector = file.dv_path
            if isinstance(where, Path):
                link_or_copy(where, target / file.path)
                kept = location.data_file(source_root, vector) if vector else None
                if isinstance(kept, Path) and vector not in linked:
                    link_or_copy(kept, target / str(vector))
                    linked.add(str(vector))
            else:
                file = dataclasses.replace(
                    file, path=str(where), vector=_absolute(file, source_root)
                )
            shared.append(file)
        return shared

    def _delta_table(self, table_id: int, version: int | None = None) -> DeltaTable:
        try:
            root = self.root(table_id)
            return DeltaTable(str(root), version=version, storage_options=self._options(root))
        except Exception as exc:  # delta-rs raises several types for a broken log
            raise StorageError(
                f"Cannot read the Delta log of {self.root(table_id)}: {_reason(exc)}."
            ) from None

    def snapshot(self, table_id: int, version: int) -> Snapshot:
        """The schema and files of ``version``, replayed from the Delta log.

        Raises:
            StorageError: the log is broken or does not reach ``version``.
            UnsupportedTableFeature: a feature Rewind cannot read correctly (SPEC R43).
        """
        root = self.root(table_id)
        try:
            state = log.replay(root, version)
        except Exception as exc:
            if not isinstance(exc, _log_errors()):
                raise
            raise StorageError(f"Cannot read the Delta log of {root}: {exc}.") from None
        log.check_readable(state.protocol, str(root))
        files = tuple(state.files)
        log.column_types(state.metadata, str(root))  # its Arrow schema is built at first use
        return Snapshot(
            version,
            files,
            root,
            state.protocol,
            log.field_ids(state.metadata),
            state.metadata,
            tuple(state.domains.items()),
        )

    def latest_version(self, table_id: int, known: int = -1) -> int:
        """The newest version in the log, probed from ``known`` on (no listing)."""
        version = known
        for commit in log.commits_after(self.root(table_id), known):
            version = commit.version
        return version

    def commit(
        self,
        table_id: int,
        base_version: int,
        *,
        adds: Sequence[DataFile],
        removes: Sequence[DataFile],
        schema: pa.Schema,
        query_id: str,
        now: datetime,
        undo: bool = False,
        readds: bool = False,
        metadata: dict[str, Any] | None = None,
        exclusive: bool = False,
        by_rewind: bool = False,
        changes: Sequence[DataFile] = (),
        stable_rows: bool = False,
    ) -> int:
        """Commit ``removes`` and data files ``adds`` (already in the table dir): new
        files, or with ``readds`` files earlier versions hold (a restore), which taking the
        commit back must not delete; ``changes``: the change data feed's files of a
        rewrite (``cdc`` actions, which delta-rs cannot commit); ``stable_rows``: the
        rewrite kept its rows' stable row ids in its files (row tracking). ``exclusive``: on top of
        ``base_version`` only (a restore that brings back the schema of a version another
        engine replaced since, in ``metadata``: after another writer's append their files
        would stay under it).

        Goes through Delta's optimistic concurrency (SPEC R40): when other writers
        committed after ``base_version``, delta-rs checks for conflicts and commits
        after them; a real conflict is CONCURRENT_WRITE and nothing is committed.

        Written by Rewind itself (:meth:`_commit_own`) where delta-rs cannot make the
        commit: a file with a deletion vector (another writer's, removed or re-added:
        delta-rs's actions carry none), a ``metadata`` action with it (an identity
        column's high-water mark moved, a schema restored), ``by_rewind`` (a table whose
        features delta-rs refuses to commit to,
        :data:`~rewind.storage.snapshot.DELTA_RS_REFUSES`).

        Returns:
            The version the commit got (``base_version + 1`` unless others came first).
        """
        vectors = any(f.vector for f in (*adds, *removes))
        if by_rewind or metadata is not None or vectors or changes:
            marks = _props(query_id, now, str(uuid.uuid4()), undo=undo, readds=readds)
            return self._commit_own(
                table_id,
                base_version,
                adds,
                removes,
                marks,
                now,
                metadata,
                exclusive=exclusive,
                changes=changes,
                stable_rows=stable_rows,
            )
        actions: list[AddAction | RemoveAction] = [
            RemoveAction(f.path, True, _ms(now), f.size, dict(f.partition_values)) for f in removes
        ]
        actions.extend(_add(f, now) for f in adds)
        commit_id = str(uuid.uuid4())
        dt = self._delta_table(table_id, base_version)
        with self._writing(table_id):
            dt.create_write_transaction(
                actions,
                "append",
                schema,
                commit_properties=_props(query_id, now, commit_id, undo=undo, readds=readds),
                post_commithook_properties=_HOOKS,
            )
        version = self._own_version(table_id, base_version, commit_id)
        return self._checkpointed(table_id, version, dt.metadata().configuration)

    def add_columns(
        self,
        table_id: int,
        base_version: int,
        fields: list[Field],
        query_id: str,
        now: datetime,
        *,
        by_rewind: bool = False,
    ) -> int:
        """Add nullable columns to the Delta schema (a metadata-only version); written by
        Rewind itself on a table delta-rs commits nothing to (``by_rewind``,
        :meth:`_columns_added`)."""
        if by_rewind or any(
            key in f.to_json() or _has_variant(f.to_json())
            for f in fields
            for key in ('"timestamp_ntz"', _DEFAULT)
        ):
            # delta-rs listed timestampNtz alone, dropping the invariants a legacy
            # protocol implied, and lists no allowColumnDefaults (_protocol_for): Rewind
            # writes that commit itself
            return self._columns_added(table_id, base_version, fields, query_id, now)
        commit_id = str(uuid.uuid4())
        dt = self._delta_table(table_id, base_version)
        with self._writing(table_id):
            dt.alter.add_columns(
                fields,
                commit_properties=_props(query_id, now, commit_id),
                post_commithook_properties=_HOOKS,
            )
        version = self._own_version(table_id, base_version, commit_id)
        return self._checkpointed(table_id, version, dt.metadata().configuration)

    def _columns_added(
        self, table_id: int, base_version: int, fields: list[Field], query_id: str, now: datetime
    ) -> int:
        """The ``metaData`` commit of :meth:`add_columns`, put-if-absent (:meth:`_put`);
        after another writer's commit it is made again on theirs, and refused if they
        added a column of the same name. On a column-mapped table each new column, nested
        fields too, gets a new column id and physical name (:func:`log.mapped_fields`)."""
        root = self.root(table_id)
        new = [json.loads(f.to_json()) for f in fields]

        def build(base: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
            state = log.replay(root, base)
            schema = json.loads(state.metadata["schemaString"])
            taken = {f["name"].lower() for f in schema["fields"]}
            if any(f["name"].lower() in taken for f in new):
                raise ConcurrentWrite(
                    f"Another writer added a column of the same name to {root} (version "
                    f"{base}); the column was not added."
                )
            configuration = dict(state.metadata.get("configuration") or {})
            added = new
            if log.column_mapped(configuration):
                added, last = log.mapped_fields(new, log.last_column_id(state.metadata))
                configuration[log.MAX_COLUMN_ID] = str(last)
            schema["fields"] += added
            metadata = {
                **state.metadata,
                "schemaString": json.dumps(schema, separators=(",", ":")),
                "configuration": configuration,
            }
            parameters = {"columns": json.dumps([f["name"] for f in new])}
            info = self._info(root, base, configuration, "ADD COLUMNS", parameters, marks)
            return [{"commitInfo": info}, *_schema_actions(state.protocol, metadata)], configuration

        marks = _props(query_id, now, str(uuid.uuid4()))
        return self._put(table_id, base_version, build, "the column was not added")

    def change_field(
        self,
        table_id: int,
        base_version: int,
        name: str,
        change: FieldChange,
        query_id: str,
        now: datetime,
    ) -> int:
        """Change one top-level field of the Delta schema (ALTER COLUMN): its nullability
        and metadata keys (a value of None removes the key), a version with one
        ``metaData`` action, written by Rewind as :meth:`set_properties` writes its
        (delta-spark's operation name, ``CHANGE COLUMN``). After another writer's commit
        it is made again on theirs, unless ``change.alone``: a change that holds only for
        the rows the statement checked (SET NOT NULL) fails then, CONCURRENT_WRITE."""
        root = self.root(table_id)

        def build(base: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
            if change.alone and base != base_version:
                raise ConcurrentWrite(
                    f"Another writer committed to {root} (version {base}) while the "
                    f"statement checked column {name}; nothing was committed: run it again."
                )
            state = log.replay(root, base)
            schema = json.loads(state.metadata["schemaString"])
            for field in schema["fields"]:
                if field["name"] == name:
                    meta = {**(field.get("metadata") or {}), **change.metadata}
                    field["metadata"] = {k: v for k, v in meta.items() if v is not None}
                    if change.nullable is not None:
                        field["nullable"] = change.nullable
            metadata = {**state.metadata, "schemaString": json.dumps(schema, separators=(",", ":"))}
            configuration = dict(state.metadata.get("configuration") or {})
            parameters = {"column": json.dumps({"name": name})}
            info = self._info(root, base, configuration, "CHANGE COLUMN", parameters, marks)
            return [{"commitInfo": info}, *_schema_actions(state.protocol, metadata)], configuration

        marks = _props(query_id, now, str(uuid.uuid4()))
        return self._put(table_id, base_version, build, "the column was not changed")

    def set_properties(
        self, table_id: int, base_version: int, values: dict[str, str], query_id: str, now: datetime
    ) -> int:
        """Set Delta table properties: a version with one ``metaData`` action, the
        current one with ``values`` merged into its configuration (SPEC R42).

        Written by Rewind, not by delta-rs's ``set_table_properties``: on a table with
        table features (writer version 7, delta-spark's default) that rewrote the
        *protocol* too, adding ``variantType`` or raising the reader version to 2, after
        which the team's own readers (and Rewind) could no longer read the table (SPEC
        R40). The commit is put-if-absent (:func:`location.write_new`); after another
        writer's commit it is made again on top of theirs, keeping their metadata.
        """
        root = self.root(table_id)

        def build(base: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
            state = log.replay(root, base)  # another writer's metadata kept
            configuration = {**(state.metadata.get("configuration") or {}), **values}
            parameters = {"properties": json.dumps(values)}
            info = self._info(root, base, configuration, "SET TBLPROPERTIES", parameters, marks)
            return [
                {"commitInfo": info},
                {"metaData": {**state.metadata, "configuration": configuration}},
            ], configuration

        marks = _props(query_id, now, str(uuid.uuid4()))
        return self._put(table_id, base_version, build, "its properties were not set")

    def track_rows(self, table_id: int, base_version: int, query_id: str, now: datetime) -> int:
        """Turn Delta's row tracking on (Snowflake's ``CHANGE_TRACKING = TRUE``, the row
        identities the CHANGES clause compares, SPEC R40): one version with the protocol
        listing ``rowTracking`` and ``domainMetadata`` (the reader version kept: both are
        writer features), the properties that name the hidden columns a rewrite keeps row
        ids in, and every live file without a first row id re-added with one (no data
        change, its deletion vector kept), the high-water mark moved past them: the
        backfill delta-spark does in three commits, in one. Put-if-absent on the newest
        version, built again over another writer's commit."""
        root = self.root(table_id)

        def build(base: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
            state = log.replay(root, base)
            protocol = _with_row_tracking(state.protocol, state.metadata)
            configuration = {
                ROW_ID_PROPERTY: f"_row-id-col-{uuid.uuid4()}",
                ROW_VERSION_PROPERTY: f"_row-commit-version-col-{uuid.uuid4()}",
                **(state.metadata.get("configuration") or {}),
                ROW_TRACKING: "true",
            }
            untracked = [f for f in state.files if f.base_row_id is None]
            uncounted = [f.path for f in untracked if '"numRecords"' not in (f.stats or "")]
            if uncounted:  # the file's ids would overlap the next one's
                raise UnsupportedTableFeature(
                    f"Data file {uncounted[0]} of {root} has no row count in the Delta log, "
                    "so its rows cannot be given row ids: delta-spark's ALTER TABLE ... SET "
                    "TBLPROPERTIES ('delta.enableRowTracking' = true) counts them."
                )
            tracking = dataclasses.replace(state, protocol=protocol)
            readded, mark = _row_ids(tracking, untracked, base + 1)
            parameters = {"properties": json.dumps({ROW_TRACKING: "true"})}
            info = self._info(root, base, configuration, "SET TBLPROPERTIES", parameters, marks)
            actions: list[dict[str, Any]] = [{"commitInfo": info}]
            actions += [{"protocol": protocol}] if protocol != state.protocol else []
            actions.append({"metaData": {**state.metadata, "configuration": configuration}})
            actions += [{"add": {**_file_action(f, now), "dataChange": False}} for f in readded]
            actions += [{"domainMetadata": mark}] if mark is not None else []
            return actions, configuration

        # ``readds``: taking the commit back (SPEC R28) deletes its log entry, never the
        # files it re-added, which are the table's live data
        marks = _props(query_id, now, str(uuid.uuid4()), readds=True)
        return self._put(table_id, base_version, build, "change tracking was not turned on")

    def _commit_own(
        self,
        table_id: int,
        base_version: int,
        adds: Sequence[DataFile],
        removes: Sequence[DataFile],
        marks: CommitProperties,
        now: datetime,
        metadata: dict[str, Any] | None,
        *,
        exclusive: bool,
        changes: Sequence[DataFile],
        stable_rows: bool,
    ) -> int:
        """Commit ``removes`` and ``adds`` (and ``metadata``, a ``metaData`` action) as a
        version Rewind writes itself, each file's action with its deletion vector as the
        log gave it (Delta's file identity is the path and the vector: a remove without
        it leaves the file in the table), as delta-spark's RESTORE writes them; each of
        ``changes`` as a ``cdc`` action (the change data feed's readers read the version's
        changes from them alone).
        Put-if-absent (:meth:`_put`) on ``base_version``, or after other writers' blind
        appends (their files stay, as delta-rs's conflict check lets an append by); after
        any other commit (a remove, a metadata or protocol change: another writer's
        identity values; with ``exclusive``, any commit) it is CONCURRENT_WRITE and
        nothing is committed (SPEC R40)."""
        root = self.root(table_id)

        def build(base: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
            for commit in log.commits_after(root, base_version):
                if commit.version > base:
                    break
                if (
                    exclusive
                    or commit.removes()
                    or any("metaData" in a or "protocol" in a for a in commit.actions)
                ):
                    raise ConcurrentWrite(
                        f"Another writer's commit to {root} (version {commit.version}) "
                        "conflicts with this statement's; nothing was committed: run it again."
                    )
            state = log.replay(root, base)
            configuration = dict(state.metadata.get("configuration") or {})
            info = self._info(root, base, configuration, "WRITE", {"mode": "Append"}, marks)
            added, mark = _row_ids(state, adds, base + 1)
            if _tracks_rows(state):
                # A rewrite's copied rows get fresh ids, and keep their stable ones only
                # where it wrote them in its files (``stable_rows``)
                kept = stable_rows or not (removes and mark)
                info["tags"] = {ROW_IDS_PRESERVED: "true" if kept else "false"}
            actions: list[dict[str, Any]] = [{"commitInfo": info}]
            if metadata is not None:
                actions.append({"metaData": metadata})
            actions += [{"remove": _file_action(f, now, remove=True)} for f in removes]
            actions += [{"add": _file_action(f, now)} for f in added]
            actions += [{"cdc": _change_action(f)} for f in changes]
            if mark is not None:
                actions.append({"domainMetadata": mark})
            return actions, configuration

        return self._put(table_id, base_version, build, "nothing was committed")

    def _put(
        self,
        table_id: int,
        base_version: int,
        build: Callable[[int], tuple[list[dict[str, Any]], dict[str, str]]],
        what: str,
    ) -> int:
        """Write the commit ``build(base)`` makes (its actions, and the table's properties
        after it) as version ``base + 1``, put-if-absent (:func:`location.write_new`, SPEC
        R46); when another writer's commit took that version, build it again on top of
        theirs. Returns the version."""
        root = self.root(table_id)
        for _ in range(_COMMIT_ATTEMPTS):
            actions, configuration = build(base_version)
            with self._writing(table_id):
                try:
                    location.write_new(
                        log.commit_file(root, base_version + 1), _commit_text(actions)
                    )
                except FileExistsError:  # another writer's commit took the version
                    base_version = max(c.version for c in log.commits_after(root, base_version))
                    continue
            return self._checkpointed(table_id, base_version + 1, configuration)
        raise ConcurrentWrite(f"Other writers kept committing to {root}; {what}: run it again.")

    @staticmethod
    def _info(
        root: Root,
        base_version: int,
        configuration: dict[str, str],
        operation: str,
        parameters: dict[str, str],
        marks: CommitProperties,
    ) -> dict[str, object]:
        """The ``commitInfo`` of a commit Rewind writes itself (:meth:`_put`): Rewind's
        marks (:func:`_props`) and, on a table with in-commit timestamps, one after its
        previous commit's."""
        wall = int(time.time() * 1000)
        info: dict[str, object] = {
            "timestamp": wall,
            "operation": operation,
            "operationParameters": parameters,
            "isBlindAppend": False,
            "engineInfo": "rewind",
            **(marks.custom_metadata or {}),
        }
        if configuration.get(_IN_COMMIT_TIMESTAMPS, "").lower() == "true":
            previous = log.read_commit(root, base_version)
            last = int((previous.info if previous else {}).get("inCommitTimestamp") or 0)
            info = {"inCommitTimestamp": max(wall, last + 1), **info}
        return info

    @staticmethod
    def checkpoint_interval(configuration: dict[str, str]) -> int:
        """A table's ``delta.checkpointInterval`` from its properties (10 when unset or
        not a positive number, as delta-spark reads it)."""
        try:
            value = int(configuration[CHECKPOINT_INTERVAL])
        except (KeyError, ValueError, TypeError):
            return DEFAULT_CHECKPOINT_INTERVAL
        return value if value > 0 else DEFAULT_CHECKPOINT_INTERVAL

    def _checkpointed(self, table_id: int, version: int, configuration: dict[str, str]) -> int:
        """Write the Delta checkpoint of Rewind's commit ``version`` where Delta writes
        one: a version past 0 at a multiple of the table's checkpoint interval (delta-spark's
        rule), so that no engine's read of the table replays its whole log (issue 28,
        SPEC R43, R50). External tables too (SPEC R41): a checkpoint is what any Delta
        writer adds and deletes nothing; their log is never cleaned up (R42). The commit
        is made already: a checkpoint that fails is logged and left to the next interval
        (a reader then replays more JSON, nothing is lost). ``configuration``: the table's
        properties as of the commit. Returns ``version``.

        Not on a table whose features Rewind cannot write (:meth:`Snapshot.check_writable`)
        or with V2 checkpoints (:data:`_OWN_CHECKPOINTS`): delta-rs's checkpoint of it could
        miss what those features need; the table's own writers checkpoint it. A table only
        Rewind writes (a clone with deletion vectors or column mapping) is checkpointed
        as any other."""
        if version <= 0:
            return version
        try:
            if version % self.checkpoint_interval(configuration):
                return version
            snap = self.snapshot(table_id, version)
            if snap.features & _OWN_CHECKPOINTS:
                return version
            try:
                snap.check_writable("", new_files=False)
            except UnsupportedTableFeature:
                return version
            root = self.root(table_id)
            table = DeltaTable(str(root), version=version, storage_options=self._options(root))
            table.create_checkpoint()
        except Exception as exc:  # delta-rs raises several types; the commit stands
            _log.warning(
                "No Delta checkpoint at version %s of %s: %s",
                version,
                self.root(table_id),
                _reason(exc),
            )
        return version

    def _own_version(self, table_id: int, base_version: int, commit_id: str) -> int:
        """The version holding the commit ``commit_id`` (found after ``base_version``)."""
        for commit in log.commits_after(self.root(table_id), base_version):
            if commit.info.get(COMMIT_ID_KEY) == commit_id:
                return commit.version
        raise StorageError(
            f"The commit {commit_id} to table id {table_id} is not in its Delta log."
        )

    def undo_commit(self, table_id: int, version: int, query_id: str, now: datetime) -> None:
        """Take back a commit of a failed Rewind statement (SPEC R28, R40).

        Only a commit whose ``rewind.queryId`` is ``query_id`` is touched. When it is
        the newest, its log entry and the data and change files it added (its own, new
        names) are deleted, except those of a commit that re-added files earlier versions
        hold (a restore, change tracking's row ids: ``readds``): they are those versions'
        data, and the team's files on an external table; when another writer has
        committed after it, nothing of theirs is touched: a new commit removes what it
        added and brings back what it removed (not after a restore that brought a
        replaced version's schema back, nor change tracking: it stays)."""
        root = self.root(table_id)
        commit = log.read_commit(root, version)
        if commit is None or commit.rewind_query_id != query_id:
            return
        if log.read_commit(root, version + 1) is None:
            # SPEC R28, R40: this log entry and these files are this statement's own, and
            # so is a checkpoint of its version (:meth:`_checkpointed`), which goes first
            # (with a ``_last_checkpoint`` naming it), before the entry it stands for.
            hint = log.last_checkpoint(root)
            if hint is not None and hint[0] == version:
                location.unlink(root / log.LOG / log.LAST_CHECKPOINT)
            for checkpoint in log.checkpoint_files(root, version):
                location.unlink(checkpoint)
            location.unlink(log.commit_file(root, version))
            if not commit.info.get(COMMIT_READDS_KEY):
                changes = [a["cdc"] for a in commit.actions if "cdc" in a]  # its feed's
                for add in [*commit.adds(), *changes]:
                    location.unlink(root / log.relative_path(add["path"]))
            return
        if commit.info.get(COMMIT_READDS_KEY) and any("metaData" in a for a in commit.actions):
            # A restore that brought back the schema of a version another engine replaced,
            # and another writer committed after it, against that schema: its files back
            # under the replacement's schema, or theirs, would be unreadable. It stays, a
            # whole version of the table (no one's data lost, SPEC R40 over R28); so does
            # change tracking turned on (:meth:`track_rows`), which the writer's files and
            # row ids build on.
            _log.warning(
                "The commit %s to %s (version %d, a restore or change tracking) is not "
                "taken back: another writer committed after it, on the metadata it wrote.",
                query_id,
                root,
                version,
            )
            return
        latest = self.latest_version(table_id, version)
        newest = self.snapshot(table_id, latest)
        current = {f.path: f for f in newest.files}
        later = {
            log.relative_path(a["path"])
            for c in log.commits_after(root, version)
            for a in c.removes() + c.adds()
        }
        undo_removes = [
            current[p] for a in commit.adds() if (p := log.relative_path(a["path"])) in current
        ]
        undo_adds = [
            log.data_file(r)  # its vector too: the file as it was
            for r in commit.removes()
            if log.relative_path(r["path"]) not in later
            and location.exists(location.data_file(root, log.relative_path(r["path"])))
        ]
        if undo_removes or undo_adds:
            self.commit(
                table_id,
                latest,
                adds=undo_adds,
                removes=undo_removes,
                schema=newest.schema,
                query_id=query_id,
                now=now,
                undo=True,
                by_rewind=newest.by_rewind,
            )

    def discard(self, table_id: int, query_id: str) -> None:
        """Remove the whole directory of a table whose creation by the statement
        ``query_id`` is being undone (SPEC R28). Only its own: an external table's location
        is never removed (SPEC R41: its files are the team's), nor a directory whose
        version 0 another statement wrote (:meth:`create` refused to write over it)."""
        if self.external(table_id) is not None:
            return
        root = self.root(table_id)
        first = log.read_commit(root, 0)
        if first is None or first.rewind_query_id == query_id:
            location.remove_tree(root)

    def claim(self, table_id: int, query_id: str) -> None:
        """Make a new table's directory the statement ``query_id``'s, before anything is
        written there (SPEC R3, R28), recorded on its running mark. One that holds files
        already was left by a statement of this home killed before its catalog commit (a
        SQLite catalog gives that id again): what it started never became a table, and is
        taken back as its own undo would have. Anything else is not this catalog's to
        touch: another Rewind home's table in a warehouse both were pointed at, or a
        table of a catalog restored from an older copy.

        Raises:
            StorageError: the directory holds files no killed statement of this home left;
                nothing was written.
        """
        root = self.root(table_id)
        if isinstance(root, Path):
            occupied = root.is_dir() and any(root.iterdir())
        else:
            occupied = location.is_dir(root)
        killed = running.killed_claim(self.home, table_id)
        if occupied:
            if killed is None:
                raise self._not_ours(table_id)
            location.remove_tree(root)
        if killed is not None:
            running.forget(self.home, killed, table_id)
        running.claim(self.home, query_id, table_id)

    def _not_ours(self, table_id: int) -> StorageError:
        return StorageError(
            f"Storage for table id {table_id} already exists at {self.root(table_id)}, and no "
            "statement of this Rewind home left it: a warehouse another home uses, or a "
            "catalog older than its warehouse. Nothing was written."
        )
