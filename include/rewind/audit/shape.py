"""One ACCESS_HISTORY row from a statement's recorded rows, in Snowflake's JSON shapes
(SPEC R36). Pure: the rows are plain values here, read by :mod:`rewind.audit.views`.

Representation: Snowflake's ARRAY columns are Spark ``array<string>`` whose elements are
JSON objects, and its OBJECT column is a JSON string. Snowflake's own idioms then work
through the SQL front, which writes ``x:path`` as Spark's ``get_json_object``:
``direct_objects_accessed[0]:objectName``, ``ARRAY_SIZE(objects_modified)``,
``object_modified_by_ddl:properties.name.value``. (Spark structs would need quoted,
case-exact field names under Rewind's case-sensitive identifiers, SPEC R4.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewind.catalog.models import ColumnLineage, StatementObject

READ, WRITE, DDL = "READ", "WRITE", "DDL"
TABLE_DOMAIN = "Table"
# WRITE operations that change rows; CTAS's CREATE is marked by the columns it wrote.
MODIFYING = ("INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE", "RESTORE")


@dataclass(frozen=True)
class AccessColumns:
    """ACCESS_HISTORY's object columns of one statement, as JSON texts."""

    direct_objects_accessed: list[str]
    base_objects_accessed: list[str]
    objects_modified: list[str]
    object_modified_by_ddl: str | None


def domain(kind: str | None) -> str | None:
    """Snowflake's ``objectDomain`` for a catalog kind: Table, Schema, Database."""
    return kind.capitalize() if kind else None


def access_columns(
    rows: Sequence[StatementObject],
    lineage: Sequence[ColumnLineage],
    domains: Mapping[int, str | None],
) -> AccessColumns:
    """The four object columns of one statement (``rows`` in the order recorded)."""
    reads = [r for r in rows if r.access == READ]
    return AccessColumns(
        direct_objects_accessed=_accessed([r for r in reads if r.direct is not False], domains),
        base_objects_accessed=_accessed(
            [r for r in reads if domains.get(r.object_id) == TABLE_DOMAIN], domains
        ),
        objects_modified=_modified(rows, lineage),
        object_modified_by_ddl=_ddl([r for r in rows if r.access == DDL], domains),
    )


def _merged(rows: Iterable[StatementObject]) -> dict[int, tuple[str | None, list[str]]]:
    """Rows of the same object as one: its first name and the union of columns, in order."""
    found: dict[int, tuple[str | None, list[str]]] = {}
    for row in rows:
        columns = found.setdefault(row.object_id, (row.object_name, []))[1]
        columns += [c for c in row.columns or [] if c not in columns]
    return found


def _entry(object_id: int, name: str | None, domain_: str | None) -> dict[str, Any]:
    return {"objectDomain": domain_, "objectId": object_id, "objectName": name}


def _accessed(rows: Sequence[StatementObject], domains: Mapping[int, str | None]) -> list[str]:
    entries = []
    for object_id, (name, columns) in _merged(rows).items():
        entry = _entry(object_id, name, domains.get(object_id))
        if entry["objectDomain"] == TABLE_DOMAIN:
            entry["columns"] = [{"columnName": c} for c in columns]
        entries.append(json.dumps(entry))
    return entries


def _modified(rows: Sequence[StatementObject], lineage: Sequence[ColumnLineage]) -> list[str]:
    """Tables whose rows the statement changed, each written column with its sources."""
    names = {r.object_id: r.object_name for r in rows if r.access == READ}
    writes = [
        r for r in rows if r.access == WRITE and (r.columns is not None or r.operation in MODIFYING)
    ]
    entries = []
    for object_id, (name, columns) in _merged(writes).items():
        entry = _entry(object_id, name, TABLE_DOMAIN)
        entry["columns"] = []
        for column in columns:
            sources = [
                {
                    "columnName": edge.source_column,
                    "objectDomain": TABLE_DOMAIN,
                    "objectId": edge.source_id,
                    "objectName": names.get(edge.source_id),
                }
                for edge in lineage
                if edge.target_id == object_id and edge.target_column == column
            ]
            # Rewind has no views: a column's direct sources are its base sources.
            entry["columns"].append(
                {"columnName": column, "directSources": sources, "baseSources": sources}
            )
        entries.append(json.dumps(entry))
    return entries


def _ddl(rows: Sequence[StatementObject], domains: Mapping[int, str | None]) -> str | None:
    """The statement's main DDL object: the last one it recorded."""
    if not rows:
        return None
    main = rows[-1]
    entry = _entry(main.object_id, main.object_name, domains.get(main.object_id))
    entry["operationType"] = main.operation
    entry["properties"] = main.properties or {}
    return json.dumps(entry)


def root_query_id(query_id: str, parents: Mapping[str, str]) -> str | None:
    """The top of ``query_id``'s parent chain; None when it has no parent (Snowflake)."""
    seen = {query_id}
    current = parents.get(query_id)
    root = current
    while current is not None and current not in seen:
        seen.add(current)
        root = current
        current = parents.get(current)
    return root
