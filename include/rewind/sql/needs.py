"""What a statement needs before it runs (SPEC R37): privileges on the objects its
names resolve to now, computed from the parsed tree alone.

A name that does not resolve needs nothing here: the statement then fails with
OBJECT_NOT_FOUND (or does nothing, with IF EXISTS) exactly as without access control.
Checks on what a handler only finds as it runs stay with the handler: the incarnation
UNDROP brings back, the tables a schema or database clone takes, the table a restore
rewinds, and role membership for USE ROLE and SHOW GRANTS TO|OF.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlglot import exp

from rewind.catalog.models import CatalogObject
from rewind.constants import DATABASE, SCHEMA, TABLE
from rewind.errors import NoCurrentContainer, ObjectNotFound
from rewind.security import (
    DELETE,
    INSERT,
    OWNERSHIP,
    SELECT,
    UPDATE,
    Need,
    check,
    create_need,
)
from rewind.sql import clone, names
from rewind.sql.access import (
    CreatePrincipal,
    DropPrincipal,
    GrantPrivileges,
    GrantRole,
    ShowGrants,
)
from rewind.sql.analysis import Analysis
from rewind.sql.ddl import live_object, parent_and_name
from rewind.sql.parse import AlterContainer
from rewind.statement import Context

T = TypeVar("T")


def _resolved(resolve: Callable[..., T], *args: Any) -> T | None:
    """``resolve(*args)``, or None when the name does not resolve (the handler says so)."""
    try:
        return resolve(*args)
    except (ObjectNotFound, NoCurrentContainer):
        return None


def _on(privileges: list[str], obj: CatalogObject | None) -> list[Need]:
    return [Need(p, obj) for p in dict.fromkeys(privileges)] if obj is not None else []


def _reads(ctx: Context, tree: object, analysis: Analysis) -> list[Need]:
    """SELECT on every table the statement reads, at any point (AT | BEFORE): the
    statement's analysis, which the audit trail records too."""
    found: list[Need] = []
    for read in analysis.reads:
        if read.system_view:
            found.append(Need(f"Reading {'.'.join(read.parts)}"))
        elif read.table_id is not None:
            found += _on([SELECT], ctx.catalog.get(read.table_id))
    return found


def _write(
    ctx: Context, target: exp.Table, privileges: list[str], analysis: Analysis
) -> list[Need]:
    """``privileges`` on the written table, SELECT on every table the statement reads."""
    obj = _resolved(names.table, ctx, names.parts(target))
    return _on(privileges, obj) + _reads(ctx, target, analysis)


def _insert(ctx: Context, tree: exp.Insert, analysis: Analysis) -> list[Need]:
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    # INSERT OVERWRITE removes the rows there were, as DELETE does (as in Snowflake).
    privileges = [INSERT, DELETE] if tree.args.get("overwrite") else [INSERT]
    return _write(ctx, target, privileges, analysis)


def _merge(ctx: Context, tree: exp.Merge, analysis: Analysis) -> list[Need]:
    """Each WHEN clause needs what it does: INSERT, UPDATE or DELETE."""
    privileges = [
        UPDATE
        if isinstance(when.args["then"], exp.Update)
        else DELETE
        if when.args.get("matched")
        else INSERT
        for when in tree.args["whens"].expressions
    ]
    return _write(ctx, tree.this, privileges, analysis)


def _truncate(ctx: Context, tree: exp.TruncateTable, analysis: Analysis) -> list[Need]:
    return [
        need
        for table in tree.expressions
        for need in _on([DELETE], _resolved(names.table, ctx, names.parts(table)))
    ]


def _create(ctx: Context, tree: exp.Create, analysis: Analysis) -> list[Need]:
    """CREATE on the parent; OR REPLACE: OWNERSHIP of what it replaces; SELECT on what
    CTAS and a table clone read (container clones check each table they take)."""
    kind = str(tree.args.get("kind", "")).upper()
    if kind not in (DATABASE, SCHEMA, TABLE):
        return []
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    place = _resolved(parent_and_name, ctx, kind, names.parts(target))
    if place is None:
        return []
    parent_id, name = place
    found = [create_need(kind, ctx.catalog.get(parent_id) if parent_id else None)]
    if tree.args.get("replace"):
        found += _on([OWNERSHIP], ctx.catalog.live(kind, parent_id, name))
    if tree.args.get("clone") and kind == TABLE:
        found += _on([SELECT], _resolved(clone.clone_source, ctx, kind, tree))
    return found + _reads(ctx, tree, analysis)


