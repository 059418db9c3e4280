"""Column lineage of one statement from its sqlglot tree (SPEC R36). Pure: no catalog, no I/O.

The caller renames every catalog table the statement references to a key and passes
``tables`` (key -> the table's columns, in order); results name tables by key. sqlglot
qualifies the query (expanding ``*`` and resolving unqualified columns), then the
scopes are walked: a column whose source is a table is a *source column*; one whose
source is a derived table, CTE or set operation is followed to the projection it names.

Rewind has no views, so every source is a base table: a column's ``directSources`` and
``baseSources`` are the same set (ACCESS_HISTORY shows both).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope
from sqlglot.schema import MappingSchema

from rewind.identifiers import normalize, set_column

DIALECT = "snowflake"


@dataclass(frozen=True, order=True)
class SourceColumn:
    """A column of a catalog table, by the table's key."""

    table: str
    column: str


@dataclass(frozen=True)
class StatementLineage:
    """What a statement read and where the columns it wrote came from.

    ``reads``: table key -> the columns the statement referenced anywhere (projections,
    WHERE, JOIN ... ON, MERGE conditions). ``writes``: each written column of the target,
    in order, -> its source columns (empty for literals and for VALUES).
    """

    reads: Mapping[str, frozenset[str]] = field(default_factory=dict)
    writes: Mapping[str, frozenset[SourceColumn]] = field(default_factory=dict)


class _Unresolvable(SqlglotError):
    """A projection lineage cannot map by position (a ``*`` over a table without schema)."""


def statement_lineage(
    tree: exp.Expr, tables: Mapping[str, Sequence[str]], created: Sequence[str] = ()
) -> StatementLineage | None:
    """The lineage of SELECT, INSERT, CTAS (``created``: the new table's columns), UPDATE,
    DELETE and MERGE; None for other statements and when sqlglot cannot analyse one
    (outputs that do not line up by position included): the caller then keeps the
    object-level facts rather than guess."""
    try:
        return _lineage(tree, tables, created)
    except (SqlglotError, LookupError):
        return None


def _lineage(
    tree: exp.Expr, tables: Mapping[str, Sequence[str]], created: Sequence[str]
) -> StatementLineage | None:
    if isinstance(tree, exp.Insert):
        return _insert(tree, tables)
    if isinstance(tree, exp.Create) and isinstance(tree.expression, exp.Query):
        reads, outputs = query_lineage(tree.expression, tables)
        return StatementLineage(reads, _assign(list(created), outputs))
    if isinstance(tree, exp.Update):
        return _synthesized(tree, *_update_query(tree), tables)
    if isinstance(tree, exp.Delete):
        query = joined(
            exp.select(exp.Literal.number(1)).from_(tree.this.copy()), other_tables(tree)
        )
        if tree.args.get("where"):
            query = query.where(tree.args["where"].this.copy())
        return _synthesized(tree, query, [], tables)
    if isinstance(tree, exp.Merge):
        return _synthesized(tree, *_merge_query(tree, tables), tables)
    if isinstance(tree, exp.Query):
        return StatementLineage(query_lineage(tree, tables)[0])
    return None


def query_lineage(
    query: exp.Expr, tables: Mapping[str, Sequence[str]]
) -> tuple[dict[str, frozenset[str]], list[frozenset[SourceColumn]]]:
    """Columns read per table, and the source columns of each output column by position.

    Raises:
        SqlglotError: sqlglot cannot qualify the query, or a ``*`` stays unexpanded.
    """
    schema = MappingSchema(
        {key: dict.fromkeys(columns, "VARCHAR") for key, columns in tables.items()},
        dialect=DIALECT,
        normalize=False,
    )
    qualified = qualify(
        query.copy(),
        dialect=DIALECT,
        schema=schema,
        validate_qualify_columns=False,
        quote_identifiers=False,
        identify=False,
    )
    root = build_scope(qualified)
    if root is None or not isinstance(qualified, exp.Query):
        raise _Unresolvable("not a query")
    walker = _Walker(root, set(tables))
    outputs = [walker.output_at(root, i) for i in range(len(qualified.selects))]
    return walker.reads(), outputs


