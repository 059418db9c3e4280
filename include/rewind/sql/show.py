"""SHOW DATABASES | SCHEMAS | TABLES [HISTORY] [LIKE 'pattern'] [IN ...] (SPEC R22) and
DESCRIBE TABLE."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from rewind import retention, security
from rewind.catalog.models import CatalogObject
from rewind.constants import (
    ACCOUNT_DEFAULT_MIN_RETENTION_DAYS,
    ACCOUNT_DEFAULT_RETENTION_DAYS,
    DATABASE,
    MAX_TRANSIENT_RETENTION_DAYS,
    MIN_RETENTION_PARAM,
    RETENTION_PARAM,
    SCHEMA,
    TABLE,
)
from rewind.errors import InvalidValue, StorageError, UnsupportedError
from rewind.identifiers import display, normalize
from rewind.result import Result
from rewind.sql import names, variables
from rewind.sql.ddl import live_object
from rewind.sql.tables import current_version
from rewind.sql.values import literal
from rewind.statement import Context
from rewind.storage.columns import Column, table_columns
from rewind.storage.snapshot import Identity, Snapshot
from rewind.types import MAX_LENGTH, declared_length

TABLE_COLUMNS = [
    "created_on",
    "name",
    "database_name",
    "schema_name",
    "kind",
    "comment",
    "cluster_by",
    "rows",
    "bytes",
    "owner",
    "retention_time",
    "dropped_on",
    "is_external",  # Snowflake's column: Y for a table registered where it is (SPEC R41)
    "change_tracking",  # Snowflake's column: ON where Delta's row tracking is (CHANGES reads)
]
SCHEMA_COLUMNS = [
    "created_on",
    "name",
    "is_default",
    "is_current",
    "database_name",
    "owner",
    "comment",
    "options",
    "retention_time",
    "dropped_on",
]
DATABASE_COLUMNS = [
    "created_on",
    "name",
    "is_default",
    "is_current",
    "origin",
    "owner",
    "comment",
    "options",
    "retention_time",
    "kind",
    "dropped_on",
]
# Snowflake's DESCRIBE TABLE columns, in its order.
DESCRIBE_COLUMNS = [
    "name",
    "type",
    "kind",
    "null?",
    "default",
    "primary key",
    "unique key",
    "check",
    "expression",
    "comment",
    "policy name",
    "privacy domain",
]
# Snowflake's SHOW COLUMNS columns, in its order.
SHOW_COLUMNS = [
    "table_name",
    "schema_name",
    "column_name",
    "data_type",
    "null?",
    "default",
    "kind",
    "expression",
    "comment",
    "database_name",
    "autoincrement",
]
_TERSE = ("created_on", "name", "kind", "database_name", "schema_name")
_KINDS = {"TABLES": TABLE, "SCHEMAS": SCHEMA, "DATABASES": DATABASE}


def like_pattern(pattern: str) -> re.Pattern[str]:
    """SQL LIKE (``%``, ``_``, backslash escapes), case-insensitive as in Snowflake SHOW."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def show(ctx: Context, tree: exp.Show) -> Result:
    what = str(tree.this).upper()
    if what == "PARAMETERS":
        return _parameters(ctx, tree)
    if what == "COLUMNS":
        return _columns(ctx, tree)
    if what == "VARIABLES":
        return _variables(ctx, tree)
    if what not in _KINDS:
        raise UnsupportedError(f"SHOW {what} is not supported.")
    if tree.args.get("iceberg"):
        raise UnsupportedError("SHOW ICEBERG TABLES is not supported: Rewind's tables are Delta.")
    kind = _KINDS[what]
    found = _listed(ctx, kind, tree, history=bool(tree.args.get("history")))
    pattern = _like(tree)
    if pattern is not None:
        found = [o for o in found if pattern.fullmatch(o.name)]
    found = _paged(tree, found)
    row = {TABLE: _table_row, SCHEMA: _schema_row, DATABASE: _database_row}[kind]
    columns = {TABLE: TABLE_COLUMNS, SCHEMA: SCHEMA_COLUMNS, DATABASE: DATABASE_COLUMNS}[kind]
    rows = [row(ctx, o) for o in found]
    if tree.args.get("terse"):  # Snowflake's TERSE: these columns only, where a listing has them
        kept = [i for i, c in enumerate(columns) if c in _TERSE]
        columns, rows = [columns[i] for i in kept], [[r[i] for i in kept] for r in rows]
    return ctx.result(columns, rows)


