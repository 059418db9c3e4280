"""One fuzz run: generated statements (fuzz_grammar.py) one after another on one home,
each checked as it runs (SPEC R28, R36, R37, R39). Two runs use it:

* tests/unit/test_fuzz_analysis.py — thousands of statements in process, **without
  Spark**: :class:`Run` with ``spark=False`` gives the session a Spark that raises
  :class:`SparkWork` at its first use, so a statement that needs Spark is parsed,
  analysed and authorized, then stopped where its execution would start Spark, and
  rolled back; every other statement (DDL, SHOW, USE, CLONE, UNDROP, grants, SQL
  functions, restores, refusals) runs to its end.
* tests/spark/test_fuzz_statements.py — a few hundred statements on Spark, mostly the
  kinds that need it (reads, DML, MERGE, CTAS, computed points, the audit views).

After every statement, in both: it succeeded, or it raised a RewindError with a stable
code and one line (R39), never another exception and never INTERNAL_ERROR; and a
statement that failed (or was stopped at Spark) changed nothing — every catalog row but
the statement log's and the listing of the warehouse, fail-safe and system stores are
compared before and after (R28, :class:`observer.Observer`). A statement that succeeded
was authorized for exactly what its audit rows say it read, wrote and changed (R36,
R37; :func:`assert_audited_as_analysed`).

Some sessions run as ANALYST, whose role R1 holds only what the seed and the generated
GRANTs give it, so that authorization refuses as well as allows (R37).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fuzz_grammar import REVIVE, Action, History, quoted
from observer import Observer, assert_r39
from sqlalchemy import select
from sqlalchemy.orm import Session

import rewind
from rewind.catalog.models import CatalogObject, StatementObject
from rewind.errors import RewindError
from rewind.statement import ALTER, CREATE, DATA_CHANGES, GRANT, MOVE, Analysis

T0 = datetime(2026, 3, 1, tzinfo=UTC)
SEED = """
CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR); CREATE TABLE U (ID INT);
CREATE SCHEMA S; CREATE TABLE S.T (ID INT); CREATE DATABASE E; USE D;
CREATE ROLE R1; CREATE USER ANALYST DEFAULT_ROLE = R1; GRANT ROLE R1 TO USER ANALYST;
GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE R1; GRANT CREATE TABLE ON SCHEMA D.PUBLIC TO ROLE R1
"""
SEED_ROWS = "INSERT INTO T VALUES (1, 'a'), (2, 'b'); INSERT INTO U VALUES (9)"


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Make a seeded run the same in every process. Hypothesis draws about one string and
    integer in twenty from the literals of every *local* module imported so far
    (``hypothesis.internal.conjecture.providers._get_local_constants``): the fuzz run on
    Spark drew other names and numbers in ``make test``'s worker, after 39 modules had
    imported most of Rewind, than alone (525 statements, 45 succeeding on Spark, against
    548 and 82 — found 2026-12-07 by diffing the two runs' statements). Inside, that pool
    is empty (Hypothesis's global constants stay), its cache cleared on entry and exit."""
    from hypothesis.internal.conjecture import providers

    saved = providers._get_local_constants
    providers._get_local_constants = providers.Constants
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


class SparkWork(BaseException):
    """Raised by a run without Spark where a statement would start Spark work. A
    BaseException, as an interrupt is: the statement rolls back and re-raises it as it
    is, never as one of its own errors."""


def _no_spark() -> Any:
    raise SparkWork


class Run:
    """One home, one session at a time, the statements run so far."""

    def __init__(self, home: Path, *, spark: bool) -> None:
        self.home = home
        self.spark = spark
        self.now = T0
        self.user = "ADMIN"
        self.spark_used = False  # by the current statement (a run with Spark)
        self.conn = self._connect()
        self.history = History()
        seed = SEED + (f"; {SEED_ROWS}" if spark else "")
        for result in self.conn.sql(seed):
            self.history.query_ids.append(result.query_id)
        self.history.instants.append(self.now)
        self.observer = Observer(home)
        self.counts: Counter[str] = Counter()
        self.recent: list[str] = []

    def _connect(self) -> Any:
        conn = rewind.connect(self.home, user=self.user, now=self.now)
        if not self.spark:
            conn.spark = _no_spark
        else:
            conn.spark = self._counted(conn.spark)
        return conn

    def _counted(self, spark: Callable[[], Any]) -> Callable[[], Any]:
        def counted() -> Any:
            self.spark_used = True
            return spark()

        return counted

    def advance(self, seconds: int, user: str) -> None:
        """A new session of ``user`` at a later clock, in the database and schema of the
        last one."""
        database, schema = self.conn.state.database, self.conn.state.schema
        self.conn.close()
        self.now += timedelta(seconds=seconds)
        self.user = user
        self.conn = self._connect()
        if database is not None and schema is not None:
            with contextlib.suppress(RewindError):  # dropped since, or not ANALYST's
                self.conn.run(f"USE SCHEMA {quoted(database)}.{quoted(schema)}")
        self.history.instants.append(self.now)

    def statement(self, action: Action) -> Any:
        if action.kind == "restore":
            table, flag, value = action.restore
            restored = self.conn.restore(table, **{flag: value})
            self.counts["restored"] += 1
            return restored
        analysis = self.analysis(action)
        newest = self.newest_object()
        result = self.conn.run(action.text, action.dialect)
        if analysis is not None:
            self.counts["audit checked"] += 1
            assert_audited_as_analysed(self.conn, analysis, result.query_id, newest, action.text)
        return result

    def analysis(self, action: Action) -> Analysis | None:
        """The statement's analysis, as it will run (None: it fails before its analysis)."""
        try:
            return self.conn.analyse(action.text, action.dialect)
        except RewindError:
            return None

    def newest_object(self) -> int:
        return int(self.observer.db.execute("SELECT max(id) FROM objects").fetchone()[0] or 0)

    def step(self, action: Action) -> None:
        """Run one action; a failed statement must be a RewindError that changed nothing."""
        if action.kind == "clock":
            self.advance(action.seconds, action.user)
            return
        if action.kind == "revive":
            if self.user != "ADMIN":
                self.advance(0, "ADMIN")
            for text in REVIVE:
                self.step(Action("sql", text))
            return
        shown = action.text or f"RESTORE {action.restore}"
        self.recent = [*self.recent[-4:], f"{self.user}: {shown}"]
        before = self.observer.state()
        self.counts["statements"] += 1
        self.spark_used = False
        try:
            result = self.statement(action)
        except SparkWork:
            self.counts["stopped at Spark"] += 1
            assert self.observer.state().changes(before) == {}, (self.recent, "stopped at Spark")
            return
        except RewindError as error:
            self.counts[error.code] += 1
            self.counts["FAILED on Spark"] += self.spark_used
            assert_r39(error, error.code)
            assert error.code != "INTERNAL_ERROR", (self.recent, error)
            assert self.observer.state().changes(before) == {}, (self.recent, error)
            return
        except Exception as exc:  # the point: nothing but a RewindError reaches a user
            pytest.fail(f"{type(exc).__name__}: {exc} after {self.recent!r}")
        self.counts["SUCCESS"] += 1
        self.counts["SUCCESS on Spark"] += self.spark_used
        self.counts[f"SUCCESS as {self.user}"] += 1
        self.history.query_ids.append(result.query_id)

    def close(self) -> None:
        self.conn.close()
        self.observer.close()

    def errors(self) -> set[str]:
        """The error codes the run met."""
        return {k for k in self.counts if k.isupper() and k != "SUCCESS" and " " not in k}


