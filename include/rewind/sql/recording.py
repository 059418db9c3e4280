"""What a statement read and wrote, captured while it runs (SPEC R36).

The code that runs a statement records object-level facts as it goes
(:meth:`~rewind.catalog.repository.Catalog.record_access`): READ with the version read,
WRITE with the version made, DDL with the operation, each with the object's name then.
:class:`StatementAudit` wraps the handler (``sql/execute.py``) and adds what needs
the statement's text:

* before it runs, the statement's analysis (``rewind.sql.analysis``) has resolved every
  table it references (names as the statement finds them); the objects an ALTER names
  are snapshotted;
* after it ran, in the same catalog transaction: READ rows keep only the columns the
  statement referenced, data WRITE rows get the columns written and their source
  columns (``column_lineage``), and the statement's main DDL row gets its properties.

Direct vs base objects: the objects a statement names are *direct*; the tables whose
data it reads are *base*. Rewind has no views, so a table a SELECT, INSERT ... SELECT,
CTAS, UPDATE, DELETE or MERGE names is both, and so is a cloned table; a schema or
database clone names its container (direct only) and reads each table it clones (base
only). A DDL statement that changes several objects (REPLACE drops the old one, SWAP
renames two) keeps one row per object; the last one recorded is its main object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlglot import exp

from rewind.audit.ddl import ObjectState, Related, ddl_properties
from rewind.audit.lineage import StatementLineage, statement_lineage
from rewind.audit.shape import COLUMN_IDS, DDL, MODIFYING, READ, WRITE
from rewind.catalog.models import CatalogObject, ColumnLineage, StatementObject
from rewind.sql import names
from rewind.statement import ALTER, DATA_CHANGES, SWAP, Analysis, Context
from rewind.storage.columns import Column, column_id, table_columns


@dataclass
class StatementAudit:
    """One statement's audit capture: :meth:`start` before it runs, :meth:`finish` after."""

    tree: object
    keyed: exp.Expression | None = None  # the tree, each catalog table renamed to its key
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> columns
    ids: dict[str, int] = field(default_factory=dict)  # key -> object id
    written: tuple[int, ...] = ()  # the tables its row changes modify
    before: dict[int, ObjectState] = field(default_factory=dict)  # what an ALTER names

    @classmethod
    def start(cls, ctx: Context, tree: object, analysis: Analysis) -> StatementAudit:
        """Take what the statement references (its analysis, resolved before it
        changes any name: the keyed statement, each table's columns) and the state of
        what an ALTER names."""
        written = [c.object_id for c in analysis.changes if c.operation in DATA_CHANGES]
        audit = cls(
            tree,
            analysis.keyed,
            dict(analysis.tables),
            analysis.key_ids(),
            tuple(t for t in dict.fromkeys(written) if t is not None),
        )
        for change in analysis.changes:
            if change.operation in (ALTER, SWAP):
                assert change.object_id is not None
                audit.before[change.object_id] = state_of(ctx, _object(ctx, change.object_id))
        return audit

    def finish(self, ctx: Context) -> None:
        """Complete the statement's rows, in its own catalog transaction."""
        rows = _rows(ctx)
        unwritten = [
            t for t in self.written if not any(r.access == WRITE and r.object_id == t for r in rows)
        ]
        for table_id in unwritten:
            # It changed no row, so made no version: still, it modified the table.
            operation = _operation(self.tree)
            ctx.catalog.record_access(ctx.query_id, table_id, WRITE, operation=operation)
        if unwritten:
            rows = _rows(ctx)
        ddl_rows = [r for r in rows if r.access == DDL]
        lineage = self._lineage(ctx, ddl_rows)
        if lineage is not None:
            self._narrow_reads(rows, lineage)
        self._record_writes(ctx, rows, lineage)
        if ddl_rows:
            self._describe_ddl(ctx, rows, ddl_rows)
        _record_column_ids(ctx, rows)

    def _lineage(
        self, ctx: Context, ddl_rows: Sequence[StatementObject]
    ) -> StatementLineage | None:
        if self.keyed is None:
            return None
        created: list[str] = []
        if isinstance(self.keyed, exp.Create) and ddl_rows:  # CTAS: the new table's columns
            created = _column_names(ctx, ddl_rows[-1].object_id)
        return statement_lineage(self.keyed, self.tables, created)

    def _narrow_reads(self, rows: Sequence[StatementObject], lineage: StatementLineage) -> None:
        """READ rows list the columns the statement referenced, in table order."""
        keys = {object_id: key for key, object_id in self.ids.items()}
        for row in rows:
            key = keys.get(row.object_id)
            if row.access == READ and key is not None:
                referenced = lineage.reads.get(key, frozenset())
                row.columns = [c for c in self.tables[key] if c in referenced]

    def _record_writes(
        self, ctx: Context, rows: Sequence[StatementObject], lineage: StatementLineage | None
    ) -> None:
        """Data WRITE rows list the columns written; their sources go to column_lineage."""
        ctas = isinstance(self.keyed, exp.Create)
        for row in rows:
            if row.access != WRITE or not (
                row.operation in MODIFYING or (ctas and row.operation == "CREATE")
            ):
                continue
            every = _column_names(ctx, row.object_id)
            if lineage is None or not lineage.writes:
                row.columns = every
                continue
            row.columns = [c for c in every if c in lineage.writes]
            for column in row.columns:
                for source in sorted(lineage.writes[column]):
                    ctx.catalog.session.add(
                        ColumnLineage(
                            query_id=ctx.query_id,
                            target_id=row.object_id,
                            target_column=column,
                            source_id=self.ids[source.table],
                            source_column=source.column,
                        )
                    )

    def _describe_ddl(
        self, ctx: Context, rows: Sequence[StatementObject], ddl_rows: Sequence[StatementObject]
    ) -> None:
        """Names as the statement found them, and the main DDL row's properties."""
        for row in rows:
            if row.object_id in self.before:
                row.object_name = self.before[row.object_id].name
        main = ddl_rows[-1]
        obj = _object(ctx, main.object_id)
        clone = isinstance(self.tree, exp.Create) and self.tree.args.get("clone") is not None
        sources = [r for r in rows if r.access == READ and r.direct] if clone else []
        main.properties = ddl_properties(
            main.operation or "",
            self.before.get(obj.id),
            state_of(ctx, obj),
            clone_source=_related(sources[0]) if sources else None,
            others=[_related(r) for r in ddl_rows[:-1]],
        )