class _Walker:
    """Follows columns through the scopes of one qualified query."""

    def __init__(self, root: Scope, keys: set[str]) -> None:
        self.root = root
        self.keys = keys
        self.scopes = {id(s.expression): s for s in root.traverse()}

    def reads(self) -> dict[str, frozenset[str]]:
        found: dict[str, set[str]] = {}
        for scope in self.root.traverse():
            if scope.stars:  # a ``*`` sqlglot could not expand hides which columns are read
                raise _Unresolvable(f"cannot expand {scope.stars[0].sql(DIALECT)}")
            for column in scope.columns:
                source = self._source(scope, column.table)
                if isinstance(source, exp.Table) and source.name in self.keys:
                    found.setdefault(source.name, set()).add(column.name)
        return {key: frozenset(columns) for key, columns in found.items()}

    def output_at(self, scope: Scope, index: int) -> frozenset[SourceColumn]:
        """Source columns of the ``index``-th output column of ``scope``."""
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            found: set[SourceColumn] = set()
            for branch in scope.set_operation_scopes:
                found |= self.output_at(branch, index)
            return frozenset(found)
        if not isinstance(expression, exp.Select):  # VALUES: literals only
            return frozenset()
        projection = expression.selects[index]
        if isinstance(projection, exp.Star) or isinstance(projection.unalias(), exp.Star):
            raise _Unresolvable(f"cannot expand {projection.sql(DIALECT)}")
        return self._expression(projection, scope)

    def _output_named(self, scope: Scope, name: str) -> frozenset[SourceColumn]:
        expression = scope.expression
        names = scope.outer_columns or (
            expression.named_selects if isinstance(expression, exp.Query) else []
        )
        return self.output_at(scope, names.index(name)) if name in names else frozenset()

    def _expression(self, node: exp.Expr, scope: Scope) -> frozenset[SourceColumn]:
        found: set[SourceColumn] = set()
        for inner in _own_nodes(node):
            if isinstance(inner, exp.Column):
                found |= self._column(inner, scope)
            elif isinstance(inner, exp.Query) and id(inner) in self.scopes:  # a subquery
                sub = self.scopes[id(inner)]
                for i in range(len(inner.selects)):
                    found |= self.output_at(sub, i)
        return frozenset(found)

    def _column(self, column: exp.Column, scope: Scope) -> frozenset[SourceColumn]:
        source = self._source(scope, column.table)
        if isinstance(source, exp.Table):
            known = source.name in self.keys
            return frozenset({SourceColumn(source.name, column.name)}) if known else frozenset()
        if isinstance(source, Scope):
            return self._output_named(source, column.name)
        return frozenset()

    @staticmethod
    def _source(scope: Scope | None, name: str) -> exp.Table | Scope | None:
        """The source ``name`` names in ``scope`` or, for a correlated column, above it."""
        while scope is not None:
            if name in scope.sources:
                return scope.sources[name]
            scope = scope.parent
        return None


def _own_nodes(node: exp.Expr) -> Iterator[exp.Expr]:
    """``node``'s sub-expressions, stopping at (and yielding) nested queries."""

    def nested(inner: exp.Expr) -> bool:
        return inner is not node and isinstance(inner, exp.Select | exp.SetOperation)

    yield from node.walk(prune=nested)


def _assign(
    targets: Sequence[str], outputs: Sequence[frozenset[SourceColumn]]
) -> dict[str, frozenset[SourceColumn]]:
    """Target columns paired with outputs by position; a column written twice (MERGE's
    UPDATE and INSERT clauses) gets the sources of both."""
    writes: dict[str, frozenset[SourceColumn]] = {}
    for target, sources in zip(targets, outputs, strict=False):
        writes[target] = writes.get(target, frozenset()) | sources
    return writes


def _with_ctes(query: exp.Expr, statement: exp.Expr) -> exp.Expr:
    """``query`` with the CTEs of ``WITH ... INSERT | UPDATE | DELETE | MERGE``."""
    if statement.args.get("with_") is not None and query.args.get("with_") is None:
        query.set("with_", statement.args["with_"].copy())
    return query


def _synthesized(
    statement: exp.Expression,
    query: exp.Select,
    targets: Sequence[str],
    tables: Mapping[str, Sequence[str]],
) -> StatementLineage:
    reads, outputs = query_lineage(_with_ctes(query, statement), tables)
    return StatementLineage(reads, _assign(targets, outputs))


