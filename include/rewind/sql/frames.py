"""Spark DataFrames over table versions, and writing DataFrames as new data files.

Executors read and write the table directories directly, so the same code runs on
``local[*]`` and on a standalone cluster sharing the warehouse (ARCHITECTURE). A table on
S3 is read and written the same way, through s3a (``s3://`` is s3a in every Rewind
session, SPEC R44); its staged files get their place by a server-side copy.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import unquote

from rewind.errors import InvalidValue
from rewind.spark import functions, to_arrow
from rewind.spark_errors import (
    CHECK_VIOLATION,
    IDENTITY_VIOLATION,
    KIND_VIOLATION,
    LENGTH_VIOLATION,
    NOT_NULL_VIOLATION,
)
from rewind.statement import Context
from rewind.storage import location, log
from rewind.storage.columns import Column
from rewind.storage.delta import STAGING
from rewind.storage.location import Root
from rewind.storage.snapshot import DataFile, Identity, Snapshot
from rewind.types import SEMI_STRUCTURED, VARIANT, arrow_spark

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType

FILE_COLUMN = "__rw_file"
ROW_COLUMN = "__rw_row"
# Under row tracking, a target row's stable row id and row commit version (SPEC R40).
ROW_ID_COLUMN = "__rw_row_id"
ROW_VERSION_COLUMN = "__rw_row_version"
# Delta's change data feed: a change file's rows carry their kind of change in this column
# and live in this folder of the table (SPEC R40); a row that is the table's after the
# change (an update's new values, an insert) is in the version's data files too.
CHANGE_TYPE = "_change_type"
CHANGE_DATA = "_change_data/"
_IN_THE_VERSION = ("update_postimage", "insert")


def quote(name: str) -> str:
    """A Spark SQL identifier in backticks."""
    return "`" + name.replace("`", "``") + "`"


_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def version_frame(
    ctx: Context, snap: Snapshot, columns: Sequence[Column], *, with_file: bool = False
) -> DataFrame:
    """The rows of a table version, projected onto the *current* columns (SPEC R18):
    columns added since the version read as NULL; dropped columns are not returned.

    A version that uses any Delta reader feature (deletion vectors, column mapping, ...)
    or partition columns is read through Delta Lake (``versionAsOf``, SPEC R43). A plain
    one (:attr:`Snapshot.plain`) is read as the Parquet files the log replay found, which
    is what Delta's reader reads for it, without rebuilding the version's snapshot in a
    Spark job (4x the time of a warm read). The target of Rewind's own UPDATE / DELETE /
    MERGE (``with_file``) needs the files' row indexes: a version whose files carry no
    deletion vector is plain but for its partition columns (:meth:`Snapshot.
    check_writable`) and read as Parquet, its partition values from the log (Delta's
    reader gives no row index for it); one whose files carry some is read through Delta,
    which drops their deleted rows and gives each row's file and index in it. Files read
    as Parquet under column mapping are read by their physical names (:func:`_file_schema`).
    Under row tracking (:attr:`Snapshot.stable_row_columns`) the target's rows also carry
    their stable row ids and row commit versions, which a rewrite keeps (SPEC R40).
    """
    spark = ctx.spark()
    F = functions(spark)
    vectors = any(f.vector for f in snap.files)
    as_parquet = (with_file and not vectors) or snap.plain
    stable = snap.stable_row_columns if with_file else None
    carried = [FILE_COLUMN, ROW_COLUMN] if with_file else []
    if as_parquet:
        schema = _file_schema(snap, stable)
        frame = (
            spark.read.schema(schema).parquet(*snap.uris)
            if snap.files
            else spark.createDataFrame([], schema)
        )
    else:
        frame = spark.read.format("delta").option("versionAsOf", snap.version).load(str(snap.root))
    if with_file:
        # An empty version has no files, hence no _metadata: the columns stay typed.
        file, row = (
            (F.col("_metadata.file_path"), F.col("_metadata.row_index"))
            if snap.files
            else (F.lit(None).cast("string"), F.lit(None).cast("bigint"))
        )
        ids = []
        if stable and not as_parquet:  # Delta's reader gives them (a version with files)
            ids = [
                F.col("_metadata.row_id").alias(ROW_ID_COLUMN),
                F.col("_metadata.row_commit_version").alias(ROW_VERSION_COLUMN),
            ]
        frame = frame.select("*", file.alias(FILE_COLUMN), row.alias(ROW_COLUMN), *ids)
        carried += [ROW_ID_COLUMN, ROW_VERSION_COLUMN] if stable else []
    if as_parquet and snap.column_mapped:  # the files' physical names, read as the schema's
        frame = frame.select(
            *[
                F.col(quote(snap.physical_name(f.name))).cast(arrow_spark(f.type)).alias(f.name)
                for f in snap.schema
            ],
            *[F.col(quote(c)) for c in (*carried[:2], *(stable or ()))],
        )
    if as_parquet and with_file and ((snap.partition_columns and snap.files) or stable):
        frame = _with_file_values(frame, snap, stable)
    present = set(snap.schema.names)
    projection: list[SparkColumn] = [
        (F.col(quote(c.physical)) if c.physical in present else F.lit(None))
        .cast(c.spark)
        .alias(c.name)
        for c in columns
    ]
    return frame.select(*projection, *[F.col(c) for c in carried])


def _with_file_values(
    frame: DataFrame, snap: Snapshot, stable: tuple[str, str] | None
) -> DataFrame:
    """``frame`` (a version's files read as Parquet, each row with its ``__rw_file`` and
    its index in it) with what its rows take from their file's action in the log (the
    file names Spark reads them under, collected first: one small job): the partition
    columns, which are in the log, not in the files; under row tracking (``stable``: the
    files' hidden columns), each row's stable row id and row commit version, the ones
    materialized in the file, else the file's first row id plus the row's index and its
    default row commit version (Delta's reader requirements, SPEC R40)."""
    F = functions(frame.sparkSession)
    columns = snap.partition_columns
    rows = [
        (
            name,
            *[dict(file.partition_values).get(snap.physical_name(c)) for c in columns],
            file.base_row_id,
            file.row_commit_version,
        )
        for name, file in files_in(frame, snap)
    ]
    base, version = "__rw_base_row_id", "__rw_default_version"
    names = [f"{quote(name)} string" for name in (FILE_COLUMN, *columns)]
    values = frame.sparkSession.createDataFrame(
        rows, ", ".join([*names, f"{base} bigint", f"{version} bigint"])
    )
    kinds = {f.name: arrow_spark(f.type) for f in snap.schema}
    typed = values.select(
        F.col(FILE_COLUMN),
        *[F.col(quote(c)).cast(kinds[c]).alias(c) for c in columns],
        F.col(base),
        F.col(version),
    )
    joined = frame.drop(*columns).join(F.broadcast(typed), FILE_COLUMN)
    if stable:
        row_id, row_version = (F.col(quote(c)) for c in stable)
        joined = joined.select(
            "*",
            F.coalesce(row_id, F.col(base) + F.col(ROW_COLUMN)).alias(ROW_ID_COLUMN),
            F.coalesce(row_version, F.col(version)).alias(ROW_VERSION_COLUMN),
        ).drop(*stable)
    return joined.drop(base, version)


def _file_schema(snap: Snapshot, stable: tuple[str, str] | None = None) -> str | StructType:
    """The schema of a version's data files: its columns (DDL), or, where column mapping
    names them in the files (:attr:`Snapshot.column_mapped`), :func:`_physical_schema`;
    and the hidden columns of materialized row ids (``stable``), where a writer kept
    them."""
    hidden = list(stable or ())
    if snap.column_mapped:
        schema = _physical_schema(snap)
        for name in hidden:
            schema = schema.add(name, "long")
        return schema
    return ", ".join(
        [f"{quote(f.name)} {arrow_spark(f.type)}" for f in snap.schema]
        + [f"{quote(name)} bigint" for name in hidden]
    )


def _physical_schema(snap: Snapshot) -> StructType:
    """A column-mapped version's columns as its data files name them (SPEC R40, R43):
    physical names, nested fields too, each with its column id as Parquet field id."""
    from pyspark.sql.types import StructType

    return StructType.fromJson(log.physical_schema(snap.metadata or {}))


def files_in(frame: DataFrame, snap: Snapshot) -> list[tuple[str, DataFile]]:
    """The data files ``frame``'s rows come from (its ``__rw_file``, :func:`version_frame`
    ``with_file``), with the name Spark reads each under: one small job."""
    names = [str(r[0]) for r in frame.select(FILE_COLUMN).distinct().collect()]
    return list(zip(names, files_by_uri(snap, names), strict=True))


def files_by_uri(snap: Snapshot, uris: Sequence[str]) -> list[DataFile]:
    """The data files behind Spark's ``_metadata.file_path`` values."""
    known = {location.canonical(location.data_file(snap.root, f.path)): f for f in snap.files}
    return [known[location.identity(uri)] for uri in uris]


def _stored_as(
    F: ModuleType, value: SparkColumn, given: DataType, target: pa.DataType
) -> SparkColumn:
    """``value`` cast to a column's type.

    A fraction stored into an integer column is rounded half away from zero, as
    Snowflake does for NUMBER(p,0), where a plain Spark cast would truncate (SPEC R26),
    and so is one written as text ('2.6', which Spark's cast refused).
    An object (OBJECT_CONSTRUCT, a struct) stored into an OBJECT column goes by its keys,
    as Snowflake casts it (Spark's cast goes by position: ``OBJECT_CONSTRUCT('y', 'c',
    'x', 3)`` put 'c' into x); into a MAP column its keys become the map's; JSON text
    (PARSE_JSON) stored into an ARRAY, OBJECT or MAP column is parsed into it (Spark
    cannot cast text to them).
    """
    import pyarrow as pa
    from pyspark.sql.types import DecimalType, DoubleType, FloatType, StringType, StructType

    kind = arrow_spark(target)
    if kind == VARIANT.spark:
        return _as_variant(F, value, given)
    if pa.types.is_integer(target) and isinstance(given, DecimalType | DoubleType | FloatType):
        value = F.round(value)
    elif pa.types.is_integer(target) and isinstance(given, StringType):  # '2.6': 3
        value = F.round(value.cast("decimal(38,10)"))
    elif isinstance(given, StructType) and pa.types.is_struct(target):
        value = _by_key(F, value, given, target)
    elif isinstance(given, StructType) and pa.types.is_map(target):
        keys = F.array(*[F.lit(f.name) for f in given.fields])
        item = arrow_spark(target.item_type)
        items = F.array(*[value.getField(f.name).cast(item) for f in given.fields])
        value = F.when(value.isNull(), None).otherwise(F.map_from_arrays(keys, items))
    elif isinstance(given, StringType) and pa.types.is_struct(target):
        value = _parsed_object(F, value, target)
    elif isinstance(given, StringType) and pa.types.is_nested(target):
        value = F.from_json(value, kind)
    return value.cast(kind)


def _as_variant(F: ModuleType, value: SparkColumn, given: DataType) -> SparkColumn:
    """``value`` stored into a VARIANT column: JSON text (PARSE_JSON's, a path's: Rewind's
    semi-structured values are text) is parsed into the value it writes, other text is a
    string; an array, object or map becomes the same value, a number, boolean or date
    itself; a variant is stored as it is, bytes and all (another engine's, its types)."""
    from pyspark.sql.types import ArrayType, MapType, StringType, StructType, VariantType

    if isinstance(given, VariantType):
        return value
    if isinstance(given, StringType):
        return F.coalesce(F.try_parse_json(value), value.cast("variant"))
    if isinstance(given, ArrayType | MapType | StructType):
        return F.to_variant_object(value)
    return value.cast("variant")


def _of_kind(F: ModuleType, value: SparkColumn, column: Column) -> SparkColumn:
    """``value`` stored into ``column``; into a semi-structured ARRAY or OBJECT column (a
    variant, :data:`rewind.types.SEMI_STRUCTURED`) a value of another kind (an object, a
    number, JSON's null) fails the write, as Snowflake's cast to the column's type does."""
    if column.column_type not in SEMI_STRUCTURED.values():
        return value
    named = column.name.replace("'", "''")
    wrong = F.raise_error(F.lit(f"{KIND_VIOLATION} '{named}' ({column.type})"))
    of_kind = F.startswith(F.schema_of_variant(value), F.lit(column.type))
    return F.when(value.isNull() | of_kind, value).otherwise(wrong)


def _parsed_object(F: ModuleType, text: SparkColumn, target: pa.StructType) -> SparkColumn:
    """JSON text (PARSE_JSON's) as the OBJECT column type ``target``: each field the
    object's key of its name (else the one that differs only in case: a declared field is
    upper-cased, SPEC R4), NULL for a key it has not; text that is no JSON object fails
    the write (it filled every field with NULL)."""
    import pyarrow as pa

    entries = F.from_json(text, "map<string,string>")
    fields = []
    for field in target:
        name = field.name
        same = F.upper(F.lit(name))
        folded = F.map_values(F.map_filter(entries, lambda k, _v: F.upper(k) == same))  # noqa: B023
        raw = F.coalesce(entries.getItem(name), F.try_element_at(folded, F.lit(1)))
        kind = arrow_spark(field.type)
        typed = F.from_json(raw, kind) if pa.types.is_nested(field.type) else raw.cast(kind)
        fields.append(typed.alias(name))
    not_object = F.raise_error(F.lit("An OBJECT column holds JSON objects: the text is not one."))
    return (
        F.when(text.isNull(), None).when(entries.isNull(), not_object).otherwise(F.struct(*fields))
    )


def _by_key(
    F: ModuleType, value: SparkColumn, given: DataType, target: pa.StructType
) -> SparkColumn:
    """The struct ``value`` as the fields of ``target`` by their names (the same name, else
    the one that differs only in case), NULL for a key it has not; as it is where no name
    matches (a struct of unnamed fields: by position)."""
    names = [f.name for f in given.fields]  # type: ignore[attr-defined]
    folded = {n.upper(): n for n in names}
    found = [t.name if t.name in names else folded.get(t.name.upper()) for t in target]
    if not any(found):
        return value
    fields = [
        (value.getField(name) if name is not None else F.lit(None))
        .cast(arrow_spark(t.type))
        .alias(t.name)
        for name, t in zip(found, target, strict=True)
    ]
    return F.when(value.isNull(), None).otherwise(F.struct(*fields))


def write_frame(
    ctx: Context,
    table_root: Root,
    frame: DataFrame,
    columns: Sequence[Column],
    schema: pa.Schema,
    rules: Snapshot | None = None,
    *,
    inserts: bool = False,
    changes: bool = False,
    stable_rows: bool = False,
) -> list[DataFile]:
    """Write ``frame`` (logical column names) as new data files of a table.

    Every physical column of ``schema`` is written, NULL where no current column
    maps to it; a NULL in a column the Delta schema says is not nullable fails the write
    (nothing is committed, SPEC R28). ``rules``: the version of the table the rows go
    into, whose rules bind them (SPEC R40): a row for which one of its CHECK constraints
    or invariants (:attr:`Snapshot.checks`) is not true fails the write; a generated
    column (:attr:`Snapshot.generated`) holds its expression's value, as delta-spark
    computes it (a new row's value given must be that value, else the write fails, as
    delta-spark's check fails it; a rewrite's rows get it computed again); with
    ``inserts`` (the rows are new, not a rewrite's), an identity column
    (:attr:`Snapshot.identity`) gets its next values (:func:`_numbered`); a partitioned
    table's rows are written by partition, each file with its rows' partition values and without
    those columns, as Delta's writers write them (in the table root, not in
    ``column=value/`` folders, which Delta leaves to convention: readers read the log's
    values). Files are staged, then moved into the table root with unique names; the
    caller commits them. Empty files are dropped.

    ``changes``: a write to a table with Delta's change data feed on, whose ``frame`` also
    holds the rows a statement changed, each with its kind in ``_change_type`` (NULL: a
    row kept as it was). Its rows are computed once and written twice: the table's rows
    (kept ones, an update's new values, inserts) as data files, the changed ones with
    their kind as change files in ``_change_data/`` (:data:`CHANGE_DATA`), the values of
    both the same, identity and generated columns included.

    ``stable_rows``: a rewrite of a table with row tracking on, whose ``frame`` carries
    each row's stable row id and row commit version (``__rw_row_id``, ``__rw_row_version``:
    NULL for a row the statement updated), which the data files keep in the table's
    hidden columns for them (:attr:`Snapshot.stable_row_columns`; Delta's materialized
    row ids, SPEC R40).

    Returns:
        The new files, inside ``table_root``, with their sizes and row counts (change
        files under :data:`CHANGE_DATA`: :func:`change_files`).
    """
    F = functions(frame.sparkSession)
    by_physical = {c.physical: c for c in columns}
    given = {f.name: f.dataType for f in frame.schema.fields}
    generated = rules.generated if rules is not None else {}
    lengths = rules.lengths if rules is not None and inserts else {}  # a rewrite's: its own

    def stored(field: pa.Field) -> SparkColumn:
        column = by_physical.get(field.name)
        value = (
            _of_kind(
                F, _stored_as(F, F.col(quote(column.name)), given[column.name], field.type), column
            )
            if column is not None
            else F.lit(None).cast(arrow_spark(field.type))
        )
        return value.alias(field.name)

    def checked(field: pa.Field) -> SparkColumn:
        value = F.col(quote(field.name))
        column = by_physical.get(field.name)
        named = (column.name if column is not None else field.name).replace("'", "''")
        if field.name in generated:  # over the stored columns: the table's own names
            computed = F.expr(generated[field.name]).cast(arrow_spark(field.type))
            # a new row's value given must be the expression's, as delta-spark checks it
            differs = F.raise_error(
                F.lit(f"{CHECK_VIOLATION} 'generated column {named}' ({generated[field.name]})")
            )
            value = (
                F.when(value.isNull() | value.eqNullSafe(computed), computed).otherwise(differs)
                if inserts
                else computed
            )
        if not field.nullable:  # Delta's protocol: no writer puts NULL there (SPEC R40)
            value = F.coalesce(value, F.raise_error(F.lit(f"{NOT_NULL_VIOLATION} '{named}'")))
        return within_length(F, value, named, lengths.get(field.name)).alias(field.name)

    hidden = rules.stable_row_columns if rules is not None and stable_rows else None
    carried = [F.col(CHANGE_TYPE)] if changes else []
    carried += [F.col(ROW_ID_COLUMN), F.col(ROW_VERSION_COLUMN)] if hidden else []
    written_frame = frame.select(*[stored(f) for f in schema], *carried)
    if inserts and rules is not None and rules.identity:
        written_frame = _numbered(F, written_frame, rules.identity, by_physical)
    written_frame = written_frame.select(*[checked(f) for f in schema], *carried)
    if rules is not None and rules.checks:
        written_frame = _checked(F, written_frame, rules.checks)
    if rules is not None and rules.column_mapped:
        written_frame = _physical(F, written_frame, rules)
    if hidden:
        renamed = dict(zip((ROW_ID_COLUMN, ROW_VERSION_COLUMN), hidden, strict=True))
        written_frame = written_frame.withColumnsRenamed(renamed)
    named: Callable[[str], str] = rules.physical_name if rules is not None else lambda c: c
    partitions = [named(c) for c in rules.partition_columns] if rules is not None else []
    staging = table_root / STAGING / f"{ctx.query_id}-{uuid.uuid4().hex[:8]}"
    ctx.undo.append(lambda: _discard(staging))
    outputs = _staged(F, written_frame, staging, partitions, changes=changes, hidden=hidden)
    written: list[DataFile] = []
    ctx.undo.append(lambda: _unlink(table_root, written))
    # Bounds a reader or the commit needs: a clustered table's files are skipped by them,
    # an identity column's mark moves past them (rewind.sql.tables.commit_files).
    bounded = [*rules.clustering_columns, *map(named, rules.identity)] if rules else []
    kinds = {named(f.name): f.type for f in schema}
    try:
        for folder, prefix in outputs:
            for part, under, size in location.parts(folder, nested=bool(partitions)):
                footer = location.parquet_metadata(part)
                if footer.num_rows == 0:
                    continue
                name = f"{prefix}{uuid.uuid4()}.parquet"
                location.move(part, table_root / name)
                values = _partition_values(under, kinds)
                stats = _column_stats(footer, bounded) if bounded else None
                written.append(DataFile(name, size, footer.num_rows, values, stats=stats))
    finally:
        _discard(staging)
    return written


def _column_stats(footer: pq.FileMetaData, columns: Sequence[str]) -> str:
    """Delta's statistics of a new file (``add.stats``) with the least and greatest value
    and the NULL count of each of ``columns`` (a clustered table's clustering columns,
    which its writers must give, SPEC R40; identity columns), from its Parquet footer. Bounds, not
    exact values (``tightBounds`` false: a timestamp's are rounded out to milliseconds,
    as Delta keeps them); a column whose type has no bound here gets its NULL count."""

    low: dict[str, str] = {}
    high: dict[str, str] = {}
    nulls: dict[str, int] = {}
    where = {footer.schema.column(i).path: i for i in range(footer.num_columns)}
    kinds = footer.schema.to_arrow_schema()
    for name in columns:
        if name not in where or name not in kinds.names:
            continue
        groups = [
            (footer.row_group(g).num_rows, footer.row_group(g).column(where[name]).statistics)
            for g in range(footer.num_row_groups)
        ]
        if any(s is None or not s.has_null_count for _, s in groups):
            continue
        nulls[name] = sum(int(s.null_count) for _, s in groups)
        if any(not s.has_min_max and s.null_count < rows for rows, s in groups):
            continue  # a row group with values but no bounds: its NULL count only
        bounded = [s for _, s in groups if s.has_min_max]
        kind = kinds.field(name).type
        least = _stat_value(min(s.min for s in bounded), kind, up=False) if bounded else None
        most = _stat_value(max(s.max for s in bounded), kind, up=True) if bounded else None
        if least is not None and most is not None:
            low[name], high[name] = least, most

    def obj(values: Mapping[str, object]) -> str:
        return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in values.items()) + "}"

    return (
        f'{{"numRecords":{footer.num_rows},"minValues":{obj(low)},"maxValues":{obj(high)},'
        f'"nullCount":{obj(nulls)},"tightBounds":false}}'
    )


def _stat_value(value: object, kind: pa.DataType, *, up: bool) -> str | None:
    """A bound as Delta's statistics hold it (JSON text): a number as it is, a string or
    a date as text, a timestamp as UTC to the millisecond, rounded down for a least value
    and up for a greatest; None for a type without one here: a float (Parquet's bounds
    leave NaN out, which Spark orders above every number), a wall-clock timestamp,
    binary, boolean."""
    import pyarrow as pa

    if pa.types.is_integer(kind) or pa.types.is_decimal(kind):
        return str(value)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return json.dumps(value)
    if pa.types.is_date(kind):
        return json.dumps(value.isoformat())  # type: ignore[attr-defined]
    if pa.types.is_timestamp(kind) and kind.tz is not None and isinstance(value, datetime):
        micros = value.microsecond % 1000
        at = value - timedelta(microseconds=micros)
        if up and micros:
            at += timedelta(milliseconds=1)
        at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)  # an instant
        return json.dumps(f"{at:%Y-%m-%dT%H:%M:%S}.{at.microsecond // 1000:03d}Z")
    return None


