"""SELECT with AT | BEFORE on any table reference, run on Spark (SPEC R16–R18, R23).

Each table reference becomes a DataFrame over the files of the version its point names,
projected onto the table's current columns, handed to the statement's queries by name
(:class:`Binding`); the rest of the query is transpiled from Snowflake SQL to Spark SQL
(:mod:`rewind.sql.spark_sql`); points in time are read by :mod:`rewind.sql.points`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind import timetravel
from rewind.catalog.models import CatalogObject
from rewind.constants import TABLE
from rewind.errors import (
    ChangeTrackingUnavailable,
    InvalidValue,
    ObjectNotFound,
    StorageError,
    UnsupportedError,
)
from rewind.identifiers import normalize
from rewind.lifecycle import pins
from rewind.result import Result
from rewind.security import can_see
from rewind.spark import query
from rewind.sql import changes, names, paths, query_history
from rewind.sql.frames import collect, quote, version_frame
from rewind.sql.parse import projection_texts
from rewind.sql.points import point_instant, point_of, with_session
from rewind.sql.spark_sql import in_for_quantified, to_spark
from rewind.sql.tables import current_version, snapshot
from rewind.sql.values import literal
from rewind.statement import Context, Reference
from rewind.storage import location, timeline
from rewind.storage.columns import Column, table_columns
from rewind.storage.log import HistoryGone
from rewind.storage.snapshot import Snapshot
from rewind.storage.timeline import columns_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_view_ids = itertools.count()
# A table reference's index in its statement's Analysis.references (sqlglot node meta,
# kept by copies): set by rewind.sql.analysis, read by :func:`referenced`.
REFERENCE = "rewind.reference"


@dataclass
class Binding:
    """The table versions a statement's queries read, by name, and the pins it holds
    until it ends (:func:`release`).

    A bound version is no temporary view of the session: each query of the statement gets
    the DataFrames it names with its text (:meth:`sql`, pyspark's ``spark.sql(text,
    **frames)``). On Spark Connect they travel inside the query's plan, so no view is
    created or dropped (two round trips per table reference) and none outlives the
    statement; in process pyspark registers them for the query's analysis only.
    """

    frames: dict[str, DataFrame] = field(default_factory=dict)
    pins: list[Path] = field(default_factory=list)
    # a bound table's name, then its columns' Spark types (rewind.sql.paths)
    types: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(
        self,
        ctx: Context,
        frame: DataFrame,
        alias: exp.TableAlias | None,
        reference: exp.Table | None = None,
        columns: Sequence[Column] = (),
    ) -> exp.Table:
        """A table node that reads ``frame`` in this statement's queries, with the clauses
        of the ``reference`` it stands for (:func:`renamed`); ``columns``: a catalog
        table's, whose types :meth:`sql` reads paths into nested columns by."""
        name = f"__rw_{ctx.query_id.replace('-', '')[:12]}_{next(_view_ids)}"
        self.frames[name] = frame
        self.types[name] = {c.name: c.spark for c in columns}
        return renamed(reference or exp.Table(), name, alias)

    def sql(self, spark: SparkSession, tree: exp.Expression, dialect: str) -> DataFrame:
        """A DataFrame for ``tree`` (a statement in ``dialect``), whose bound table nodes
        (:meth:`add`) read their frames: each node's quoted name becomes a field of
        :func:`rewind.spark.query`'s text, every other brace of it is doubled (a
        literal's, a JSON path's). Snowflake's paths into the frames' nested columns
        become subscripts first (:func:`rewind.sql.paths.typed`)."""
        tree = tree.copy()
        if dialect == "snowflake":
            _object_stars(tree, self.types)
        paths.typed(tree, self.types)
        _expand_stars(tree, self.types)
        if dialect == "snowflake":
            _where_aliases(tree, self.types)
        else:
            _range_variables(tree, self.types)
        _null_aware_in(tree.transform(in_for_quantified, copy=False), self.types)
        text = to_spark(tree, dialect)
        if self.frames:
            text = text.replace("{", "{{").replace("}", "}}")
            for name in self.frames:
                text = text.replace(quote(name), "{" + name + "}")
        return query(spark, text, self.frames)


