"""One statement's analysis, computed once after parsing, before it runs (issue 15; SPEC
R36, R37).

:func:`analyse` resolves every name the statement uses to the catalog object it means
*now*, before the statement changes any name, and returns an
:class:`~rewind.statement.Analysis`: the tables it reads (each reference in the live
table or, in BigQuery's dialect at a point, the incarnation that existed then), what it
writes (one change per kind of row change: the privilege each needs), creates (in which
container), replaces, drops and alters, the object a CLONE copies, and account-level
actions. Then

* authorization (:mod:`rewind.sql.needs`) maps the analysis to privileges;
* the audit trail (:mod:`rewind.sql.recording`) keys its column lineage and the
  before-state of what an ALTER names from it;
* execution binds each table reference to the object the analysis resolved
  (:func:`rewind.sql.query.referenced`: the reference carries its index here).

A name that does not resolve changes nothing in the analysis; the statement then fails
on it (OBJECT_NOT_FOUND) or does nothing (IF EXISTS), as without access control.
Checks on what a handler only finds as it runs stay with the handler: the incarnation
UNDROP brings back, the tables a schema or database clone takes, the table a restore
rewinds, role membership for USE ROLE and SHOW GRANTS TO|OF.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, TypeVar

from sqlglot import exp

from rewind.catalog.models import CatalogObject
from rewind.constants import DATABASE, SCHEMA, TABLE
from rewind.errors import NoCurrentContainer, ObjectNotFound
from rewind.sql import clone, names
from rewind.sql.access import CreatePrincipal, DropPrincipal, GrantPrivileges, GrantRole, ShowGrants
from rewind.sql.ddl import live_object, parent_and_name
from rewind.sql.parse import AlterContainer
from rewind.sql.query import REFERENCE, renamed, table_read, table_references
from rewind.statement import (
    ALTER,
    CREATE,
    DELETE,
    DROP,
    GRANT,
    INSERT,
    MOVE,
    REPLACE,
    SWAP,
    TABLE_KEY,
    UPDATE,
    Analysis,
    Change,
    Context,
    Reference,
)
from rewind.storage.columns import table_columns

T = TypeVar("T")

# Statements whose table references are data reads (a CREATE only with AS SELECT).
_READING = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Merge)
_KINDS = (DATABASE, SCHEMA, TABLE)


def reads_tables(tree: object) -> bool:
    if isinstance(tree, exp.Create):
        return isinstance(tree.expression, exp.Query)
    return isinstance(tree, _READING)


def analyse(ctx: Context, tree: object) -> Analysis:
    """The statement's analysis, resolved now; each table reference of ``tree`` is marked
    with its index in ``references`` (execution finds its resolution there).

    Raises:
        UnsupportedError, InvalidValue: a reference that is no catalog table name (a
            table function, a path), which fails the statement (SPEC R38).
    """
    references, keyed, tables = _references(ctx, tree)
    changes = list(_changes(ctx, tree, references))
    account = _account(tree)
    source = None
    if isinstance(tree, exp.Create) and tree.args.get("clone") and _kind(tree) in _KINDS:
        source = _reference(
            tree.args["clone"].this,
            lambda: clone.clone_source(ctx, _kind(tree), tree),
            target=False,
            views=False,
        )
    return Analysis(tuple(references), tuple(changes), account, source, keyed, tables)


def _resolved(resolve: Callable[..., T], *args: Any) -> T | None:
    """``resolve(*args)``, or None when the name does not resolve (the handler says so)."""
    try:
        return resolve(*args)
    except (ObjectNotFound, NoCurrentContainer):
        return None


def _reference(
    table: exp.Table, resolve: Callable[[], CatalogObject], target: bool, views: bool = True
) -> Reference:
    """``table`` resolved (``views``: a system view's name is one)."""
    # The system views' module reads metrics with delta-rs and pyarrow: imported here,
    # when a statement names a table, not by every statement.
    from rewind.lifecycle.views import is_system_view
    from rewind.sql.information_schema import is_view

    parts = tuple(names.parts(table))
    if views and (is_system_view(list(parts)) or is_view(parts)):
        return Reference(parts, None, True, target)
    try:
        return Reference(parts, resolve().id, False, target)
    except (ObjectNotFound, NoCurrentContainer) as exc:
        # The statement fails on it when it runs (or creates it: a CTAS target).
        return Reference(parts, None, False, target, error=exc)


def _references(
    ctx: Context, tree: object
) -> tuple[list[Reference], exp.Expression | None, dict[str, tuple[str, ...]]]:
    """Every table reference, resolved and marked, and the keyed copy of the statement
    (each resolved table renamed to ``__RW_T<id>``) with each key's columns."""
    if not isinstance(tree, exp.Expression) or not reads_tables(tree):
        return [], None, {}
    target = _target(tree)
    found: list[Reference] = []
    for table, parts in table_references(tree):
        table.meta[REFERENCE] = len(found)
        found.append(_reference(table, partial(table_read, ctx, table, parts), table is target))
    keyed = tree.copy()
    tables: dict[str, tuple[str, ...]] = {}
    for table, _ in table_references(keyed):
        reference = found[table.meta[REFERENCE]]
        if reference.object_id is None:  # a system view, a CTAS target, an unknown name
            continue
        obj = ctx.catalog.get(reference.object_id)
        assert obj is not None
        key = f"{TABLE_KEY}{obj.id}"
        tables[key] = tuple(c.name for c in table_columns(obj))
        alias = table.args.get("alias") or exp.TableAlias(this=table.this.copy())
        table.replace(renamed(table, key, alias))
    return found, keyed, tables


def _target(tree: exp.Expression) -> exp.Expression | None:
    """The table node a DML statement writes or a CTAS creates."""
    if isinstance(tree, exp.Create | exp.Insert):
        node = tree.this
        return node.this if isinstance(node, exp.Schema) else node
    if isinstance(tree, exp.Update | exp.Delete | exp.Merge):
        return tree.this
    return None


def _kind(tree: Any) -> str:
    return str(tree.args.get("kind", "")).upper()


def _changes(ctx: Context, tree: object, references: list[Reference]) -> Iterator[Change]:
    """What the statement writes, creates, drops and alters, in the order checked."""
    if isinstance(tree, exp.Create):
        yield from _create(ctx, tree)
    elif isinstance(tree, exp.Drop) and _kind(tree) in _KINDS:
        for target in tree.args.get("tables") or []:
            yield from _on(DROP, _resolved(live_object, ctx, _kind(tree), names.parts(target)))
    elif isinstance(tree, exp.Alter) and _kind(tree) == TABLE:
        yield from _alter(ctx, TABLE, tree.this, _table_actions(tree))
    elif isinstance(tree, AlterContainer) and tree.kind in (DATABASE, SCHEMA):
        assert tree.name is not None
        yield from _alter(ctx, tree.kind, tree.name, [(tree.action, tree.target)])
    elif isinstance(tree, exp.Insert | exp.Update | exp.Delete | exp.Merge):
        written = [r.object_id for r in references if r.target and r.object_id is not None]
        for operation in dict.fromkeys(_data_changes(tree)) if written else ():
            yield Change(operation, TABLE, written[0])
    elif isinstance(tree, exp.TruncateTable):
        for table in tree.expressions:
            yield from _on(DELETE, _resolved(names.table, ctx, names.parts(table)))
    elif isinstance(tree, GrantPrivileges) or (isinstance(tree, ShowGrants) and tree.scope == "ON"):
        assert tree.kind is not None and tree.target is not None
        yield from _on(GRANT, _resolved(live_object, ctx, tree.kind, names.parts(tree.target)))


def _on(operation: str, obj: CatalogObject | None) -> Iterator[Change]:
    if obj is not None:
        yield Change(operation, obj.kind, obj.id)


def _create(ctx: Context, tree: exp.Create) -> Iterator[Change]:
    """The new object in its container, and the live one OR REPLACE replaces."""
    kind = _kind(tree)
    if kind not in _KINDS:
        return
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    place = _resolved(parent_and_name, ctx, kind, names.parts(target))
    if place is None:
        return
    parent_id, name = place
    yield Change(CREATE, kind, None, parent_id or None)
    if tree.args.get("replace"):
        yield from _on(REPLACE, ctx.catalog.live(kind, parent_id, name))


def _data_changes(tree: exp.Expression) -> list[str]:
    """The kinds of row change a DML statement makes: INSERT OVERWRITE removes the rows
    there were, as DELETE does; each WHEN clause of a MERGE does what it says."""
    if isinstance(tree, exp.Insert):
        return [INSERT, DELETE] if tree.args.get("overwrite") else [INSERT]
    if isinstance(tree, exp.Merge):
        return [
            UPDATE
            if isinstance(when.args["then"], exp.Update)
            else DELETE
            if when.args.get("matched")
            else INSERT
            for when in tree.args["whens"].expressions
        ]
    return [UPDATE] if isinstance(tree, exp.Update) else [DELETE]


def _table_actions(tree: exp.Alter) -> list[tuple[str, exp.Table | None]]:
    found: list[tuple[str, exp.Table | None]] = []
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.SwapTable):
            found.append(("SWAP", action.this))
        elif isinstance(action, exp.AlterRename):
            found.append(("RENAME", action.this))
    return found


