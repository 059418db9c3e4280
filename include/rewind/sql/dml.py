"""INSERT, UPDATE, DELETE, TRUNCATE and CTAS (SPEC R13, R20, R26); MERGE is
:mod:`rewind.sql.merge`, on the same :class:`Target`.

Copy-on-write at the level of data files: a statement that changes one row of a file
removes the whole file and adds a rewritten one, so the old file stays in time
travel (SPEC R13). Spark computes the new files; delta-rs commits them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind.audit.lineage import joined, other_tables
from rewind.catalog.models import CatalogObject
from rewind.errors import InvalidValue, ObjectNotFound, SqlSyntaxError, UnsupportedError
from rewind.identifiers import normalize, set_column
from rewind.result import Result
from rewind.spark import functions
from rewind.sql import defaults, names
from rewind.sql.answers import call
from rewind.sql.frames import (
    CHANGE_TYPE,
    FILE_COLUMN,
    ROW_COLUMN,
    ROW_ID_COLUMN,
    ROW_VERSION_COLUMN,
    change_files,
    files_by_uri,
    quote,
    version_frame,
    within_length,
    write_frame,
    write_into,
)
from rewind.sql.query import Binding, bind, headed, query_frame, referenced, release
from rewind.sql.tables import (
    ColumnDefs,
    arrow_schema,
    claim_storage,
    commit_files,
    create_table_storage,
    delta_schema,
    writable_snapshot,
)
from rewind.statement import Context
from rewind.storage import location
from rewind.storage.columns import Column, add_column, column_named, table_columns
from rewind.storage.snapshot import DataFile, Snapshot
from rewind.types import VARIANT, declared_length, from_spark, is_nested

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame


def file_rows(files: Sequence[DataFile]) -> int:
    return sum(f.num_records for f in files)


def _source(tree: exp.Expression) -> exp.Expression:
    if isinstance(tree, exp.Values):
        alias = exp.TableAlias(this=exp.to_identifier("__rw_values", quoted=True))
        return exp.select("*").from_(exp.Subquery(this=tree, alias=alias))
    return tree


# -- INSERT ---------------------------------------------------------------------------------
def insert(ctx: Context, tree: exp.Insert) -> Result:
    """INSERT [OVERWRITE] INTO t [(columns)] VALUES ... | query: a column the statement
    gives no value gets its default (NULL without one), and so does a VALUES row's
    DEFAULT (SPEC R40, :mod:`rewind.sql.defaults`)."""
    target = tree.this
    named: list[str] | None = None
    if isinstance(target, exp.Schema):
        named = [normalize(i) for i in target.expressions]
        target = target.this
    obj = referenced(ctx, target)
    columns = table_columns(obj)
    targets = columns if named is None else [column_named(columns, n) for n in named]
    omitted = [c for c in columns if c not in targets]
    base = writable_snapshot(ctx, obj)
    binding = Binding()
    try:
        source = _with_defaults(tree.expression.copy(), base, targets, omitted)
        frame = query_frame(ctx, source, binding)
        if len(frame.columns) - len(omitted) != len(targets):
            raise InvalidValue(
                f"Insert value list does not match column list: expecting {len(targets)} "
                f"but got {len(frame.columns) - len(omitted)}."
            )
        frame = frame.toDF(*[c.name for c in targets + omitted])
        files = write_into(ctx, base, frame, columns, inserts=True)
        removes = list(base.files) if tree.args.get("overwrite") else []
        # An INSERT copies no row, so none of its rows changes its id: the CHANGES clause
        # reads across an INSERT OVERWRITE as the old rows deleted and the new inserted
        commit_files(ctx, obj, base, files, removes, "INSERT", stable_rows=True)
    finally:
        release(binding)
    return ctx.result(["number of rows inserted"], [[file_rows(files)]])


def _with_defaults(
    source: exp.Expression, base: Snapshot, targets: list[Column], omitted: list[Column]
) -> exp.Expression:
    """An INSERT's rows with the defaults it takes: a VALUES row's DEFAULT, the default of
    the column at its place; each ``omitted`` column's default after the given columns."""
    if isinstance(source, exp.Values):
        for row in source.expressions:
            for column, value in zip(targets, row.expressions, strict=False):
                value.replace(defaults.given(base, column, value))
        _as_text_where_mixed(source)
    source = _source(source)
    if not omitted:
        return source
    alias = exp.TableAlias(this=exp.to_identifier("__rw_given", quoted=True))
    filled = [
        defaults.value_of(base, c).as_(f"__rw_default{i}", quoted=True)
        for i, c in enumerate(omitted)
    ]
    return exp.select(exp.Star(), *filled).from_(exp.Subquery(this=source, alias=alias))


