"""ALTER of tables, schemas, databases and the account (SPEC R5–R9, R25): RENAME, SWAP,
SET / UNSET of retention and comment, ADD / DROP / RENAME / ALTER COLUMN."""

from __future__ import annotations

from sqlalchemy import select
from sqlglot import exp

from rewind import retention
from rewind.catalog.models import CatalogObject
from rewind.constants import (
    DATABASE,
    MIN_RETENTION_PARAM,
    RETENTION_PARAM,
    SCHEMA,
    TABLE,
    TABLE_EXPIRATION_OPTION,
)
from rewind.errors import (
    InvalidValue,
    ObjectAlreadyExists,
    ObjectNotFound,
    UnsupportedError,
)
from rewind.identifiers import normalize
from rewind.result import Result
from rewind.sql import defaults, names, snapshots
from rewind.sql.ddl import (
    check_layout,
    column_constraints,
    identity,
    live_object,
    parent_and_name,
    refuse_reserved,
    retention_target,
)
from rewind.sql.frames import quote, version_frame
from rewind.sql.parse import DEFAULT_KEYWORD, AlterContainer
from rewind.sql.tables import (
    change_physical_column,
    check_clock,
    keep_history,
    snapshot,
    track_changes,
    writable_snapshot,
)
from rewind.sql.values import (
    CHANGE_TRACKING,
    ObjectProperties,
    layout_text,
    literal,
    object_properties,
)
from rewind.statement import Context
from rewind.storage.columns import (
    Column,
    column_named,
    drop_column,
    rename_column,
    table_columns,
)
from rewind.storage.delta import FieldChange
from rewind.storage.snapshot import CURRENT_DEFAULT, Snapshot
from rewind.types import DECLARED_TYPE, ColumnType, column_type, declared_length


def alter_table(ctx: Context, tree: exp.Alter) -> Result:
    if str(tree.args.get("kind", "")).upper() != TABLE:
        raise UnsupportedError(f"ALTER {tree.args.get('kind')} is not supported.")
    try:
        obj = names.table(ctx, names.parts(tree.this))
    except ObjectNotFound:
        if tree.args.get("exists"):
            return ctx.status("Statement executed successfully.")
        raise
    for action in tree.args.get("actions") or []:
        _alter_table_action(ctx, obj, action)
    ctx.catalog.record_access(ctx.query_id, obj.id, "DDL", operation="ALTER")
    return ctx.status("Statement executed successfully.")


def _alter_table_action(ctx: Context, obj: CatalogObject, action: exp.Expression) -> None:
    if isinstance(action, exp.AlterRename):
        _rename(ctx, obj, names.parts(action.this))
    elif isinstance(action, exp.SwapTable):
        _swap(ctx, obj, names.table(ctx, names.parts(action.this)))
    elif isinstance(action, exp.AlterSet):
        for props in action.expressions:
            _set_properties(ctx, obj, object_properties(props))
    elif isinstance(action, exp.Set) and action.args.get("unset"):
        _unset(ctx, obj, [normalize(e.name) for e in action.expressions])
    elif isinstance(action, exp.ClusterProperty) or _is_drop_clustering_key(action):
        _set_clustering(obj, action)
    elif isinstance(action, exp.ColumnDef):
        add_column_to_table(ctx, obj, action)
    elif isinstance(action, exp.AlterColumn):
        _alter_column(ctx, obj, action)
    elif isinstance(action, exp.RenameColumn):
        new = normalize(action.args["to"].this)
        snapshot(ctx, obj).check_column_name(str(names.qualified(ctx, obj)), new)
        renamed = rename_column(table_columns(obj), normalize(action.this.this), new)
        obj.columns = [c.as_json() for c in renamed]
    elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
        _drop_columns(ctx, obj, action)
    else:
        raise UnsupportedError(f"Unsupported ALTER TABLE action: {action.sql('snowflake')}.")


def _drop_columns(ctx: Context, obj: CatalogObject, action: exp.Drop) -> None:
    """DROP COLUMN a, b (IF EXISTS: those of them the table has)."""
    dropped = action.args.get("tables") or []
    if action.args.get("exists"):
        dropped = [c for c in dropped if _has_column(obj, c.this)]
    _refuse_dropping_not_null(ctx, obj, [normalize(c.this) for c in dropped])
    for column in dropped:
        obj.columns = [c.as_json() for c in drop_column(table_columns(obj), normalize(column.this))]


