"""A database's ``INFORMATION_SCHEMA``, Snowflake's views of what it holds: ``TABLES``,
``COLUMNS``, ``SCHEMATA`` and ``DATABASES`` (``<database>.INFORMATION_SCHEMA.<view>``, or
``INFORMATION_SCHEMA.<view>`` for the current database); and BigQuery's, in its dialect
and columns: a dataset's ``TABLES``, ``COLUMNS``, ``TABLE_OPTIONS`` and ``TABLE_SNAPSHOTS``
(``[project.]dataset.INFORMATION_SCHEMA.<view>``; a region's, ``region-xx``, the
project's), a project's ``SCHEMATA`` and ``SCHEMATA_OPTIONS``.

Every role may read them; each lists only what the role can see (SPEC R37), and live
objects only (dropped ones are SHOW ... HISTORY's, SPEC R22). The rows are built on the
driver from the catalog and each table's current version, with the same figures as
SHOW TABLES, DESCRIBE TABLE and SHOW COLUMNS (:mod:`rewind.sql.show`), and bound as Spark
frames, so SELECT filters, joins and aggregates them like any table. LAST_DDL and
LAST_DDL_BY come from the statement log (SPEC R36); what Rewind does not record is NULL,
never a made-up value.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from rewind import security
from rewind.catalog.models import CatalogObject
from rewind.constants import DATABASE, INFORMATION_SCHEMA, SCHEMA, TABLE
from rewind.errors import ObjectNotFound
from rewind.sql import names, query_history
from rewind.sql.show import described, table_values, type_json
from rewind.sql.tables import snapshot
from rewind.sql.values import layout_columns
from rewind.types import TypeNames, declared_length, type_name

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from rewind.statement import Context

_YES_NO = {True: "YES", False: "NO"}
TABLES_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, TABLE_OWNER STRING, "
    "TABLE_TYPE STRING, IS_TRANSIENT STRING, CLUSTERING_KEY STRING, ROW_COUNT BIGINT, "
    "BYTES BIGINT, RETENTION_TIME BIGINT, CREATED TIMESTAMP, LAST_ALTERED TIMESTAMP, "
    "LAST_DDL TIMESTAMP, LAST_DDL_BY STRING, AUTO_CLUSTERING_ON STRING, COMMENT STRING, "
    "IS_TEMPORARY STRING, IS_ICEBERG STRING, IS_DYNAMIC STRING"
)
COLUMNS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, COLUMN_NAME STRING, "
    "ORDINAL_POSITION BIGINT, COLUMN_DEFAULT STRING, IS_NULLABLE STRING, DATA_TYPE STRING, "
    "CHARACTER_MAXIMUM_LENGTH BIGINT, CHARACTER_OCTET_LENGTH BIGINT, NUMERIC_PRECISION BIGINT, "
    "NUMERIC_PRECISION_RADIX BIGINT, NUMERIC_SCALE BIGINT, DATETIME_PRECISION BIGINT, "
    "IS_IDENTITY STRING, IDENTITY_START STRING, IDENTITY_INCREMENT STRING, COMMENT STRING"
)
SCHEMATA_SCHEMA = (
    "CATALOG_NAME STRING, SCHEMA_NAME STRING, SCHEMA_OWNER STRING, IS_TRANSIENT STRING, "
    "IS_MANAGED_ACCESS STRING, RETENTION_TIME BIGINT, CREATED TIMESTAMP, "
    "LAST_ALTERED TIMESTAMP, COMMENT STRING"
)
DATABASES_SCHEMA = (
    "DATABASE_NAME STRING, DATABASE_OWNER STRING, IS_TRANSIENT STRING, COMMENT STRING, "
    "CREATED TIMESTAMP, LAST_ALTERED TIMESTAMP, RETENTION_TIME BIGINT, TYPE STRING"
)


def is_view(parts: list[str] | tuple[str, ...]) -> bool:
    """Whether a table reference names ``[<database>.]INFORMATION_SCHEMA.<view>``, or in
    BigQuery's dialect ``[<scope>.]INFORMATION_SCHEMA.<view>`` (:func:`_bigquery_view`)."""
    snowflake = len(parts) in (2, 3) and parts[-2].upper() == INFORMATION_SCHEMA
    return snowflake or _bigquery_view(parts) is not None