def _drop(ctx: Context, tree: exp.Drop, analysis: Analysis) -> list[Need]:
    kind = str(tree.args.get("kind", "")).upper()
    if kind not in (DATABASE, SCHEMA, TABLE):
        return []
    return [
        need
        for target in tree.args.get("tables") or []
        for need in _on([OWNERSHIP], _resolved(live_object, ctx, kind, names.parts(target)))
    ]


def _move(ctx: Context, obj: CatalogObject, target: list[str]) -> list[Need]:
    """RENAME into another container needs CREATE there, as creating would."""
    if obj.kind == DATABASE or len(target) < 2:
        return []
    place = _resolved(parent_and_name, ctx, obj.kind, target)
    if place is None or place[0] == obj.parent_id:
        return []
    return [create_need(obj.kind, ctx.catalog.get(place[0]))]


def _alter_table(ctx: Context, tree: exp.Alter, analysis: Analysis) -> list[Need]:
    """ALTER, RENAME and SWAP need OWNERSHIP (of both tables for SWAP)."""
    if str(tree.args.get("kind", "")).upper() != TABLE:
        return []
    obj = _resolved(names.table, ctx, names.parts(tree.this))
    if obj is None:
        return []
    found = [Need(OWNERSHIP, obj)]
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.SwapTable):
            found += _on([OWNERSHIP], _resolved(names.table, ctx, names.parts(action.this)))
        elif isinstance(action, exp.AlterRename):
            found += _move(ctx, obj, names.parts(action.this))
    return found


def _alter_container(ctx: Context, tree: AlterContainer, analysis: Analysis) -> list[Need]:
    if tree.kind == "ACCOUNT":
        return [Need("ALTER ACCOUNT")]  # account parameters: ACCOUNTADMIN (SPEC R37)
    assert tree.name is not None
    obj = _resolved(live_object, ctx, tree.kind, names.parts(tree.name))
    if obj is None:
        return []
    found = [Need(OWNERSHIP, obj)]
    if tree.target is not None and tree.action == "SWAP":
        found += _on([OWNERSHIP], _resolved(live_object, ctx, tree.kind, names.parts(tree.target)))
    elif tree.target is not None:
        found += _move(ctx, obj, names.parts(tree.target))
    return found


def _access(ctx: Context, tree: Any, analysis: Analysis) -> list[Need]:
    """Users, roles and role grants: ACCOUNTADMIN (Snowflake's USERADMIN and SECURITYADMIN
    are folded into it); privileges and SHOW GRANTS ON an object: its OWNERSHIP."""
    if isinstance(tree, CreatePrincipal | DropPrincipal):
        verb = "CREATE" if isinstance(tree, CreatePrincipal) else "DROP"
        return [Need(f"{verb} {tree.kind}")]
    if isinstance(tree, GrantRole):
        return [Need("GRANT ROLE" if tree.grant else "REVOKE ROLE")]
    if isinstance(tree, GrantPrivileges) or (isinstance(tree, ShowGrants) and tree.scope == "ON"):
        assert tree.kind is not None and tree.target is not None
        return _on([OWNERSHIP], _resolved(live_object, ctx, tree.kind, names.parts(tree.target)))
    return []


_RULES: list[tuple[type | tuple[type, ...], Callable[[Context, Any, Analysis], list[Need]]]] = [
    (exp.Create, _create),
    (exp.Drop, _drop),
    (exp.Alter, _alter_table),
    (AlterContainer, _alter_container),
    (exp.Insert, _insert),
    (exp.Update, lambda ctx, tree, analysis: _write(ctx, tree.this, [UPDATE], analysis)),
    (exp.Delete, lambda ctx, tree, analysis: _write(ctx, tree.this, [DELETE], analysis)),
    (exp.TruncateTable, _truncate),
    (exp.Merge, _merge),
    (exp.Query, _reads),
    ((CreatePrincipal, DropPrincipal, GrantRole, GrantPrivileges, ShowGrants), _access),
]


def needs(ctx: Context, tree: object, analysis: Analysis) -> list[Need]:
    """The privileges ``tree`` needs, in the order they are checked (SPEC R37).

    UNDROP, USE and SHOW need nothing here: UNDROP checks the incarnation it finds
    (:func:`rewind.security.require_undrop`), SHOW lists only what the role reaches.
    """
    for kind, rule in _RULES:
        if isinstance(tree, kind):
            return rule(ctx, tree, analysis)
    return []


def authorize(ctx: Context, tree: object, analysis: Analysis) -> None:
    """The one check before any statement runs: every privilege it needs (SPEC R37)."""
    check(ctx, needs(ctx, tree, analysis))
