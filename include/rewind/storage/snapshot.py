"""What one Delta table version holds (SPEC R14, R40): its data files, schema and protocol,
as replayed from the log by :mod:`rewind.storage.log` and committed by
:mod:`rewind.storage.delta`; and which Delta features Rewind can write."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rewind.errors import InvalidValue, UnsupportedError, UnsupportedTableFeature
from rewind.storage import location
from rewind.storage.location import Root
from rewind.storage.log import (
    DataFile,
    arrow_schema,
    column_mapped,
    column_types,
    delta_fields,
    field_ids,
)
from rewind.types import DECLARED_TYPE, declared_length, reads_as

if TYPE_CHECKING:
    import pyarrow as pa


# Features of a table delta-rs 1.6.6 commits nothing to ("Unsupported table features
# required"): Rewind writes its commits to such a table itself, as Delta's protocol has
# them (:attr:`Snapshot.by_rewind`). A clustered table's (liquid clustering, delta-spark's
# ``CLUSTER BY``): its domain metadata kept, each new file with statistics of the
# clustering columns (:attr:`Snapshot.clustering_columns`), a file put back with its own.
# Column mapping and row tracking: delta-rs 1.6.6 refuses to write to such a table too.
# In-commit timestamps (delta-spark's ``delta.enableInCommitTimestamps``): delta-rs 1.6.6
# cannot even load such a table; Rewind's commits carry theirs, first, one past the
# previous commit's (``TableStore._info``), and leave its checkpoints to its own writers.
# Type widening (delta-spark's ``ALTER COLUMN ... TYPE`` to a wider type): a write puts
# the current types in its files; an older file keeps its narrower ones, which readers
# widen (a rewrite's copy of it gets the current ones). Column defaults
# (``allowColumnDefaults``, a field's ``CURRENT_DEFAULT``): a row written without a value
# for such a column gets the default (:attr:`Snapshot.defaults`, ``rewind.sql.defaults``).
# Variant columns (``variantType``): Spark writes their values unshredded
# (``spark.SESSION_CONF``), as the feature alone allows.
DELTA_RS_REFUSES = {
    "allowColumnDefaults",
    "variantType",
    "inCommitTimestamp",
    "typeWidening",
    "identityColumns",
    "clustering",
    "domainMetadata",
    "v2Checkpoint",
    "columnMapping",
    "rowTracking",
}
# Writer features Rewind commits correctly (SPEC R40): anything else is refused before a
# file is written. Their rules bind Rewind's writes:
# :attr:`Snapshot.checks`, :attr:`Snapshot.generated`, :attr:`Snapshot.identity` and
# :meth:`Snapshot.check_writable`. Deletion vectors: new files carry none, and a commit
# that removes or re-adds a file with one gives its vector back; identity columns: new
# rows get values past the column's high-water mark, which the commit moves
# (:meth:`~rewind.storage.delta.TableStore.commit`); column mapping: new files name each
# column by its physical name and id (:func:`rewind.storage.log.physical_schema`), a
# column added gets new ones (:func:`rewind.storage.log.mapped_fields`); row tracking: a new
# file gets fresh row ids and a file put back keeps its own (``rewind.storage.delta``);
# clustering above.
WRITABLE_FEATURES = {
    "appendOnly",
    "invariants",
    "checkConstraints",
    "changeDataFeed",
    "timestampNtz",
    "generatedColumns",
    "deletionVectors",
    *DELTA_RS_REFUSES,
}
# What a legacy protocol (writer version 2 to 6, no feature list; older Delta writers)
# binds a writer to: the features of each version up to the table's, the Delta protocol's
# table. The last three bind only a table that uses them (:func:`legacy_features`).
_LEGACY_FEATURES = (
    (2, "appendOnly"),
    (2, "invariants"),
    (3, "checkConstraints"),
    (4, "changeDataFeed"),
    (4, "generatedColumns"),
    (5, "columnMapping"),
    (6, "identityColumns"),
)


def legacy_features(writer: int, metadata: dict[str, Any] | None) -> set[str]:
    """The features a legacy protocol of writer version ``writer`` binds a writer of a
    version with ``metadata`` to (none from version 7: it lists them); a generated or
    identity column and column mapping only where the table has one."""
    if writer >= 7:
        return set()
    fields = delta_fields(metadata) if metadata else []
    keys = {key for f in fields for key in (f.get("metadata") or {})}
    used = {
        "generatedColumns": "delta.generationExpression" in keys,
        "identityColumns": any(key.startswith("delta.identity.") for key in keys),
        "columnMapping": column_mapped((metadata or {}).get("configuration") or {}),
    }
    return {f for v, f in _LEGACY_FEATURES if writer >= v and used.get(f, True)}


_CONSTRAINT = "delta.constraints."  # a CHECK constraint's property: the prefix of its name
_APPEND_ONLY = "delta.appendOnly"
_CHANGE_FEED = "delta.enableChangeDataFeed"
_FEED_COLUMNS = {"_change_type", "_commit_version", "_commit_timestamp"}
ROW_TRACKING = "delta.enableRowTracking"
ROW_DOMAIN = "delta.rowTracking"  # the domain of the row id high-water mark
ROW_IDS_PRESERVED = "delta.rowTracking.preserved"  # a commit's tag: copied rows kept their ids
ROW_ID_PROPERTY = "delta.rowTracking.materializedRowIdColumnName"
ROW_VERSION_PROPERTY = "delta.rowTracking.materializedRowCommitVersionColumnName"


_IDENTITY = "delta.identity."
CURRENT_DEFAULT = "CURRENT_DEFAULT"  # a column default's field metadata key (Delta's)
_HIGH_WATER_MARK = "delta.identity.highWaterMark"


@dataclass(frozen=True)
class Identity:
    """An identity column's rule (delta-spark's ``GENERATED ALWAYS|BY DEFAULT AS
    IDENTITY``): a writer gives a new row ``start + k * step`` past the high-water mark,
    the last value given (none yet: ``start`` first), and moves the mark in the same
    commit; ``always``: a statement may not give the value itself."""

    start: int
    step: int
    high: int | None
    always: bool

    @property
    def first(self) -> int:
        """The value the next new row gets."""
        return self.start if self.high is None else self.high + self.step

    def past(self, low: int, high: int) -> int | None:
        """The mark after a write whose values of the column span ``low``..``high`` (new
        rows' and any a statement gave): the farthest value in the step's direction, if
        it is past the mark; else None (the mark stays)."""
        far = high if self.step > 0 else low
        mark = self.first - self.step
        return far if (far - mark) * self.step > 0 else None


@dataclass(frozen=True)
class Snapshot:
    """What a table version holds: its schema, data files and Delta protocol."""

    version: int
    files: tuple[DataFile, ...]
    root: Root  # a local directory or an S3 prefix (SPEC R44)
    protocol: dict[str, Any] | None = None
    # name -> identity: column mapping's id (stable across renames), else the name
    field_ids: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None  # the version's Delta metaData
    domains: tuple[tuple[str, str], ...] = ()  # its domain metadata: (domain, configuration)

    @cached_property
    def schema(self) -> pa.Schema:
        """The version's Arrow schema (logical names), built at its first use: a statement
        that only lists or counts files (DDL, SHOW) imports no pyarrow."""
        return arrow_schema(self.metadata or {}, str(self.root))

    @property
    def column_names(self) -> list[str]:
        """The version's column names (logical), as :attr:`schema` names them."""
        return [str(f["name"]) for f in delta_fields(self.metadata)] if self.metadata else []

    @property
    def configuration(self) -> dict[str, str]:
        """The version's Delta table properties."""
        return dict((self.metadata or {}).get("configuration") or {})

    def replaces(self, earlier: Snapshot, table: str) -> bool:
        """Whether the table of version ``earlier`` was replaced by this version, as another
        engine replaces a Delta table in one commit (an overwrite with ``overwriteSchema``,
        ``REPLACE TABLE``, delta-rs's ``schema_mode="overwrite"``): a column of
        ``earlier`` is stored as a type this version's cannot read (:func:`reads_as`), or
        is gone (without column mapping only a replacement removes a column; with it, a
        ``DROP COLUMN`` does, and a replacement gives every column a new identity)."""
        if not earlier.metadata or not self.metadata:
            return False
        kinds_then, kinds_now = (_kinds(s.metadata or {}, table) for s in (earlier, self))
        if any(
            key in kinds_now and not reads_as(kind, kinds_now[key])
            for key, kind in kinds_then.items()
        ):
            return True
        kept = kinds_then.keys() & kinds_now.keys()
        return len(kept) < len(kinds_then) and (not self.column_mapped or not kept)

    def _field_values(self, key: str) -> dict[str, str]:
        """Each field's value of the metadata key ``key``, where it has one: name -> value."""
        return {
            str(field["name"]): str(value)
            for field in (delta_fields(self.metadata) if self.metadata else [])
            if (value := (field.get("metadata") or {}).get(key))
        }

    @property
    def generated(self) -> dict[str, str]:
        """The version's generated columns (``delta.generationExpression``): name -> Spark
        SQL over its columns, whose value a writer stores in it (SPEC R40)."""
        return self._field_values("delta.generationExpression")

    @property
    def comments(self) -> dict[str, str]:
        """The version's column comments (a field's ``comment``, as delta-spark's
        ``COMMENT`` and Rewind's ALTER COLUMN ... COMMENT keep it): name -> comment."""
        return self._field_values("comment")

    @property
    def defaults(self) -> dict[str, str]:
        """The version's column defaults (Delta's ``allowColumnDefaults``: a field's
        ``CURRENT_DEFAULT``, Spark SQL, as delta-spark's ``DEFAULT`` and Rewind's keep it):
        name -> expression, the value a row written without one gets (SPEC R40)."""
        return self._field_values(CURRENT_DEFAULT)

    @property
    def kept_metadata(self) -> dict[str, dict[str, str]]:
        """What a copy of the version's columns keeps of each field's metadata (a clone's,
        LIKE's): its comment and its default, by name."""
        kept: dict[str, dict[str, str]] = {}
        for key in ("comment", CURRENT_DEFAULT):
            for name, value in self._field_values(key).items():
                kept.setdefault(name, {})[key] = value
        return kept

    @property
    def lengths(self) -> dict[str, tuple[str, int]]:
        """The version's string columns with a declared length (:data:`DECLARED_TYPE`, a
        CHAR(n) or VARCHAR(n) of Rewind's or delta-spark's): name -> (kind, n). A writer
        stores no longer value in them (SPEC R40)."""
        found = {}
        for field in delta_fields(self.metadata) if self.metadata else []:
            length = declared_length((field.get("metadata") or {}).get(DECLARED_TYPE))
            if length is not None:
                found[str(field["name"])] = length
        return found

    @cached_property
    def identity(self) -> dict[str, Identity]:
        """The version's identity columns (``delta.identity.*`` in a field's metadata)."""
        found = {}
        for field in delta_fields(self.metadata) if self.metadata else []:
            meta = field.get("metadata") or {}
            if f"{_IDENTITY}start" in meta:
                high = meta.get(_HIGH_WATER_MARK)
                found[str(field["name"])] = Identity(
                    int(meta[f"{_IDENTITY}start"]),
                    int(meta[f"{_IDENTITY}step"]),
                    None if high is None else int(high),
                    not meta.get(f"{_IDENTITY}allowExplicitInsert", False),
                )
        return found

    def with_high_water_marks(self, marks: dict[str, int]) -> dict[str, Any]:
        """The version's ``metaData`` with identity columns' marks moved to ``marks``."""
        metadata = dict(self.metadata or {})
        schema = json.loads(metadata["schemaString"])
        for field in schema["fields"]:
            if field["name"] in marks:
                field["metadata"] = {**field["metadata"], _HIGH_WATER_MARK: marks[field["name"]]}
        metadata["schemaString"] = json.dumps(schema, separators=(",", ":"))
        return metadata

    def restored_to(self, then: Snapshot) -> dict[str, Any]:
        """This version's ``metaData`` with the schema and partitioning of ``then``, a
        version of the table another engine replaced since: a restore to ``then`` brings
        them back, the table's id and properties kept (as Delta's own RESTORE)."""
        then_metadata = then.metadata or {}
        return {
            **(self.metadata or {}),
            "schemaString": then_metadata["schemaString"],
            "partitionColumns": list(then_metadata.get("partitionColumns") or []),
        }

    @property
    def by_rewind(self) -> bool:
        """Whether Rewind writes this table's commits itself (:data:`DELTA_RS_REFUSES`)."""
        return bool(self.features & DELTA_RS_REFUSES)

    @cached_property
    def clustering_columns(self) -> list[str]:
        """A clustered table's clustering columns (the ``delta.clustering`` domain: its
        physical names; nested fields as dotted paths)."""
        text = dict(self.domains).get("delta.clustering")
        if not text:
            return []
        return [
            column if isinstance(column, str) else ".".join(column)
            for column in json.loads(text).get("clusteringColumns") or []
        ]

    @property
    def column_mapped(self) -> bool:
        """Whether the version's data files name columns by Delta column mapping's
        physical names (another engine turned it on), not by the schema's names."""
        return column_mapped(self.configuration)

    def physical_name(self, column: str) -> str:
        """The name data files and the log's statistics and partition values give a
        top-level column (:attr:`column_mapped`: its physical name)."""
        return (self.field_ids or {}).get(column, column) if self.column_mapped else column

    @property
    def checks(self) -> dict[str, str]:
        """The version's Delta CHECK constraints (``delta.constraints.<name>``) and column
        invariants (``delta.invariants``): name -> Spark SQL over its columns. A writer
        must not add a row for which one is not true (NULL included, as delta-spark)."""
        found = {
            key.removeprefix(_CONSTRAINT): value
            for key, value in self.configuration.items()
            if key.startswith(_CONSTRAINT)
        }
        for field in delta_fields(self.metadata) if self.metadata else []:
            invariant = (field.get("metadata") or {}).get("delta.invariants")
            if invariant:
                found[f"invariant of {field['name']}"] = json.loads(invariant)["expression"][
                    "expression"
                ]
        return found

    @property
    def partition_columns(self) -> list[str]:
        """The version's partition columns (Delta's names), none for an unpartitioned one."""
        return list((self.metadata or {}).get("partitionColumns") or [])

    @property
    def partitioned(self) -> bool:
        return bool(self.partition_columns)

    @property
    def plain(self) -> bool:
        """Whether the version's rows are exactly its data files' rows: Delta reader
        version 1 (no reader feature: no deletion vectors, no column mapping), no
        partition columns. Delta's own reader reads such a version as those Parquet
        files, so reading them directly is the same read without Delta's per-version
        snapshot job (issue 10 note; benchmarks/time_travel_read.py)."""
        protocol = self.protocol or {}
        return (
            int(str(protocol.get("minReaderVersion") or 1)) <= 1
            and not self.partitioned
            and not any(f.vector for f in self.files)
        )

    @property
    def change_feed(self) -> bool:
        """Delta's change data feed is on: a write that replaces files by copies with some
        rows changed (UPDATE, DELETE, MERGE) writes the changed rows in change files too
        (:func:`rewind.sql.frames.write_frame`), without which the feed's readers would
        see every row of each rewritten file deleted and inserted again. An append, or a
        whole file removed (a TRUNCATE, a restore, as Delta's own RESTORE), reads right
        from the log's actions."""
        return self._on(_CHANGE_FEED)

    def check_column_name(self, table: str, name: str) -> None:
        """Refuse a column (added or renamed) that the change data feed's readers name
        themselves (``_change_type``, ``_commit_version``, ``_commit_timestamp``), as
        delta-spark refuses it on a table with the feed on."""
        if self.change_feed and name.lower() in _FEED_COLUMNS:
            raise InvalidValue(
                f"Column name '{name}' is reserved on table {table}, which has Delta's change "
                f"data feed on ({_CHANGE_FEED} = true): its readers add a column of that name."
            )

    @property
    def stable_row_columns(self) -> tuple[str, str] | None:
        """Row tracking on (``delta.enableRowTracking``): the hidden columns of its data
        files in which a writer that copies or updates rows keeps their stable row ids and
        row commit versions (Delta's materialized row ids, SPEC R40); else None."""
        names = (
            self.configuration.get(ROW_ID_PROPERTY),
            self.configuration.get(ROW_VERSION_PROPERTY),
        )
        if not self._on(ROW_TRACKING) or names[0] is None or names[1] is None:
            return None
        return names[0], names[1]

    @property
    def row_id_mark(self) -> int:
        """The highest row id given so far (Delta's ``rowIdHighWaterMark``; -1: none): a
        row with a higher one was written after this version."""
        domain = json.loads(dict(self.domains).get(ROW_DOMAIN) or "{}")
        return int(domain.get("rowIdHighWaterMark", -1))

    def check_writable(self, table: str, new_files: bool = True, removes: bool = False) -> None:
        """Refuse a write Rewind cannot commit correctly (SPEC R40, R43). ``new_files``:
        the write adds files without partition values, which a partitioned table cannot
        take (Rewind's writes give theirs: ``write_frame`` writes by partition, a restore
        re-adds the table's own files with their values).
        ``removes``: the write removes rows, which an append-only table forbids."""
        if removes and self._on(_APPEND_ONLY):
            raise UnsupportedError(
                f"Table {table} is append-only ({_APPEND_ONLY} = true): a statement that "
                "removes or rewrites its rows (DELETE, UPDATE, MERGE, TRUNCATE, INSERT "
                "OVERWRITE, a restore) cannot be committed to it."
            )
        blocked = sorted(self.features - WRITABLE_FEATURES)
        if blocked:
            raise UnsupportedTableFeature(
                f"Table {table} uses Delta features Rewind cannot write yet "
                f"({', '.join(blocked)}); Rewind reads it at every version, and delta-spark "
                "can write it."
            )
        if new_files and self.partitioned:
            columns = ", ".join(self.partition_columns)
            raise UnsupportedTableFeature(
                f"Table {table} is partitioned (by {columns}): a data file without "
                "partition values cannot be committed to it."
            )

    @property
    def features(self) -> set[str]:
        """The Delta features the version's protocol binds a writer to: those it lists,
        or those its legacy writer version implies (:func:`legacy_features`)."""
        protocol = self.protocol or {}
        listed = {*(protocol.get("writerFeatures") or []), *(protocol.get("readerFeatures") or [])}
        writer = int(str(protocol.get("minWriterVersion") or 1))
        return listed | legacy_features(writer, self.metadata)

    def _on(self, key: str) -> bool:
        return self.configuration.get(key, "").lower() == "true"

    @property
    def uris(self) -> list[str]:
        return [str(location.data_file(self.root, f.path)) for f in self.files]

    @property
    def rows(self) -> int:
        return sum(f.num_records - f.deleted_rows for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)


def _kinds(metadata: dict[str, Any], table: str) -> dict[str, str]:
    """Column identity (:func:`log.field_ids`) -> Spark type, of a Delta ``metaData``."""
    ids = field_ids(metadata)
    return {ids[name]: kind for name, kind, _ in column_types(metadata, table)}