def view(ctx: Context, parts: list[str], call: dict[str, exp.Expression] | None) -> DataFrame:
    """The frame of an INFORMATION_SCHEMA view (:func:`is_view`), or of a call of a table
    function of it (``call``: its arguments, :mod:`rewind.sql.query_history`).

    Raises:
        ObjectNotFound: an unknown view, or a database or dataset the role cannot see.
        NoCurrentContainer: no database named and none current.
    """
    bigquery = _bigquery_view(parts)
    if bigquery is not None:
        return _bigquery(ctx, *bigquery)
    database = names.database(ctx, parts[0] if len(parts) == 3 else None)
    name = parts[-1].upper()
    if call is not None:
        return query_history.frame(ctx, name, call)
    if name in query_history.FUNCTIONS:
        raise ObjectNotFound(
            f"{name} is a table function, not a view: SELECT ... FROM "
            f"TABLE({INFORMATION_SCHEMA}.{name}())."
        )
    if name not in _VIEWS:
        raise ObjectNotFound(
            f"View '{database.name}.{INFORMATION_SCHEMA}.{name}' does not exist "
            f"(Rewind has {', '.join(_VIEWS)})."
        )
    schema, rows = _VIEWS[name]
    return ctx.spark().createDataFrame(rows(ctx, database), schema)


def _bigquery_view(parts: list[str] | tuple[str, ...]) -> tuple[list[str], str] | None:
    """(scope, view) of BigQuery's ``[scope.]INFORMATION_SCHEMA.<view>``, whose last two
    names sqlglot's BigQuery reader keeps as one (``INFORMATION_SCHEMA.TABLES``); a
    ``region-xx`` scope is the project's (Rewind's home has one location). Its
    ``TABLE_STORAGE`` is the storage metrics' (:mod:`rewind.lifecycle.views`)."""
    head, dot, name = parts[-1].rpartition(".") if parts else ("", "", "")
    if not dot or head.upper() != INFORMATION_SCHEMA or name.upper() == "TABLE_STORAGE":
        return None
    scope = [p for p in parts[:-1] if not p.lower().startswith("region-")]
    return scope, name.upper()


def _visible(ctx: Context, found: list[CatalogObject]) -> list[CatalogObject]:
    """The live objects of ``found`` the role can see, by name (SPEC R37)."""
    visible = security.visible_ids(ctx)
    kept = [o for o in found if o.dropped_on is None and (visible is None or o.id in visible)]
    return sorted(kept, key=lambda o: o.name)


def _schemas(ctx: Context, database: CatalogObject) -> list[CatalogObject]:
    return _visible(ctx, list(ctx.catalog.objects(SCHEMA, [database.id])))


def _tables(
    ctx: Context, database: CatalogObject, only: CatalogObject | None = None
) -> list[tuple[CatalogObject, CatalogObject]]:
    """(schema, table) of every table of ``database`` (``only``: of that schema of it)
    the role can see."""
    schemas = {s.id: s for s in _schemas(ctx, database) if only is None or s.id == only.id}
    tables = _visible(ctx, list(ctx.catalog.objects(TABLE, list(schemas))))
    return sorted(((schemas[t.parent_id], t) for t in tables), key=lambda p: p[0].name)


def _tables_rows(ctx: Context, database: CatalogObject) -> list[tuple[Any, ...]]:
    rows = []
    found = _tables(ctx, database)
    ddl = ctx.catalog.last_ddl([table.id for _, table in found])
    for schema, table in found:
        shown = table_values(ctx, table)
        latest = ctx.catalog.latest_version(table.id)
        last_ddl, last_ddl_by = ddl.get(table.id, (table.created_on, None))
        rows.append(
            (
                database.name,
                schema.name,
                table.name,
                table.owner_role,
                "EXTERNAL TABLE" if shown["is_external"] == "Y" else "BASE TABLE",
                _YES_NO[shown["kind"] == "TRANSIENT"],
                shown["cluster_by"] or None,
                shown["rows"],
                shown["bytes"],
                shown["retention_time"],
                table.created_on,
                max(latest.commit_time, last_ddl) if latest is not None else last_ddl,
                last_ddl,
                last_ddl_by,
                "NO",
                table.comment,
                "NO",
                "NO",
                "NO",
            )
        )
    return rows