def _target_columns(table: exp.Expr, tables: Mapping[str, Sequence[str]]) -> list[str]:
    return list(tables.get(table.name, ())) if isinstance(table, exp.Table) else []


def _insert(tree: exp.Insert, tables: Mapping[str, Sequence[str]]) -> StatementLineage:
    """INSERT INTO t [(cols)] VALUES | SELECT: outputs fill the columns by position."""
    target = tree.this
    if isinstance(target, exp.Schema):
        targets = [normalize(c) for c in target.expressions]
    else:
        targets = _target_columns(target, tables)
    source = tree.expression
    if not isinstance(source, exp.Query):  # VALUES: literals have no source column
        return StatementLineage({}, dict.fromkeys(targets, frozenset()))
    reads, outputs = query_lineage(_with_ctes(source.copy(), tree), tables)
    return StatementLineage(reads, _assign(targets, outputs))


def other_tables(tree: exp.Update | exp.Delete) -> list[exp.Expression]:
    """Copies of the tables an UPDATE ... FROM or DELETE ... USING reads beside its
    target, in order, each join its own item (sqlglot nests them in the first table)."""
    if isinstance(tree, exp.Update):
        found = [tree.args["from_"].this] if tree.args.get("from_") else []
    else:
        found = list(tree.args.get("using") or [])
    tables: list[exp.Expression] = []
    for source in found:
        source = source.copy()
        joins = source.args.get("joins") or []
        source.set("joins", None)
        tables += [source, *joins]
    return tables


def joined(select: exp.Select, tables: Sequence[exp.Expression]) -> exp.Select:
    """``select`` reading ``tables`` too: the first its FROM when it has none, each other
    one a join (a table without its own: a comma join)."""
    for table in tables:
        if select.args.get("from_") is None:
            select = select.from_(table)
        else:
            select.append("joins", table if isinstance(table, exp.Join) else exp.Join(this=table))
    return select


def _update_query(tree: exp.Update) -> tuple[exp.Select, list[str]]:
    """UPDATE t SET a = e WHERE w as ``SELECT e FROM t WHERE w``, targets [a]."""
    targets = [set_column(eq, tree.this) for eq in tree.expressions]
    query = exp.select(*[eq.expression.copy() for eq in tree.expressions]).from_(tree.this.copy())
    query = joined(query, other_tables(tree))
    if tree.args.get("where"):
        query = query.where(tree.args["where"].this.copy())
    return query, targets


def inserts_row(then: exp.Insert) -> bool:
    """Whether a MERGE's INSERT clause is BigQuery's ``INSERT ROW`` (the source row's
    values, in order: no column or value list)."""
    return isinstance(then.this, exp.Var) and then.this.name.upper() == "ROW"


def _merge_query(
    tree: exp.Merge, tables: Mapping[str, Sequence[str]]
) -> tuple[exp.Select, list[str]]:
    """MERGE as ``SELECT <assigned values> FROM target JOIN source ON ... WHERE <WHEN
    conditions>``; a DELETE clause touches every column of the matched rows."""
    every = _target_columns(tree.this, tables)
    targets: list[str] = []
    values: list[exp.Expression] = []
    conditions: list[exp.Expression] = []
    for when in tree.args["whens"].expressions:
        if when.args.get("condition") is not None:
            conditions.append(when.args["condition"].copy())
        then = when.args["then"]
        if isinstance(then, exp.Update):
            pairs = [(set_column(eq, tree.this), eq.expression) for eq in then.expressions]
        elif isinstance(then, exp.Insert) and inserts_row(then):  # sources: by position
            pairs = [(column, exp.null()) for column in every]
        elif isinstance(then, exp.Insert):
            names = [normalize(c.this) for c in then.this.expressions] if then.this else every
            pairs = list(zip(names, then.expression.expressions, strict=False))
        else:
            pairs = [(column, exp.null()) for column in every]
        targets += [name for name, _ in pairs]
        values += [value.copy() for _, value in pairs]
    query = (
        exp.select(*(values or [exp.Literal.number(1)]))
        .from_(tree.this.copy())
        .join(tree.args["using"].copy(), on=tree.args["on"].copy())
    )
    if conditions:
        query = query.where(exp.and_(*conditions))
    return query, targets