def _ctes(tree: exp.Expression) -> dict[str, exp.Query]:
    """The statement's CTEs by name (as :func:`_source_columns` looks them up)."""
    return {normalize(cte.args["alias"].this): cte.this for cte in tree.find_all(exp.CTE)}


def _where_aliases(tree: exp.Expression, types: dict[str, dict[str, str]]) -> None:
    """Snowflake's select aliases in WHERE (``SELECT id + 1 AS nxt FROM t WHERE nxt >
    3``): a name that none of the select's sources has is the expression of the select's
    alias of that name, as Snowflake reads it (Spark has no alias there: the statement
    failed, invalid identifier). A source whose columns are not known (a CTE, a star)
    leaves the select as written."""
    ctes = _ctes(tree)
    for select in list(tree.find_all(exp.Select)):
        where = select.args.get("where")
        known = _source_columns(select, types, ctes) if where is not None else None
        if where is None or known is None:
            continue
        aliases = {
            normalize(e.args["alias"]): e.this
            for e in select.expressions
            if isinstance(e, exp.Alias) and not e.this.find(exp.AggFunc, exp.Window)
        }
        for column in list(where.find_all(exp.Column)):
            if column.table or column.find_ancestor(exp.Select) is not select:
                continue
            name = normalize(column.this)
            if name in aliases and name not in known:
                column.replace(exp.Paren(this=aliases[name].copy()))


def _null_aware_in(tree: exp.Expression, types: dict[str, dict[str, str]]) -> None:
    """``x [NOT] IN (SELECT c ...)`` as SQL answers it (SPEC R26): NULL, not FALSE, where
    x is not found and the subquery holds a NULL, or x is NULL and it holds rows. Spark's
    answer is FALSE there (an existence join), a wrong answer wherever NULL and FALSE
    differ: a projected value, ``IS NULL``, ``COALESCE``, ``NOT`` in a projection. Left as
    written where they do not differ (a condition of a WHERE, HAVING or ON, alone or
    AND-ed, or its NOT IN, which Spark answers with a null-aware anti join), and where the
    subquery may read the outer row (a column not of its own sources, a nested subquery),
    which the rewrite's EXISTS could not take."""
    ctes = _ctes(tree)
    for found in list(tree.find_all(exp.In)):
        query = found.args.get("query")
        select = query.this if isinstance(query, exp.Subquery) else query
        if (
            not isinstance(select, exp.Select)
            or isinstance(found.this, exp.Tuple)
            or found.this.find(exp.Query, exp.Rand)  # evaluated three times below
            or _a_condition(found)
            or not _uncorrelated(select, types, ctes)
        ):
            continue
        found.replace(_null_aware(found.this, select))


def _a_condition(node: exp.Expression) -> bool:
    """Whether ``node`` is a filter's condition, alone, AND-ed or under its NOT: where
    NULL filters a row out as FALSE does."""
    if isinstance(node.parent, exp.Not):
        node = node.parent
    while isinstance(node.parent, exp.And | exp.Paren):
        node = node.parent
    return isinstance(node.parent, exp.Where | exp.Having) or node.arg_key == "on"


def _uncorrelated(
    select: exp.Select, types: dict[str, dict[str, str]], ctes: dict[str, exp.Query]
) -> bool:
    """Whether ``select`` (one column, no subquery of its own) reads its own sources only:
    each column qualified by one of them, or a column one of them has."""
    if len(select.expressions) != 1 or select.is_star or select.find(exp.Subquery, exp.Exists):
        return False
    known = _source_columns(select, types, ctes)
    if known is None:
        return False
    named = {normalize(s.args["alias"].this) if s.alias else s.name for s in _sources(select)}
    for column in select.find_all(exp.Column):
        if column.table:
            if normalize(column.args["table"]) not in named:
                return False
        elif normalize(column.this) not in known:
            return False
    return True