def _alter(
    ctx: Context, kind: str, name: exp.Table, actions: list[tuple[str, exp.Table | None]]
) -> Iterator[Change]:
    """The object altered; a SWAP's partner; the container a RENAME moves it into."""
    obj = _resolved(live_object, ctx, kind, names.parts(name))
    if obj is None:
        return
    yield Change(ALTER, kind, obj.id)
    for action, other in actions:
        if other is None:
            continue
        if action == "SWAP":
            yield from _on(SWAP, _resolved(live_object, ctx, kind, names.parts(other)))
        elif action == "RENAME":
            yield from _move(ctx, obj, names.parts(other))


def _move(ctx: Context, obj: CatalogObject, target: list[str]) -> Iterator[Change]:
    """A RENAME into another container (creating there, as CREATE does)."""
    if obj.kind == DATABASE or len(target) < 2:
        return
    place = _resolved(parent_and_name, ctx, obj.kind, target)
    if place is not None and place[0] != obj.parent_id:
        yield Change(MOVE, obj.kind, obj.id, place[0])


def _account(tree: object) -> tuple[str, ...]:
    """Account-level actions: users, roles, role grants, account parameters."""
    if isinstance(tree, CreatePrincipal | DropPrincipal):
        verb = "CREATE" if isinstance(tree, CreatePrincipal) else "DROP"
        return (f"{verb} {tree.kind}",)
    if isinstance(tree, GrantRole):
        return ("GRANT ROLE" if tree.grant else "REVOKE ROLE",)
    if isinstance(tree, AlterContainer) and tree.kind == "ACCOUNT":
        return ("ALTER ACCOUNT",)
    return ()