def _staged(
    F: ModuleType,
    rows: DataFrame,
    staging: Root,
    partitions: list[str],
    *,
    changes: bool,
    hidden: tuple[str, str] | None,
) -> list[tuple[Root, str]]:
    """Write :func:`write_frame`'s ``rows`` (physical columns) into ``staging`` (a folder
    of the table's ``_rewind_staging``) by partition; returns each folder written and the
    name prefix of its files. With ``changes``, the rows are computed once and written
    twice: the version's (kept ones, an update's new values, inserts, without their
    ``_change_type``) and the changed ones for the change files (without the ``hidden``
    row-tracking columns, which no change file holds), whose folder in the table is made
    (:data:`CHANGE_DATA`)."""
    if not changes:
        rows.write.partitionBy(*partitions).parquet(str(staging))
        return [(staging, "part-")]
    kind = F.col(CHANGE_TYPE)
    rows = rows.localCheckpoint()  # one computation for both writes
    outputs: list[tuple[Root, str]] = [
        (staging / "data", "part-"),
        (staging / "changes", f"{CHANGE_DATA}cdc-"),
    ]
    kept = rows.where(kind.isNull() | kind.isin(*_IN_THE_VERSION)).drop(CHANGE_TYPE)
    kept.write.partitionBy(*partitions).parquet(str(outputs[0][0]))
    changed = rows.where(kind.isNotNull()).drop(*(hidden or ()))
    changed.write.partitionBy(*partitions).parquet(str(outputs[1][0]))
    location.make_dir(staging.parent.parent / CHANGE_DATA)
    return outputs


