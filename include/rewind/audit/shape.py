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
COLUMN_IDS = "columnIds"  # a READ or WRITE row's properties: column name -> columnId
TABLE_DOMAIN = "Table"
# WRITE operations that change rows; CTAS's CREATE is marked by the columns it wrote.
MODIFYING = ("INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE", "RESTORE")


@dataclass(frozen=True)
class AccessColumns:
    """ACCESS_HISTORY's object columns of one statement, as JSON texts."""

    direct_objects_accessed: list[str]
    base_objects_accessed: list[str]
    objects_modified: list[str]
    # One per ACCESS_HISTORY record of the statement: SWAP WITH has two, one per object
    # (002: "two records, one for each swap target, with the same query id").
    objects_modified_by_ddl: list[str | None]


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
        objects_modified_by_ddl=_ddl([r for r in rows if r.access == DDL], domains),
    )


@dataclass
class _Merged:
    name: str | None
    columns: list[str]
    ids: dict[str, int]

    def column(self, name: str) -> dict[str, Any]:
        """``{"columnId", "columnName"}`` (no columnId in rows recorded before it was)."""
        found = {"columnId": self.ids[name]} if name in self.ids else {}
        return {**found, "columnName": name}


def _merged(rows: Iterable[StatementObject]) -> dict[int, _Merged]:
    """Rows of the same object as one: its first name and the union of columns, in order."""
    found: dict[int, _Merged] = {}
    for row in rows:
        merged = found.setdefault(row.object_id, _Merged(row.object_name, [], {}))
        merged.columns += [c for c in row.columns or [] if c not in merged.columns]
        merged.ids |= (row.properties or {}).get(COLUMN_IDS, {})
    return found


def _entry(object_id: int, name: str | None, domain_: str | None) -> dict[str, Any]:
    return {"objectDomain": domain_, "objectId": object_id, "objectName": name}


def _accessed(rows: Sequence[StatementObject], domains: Mapping[int, str | None]) -> list[str]:
    entries = []
    for object_id, merged in _merged(rows).items():
        entry = _entry(object_id, merged.name, domains.get(object_id))
        if entry["objectDomain"] == TABLE_DOMAIN:
            entry["columns"] = [merged.column(c) for c in merged.columns]
        entries.append(json.dumps(entry))
    return entries


def _modified(rows: Sequence[StatementObject], lineage: Sequence[ColumnLineage]) -> list[str]:
    """Tables whose rows the statement changed, each written column with its sources."""
    names = {r.object_id: r.object_name for r in rows if r.access == READ}
    writes = [
        r for r in rows if r.access == WRITE and (r.columns is not None or r.operation in MODIFYING)
    ]
    entries = []
    for object_id, merged in _merged(writes).items():
        entry = _entry(object_id, merged.name, TABLE_DOMAIN)
        entry["columns"] = []
        for column in merged.columns:
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
                {**merged.column(column), "directSources": sources, "baseSources": sources}
            )
        entries.append(json.dumps(entry))
    return entries


def _ddl(rows: Sequence[StatementObject], domains: Mapping[int, str | None]) -> list[str | None]:
    """The statement's main DDL object (the last one it recorded) and, for a SWAP, its
    partner, which took the main object's name (one ACCESS_HISTORY record each)."""
    if not rows:
        return [None]
    main = rows[-1]
    kind = domains.get(main.object_id)
    entry = _entry(main.object_id, main.object_name, kind)
    entry["operationType"] = main.operation
    entry["properties"] = main.properties or {}
    records: list[str | None] = [json.dumps(entry)]
    swapped = entry["properties"].get("swapTarget")
    if swapped is not None:
        partner = _entry(swapped["objectId"], swapped["value"], kind)
        partner["operationType"] = main.operation
        partner["properties"] = {
            "name": {"value": main.object_name},
            "swapTarget": {"value": main.object_name, "objectId": main.object_id},
        }
        records.append(json.dumps(partner))
    return records


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