def _operation(tree: object) -> str:
    """A data statement's operation: INSERT, UPDATE, DELETE, MERGE or TRUNCATE."""
    return "TRUNCATE" if isinstance(tree, exp.TruncateTable) else type(tree).__name__.upper()


def _record_column_ids(ctx: Context, rows: Sequence[StatementObject]) -> None:
    """The ``columnId`` of each column a READ or WRITE row lists, kept with the row (a
    later RENAME COLUMN must not change what this statement recorded)."""
    for row in rows:
        if row.access == DDL or not row.columns:
            continue
        ids = {c.name: column_id(row.object_id, c.physical) for c in _table_columns(ctx, row)}
        row.properties = {COLUMN_IDS: {c: ids[c] for c in row.columns if c in ids}}


def _table_columns(ctx: Context, row: StatementObject) -> list[Column]:
    obj = ctx.catalog.get(row.object_id)
    return table_columns(obj) if obj is not None else []


def _rows(ctx: Context) -> list[StatementObject]:
    """What the running statement recorded so far, in order."""
    return list(
        ctx.catalog.session.scalars(
            select(StatementObject)
            .where(StatementObject.query_id == ctx.query_id)
            .order_by(StatementObject.id)
        )
    )


def _object(ctx: Context, object_id: int) -> CatalogObject:
    obj = ctx.catalog.get(object_id)
    assert obj is not None, f"statement rows name catalog objects ({object_id})"
    return obj


def _column_names(ctx: Context, object_id: int) -> list[str]:
    return [c.name for c in table_columns(_object(ctx, object_id))]


def state_of(ctx: Context, obj: CatalogObject) -> ObjectState:
    """What DDL can change on ``obj``, now."""
    return ObjectState(
        name=str(names.qualified(ctx, obj)),
        retention_days=obj.retention_days,
        comment=obj.comment,
        transient=obj.is_transient,
        columns=tuple(c.name for c in table_columns(obj)),
        column_ids=tuple(column_id(obj.id, c.physical) for c in table_columns(obj)),
    )


def _related(row: StatementObject) -> Related:
    return Related(row.object_id, row.object_name, row.operation)