def _as_text_where_mixed(values: exp.Values) -> None:
    """An INSERT's VALUES column that mixes text with numbers or booleans (``(1), ('2')``)
    as text: each value becomes the column's type as the write converts text, as
    Snowflake converts each value to its column's type (Spark refused the rows: no common
    type of its inline table); a value that does not convert is named then."""
    rows = [row.expressions for row in values.expressions]
    for place in range(max((len(row) for row in rows), default=0)):
        cells = [row[place] for row in rows if place < len(row)]
        text = [isinstance(c, exp.Literal) and c.is_string for c in cells]
        other = [
            isinstance(c, exp.Boolean) or (isinstance(c, exp.Literal) and not c.is_string)
            for c in cells
        ]
        if any(text) and any(other):
            for cell, kind in zip(cells, other, strict=True):
                if kind:
                    cell.replace(exp.cast(cell.copy(), "VARCHAR"))


# -- UPDATE / DELETE / TRUNCATE -------------------------------------------------------------------
CHANGED = "__rw_changed"


class Target:
    """The target of an UPDATE/DELETE/MERGE: a frame of its current version whose rows
    carry the data file they live in (``__rw_file``) and their index in it, bound in the
    statement's ``binding`` (every query of the statement runs through :meth:`query`)."""

    def __init__(self, ctx: Context, table: exp.Table, binding: Binding) -> None:
        self.ctx = ctx
        self.binding = binding
        self.obj = referenced(ctx, table)
        self.columns = table_columns(self.obj)
        self.base: Snapshot = writable_snapshot(ctx, self.obj)
        alias = table.args.get("alias") or exp.TableAlias(this=table.this.copy())
        self.alias: exp.Identifier = alias.this
        self.frame = version_frame(ctx, self.base, self.columns, with_file=True)
        self.node = binding.add(ctx, self.frame, alias, columns=self.columns)
        ctx.catalog.record_access(
            ctx.query_id,
            self.obj.id,
            "READ",
            version=self.base.version,
            columns=[c.name for c in self.columns],
        )

    def col(self, name: str) -> exp.Column:
        return exp.column(exp.to_identifier(name, quoted=True), table=self.alias.copy())

    def assigned(self, column: Column, value: exp.Expression) -> exp.Expression:
        """``value`` as an UPDATE or MERGE sets ``column`` to it: an array, object or
        struct value cast to the column's type (``SET addr = STRUCT('Lyon', 69000)``, its
        fields by position, as BigQuery and Snowflake assign them; Spark refused a struct
        whose field names differ from the column's). Into a VARIANT (or semi-structured
        ARRAY, OBJECT) column, whose rows the statement keeps read as JSON text, any value
        is its JSON text too (Spark refused an OBJECT_CONSTRUCT's struct, a source's array
        beside text), a string as it is, which the write stores as the value
        (rewind.sql.frames: JSON text parsed, other text a string)."""
        if column.spark == VARIANT.spark:
            boxed = call("TO_JSON", call("NAMED_STRUCT", exp.Literal.string("v"), value))
            return call("GET_JSON_OBJECT", boxed, exp.Literal.string("$.v"))
        if not is_nested(column.spark):
            return value
        return exp.Cast(this=value, to=exp.DataType.build(column.spark, dialect="spark"))

    def keys(self, changed: exp.Expr | None = None) -> list[exp.Expr]:
        """What a rewrite's rows carry after the columns (:meth:`rewrite`): their file,
        their index in it, and whether the statement changed them (``changed``: an
        UPDATE's condition; None, a DELETE's rows, which it keeps as they are)."""
        changed = exp.false() if changed is None else is_true(changed)
        carried = [self.col(name) for name in self.carried()]
        return [*carried, changed.as_(CHANGED, quoted=True)]

    def carried(self) -> list[str]:
        """What each target row carries besides its columns: its file, its index in it,
        and under row tracking its stable row id and row commit version (SPEC R40)."""
        stable = [ROW_ID_COLUMN, ROW_VERSION_COLUMN] if self.base.stable_row_columns else []
        return [FILE_COLUMN, ROW_COLUMN, *stable]

    def column(self, name: str) -> Column:
        return column_named(self.columns, name)

    def settable(self, names: Iterable[str]) -> None:
        """Refuse to set an identity column (UPDATE, a MERGE's WHEN MATCHED), as
        delta-spark does: its values are the table's to give (SPEC R40); and a generated
        column, whose value the table computes (delta-spark refuses a value that is not
        its expression's; Rewind would store the computed one instead of the value set)."""
        generated = self.base.generated
        for name in names:
            column = self.column(name)
            if column.physical in self.base.identity:
                raise UnsupportedError(f"UPDATE on IDENTITY column {column.name} is not supported.")
            if column.physical in generated:
                raise UnsupportedError(
                    f"UPDATE of generated column {column.name} is not supported: the table "
                    f"computes it ({generated[column.physical]}); set the columns it is "
                    "computed from."
                )

    def query(self, tree: exp.Expression) -> DataFrame:
        """A DataFrame for a query of the statement (its frames bound)."""
        return self.binding.sql(self.ctx.spark(), tree, self.ctx.state.dialect)

    def affected(self, condition: exp.Expression) -> tuple[list[str], int]:
        """URIs of the files holding rows where ``condition`` is true, and how many rows."""
        query = (
            exp.select(self.col(FILE_COLUMN), exp.Count(this=exp.Star()).as_("__rw_n", quoted=True))
            .from_(self.node.copy())
            .where(condition.copy())
            .group_by(self.col(FILE_COLUMN))
        )
        rows = self.query(query).collect()
        return [str(r[0]) for r in rows], sum(int(r[1]) for r in rows)

    def matched(
        self, tree: exp.Update | exp.Delete, values: Sequence[exp.Expression], condition: exp.Expr
    ) -> exp.Subquery:
        """Each row the statement changes when it reads other tables (UPDATE ... FROM,
        DELETE ... USING): the target rows ``condition`` joins to rows of them, once each
        (``__rw_file``, ``__rw_row``), with the ``values`` (``__rw_v<i>``) of one of its
        matches (Snowflake: any one) and how many it had (``__rw_n``)."""
        keys = [self.col(FILE_COLUMN), self.col(ROW_COLUMN)]

        def per_row(function: exp.Expression) -> exp.Window:
            order = exp.Order(expressions=[exp.Ordered(this=keys[0].copy())])
            return exp.Window(this=function, partition_by=[k.copy() for k in keys], order=order)

        select = exp.select(
            *[k.copy() for k in keys],
            *[v.copy().as_(f"__rw_v{i}", quoted=True) for i, v in enumerate(values)],
            per_row(exp.RowNumber()).as_("__rw_rn", quoted=True),
            per_row(exp.Count(this=exp.Star())).as_("__rw_n", quoted=True),
        )
        select = joined(select, other_tables(tree)).where(is_true(condition))
        bound = bind(self.ctx, select, self.binding)
        assert isinstance(bound, exp.Select)
        every = joined(bound, [self.node.copy()])  # bound already: a frame, no reference
        first = exp.select(exp.Star()).from_(aliased(every, "__rw_all"))
        return aliased(first.where(exp.column("__rw_rn", quoted=True).eq(1)), "__rw_m")

    def changed(self, matched: exp.Subquery) -> tuple[list[str], int, int]:
        """The files holding the rows ``matched`` names, how many rows, and how many of
        them had several matches (Snowflake's multi-joined rows)."""
        file = exp.column(FILE_COLUMN, quoted=True)
        several = exp.func("IF", exp.column("__rw_n", quoted=True) > 1, 1, 0)
        rows = self.query(
            exp.select(file, exp.Count(this=exp.Star()), exp.Sum(this=several))
            .from_(matched.copy())
            .group_by(file.copy())
        ).collect()
        return [str(r[0]) for r in rows], sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows)

    def with_matched(self, matched: exp.Subquery, join_type: str) -> exp.Select:
        """The target's rows joined (LEFT, LEFT ANTI) to ``matched`` by file and row."""
        on = exp.and_(
            *[
                self.col(key).eq(exp.column(key, table=matched.alias, quoted=True))
                for key in (FILE_COLUMN, ROW_COLUMN)
            ]
        )
        return exp.select().from_(self.node.copy()).join(matched.copy(), on=on, join_type=join_type)

    def rewrite(
        self, uris: list[str], frame: DataFrame, extra: Sequence[DataFile], operation: str
    ) -> None:
        """Replace the files ``uris`` by the rows of ``frame`` (which carries
        :meth:`keys`), add ``extra`` new files (and their change files), and commit (SPEC
        R13). Under Delta's change data feed (:attr:`Snapshot.change_feed`, SPEC R40) the
        version's change files hold the rows it deleted (those of the files that
        ``frame`` lacks) and each row it changed as it was and as it is, as delta-spark's
        own UPDATE, DELETE and MERGE write them. Under row tracking each row keeps its
        stable row id, and a row it did not change its row commit version (Delta's
        materialized row ids)."""
        F = functions(frame.sparkSession)
        kept = frame.where(F.col(quote(FILE_COLUMN)).isin(uris))
        lengths = self.base.lengths  # the values the statement sets (SPEC R40)
        given = {c.name: lengths[c.physical] for c in self.columns if c.physical in lengths}
        if given:
            kept = kept.withColumns(
                {
                    name: within_length(
                        F, F.col(quote(name)), name.replace("'", "''"), length, F.col(CHANGED)
                    )
                    for name, length in given.items()
                }
            )
        stable = []
        if self.base.stable_row_columns:
            version = F.when(~F.col(CHANGED), F.col(ROW_VERSION_COLUMN))
            stable = [F.col(ROW_ID_COLUMN), version.alias(ROW_VERSION_COLUMN)]
        feed = self.base.change_feed
        if feed:
            rows = self._with_changes(kept, uris, stable)
        else:
            rows = kept.select(*[quote(c.name) for c in self.columns], *stable)
        new = list(extra)
        if uris:
            new += write_into(
                self.ctx, self.base, rows, self.columns, changes=feed, stable_rows=bool(stable)
            )
        removes = files_by_uri(self.base, uris)
        adds, changes = change_files(new)
        commit_files(
            self.ctx,
            self.obj,
            self.base,
            adds,
            removes,
            operation,
            changes=changes,
            stable_rows=bool(stable),
        )

    def _with_changes(
        self, kept: DataFrame, uris: list[str], stable: list[SparkColumn]
    ) -> DataFrame:
        """``kept`` with each row's kind of change (NULL: as it was; ``update_postimage``)
        and its ``stable`` row ids, and the rows of the files ``uris`` as they were where
        the statement changed them (``update_preimage``) or deleted them (``delete``):
        :func:`write_frame`'s rows."""
        F = functions(kept.sparkSession)
        keys = [FILE_COLUMN, ROW_COLUMN]
        kinds = {c.name: kept.schema[c.name].dataType for c in self.columns}

        def kind(name: str) -> SparkColumn:
            return F.lit(name).cast("string").alias(CHANGE_TYPE)

        def old(rows: DataFrame, name: str) -> DataFrame:
            values = [F.col(quote(n)).cast(kinds[n]).alias(n) for n in kinds]
            none = [F.lit(None).cast("bigint").alias(c) for c in self.carried()[2:]]
            return rows.select(*values, kind(name), *none)

        was = self.frame.where(F.col(quote(FILE_COLUMN)).isin(uris))
        changed = kept.where(F.col(CHANGED)).select(*keys)
        now = F.when(F.col(CHANGED), F.lit("update_postimage")).alias(CHANGE_TYPE)
        return (
            kept.select(*[quote(n) for n in kinds], now, *stable)
            .unionByName(old(was.join(changed, keys, "left_semi"), "update_preimage"))
            .unionByName(old(was.join(kept.select(*keys), keys, "left_anti"), "delete"))
        )