def _null_aware(value: exp.Expression, select: exp.Select) -> exp.Expression:
    """``value IN (select)`` with SQL's NULLs: TRUE where found; FALSE for a NULL value
    over no rows; NULL for a NULL value, or where the subquery holds a NULL; else FALSE."""
    alias = exp.TableAlias(this=exp.to_identifier("__rw_in"), columns=[exp.to_identifier("V")])
    nulls = (
        exp.select("1")
        .from_(exp.Subquery(this=select.copy(), alias=alias))
        .where(exp.column("V", table="__rw_in").is_(exp.null()))
    )
    missing = exp.Is(this=value.copy(), expression=exp.null())
    return exp.Paren(
        this=exp.Case(
            ifs=[
                exp.If(
                    this=exp.In(this=value.copy(), query=exp.Subquery(this=select.copy())),
                    true=exp.true(),
                ),
                exp.If(
                    this=exp.and_(missing, exp.Not(this=exp.Exists(this=select.copy()))),
                    true=exp.false(),
                ),
                exp.If(this=exp.or_(missing.copy(), exp.Exists(this=nulls)), true=exp.null()),
            ],
            default=exp.false(),
        )
    )


def _range_variables(tree: exp.Expression, types: dict[str, dict[str, str]]) -> None:
    """BigQuery's range variables: a table's alias (or its name) as a value is its row,
    a STRUCT of its columns (``TO_JSON_STRING(t)``, ``ARRAY_AGG(t ORDER BY ts DESC
    LIMIT 1)[OFFSET(0)]`` to keep one row per key). Spark has no such value: it read the
    name as a column and failed, invalid identifier. A name that is also a column of the
    select's sources stays the column, and a select whose sources' columns are not known
    (a CTE, a star) stays as written."""
    ctes = _ctes(tree)
    for select in list(tree.find_all(exp.Select)):
        sources = {
            normalize(named): named
            for source in _sources(select)
            if isinstance(
                named := source.args["alias"].this if source.alias else source.this, exp.Identifier
            )
        }
        columns = [
            c
            for c in select.find_all(exp.Column)
            if not c.table
            and isinstance(c.this, exp.Identifier)
            and normalize(c.this) in sources
            and c.find_ancestor(exp.Select) is select
        ]
        known = _source_columns(select, types, ctes) if columns else None
        if known is None:
            continue
        for column in columns:
            name = normalize(column.this)
            if name in known:
                continue
            row = exp.Struct(expressions=[exp.Column(this=exp.Star(), table=sources[name].copy())])
            is_item = column.parent is select and column.arg_key == "expressions"
            column.replace(exp.alias_(row, column.this.copy()) if is_item else row)


def _object_stars(tree: exp.Expression, types: dict[str, dict[str, str]]) -> None:
    """``OBJECT_CONSTRUCT(*)`` / ``OBJECT_CONSTRUCT(t.*)``: an object of the row's
    columns, named as they are (Spark's ``MAP(*)`` took the columns for keys and values
    in turn). A star over a source whose columns are not known stays as written."""
    for star_map in list(tree.find_all(exp.StarMap)):
        select = star_map.find_ancestor(exp.Select)
        star = star_map.this
        qualifier = star.table if isinstance(star, exp.Column) else ""
        fields: list[exp.Expression] = []
        for source in _sources(select) if select is not None else []:
            named = source.alias_or_name if isinstance(source, exp.Table) else None
            if qualifier and named != qualifier:
                continue
            if not isinstance(source, exp.Table) or source.name not in types:
                fields = []
                break
            fields += [
                exp.PropertyEQ(
                    this=exp.Literal.string(name),
                    expression=exp.column(exp.to_identifier(name, quoted=True), table=named),
                )
                for name in types[source.name]
            ]
        if fields:
            star_map.replace(exp.Struct(expressions=fields))