def _has_column(obj: CatalogObject, name: exp.Identifier) -> bool:
    """Whether the table ``obj`` has a column of that name (ADD / DROP COLUMN IF [NOT]
    EXISTS: Snowflake and BigQuery then do nothing for it)."""
    return any(c.name == normalize(name) for c in table_columns(obj))


def _set_clustering(obj: CatalogObject, action: exp.Expression) -> None:
    """``CLUSTER BY (...)``: the table's clustering key (of its columns); ``DROP CLUSTERING
    KEY``: none (a declared layout, :mod:`rewind.sql.values`)."""
    if isinstance(action, exp.ClusterProperty):
        obj.cluster_by = layout_text(list(action.expressions))
        check_layout(obj, {c.name for c in table_columns(obj)})
    else:
        obj.cluster_by = None


def _is_drop_clustering_key(action: exp.Expression) -> bool:
    """``DROP CLUSTERING KEY`` (sqlglot keeps it as a command)."""
    if not isinstance(action, exp.Command) or str(action.this).upper() != "DROP":
        return False
    return " ".join(str(action.expression).upper().split()) == "CLUSTERING KEY"


def _refuse_dropping_not_null(ctx: Context, obj: CatalogObject, dropped: list[str]) -> None:
    """DROP COLUMN hides a column and keeps it in the files (SPEC R18): every later write
    stores NULL in it, which a column Delta says is not nullable forbids (SPEC R40)."""
    physical = {c.name: c.physical for c in table_columns(obj)}
    strict = {f.name for f in snapshot(ctx, obj).schema if not f.nullable}
    for name in dropped:
        if physical.get(name) in strict:
            raise UnsupportedError(
                f"Column '{name}' is NOT NULL in the Delta schema of table {obj.name}: Rewind "
                "keeps a dropped column in its files, and every later write would put NULL "
                "in it."
            )


def add_column_to_table(ctx: Context, obj: CatalogObject, action: exp.ColumnDef) -> None:
    """ADD COLUMN: a new nullable column, with its COMMENT; old versions read it as NULL
    (SPEC R18), so it cannot be NOT NULL. With a DEFAULT, the rows already there get it
    too, as in Snowflake: a second version of the statement's, an UPDATE of every row.
    IF NOT EXISTS: nothing for a column there."""
    from rewind.sql.tables import add_physical_column

    if action.args.get("exists") and _has_column(obj, action.this):
        return  # ADD COLUMN IF NOT EXISTS of a column the table has: nothing to do
    if identity(action) is not None:
        raise UnsupportedError(
            f"ADD COLUMN ... AUTOINCREMENT is not supported ({action.sql('snowflake')}): "
            "an identity column is declared when the table is created."
        )
    nullable, comment = column_constraints(action)
    if not nullable:
        raise UnsupportedError(
            f"ADD COLUMN ... NOT NULL is not supported: the rows already there hold NULL in "
            f"it ({action.sql('snowflake')}); add it, fill it, then ALTER COLUMN ... SET NOT NULL."
        )
    name = normalize(action.this)
    default = defaults.declared(action, ctx.state.dialect, column_type(action.args["kind"]).spark)
    metadata = {"comment": comment, CURRENT_DEFAULT: default}
    add_physical_column(ctx, obj, name, action.args["kind"], metadata)
    if default is not None:
        _set_to_default(ctx, obj, name)


def _set_to_default(ctx: Context, obj: CatalogObject, name: str) -> None:
    """``UPDATE t SET name = DEFAULT``: every row of ``obj`` gets the column's default."""
    from rewind.sql.dml import update
    from rewind.sql.query import own_reference

    table = own_reference(ctx, obj)
    column = exp.column(exp.to_identifier(name, quoted=True))
    update(ctx, exp.Update(this=table, expressions=[column.eq(exp.Var(this=DEFAULT_KEYWORD))]))