def aliased(select: exp.Select, name: str) -> exp.Subquery:
    """``(select) AS "name"``: a quoted alias, so Spark's case does not fold it."""
    return exp.Subquery(
        this=select, alias=exp.TableAlias(this=exp.to_identifier(name, quoted=True))
    )


def is_true(condition: exp.Expr) -> exp.Expr:
    return exp.Is(this=exp.Paren(this=condition.copy()), expression=exp.true())


def delete(ctx: Context, tree: exp.Delete) -> Result:
    binding = Binding()
    try:
        target = Target(ctx, tree.this, binding)
        if tree.args.get("using"):
            matched = target.matched(tree, [], _where(tree))
            uris, count, _ = target.changed(matched)
            kept = target.with_matched(matched, "LEFT ANTI")
            query = kept.select(*[target.col(c.name) for c in target.columns], *target.keys())
        else:
            condition = bind(ctx, _where(tree).copy(), binding)
            uris, count = target.affected(condition)
            query = (
                exp.select(*[target.col(c.name) for c in target.columns], *target.keys())
                .from_(target.node.copy())
                .where(exp.not_(is_true(condition)))
            )
        if uris:
            target.rewrite(uris, target.query(query), [], "DELETE")
    finally:
        release(binding)
    return ctx.result(["number of rows deleted"], [[count]])