def _sources(select: exp.Select) -> list[exp.Expression]:
    """What ``select`` reads: its FROM's and its joins' tables or subqueries."""
    clauses = [select.args.get("from_"), *(select.args.get("joins") or [])]
    return [clause.this for clause in clauses if clause is not None]


def _source_columns(
    select: exp.Select, types: dict[str, dict[str, str]], ctes: dict[str, exp.Query]
) -> set[str] | None:
    """The column names of ``select``'s sources (bound tables, subqueries and CTEs that
    name their columns), or None where one of them is not known."""
    names: set[str] = set()
    for source in _sources(select):
        query = source.this if isinstance(source, exp.Subquery) else None
        if isinstance(source, exp.Table) and source.name in types:
            names.update(types[source.name])
            continue
        if isinstance(source, exp.Table) and not source.args.get("db"):
            query = ctes.get(normalize(source.this))
        if not isinstance(query, exp.Query) or query.is_star:
            return None
        names.update(name.upper() for name in query.named_selects)
    return names


def _expand_stars(tree: exp.Expression, types: dict[str, dict[str, str]]) -> None:
    """Snowflake's ``SELECT * [ILIKE '...'] [EXCLUDE (...)] [REPLACE (e AS c, ...)]
    [RENAME (c AS d, ...)]`` over one bound table, which Spark has no syntax for: the
    table's columns named one by one, in order — those whose name matches ILIKE and
    EXCLUDE leaves, each REPLACE'd one computed, each RENAME'd one under its new name. A
    star over a join keeps its refusal (:func:`rewind.sql.spark_sql.to_spark`)."""
    for star in list(tree.find_all(exp.Star)):
        select = star.parent
        if not any(star.args.get(k) for k in ("rename", "replace", "ilike")):
            continue
        if not isinstance(select, exp.Select) or select.args.get("joins"):
            continue
        source = select.args.get("from_")
        table = source.this if source is not None else None
        columns = types.get(table.name) if isinstance(table, exp.Table) else None
        if not columns:
            continue
        select.set(
            "expressions",
            [e for x in select.expressions for e in (_named(star, columns) if x is star else [x])],
        )


def _named(star: exp.Star, columns: dict[str, str]) -> list[exp.Expr]:
    """The columns ``star`` stands for (:func:`_expand_stars`)."""

    def key(node: exp.Expression) -> str:  # a column's name as Snowflake resolves it
        ident = node if isinstance(node, exp.Identifier) else node.this
        return str(ident.name) if ident.quoted else str(ident.name).upper()

    pattern = star.args.get("ilike")
    like = (
        re.compile(
            "".join({"%": ".*", "_": "."}.get(c, re.escape(c)) for c in str(literal(pattern))),
            re.IGNORECASE | re.DOTALL,
        )
        if pattern is not None
        else None
    )
    excluded = {key(c) for c in star.args.get("except_") or []}
    replaced = {key(a.args["alias"]): a.this for a in star.args.get("replace") or []}
    renamed = {key(a.this): a.args["alias"] for a in star.args.get("rename") or []}
    named: list[exp.Expr] = []
    for name in columns:
        if name in excluded or (like is not None and not like.fullmatch(name)):
            continue
        column = exp.column(exp.to_identifier(name, quoted=True))
        if name in replaced:
            named.append(exp.alias_(replaced[name].copy(), exp.to_identifier(name, quoted=True)))
        elif name in renamed:
            named.append(exp.alias_(column, renamed[name].copy()))
        else:
            named.append(column)
    return named


# What names the table a reference reads (replaced by the bound frame or key), as opposed
# to the clauses that apply to what it reads (SAMPLE, PIVOT, UNPIVOT, ...).
_NAMING = ("this", "db", "catalog", "when", "version", "alias", "changes")


def renamed(table: exp.Table, name: str, alias: exp.TableAlias | None) -> exp.Table:
    """A node reading ``name`` instead of ``table``, which it replaces, with every other
    clause ``table`` has (a SAMPLE or PIVOT dropped here would silently answer over the
    whole table). The clauses move, not copies: the tables joined inside one (an UPDATE's
    FROM, a DELETE's USING) are bound in place afterwards."""
    node = exp.Table(this=exp.to_identifier(name, quoted=True), alias=alias)
    for key, value in table.args.items():
        if key not in _NAMING and value is not None:
            node.set(key, value)
    return node


