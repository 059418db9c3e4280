"""ACCESS_HISTORY ``object_modified_by_ddl.properties`` (SPEC R36). Pure: no catalog, no I/O.

Properties are the difference a DDL statement made to its object, each as Snowflake
writes them, ``{"<property>": {"value": ...}}``:

* CREATE / REPLACE: the parameters given (``DATA_RETENTION_TIME_IN_DAYS``, ``COMMENT``,
  ``TRANSIENT``), the table's ``columns`` (``{"C": {"objectId": {"value": <columnId>},
  "subOperationType": "ADD"}}``, as 002 prints them), the
  ``cloneSource`` of a clone and, for REPLACE, the ``replacedObjectId``.
* ALTER: what changed — ``name`` (RENAME, and SWAP, whose ``swapTarget`` is the other
  object as it was named before), parameters set or unset (value NULL), columns added
  or dropped (``subOperationType`` ADD / DROP), columns renamed (``{"OLD":
  {"subOperationType": "ALTER", "name": {"value": "NEW"}}}``: 002 records the new name).
* DROP / UNDROP: none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewind.constants import RETENTION_PARAM

CREATE, REPLACE, ALTER, DROP = "CREATE", "REPLACE", "ALTER", "DROP"


@dataclass(frozen=True)
class ObjectState:
    """What DDL can change on an object, at one moment."""

    name: str
    retention_days: int | None = None
    comment: str | None = None
    transient: bool = False
    columns: tuple[str, ...] = ()
    column_ids: tuple[int, ...] = ()  # each column's columnId, if known


@dataclass(frozen=True)
class Related:
    """Another object a DDL statement touched: its id, name then and operation."""

    object_id: int
    object_name: str | None
    operation: str | None


def ddl_properties(
    operation: str,
    before: ObjectState | None,
    after: ObjectState,
    *,
    clone_source: Related | None = None,
    others: Sequence[Related] = (),
) -> dict[str, Any]:
    """The properties of a DDL statement's main object (see the module docstring).

    ``before`` is the object as the statement found it (None for a new one); ``others``
    the other objects the statement changed by DDL (what REPLACE dropped, SWAP's partner).
    """
    if operation in (CREATE, REPLACE):
        props = changes(ObjectState(name=after.name), after)
        if clone_source is not None:
            props["cloneSource"] = _value(clone_source.object_name, clone_source.object_id)
        for other in others:
            if operation == REPLACE and other.operation == DROP:
                props["replacedObjectId"] = {"value": other.object_id}
        return props
    if operation == ALTER and before is not None:
        props = changes(before, after)
        for other in others:
            if other.operation == ALTER:
                props["swapTarget"] = _value(other.object_name, other.object_id)
        return props
    return {}


def changes(before: ObjectState, after: ObjectState) -> dict[str, Any]:
    """Properties that differ between two states of one object."""
    props: dict[str, Any] = {}
    if after.name != before.name:
        props["name"] = {"value": after.name}
    if after.retention_days != before.retention_days:
        props[RETENTION_PARAM] = {"value": after.retention_days}
    if after.comment != before.comment:
        props["COMMENT"] = {"value": after.comment}
    if after.transient and not before.transient:
        props["TRANSIENT"] = {"value": True}
    renamed = _renamed(before, after)
    ids = dict(zip(before.columns, before.column_ids, strict=False))
    ids |= dict(zip(after.columns, after.column_ids, strict=False))
    columns: dict[str, Any] = {
        c: _column(ids, c, "ADD")
        for c in after.columns
        if c not in before.columns and c not in renamed.values()
    }
    columns |= {
        c: _column(ids, c, "DROP")
        for c in before.columns
        if c not in after.columns and c not in renamed
    }
    columns |= {
        old: {**_column(ids, new, "ALTER"), "name": {"value": new}} for old, new in renamed.items()
    }
    if columns:
        props["columns"] = columns
    return props


def _column(ids: dict[str, int], name: str, operation: str) -> dict[str, Any]:
    """002's shape of a column property: its ``objectId`` (when known) and the operation."""
    found = {"objectId": {"value": ids[name]}} if name in ids else {}
    return {**found, "subOperationType": operation}


def _renamed(before: ObjectState, after: ObjectState) -> dict[str, str]:
    """old name -> new name of the columns RENAME COLUMN changed (same identity)."""
    was = dict(zip(before.column_ids, before.columns, strict=False))
    now = dict(zip(after.column_ids, after.columns, strict=False))
    return {was[i]: now[i] for i in was.keys() & now.keys() if was[i] != now[i]}


def _value(name: str | None, object_id: int) -> dict[str, Any]:
    return {"value": name, "objectId": object_id}