def update(ctx: Context, tree: exp.Update) -> Result:
    """UPDATE t SET ... [FROM other tables] [WHERE ...]: with FROM, a target row that
    joins several rows takes the values of one of them and counts as multi-joined, as in
    Snowflake (ERROR_ON_NONDETERMINISTIC_UPDATE = FALSE, its default)."""
    binding = Binding()
    try:
        target = Target(ctx, tree.this, binding)
        assigned = [
            (target.column(set_column(eq, tree.this)), eq.expression) for eq in tree.expressions
        ]
        values = {c.name: defaults.given(target.base, c, value) for c, value in assigned}
        target.settable(values)
        updated: exp.Expr
        new: dict[str, exp.Expression]
        if tree.args.get("from_"):
            matched = target.matched(tree, list(values.values()), _where(tree))
            uris, count, multi = target.changed(matched)
            updated = exp.column(FILE_COLUMN, table=matched.alias, quoted=True).is_(exp.null())
            updated = exp.not_(updated)
            new = {
                name: exp.column(f"__rw_v{i}", table=matched.alias, quoted=True)
                for i, name in enumerate(values)
            }
            rows = target.with_matched(matched, "LEFT")
        else:
            condition = bind(ctx, _where(tree).copy(), binding)
            updated = is_true(condition)
            new = {name: bind(ctx, value.copy(), binding) for name, value in values.items()}
            (uris, count), multi = target.affected(condition), 0
            rows = exp.select().from_(target.node.copy())
        if uris:
            projection = [
                exp.Case(
                    ifs=[exp.If(this=updated.copy(), true=target.assigned(c, new[c.name]))],
                    default=target.col(c.name),
                ).as_(c.name, quoted=True)
                if c.name in new
                else target.col(c.name)
                for c in target.columns
            ]
            query = rows.select(*projection, *target.keys(updated))
            target.rewrite(uris, target.query(query), [], "UPDATE")
    finally:
        release(binding)
    return ctx.result(
        ["number of rows updated", "number of multi-joined rows updated"], [[count, multi]]
    )


