"""Fuzzing the SQL front (issue 6; SPEC R28, R39, with R4, R5, R17, R27).

Hypothesis generates statements from the supported grammar (fuzz_grammar.py): random
and hostile names, valid and absurd values and points, the BigQuery dialect, token
soup; with the clock moving forward between them (it may not run backwards, R15). They
run one after another on one warehouse, and after every statement either it succeeded
or it raised a RewindError with a stable code and one line (R39) — never another
exception — and a failed statement changed nothing: every catalog row and the listing
of the warehouse, fail-safe and system stores are compared before and after (R28).
And what each successful statement was authorized for is what its audit rows say it
read, wrote and changed (R36, R37; issue 15): the statement's analysis, from which it is
authorized, against the ACCESS_HISTORY rows the code that ran it recorded.

Reproducible (``derandomize``, no example database) and fast: one warehouse and one
Spark session for all examples; most statements are catalog-only. No shrinking: the
examples share the warehouse, so a smaller example would not replay the failure; the
failure message names the statement and the ones before it instead. That the
before/after comparison sees a change is tested with the Observer (test_hostile_input).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fuzz_grammar import REVIVE, Action, History, actions, quoted
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from test_hostile_input import Observer, assert_r39

import rewind
from rewind.catalog.models import CatalogObject, StatementObject
from rewind.errors import RewindError
from rewind.statement import ALTER, CREATE, DATA_CHANGES, GRANT, MOVE, Analysis

pytestmark = pytest.mark.spark

EXAMPLES, ACTIONS_PER_EXAMPLE = 110, 25
MIN_STATEMENTS = 3000
T0 = datetime(2026, 3, 1, tzinfo=UTC)
SEED = """
CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR); CREATE TABLE U (ID INT);
CREATE SCHEMA S; CREATE TABLE S.T (ID INT); CREATE DATABASE E; USE D;
INSERT INTO T VALUES (1, 'a'), (2, 'b'); INSERT INTO U VALUES (9)
"""


class Run:
    """One warehouse, one session, the statements run so far."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.now = T0
        self.conn = rewind.connect(home, now=self.now)
        self.history = History()
        for result in self.conn.sql(SEED):
            self.history.query_ids.append(result.query_id)
        self.history.instants.append(self.now)
        self.observer = Observer(home)
        self.counts: Counter[str] = Counter()
        self.recent: list[str] = []

    def advance(self, seconds: int) -> None:
        """A new session at a later clock, in the database and schema of the last one."""
        database, schema = self.conn.state.database, self.conn.state.schema
        self.conn.close()
        self.now += timedelta(seconds=seconds)
        self.conn = rewind.connect(self.home, now=self.now)
        if database is not None and schema is not None:
            with contextlib.suppress(RewindError):  # dropped since: no current schema
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
        with Session(self.conn.engine) as session:
            return session.scalar(select(func.max(CatalogObject.id))) or 0

    def step(self, action: Action) -> None:
        """Run one action; a failed statement must be a RewindError that changed nothing."""
        if action.kind == "clock":
            self.advance(action.seconds)
            return
        if action.kind == "revive":
            for text in REVIVE:
                self.step(Action("sql", text))
            return
        shown = action.text or f"RESTORE {action.restore}"
        self.recent = [*self.recent[-4:], shown]
        before = self.observer.state()
        self.counts["statements"] += 1
        try:
            result = self.statement(action)
        except RewindError as error:
            self.counts[error.code] += 1
            assert_r39(error, error.code)
            assert error.code != "INTERNAL_ERROR", (self.recent, error)
            assert self.observer.state().changes(before) == {}, (self.recent, error)
            return
        except Exception as exc:  # the point: nothing but a RewindError reaches a user
            pytest.fail(f"{type(exc).__name__}: {exc} after {self.recent!r}")
        self.counts["SUCCESS"] += 1
        self.history.query_ids.append(result.query_id)

    def close(self) -> None:
        self.conn.close()
        self.observer.close()


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


def test_generated_statements_fail_cleanly_or_succeed(tmp_path: Path, spark: Any) -> None:
    """SPEC R28, R39: at least 3,000 generated statements from the whole grammar the
    README lists, each one a success or a RewindError with a stable code that changed
    nothing (about 2.5 min on 2 cores)."""
    run = Run(tmp_path / "home")
    action = actions(run.history)
    started = time.monotonic()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def examples(data: st.DataObject) -> None:
        for _ in range(ACTIONS_PER_EXAMPLE):
            run.step(data.draw(action, label="action"))

    try:
        examples()
    finally:
        run.close()
    elapsed = time.monotonic() - started
    print(f"\n{run.counts['statements']} statements in {elapsed:.0f} s: {dict(run.counts)}")
    assert run.counts["statements"] >= MIN_STATEMENTS
    # The grammar reaches both outcomes in bulk: successes, and failures of many kinds.
    assert run.counts["SUCCESS"] >= MIN_STATEMENTS // 10
    assert len(set(run.counts) - {"statements", "SUCCESS", "audit checked", "restored"}) >= 8
    assert run.counts["audit checked"] == run.counts["SUCCESS"] - run.counts["restored"]
