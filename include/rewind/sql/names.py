"""Name resolution against the session's current database and schema (SPEC R4)."""

from __future__ import annotations

from sqlglot import exp

from rewind.catalog.models import CatalogObject
from rewind.constants import DATABASE, SCHEMA, TABLE
from rewind.errors import InvalidValue, NoCurrentContainer, ObjectNotFound
from rewind.identifiers import QualifiedName, normalize
from rewind.security import can_see
from rewind.statement import Context


def parts(table: exp.Table) -> list[str]:
    """Normalized name parts of a table expression, outermost first.

    Raises:
        InvalidValue: a name of more than three parts (``a.b.c.d``), which sqlglot
            keeps as a dotted expression: dropping it would name another object.
    """
    found = [table.args.get(key) for key in ("catalog", "db", "this")]
    if any(p is not None and not isinstance(p, exp.Identifier) for p in found):
        raise InvalidValue(f"Invalid name '{table.sql('snowflake')}': at most 3 parts.")
    names = [normalize(p) for p in found if isinstance(p, exp.Identifier)]
    if not names:
        raise InvalidValue("A name is required.")
    return names


def qualified(ctx: Context, obj: CatalogObject) -> QualifiedName:
    return ctx.catalog.qualified_name(obj)


def _not_found(kind: str, names: list[str]) -> ObjectNotFound:
    return ObjectNotFound(
        f"{kind.capitalize()} '{QualifiedName(tuple(names))}' does not exist or not authorized."
    )


# A BigQuery user knows no database: say what stands for a project.
_BIGQUERY_PROJECT = (
    " A BigQuery project is a Rewind database: name it (project.dataset.table) or make it "
    "in Snowflake's dialect first (CREATE DATABASE project)."
)


def database(ctx: Context, name: str | None) -> CatalogObject:
    """A live database by name, or the current one when ``name`` is None."""
    if name is None:
        name = ctx.state.database
        if name is None:
            raise NoCurrentContainer(
                "This session does not have a current database. Call 'USE DATABASE'."
                + _BIGQUERY_PROJECT * (ctx.state.dialect == "bigquery")
            )
    found = ctx.catalog.live(DATABASE, 0, name)
    if found is None or not can_see(ctx, found):  # SPEC R37: no existence leak
        raise _not_found(DATABASE, [name])
    return found


def schema_parent(ctx: Context, names: list[str]) -> tuple[CatalogObject, str]:
    """(database, schema name) for ``[db.]schema``."""
    if len(names) > 2:
        raise InvalidValue(f"Invalid schema name '{QualifiedName(tuple(names))}'.")
    db = database(ctx, names[0] if len(names) == 2 else None)
    return db, names[-1]


def schema(ctx: Context, names: list[str] | None) -> CatalogObject:
    """A live schema ``[db.]schema``, or the current schema when ``names`` is None."""
    if names is None:
        if ctx.state.schema is None:
            raise NoCurrentContainer(
                "This session does not have a current schema. Call 'USE SCHEMA'."
            )
        names = [ctx.state.schema]
    db, name = schema_parent(ctx, names)
    found = ctx.catalog.live(SCHEMA, db.id, name)
    if found is None or not can_see(ctx, found):
        raise _not_found(SCHEMA, [db.name, name])
    return found


def table_parent(ctx: Context, names: list[str]) -> tuple[CatalogObject, str]:
    """(schema, table name) for ``[[db.]schema.]table``."""
    if len(names) > 3:
        raise InvalidValue(f"Invalid table name '{QualifiedName(tuple(names))}'.")
    return schema(ctx, names[:-1] or None), names[-1]


def table(ctx: Context, names: list[str]) -> CatalogObject:
    """A live table by name (SPEC R3: at most one live incarnation per name)."""
    parent, name = table_parent(ctx, names)
    found = ctx.catalog.live(TABLE, parent.id, name)
    if found is None or not can_see(ctx, found):
        db = ctx.catalog.get(parent.parent_id)
        raise _not_found(TABLE, [db.name if db else "?", parent.name, name])
    return found
