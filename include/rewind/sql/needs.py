"""What a statement needs before it runs (SPEC R37): privileges on the objects its
analysis (:mod:`rewind.sql.analysis`) resolved, decided from that analysis alone.

A name that does not resolve needs nothing here: the statement then fails with
OBJECT_NOT_FOUND (or does nothing, with IF EXISTS) exactly as without access control.
UNDROP, USE and SHOW need nothing here either: UNDROP checks the incarnation it finds
(:func:`rewind.security.require_undrop`), SHOW lists only what the role reaches.
"""

from __future__ import annotations

from rewind.constants import TABLE
from rewind.security import OWNERSHIP, SELECT, Need, check, create_need
from rewind.statement import CREATE, DATA_CHANGES, MOVE, Analysis, Change, Context


def needs(ctx: Context, analysis: Analysis) -> list[Need]:
    """The privileges the analysed statement needs, in the order they are checked:
    account-level actions (ACCOUNTADMIN), each change (CREATE on the container for a
    new object or one moved into it, the privilege of each kind of row change on the
    written table, OWNERSHIP of what is replaced, dropped, altered, swapped or granted
    on), SELECT on a cloned table, then SELECT on every table it reads, at any point."""
    from rewind.sql.information_schema import is_view  # every role's (rows it can see)

    found = [Need(action) for action in analysis.account]
    for change in analysis.changes:
        found.append(_change(ctx, change))
    source = analysis.clone_source
    cloned = ctx.catalog.get(source.object_id) if source and source.object_id else None
    if cloned is not None and cloned.kind == TABLE:  # container clones check each table
        found.append(Need(SELECT, cloned))
    for read in analysis.reads:
        if read.system_view and not is_view(read.parts):  # ACCOUNT_USAGE: ACCOUNTADMIN's
            found.append(Need(f"Reading {'.'.join(read.parts)}"))
        elif read.object_id is not None:
            found.append(Need(SELECT, ctx.catalog.get(read.object_id)))
    return list(dict.fromkeys(found))


def _change(ctx: Context, change: Change) -> Need:
    if change.operation in (CREATE, MOVE):
        parent = ctx.catalog.get(change.parent_id) if change.parent_id else None
        return create_need(change.kind, parent)
    assert change.object_id is not None
    obj = ctx.catalog.get(change.object_id)
    privilege = change.operation if change.operation in DATA_CHANGES else OWNERSHIP
    return Need(privilege, obj)


def authorize(ctx: Context, analysis: Analysis) -> None:
    """The one check before any statement runs: every privilege it needs (SPEC R37)."""
    check(ctx, needs(ctx, analysis))
