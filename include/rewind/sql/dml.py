"""INSERT, UPDATE, DELETE, TRUNCATE, MERGE and CTAS (SPEC R13, R20, R26).

Copy-on-write at the level of data files: a statement that changes one row of a file
removes the whole file and adds a rewritten one, so the old file stays in time
travel (SPEC R13). Spark computes the new files; delta-rs commits them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind.catalog.models import CatalogObject
from rewind.errors import ExecutionError, InvalidValue, ObjectNotFound, UnsupportedError
from rewind.identifiers import normalize
from rewind.result import Result
from rewind.sql import names
from rewind.sql.frames import (
    FILE_COLUMN,
    ROW_COLUMN,
    files_by_uri,
    quote,
    version_frame,
    write_frame,
)
from rewind.sql.query import (
    Binding,
    bind,
    query_frame,
    release,
    to_spark,
    view_name,
    with_clock,
)
from rewind.sql.tables import (
    arrow_schema,
    commit_files,
    create_table_storage,
    writable_snapshot,
)
from rewind.statement import Context
from rewind.storage.columns import Column, add_column, table_columns
from rewind.storage.delta import DataFile, Snapshot
from rewind.types import from_spark

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame


def _rows(files: Sequence[DataFile]) -> int:
    return sum(f.num_records for f in files)


def _source(tree: exp.Expression) -> exp.Expression:
    if isinstance(tree, exp.Values):
        alias = exp.TableAlias(this=exp.to_identifier("__rw_values", quoted=True))
        return exp.select("*").from_(exp.Subquery(this=tree, alias=alias))
    return tree


# -- INSERT ---------------------------------------------------------------------------------
def insert(ctx: Context, tree: exp.Insert) -> Result:
    target = tree.this
    named: list[str] | None = None
    if isinstance(target, exp.Schema):
        named = [normalize(i) for i in target.expressions]
        target = target.this
    obj = names.table(ctx, names.parts(target))
    columns = table_columns(obj)
    targets = columns if named is None else [_column(columns, n) for n in named]
    binding = Binding()
    try:
        frame = query_frame(ctx, _source(tree.expression), binding)
        if len(frame.columns) != len(targets):
            raise InvalidValue(
                f"Insert value list does not match column list: expecting {len(targets)} "
                f"but got {len(frame.columns)}."
            )
        frame = frame.toDF(*[c.name for c in targets])
        for column in columns:
            if column not in targets:
                frame = frame.withColumn(column.name, _null(column))
        base = writable_snapshot(ctx, obj)
        files = write_frame(ctx, base.root, frame, columns, base.schema)
        removes = list(base.files) if tree.args.get("overwrite") else []
        commit_files(ctx, obj, base, files, removes, "INSERT")
    finally:
        release(ctx, binding)
    return ctx.result(["number of rows inserted"], [[_rows(files)]])


def _column(columns: list[Column], name: str) -> Column:
    for column in columns:
        if column.name == name:
            return column
    raise ObjectNotFound(f"Column '{name}' does not exist.")


def _null(column: Column) -> SparkColumn:
    from pyspark.sql import functions as F

    return F.lit(None).cast(column.spark)


# -- UPDATE / DELETE / TRUNCATE -------------------------------------------------------------------
class _Target:
    """The target of an UPDATE/DELETE/MERGE: a view of its current version whose rows
    carry the data file they live in (``__rw_file``) and their index in it."""

    def __init__(self, ctx: Context, table: exp.Table, binding: Binding) -> None:
        self.ctx = ctx
        self.obj = names.table(ctx, names.parts(table))
        self.columns = table_columns(self.obj)
        self.base: Snapshot = writable_snapshot(ctx, self.obj)
        self.view = view_name(ctx)
        version_frame(ctx, self.base, self.columns, with_file=True).createOrReplaceTempView(
            self.view
        )
        binding.views.append(self.view)
        alias = table.args.get("alias") or exp.TableAlias(this=table.this.copy())
        self.alias: exp.Identifier = alias.this
        self.node = exp.Table(this=exp.to_identifier(self.view, quoted=True), alias=alias)
        ctx.catalog.record_access(
            ctx.query_id,
            self.obj.id,
            "READ",
            version=self.base.version,
            columns=[c.name for c in self.columns],
        )

    def col(self, name: str) -> exp.Column:
        return exp.column(exp.to_identifier(name, quoted=True), table=self.alias.copy())

    def all_columns(self) -> list[exp.Column]:
        return [self.col(c.name) for c in self.columns] + [self.col(FILE_COLUMN)]

    def column(self, name: str) -> Column:
        return _column(self.columns, name)

    def affected(self, condition: exp.Expression) -> tuple[list[str], int]:
        """URIs of the files holding rows where ``condition`` is true, and how many rows."""
        query = (
            exp.select(self.col(FILE_COLUMN), exp.Count(this=exp.Star()).as_("__rw_n", quoted=True))
            .from_(self.node.copy())
            .where(condition.copy())
            .group_by(self.col(FILE_COLUMN))
        )
        rows = self.ctx.spark().sql(to_spark(query)).collect()
        return [str(r[0]) for r in rows], sum(int(r[1]) for r in rows)

    def rewrite(
        self, uris: list[str], frame: DataFrame, extra: Sequence[DataFile], operation: str
    ) -> None:
        """Replace the files ``uris`` by the rows of ``frame`` (which still carries
        ``__rw_file``), add ``extra`` new files, and commit (SPEC R13)."""
        from pyspark.sql import functions as F

        kept = frame.where(F.col(quote(FILE_COLUMN)).isin(uris))
        kept = kept.select(*[F.col(quote(c.name)) for c in self.columns])
        new = list(extra)
        if uris:
            new += write_frame(self.ctx, self.base.root, kept, self.columns, self.base.schema)
        removes = files_by_uri(self.base, uris)
        commit_files(self.ctx, self.obj, self.base, new, removes, operation)


def _is_true(condition: exp.Expr) -> exp.Expr:
    return exp.Is(this=exp.Paren(this=condition.copy()), expression=exp.true())


def delete(ctx: Context, tree: exp.Delete) -> Result:
    if tree.args.get("using"):
        raise UnsupportedError("DELETE ... USING is not supported yet.")
    binding = Binding()
    try:
        target = _Target(ctx, tree.this, binding)
        where = tree.args.get("where")
        condition = bind(ctx, where.this.copy(), binding) if where else exp.true()
        uris, count = target.affected(condition)
        if uris:
            query = (
                exp.select(*target.all_columns())
                .from_(target.node.copy())
                .where(exp.not_(_is_true(condition)))
            )
            target.rewrite(uris, ctx.spark().sql(to_spark(query)), [], "DELETE")
    finally:
        release(ctx, binding)
    return ctx.result(["number of rows deleted"], [[count]])


def update(ctx: Context, tree: exp.Update) -> Result:
    if tree.args.get("from_") or tree.args.get("from"):
        raise UnsupportedError("UPDATE ... FROM is not supported yet.")
    binding = Binding()
    try:
        target = _Target(ctx, tree.this, binding)
        where = tree.args.get("where")
        condition = bind(ctx, where.this.copy(), binding) if where else exp.true()
        updates = {
            target.column(normalize(eq.this.this)).name: bind(ctx, eq.expression.copy(), binding)
            for eq in tree.expressions
        }
        uris, count = target.affected(condition)
        if uris:
            projection = [
                exp.Case(
                    ifs=[
                        exp.If(
                            this=_is_true(condition),
                            true=updates[c.name],
                        )
                    ],
                    default=target.col(c.name),
                ).as_(c.name, quoted=True)
                if c.name in updates
                else target.col(c.name)
                for c in target.columns
            ]
            query = exp.select(*projection, target.col(FILE_COLUMN)).from_(target.node.copy())
            target.rewrite(uris, ctx.spark().sql(to_spark(query)), [], "UPDATE")
    finally:
        release(ctx, binding)
    return ctx.result(
        ["number of rows updated", "number of multi-joined rows updated"], [[count, 0]]
    )


def truncate(ctx: Context, tree: exp.TruncateTable) -> Result:
    """TRUNCATE: every file leaves the current state and enters time travel (SPEC R26)."""
    for table in tree.expressions:
        try:
            obj = names.table(ctx, names.parts(table))
        except ObjectNotFound:
            if tree.args.get("exists"):
                continue
            raise
        base = writable_snapshot(ctx, obj)
        commit_files(ctx, obj, base, [], list(base.files), "TRUNCATE")
    return ctx.status("Statement executed successfully.")


# -- CTAS (SPEC R20) -------------------------------------------------------------------------
def bind_table_as(ctx: Context, query: exp.Expression) -> Callable[[CatalogObject], None]:
    """CREATE TABLE ... AS SELECT in two steps: the query's tables are bound now, before
    OR REPLACE drops the old incarnation and the new one takes its name, so a query that
    names the table reads the old one, as in Snowflake (the new one has no version yet).
    The returned function writes version 0 of the new table with the query's rows."""
    binding = Binding()
    ctx.undo.append(lambda: release(ctx, binding))  # the statement failed: views, pins
    frame = query_frame(ctx, query, binding)

    def write(obj: CatalogObject) -> None:
        columns: list[Column] = []
        for field in frame.schema.fields:
            columns = add_column(columns, field.name, from_spark(field.dataType.simpleString()), [])
        obj.columns = [c.as_json() for c in columns]
        root = ctx.store.path(obj.id)
        ctx.undo.append(lambda: ctx.store.discard(obj.id))
        root.mkdir(parents=True, exist_ok=False)
        files = write_frame(ctx, root, frame, columns, arrow_schema(columns))
        create_table_storage(ctx, obj, columns, files)
        release(ctx, binding)

    return write