def table_read(ctx: Context, table: exp.Table, parts: list[str]) -> CatalogObject:
    """The table a reference reads: the live one by that name — and in BigQuery's
    dialect, for a reference with a point in time, the incarnation that existed at that
    instant: a table deleted or replaced since (BigQuery's undelete is ``CREATE TABLE
    t2 CLONE t@<epoch ms>``), while the point is within its window (SPEC R27).
    The statement's analysis resolves each reference here, once (:func:`referenced`)."""
    when = table.args.get("when")
    if when is None or ctx.state.dialect != "bigquery":
        return names.table(ctx, parts)
    try:
        live: CatalogObject | None = names.table(ctx, parts)
    except ObjectNotFound:
        live = None
    instant = point_instant(ctx, point_of(ctx, when))
    if live is not None and instant >= live.created_on:
        return live
    parent, name = names.table_parent(ctx, parts)
    for old in ctx.catalog.dropped(TABLE, parent.id, name):
        assert old.dropped_on is not None
        if old.created_on <= instant < old.dropped_on and can_see(ctx, old):
            return old
    return live if live is not None else names.table(ctx, parts)


def reference_of(ctx: Context, table: exp.Table) -> Reference:
    """What the statement's analysis resolved ``table`` (one of its references) to."""
    index = table.meta.get(REFERENCE)
    assert index is not None, f"an analysed table reference: {table.sql('snowflake')}"
    return ctx.analysis.references[index]


def referenced(ctx: Context, table: exp.Table) -> CatalogObject:
    """The catalog table a reference reads or a DML statement writes, as the statement's
    analysis resolved it before it ran (the error then, if its name did not resolve)."""
    reference = reference_of(ctx, table)
    if reference.error is not None:
        raise reference.error
    assert reference.object_id is not None, "a system view is no catalog table"
    obj = ctx.catalog.get(reference.object_id)
    assert obj is not None
    return obj


def own_reference(ctx: Context, obj: CatalogObject) -> exp.Table:
    """A reference to ``obj`` that the statement makes itself, not in its text (ALTER
    TABLE ... ADD COLUMN ... DEFAULT's UPDATE of the rows there), resolved as its
    analysis resolves those of its text: its target."""
    parts = names.qualified(ctx, obj).parts
    db, schema, name = (exp.to_identifier(p, quoted=True) for p in parts)
    table = exp.Table(this=name, db=schema, catalog=db)
    table.meta[REFERENCE] = len(ctx.analysis.references)
    made = Reference(tuple(parts), obj.id, system_view=False, target=True)
    ctx.analysis = replace(ctx.analysis, references=(*ctx.analysis.references, made))
    return table


def resolve_version(ctx: Context, obj: CatalogObject, when: exp.HistoricalData | None) -> int:
    """The version a table reference reads: current, or the one its point names (R16, R17)."""
    if when is None:
        return current_version(ctx, obj)
    timeline.sync(ctx.catalog, ctx.store, obj)  # other writers' versions too (SPEC R40)
    point = point_of(ctx, when)
    versions = [
        timetravel.VersionInfo(v.version, v.commit_time) for v in ctx.catalog.versions(obj.id)
    ]
    facts = None
    if point.statement is not None:
        stmt = ctx.catalog.statement(point.statement)
        if stmt is not None:
            accesses = ctx.catalog.accesses(point.statement, obj.id)
            written = [a.version for a in accesses if a.access == "WRITE" and a.version is not None]
            read = [a.version for a in accesses if a.access == "READ" and a.version is not None]
            facts = timetravel.StatementFacts(
                stmt.start_time, max(written) if written else None, max(read) if read else None
            )
    created_on = obj.created_on
    if obj.location is not None and versions:  # SPEC R41: history before registration
        created_on = min(created_on, versions[0].commit_time - timedelta(microseconds=1))
    version = timetravel.resolve(
        point,
        table=str(names.qualified(ctx, obj)),
        versions=versions,
        created_on=created_on,
        now=ctx.now,
        retention_days=ctx.catalog.effective_retention(obj),
        statement=facts,
    )
    _check_files_held(ctx, obj, version)  # SELECT, CLONE and restore alike
    return version