def write_into(
    ctx: Context,
    base: Snapshot,
    frame: DataFrame,
    columns: Sequence[Column],
    *,
    inserts: bool = False,
    changes: bool = False,
    stable_rows: bool = False,
) -> list[DataFile]:
    """Rows for the table whose current version is ``base``: :func:`write_frame` into its
    folder, under its schema and its rules; ``inserts``: new rows (INSERT, a MERGE's
    inserts), not the rows a rewrite keeps; ``changes``: with the change feed's rows;
    ``stable_rows``: with their stable row ids."""
    return write_frame(
        ctx,
        base.root,
        frame,
        columns,
        base.schema,
        base,
        inserts=inserts,
        changes=changes,
        stable_rows=stable_rows,
    )


def change_files(files: Sequence[DataFile]) -> tuple[list[DataFile], list[DataFile]]:
    """:func:`write_frame`'s files as the version's data files and its change files."""
    data = [f for f in files if not f.path.startswith(CHANGE_DATA)]
    return data, [f for f in files if f.path.startswith(CHANGE_DATA)]


_GIVEN = (
    "the table gives its values: leave it out of the column list, or restore the table to "
    "bring rows back with theirs"
)


def _numbered(
    F: ModuleType,
    stored: DataFrame,
    identity: Mapping[str, Identity],
    by_physical: Mapping[str, Column],
) -> DataFrame:
    """``stored`` (new rows, physical columns) with their identity columns' values, as
    delta-spark gives them: a row without one gets the next value past the column's mark,
    in the order the rows come; a value the statement gave stays where the column is
    BY DEFAULT and fails the write where it is ALWAYS (SPEC R40). The commit moves the
    mark past them (:func:`rewind.sql.tables.commit_files`)."""
    seq = "__rw_seq"
    numbered = stored.withColumn(seq, F.monotonically_increasing_id())

    def value(name: str) -> SparkColumn:
        rule, given = identity[name], F.col(quote(name))
        count = F.expr(
            f"SUM(CASE WHEN {quote(name)} IS NULL THEN 1 ELSE 0 END) OVER (ORDER BY {seq} "
            "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
        )
        new = (F.lit(rule.first) + F.lit(rule.step) * (count - 1)).cast("bigint")
        if not rule.always:
            return F.coalesce(given, new)
        column = by_physical.get(name)
        named = (column.name if column is not None else name).replace("'", "''")
        refused = F.raise_error(F.lit(f"{IDENTITY_VIOLATION} '{named}' ({_GIVEN})"))
        return F.when(given.isNull(), new).otherwise(refused)

    return numbered.select(
        *[(value(c) if c in identity else F.col(quote(c))).alias(c) for c in stored.columns]
    )