def _listed(ctx: Context, kind: str, tree: exp.Show, history: bool) -> list[CatalogObject]:
    """The objects of ``kind`` in the listing's scope (with HISTORY, the dropped ones still
    in time travel) that the role reaches: SPEC R37, only what it reaches is listed."""
    found = ctx.catalog.objects(kind, _scope(ctx, kind, tree, history))
    found = [o for o in found if o.dropped_on is None or (history and _in_time_travel(ctx, o))]
    visible = security.visible_ids(ctx)
    return found if visible is None else [o for o in found if o.id in visible]


def _like(tree: exp.Show) -> re.Pattern[str] | None:
    """The listing's ``LIKE '...'`` pattern, if it has one."""
    like = tree.args.get("like")
    return like_pattern(str(literal(like))) if like is not None else None


def _paged(tree: exp.Show, found: list[CatalogObject]) -> list[CatalogObject]:
    """Snowflake's order (the multiple-drop example of its Time Travel page): live objects
    by name, then the dropped ones, the most recently dropped first; then STARTS WITH (a
    case-sensitive prefix) and LIMIT n [FROM 'name'] (the names after 'name')."""
    found.sort(key=lambda o: (o.name, o.created_on.timestamp()))
    found.sort(key=lambda o: -o.dropped_on.timestamp() if o.dropped_on else 0)
    found.sort(key=lambda o: o.dropped_on is not None)
    starts = tree.args.get("starts_with")
    if isinstance(starts, exp.Expression):
        prefix = str(literal(starts))
        found = [o for o in found if o.name.startswith(prefix)]
    after = tree.args.get("from_")
    if isinstance(after, exp.Expression):
        cursor = str(literal(after))
        found = [o for o in found if o.name > cursor]
    limit = tree.args.get("limit")
    if isinstance(limit, exp.Limit):
        rows = literal(limit.expression)
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            raise InvalidValue(f"LIMIT takes a number of rows, got {limit.expression.sql()}.")
        found = found[:rows]
    return found


def describe(ctx: Context, tree: exp.Describe) -> Result:
    """``DESC[RIBE] [TABLE] t``: the columns of the live table, as a reader sees them now
    (another engine's schema changes included, SPEC R40); a table the role cannot see
    answers as a missing one (SPEC R37)."""
    kind = str(tree.args.get("kind") or TABLE).upper()
    if kind != TABLE:
        hint = {
            SCHEMA: " (SHOW TABLES IN SCHEMA lists its tables)",
            DATABASE: " (SHOW SCHEMAS IN DATABASE lists its schemas)",
        }
        raise UnsupportedError(f"DESCRIBE {kind} is not supported{hint.get(kind, '')}.")
    for option in tree.args.get("expressions") or []:
        if option.sql("snowflake").upper().replace(" ", "") != "TYPE=COLUMNS":
            raise UnsupportedError(
                f"DESCRIBE TABLE ... {option.sql('snowflake')} is not supported."
            )
    obj = names.table(ctx, names.parts(tree.this))
    rows = [
        [
            c.name,
            c.type,
            "COLUMN",
            "Y" if c.nullable else "N",
            c.identity or c.default,
            "N",
            "N",
            None,
            c.expression,
            c.comment,
            None,
            None,
        ]
        for c in described(ctx, obj)
    ]
    return ctx.result(DESCRIBE_COLUMNS, rows)


@dataclass(frozen=True)
class _Described:
    """A live table's column as DESCRIBE and SHOW COLUMNS show it: its Delta nullability,
    an identity column's rule and a generated column's expression (another engine's,
    binding Rewind's writes, SPEC R40) and a column's default, in Snowflake's words."""

    column: Column
    nullable: bool
    rule: Identity | None
    expression: str | None
    comment: str | None
    default: str | None  # its DEFAULT, Spark SQL as Delta keeps it (rewind.sql.defaults)

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def type(self) -> str:
        return self.column.type

    @property
    def identity(self) -> str | None:
        rule = self.rule
        if rule is None:
            return None
        by_default = "" if rule.always else " (BY DEFAULT)"
        return f"IDENTITY START {rule.start} INCREMENT {rule.step}{by_default}"


