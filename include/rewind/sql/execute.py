"""Dispatch a parsed statement to the code that runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from rewind.errors import UnsupportedError
from rewind.result import Result
from rewind.sql import ddl, dml, query, show
from rewind.sql.context import Context
from rewind.sql.parse import AlterContainer

_HANDLERS: list[tuple[type, Callable[[Context, Any], Result]]] = [
    (exp.Create, ddl.create),
    (exp.Drop, ddl.drop),
    (exp.Undrop, ddl.undrop),
    (exp.Alter, ddl.alter_table),
    (AlterContainer, ddl.alter_container),
    (exp.Use, ddl.use),
    (exp.Show, show.show),
    (exp.Insert, dml.insert),
    (exp.Update, dml.update),
    (exp.Delete, dml.delete),
    (exp.TruncateTable, dml.truncate),
    (exp.Merge, dml.merge),
    (exp.Query, query.select),
]


def execute(ctx: Context, tree: exp.Expression | AlterContainer) -> Result:
    """Run one statement in ``ctx``; raises :class:`~rewind.errors.RewindError` on failure."""
    for kind, handler in _HANDLERS:
        if isinstance(tree, kind):
            return handler(ctx, tree)
    name = type(tree).__name__.upper()
    raise UnsupportedError(f"Statements of kind {name} are not supported.")
