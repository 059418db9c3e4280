"""Hostile input (issue 6): every one gets its R39 error and changes nothing (R28).

Names with quotes, dots, ``..``, slashes, NUL and emoji (SPEC R4); SQL injection through
names and string literals; absurd numbers and points in time (R5, R7, R17, R27); broken
Delta logs and data files; a catalog that is locked or read-only; a home that cannot be
written. Each is refused with a stable code and one line naming the object and the
reason (R39), and leaves the catalog, the warehouse and the fail-safe store exactly as
they were: :class:`Observer` (tests/observer.py) compares every catalog row and the
listing of ``warehouse/``, ``failsafe/`` and ``system/`` (sizes and mtimes) before and
after. The fail-safe read test reuses the warehouse of :func:`build_world`, which holds
data in fail-safe; the fuzzers (tests/fuzz_run.py) reuse the Observer.

The tests run as root, for whom file modes are no barrier: read-only files and
directories are made with ``chattr +i`` (immutable, refused even to root) and, for the
CLI, with a read-only bind mount in a private mount namespace (``unshare -m``).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from observer import Observer, assert_r39

import rewind
from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import RewindError
from rewind.home import MARKER
from rewind.runner import run_lifecycle

# One worker for the module: its module fixtures are built once.
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("test_hostile_input")]

DAY = "2026-02-{:02d}T{:02d}:00:00+00:00"


def at(day: int, hour: int = 0) -> str:
    return DAY.format(day, hour)


# -- what a failed statement must leave as it was (tests/observer.py) ------------------------
def refuse(
    conn: Any,
    observer: Observer,
    statement: str,
    code: str,
    *named: str,
    dialect: str = "snowflake",
) -> RewindError:
    """Run a statement that must fail with ``code``; it must change nothing (SPEC R28)."""
    before = observer.state()
    with pytest.raises(RewindError) as raised:
        conn.sql(statement, dialect)
    assert observer.state().changes(before) == {}, statement
    assert_r39(raised.value, code, *named)
    return raised.value


def rows(conn: Any, statement: str) -> list[list[Any]]:
    return conn.sql(statement)[-1].rows


def quoted(name: str) -> str:
    """A Snowflake quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A Snowflake string literal (backslash is an escape character there)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


# -- a warehouse with history and data in fail-safe ---------------------------------------------
@dataclass
class World:
    """D.PUBLIC.T: row 1 inserted on day 1 at 01:00 (query ``insert_1``), row 2 at 02:00
    (``insert_2``), row 1 deleted on day 2 (``delete_1``); D.PUBLIC.U: one row (9);
    D.PUBLIC.GONE dropped on day 2. With 1 day of retention, the lifecycle of day 4
    moved GONE's file and T's deleted file into fail-safe (SPEC R12). Then D's retention
    was raised to 30 days, which never brings fail-safe data back (R9): points of day 1
    are inside T's window again, yet they name a file that only fail-safe holds."""

    home: Path
    queries: dict[str, str] = field(default_factory=dict)
    opened: list[Any] = field(default_factory=list)

    def connect(self, day: int = 4, hour: int = 1, user: str | None = None) -> Any:
        conn = rewind.connect(self.home, user=user, now=at(day, hour))
        self.opened.append(conn)
        return conn

    def table_id(self, name: str, dropped: bool = False) -> int:
        with closing(sqlite3.connect(self.home / "catalog.db")) as db:
            ((table_id,),) = db.execute(
                "SELECT id FROM objects WHERE kind = 'TABLE' AND name = ? AND "
                f"dropped_on IS {'NOT ' if dropped else ''}NULL",
                (name,),
            ).fetchall()
        return int(table_id)

    def failsafe_files(self) -> list[Path]:
        """The fail-safe store's files of tables (the catalog's marker left out)."""
        return sorted(
            p for p in (self.home / "failsafe").rglob("*") if p.is_file() and p.name != MARKER
        )

    def close(self) -> None:
        for conn in self.opened:
            conn.close()