def _where(tree: exp.Update | exp.Delete) -> exp.Expression:
    where = tree.args.get("where")
    return where.this if where else exp.true()


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
def bind_table_as(
    ctx: Context,
    query: exp.Expression,
    named: list[str] | None = None,
    declared: ColumnDefs | None = None,
) -> Callable[[CatalogObject], None]:
    """CREATE TABLE ... AS SELECT in two steps: the query's tables are bound now, before
    OR REPLACE drops the old incarnation and the new one takes its name, so a query that
    names the table reads the old one, as in Snowflake (the new one has no version yet).
    The returned function writes version 0 of the new table with the query's rows, its
    columns ``named`` so if given (``CREATE TABLE t (a, b) AS ...``), else as the query's
    headers name them (Snowflake's: the expression as written, R26); of the types the
    query's values have, or those ``declared`` (``CREATE TABLE t (a INT, b VARCHAR(3)) AS
    ...``), into which they are stored as an INSERT stores them."""
    binding = Binding()
    ctx.undo.append(lambda: release(binding))  # the statement failed: its pins
    frame = query_frame(ctx, headed(query.copy(), ctx.state.dialect, ctx.text), binding)
    if named is not None:
        if len(named) != len(frame.columns):
            raise SqlSyntaxError(
                f"SQL compilation error: the table names {len(named)} columns, its query "
                f"gives {len(frame.columns)}."
            )
        frame = frame.toDF(*named)

    def write(obj: CatalogObject) -> None:
        columns: list[Column] = []
        not_null: set[str] = set()
        if declared is not None:
            columns, not_null, _ = declared
        else:  # the query's own types
            for field in frame.schema.fields:
                kind = from_spark(field.dataType.simpleString())
                columns = add_column(columns, field.name, kind, [])
        obj.columns = [c.as_json() for c in columns]
        root = claim_storage(ctx, obj)
        location.make_dir(root)
        schema = arrow_schema(columns, not_null)  # the files' (nested types too)
        rows = frame if declared is None else _within_lengths(frame, columns)
        files = write_frame(ctx, root, rows, columns, schema)
        physical = schema if declared is None else delta_schema(*declared)
        create_table_storage(ctx, obj, columns, files, physical)
        release(binding)

    return write


def _within_lengths(frame: DataFrame, columns: Sequence[Column]) -> DataFrame:
    """``frame``'s rows, a value longer than its column's declared VARCHAR(n) failing the
    statement (:func:`within_length`)."""
    F = functions(frame.sparkSession)
    return frame.select(
        *[
            within_length(
                F,
                F.col(quote(c.name)),
                c.name.replace("'", "''"),
                declared_length(c.column_type.declared()),
            ).alias(c.name)
            for c in columns
        ]
    )