def table_frame(ctx: Context, obj: CatalogObject, version: int) -> DataFrame:
    """Version ``version`` of ``obj`` with the columns it reads with (:func:`version_columns`)."""
    then = snapshot(ctx, obj, version)
    return version_frame(ctx, then, version_columns(ctx, obj, then))


def version_columns(ctx: Context, obj: CatalogObject, then: Snapshot) -> list[Column]:
    """The columns version ``then`` of ``obj`` reads with: its own where the table was
    replaced since (:func:`own_columns`), else the current ones (SPEC R18), a column
    another engine renamed under column mapping found by its identity, not its name (R43)."""
    columns = table_columns(obj)
    if then.version == current_version(ctx, obj):
        return columns
    now = snapshot(ctx, obj)
    own = own_columns(obj, then, now)
    if own is not None:
        return own
    now_ids = now.field_ids or {}
    if any(name != key for name, key in now_ids.items()):
        name_then = {key: name for name, key in (then.field_ids or {}).items()}
        columns = [
            replace(c, physical=name_then.get(now_ids.get(c.physical, ""), c.physical))
            for c in columns
        ]
    return columns


def own_columns(obj: CatalogObject, then: Snapshot, now: Snapshot) -> list[Column] | None:
    """The columns of version ``then`` as the table had them, if another engine replaced
    the table by version ``now`` (:meth:`Snapshot.replaces`: a column gone or retyped past
    reading); else None. Such a version reads with its own columns, as Snowflake keeps a
    replaced table whole: under the replacement's it would fail (a VARCHAR read as a
    NUMBER) or lose the columns the replacement dropped, and a clone of it could not be
    read."""
    if then.version == now.version or not now.replaces(then, obj.name):
        return None
    return columns_of(then.metadata or {}, obj.name)


def table_references(tree: exp.Expression) -> list[tuple[exp.Table, list[str]]]:
    """The table references ``tree`` reads, with their name parts (CTE names excluded).

    One rule for :func:`bind` and the access check, so both see the same tables (R37).
    """
    ctes = {normalize(c.args["alias"].this) for c in tree.find_all(exp.CTE) if c.args.get("alias")}
    found = []
    for table in tree.find_all(exp.Table, exp.TableFromRows):
        if flow_index(table) is not None:
            continue  # an earlier result of the session's own ->> chain: no catalog table
        if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
            # Only catalog names are table references: no table functions, stages or
            # IDENTIFIER('format.`/path`') that Spark would read by path (SPEC R38).
            raise UnsupportedError(
                f"Only catalog tables can be read: '{table.sql('snowflake')[:100]}' "
                "is not a table name."
            )
        if table.args.get("changes") is not None:
            check_changes_read(table)
        parts = names.parts(table)
        timeless = table.args.get("when") is None and table.args.get("changes") is None
        if len(parts) == 1 and parts[0] in ctes and timeless:
            continue
        found.append((table, parts))
    return found


# Where a table reference is read as rows: a query's FROM or JOIN, MERGE's and DELETE's USING
_READ_AT = {(exp.From, "this"), (exp.Join, "this"), (exp.Merge, "using"), (exp.Delete, "using")}


def check_changes_read(table: exp.Table) -> None:
    """The CHANGES clause is a source of rows: on a statement's target (its DML's table, a
    clone's source) it would be ignored, the table itself written or cloned."""
    if (type(table.parent), table.arg_key) not in _READ_AT:
        raise UnsupportedError(
            f"CHANGES reads rows in a query's FROM, not here: '{table.sql('snowflake')[:100]}'."
        )