def _columns_rows(ctx: Context, database: CatalogObject) -> list[tuple[Any, ...]]:
    rows = []
    for schema, table in _tables(ctx, database):
        for position, column in enumerate(described(ctx, table), 1):
            kind = type_json(column.type)
            numeric = kind["type"] == "FIXED"
            rule = column.rule
            rows.append(
                (
                    database.name,
                    schema.name,
                    table.name,
                    column.name,
                    position,
                    column.default,
                    _YES_NO[column.nullable],
                    {"FIXED": "NUMBER", "REAL": "FLOAT"}.get(kind["type"], kind["type"]),
                    kind.get("length"),
                    kind.get("byteLength"),
                    kind.get("precision") if numeric else None,
                    10 if numeric else None,
                    kind.get("scale") if numeric else None,
                    kind.get("scale") if column.type.startswith("TIMESTAMP") else None,
                    _YES_NO[rule is not None],
                    None if rule is None else str(rule.start),
                    None if rule is None else str(rule.step),
                    column.comment,
                )
            )
    return rows


def _schemata_rows(ctx: Context, database: CatalogObject) -> list[tuple[Any, ...]]:
    schemas = _schemas(ctx, database)
    ddl = ctx.catalog.last_ddl([schema.id for schema in schemas])
    return [
        (
            database.name,
            schema.name,
            schema.owner_role,
            _YES_NO[ctx.catalog.is_transient(schema)],
            "NO",
            ctx.catalog.effective_retention(schema),
            schema.created_on,
            ddl.get(schema.id, (schema.created_on,))[0],  # its last DDL
            schema.comment,
        )
        for schema in schemas
    ]


def _databases_rows(ctx: Context, database: CatalogObject) -> list[tuple[Any, ...]]:
    """Snowflake's INFORMATION_SCHEMA.DATABASES of any database lists every database the
    role can see."""
    databases = _visible(ctx, list(ctx.catalog.objects(DATABASE, [0])))
    ddl = ctx.catalog.last_ddl([db.id for db in databases])
    return [
        (
            db.name,
            db.owner_role,
            _YES_NO[bool(db.is_transient)],
            db.comment,
            db.created_on,
            ddl.get(db.id, (db.created_on,))[0],  # its last DDL
            ctx.catalog.effective_retention(db),
            "STANDARD",
        )
        for db in databases
    ]


_VIEWS: dict[str, tuple[str, Callable[[Context, CatalogObject], list[tuple[Any, ...]]]]] = {
    "TABLES": (TABLES_SCHEMA, _tables_rows),
    "COLUMNS": (COLUMNS_SCHEMA, _columns_rows),
    "SCHEMATA": (SCHEMATA_SCHEMA, _schemata_rows),
    "DATABASES": (DATABASES_SCHEMA, _databases_rows),
}


# BigQuery's views, in its columns (what Rewind does not have is NULL, as above).
BIGQUERY_TABLES_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, TABLE_TYPE STRING, "
    "IS_INSERTABLE_INTO STRING, IS_TYPED STRING, IS_CHANGE_HISTORY_ENABLED STRING, "
    "CREATION_TIME TIMESTAMP, BASE_TABLE_CATALOG STRING, BASE_TABLE_SCHEMA STRING, "
    "BASE_TABLE_NAME STRING, SNAPSHOT_TIME_MS TIMESTAMP, DDL STRING, "
    "DEFAULT_COLLATION_NAME STRING, UPSERT_STREAM_APPLY_WATERMARK TIMESTAMP"
)
BIGQUERY_COLUMNS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, COLUMN_NAME STRING, "
    "ORDINAL_POSITION BIGINT, IS_NULLABLE STRING, DATA_TYPE STRING, IS_GENERATED STRING, "
    "GENERATION_EXPRESSION STRING, IS_STORED STRING, IS_HIDDEN STRING, IS_UPDATABLE STRING, "
    "IS_SYSTEM_DEFINED STRING, IS_PARTITIONING_COLUMN STRING, "
    "CLUSTERING_ORDINAL_POSITION BIGINT, COLLATION_NAME STRING, COLUMN_DEFAULT STRING, "
    "ROUNDING_MODE STRING"
)
BIGQUERY_SCHEMATA_SCHEMA = (
    "CATALOG_NAME STRING, SCHEMA_NAME STRING, SCHEMA_OWNER STRING, CREATION_TIME TIMESTAMP, "
    "LAST_MODIFIED_TIME TIMESTAMP, LOCATION STRING, DDL STRING, DEFAULT_COLLATION_NAME STRING"
)
BIGQUERY_OPTIONS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, OPTION_NAME STRING, "
    "OPTION_TYPE STRING, OPTION_VALUE STRING"
)
BIGQUERY_SCHEMATA_OPTIONS_SCHEMA = (
    "CATALOG_NAME STRING, SCHEMA_NAME STRING, OPTION_NAME STRING, OPTION_TYPE STRING, "
    "OPTION_VALUE STRING"
)
BIGQUERY_SNAPSHOTS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, BASE_TABLE_CATALOG STRING, "
    "BASE_TABLE_SCHEMA STRING, BASE_TABLE_NAME STRING, SNAPSHOT_TIME TIMESTAMP"
)
_BIGQUERY_TYPES = {
    "bigint": "INT64",
    "double": "FLOAT64",
    "string": "STRING",
    "boolean": "BOOL",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "DATETIME",
    "binary": "BYTES",
}