def described(ctx: Context, obj: CatalogObject, snap: Snapshot | None = None) -> list[_Described]:
    """The live table's columns as a reader sees them now, another engine's commits
    first (their columns count too, SPEC R40); ``snap``: its current version, when the
    caller read it already."""
    if snap is None:
        snap = ctx.store.snapshot(obj.id, current_version(ctx, obj))
    nullable = {f.name: f.nullable for f in snap.schema}
    identity, generated, comments, defaults = (
        snap.identity,
        snap.generated,
        snap.comments,
        snap.defaults,
    )
    return [
        _Described(
            c,
            nullable.get(c.physical, True),
            identity.get(c.physical),
            generated.get(c.physical),
            comments.get(c.physical),
            defaults.get(c.physical),
        )
        for c in table_columns(obj)
    ]


def _columns(ctx: Context, tree: exp.Show) -> Result:
    """``SHOW COLUMNS [LIKE '...'] [IN TABLE t | SCHEMA s | DATABASE d | ACCOUNT]``: the
    columns of the live tables the role can see (SPEC R37), with Snowflake's columns;
    ``data_type`` is Snowflake's JSON of the type."""
    if str(tree.args.get("scope_kind") or "").upper() == TABLE:
        tables = [names.table(ctx, names.parts(tree.args["scope"]))]
    else:
        tables = _listed(ctx, TABLE, tree, history=False)
    pattern = _like(tree)
    rows = []
    for table in tables:
        database, schema, name = names.qualified(ctx, table).parts
        for column in described(ctx, table):
            if pattern is None or pattern.fullmatch(column.name):
                kind = json.dumps(
                    {**type_json(column.type), "nullable": column.nullable},
                    separators=(",", ":"),
                )
                null = "true" if column.nullable else "false"
                rows.append(
                    [
                        name,
                        schema,
                        column.name,
                        kind,
                        null,
                        column.default or "",
                        "COLUMN",
                        column.expression or "",
                        column.comment or "",
                        database,
                        column.identity or "",
                    ]
                )
    return ctx.result(SHOW_COLUMNS, rows)


def type_json(sql_type: str) -> dict[str, Any]:
    """Snowflake's ``data_type`` of SHOW COLUMNS for one of Rewind's column types."""
    if sql_type.startswith("NUMBER("):
        precision, scale = sql_type.removeprefix("NUMBER(").rstrip(")").split(",")
        return {"type": "FIXED", "precision": int(precision), "scale": int(scale)}
    if sql_type in ("VARCHAR", "BINARY"):
        size = 16777216 if sql_type == "VARCHAR" else 8388608
        kind = "TEXT" if sql_type == "VARCHAR" else "BINARY"
        return {"type": kind, "length": size, "byteLength": size, "fixed": False}
    sized = declared_length(sql_type)  # VARCHAR(n); another engine's CHAR(n), padded
    if sized is not None:
        kind, length = sized
        byte_length = min(4 * length, MAX_LENGTH)  # UTF-8, as Snowflake counts it
        fixed = kind == "CHAR"
        return {"type": "TEXT", "length": length, "byteLength": byte_length, "fixed": fixed}
    if sql_type.startswith("TIMESTAMP"):
        return {"type": sql_type, "precision": 0, "scale": 9}
    # A nested type (ARRAY(...), OBJECT(...), MAP(...)) by its kind, as Snowflake's JSON
    return {"type": {"FLOAT": "REAL"}.get(sql_type, sql_type.split("(")[0])}


# Snowflake's SHOW PARAMETERS columns and the words it describes these two with.
PARAMETER_COLUMNS = ["key", "value", "default", "level", "description", "type"]
_PARAMETERS = {
    RETENTION_PARAM: (
        ACCOUNT_DEFAULT_RETENTION_DAYS,
        "number of days for which Rewind retains historical data for performing Time Travel "
        "actions (SELECT, CLONE, UNDROP) on the object. A value of 0 effectively disables "
        "Time Travel for the specified database, schema, or table",
    ),
    MIN_RETENTION_PARAM: (
        ACCOUNT_DEFAULT_MIN_RETENTION_DAYS,
        "Minimum number of days for which Rewind retains historical data for performing "
        "Time Travel actions on the permanent objects of the account",
    ),
}