def build_world(home: Path) -> World:
    """Build the :class:`World` in ``home`` (one lifecycle run: ~10 s with Spark)."""
    world = World(home)

    def run(day: int, hour: int, statement: str) -> str:
        return world.connect(day, hour).sql(statement)[-1].query_id

    run(1, 0, "CREATE DATABASE D; CREATE TABLE T (ID INT, V VARCHAR); CREATE TABLE GONE (ID INT)")
    run(1, 0, "CREATE TABLE D.PUBLIC.U (ID INT); INSERT INTO D.PUBLIC.U VALUES (9)")
    run(1, 0, "INSERT INTO D.PUBLIC.GONE VALUES (7)")
    world.queries["insert_1"] = run(1, 1, "INSERT INTO D.PUBLIC.T VALUES (1, 'a')")
    world.queries["insert_2"] = run(1, 2, "INSERT INTO D.PUBLIC.T VALUES (2, 'b')")
    world.queries["delete_1"] = run(2, 0, "DELETE FROM D.PUBLIC.T WHERE ID = 1")
    run(2, 0, "DROP TABLE D.PUBLIC.GONE")
    run_lifecycle(Config.load(home=home), parse_timestamp(at(4)))
    run(4, 0, "ALTER DATABASE D SET DATA_RETENTION_TIME_IN_DAYS = 30")
    assert len(world.failsafe_files()) == 2  # GONE's file and T's deleted one
    return world


def prepared_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The home and query ids of :func:`build_world`, built once for the test session: by
    the first module that asks, on whichever xdist worker; the others wait for it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's, shared by its workers
    built = root / "hostile-world"
    with open(root / "hostile-world.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (built / "queries.json").exists():
            shutil.rmtree(built, ignore_errors=True)
            world = build_world(built / "home")
            world.close()
            (built / "queries.json").write_text(json.dumps(world.queries))
    return built / "home", json.loads((built / "queries.json").read_text())


def copy_world(tmp_path_factory: pytest.TempPathFactory, name: str) -> World:
    """A :class:`World` of the module's own: a copy of the prepared one (table locations
    derive from ids under the home, so a copied home is a home)."""
    home, queries = prepared_world(tmp_path_factory)
    copy = tmp_path_factory.mktemp(name) / "home"
    shutil.copytree(home, copy, symlinks=True)
    return World(copy, queries)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Iterator[World]:
    built = copy_world(tmp_path_factory, "hostile")
    yield built
    built.close()


@pytest.fixture(scope="module")
def session(world: World) -> Any:
    """A session on D.PUBLIC on day 4; refused statements leave its USE as it was."""
    conn = world.connect()
    conn.sql("USE D")
    return conn


@pytest.fixture
def immutable() -> Iterator[Callable[[Path], None]]:
    """``immutable(path)``: ``chattr +i`` until the test ends (refused even to root)."""
    made: list[Path] = []

    def _set(path: Path) -> None:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"chattr +i is not possible here: {done.stderr.strip()}")
        made.append(path)

    if shutil.which("chattr") is None:
        pytest.skip("chattr (e2fsprogs) is not installed: no way to make a file read-only to root")
    yield _set
    for path in reversed(made):
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_the_observer_sees_every_kind_of_change(world: World, observer: Observer) -> None:
    """The before/after comparison can fail: a catalog row, a new, a longer or a
    rewritten file, a new directory — in any of the three stores — each shows."""
    (data, *_) = sorted((world.home / "warehouse").rglob("*.parquet"))
    (held, *_) = world.failsafe_files()
    changes: list[Callable[[], object]] = [
        lambda: (world.home / "system" / "stray").mkdir(parents=True),
        lambda: (world.home / "warehouse" / "stray.parquet").write_bytes(b"x"),
        lambda: os.truncate(held, held.stat().st_size + 1),
        lambda: os.utime(data, ns=(0, data.stat().st_mtime_ns + 1)),
    ]
    for change in changes:
        before = observer.state()
        change()
        assert observer.state().changes(before)
    before = observer.state()
    with closing(sqlite3.connect(world.home / "catalog.db")) as db, db:
        db.execute("UPDATE objects SET comment = 'x' WHERE name = 'U'")
    assert list(observer.state().changes(before)) == ["catalog"]
    with closing(sqlite3.connect(world.home / "catalog.db")) as db, db:
        db.execute("UPDATE objects SET comment = NULL WHERE name = 'U'")
    (world.home / "system" / "stray").rmdir()
    (world.home / "warehouse" / "stray.parquet").unlink()
    os.truncate(held, held.stat().st_size - 1)


# -- names (SPEC R4) ----------------------------------------------------------------------------
HOSTILE_NAMES = [
    "a/../b",
    'x"y',
    "..",
    ".",
    "/etc/passwd",
    "../../../outside",
    "a.b",
    "🦀 ünï ✓",
    "tab\tnew\nline",
    "it's",
    "x; DROP DATABASE D; --",
    " ",
    "back\\slash",
    "%_*?[",
    "`spark`",
]


