"""Dispatch a parsed statement to the code that runs it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from rewind.errors import UnsupportedError
from rewind.result import Result
from rewind.sql import (
    alter,
    ddl,
    dml,
    functions,
    grants,
    merge,
    query,
    show,
    snapshots,
    variables,
)
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


# The clauses Rewind reads on each statement that changes rows. Any other that sqlglot
# accepts (LIMIT or ORDER BY on a DELETE or UPDATE, ON CONFLICT, BY NAME, RETURNING, a
# WITH before the statement) would be dropped, and the statement would change other rows
# than it says: DELETE FROM t ORDER BY a LIMIT 1 emptied the table.
_READ_CLAUSES: dict[type, set[str]] = {
    exp.Insert: {"this", "expression", "overwrite"},
    exp.Update: {"this", "expressions", "from_", "where"},
    exp.Delete: {"this", "using", "where"},
    exp.Merge: {"this", "using", "on", "whens"},
}


_CLAUSE_WORDS = {
    "with_": "a WITH clause before it",
    "order": "ORDER BY",
    "conflict": "ON CONFLICT",
    "alternative": "OR REPLACE | IGNORE",
}


def _refuse_unread_clauses(tree: Statement) -> None:
    for kind, read in _READ_CLAUSES.items():
        if isinstance(tree, exp.Expression) and isinstance(tree, kind):
            unread = sorted(k for k, v in tree.args.items() if v and k not in read)
            if unread:
                clause = _CLAUSE_WORDS.get(unread[0], unread[0].replace("_", " ").upper())
                raise UnsupportedError(f"{kind.__name__.upper()} with {clause} is not supported.")


def prepare(ctx: Context, tree: Statement) -> tuple[Statement, Analysis]:
    """The statement as it runs (SQL functions inlined, before anything reads it) and its
    analysis (:mod:`rewind.sql.analysis`)."""
    if isinstance(tree, AlterContainer) and tree.action == "SET":
        values = {k: variables.substituted(ctx.state, v) for k, v in tree.properties.items()}
        tree = dataclasses.replace(tree, properties=values)  # ... = $days
    if isinstance(tree, exp.Expression) and not functions.is_function_ddl(tree):
        tree = functions.inline(ctx, variables.substituted(ctx.state, tree))
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
    if isinstance(tree, exp.Set):
        return variables.set_variables(ctx, tree, execute)
    _refuse_unread_clauses(tree)
    tree, analysis = prepare(ctx, tree)
    ctx.analysis = analysis  # resolved once: authorized, audited and run alike (issue 15)
    authorize(ctx, analysis)
    snapshots.refuse_changes(ctx, tree, analysis)  # a table snapshot stays as it was
    for kind, handler in _HANDLERS:
        if isinstance(tree, kind):
            audit = StatementAudit.start(ctx, tree, analysis)
            result = handler(ctx, tree)
            audit.finish(ctx)
            return result
    if isinstance(tree, exp.MultitableInserts):
        raise UnsupportedError(
            "INSERT ALL / INSERT FIRST (multi-table inserts) are not supported: run one "
            "INSERT ... SELECT per table."
        )
    name = type(tree).__name__.upper()
    raise UnsupportedError(f"Statements of kind {name} are not supported.")