# -- MERGE (SPEC R26) ----------------------------------------------------------------------
SOURCE_FLAG = "__rw_src"
ACTION = "__rw_action"


def _alias(select: exp.Select, name: str) -> exp.Subquery:
    return exp.Subquery(
        this=select, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True))
    )


def _case(branches: list[tuple[exp.Expr, exp.Expr]], default: exp.Expr) -> exp.Expr:
    if not branches:
        return default
    return exp.Case(
        ifs=[exp.If(this=_is_true(cond), true=value) for cond, value in branches], default=default
    )


class _Merge:
    """MERGE INTO target USING source ON cond WHEN [NOT] MATCHED [AND c] THEN ...

    Target rows matched by the first applicable WHEN MATCHED clause are updated or
    deleted by rewriting the files they live in (SPEC R13); source rows matched by no
    target row go through the WHEN NOT MATCHED clauses into new files. One commit.
    """

    def __init__(self, ctx: Context, tree: exp.Merge, binding: Binding) -> None:
        self.ctx = ctx
        self.target = _Target(ctx, tree.this, binding)
        using = tree.args["using"]
        alias = using.args.get("alias") or exp.TableAlias(this=using.this.copy())
        inner = exp.select(exp.Star(), exp.true().as_(SOURCE_FLAG, quoted=True)).from_(using.copy())
        self.source = exp.Subquery(this=bind(ctx, inner, binding), alias=alias.copy())
        self.source_alias: exp.Identifier = alias.this
        self.on = bind(ctx, tree.args["on"].copy(), binding)
        whens = tree.args["whens"].expressions
        self.matched = [w for w in whens if w.args.get("matched")]
        self.unmatched = [w for w in whens if not w.args.get("matched")]
        if any(w.args.get("source") for w in whens):
            raise UnsupportedError("WHEN NOT MATCHED BY SOURCE is not supported.")

    def _cond(self, when: exp.When) -> exp.Expression:
        return (when.args.get("condition") or exp.true()).copy()

    def _matched_branches(
        self, value_of: Callable[[int, exp.When], exp.Expr]
    ) -> list[tuple[exp.Expr, exp.Expr]]:
        flag = exp.column(
            exp.to_identifier(SOURCE_FLAG, quoted=True), table=self.source_alias.copy()
        )
        present = exp.Not(this=exp.Is(this=flag, expression=exp.null()))
        return [
            (exp.and_(present, self._cond(w)), value_of(i, w))
            for i, w in enumerate(self.matched, 1)
        ]

    def joined(self) -> exp.Select:
        """Target LEFT JOIN source: each target row with its new values and action."""
        target = self.target
        action = _case(
            self._matched_branches(lambda i, _w: exp.Literal.number(i)), exp.Literal.number(0)
        )
        projection: list[exp.Expr] = []
        for column in target.columns:

            def value(_i: int, when: exp.When, column: Column = column) -> exp.Expression:
                then = when.args["then"]
                for eq in then.expressions if isinstance(then, exp.Update) else []:
                    if normalize(eq.this.this) == column.name:
                        return eq.expression.copy()
                return target.col(column.name)

            projection.append(
                _case(self._matched_branches(value), target.col(column.name)).as_(
                    column.name, quoted=True
                )
            )
        for extra in (FILE_COLUMN, ROW_COLUMN):
            projection.append(target.col(extra))
        projection.append(action.as_(ACTION, quoted=True))
        return (
            exp.select(*projection)
            .from_(target.node.copy())
            .join(self.source.copy(), on=self.on.copy(), join_type="LEFT")
        )

    def deletes(self) -> list[int]:
        return [
            i for i, w in enumerate(self.matched, 1) if not isinstance(w.args["then"], exp.Update)
        ]

    def _query(self, select: exp.Select) -> DataFrame:
        return self.ctx.spark().sql(to_spark(select))

    def run(self) -> list[int]:
        """Apply the clauses; returns [inserted, updated, deleted] row counts."""
        joined = _alias(self.joined(), "__rw_j")
        act, file, row = (exp.column(n, quoted=True) for n in (ACTION, FILE_COLUMN, ROW_COLUMN))
        deleting = act.copy().isin(*self.deletes() or [-1])
        acting = joined.copy()
        total, distinct, deleted = self._query(
            exp.select(
                exp.Count(this=exp.Star()),
                exp.Count(this=exp.Distinct(expressions=[file.copy(), row.copy()])),
                exp.func("COALESCE", exp.Sum(this=exp.func("IF", deleting.copy(), 1, 0)), 0),
            )
            .from_(acting)
            .where(act.copy() > 0)
        ).collect()[0]
        if int(total) != int(distinct):
            raise ExecutionError(
                "Duplicate row detected during DML action: a target row matches several "
                "source rows."
            )
        uris = [
            str(r[0])
            for r in self._query(
                exp.select(file.copy()).distinct().from_(joined.copy()).where(act.copy() > 0)
            ).collect()
        ]
        # A target row joined to several non-acting source rows appears several times:
        # keep one copy per (file, row), the acting one if there is one.
        rank = exp.Window(
            this=exp.RowNumber(),
            partition_by=[file.copy(), row.copy()],
            order=exp.Order(expressions=[exp.Ordered(this=act.copy(), desc=True)]),
        )
        ranked = exp.select(exp.Star(), rank.as_("__rw_rn", quoted=True)).from_(joined.copy())
        keep = (
            exp.select(*[exp.column(c.name, quoted=True) for c in self.target.columns], file.copy())
            .from_(_alias(ranked, "__rw_r"))
            .where(exp.and_(exp.column("__rw_rn", quoted=True).eq(1), exp.not_(deleting)))
        )
        inserted = self.inserted()
        self.target.rewrite(uris, self._query(keep), inserted, "MERGE")
        return [_rows(inserted), int(total) - int(deleted), int(deleted)]

    def inserted(self) -> list[DataFile]:
        """Source rows that match no target row, through the WHEN NOT MATCHED clauses."""
        if not self.unmatched:
            return []
        columns = self.target.columns
        values: list[dict[str, exp.Expression]] = []
        for when in self.unmatched:
            then = when.args["then"]
            names_ = (
                [normalize(c.this) for c in then.this.expressions]
                if then.this
                else [c.name for c in columns]
            )
            given = then.expression.expressions
            if len(names_) != len(given):
                raise InvalidValue(
                    "MERGE INSERT: the column list and the VALUES list differ in length."
                )
            values.append(
                {self.target.column(n).name: v for n, v in zip(names_, given, strict=True)}
            )
        projection = [
            _case(
                [
                    (
                        self._cond(w),
                        v[c.name].copy()
                        if c.name in v
                        else exp.cast(exp.null(), c.spark, dialect="spark"),
                    )
                    for w, v in zip(self.unmatched, values, strict=True)
                ],
                exp.null(),
            ).as_(c.name, quoted=True)
            for c in columns
        ]
        any_clause = exp.or_(*[_is_true(self._cond(w)) for w in self.unmatched])
        query = (
            exp.select(*projection)
            .from_(self.source.copy())
            .join(self.target.node.copy(), on=self.on.copy(), join_type="LEFT ANTI")
            .where(any_clause)
        )
        frame = self.ctx.spark().sql(to_spark(query))
        base = self.target.base
        return write_frame(self.ctx, base.root, frame, columns, base.schema)


def merge(ctx: Context, tree: exp.Merge) -> Result:
    binding = Binding()
    try:
        # The WHEN clauses are not bound table by table: give them the clock here (R15).
        clocked = with_clock(ctx, tree.copy())
        assert isinstance(clocked, exp.Merge)
        counts = _Merge(ctx, clocked, binding).run()
    finally:
        release(ctx, binding)
    return ctx.result(
        ["number of rows inserted", "number of rows updated", "number of rows deleted"], [counts]
    )
