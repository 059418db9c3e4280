"""MERGE INTO target USING source ON cond WHEN [NOT] MATCHED ... (SPEC R13, R26)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind.audit.lineage import inserts_row
from rewind.errors import ExecutionError, InvalidValue
from rewind.identifiers import normalize, set_column
from rewind.result import Result
from rewind.spark import functions
from rewind.sql import defaults
from rewind.sql.dml import CHANGED, Target, aliased, file_rows, is_true
from rewind.sql.frames import (
    CHANGE_TYPE,
    FILE_COLUMN,
    ROW_COLUMN,
    change_files,
    write_into,
)
from rewind.sql.points import with_session
from rewind.sql.query import Binding, bind, release
from rewind.statement import Context
from rewind.storage.columns import Column
from rewind.storage.snapshot import DataFile

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
SOURCE_FLAG = "__rw_src"
ACTION = "__rw_action"


def _case(branches: list[tuple[exp.Expr, exp.Expr]], default: exp.Expr) -> exp.Expr:
    if not branches:
        return default
    return exp.Case(
        ifs=[exp.If(this=is_true(cond), true=value) for cond, value in branches], default=default
    )


class _Merge:
    """MERGE INTO target USING source ON cond WHEN [NOT] MATCHED [AND c] THEN ...

    Target rows matched by the first applicable WHEN MATCHED clause, and those no source
    row matches by the first applicable WHEN NOT MATCHED BY SOURCE clause (BigQuery's,
    Delta's), are updated or deleted by rewriting the files they live in (SPEC R13);
    source rows matched by no target row go through the WHEN NOT MATCHED [BY TARGET]
    clauses into new files. One commit.
    """

    def __init__(self, ctx: Context, tree: exp.Merge, binding: Binding) -> None:
        self.ctx = ctx
        whens = tree.args["whens"].expressions
        self.matched = [w for w in whens if w.args.get("matched")]
        self.by_source = [w for w in whens if not w.args.get("matched") and w.args.get("source")]
        self.unmatched = [w for w in whens if not (w.args.get("matched") or w.args.get("source"))]
        self.acting = self.matched + self.by_source  # action i + 1: this clause's
        self.target = Target(ctx, tree.this, binding)
        self.into = tree.this
        self.target.settable(
            set_column(eq, tree.this)
            for w in self.acting
            if isinstance(w.args["then"], exp.Update)
            for eq in w.args["then"].expressions
        )
        using = tree.args["using"]
        alias = using.args.get("alias") or exp.TableAlias(this=using.this.copy())
        inner = exp.select(exp.Star(), exp.true().as_(SOURCE_FLAG, quoted=True)).from_(using.copy())
        self.source = exp.Subquery(this=bind(ctx, inner, binding), alias=alias.copy())
        self.source_alias: exp.Identifier = alias.this
        self.on = bind(ctx, tree.args["on"].copy(), binding)

    def _cond(self, when: exp.When) -> exp.Expression:
        return (when.args.get("condition") or exp.true()).copy()

    def _branches(
        self, value_of: Callable[[int, exp.When], exp.Expr]
    ) -> list[tuple[exp.Expr, exp.Expr]]:
        flag = exp.column(
            exp.to_identifier(SOURCE_FLAG, quoted=True), table=self.source_alias.copy()
        )
        absent = exp.Is(this=flag, expression=exp.null())  # no source row matched
        branches: list[tuple[exp.Expr, exp.Expr]] = []
        for i, when in enumerate(self.acting, 1):
            which = absent.copy() if when.args.get("source") else exp.not_(absent.copy())
            branches.append((exp.and_(which, self._cond(when)), value_of(i, when)))
        return branches

    def joined(self) -> exp.Select:
        """Target LEFT JOIN source: each target row with its new values and action."""
        target = self.target
        action = _case(self._branches(lambda i, _w: exp.Literal.number(i)), exp.Literal.number(0))
        projection: list[exp.Expr] = []
        for column in target.columns:

            def value(_i: int, when: exp.When, column: Column = column) -> exp.Expression:
                then = when.args["then"]
                for eq in then.expressions if isinstance(then, exp.Update) else []:
                    if set_column(eq, self.into) == column.name:
                        given = defaults.given(target.base, column, eq.expression.copy())
                        return target.assigned(column, given)
                return target.col(column.name)

            projection.append(
                _case(self._branches(value), target.col(column.name)).as_(column.name, quoted=True)
            )
        projection += [target.col(name) for name in target.carried()]
        projection.append(action.as_(ACTION, quoted=True))
        return (
            exp.select(*projection)
            .from_(target.node.copy())
            .join(self.source.copy(), on=self.on.copy(), join_type="LEFT")
        )

    def deletes(self) -> list[int]:
        return [
            i for i, w in enumerate(self.acting, 1) if not isinstance(w.args["then"], exp.Update)
        ]

    def _query(self, select: exp.Select) -> DataFrame:
        return self.target.query(select)

    def run(self) -> list[int]:
        """Apply the clauses; returns [inserted, updated, deleted] row counts."""
        joined = aliased(self.joined(), "__rw_j")
        act, file, row = (exp.column(n, quoted=True) for n in (ACTION, FILE_COLUMN, ROW_COLUMN))
        deleting = act.copy().isin(*self.deletes() or [-1])
        # One pass over the acting rows: their count, their distinct target rows, the
        # deleted ones, and the files they live in (which the rewrite replaces).
        total, distinct, deleted, files = self._query(
            exp.select(
                exp.Count(this=exp.Star()),
                exp.Count(this=exp.Distinct(expressions=[file.copy(), row.copy()])),
                exp.func("COALESCE", exp.Sum(this=exp.func("IF", deleting.copy(), 1, 0)), 0),
                exp.ArrayUniqueAgg(this=file.copy()),
            )
            .from_(joined.copy())
            .where(act.copy() > 0)
        ).collect()[0]
        if int(total) != int(distinct):
            raise ExecutionError(
                "Duplicate row detected during DML action: a target row matches several "
                "source rows."
            )
        uris = sorted(str(uri) for uri in files)
        # A target row joined to several non-acting source rows appears several times:
        # keep one copy per (file, row), the acting one if there is one.
        rank = exp.Window(
            this=exp.RowNumber(),
            partition_by=[file.copy(), row.copy()],
            order=exp.Order(expressions=[exp.Ordered(this=act.copy(), desc=True)]),
        )
        ranked = exp.select(exp.Star(), rank.as_("__rw_rn", quoted=True)).from_(joined.copy())
        keep = (
            exp.select(
                *[exp.column(c.name, quoted=True) for c in self.target.columns],
                *[exp.column(name, quoted=True) for name in self.target.carried()],
                (act.copy() > 0).as_(CHANGED, quoted=True),  # updated (deleted: not kept)
            )
            .from_(aliased(ranked, "__rw_r"))
            .where(exp.and_(exp.column("__rw_rn", quoted=True).eq(1), exp.not_(deleting)))
        )
        inserted = self.inserted()
        self.target.rewrite(uris, self._query(keep), inserted, "MERGE")
        return [file_rows(change_files(inserted)[0]), int(total) - int(deleted), int(deleted)]

    def _source_values(self) -> list[exp.Expression]:
        """The source's columns, in order (its frame's schema)."""
        frame = self._query(exp.select(exp.Star()).from_(self.source.copy()).limit(0))
        return [
            exp.column(exp.to_identifier(name, quoted=True), table=self.source_alias.copy())
            for name in frame.columns
            if name != SOURCE_FLAG
        ]

    def inserted(self) -> list[DataFile]:
        """Source rows that match no target row, through the WHEN NOT MATCHED clauses;
        under the change data feed, with their change files where the MERGE can also
        change or delete rows (an insert-only MERGE's feed is its new files)."""
        if not self.unmatched:
            return []
        columns = self.target.columns
        values: list[dict[str, exp.Expression]] = []
        for when in self.unmatched:
            then = when.args["then"]
            if inserts_row(then):  # the source row's values, in order
                names_, given = [c.name for c in columns], self._source_values()
            else:
                names_ = (
                    [normalize(c.this) for c in then.this.expressions]
                    if then.this
                    else [c.name for c in columns]
                )
                given = then.expression.expressions
            if len(names_) != len(given):
                raise InvalidValue(
                    f"MERGE INSERT ROW: the source has {len(given)} columns, the target "
                    f"{len(names_)}."
                    if inserts_row(then)
                    else "MERGE INSERT: the column list and the VALUES list differ in length."
                )
            base = self.target.base
            values.append(
                {
                    (column := self.target.column(n)).name: defaults.given(base, column, v)
                    for n, v in zip(names_, given, strict=True)
                }
            )
        projection = [
            _case(
                [
                    (
                        self._cond(w),
                        v[c.name].copy() if c.name in v else defaults.value_of(self.target.base, c),
                    )
                    for w, v in zip(self.unmatched, values, strict=True)
                ],
                exp.null(),
            ).as_(c.name, quoted=True)
            for c in columns
        ]
        any_clause = exp.or_(*[is_true(self._cond(w)) for w in self.unmatched])
        query = (
            exp.select(*projection)
            .from_(self.source.copy())
            .join(self.target.node.copy(), on=self.on.copy(), join_type="LEFT ANTI")
            .where(any_clause)
        )
        frame = self._query(query)
        base = self.target.base
        changes = base.change_feed and bool(self.acting)
        if changes:
            frame = frame.withColumn(CHANGE_TYPE, functions(frame.sparkSession).lit("insert"))
        return write_into(self.ctx, base, frame, columns, inserts=True, changes=changes)


def merge(ctx: Context, tree: exp.Merge) -> Result:
    binding = Binding()
    try:
        # The WHEN clauses are not bound table by table: give them the clock (R15) and
        # the session's names here.
        clocked = with_session(ctx, tree.copy())
        assert isinstance(clocked, exp.Merge)
        counts = _Merge(ctx, clocked, binding).run()
    finally:
        release(binding)
    return ctx.result(
        ["number of rows inserted", "number of rows updated", "number of rows deleted"], [counts]
    )
