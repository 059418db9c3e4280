"""A failing statement leaves nothing behind (SPEC R28), and a clock that runs
behind a table's last commit cannot write history out of order (SPEC R14, R15).

"Nothing" is what anyone could look at: every file and directory of the home
(with its bytes: warehouse, fail-safe store, ...), the Delta version, the catalog
(objects, version timeline, ...) and what queries return.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from test_dml import catalog, open_at, query, table_root

from rewind.clock import Clock
from rewind.errors import RewindError

pytestmark = pytest.mark.spark


# The statement log records the failure itself (SPEC R36); every other catalog table
# (objects, the version timeline, names, clone files, ...) must be as before.
LOG_TABLES = {"statements", "statement_objects"}
# Not compared byte by byte: the catalog file and its journal (compared table by table)
# and Spark's own log.
NOT_FILES = ("catalog.db", "logs")


def observe(home: Path, conn: Any) -> dict[str, Any]:
    """Everything a failed statement could have left behind."""
    return {
        "files": {
            str(path.relative_to(home)): (
                "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
            )
            for path in home.rglob("*")
            if not path.relative_to(home).parts[0].startswith(NOT_FILES)
        },
        "version": DeltaTable(str(table_root(home, "T"))).version(),
        "catalog": {
            table: sorted(catalog(home, f"SELECT * FROM {table}"), key=repr)
            for (table,) in catalog(home, "SELECT name FROM sqlite_master WHERE type = 'table'")
            if table not in LOG_TABLES
        },
        "rows": query(conn, "SELECT * FROM T ORDER BY ID"),
        "tables": query(conn, "SHOW TABLES"),
    }


def refuse(home: Path, conn: Any, statement: str) -> tuple[RewindError, dict[str, Any]]:
    """Run a statement that must fail; return its error and the state after it."""
    with pytest.raises(RewindError) as raised:
        conn.sql(statement)
    return raised.value, observe(home, conn)


@pytest.mark.parametrize(
    "statement",
    [
        pytest.param("INSERT INTO T (ID) VALUES ('abc')", id="insert-bad-cast"),
        pytest.param("INSERT INTO T (ID, V) VALUES (3)", id="insert-column-count"),
        pytest.param("INSERT INTO T SELECT * FROM T AT(OFFSET => 60)", id="insert-future-point"),
        pytest.param("UPDATE T SET NOPE = 1", id="update-unknown-column"),
        pytest.param("UPDATE T SET ID = 'x' WHERE ID = 1", id="update-fails-while-writing"),
        pytest.param("DELETE FROM T WHERE NOPE = 1", id="delete-unknown-column"),
        pytest.param(
            "MERGE INTO T USING (SELECT 1 AS ID UNION ALL SELECT 1 AS ID) S ON T.ID = S.ID "
            "WHEN MATCHED THEN UPDATE SET V = 'x'",
            id="merge-ambiguous-source",
        ),
        pytest.param("CREATE TABLE C AS SELECT CAST('x' AS INT) AS Y", id="ctas-select-fails"),
        pytest.param(
            "CREATE OR REPLACE TABLE T AS SELECT 1 / 0 AS Y", id="replace-ctas-select-fails"
        ),
        # The second column fails after the first made a Delta version.
        pytest.param("ALTER TABLE T ADD COLUMN W INT, W VARCHAR", id="add-columns-second-fails"),
        # The second table fails after the first one's truncation was committed.
        pytest.param("TRUNCATE TABLE T, NOPE", id="truncate-second-table-missing"),
    ],
)
def test_a_failing_statement_leaves_nothing_behind(conn: Any, home: Path, statement: str) -> None:
    # SPEC R28; R39: a stable code, and the statement is still logged as failed (R36).
    before = observe(home, conn)

    error, after = refuse(home, conn, statement)

    assert error.code != "INTERNAL_ERROR"
    assert after == before
    assert catalog(home, "SELECT status, error_code FROM statements WHERE text = ?", statement) == [
        ("FAILED", error.code)
    ]
    conn.sql("INSERT INTO T VALUES (3, 'c')")  # history goes on from where it was
    assert observe(home, conn)["version"] == before["version"] + 1
    assert query(conn, "SELECT ID FROM T ORDER BY ID") == [(1,), (2,), (3,)]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO T VALUES (3, 'c')",
        "UPDATE T SET V = 'x' WHERE ID = 1",
        "DELETE FROM T WHERE ID = 1",
        "TRUNCATE TABLE T",
        "ALTER TABLE T ADD COLUMN W INT",
        "MERGE INTO T USING (SELECT 1 AS ID) S ON T.ID = S.ID WHEN MATCHED THEN DELETE",
    ],
)
def test_a_clock_behind_the_last_commit_cannot_write(
    conn: Any, connect: Callable[..., Any], home: Path, statement: str
) -> None:
    # SPEC R14, R15: commit times of a table never go backwards; R28: nothing changes.
    earlier = open_at(connect, minutes=-1)
    before = observe(home, earlier)

    error, after = refuse(home, earlier, statement)

    assert error.code == "CLOCK_BEHIND"
    assert after == before


@dataclass(frozen=True)
class Ticking(Clock):
    """The system clock (``fixed`` None) as a test drives it: ``times`` in turn."""

    times: Iterator[datetime] = field(default_factory=lambda: iter(()))

    def now(self) -> datetime:
        return next(self.times)


def test_a_statement_overtaken_by_another_writer_commits_at_a_later_time(
    connect: Callable[..., Any], home: Path
) -> None:
    """SPEC R14, R15, R40: on the system clock, a statement that another engine's commit
    overtook while it ran (that commit is later than the statement's time) is not refused
    with CLOCK_BEHIND: it commits at the clock's time, after that commit. A fixed clock
    stays the caller's (the test above)."""
    start = datetime.now(UTC).replace(microsecond=0)
    conn = connect(now=start.isoformat())
    conn.sql("CREATE DATABASE D; CREATE TABLE T (ID INT); INSERT INTO T VALUES (1)")
    root = table_root(home, "T")
    DeltaTable(str(root)).alter.set_table_properties({"team.owner": "ops"}, False)
    theirs = start + timedelta(seconds=30)  # another engine's commit, by its file's time
    commit = root / "_delta_log" / f"{DeltaTable(str(root)).version():020d}.json"
    os.utime(commit, (theirs.timestamp(), theirs.timestamp()))
    later = start + timedelta(seconds=40)
    ticks = itertools.chain([start + timedelta(seconds=10)], itertools.repeat(later))
    conn.clock = Ticking(times=ticks)

    conn.sql("INSERT INTO D.PUBLIC.T VALUES (2)")

    assert query(conn, "SELECT ID FROM D.PUBLIC.T ORDER BY ID") == [(1,), (2,)]
    committed = catalog(
        home,
        "SELECT commit_time FROM table_versions WHERE table_id = ? ORDER BY version",
        int(root.name),
    )
    assert [datetime.fromisoformat(t).astimezone(UTC) for (t,) in committed[-2:]] == [
        theirs,
        later,
    ]