def _alter_column(ctx: Context, obj: CatalogObject, action: exp.AlterColumn) -> None:
    """``ALTER TABLE t ALTER | MODIFY [COLUMN] c``: ``SET DATA TYPE`` a longer VARCHAR (or
    one of any length; Snowflake allows no shorter one, which would cut the strings it
    holds), ``SET NOT NULL`` (refused while a row holds NULL there), ``DROP NOT NULL``,
    ``COMMENT '...'``. Each is one metadata-only Delta version, delta-spark's CHANGE
    COLUMN, which binds every writer after it (SPEC R40); ``SET DEFAULT expr`` / ``DROP
    DEFAULT`` (BigQuery's; Snowflake's for a sequence), the value of the rows written
    after it without one (:mod:`rewind.sql.defaults`). Another change is refused."""
    columns = table_columns(obj)
    column = column_named(columns, normalize(action.this))
    # sqlglot's flags default to False; SET NOT NULL is allow_null False
    given = {k for k, v in action.args.items() if v not in (None, False) or k == "allow_null"}
    given -= {"this"}
    retyped = None
    if given == {"dtype"}:
        retyped = _longer(column, column_type(action.args["dtype"]))
        change = FieldChange(metadata={DECLARED_TYPE: retyped.declared()})
    elif given in ({"allow_null"}, {"allow_null", "drop"}):
        nullable = bool(action.args["allow_null"])
        change = FieldChange(nullable=nullable, alone=not nullable)
    elif given == {"comment"}:
        change = FieldChange(metadata={"comment": str(literal(action.args["comment"]))})
    elif given == {"default"}:  # SET DEFAULT: the rows written after it get it
        expression, dialect = action.args["default"], ctx.state.dialect
        default = defaults.spark_text(expression, action, dialect, column.spark)
        change = FieldChange(metadata={CURRENT_DEFAULT: default})
    elif given == {"drop"}:  # DROP DEFAULT
        change = FieldChange(metadata={CURRENT_DEFAULT: None})
    else:
        raise UnsupportedError(f"Unsupported ALTER TABLE action: {action.sql('snowflake')}.")
    check_clock(ctx, obj)
    base = writable_snapshot(ctx, obj)
    if change.nullable is False:
        _refuse_nulls(ctx, obj, base, columns, column)
    change_physical_column(ctx, obj, base, column.physical, change)
    if retyped is not None:
        kept = [
            Column(c.name, c.physical, retyped.sql, c.spark) if c == column else c for c in columns
        ]
        obj.columns = [c.as_json() for c in kept]


def _longer(column: Column, new: ColumnType) -> ColumnType:
    """``new``, a VARCHAR at least as long as ``column``'s (Snowflake's rule)."""
    old = declared_length(column.type)
    if column.spark != "string" or new.spark != "string" or (old and old[0] == "CHAR"):
        raise UnsupportedError(
            f"Column {column.name} {column.type} cannot become {new.sql}: only a VARCHAR's "
            "length can change, to a longer one."
        )
    longer = declared_length(new.sql)
    if longer is not None and (old is None or longer[1] < old[1]):
        raise InvalidValue(
            f"Column {column.name} {column.type} cannot become {new.sql}: a shorter length "
            "would cut the strings it holds."
        )
    return new


def _refuse_nulls(
    ctx: Context, obj: CatalogObject, base: Snapshot, columns: list[Column], column: Column
) -> None:
    """SET NOT NULL: no row of the current version may hold NULL in the column."""
    frame = version_frame(ctx, base, columns)
    if frame.where(frame[quote(column.name)].isNull()).limit(1).count():
        raise InvalidValue(
            f"Column {column.name} of table {obj.name} holds NULL in a row: it cannot be "
            "made NOT NULL."
        )


def _rename(ctx: Context, obj: CatalogObject, target: list[str]) -> None:
    if obj.kind == TABLE:
        parent, name = (
            names.table_parent(ctx, target)
            if len(target) > 1
            else (ctx.catalog.get(obj.parent_id), target[0])
        )
        assert parent is not None
        parent_id = parent.id
    else:
        parent_id, name = parent_and_name(ctx, obj.kind, target)
        refuse_reserved(obj.kind, name)
    if ctx.catalog.live(obj.kind, parent_id, name) is not None:
        raise ObjectAlreadyExists(f"Object '{name}' already exists.")
    was = obj.name
    ctx.catalog.move(obj, parent_id, name, ctx.now)
    if obj.kind == DATABASE and ctx.state.database == was:
        ctx.state.database = name
    if obj.kind == SCHEMA and ctx.state.schema == was:
        ctx.state.schema = name


def _swap(ctx: Context, a: CatalogObject, b: CatalogObject) -> None:
    """Exchange the names (and parents) of two live objects (SPEC R25)."""
    if a.id == b.id:
        raise InvalidValue("An object cannot be swapped with itself.")
    a_place, b_place = (a.parent_id, a.name), (b.parent_id, b.name)
    a.name = f"__rewind_swap_{a.id}"  # the live-name index forbids a moment with two Bs
    ctx.catalog.session.flush()
    ctx.catalog.move(b, *a_place, ctx.now)
    ctx.catalog.move(a, *b_place, ctx.now)
    ctx.catalog.record_access(ctx.query_id, b.id, "DDL", operation="ALTER")