def _physical(F: ModuleType, stored: DataFrame, snap: Snapshot) -> DataFrame:
    """``stored`` (a column-mapped table's new rows, under its schema's names) as its
    data files hold them: each column, nested fields too, under its physical name and with
    its column id as Parquet field id (Delta's writer requirements for column mapping,
    SPEC R40)."""
    physical = _physical_schema(snap)
    return stored.select(
        *[
            F.col(quote(name)).cast(field.dataType).alias(field.name, metadata=field.metadata)
            for name, field in zip(snap.schema.names, physical.fields, strict=True)
        ],
        *[F.col(quote(c)) for c in stored.columns[len(physical.fields) :]],  # write_frame's
    )


def _partition_values(
    name: str, kinds: Mapping[str, pa.DataType]
) -> tuple[tuple[str, str | None], ...]:
    """The partition values of a file Spark wrote at ``name`` (``REGION=EU/DAY=2026-11-01/
    part-...``): Spark escapes a value's special characters as ``%XX`` and writes NULL (and
    an empty string) as Hive's default partition; Delta's log holds the value, or null,
    a timestamp's as the instant in UTC (``2026-11-01T10:30:00.000000Z``, as delta-spark
    writes it: Spark's path has the session's wall clock, UTC, which a reader in another
    time zone would take for its own)."""
    import pyarrow as pa

    values = []
    for folder in name.split("/")[:-1]:
        column, _, text = folder.partition("=")
        column, value = unquote(column), None if text == _HIVE_NULL else unquote(text)
        kind = kinds[column]
        if value is not None and pa.types.is_timestamp(kind) and kind.tz is not None:
            value = datetime.fromisoformat(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        values.append((column, value))
    return tuple(values)


def _checked(F: ModuleType, stored: DataFrame, checks: Mapping[str, str]) -> DataFrame:
    """``stored`` (physical columns), failing the write on a row for which a Delta CHECK
    constraint or invariant is not true: NULL fails it too, as in delta-spark's writer
    (SPEC R40)."""
    first, *rest = stored.columns
    value = F.col(quote(first))
    for check, expression in checks.items():
        holds = F.expr(expression).eqNullSafe(F.lit(True))
        message = f"{CHECK_VIOLATION} '{check}' ({expression})"
        value = F.when(holds, value).otherwise(F.raise_error(F.lit(message)))
    return stored.select(value.alias(first), *[F.col(quote(c)) for c in rest])


def within_length(
    F: ModuleType,
    value: SparkColumn,
    named: str,
    length: tuple[str, int] | None,
    given: SparkColumn | None = None,
) -> SparkColumn:
    """``value``, a string for a column declared ``length`` (:attr:`Snapshot.lengths`;
    None: of any length; ``named``: its name, quotes doubled) in a row the statement
    gives values (``given``, default every row): a longer string fails the write, as in
    Snowflake and delta-spark (nothing is written, SPEC R28, R40). A shorter CHAR is
    stored as it is, as Spark's writer stores it (its readers pad it); a value the
    statement did not give (a rewrite's row it keeps) is kept as it is."""
    if length is None:
        return value
    kind, limit = length
    too_long = F.length(value) > limit
    if given is not None:
        too_long = given & too_long
    error = F.raise_error(F.lit(f"{LENGTH_VIOLATION} '{named}' ({kind}({limit}))"))
    return F.when(too_long, error).otherwise(value)


def _unlink(root: Root, files: Sequence[DataFile]) -> None:
    for file in files:
        location.unlink(root / file.path)


def _discard(staging: Root) -> None:
    """Remove a staging directory, and the staging root once empty (else another
    statement is staging): a write that failed half-way (e.g. a bad cast in a Spark task)
    leaves nothing (SPEC R28)."""
    location.remove_tree(staging)
    location.remove_if_empty(staging.parent)


def collect(frame: DataFrame) -> tuple[list[str], list[list[object]]]:
    """Column names and rows of a result, with aware UTC timestamps; a MAP's value is a
    dict (Arrow gives its pairs)."""
    table = to_arrow(frame)
    try:
        columns = [c.to_pylist(maps_as_pydicts="lossy") for c in table.columns]
    except OverflowError:  # Python's dates end at the years 1 and 9999, Spark's do not
        raise InvalidValue(
            "Date out of range: a date or timestamp of the result is before the year 1 or "
            "after 9999."
        ) from None
    return table.column_names, [list(row) for row in zip(*columns, strict=True)]