def flow_index(table: exp.Expression) -> int | None:
    """n of a ``FROM $n`` reference to the n-th result of a ``->>`` chain, else None."""
    if isinstance(table, exp.Table) and isinstance(table.this, exp.Parameter):
        number = table.this.this
        if isinstance(number, exp.Literal) and not number.is_string and number.this.isdigit():
            return int(number.this)
    return None


def _bind_flow(ctx: Context, tree: exp.Expression, binding: Binding) -> None:
    """``$n``: the n-th earlier result of the chain, as a frame of its rows."""
    import pyarrow as pa  # the rows go to Spark as Arrow

    for table in list(tree.find_all(exp.Table)):
        n = flow_index(table)
        if n is None:
            continue
        if not 1 <= n <= len(ctx.state.flow):
            raise InvalidValue(
                f"${n} names no earlier statement of this ->> chain "
                f"({len(ctx.state.flow)} before it)."
            )
        result = ctx.state.flow[n - 1]
        spark = ctx.spark()
        frame = (
            spark.createDataFrame(
                pa.Table.from_pylist(
                    [dict(zip(result.columns, row, strict=True)) for row in result.rows]
                )
            )
            if result.rows
            # No row to infer types from (a Spark Connect session refuses an empty Arrow
            # table): every column a string.
            else spark.createDataFrame([], ", ".join(f"{quote(c)} STRING" for c in result.columns))
        )
        table.replace(binding.add(ctx, frame, table.args.get("alias"), table))


def bind(ctx: Context, tree: exp.Expression, binding: Binding) -> exp.Expression:
    """Replace every table reference in ``tree`` by a frame of the version it names,
    and the clock and session functions by the session's values (SPEC R15)."""
    tree = with_session(ctx, tree)
    for table, parts in table_references(tree):
        alias = table.args.get("alias") or exp.TableAlias(this=table.this.copy())
        if reference_of(ctx, table).system_view:
            if table.args.get("when") or table.args.get("changes"):  # never the present
                raise UnsupportedError(
                    f"{'.'.join(parts)} is a system view: it has no time travel."
                )
            # The system views read the lifecycle's metrics with delta-rs and pyarrow:
            # imported by the statements that read them only.
            from rewind.lifecycle.views import system_view
            from rewind.sql import information_schema

            frame = (
                information_schema.view(ctx, parts, table.meta.get(query_history.CALL))
                if information_schema.is_view(parts)
                else system_view(ctx, parts)
            )
            table.replace(binding.add(ctx, frame, alias, table))
            continue
        obj = referenced(ctx, table)
        if table.args.get("changes") is not None:
            frame, columns = _changes(ctx, obj, table.args["changes"], binding)
        else:
            then, columns = _read(ctx, obj, table.args.get("when"), binding)
            frame = version_frame(ctx, then, columns)
        table.replace(binding.add(ctx, frame, alias, table, columns))
    _bind_flow(ctx, tree, binding)  # after: its frames are no catalog tables
    return tree


def _read(
    ctx: Context, obj: CatalogObject, when: exp.HistoricalData | None, binding: Binding
) -> tuple[Snapshot, list[Column]]:
    """The version of ``obj`` a reference reads (the current one, or the one its point
    names, held until the statement ends: SPEC R19), with its columns, recorded as read."""
    version = resolve_version(ctx, obj, when)
    if when is not None:
        binding.pins.append(pins.hold(pin_root(ctx), obj.id, version, ctx.query_id, ctx.now))
    then = snapshot(ctx, obj, version)
    columns = version_columns(ctx, obj, then)
    names = [c.name for c in columns]
    ctx.catalog.record_access(ctx.query_id, obj.id, "READ", version=version, columns=names)
    return then, columns