def _bigquery(ctx: Context, scope: list[str], name: str) -> DataFrame:
    """BigQuery's ``SCHEMATA`` / ``SCHEMATA_OPTIONS`` of the project ``scope`` names (or
    the current one), and ``TABLES`` / ``COLUMNS`` / ``TABLE_OPTIONS`` /
    ``TABLE_SNAPSHOTS`` of the dataset it names (``[project.]dataset``; none: the
    project's every dataset)."""
    if name in ("SCHEMATA", "SCHEMATA_OPTIONS"):
        database = names.database(ctx, scope[0] if scope else None)
        if name == "SCHEMATA_OPTIONS":
            options = [
                (database.name, s.name, *option)
                for s in _schemas(ctx, database)
                for option in _dataset_options(s)
            ]
            return ctx.spark().createDataFrame(options, BIGQUERY_SCHEMATA_OPTIONS_SCHEMA)
        rows = [
            (database.name, s.name, None, s.created_on, None, None, None, None)
            for s in _schemas(ctx, database)
        ]
        return ctx.spark().createDataFrame(rows, BIGQUERY_SCHEMATA_SCHEMA)
    if name in query_history.JOBS_VIEWS:
        if scope:
            names.database(ctx, scope[0])  # a project that exists
        return query_history.jobs(ctx, name)
    if name not in _BIGQUERY_TABLE_VIEWS:
        known = ", ".join(_BIGQUERY_TABLE_VIEWS)
        raise ObjectNotFound(
            f"View '{INFORMATION_SCHEMA}.{name}' does not exist (Rewind has {known}, SCHEMATA, "
            "SCHEMATA_OPTIONS, TABLE_STORAGE and JOBS_BY_USER in BigQuery's dialect)."
        )
    if scope:
        dataset = names.schema(ctx, scope)
        database = names.database(ctx, scope[0] if len(scope) == 2 else None)
        found = _tables(ctx, database, dataset)
    else:
        database = names.database(ctx, None)
        found = _tables(ctx, database)
    schema, rows_of = _BIGQUERY_TABLE_VIEWS[name]
    rows = [row for s, t in found for row in rows_of(ctx, database, s, t)]
    return ctx.spark().createDataFrame(rows, schema)