def paths_under(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_is_only_a_name(world: World, name: str) -> None:
    """SPEC R4: a quoted name keeps every character, and storage locations derive from
    ids, so no name reaches outside the warehouse (or anywhere but ``warehouse/<id>``)."""
    around = world.home.parent
    before = paths_under(around)
    q, text = quoted(name), literal(name)
    conn = world.connect()
    conn.sql(
        f"CREATE DATABASE {q}; CREATE SCHEMA {q}.{q}; "
        f"CREATE TABLE {q}.{q}.{q} ({q} VARCHAR) COMMENT = {text}; "
        f"INSERT INTO {q}.{q}.{q} VALUES ({text})"
    )

    assert rows(conn, f"SELECT {q} FROM {q}.{q}.{q}") == [[name]]
    shown = conn.sql(f"SHOW TABLES IN SCHEMA {q}.{q}")[0]
    assert (shown.column("name"), shown.column("comment")) == ([name], [name])
    created = {p.relative_to(world.home).parts for p in paths_under(around) - before}
    assert all(
        p[0] in ("warehouse", "logs", "pins") or p[0].startswith("catalog.db") for p in created
    )
    assert {p[1] for p in created if p[0] == "warehouse" and len(p) > 1} == {
        str(world.table_id(name))
    }
    conn.sql(f"DROP DATABASE {q}")


@pytest.mark.parametrize(
    ("statement", "code", "named"),
    [
        pytest.param('CREATE TABLE "" (A INT)', "INVALID_VALUE", "''", id="empty"),
        pytest.param('CREATE TABLE "\x00" (A INT)', "INVALID_VALUE", "\\x00", id="nul"),
        pytest.param('CREATE TABLE "a\x00b" (A INT)', "INVALID_VALUE", "\\x00", id="nul-inside"),
        pytest.param('CREATE DATABASE "\x00"', "INVALID_VALUE", "\\x00", id="nul-database"),
        pytest.param('CREATE TABLE T2 ("\x00" INT)', "INVALID_VALUE", "\\x00", id="nul-column"),
        pytest.param(f'CREATE TABLE "{"n" * 256}" (A INT)', "INVALID_VALUE", "nnn", id="256"),
        pytest.param('CREATE TABLE R ("__rw_file" INT)', "INVALID_VALUE", "__rw_file", id="ours"),
        pytest.param("CREATE TABLE A.B.C.D (X INT)", "INVALID_VALUE", "A.B.C.D", id="four-parts"),
        pytest.param('SELECT * FROM "U; DROP DATABASE D"', "OBJECT_NOT_FOUND", "DROP", id="inj"),
        pytest.param('SELECT * FROM D.PUBLIC."U\'); DROP TABLE U; --"', "OBJECT_NOT_FOUND", "U'"),
        pytest.param('DROP TABLE "u"', "OBJECT_NOT_FOUND", '"u"', id="case-kept"),
        pytest.param("\x00", "SYNTAX_ERROR", "", id="nul-statement"),
        pytest.param("SELECT " + "(" * 300 + "1" + ")" * 300, "SYNTAX_ERROR", "deeply", id="deep"),
    ],
)
def test_invalid_names_are_refused(
    session: Any, observer: Observer, statement: str, code: str, named: str
) -> None:
    # SPEC R4, R39: NUL, empty and over-long names, Rewind's own column names (UPDATE and
    # DELETE work with a __rw_file column), injection through quoted names.
    refuse(session, observer, statement, code, named)


def test_injection_through_string_literals_stays_data(world: World) -> None:
    """SPEC R4, R39: literals are data, whatever they contain; nothing else is touched."""
    payloads = ["'); DROP DATABASE D; --", "\\'); DROP TABLE U; --", "`; DROP TABLE U; --", '"']
    conn = world.connect()
    conn.sql(f"USE D; CREATE TABLE INJ (V VARCHAR) COMMENT = {literal(payloads[0])}")
    conn.sql(f"INSERT INTO INJ VALUES {', '.join(f'({literal(p)})' for p in payloads)}")

    assert sorted(r[0] for r in rows(conn, "SELECT V FROM INJ")) == sorted(payloads)
    assert conn.sql("SHOW TABLES LIKE 'INJ'")[0].column("comment") == [payloads[0]]
    assert rows(conn, f"SELECT 1 AS {quoted(payloads[2])}") == [[1]]
    assert conn.sql(f"SELECT 1 AS {quoted(payloads[2])}")[0].columns == [payloads[2]]
    assert rows(conn, "SELECT ID FROM D.PUBLIC.U") == [[9]]
    assert [r[1] for r in rows(conn, "SHOW DATABASES")] == ["D"]
    conn.sql("DROP TABLE INJ")


def test_a_table_made_from_itself(world: World, observer: Observer) -> None:
    """Found by the fuzz test (was INTERNAL_ERROR "table has no versions"): the query of
    a CTAS never reads the table it creates; OR REPLACE reads the old one (SPEC R20)."""
    conn = world.connect()
    conn.sql("USE D")
    refuse(conn, observer, "CREATE TABLE SELF AS SELECT * FROM SELF", "OBJECT_NOT_FOUND", "SELF")
    conn.sql("CREATE TABLE SELF (ID INT); INSERT INTO SELF VALUES (1)")
    conn.sql("CREATE OR REPLACE TABLE SELF AS SELECT ID + 1 AS ID FROM SELF")
    assert rows(conn, "SELECT ID FROM SELF") == [[2]]
    conn.sql("DROP TABLE SELF")


# -- absurd numbers and points (SPEC R5, R7, R17, R27) -------------------------------------------
RETENTION, VALUE, UNAVAILABLE = "INVALID_RETENTION", "INVALID_VALUE", "TIME_TRAVEL_UNAVAILABLE"
R_TABLE = "CREATE TABLE R (A INT) DATA_RETENTION_TIME_IN_DAYS"
ABSURD = [
    (f"{R_TABLE} = -1", RETENTION, ("D.PUBLIC.R", "0..90")),
    (f"{R_TABLE} = 91", RETENTION, ("D.PUBLIC.R", "0..90")),
    (f"{R_TABLE} = 100000000000000000000", RETENTION, ("100000000000000000000",)),
    (f"{R_TABLE} = 1.5", RETENTION, ("1.5", "integer")),
    (f"{R_TABLE} = 'abc'", RETENTION, ("'abc'",)),
    (f"{R_TABLE} = NULL", RETENTION, ("NULL",)),
    ("CREATE TRANSIENT TABLE R (A INT) DATA_RETENTION_TIME_IN_DAYS = 2", RETENTION, ("0..1",)),
    ("CREATE DATABASE R DATA_RETENTION_TIME_IN_DAYS = -1", RETENTION, ("database R",)),
    ("ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 91", RETENTION, ("the account",)),
    ("ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = -1", RETENTION, ("the account",)),
    ("ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 1e400", RETENTION, ("the account",)),
    ("ALTER DATABASE D SET DATA_RETENTION_TIME_IN_DAYS = 10000000000", RETENTION, ("database D",)),
    ("ALTER SCHEMA D.PUBLIC SET DATA_RETENTION_TIME_IN_DAYS = -5", RETENTION, ("D.PUBLIC",)),
    ("ALTER TABLE U SET DATA_RETENTION_TIME_IN_DAYS = 91", RETENTION, ("D.PUBLIC.U",)),
    ("SELECT * FROM T AT(OFFSET => 60)", UNAVAILABLE, ("D.PUBLIC.T", "future")),
    ("SELECT * FROM T AT(OFFSET => -99999999999999999999)", VALUE, ("out of range",)),
    ("SELECT * FROM T AT(OFFSET => 1e400)", VALUE, ("out of range",)),
    ("SELECT * FROM T AT(OFFSET => -1e400)", VALUE, ("out of range",)),
    ("SELECT * FROM T AT(OFFSET => 'abc')", VALUE, ("'abc'",)),
    ("SELECT * FROM T AT(OFFSET => NULL)", VALUE, ("NULL",)),
    ("SELECT * FROM T AT(OFFSET => 1/0)", VALUE, ("1 / 0",)),
    ("SELECT * FROM T AT(TIMESTAMP => '0000-01-01')", VALUE, ("0000-01-01",)),
    ("SELECT * FROM T AT(TIMESTAMP => '0001-01-01')", UNAVAILABLE, ("D.PUBLIC.T", "0001-01-01")),
    ("SELECT * FROM T AT(TIMESTAMP => '9999-12-31 23:59:59')", UNAVAILABLE, ("future",)),
    ("SELECT * FROM T BEFORE(TIMESTAMP => 'garbage')", VALUE, ("garbage",)),
    ("SELECT * FROM T AT(TIMESTAMP => '2026-13-45')", VALUE, ("2026-13-45",)),
    ("SELECT * FROM T AT(TIMESTAMP => NULL)", VALUE, ("NULL",)),
    # Spark computes years that Python cannot hold (was INTERNAL_ERROR: OverflowError).
    (
        "SELECT * FROM T AT(TIMESTAMP => CAST('9999-12-31' AS TIMESTAMP) + INTERVAL '1 day')",
        VALUE,
        ("out of range",),
    ),
    ("SELECT * FROM T AT(TIMESTAMP => DATEADD(year, -5000, CURRENT_TIMESTAMP()))", VALUE, ()),
    ("SELECT * FROM T AT(STATEMENT => 'not-a-uuid')", "UNKNOWN_STATEMENT", ("not-a-uuid",)),
    (
        "SELECT * FROM T AT(STATEMENT => '00000000-0000-0000-0000-000000000000')",
        "UNKNOWN_STATEMENT",
        ("00000000-0000-0000-0000-000000000000",),
    ),
    ("SELECT * FROM T BEFORE(STATEMENT => 5)", VALUE, ("query id",)),
    ("SELECT * FROM T AT(STATEMENT => NULL)", VALUE, ("query id",)),
    # was SYNTAX_ERROR in Spark's words: "Sampling fraction (2.0) must be on interval [0, 1]"
    ("SELECT * FROM T SAMPLE (200)", VALUE, ("SAMPLE (200)", "0 to 100")),
]


@pytest.mark.parametrize(("statement", "code", "named"), ABSURD)
def test_absurd_values_are_refused(
    session: Any, observer: Observer, statement: str, code: str, named: tuple[str, ...]
) -> None:
    # SPEC R5, R7 (retention -1, 91, 10^20, 1.5, 'abc'; transient 2; minimum 91), R17
    # (points in the future, before creation, malformed; unknown statements), R39.
    refuse(session, observer, statement, code, *named)


@pytest.mark.parametrize(
    ("statement", "code", "named"),
    [
        ("CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T@-99999999999999999999", "INVALID_VALUE", ""),
        # was a raw OSError (EOVERFLOW) from datetime.fromtimestamp, no RewindError
        ("CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T@99999999999999999999", "INVALID_VALUE", "@9"),
        ("CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T@0", "TIME_TRAVEL_UNAVAILABLE", "D.PUBLIC.T"),
        (
            "SELECT * FROM D.PUBLIC.T FOR SYSTEM_TIME AS OF '9999-12-31'",
            "TIME_TRAVEL_UNAVAILABLE",
            "future",
        ),
        ("SELECT * FROM D.PUBLIC.T FOR SYSTEM_TIME AS OF 'x'", "INVALID_VALUE", "'x'"),
        *[
            (
                f"ALTER SCHEMA D.PUBLIC SET OPTIONS (max_time_travel_hours = {hours})",
                "INVALID_RETENTION",
                "max_time_travel_hours",
            )
            for hours in ("47", "169", "50", "-24", "'abc'", "1e400")
        ],
    ],
)
def test_absurd_bigquery_values_are_refused(
    session: Any, observer: Observer, statement: str, code: str, named: str
) -> None:
    # SPEC R27: decorators beyond year 9999, windows outside 48..168 hours; R39.
    refuse(session, observer, statement, code, named, dialect="bigquery")


# -- broken Delta logs and data files -----------------------------------------------------------
def _commits(root: Path) -> list[Path]:
    return sorted((root / "_delta_log").glob("*.json"))


def _data(root: Path) -> list[Path]:
    return sorted(root.glob("*.parquet"))


BREAK: dict[str, Callable[[Path], None]] = {
    "log-truncated": lambda root: os.truncate(_commits(root)[-1], 20),
    "log-garbage": lambda root: _commits(root)[-1].write_bytes(b"\x00\xff{{ not json"),
    "log-first-garbage": lambda root: _commits(root)[0].write_bytes(b"\x00\xff{{ not json"),
    "log-commit-missing": lambda root: _commits(root)[-1].unlink(),
    "data-truncated": lambda root: os.truncate(_data(root)[0], 10),
    "data-footer-garbage": lambda root: _data(root)[0].write_bytes(
        _data(root)[0].read_bytes()[:-12] + b"garbage!PAR1"
    ),
    "data-missing": lambda root: _data(root)[0].unlink(),
}
READS = ["SELECT * FROM {t}", "UPDATE {t} SET ID = 0", "DELETE FROM {t} WHERE ID = 1"]
READS += ["INSERT INTO {t} SELECT * FROM {t}", "SELECT * FROM U JOIN {t} ON U.ID = {t}.ID"]
LOG_ONLY = ["INSERT INTO {t} VALUES (3)", "TRUNCATE TABLE {t}", "CREATE TABLE {t}_C CLONE {t}"]


@pytest.mark.parametrize("damage", list(BREAK))
def test_a_broken_table_fails_with_its_name_and_others_still_work(
    world: World, observer: Observer, damage: str
) -> None:
    """Truncated or garbage Delta logs and data files: every statement that reads (or,
    for a broken log, writes) the table fails with STORAGE_ERROR naming it and changes
    nothing (SPEC R28, R39); the other tables and SHOW still work."""
    table = f"BROKEN_{damage.replace('-', '_').upper()}"
    conn = world.connect()
    conn.sql(f"USE D; CREATE TABLE {table} (ID INT); INSERT INTO {table} VALUES (1)")
    conn.sql(f"INSERT INTO {table} VALUES (2)")
    BREAK[damage](world.home / "warehouse" / str(world.table_id(table)))

    statements = READS + (LOG_ONLY if damage.startswith("log") else [])
    for statement in statements:
        refuse(conn, observer, statement.format(t=table), "STORAGE_ERROR", f"D.PUBLIC.{table}")

    assert rows(conn, "SELECT ID FROM U") == [[9]]
    assert table in conn.sql("SHOW TABLES")[0].column("name")
    conn.sql(f"DROP TABLE {table}")  # a broken table can still be dropped


# -- the catalog: locked, read-only --------------------------------------------------------------
# Another process: takes the SQLite write lock, says so, holds it until its stdin closes.
LOCKER = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
    "db.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); sys.stdin.read()"
)