def _set_properties(ctx: Context, obj: CatalogObject, props: ObjectProperties) -> None:
    if props.has_retention:
        obj.retention_days = retention.validate_retention(
            props.retention,
            transient=ctx.catalog.is_transient(obj),
            target=retention_target(obj.kind, names.qualified(ctx, obj).parts),
        )
        guard_external_tables(ctx, obj)
    if props.has_comment:
        obj.comment = props.comment
    if props.has_expiration:  # BigQuery's ALTER TABLE ... SET OPTIONS
        obj.expires_on = snapshots.expiration(ctx, props)
    if props.has_table_lifetime:  # tables created from now on (BigQuery's)
        obj.table_expiration_days = props.lifetime_days
    if props.change_tracking is not None:
        track_changes(ctx, obj, props.change_tracking)


def _unset(ctx: Context, obj: CatalogObject, params: list[str]) -> None:
    for param in params:
        if param == RETENTION_PARAM:
            obj.retention_days = None
            guard_external_tables(ctx, obj)
        elif param == "COMMENT":
            obj.comment = None
        elif param == CHANGE_TRACKING:
            track_changes(ctx, obj, False)
        else:
            raise UnsupportedError(f"Unsupported parameter: {param}.")


def alter_container(ctx: Context, tree: AlterContainer) -> Result:
    """ALTER ACCOUNT | DATABASE | SCHEMA ... SET | UNSET | RENAME TO | SWAP WITH."""
    if tree.kind == "ACCOUNT":
        _alter_account(ctx, tree)
        return ctx.status("Statement executed successfully.")
    assert tree.name is not None
    try:
        obj = live_object(ctx, tree.kind, names.parts(tree.name))
    except ObjectNotFound:
        if tree.if_exists:
            return ctx.status("Statement executed successfully.")
        raise
    if tree.action == "RENAME":
        assert tree.target is not None
        _rename(ctx, obj, names.parts(tree.target))
    elif tree.action == "SWAP":
        assert tree.target is not None
        _swap(ctx, obj, live_object(ctx, tree.kind, names.parts(tree.target)))
    elif tree.action == "UNSET":
        _unset(ctx, obj, list(tree.properties))
    else:
        _set_properties(ctx, obj, _container_properties(tree.properties))
    ctx.catalog.record_access(ctx.query_id, obj.id, "DDL", operation="ALTER")
    return ctx.status("Statement executed successfully.")


def _container_properties(values: dict[str, exp.Expression]) -> ObjectProperties:
    props = ObjectProperties()
    for key, node in values.items():
        if key == RETENTION_PARAM:
            props.retention = literal(node)
        elif key == "COMMENT":
            props.comment = literal(node)
        elif key == TABLE_EXPIRATION_OPTION:  # BigQuery's dataset option
            props.table_lifetime = literal(node)
        else:
            raise UnsupportedError(f"Unsupported parameter: {key}.")
    return props


def _alter_account(ctx: Context, tree: AlterContainer) -> None:
    """Account parameters (SPEC R5, R7); ACCOUNTADMIN only (R37, checked in sql/needs.py)."""
    for key, node in tree.properties.items():
        if key not in (RETENTION_PARAM, MIN_RETENTION_PARAM):
            raise UnsupportedError(f"Unsupported account parameter: {key}.")
        if tree.action == "UNSET":
            ctx.catalog.set_account_parameter(key, None)
            continue
        value = retention.validate_retention(
            literal(node), transient=False, param=key, target="the account"
        )
        ctx.catalog.set_account_parameter(key, value)
    guard_external_tables(ctx, None)


def guard_external_tables(ctx: Context, scope: CatalogObject | None) -> None:
    """Keep the Delta retention properties of the live external tables under ``scope``
    (None: the account) in step with a retention just changed (SPEC R42)."""
    ctx.catalog.session.flush()
    for table in ctx.catalog.session.scalars(
        select(CatalogObject).where(
            CatalogObject.location.is_not(None), CatalogObject.dropped_on.is_(None)
        )
    ):
        if scope is None or scope.id in {a.id for a in ctx.catalog.ancestors(table)}:
            keep_history(ctx, table)
