"""Logical columns (what users see) over physical Delta columns (what files hold).

DROP COLUMN only hides a column, so old versions stay readable; a later ADD COLUMN of
the same name gets a fresh physical name, so old values never reappear (SPEC R18).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from sqlglot import exp

from rewind.catalog.models import CatalogObject
from rewind.errors import InvalidValue, ObjectAlreadyExists, ObjectNotFound
from rewind.types import ColumnType, column_type

RESERVED_PREFIX = "__rw_"


@dataclass(frozen=True)
class Column:
    name: str
    physical: str
    type: str
    spark: str

    @property
    def column_type(self) -> ColumnType:
        return ColumnType(self.type, self.spark)

    def as_json(self) -> dict[str, str]:
        return asdict(self)


def column_id(table_id: int, physical: str) -> int:
    """ACCESS_HISTORY's ``columnId``: a number for one column of one table incarnation,
    the same for its whole life (RENAME COLUMN keeps the physical column), derived from
    the table's id and the physical name (48 bits of SHA-256: no catalog state)."""
    digest = hashlib.sha256(f"{table_id}/{physical}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def table_columns(obj: CatalogObject) -> list[Column]:
    return [Column(**c) for c in obj.columns or []]


def new_column(name: str, ctype: ColumnType, physical_taken: Iterable[str]) -> Column:
    """A column named ``name`` whose physical (Delta) name is none of ``physical_taken``,
    told apart without regard to case: Snowflake's ``"v"`` and ``V`` are two columns, a
    Delta table's field names are unique whatever their case (delta-rs refused the table:
    INTERNAL_ERROR), so the second is stored as ``V__2``."""
    taken = {t.lower() for t in physical_taken}
    physical, n = name, 1
    while physical.lower() in taken:
        n += 1
        physical = f"{name}__{n}"
    return Column(name, physical, ctype.sql, ctype.spark)


def add_column(
    columns: list[Column],
    name: str,
    data_type: exp.DataType | ColumnType,
    physical_taken: Iterable[str],
) -> list[Column]:
    """``columns`` plus a new one; its name must be new among the live columns and must
    not be one of Rewind's working columns (``__rw_file`` ... in UPDATE, DELETE, MERGE)."""
    _check_new_name(columns, name)
    ctype = data_type if isinstance(data_type, ColumnType) else column_type(data_type)
    taken = set(physical_taken) | {c.physical for c in columns}
    return [*columns, new_column(name, ctype, taken)]


def _check_new_name(columns: list[Column], name: str) -> None:
    if name.startswith(RESERVED_PREFIX):
        raise InvalidValue(
            f"Column name '{name}' is reserved: names starting with {RESERVED_PREFIX} are "
            "Rewind's own."
        )
    if any(c.name == name for c in columns):
        raise ObjectAlreadyExists(f"Column '{name}' already exists.")


def column_named(columns: list[Column], name: str) -> Column:
    """The live column ``name`` of ``columns``.

    Raises:
        ObjectNotFound: no such column.
    """
    for column in columns:
        if column.name == name:
            return column
    raise ObjectNotFound(f"Column '{name}' does not exist.")


def rename_column(columns: list[Column], old: str, new: str) -> list[Column]:
    """RENAME COLUMN: a new logical name over the same physical column, so every version,
    old ones included, reads it under the new name (as Snowflake's time travel does)."""
    column_named(columns, old)
    _check_new_name(columns, new)
    return [Column(new, c.physical, c.type, c.spark) if c.name == old else c for c in columns]


def drop_column(columns: list[Column], name: str) -> list[Column]:
    column_named(columns, name)
    if len(columns) == 1:
        raise InvalidValue(f"Cannot drop column '{name}': a table needs at least one column.")
    return [c for c in columns if c.name != name]
