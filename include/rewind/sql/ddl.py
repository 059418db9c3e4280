"""CREATE, DROP, UNDROP and USE of databases, schemas, tables (SPEC R1–R11, R20–R24); ALTER
is :mod:`rewind.sql.alter`."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from sqlglot import exp

from rewind import retention, security
from rewind.catalog.models import CatalogObject
from rewind.constants import (
    DATABASE,
    INFORMATION_SCHEMA,
    MAX_TRANSIENT_RETENTION_DAYS,
    PUBLIC_SCHEMA,
    SCHEMA,
    TABLE,
)
from rewind.errors import (
    CannotUndrop,
    InvalidValue,
    ObjectAlreadyExists,
    ObjectNotFound,
    RewindError,
    SqlSyntaxError,
    UnsupportedError,
)
from rewind.identifiers import QualifiedName, normalize
from rewind.result import Result
from rewind.sql import clone, defaults, external, names, snapshots
from rewind.sql.parse import EMPTY_ONLY, LIKE, SNAPSHOT
from rewind.sql.tables import (
    ColumnDefs,
    claim_storage,
    create_table_storage,
    current_version,
    delta_schema,
    identity_metadata,
    track_changes,
)
from rewind.sql.values import ObjectProperties, layout_columns, literal, object_properties
from rewind.statement import Context
from rewind.storage.columns import (
    Column,
    add_column,
)
from rewind.storage.location import Root
from rewind.storage.snapshot import CURRENT_DEFAULT

PARENT_KIND = {SCHEMA: DATABASE, TABLE: SCHEMA}


# -- CREATE (SPEC R20) ---------------------------------------------------------------------
def create(ctx: Context, tree: exp.Create) -> Result:
    kind = str(tree.args.get("kind", "")).upper()
    if kind not in (DATABASE, SCHEMA, TABLE):
        raise UnsupportedError(f"CREATE {kind} is not supported.")
    if tree.args.get("replace") and tree.args.get("exists"):
        raise SqlSyntaxError(
            "SQL compilation error: OR REPLACE and IF NOT EXISTS cannot be combined."
        )
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    location_text = None
    if kind == TABLE and external.is_external(tree):
        location_text, props = external.properties(ctx, tree)
    else:
        props = object_properties(tree.args.get("properties"))
    parent_id, name = parent_and_name(ctx, kind, names.parts(target))
    props.expires_on = snapshots.expires_on(ctx, kind, props, parent_id)  # before any change
    source = _clone_source(ctx)
    existing = ctx.catalog.live(kind, parent_id, name)
    operation = "CREATE"
    if existing is not None and tree.args.get("exists"):
        return ctx.status(f"{name} already exists, statement succeeded.")
    if existing is not None and not tree.args.get("replace"):
        raise ObjectAlreadyExists(f"{kind.capitalize()} '{name}' already exists.")
    location = external.locate(ctx, location_text) if location_text is not None else None
    write_as = _like(ctx, tree)
    if kind == TABLE and tree.expression is not None and write_as is None:
        from rewind.sql.dml import bind_table_as

        # before the old one is dropped
        named, declared = _named_as(tree.this, ctx.state.dialect)
        write_as = bind_table_as(ctx, tree.expression, named, declared)
    grants_from = _grants_from(kind, props, existing, source)
    _check_tracking(kind, props, source)
    if existing is not None:
        ctx.catalog.drop(existing, ctx.now)
        ctx.catalog.record_access(ctx.query_id, existing.id, "DDL", operation="DROP")
        operation = "REPLACE"
    if source is not None:
        return _created_clone(ctx, tree, source, parent_id, name, props, operation, grants_from)
    obj = new_object(ctx, kind, parent_id, name, props)
    if kind == TABLE:
        _table_storage(ctx, tree, obj, location, write_as)
        if props.change_tracking:
            track_changes(ctx, obj, True)
    elif kind == DATABASE:
        new_object(ctx, SCHEMA, obj.id, PUBLIC_SCHEMA, ObjectProperties())
    _copy_grants(ctx, grants_from, obj)
    _make_current(ctx, obj)
    ctx.catalog.record_access(ctx.query_id, obj.id, "DDL", operation=operation)
    return ctx.status(f"{kind.capitalize()} {name} successfully created.")


def _like(ctx: Context, tree: exp.Create) -> Callable[[CatalogObject], None] | None:
    """``CREATE TABLE new LIKE old`` (parsed as an empty CTAS, :data:`parse.LIKE`): a
    function giving the new table old's column definitions as they are now, NOT NULL
    included, as Snowflake's LIKE (SPEC R40: a NOT NULL another writer set too); no Spark
    job. None for any other statement, and for a system view (its rows' columns, a CTAS)."""
    if not tree.meta.get(LIKE):
        return None
    (read,) = ctx.analysis.reads
    if read.error is not None:
        raise read.error
    if read.object_id is None:
        return None
    source = ctx.catalog.get(read.object_id)
    assert source is not None
    version = current_version(ctx, source)  # bound now: before OR REPLACE drops old
    return partial(clone.clone_table_into, ctx, source, version, rows=False)


def _check_tracking(kind: str, props: ObjectProperties, cloned: CatalogObject | None) -> None:
    """CHANGE_TRACKING is a table's, given by CREATE TABLE (a clone's by ALTER TABLE)."""
    if props.change_tracking is not None and (kind != TABLE or cloned is not None):
        raise UnsupportedError(
            "CHANGE_TRACKING applies to tables made by CREATE TABLE: set it on a clone "
            "with ALTER TABLE ... SET CHANGE_TRACKING = TRUE."
        )


def _grants_from(
    kind: str, props: ObjectProperties, replaced: CatalogObject | None, cloned: CatalogObject | None
) -> CatalogObject | None:
    """COPY GRANTS: the table whose privileges (all but OWNERSHIP) the new one takes, the
    one it replaces first, else the one it clones (Snowflake's precedence); None without
    COPY GRANTS or without either (a new incarnation starts with no grants, SPEC R37)."""
    if not props.copy_grants:
        return None
    if kind != TABLE:
        raise UnsupportedError("COPY GRANTS applies to tables.")
    return replaced or cloned


def _copy_grants(ctx: Context, source: CatalogObject | None, target: CatalogObject) -> None:
    if source is not None:
        security.copy_grants(ctx, source, target)


def _clone_source(ctx: Context) -> CatalogObject | None:
    """The object CLONE copies, as the statement's analysis resolved it (before OR
    REPLACE drops anything)."""
    source = ctx.analysis.clone_source
    if source is None:
        return None
    if source.error is not None:
        raise source.error
    assert source.object_id is not None
    return ctx.catalog.get(source.object_id)


def _table_storage(
    ctx: Context,
    tree: exp.Create,
    obj: CatalogObject,
    location: Root | None,
    write_as: Callable[[CatalogObject], None] | None,
) -> None:
    """A new table's storage: registered where it is (external, SPEC R41), written from a
    query (CTAS), or an empty version 0 under the warehouse."""
    if location is not None:
        external.register(ctx, obj, location)
    elif write_as is not None:
        write_as(obj)
    else:
        columns, not_null, metadata = _column_defs(tree.this, ctx.state.dialect)
        check_layout(obj, {c.name for c in columns})
        obj.columns = [c.as_json() for c in columns]
        claim_storage(ctx, obj)
        schema = delta_schema(columns, not_null, metadata)
        create_table_storage(ctx, obj, columns, schema=schema)


def check_layout(obj: CatalogObject, columns: set[str]) -> None:
    """A declared clustering key or partitioning names columns of the table.

    Raises:
        RewindError: SQL_COMPILATION_ERROR for another name, as Snowflake's "invalid
            identifier".
    """
    for name in layout_columns(obj.cluster_by) + layout_columns(obj.partition_by):
        if name not in columns:
            raise RewindError(
                f"SQL compilation error: invalid identifier '{name}'.",
                code="SQL_COMPILATION_ERROR",
            )


def _created_clone(
    ctx: Context,
    tree: exp.Create,
    source: CatalogObject,
    parent_id: int,
    name: str,
    props: ObjectProperties,
    operation: str,
    grants_from: CatalogObject | None,
) -> Result:
    """CREATE ... CLONE (SPEC R24): the new object, and for containers what was skipped."""
    obj, report = clone.create_clone(ctx, tree, source, parent_id, name, props)
    if tree.meta.get(SNAPSHOT):
        snapshots.mark(ctx, obj, source, tree)
    _copy_grants(ctx, grants_from, obj)
    ctx.catalog.record_access(ctx.query_id, obj.id, "DDL", operation=operation)
    _make_current(ctx, obj)
    message = f"{obj.kind.capitalize()} {name} successfully created."
    if obj.kind == TABLE:
        return ctx.status(message)
    return ctx.result(
        ["status", "tables_cloned", "tables_skipped"],
        [[message, report.tables, ",".join(report.skipped)]],
    )


def _make_current(ctx: Context, obj: CatalogObject) -> None:
    """Like Snowflake, a new database or schema becomes the session's current one."""
    if obj.kind == DATABASE:
        public = ctx.catalog.live(SCHEMA, obj.id, PUBLIC_SCHEMA)
        ctx.state.database, ctx.state.schema = obj.name, public.name if public else None
    elif obj.kind == SCHEMA:
        db = ctx.catalog.get(obj.parent_id)
        ctx.state.database, ctx.state.schema = (db.name if db else None), obj.name


def parent_and_name(ctx: Context, kind: str, parts: list[str]) -> tuple[int, str]:
    """(parent id, name) of an object of ``kind`` named ``parts`` (0: the account)."""
    if kind == DATABASE:
        if len(parts) != 1:
            raise InvalidValue(f"Invalid database name '{'.'.join(parts)}'.")
        return 0, parts[0]
    if kind == SCHEMA:
        db, name = names.schema_parent(ctx, parts)
        return db.id, name
    parent, name = names.table_parent(ctx, parts)
    return parent.id, name


def refuse_reserved(kind: str, name: str) -> None:
    """A schema may not be named INFORMATION_SCHEMA: every database's views of itself
    answer to that name (:mod:`rewind.sql.information_schema`), as in Snowflake."""
    if kind == SCHEMA and name.upper() == INFORMATION_SCHEMA:
        raise InvalidValue(f"Schema name {name} is reserved for the database's own views.")


def new_object(
    ctx: Context,
    kind: str,
    parent_id: int,
    name: str,
    props: ObjectProperties,
    *,
    source: CatalogObject | None = None,
) -> CatalogObject:
    """Insert a catalog row for a new incarnation, validating its retention (SPEC R5).

    ``source``: the object a clone or a recovery copies. It keeps the retention set
    explicitly on the source unless the statement sets one (SPEC R24; Snowflake's clones
    keep the parameters set on their source), at most a transient's when it is transient:
    a copy made to save data never has a shorter time travel than its original by
    surprise. A value the source inherits is inherited from the copy's own parents.
    """
    refuse_reserved(kind, name)
    if kind != TABLE and (props.cluster_by or props.partition_by):
        raise UnsupportedError(
            f"CLUSTER BY and PARTITION BY apply to tables, not a {kind.lower()}."
        )
    parent = ctx.catalog.get(parent_id) if parent_id else None
    transient = props.transient or (parent is not None and ctx.catalog.is_transient(parent))
    value = None
    if props.has_retention:
        path = (*names.qualified(ctx, parent).parts, name) if parent else (name,)
        value = retention.validate_retention(
            props.retention, transient=transient, target=retention_target(kind, path)
        )
    elif source is not None and source.retention_days is not None:
        value = source.retention_days
        if transient:
            value = min(value, MAX_TRANSIENT_RETENTION_DAYS)
    return ctx.catalog.create(
        kind=kind,
        parent_id=parent_id,
        name=name,
        is_transient=props.transient,
        retention_days=value,
        comment=props.comment if props.has_comment else None,
        expires_on=props.expires_on,
        table_expiration_days=props.lifetime_days,
        cluster_by=props.cluster_by,
        partition_by=props.partition_by,
        owner_role=ctx.state.role,
        created_on=ctx.now,
        created_by=ctx.query_id,
    )


def retention_target(kind: str, path: tuple[str, ...]) -> str:
    """How an INVALID_RETENTION message names its object (SPEC R39)."""
    return f"{kind.lower()} {QualifiedName(path)}"


def _named_as(target: exp.Expression, dialect: str) -> tuple[list[str] | None, ColumnDefs | None]:
    """The column names ``CREATE TABLE t (a, b) AS SELECT ...`` gives the query's columns
    (they were ignored: the query's names, a silent difference), None without a list; and
    with column definitions, ``CREATE TABLE t (a NUMBER(10, 2) NOT NULL, b VARCHAR(3)) AS
    SELECT ...``, the columns the query's values are stored as (:func:`_column_defs`: each
    value converted as an INSERT converts it, a NULL in a NOT NULL column or a longer
    string fails the statement, as in Snowflake; it was refused)."""
    listed = target.expressions if isinstance(target, exp.Schema) else []
    if not listed:
        return None, None
    if all(isinstance(d, exp.Identifier) for d in listed):
        return [normalize(d) for d in listed], None
    assert isinstance(target, exp.Schema)
    for col in listed:
        if isinstance(col, exp.ColumnDef) and identity(col) is not None:
            raise UnsupportedError(
                "An identity column (AUTOINCREMENT / IDENTITY) takes no values from a query: "
                "CREATE the table, then INSERT INTO it SELECT ..."
            )
    declared = _column_defs(target, dialect)
    return [c.name for c in declared[0]], declared


def _column_defs(schema: exp.Schema, dialect: str) -> ColumnDefs:
    """The columns of ``CREATE TABLE t (...)``, the physical names of those declared
    NOT NULL (the Delta schema says so, nullable false, and every write checks it,
    :func:`rewind.sql.frames.write_frame`, Rewind's and, by Delta's protocol, others'),
    and each column's Delta field metadata by physical name: its ``COMMENT '...'`` (the
    field's comment), its ``AUTOINCREMENT`` / ``IDENTITY`` (:func:`identity`) and its
    ``DEFAULT expr`` (:func:`rewind.sql.defaults.declared`)."""
    columns: list[Column] = []
    not_null: set[str] = set()
    metadata: dict[str, dict[str, Any]] = {}
    keys: list[str] = []
    for col in schema.expressions:
        if not isinstance(col, exp.ColumnDef) and (named := _table_keys(col)) is not None:
            keys += named
            continue
        if not isinstance(col, exp.ColumnDef) or col.args.get("kind") is None:
            raise UnsupportedError(f"Unsupported column definition: {col.sql('snowflake')}.")
        columns = add_column(columns, normalize(col.this), col.args["kind"], set())
        physical = columns[-1].physical
        if not column_constraints(col)[0]:
            not_null.add(physical)
        metadata[physical] = _field_metadata(col, columns[-1], dialect)
    if not columns:
        raise SqlSyntaxError("SQL compilation error: a table needs at least one column.")
    by_name = {c.name: c.physical for c in columns}
    for key in keys:
        if key not in by_name:
            raise RewindError(
                f"SQL compilation error: invalid identifier '{key}'.", code="SQL_COMPILATION_ERROR"
            )
        not_null.add(by_name[key])
    return columns, not_null, metadata


def _field_metadata(col: exp.ColumnDef, column: Column, dialect: str) -> dict[str, Any]:
    """A column definition's Delta field metadata: its comment, its identity, its default."""
    comment = column_constraints(col)[1]
    field: dict[str, Any] = {"comment": comment} if comment is not None else {}
    numbered, default = identity(col), defaults.declared(col, dialect, column.spark)
    if numbered is not None:
        if column.spark != "bigint":
            raise InvalidValue(
                f"SQL compilation error: an identity column is a whole number: {col.sql(dialect)}."
            )
        if default is not None:
            raise UnsupportedError(
                f"A column is an identity or has a default, not both: {col.sql(dialect)}."
            )
        field.update(identity_metadata(*numbered))
    if default is not None:
        field[CURRENT_DEFAULT] = default
    return field


# Snowflake's informational constraints: declared, not enforced (a PRIMARY KEY's columns
# are NOT NULL, which is). Rewind accepts them as Snowflake does.
_INFORMATIONAL = (exp.UniqueColumnConstraint, exp.Reference, exp.ForeignKey)


def column_constraints(col: exp.ColumnDef) -> tuple[bool, str | None]:
    """Whether a column definition allows NULL, and its ``COMMENT '...'``: the constraints
    Rewind keeps; a PRIMARY KEY is NOT NULL and UNIQUE / REFERENCES are accepted unenforced,
    as in Snowflake; an identity is :func:`identity`'s, a DEFAULT
    :func:`rewind.sql.defaults.declared`'s."""
    nullable, comment = True, None
    for constraint in col.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
            nullable = False
        elif isinstance(kind, exp.CommentColumnConstraint):
            comment = str(literal(kind.this))
        elif not isinstance(kind, (*_INFORMATIONAL, exp.DefaultColumnConstraint)) and not (
            _is_identity(kind)
        ):
            raise UnsupportedError(
                "Column constraints other than NOT NULL, COMMENT, DEFAULT, PRIMARY KEY, "
                f"UNIQUE, REFERENCES and AUTOINCREMENT are not supported: {col.sql('snowflake')}."
            )
    return nullable, comment


def _is_identity(kind: exp.Expression) -> bool:
    """Whether a column constraint is Snowflake's AUTOINCREMENT / IDENTITY (not a
    generated column's ``AS (expr)``)."""
    if isinstance(kind, exp.AutoIncrementColumnConstraint):
        return True
    return isinstance(kind, exp.GeneratedAsIdentityColumnConstraint) and not kind.args.get(
        "expression"
    )


def identity(col: exp.ColumnDef) -> tuple[int, int] | None:
    """A column's ``AUTOINCREMENT`` / ``IDENTITY [(start, step)]`` / ``... START s
    INCREMENT i`` as (start, step), 1 and 1 by default; None for a column without one.
    Rewind keeps it as Delta's identity column (``delta.identity.*``, delta-spark's
    ``GENERATED BY DEFAULT AS IDENTITY``): a row inserted without a value gets the next
    one, a value given is kept, as Snowflake's (SPEC R40)."""
    for constraint in col.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if kind is not None and _is_identity(kind):
            start, step = (
                literal(kind.args[k]) if kind.args.get(k) is not None else 1
                for k in ("start", "increment")
            )
            if not isinstance(start, int) or not isinstance(step, int) or step == 0:
                raise InvalidValue(
                    f"An identity's start and step are whole numbers, the step not 0: "
                    f"{col.sql('snowflake')}."
                )
            return start, step
    return None


def _table_keys(constraint: exp.Expression) -> list[str] | None:
    """The columns a table constraint's PRIMARY KEY makes NOT NULL ([] for UNIQUE or FOREIGN
    KEY, accepted unenforced); None for anything else."""
    key = constraint
    if isinstance(constraint, exp.Constraint):  # CONSTRAINT name <key>
        key = constraint.expressions[0] if len(constraint.expressions) == 1 else constraint
    if isinstance(key, exp.PrimaryKey):
        return [
            normalize(part.this if isinstance(part, exp.Ordered) else part)
            for part in key.expressions
        ]
    return [] if isinstance(key, _INFORMATIONAL) else None


# -- DROP / UNDROP (SPEC R21) ----------------------------------------------------------------
def drop(ctx: Context, tree: exp.Drop) -> Result:
    kind = str(tree.args.get("kind", "")).upper()
    if kind not in (DATABASE, SCHEMA, TABLE):
        raise UnsupportedError(f"DROP {kind} is not supported.")
    targets = tree.args.get("tables") or []
    if len(targets) != 1:
        raise UnsupportedError("DROP takes exactly one object.")
    try:
        obj = live_object(ctx, kind, names.parts(targets[0]))
        if tree.meta.get(SNAPSHOT) and obj.snapshot_of is None:  # DROP SNAPSHOT TABLE
            raise ObjectNotFound(
                f"Table snapshot {names.qualified(ctx, obj)} does not exist: it is a table "
                "(DROP TABLE drops it)."
            )
    except ObjectNotFound:
        if tree.args.get("exists"):
            return ctx.status("Drop statement executed successfully (object does not exist).")
        raise
    if tree.meta.get(EMPTY_ONLY):
        held = ctx.catalog.children(obj.id, TABLE, include_dropped=False)
        if held:
            raise InvalidValue(
                f"Dataset {names.qualified(ctx, obj)} is not empty ({len(held)} "
                f"table{'s' if len(held) > 1 else ''}): "
                "DROP SCHEMA ... CASCADE deletes it with its tables."
            )
    ctx.catalog.drop(obj, ctx.now)
    ctx.catalog.record_access(ctx.query_id, obj.id, "DDL", operation="DROP")
    return ctx.status(f"{obj.name} successfully dropped.")


def live_object(ctx: Context, kind: str, parts: list[str]) -> CatalogObject:
    """The live database, schema or table ``parts`` names."""
    if kind == DATABASE:
        if len(parts) != 1:
            raise InvalidValue(f"Invalid database name '{'.'.join(parts)}'.")
        return names.database(ctx, parts[0])
    if kind == SCHEMA:
        return names.schema(ctx, parts)
    return names.table(ctx, parts)


def undrop(ctx: Context, tree: exp.Undrop) -> Result:
    kind = str(tree.args.get("kind", "")).upper()
    if kind not in (DATABASE, SCHEMA, TABLE):
        raise UnsupportedError(f"UNDROP {kind} is not supported.")
    parent_id, name = parent_and_name(ctx, kind, names.parts(tree.this))
    if ctx.catalog.live(kind, parent_id, name) is not None:
        raise ObjectAlreadyExists(f"Object '{name}' already exists.")
    # SPEC R37: incarnations the role holds nothing on are, to it, not there at all.
    candidates = [o for o in ctx.catalog.dropped(kind, parent_id, name) if security.can_see(ctx, o)]
    if not candidates:
        raise ObjectNotFound(f"{kind.capitalize()} '{name}' does not exist or not authorized.")
    # SPEC R21 restores the most recently dropped incarnation *still in time travel*:
    # one that already left it (shorter or 0 retention, R8) is no longer undroppable
    # and not in SHOW ... HISTORY (R22), so it must not hide an older one that is.
    in_window = [
        o
        for o in candidates
        if o.dropped_on is not None
        and retention.undroppable(o.dropped_on, o.dropped_retention_days or 0, ctx.now)
    ]
    if not in_window:
        latest = candidates[0]
        assert latest.dropped_on is not None
        days = latest.dropped_retention_days or 0
        ends = retention.time_travel_end(latest.dropped_on, days)
        raise CannotUndrop(
            f"{kind.capitalize()} '{name}' cannot be undropped: it left time travel at "
            f"{ends.isoformat()} (retention {days} days at drop)."
        )
    obj = in_window[0]
    security.require_undrop(ctx, obj)  # SPEC R37: OWNERSHIP of it, CREATE on its parent
    for item in ctx.catalog.undrop(obj):
        if item.expires_on is not None and item.expires_on <= ctx.now:
            item.expires_on = None  # an expired table brought back lives until told again
    ctx.catalog.record_access(ctx.query_id, obj.id, "DDL", operation="UNDROP")
    return ctx.status(f"{kind.capitalize()} {name} successfully restored.")


# -- USE ------------------------------------------------------------------------------------
def use(ctx: Context, tree: exp.Use) -> Result:
    kind = tree.text("kind").upper() or DATABASE  # USE SECONDARY ROLES: a text kind
    if kind not in (DATABASE, SCHEMA):
        raise UnsupportedError(f"USE {kind} is not supported.")
    parts = names.parts(tree.this)
    if kind == DATABASE:
        if len(parts) != 1:
            raise InvalidValue(f"Invalid database name '{'.'.join(parts)}'.")
        _make_current(ctx, names.database(ctx, parts[0]))
    else:
        _make_current(ctx, names.schema(ctx, parts))
    return ctx.status("Statement executed successfully.")
