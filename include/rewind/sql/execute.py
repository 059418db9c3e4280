"""Dispatch a parsed statement to the code that runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from rewind.errors import UnsupportedError
from rewind.result import Result
from rewind.sql import alter, ddl, dml, functions, grants, merge, query, show
from rewind.sql.access import AccessStatement
from rewind.sql.analysis import analyse
from rewind.sql.needs import authorize
from rewind.sql.parse import AlterContainer
from rewind.sql.recording import StatementAudit
from rewind.statement import Analysis, Context

Statement = exp.Expression | AlterContainer | AccessStatement

_HANDLERS: list[tuple[type, Callable[[Context, Any], Result]]] = [
    (exp.Create, ddl.create),
    (exp.Drop, ddl.drop),
    (exp.Undrop, ddl.undrop),
    (exp.Alter, alter.alter_table),
    (AlterContainer, alter.alter_container),
    (exp.Use, ddl.use),
    (exp.Show, show.show),
    (exp.Describe, show.describe),
    (exp.Insert, dml.insert),
    (exp.Update, dml.update),
    (exp.Delete, dml.delete),
    (exp.TruncateTable, dml.truncate),
    (exp.Merge, merge.merge),
    (exp.Query, query.select),
    (AccessStatement, grants.run),
]


def prepare(ctx: Context, tree: Statement) -> tuple[Statement, Analysis]:
    """The statement as it runs (SQL functions inlined, before anything reads it) and its
    analysis (:mod:`rewind.sql.analysis`)."""
    if isinstance(tree, exp.Expression) and not functions.is_function_ddl(tree):
        tree = functions.inline(ctx, tree)
    return tree, analyse(ctx, tree)


def execute(ctx: Context, tree: Statement) -> Result:
    """Run one statement in ``ctx``; raises :class:`~rewind.errors.RewindError` on failure.

    The access check comes first (SPEC R37): a denied statement reads and changes nothing.
    The audit capture wraps the handler (SPEC R36): names as the statement found them.
    """
    if functions.is_function_ddl(tree):
        assert isinstance(tree, exp.Create | exp.Drop)
        if isinstance(tree, exp.Create):
            return functions.create(ctx, tree)
        return functions.drop(ctx, tree)
    tree, analysis = prepare(ctx, tree)
    ctx.analysis = analysis  # resolved once: authorized, audited and run alike (issue 15)
    authorize(ctx, analysis)
    for kind, handler in _HANDLERS:
        if isinstance(tree, kind):
            audit = StatementAudit.start(ctx, tree, analysis)
            result = handler(ctx, tree)
            audit.finish(ctx)
            return result
    name = type(tree).__name__.upper()
    raise UnsupportedError(f"Statements of kind {name} are not supported.")