def _quoted(text: str) -> str:
    """A string as BigQuery shows an option's value: a double-quoted literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dataset_options(dataset: CatalogObject) -> list[tuple[str, str, str]]:
    """The options set on a dataset, as BigQuery's SCHEMATA_OPTIONS shows them: its time
    travel window (Rewind keeps whole days, SPEC R27), default table lifetime, description."""
    options = []
    if dataset.retention_days is not None:
        hours = str(dataset.retention_days * 24)
        options.append(("max_time_travel_hours", "INT64", hours))
    if dataset.table_expiration_days is not None:
        days = f"{dataset.table_expiration_days:g}"
        options.append(("default_table_expiration_days", "FLOAT64", days))
    if dataset.comment is not None:
        options.append(("description", "STRING", _quoted(dataset.comment)))
    return options


def _bigquery_options(
    ctx: Context, database: CatalogObject, schema: CatalogObject, table: CatalogObject
) -> list[tuple[Any, ...]]:
    """The options set on a table (TABLE_OPTIONS): its expiration and description."""
    options = []
    if table.expires_on is not None:
        when = table.expires_on.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
        options.append(("expiration_timestamp", "TIMESTAMP", f'TIMESTAMP "{when}Z"'))
    if table.comment is not None:
        options.append(("description", "STRING", _quoted(table.comment)))
    return [(database.name, schema.name, table.name, *option) for option in options]


def _bigquery_snapshots(
    ctx: Context, database: CatalogObject, schema: CatalogObject, table: CatalogObject
) -> list[tuple[Any, ...]]:
    """A table snapshot, what it was taken of, and when (TABLE_SNAPSHOTS)."""
    if table.snapshot_of is None:
        return []
    base = _snapshot_base(ctx, table)
    return [(database.name, schema.name, table.name, *base, table.snapshot_time)]


def _bigquery_table(
    ctx: Context, database: CatalogObject, schema: CatalogObject, table: CatalogObject
) -> tuple[Any, ...]:
    kind = "EXTERNAL" if table.location is not None else "BASE TABLE"
    if table.snapshot_of is not None:  # a table snapshot: what it was taken of, and when
        kind = "SNAPSHOT"
    base = _snapshot_base(ctx, table)
    return (
        database.name,
        schema.name,
        table.name,
        kind,
        "NO" if kind == "SNAPSHOT" else "YES",
        "NO",
        "YES" if table_values(ctx, table)["change_tracking"] == "ON" else "NO",
        table.created_on,
        *base,
        table.snapshot_time,
        *[None] * 3,
    )


def _snapshot_base(ctx: Context, table: CatalogObject) -> tuple[str | None, ...]:
    """The project, dataset and name of the table a snapshot was taken of (NULLs for a
    table that is no snapshot)."""
    source = ctx.catalog.get(table.snapshot_of) if table.snapshot_of is not None else None
    return tuple(names.qualified(ctx, source).parts) if source is not None else (None,) * 3


def _bigquery_columns(
    ctx: Context, database: CatalogObject, schema: CatalogObject, table: CatalogObject
) -> list[tuple[Any, ...]]:
    snap = snapshot(ctx, table)  # its partition columns, and the columns described
    partitions = set(snap.partition_columns)
    declared = set(layout_columns(table.partition_by))  # PARTITION BY DATE(TS): TS
    clustered = layout_columns(table.cluster_by)
    return [
        (
            database.name,
            schema.name,
            table.name,
            column.name,
            position,
            _YES_NO[column.nullable],
            bigquery_type(column.column.spark, column.type),
            "NEVER" if column.expression is None else "ALWAYS",
            column.expression,
            None if column.expression is None else "YES",
            "NO",
            "NO" if column.expression is not None or column.rule is not None else "YES",
            "NO",
            _YES_NO[column.column.physical in partitions or column.name in declared],
            clustered.index(column.name) + 1 if column.name in clustered else None,
            None,
            column.default,
            None,
        )
        for position, column in enumerate(described(ctx, table, snap), 1)
    ]


_BIGQUERY_TABLE_VIEWS: dict[
    str,
    tuple[
        str,
        Callable[[Context, CatalogObject, CatalogObject, CatalogObject], list[tuple[Any, ...]]],
    ],
] = {
    "TABLES": (BIGQUERY_TABLES_SCHEMA, lambda *args: [_bigquery_table(*args)]),
    "COLUMNS": (BIGQUERY_COLUMNS_SCHEMA, _bigquery_columns),
    "TABLE_OPTIONS": (BIGQUERY_OPTIONS_SCHEMA, _bigquery_options),
    "TABLE_SNAPSHOTS": (BIGQUERY_SNAPSHOTS_SCHEMA, _bigquery_snapshots),
}


def bigquery_type(spark: str, sql: str | None = None) -> str:
    """BigQuery's name of a column type (Spark's ``spark``; ``sql``, Rewind's, gives a
    VARCHAR(n) its length: ``STRING(n)``): NUMERIC(p, s), ARRAY<...>, STRUCT<...>; a map,
    which BigQuery has not, is its ARRAY<STRUCT<key, value>>."""
    length = declared_length(sql)
    return f"STRING({length[1]})" if length is not None else type_name(spark, _BIGQUERY)


def _bigquery_primitive(spark: str) -> str:
    if spark.startswith("decimal("):
        precision, scale = spark.removeprefix("decimal(").rstrip(")").split(",")
        return f"NUMERIC({precision}, {scale})"
    return _BIGQUERY_TYPES.get(spark, spark.upper())


_BIGQUERY = TypeNames(
    "ARRAY<{}>", "ARRAY<STRUCT<key {}, value {}>>", "STRUCT<{}>", _bigquery_primitive
)