def _parameters(ctx: Context, tree: exp.Show) -> Result:
    """SHOW PARAMETERS: the account's two retention parameters, or an object's
    DATA_RETENTION_TIME_IN_DAYS as in force (SPEC R5-R7): the value inherited from the
    nearest container that sets it, ``level`` naming that container's kind ('' for the
    default); capped at 1 day for a transient object. Its effective retention, the
    account minimum applied, is SHOW's ``retention_time``."""
    found: list[tuple[str, int, str]] = []
    kind = str(tree.args.get("scope_kind")).upper()
    if kind == "ACCOUNT":
        for key in _PARAMETERS:
            value = ctx.catalog.account_parameter(key)
            set_here = ctx.catalog.account_parameter_set(key)
            found.append((key, value, "ACCOUNT" if set_here else ""))
    else:
        chain = ctx.catalog.ancestors(live_object(ctx, kind, names.parts(tree.args["scope"])))
        account = ctx.catalog.account_parameter(RETENTION_PARAM)
        value = retention.inherited_retention([*(o.retention_days for o in chain), account])
        holder = next((o for o in chain if o.retention_days is not None), None)
        set_here = ctx.catalog.account_parameter_set(RETENTION_PARAM)
        level = holder.kind if holder else "ACCOUNT" if set_here else ""
        if ctx.catalog.is_transient(chain[0]):
            value = min(value, MAX_TRANSIENT_RETENTION_DAYS)
        found.append((RETENTION_PARAM, value, level))
    pattern = _like(tree)
    rows = [
        [key, str(value), str(_PARAMETERS[key][0]), level, _PARAMETERS[key][1], "NUMBER"]
        for key, value, level in found
        if pattern is None or pattern.fullmatch(key)
    ]
    return ctx.result(PARAMETER_COLUMNS, rows)


# Snowflake's SHOW VARIABLES columns (but its session_id: Rewind's sessions have none).
VARIABLE_COLUMNS = ["created_on", "updated_on", "name", "value", "type", "comment"]


def _variables(ctx: Context, tree: exp.Show) -> Result:
    """SHOW VARIABLES: the session's variables (``SET``), oldest first."""
    pattern = _like(tree)
    held = sorted(ctx.state.variables.items(), key=lambda item: item[1].created_on)
    rows = [
        [v.created_on, v.updated_on, name, _shown(v.value), variables.type_name(v.value), ""]
        for name, v in held
        if pattern is None or pattern.fullmatch(name)
    ]
    return ctx.result(VARIABLE_COLUMNS, rows)


def _shown(value: object) -> str | None:
    return None if value is None else str(value)


def _in_time_travel(ctx: Context, obj: CatalogObject) -> bool:
    assert obj.dropped_on is not None
    return retention.in_time_travel(obj.dropped_on, obj.dropped_retention_days or 0, ctx.now)


def _scope(ctx: Context, kind: str, tree: exp.Show, history: bool) -> list[int] | None:
    """Parent ids the listing covers (None: every parent, for databases). With HISTORY
    they include the dropped containers: the objects dropped with a schema or database
    are dropped incarnations too, listed while in time travel (SPEC R22)."""
    if kind == DATABASE:
        return [0]
    scope_kind = str(tree.args.get("scope_kind") or "").upper()
    scope = tree.args.get("scope")
    if scope_kind == "ACCOUNT" or (scope is None and ctx.state.database is None and not scope_kind):
        dbs = [d.id for d in ctx.catalog.children(0, DATABASE, include_dropped=history)]
        return dbs if kind == SCHEMA else _schemas_of(ctx, dbs, history)
    if scope is None:
        # ``IN DATABASE`` without a name means the current database, all its schemas;
        # only a bare SHOW TABLES (or ``IN SCHEMA``) means the current schema (SPEC R22).
        if kind == TABLE and scope_kind != "DATABASE" and ctx.state.schema is not None:
            return [names.schema(ctx, None).id]
        db = names.database(ctx, None)
        return [db.id] if kind == SCHEMA else _schemas_of(ctx, [db.id], history)
    parts = names.parts(scope)
    if scope_kind == "SCHEMA" or (not scope_kind and len(parts) == 2):
        return [names.schema(ctx, parts).id]
    db = names.database(ctx, parts[0] if len(parts) == 1 else None)
    return [db.id] if kind == SCHEMA else _schemas_of(ctx, [db.id], history)


def _schemas_of(ctx: Context, database_ids: list[int], dropped: bool) -> list[int]:
    schemas = ctx.catalog.objects(SCHEMA, database_ids)
    return [s.id for s in schemas if dropped or s.dropped_on is None]


def _common(ctx: Context, obj: CatalogObject) -> dict[str, Any]:
    return {
        "created_on": obj.created_on,
        "name": obj.name,
        "owner": obj.owner_role,
        "comment": obj.comment or "",
        "retention_time": ctx.catalog.effective_retention(obj),
        "dropped_on": obj.dropped_on,
    }


def _table_row(ctx: Context, obj: CatalogObject) -> list[Any]:
    values = table_values(ctx, obj)
    return [values[c] for c in TABLE_COLUMNS]


