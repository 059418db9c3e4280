"""The tables a statement reads, resolved once, before it runs (issue 15; SPEC R36, R37).

Every table reference of a query, a DML statement or a CTAS is resolved here to the
incarnation it reads (:func:`rewind.sql.query.table_read`: the live table, or in
BigQuery's dialect the one that existed at the reference's point). Authorization
(:mod:`rewind.sql.needs`: SELECT on each) and the audit trail
(:mod:`rewind.sql.recording`: each one's columns and lineage) take the same list, so what
was authorized is what is recorded. A plain value: ids and names, no session, no Spark.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from sqlglot import exp

from rewind.errors import NoCurrentContainer, ObjectNotFound
from rewind.lifecycle.views import is_system_view
from rewind.sql.query import table_read, table_references
from rewind.statement import Context

# Statements whose table references are data reads (a CREATE only with AS SELECT).
_READING = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Merge)


@dataclass(frozen=True)
class Reference:
    """One table reference, in :func:`~rewind.sql.query.table_references` order."""

    parts: tuple[str, ...]
    table_id: int | None  # None: a system view, or a name that does not resolve
    system_view: bool
    target: bool  # the table the statement writes or creates (not a read of it)


@dataclass(frozen=True)
class Analysis:
    references: tuple[Reference, ...] = ()

    @property
    def reads(self) -> list[Reference]:
        """The references the statement reads: every one but its target."""
        return [r for r in self.references if not r.target]


def reads_tables(tree: object) -> bool:
    if isinstance(tree, exp.Create):
        return isinstance(tree.expression, exp.Query)
    return isinstance(tree, _READING)


def analyse(ctx: Context, tree: object) -> Analysis:
    """The statement's references, resolved now (before it changes any name).

    Raises:
        UnsupportedError, InvalidValue: a reference that is no catalog table name (a
            table function, a path), which fails the statement (SPEC R38).
    """
    if not isinstance(tree, exp.Expression) or not reads_tables(tree):
        return Analysis()
    target = _target(tree)
    found = []
    for table, parts in table_references(tree):
        view = is_system_view(parts)
        table_id = None
        # A name that does not resolve: the statement fails on it (or creates it: CTAS).
        with contextlib.suppress(ObjectNotFound, NoCurrentContainer):
            table_id = None if view else table_read(ctx, table, parts).id
        found.append(Reference(tuple(parts), table_id, view, table is target))
    return Analysis(tuple(found))


def _target(tree: exp.Expression) -> exp.Expression | None:
    """The table node a DML statement writes or a CTAS creates."""
    if isinstance(tree, exp.Create | exp.Insert):
        node = tree.this
        return node.this if isinstance(node, exp.Schema) else node
    if isinstance(tree, exp.Update | exp.Delete | exp.Merge):
        return tree.this
    return None