def test_a_locked_catalog_fails_statements_in_bounded_time(
    world: World, observer: Observer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the SQLite write lock: statements wait at most the busy
    timeout (``?timeout=`` of REWIND_CATALOG_URL; 30 s by default), then fail with
    CATALOG_ERROR and change nothing; they work again once the lock is gone (R28, R39)."""
    catalog = world.home / "catalog.db"
    monkeypatch.setenv("REWIND_CATALOG_URL", f"sqlite:///{catalog}?timeout=1")
    conn = world.connect()
    conn.sql("USE D")
    locker = [sys.executable, "-c", LOCKER, str(catalog)]
    with subprocess.Popen(
        locker, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as other:
        assert other.stdout is not None and other.stdin is not None
        assert other.stdout.readline().strip() == "locked"
        for statement in ("CREATE TABLE LOCKED (A INT)", "ALTER TABLE U SET COMMENT = 'x'"):
            started = time.monotonic()
            refuse(conn, observer, statement, "CATALOG_ERROR", "locked")
            assert time.monotonic() - started < 10  # 1 s for the statement, 1 s for its log
        other.stdin.close()  # the other process ends, and its lock with it
    conn.sql("CREATE TABLE LOCKED (A INT); DROP TABLE LOCKED")


def test_a_read_only_catalog_fails_writes_and_undoes_their_storage(
    tmp_path: Path, spark: Any, immutable: Callable[[Path], None]
) -> None:
    """``catalog.db`` immutable: DDL fails, and an INSERT whose data files and Delta
    commit were written before the catalog refused them leaves none of them (R28, R39).

    On a home of its own: SQLite hands a new connection a writable descriptor that
    another connection of the same process left open on the file (its POSIX-lock
    workaround), which would make the file writable again.
    """
    home = tmp_path / "home"
    setup = rewind.connect(home, now=at(1))
    setup.sql("CREATE DATABASE D; CREATE TABLE U (ID INT); INSERT INTO U VALUES (9)")
    setup.close()
    immutable(home / "catalog.db")
    observer, conn = Observer(home), rewind.connect(home, now=at(2))
    try:
        for statement in (
            "CREATE TABLE D.PUBLIC.RO (A INT)",
            "INSERT INTO D.PUBLIC.U VALUES (10)",
            "DROP TABLE D.PUBLIC.U",
            "SHOW TABLES IN DATABASE D",  # every statement's log is a write
        ):
            refuse(conn, observer, statement, "CATALOG_ERROR", "readonly")
    finally:
        conn.close()
        observer.close()


# -- a home that cannot be written ---------------------------------------------------------------
def test_a_home_under_a_regular_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("not a directory")
    with pytest.raises(RewindError) as raised:
        rewind.connect(plain / "home", now=at(1))
    assert_r39(raised.value, "STORAGE_ERROR", str(plain / "home"), "Not a directory")
    assert sorted(tmp_path.iterdir()) == [plain]


def test_an_immutable_home_and_warehouse(
    world: World, observer: Observer, immutable: Callable[[Path], None]
) -> None:
    """A home nobody may write is refused when the session opens; a warehouse nobody may
    write fails the table's creation naming the table, and the catalog stays (R28)."""
    conn = world.connect()
    conn.sql("USE D")
    immutable(world.home / "warehouse")
    refuse(conn, observer, "CREATE TABLE NEW (A INT)", "STORAGE_ERROR", "D.PUBLIC.NEW")
    refuse(conn, observer, "CREATE TABLE NEW AS SELECT 1 AS A", "STORAGE_ERROR", "D.PUBLIC.NEW")
    immutable(world.home)
    with pytest.raises(RewindError) as raised:
        world.connect()
    assert_r39(raised.value, "STORAGE_ERROR", str(world.home), "not writable")


# -- the same through the CLI: one line on stderr, exit 1 (SPEC R39) ----------------------------
def assert_cli_error(result: Any, code: str, *named: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {code}: "), line
    for word in named:
        assert word in line, (word, line)


@pytest.fixture
def cli_home(cli: Callable[..., Any], home: Path) -> Path:
    made = cli("sql", "CREATE DATABASE D; CREATE TABLE T (ID INT)", now=at(1))
    assert made.returncode == 0, made.stderr
    return home


def run_cli(
    home: Path, *args: str, wrapper: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """The installed ``rewind`` on ``home`` (run under ``wrapper``), REWIND_* unset."""
    command = [*wrapper, str(Path(sys.executable).with_name("rewind")), "--home", str(home)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    return subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=300)


def read_only_mount(home: Path, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``rewind`` with ``path`` on a read-only bind mount, in a mount namespace of its
    own: root ignores file modes, not a read-only file system."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    done = run_cli(home, *args, wrapper=["unshare", "-m", "sh", "-c", script, "sh", str(path)])
    if done.stderr.startswith(("mount:", "unshare:")):
        pytest.skip(f"no private read-only mount here: {done.stderr.strip()}")
    return done


def test_cli_on_a_read_only_file_system(cli_home: Path) -> None:
    home_ro = read_only_mount(cli_home, cli_home, "--now", at(2), "sql", "SHOW TABLES IN D")
    assert_cli_error(home_ro, "STORAGE_ERROR", str(cli_home), "not writable")
    catalog_ro = read_only_mount(
        cli_home, cli_home / "catalog.db", "--now", at(2), "sql", "CREATE SCHEMA D.S"
    )
    assert_cli_error(catalog_ro, "CATALOG_ERROR", "readonly")
    warehouse_ro = read_only_mount(
        cli_home, cli_home / "warehouse", "--now", at(2), "sql", "CREATE TABLE D.PUBLIC.X (A INT)"
    )
    assert_cli_error(warehouse_ro, "STORAGE_ERROR", "D.PUBLIC.X", "Read-only file system")


def test_cli_errors_from_spark_and_broken_files_are_one_line(
    cli: Callable[..., Any], cli_home: Path
) -> None:
    """PySpark logs each failed query with its Java stack trace; the CLI's stderr gets
    the one-line error only (the trace goes to logs/spark.log). Spark in the command's
    own process (a JVM start a call): the row and the failing query in one call."""
    failed = cli("sql", "INSERT INTO D.PUBLIC.T VALUES (1); SELECT NOPE FROM D.PUBLIC.T", now=at(2))
    assert_cli_error(failed, "SQL_COMPILATION_ERROR")
    assert "number of rows inserted" in failed.stdout
    (data,) = (cli_home / "warehouse").glob("*/*.parquet")
    os.truncate(data, 10)
    broken = cli("sql", "SELECT * FROM D.PUBLIC.T", now=at(2))
    assert_cli_error(broken, "STORAGE_ERROR", "D.PUBLIC.T", data.name, "not a Parquet file")
    assert "UNRESOLVED_COLUMN" in (cli_home / "logs" / "spark.log").read_text()


# -- no existence leaks (SPEC R37) -------------------------------------------------------------
LEAK_CLOCK = "2026-03-0{}T{:02d}:00:00+00:00"
# An object a role holds nothing on answers exactly like a missing one, in every
# statement and in UNDROP: the same code and message, only the name differing.
LEAK_SETUP = (
    "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT); INSERT INTO D.PUBLIC.T VALUES (1);"
    "CREATE TABLE D.PUBLIC.SEEN (ID INT); CREATE DATABASE HIDDEN;"
    "CREATE TABLE HIDDEN.PUBLIC.T (ID INT);"
    "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER ANALYST;"
    "GRANT SELECT ON TABLE D.PUBLIC.SEEN TO ROLE CLERK"
)
STATEMENTS = [
    "SELECT * FROM {t}",
    "SELECT * FROM {t} AT(OFFSET => -60)",
    "INSERT INTO {t} VALUES (2)",
    "UPDATE {t} SET ID = 2",
    "DELETE FROM {t}",
    "MERGE INTO {t} USING D.PUBLIC.SEEN S ON {t}.ID = S.ID WHEN MATCHED THEN DELETE",
    "DROP TABLE {t}",
    "ALTER TABLE {t} SET DATA_RETENTION_TIME_IN_DAYS = 3",
    "DESCRIBE TABLE {t}",
    "CREATE TABLE D.PUBLIC.MINE CLONE {t}",
    "GRANT SELECT ON TABLE {t} TO ROLE CLERK",
    "SELECT * FROM D.PUBLIC.SEEN JOIN {t} USING (ID)",
]
# (an object ANALYST holds nothing on, a missing name of the same shape)
PAIRS = [
    ("D.PUBLIC.T", "D.PUBLIC.NOPE"),  # in a database the role sees (it holds SEEN)
    ("HIDDEN.PUBLIC.T", "NOPE.PUBLIC.T"),  # in a database the role holds nothing in
]


def answer(conn: Any, statement: str) -> tuple[str, str]:
    with pytest.raises(RewindError) as raised:
        conn.sql(statement)
    return raised.value.code, raised.value.message


@pytest.mark.parametrize("pair", PAIRS, ids=["visible-db", "hidden-db"])
def test_an_object_without_privileges_answers_like_a_missing_one_r37(
    connect: Callable[..., Any], pair: tuple[str, str]
) -> None:
    connect(now=LEAK_CLOCK.format(1, 0)).sql(LEAK_SETUP)
    analyst = connect(now=LEAK_CLOCK.format(1, 1), user="ANALYST")
    existing, missing = pair
    for template in STATEMENTS:
        code, message = answer(analyst, template.format(t=existing))
        expected = answer(analyst, template.format(t=missing))
        for a, b in zip(missing.split("."), existing.split("."), strict=True):
            expected = (expected[0], expected[1].replace(a, b))
        assert (code, message) == expected, template
    shown = analyst.sql("SHOW DATABASES")[0].column("name")
    assert "HIDDEN" not in shown and "D" in shown


@pytest.mark.parametrize("days_later", [0, 3], ids=["in-time-travel", "in-failsafe"])
def test_undrop_of_someone_elses_table_answers_like_a_missing_one_r37(
    connect: Callable[..., Any], days_later: int
) -> None:
    """Dropped by ADMIN with 1 day of retention; ANALYST's UNDROP — while undroppable, or
    after it left time travel for fail-safe — is told what a missing name is told, not
    CANNOT_UNDROP or ACCESS_DENIED."""
    connect(now=LEAK_CLOCK.format(1, 0)).sql(
        LEAK_SETUP
        + "; ALTER TABLE D.PUBLIC.T SET DATA_RETENTION_TIME_IN_DAYS = 1; DROP TABLE D.PUBLIC.T"
    )
    analyst = connect(now=LEAK_CLOCK.format(1 + days_later, 2), user="ANALYST")
    code, message = answer(analyst, "UNDROP TABLE D.PUBLIC.T")
    expected = answer(analyst, "UNDROP TABLE D.PUBLIC.NOPE")
    assert (code, message) == (expected[0], expected[1].replace("NOPE", "T"))
    assert code == "OBJECT_NOT_FOUND"
