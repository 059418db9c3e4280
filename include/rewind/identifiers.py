"""Snowflake identifier rules (SPEC R4): unquoted names fold to upper case."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from rewind.errors import InvalidValue, UnsupportedError

MAX_IDENTIFIER_LENGTH = 255
_PLAIN = re.compile(r"[A-Z_][A-Z0-9_$]*")


def set_column(assignment: exp.Expression, target: exp.Expression) -> str:
    """The column ``SET x = ...`` sets in an UPDATE or a MERGE into ``target`` (its stored
    name; ``t.x`` names the target's own column ``x``).

    Raises:
        UnsupportedError: for a field of a struct column (BigQuery's ``SET addr.city =
            ...``), which read as a column CITY that "does not exist".
    """
    column = assignment.this
    qualifier = column.args.get("table") if isinstance(column, exp.Column) else None
    if qualifier is not None:
        own = {normalize(target.alias_or_name)} if isinstance(target, exp.Table) else set()
        if normalize(qualifier) not in own:
            raise UnsupportedError(
                f"SET {column.sql('snowflake')} = ... sets a field of a column: set the whole "
                f"column instead ({normalize(qualifier)} = STRUCT(...))."
            )
    return normalize(column.this)


def normalize(identifier: exp.Identifier | str, quoted: bool = False) -> str:
    """The stored form of a name: quoted names keep their case, others are upper-cased.

    Raises:
        InvalidValue: empty names, names with NUL, or longer than 255 characters.
    """
    if isinstance(identifier, exp.Identifier):
        name, quoted = identifier.this, bool(identifier.args.get("quoted"))
    else:
        name = identifier
    if not name or "\x00" in name or len(name) > MAX_IDENTIFIER_LENGTH:
        raise InvalidValue(f"Invalid identifier {name!r}.")
    return name if quoted else name.upper()


def rewind_name(text: str) -> str:
    """A user name as written outside SQL (``--user``, a mapping): double quotes keep it
    exact, else it folds as an unquoted identifier does (R4): ``ana`` is ``ANA``."""
    text = text.strip()
    if len(text) > 1 and text.startswith('"') and text.endswith('"'):
        return normalize(text[1:-1], quoted=True)
    return normalize(text)


def display(name: str) -> str:
    """A name as Snowflake prints it inside messages: quoted when it needs quotes."""
    if _PLAIN.fullmatch(name):
        return name
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class QualifiedName:
    """``database.schema.name`` for tables, ``database.schema`` or ``database`` otherwise."""

    parts: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join(display(p) for p in self.parts)

    @property
    def name(self) -> str:
        return self.parts[-1]