def assert_audited_as_analysed(
    conn: Any, analysis: Analysis, query_id: str, newest_before: int, text: str
) -> None:
    """What the statement was authorized for (its analysis) is exactly what its audit rows
    say it read, wrote and changed by DDL (SPEC R36, R37).

    Reads: every resolved table reference, the object CLONE copies and the rows an
    UPDATE, DELETE or MERGE rewrites are its direct READ rows; a container clone's tables
    (checked one by one as the clone takes them) are base-only READ rows under the
    container. Writes: the table of each row change is its data WRITE rows' table. DDL:
    what it replaces, drops, alters or swaps are the DDL rows of objects that existed
    before; a CREATE made one new object in the container it was authorized on (or,
    IF NOT EXISTS, nothing). UNDROP finds its incarnation as it runs and checks it
    there (SPEC R37), so its one DDL row is the check.
    """
    with Session(conn.engine) as session:
        rows = list(
            session.scalars(select(StatementObject).where(StatementObject.query_id == query_id))
        )
        pairs = session.execute(select(CatalogObject.id, CatalogObject.parent_id)).all()
        parents: dict[int, int | None] = {i: p for i, p in pairs}
    audit = [(r.access, r.operation, r.object_id, r.direct) for r in rows]
    shown = f"{text!r}: analysis {analysis}, audit {audit}"
    verb = text.lstrip().split(maxsplit=1)[0].upper() if text.strip() else ""
    if verb == "UNDROP":
        assert [(r.access, r.operation) for r in rows] == [("DDL", "UNDROP")], shown
        return
    if verb == "CREATE" and not rows and "IF NOT EXISTS" in " ".join(text.upper().split()):
        return  # it existed: authorized to create it, the statement did nothing
    reads = {r.object_id for r in analysis.reads if r.object_id is not None}
    writes = {c.object_id for c in analysis.changes if c.operation in DATA_CHANGES}
    rewritten = {r.object_id for r in analysis.references if r.target and r.object_id}
    if verb in ("UPDATE", "DELETE", "MERGE"):
        reads |= rewritten  # its rows, read to rewrite them (needs no SELECT, as in Snowflake)
    source = analysis.clone_source.object_id if analysis.clone_source else None
    if source is not None:
        reads.add(source)
    assert {r.object_id for r in rows if r.access == "READ" and r.direct} == reads, shown
    for row in rows:
        if row.access == "READ" and not row.direct:
            assert source is not None and _under(row.object_id, source, parents), shown
    # A DDL statement may commit a Delta version of its own (the table's first, a new
    # column's schema, R42's guard properties): written as a version, not as data.
    versions = [r for r in rows if r.access == "WRITE" and r.operation in DDL_VERSIONS]
    data_writes = {r.object_id for r in rows if r.access == "WRITE" and r not in versions}
    assert data_writes == writes, shown
    changed = {c.object_id for c in analysis.changes if c.operation in (CREATE, ALTER)}
    for row in versions:
        assert row.operation == "CREATE" or any(
            row.object_id == c or _under(row.object_id, c, parents) for c in changed if c
        ), shown
    existing = {
        c.object_id
        for c in analysis.changes
        if c.object_id is not None and c.operation not in (*DATA_CHANGES, GRANT, MOVE)
    }
    ddl = [r for r in rows if r.access == "DDL"]
    assert {r.object_id for r in ddl if r.object_id <= newest_before} == existing, shown
    created = {r.object_id for r in ddl if r.object_id > newest_before}
    expected = [c.parent_id or None for c in analysis.changes if c.operation == CREATE]
    assert [parents[i] or None for i in created] == expected, shown


DDL_VERSIONS = ("CREATE", "ADD COLUMN", "SET TBLPROPERTIES")  # sql/tables.py's operations


def _under(object_id: int, container: int, parents: dict[int, int | None]) -> bool:
    while object_id:
        object_id = parents.get(object_id) or 0
        if object_id == container:
            return True
    return False