def table_values(ctx: Context, obj: CatalogObject) -> dict[str, Any]:
    """SHOW TABLES' values of ``obj``, by column (:data:`TABLE_COLUMNS`)."""
    schema, database = ctx.catalog.ancestors(obj)[1:3]
    rows: int | None
    size: int | None
    tracking: str | None
    try:
        snap = ctx.store.snapshot(obj.id, current_version(ctx, obj))
        rows, size = snap.rows, snap.bytes
        tracking = "ON" if snap.stable_row_columns is not None else "OFF"
    except StorageError:  # a broken Delta log: list the table (to drop it), without figures
        rows = size = tracking = None
    values = _common(ctx, obj) | {
        "database_name": database.name,
        "schema_name": schema.name,
        "kind": "TRANSIENT" if ctx.catalog.is_transient(obj) else "TABLE",
        "cluster_by": f"LINEAR({obj.cluster_by})" if obj.cluster_by else "",
        "rows": rows,
        "bytes": size,
        "is_external": "Y" if obj.location is not None else "N",
        "change_tracking": tracking,
    }
    return values


def _schema_row(ctx: Context, obj: CatalogObject) -> list[Any]:
    database = ctx.catalog.ancestors(obj)[1]
    current = ctx.state.schema == obj.name and ctx.state.database == database.name
    values = _common(ctx, obj) | {
        "is_default": "N",
        "is_current": "Y" if current and obj.dropped_on is None else "N",
        "database_name": database.name,
        "options": "TRANSIENT" if ctx.catalog.is_transient(obj) else "",
    }
    return [values[c] for c in SCHEMA_COLUMNS]


def _database_row(ctx: Context, obj: CatalogObject) -> list[Any]:
    current = ctx.state.database == obj.name and obj.dropped_on is None
    values = _common(ctx, obj) | {
        "is_default": "N",
        "is_current": "Y" if current else "N",
        "origin": "",
        "options": "TRANSIENT" if obj.is_transient else "",
        "kind": "STANDARD",
    }
    return [values[c] for c in DATABASE_COLUMNS]


def get_ddl(ctx: Context, call: exp.Anonymous) -> str:
    """Snowflake's ``GET_DDL('TABLE', 'name' [, use_fully_qualified_names])``: the
    statement that creates the live table as it is now (``create or replace [TRANSIENT]
    TABLE name (...)``: each column's type, NOT NULL, default, identity, comment; the
    table's change tracking and comment), the name fully qualified where the third
    argument is true. A table the role cannot see is a missing one (SPEC R37); only
    tables have DDL here."""
    args = [literal(a) for a in call.expressions]
    if not 2 <= len(args) <= 3 or not all(isinstance(a, str) for a in args[:2]):
        raise InvalidValue(
            f"{call.sql('snowflake')[:80]}: GET_DDL takes an object kind and a name, as "
            "string constants, and whether to qualify the names."
        )
    kind, name = str(args[0]).upper(), str(args[1])
    if kind != TABLE:
        raise UnsupportedError(f"GET_DDL of a {kind} is not supported: only a TABLE's.")
    obj = names.table(ctx, [normalize(p) for p in variables.name_parts(name)])
    shown = str(names.qualified(ctx, obj)) if args[2:] == [True] else display(obj.name)
    lines = [f"\t{_column_ddl(c)}" for c in described(ctx, obj)]
    transient = "TRANSIENT " if obj.is_transient else ""
    tracked = ctx.store.snapshot(obj.id, current_version(ctx, obj)).stable_row_columns
    tracking = " CHANGE_TRACKING=TRUE" if tracked else ""
    comment = f" COMMENT='{_escaped(obj.comment)}'" if obj.comment else ""
    body = ",\n".join(lines)
    return f"create or replace {transient}TABLE {shown} (\n{body}\n){tracking}{comment};"


def _column_ddl(column: _Described) -> str:
    """A column's line of :func:`get_ddl`, in Snowflake's words."""
    parts = [display(column.name), column.type]
    if column.expression is not None:
        parts.append(f"AS ({column.expression})")
    if not column.nullable:
        parts.append("NOT NULL")
    if column.rule is not None:
        parts.append(f"autoincrement start {column.rule.start} increment {column.rule.step}")
    elif column.default is not None:
        parts.append(f"DEFAULT {column.default}")
    if column.comment:
        parts.append(f"COMMENT '{_escaped(column.comment)}'")
    return " ".join(parts)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