def _changes(
    ctx: Context, obj: CatalogObject, clause: exp.Changes, binding: Binding
) -> tuple[DataFrame, list[Column]]:
    """``t CHANGES(INFORMATION => ...) AT | BEFORE(...) [END(...)]``: the change rows
    between the two versions it names (:mod:`rewind.sql.changes`), both read and held."""
    kind = changes.information(clause)
    start, end = changes.interval(clause)
    before, before_columns = _read(ctx, obj, start, binding)
    after, columns = _read(ctx, obj, end, binding)
    table = str(names.qualified(ctx, obj))
    commits = changes.check_tracked(table, before, after)
    if [(c.name, c.spark) for c in before_columns] != [(c.name, c.spark) for c in columns]:
        raise ChangeTrackingUnavailable(
            f"Table {table} was replaced by another engine within the CHANGES interval "
            "(its columns differ): query each version instead."
        )
    frame = changes.changes_frame(ctx, kind, (before, before_columns), (after, columns), commits)
    extra = [
        Column(changes.ACTION, changes.ACTION, "VARCHAR", "string"),
        Column(changes.IS_UPDATE, changes.IS_UPDATE, "BOOLEAN", "boolean"),
        Column(changes.ROW_ID, changes.ROW_ID, "VARCHAR", "string"),
    ]
    return frame, [*columns, *extra]


def pin_root(ctx: Context) -> Path:
    return ctx.store.home / "pins"


def _check_files_held(ctx: Context, obj: CatalogObject, version: int) -> None:
    """A version whose files left time travel is unavailable, never a missing file (R17);
    the current version's files never leave, so one missing there is broken storage;
    a version whose log was cleaned up (by another engine, SPEC R43, or by the lifecycle
    once nothing could read it any more) is unavailable too."""
    try:
        snap = snapshot(ctx, obj, version)
    except HistoryGone:
        raise timetravel.unavailable(
            str(names.qualified(ctx, obj)),
            f"the Delta log of version {version} was cleaned up",
            ctx.now,
        ) from None
    missing = [
        f.path for f in snap.files if not location.exists(location.data_file(snap.root, f.path))
    ]
    if missing and version == current_version(ctx, obj):
        raise StorageError(
            f"Data file {missing[0]} of table {names.qualified(ctx, obj)} is missing."
        )
    if missing:
        raise timetravel.unavailable(
            str(names.qualified(ctx, obj)),
            f"data of version {version} left time travel",
            ctx.now,
        )


def release(binding: Binding) -> None:
    pins.release(binding.pins)


def headed(tree: exp.Expression, dialect: str, statement: str) -> exp.Expression:
    """A query whose unnamed result columns carry the product's header: Snowflake's is the
    expression's text as ``statement`` writes it, upper-cased (``ZEROIFNULL(AMT)``, not the
    ``IFF(...)`` sqlglot reads it as, nor Spark's ``count(1)``), BigQuery's ``f0_``, ``f1_``."""
    first = tree
    while isinstance(first, exp.SetOperation):
        first = first.this
    if not isinstance(first, exp.Select):
        return tree
    written = projection_texts(statement, dialect) or []
    if len(written) != len(first.expressions):
        written = [p.sql("snowflake") for p in first.expressions]
    unnamed = 0
    for projection, as_written in zip(list(first.expressions), written, strict=True):
        if isinstance(projection, exp.Alias | exp.Column | exp.Star | exp.Dot):
            continue
        text = as_written.upper()
        name = f"f{unnamed}_" if dialect == "bigquery" else text
        unnamed += 1
        projection.replace(exp.alias_(projection.copy(), exp.to_identifier(name, quoted=True)))
    return tree


def query_frame(ctx: Context, tree: exp.Expression, binding: Binding) -> DataFrame:
    """A DataFrame for a query tree (table references bound to their versions)."""
    return binding.sql(ctx.spark(), bind(ctx, tree.copy(), binding), ctx.state.dialect)


def select(ctx: Context, tree: exp.Expression) -> Result:
    binding = Binding()
    try:
        named = headed(tree.copy(), ctx.state.dialect, ctx.text)
        columns, rows = collect(query_frame(ctx, named, binding))
    finally:
        release(binding)
    return ctx.result(columns, rows)
