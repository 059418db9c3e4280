"""A database's ``INFORMATION_SCHEMA``, Snowflake's views of what it holds: ``TABLES``,
``COLUMNS``, ``SCHEMATA`` and ``DATABASES`` (``<database>.INFORMATION_SCHEMA.<view>``, or
``INFORMATION_SCHEMA.<view>`` for the current database).

Every role may read them; each lists only what the role can see (SPEC R37), and live
objects only (dropped ones are SHOW ... HISTORY's, SPEC R22). The rows are built on the
driver from the catalog and each table's current version, with the same figures as
SHOW TABLES, DESCRIBE TABLE and SHOW COLUMNS (:mod:`rewind.sql.show`), and bound as Spark
frames, so SELECT filters, joins and aggregates them like any table. What Rewind does not
record (the last DDL and who ran it) is NULL, never a made-up value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rewind import security
from rewind.catalog.models import CatalogObject
from rewind.constants import DATABASE, INFORMATION_SCHEMA, SCHEMA, TABLE
from rewind.errors import ObjectNotFound
from rewind.sql import names
from rewind.sql.show import described, table_values, type_json

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
    """Whether a table reference names ``[<database>.]INFORMATION_SCHEMA.<view>``."""
    return len(parts) in (2, 3) and parts[-2].upper() == INFORMATION_SCHEMA


def view(ctx: Context, parts: list[str]) -> DataFrame:
    """The frame of ``[<database>.]INFORMATION_SCHEMA.<view>`` (:func:`is_view`).

    Raises:
        ObjectNotFound: an unknown view, or a database the role cannot see.
        NoCurrentContainer: no database named and none current.
    """
    database = names.database(ctx, parts[0] if len(parts) == 3 else None)
    name = parts[-1].upper()
    if name not in _VIEWS:
        raise ObjectNotFound(
            f"View '{database.name}.{INFORMATION_SCHEMA}.{name}' does not exist "
            f"(Rewind has {', '.join(_VIEWS)})."
        )
    schema, rows = _VIEWS[name]
    return ctx.spark().createDataFrame(rows(ctx, database), schema)


def _visible(ctx: Context, found: list[CatalogObject]) -> list[CatalogObject]:
    """The live objects of ``found`` the role can see, by name (SPEC R37)."""
    visible = security.visible_ids(ctx)
    kept = [o for o in found if o.dropped_on is None and (visible is None or o.id in visible)]
    return sorted(kept, key=lambda o: o.name)


def _schemas(ctx: Context, database: CatalogObject) -> list[CatalogObject]:
    return _visible(ctx, list(ctx.catalog.objects(SCHEMA, [database.id])))


def _tables(ctx: Context, database: CatalogObject) -> list[tuple[CatalogObject, CatalogObject]]:
    """(schema, table) of every table of ``database`` the role can see."""
    schemas = {s.id: s for s in _schemas(ctx, database)}
    tables = _visible(ctx, list(ctx.catalog.objects(TABLE, list(schemas))))
    return sorted(((schemas[t.parent_id], t) for t in tables), key=lambda p: p[0].name)


def _tables_rows(ctx: Context, database: CatalogObject) -> list[tuple[Any, ...]]:
    rows = []
    for schema, table in _tables(ctx, database):
        shown = table_values(ctx, table)
        latest = ctx.catalog.latest_version(table.id)
        rows.append(
            (
                database.name,
                schema.name,
                table.name,
                table.owner_role,
                "EXTERNAL TABLE" if shown["is_external"] == "Y" else "BASE TABLE",
                _YES_NO[shown["kind"] == "TRANSIENT"],
                None,
                shown["rows"],
                shown["bytes"],
                shown["retention_time"],
                table.created_on,
                latest.commit_time if latest is not None else table.created_on,
                None,
                None,
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
                    None,
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
    return [
        (
            database.name,
            schema.name,
            schema.owner_role,
            _YES_NO[ctx.catalog.is_transient(schema)],
            "NO",
            ctx.catalog.effective_retention(schema),
            schema.created_on,
            None,
            schema.comment,
        )
        for schema in _schemas(ctx, database)
    ]


def _databases_rows(ctx: Context, database: CatalogObject) -> list[tuple[Any, ...]]:
    """Snowflake's INFORMATION_SCHEMA.DATABASES of any database lists every database the
    role can see."""
    return [
        (
            db.name,
            db.owner_role,
            _YES_NO[bool(db.is_transient)],
            db.comment,
            db.created_on,
            None,
            ctx.catalog.effective_retention(db),
            "STANDARD",
        )
        for db in _visible(ctx, list(ctx.catalog.objects(DATABASE, [0])))
    ]


_VIEWS: dict[str, tuple[str, Callable[[Context, CatalogObject], list[tuple[Any, ...]]]]] = {
    "TABLES": (TABLES_SCHEMA, _tables_rows),
    "COLUMNS": (COLUMNS_SCHEMA, _columns_rows),
    "SCHEMATA": (SCHEMATA_SCHEMA, _schemata_rows),
    "DATABASES": (DATABASES_SCHEMA, _databases_rows),
}
