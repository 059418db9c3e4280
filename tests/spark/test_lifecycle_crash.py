"""The nightly lifecycle survives SIGKILL at any point and converges (SPEC R31; R12, R30).

The expire job and the purge job (``spark_jobs/*.py``, each started in a session of
its own: driver, JVM and Python workers) are killed with SIGKILL at many points the
test chooses, through the fault hook of ``rewind.lifecycle.fileops``
(``REWIND_FAULT="<point>:<n>"``). The kills are chained on one home, as Airflow
retries of one task are: every attempt first finishes what the killed one
journaled, then dies a little further on, until a last attempt runs to the end.

The job as Airflow runs it, with Spark, dies at every kind of point (its first attempt
among them) and runs the last attempt. The other depths are the same job
(``rewind.runner.main``) with its file operations in two plain Python workers of its
process group instead of Spark's (``tests/lifecycle_jobs.py``): the same
``fileops.run_batches`` over the same two slices of the same tasks, killed with the
driver, in 2-4 s instead of a JVM start (15-30 s on the loaded 2-core machine). A kill
at "journal" or "purge_journal" comes before the job starts Spark: those are the job
with Spark, in 1-2 s.

After every kill, every data file that any Delta version of the warehouse ever
held is checked against a ledger the test derives on its own from the Delta logs
(commit times), the drops and the retention it set, and against the catalog's
manifest (``file_states``):

- nothing lost: a permanent file is in its table or in fail-safe until its purge date;
- nothing early: a file still in time travel is in its table only, and no row carries
  a fail-safe date other than the end of the file's window (SPEC R12, R30);
- nothing duplicated: a file is never in both places, except between the copy and the
  unlink of a cross-device move; fail-safe holds no file the ledger does not know;
- the manifest tells the truth: LIVE / REMOVED rows are in the table, FAILSAFE rows in
  fail-safe only, MOVING rows somewhere.

After the last attempt every file is where the ledger says, and the home equals a
copy of the starting home that ran the same step once without a kill (in this process,
on the suite's Spark: the step's code, without a JVM start of its own).

One table's fail-safe directory is a symlink to another file system (tmpfs), so its
moves take the copy-then-unlink path of ``fileops.move`` while the others rename.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from lifecycle_jobs import run_job
from test_dml import T0, catalog, clock, open_at

import rewind
from rewind.config import Config
from rewind.constants import COMMIT_TIME_KEY, FAILSAFE_DAYS
from rewind.faults import FAULT_ENV
from rewind.home import MARKER
from rewind.runner import run_step

pytestmark = pytest.mark.spark

FAILSAFE = timedelta(days=FAILSAFE_DAYS)
NIGHT_1 = ("night-1", T0 + timedelta(days=2))  # expires what left time travel on day 1
NIGHT_2 = ("night-2", T0 + timedelta(days=9))  # also purges what left it on day 1
JOB_TIMEOUT_S = 240


@dataclass(frozen=True)
class Table:
    """A table of the warehouse, one row per data file, and what ends the files' life."""

    name: str
    retention: int
    files: int
    change: str
    hours: float  # when ``change`` runs, after T0
    transient: bool = False


TABLES = (
    Table("P1", 1, 40, "DELETE FROM P1 WHERE ID < 30", 1),  # the clone C1 still uses them
    Table("PX", 1, 20, "TRUNCATE TABLE PX", 1),  # its fail-safe is on another file system
    Table("PD", 1, 20, "DROP TABLE PD", 2),
    Table("P0", 0, 10, "UPDATE P0 SET V = 'y'", 1),
    Table("P3", 3, 10, "TRUNCATE TABLE P3", 1),  # still in time travel on night 1
    Table("PL", 1, 10, "DELETE FROM PL", 36),  # still in time travel on night 1
    Table("TT", 1, 20, "DELETE FROM TT WHERE ID >= 0", 1, transient=True),
    Table("TD", 0, 10, "DROP TABLE TD", 2, transient=True),
)
# Taken before P1's DELETE (SPEC R24); keeps the account's default retention of 1 day.
CLONE = Table("C1", 1, 0, "CREATE TABLE C1 CLONE P1", 0)
CROSS_DEVICE = "PX"

# How a kill's job runs its file operations: SPARK, the job as Airflow runs it (a JVM
# start, 15-30 s of the suite: a kill at "journal" or "purge_journal" comes before it,
# 1-2 s), or PYTHON, the same job with two plain Python workers instead (2-4 s).
SPARK, PYTHON = True, False
# Night 1 moves 30 (P1) + 20 (PX, two "move" passes each) + 20 (PD) + 10 (P0) files and
# deletes 30 (TT, TD). A "move:n" kill ends after at most n-1 passes in each of the two
# Python workers, so the 8 move kills use at most 38 of the 100 passes and the last
# still fires; "delete" passes repeat every DELETING row (30) in each attempt. Only the
# first attempt finds files to journal: it dies among its files, not before them.
# 14 kills reach every kind of point (move, journal, delete) at several depths, each
# kind in the job with Spark. Where PX's fail-safe is on another file system, a kill
# at "copied" (after the copy of a cross-device move, before the unlink of its source),
# with Spark, comes second, while most PX files still wait: which worker moves which
# file is Spark's choice, and 8 move kills alone missed that instant once in CI.
EXPIRE_KILLS = (
    ("move:3", SPARK),  # the first attempt: journal committed, a few files moved
    ("journal:1", SPARK),  # a retry dies before touching anything
    *((f"move:{n}", PYTHON) for n in (2, 4, 2, 5)),
    ("journal:1", SPARK),
    *((f"move:{n}", PYTHON) for n in (3, 6, 2)),
    ("delete:2", SPARK),  # a retry: the moves left finished, dies among the deletes
    *((f"delete:{n}", PYTHON) for n in (5, 9, 14)),
)
CROSS_DEVICE_KILL = ("copied:1", SPARK)
# Night 2 purges 80 files (P1, PX, PD, P0); every attempt deletes every PURGING row again,
# so each kill goes further in each worker. 12 kills reach both kinds of point at
# several depths, each kind in the job with Spark.
PURGE_KILLS = (
    ("delete:2", SPARK),  # the first attempt: purge journaled, a file or two deleted
    ("purge_journal:1", SPARK),  # a retry dies before touching anything
    *((f"delete:{n}", PYTHON) for n in range(4, 13, 2)),
    ("purge_journal:1", SPARK),
    *((f"delete:{n}", PYTHON) for n in range(14, 22, 2)),
)
Kill = tuple[str, bool]  # (REWIND_FAULT, SPARK or PYTHON)


# -- the warehouse ---------------------------------------------------------------------------------
def build(home: Path) -> None:
    """Create every table with its files at T0, then run the changes at their hours."""
    opened: list[Any] = []

    def connect(now: str | None = None, user: str | None = None) -> Any:
        opened.append(rewind.connect(home=home, now=now, user=user))
        return opened[-1]

    try:
        connect(now=clock()).sql("CREATE DATABASE D")
        for table in TABLES:
            kind = "TRANSIENT TABLE" if table.transient else "TABLE"
            rows = " UNION ALL ".join(f"SELECT {i}, 'x'" for i in range(table.files))
            open_at(connect).sql(
                f"CREATE {kind} {table.name} (ID INT, V VARCHAR) "
                f"DATA_RETENTION_TIME_IN_DAYS = {table.retention}; "
                f"INSERT INTO {table.name} {rows}"  # one file per SELECT
            )
        for table in sorted((CLONE, *TABLES), key=lambda t: t.hours):
            open_at(connect, hours=table.hours).sql(table.change)
    finally:
        for conn in opened:
            conn.close()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Path:
    """The starting home, built once; each test works on copies."""
    home = tmp_path_factory.mktemp("crash") / "home"
    build(home)
    return home


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[Path | None]:
    """A directory on another file system than the homes (tmpfs), if there is one."""
    shm = Path("/dev/shm")
    usable = shm.is_dir() and os.access(shm, os.W_OK)
    if not usable or shm.stat().st_dev == tmp_path.stat().st_dev:
        yield None
        return
    with tempfile.TemporaryDirectory(dir=shm, prefix="rewind-crash-") as path:
        yield Path(path)


def table_id(home: Path, name: str) -> int:
    ((found,),) = catalog(home, "SELECT id FROM objects WHERE kind = 'TABLE' AND name = ?", name)
    return int(found)


def failsafe_elsewhere(home: Path, elsewhere: Path | None) -> set[int]:
    """Put the fail-safe directory of CROSS_DEVICE on ``elsewhere``; returns its table id."""
    if elsewhere is None:
        return set()
    moved = table_id(home, CROSS_DEVICE)
    (home / "failsafe").mkdir(exist_ok=True)
    (home / "failsafe" / str(moved)).symlink_to(tempfile.mkdtemp(dir=elsewhere))
    return {moved}


# -- the ledger: where every file must be, from the Delta logs and the retention set ---------------
@dataclass(frozen=True)
class Entry:
    """One data file of one table incarnation."""

    table_id: int
    path: str
    transient: bool
    end: datetime | None  # when it leaves time travel (SPEC R30); None while current

    def settled(self, now: datetime) -> str:
        """Where a finished run at ``now`` leaves it: "table", "failsafe" or "gone"."""
        if self.end is None or now < self.end:
            return "table"
        if self.transient or now >= self.end + FAILSAFE:
            return "gone"
        return "failsafe"

    def held(self, now: datetime) -> bool:
        """Must be in its table or in fail-safe at ``now``: still in time travel, or
        permanent and before its purge date."""
        return self.settled(now) != "gone"


def utc(text: str | None) -> datetime | None:
    """A catalog timestamp (naive UTC text) as an aware datetime."""
    return None if text is None else datetime.fromisoformat(text).replace(tzinfo=UTC)


def removal_times(root: Path) -> dict[str, datetime | None]:
    """Every data file any version of a Delta table held -> when a commit removed it."""
    history = {
        commit["version"]: datetime.fromisoformat(commit[COMMIT_TIME_KEY])
        for commit in DeltaTable(str(root)).history()
    }
    removed: dict[str, datetime | None] = {}
    previous: set[str] = set()
    for version, when in sorted(history.items()):
        actions = pa.table(DeltaTable(str(root), version=version).get_add_actions(flatten=True))
        current = set(actions["path"].to_pylist())
        removed.update({path: when for path in previous - current})
        removed.update({path: None for path in current})
        previous = current
    return removed


def ledger(home: Path) -> dict[tuple[int, str], Entry]:
    """Every data file of the warehouse and the end of its time travel (SPEC R30)."""
    tables = {t.name: t for t in (CLONE, *TABLES)}
    found = {}
    for object_id, name, dropped_on in catalog(
        home, "SELECT id, name, dropped_on FROM objects WHERE kind = 'TABLE'"
    ):
        table, dropped = tables[name], utc(dropped_on)
        keep = timedelta(days=table.retention)
        for path, removed in removal_times(home / "warehouse" / str(object_id)).items():
            ends = [moment + keep for moment in (removed, dropped) if moment is not None]
            found[object_id, path] = Entry(
                object_id, path, table.transient, min(ends) if ends else None
            )
    return found


# -- what is where ---------------------------------------------------------------------------------
def places(home: Path, entry: Entry) -> set[str]:
    return {
        place
        for place, root in (("table", "warehouse"), ("failsafe", "failsafe"))
        if (home / root / str(entry.table_id) / entry.path).exists()
    }


def tree(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root`` (following the fail-safe symlink),
    the catalog's marker (which names the home that wrote it) left out."""
    found = {}
    for folder, _, names in os.walk(root, followlinks=True):
        for name in names:
            if name == MARKER and Path(folder) == root:
                continue
            path = Path(folder) / name
            found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def manifest(home: Path) -> dict[tuple[int, str], tuple[str, datetime | None, datetime | None]]:
    """``file_states``: (table id, path) -> (state, left_time_travel_at, purge_at)."""
    return {
        (table, path): (state, utc(left), utc(purge))
        for table, path, state, left, purge in catalog(
            home, "SELECT table_id, path, state, left_time_travel_at, purge_at FROM file_states"
        )
    }


WHERE_STATE = {"LIVE": {"table"}, "REMOVED": {"table"}, "FAILSAFE": {"failsafe"}}
IN_FAILSAFE_TIME = ("MOVING", "FAILSAFE", "PURGING")  # rows that carry a purge date


def file_problems(home: Path, files: dict, now: datetime, cross: set[int]) -> list[str]:
    """Lost, early or duplicated files: what no instant of a run may show (SPEC R31)."""
    problems = []
    for key, entry in files.items():
        where = places(home, entry)
        if entry.settled(now) == "table" and where != {"table"}:
            problems.append(f"{key} moved early: in {where or 'neither place'}")
        if entry.held(now) and not where:
            problems.append(f"{key} lost before its purge date")
        if len(where) == 2 and entry.table_id not in cross:
            problems.append(f"{key} in both its table and fail-safe")
    for relative in tree(home / "failsafe"):
        owner, _, path = relative.partition("/")
        stray = (int(owner), path) not in files
        if stray and not (path.endswith(".part") and int(owner) in cross):
            problems.append(f"fail-safe holds {relative}, no file of any table")
    return problems


def row_problems(home: Path, files: dict, now: datetime) -> list[str]:
    """Manifest rows that do not tell where the file is, or carry a wrong date."""
    problems = []
    for key, (state, left, purge) in manifest(home).items():
        entry = files.get(key)
        if entry is None:
            problems.append(f"row {key} ({state}) for no file of any table")
            continue
        where = places(home, entry)
        if where != WHERE_STATE.get(state, where) or (state == "MOVING" and not where):
            problems.append(f"row {key} is {state}, the file is in {where or 'neither place'}")
        if state == "RETAINED" and "failsafe" in where:
            problems.append(f"row {key} is RETAINED, the file is still in fail-safe")
        if left is not None and (left != entry.end or left > now):
            problems.append(f"row {key} left time travel at {left}, not {entry.end}")
        if state in IN_FAILSAFE_TIME and (left is None or purge != left + FAILSAFE):
            problems.append(f"row {key} is purged at {purge}, not 7 days after {left}")
    return problems


def check_instant(home: Path, files: dict, now: datetime, cross: set[int], when: str) -> None:
    problems = file_problems(home, files, now, cross) + row_problems(home, files, now)
    assert not problems, f"{when}: {len(problems)} problems:\n" + "\n".join(problems[:30])


def check_settled(home: Path, files: dict, now: datetime) -> None:
    """After an uninterrupted attempt: every file and row where the ledger says."""
    check_instant(home, files, now, set(), "after the last attempt")
    rows = manifest(home)
    clone_sources = set(catalog(home, "SELECT source_id, source_path FROM clone_files"))
    states: dict[str, set[str | None]] = {
        "table": {"LIVE", "REMOVED"},
        "failsafe": {"FAILSAFE"},
        "gone": {None},
    }
    wrong = []
    for key, entry in files.items():
        settled = entry.settled(now)
        state = rows.get(key, (None,))[0]
        allowed = states[settled] | ({"RETAINED"} if key in clone_sources else set())
        where = places(home, entry)
        if state not in allowed or where != ({settled} - {"gone"}):
            wrong.append(f"{key} should be {settled}: row {state}, file in {where}")
    assert not wrong, f"{len(wrong)} files not where they belong:\n" + "\n".join(wrong[:30])


def observe(home: Path) -> dict[str, Any]:
    """What a finished job leaves: files (with bytes) and every catalog table. A run's
    row keeps the summary its last attempt recorded (what that attempt did, and how long
    it took): here only which steps recorded one; a log cursor, all but when its table's
    directory was last listed."""
    tables = catalog(home, "SELECT name FROM sqlite_master WHERE type = 'table'")
    found = {name: sorted(catalog(home, f"SELECT * FROM {name}"), key=repr) for (name,) in tables}
    found["lifecycle_runs"] = sorted(
        (run_id, now, [step["step"] for step in json.loads(summary or "{}").get("steps", [])])
        for run_id, now, summary in catalog(home, "SELECT run_id, now, summary FROM lifecycle_runs")
    )
    # listed_at is the machine's time a listing began: no two runs share it
    found["log_cursors"] = sorted(
        catalog(home, "SELECT table_id, version, configuration, log_cutoff FROM log_cursors"),
        key=repr,
    )
    return {
        "warehouse": tree(home / "warehouse"),
        "failsafe": tree(home / "failsafe"),
        "catalog": found,
    }


def progress(home: Path, files: dict) -> tuple[int, int, int]:
    """Files in tables, in fail-safe and in both: tells one kill's instant from another's."""
    where = [places(home, entry) for entry in files.values()]
    return (
        sum("table" in w for w in where),
        sum("failsafe" in w for w in where),
        sum(len(w) == 2 for w in where),
    )


# -- running the jobs ------------------------------------------------------------------------------
def job(
    home: Path,
    step: str,
    night: tuple[str, datetime],
    fault: str | None = None,
    spark: bool = SPARK,
) -> str:
    """Run a lifecycle job in its own session (``spark``: with Spark, else with Python
    workers, ``tests/lifecycle_jobs.py``); returns its stdout.

    With ``fault`` the job must die by SIGKILL there: a fault that never fires fails.
    """
    code, out, err = run_job(home, step, *night, fault, JOB_TIMEOUT_S, spark=spark)
    expected = 0 if fault is None else -signal.SIGKILL
    how = "Spark" if spark else "Python workers"
    assert code == expected, f"{step} ({how}) with {FAULT_ENV}={fault}: exit {code}\n{err[-3000:]}"
    return out


def step_here(home: Path, step: str, night: tuple[str, datetime]) -> None:
    """A step of a night run in this process: step 1 needs no Spark; the others use the
    suite's SparkSession (the ``spark`` fixture), with no JVM start of their own."""
    run_step(Config.load(home=home), step, *night)


def plan(home: Path, night: tuple[str, datetime]) -> None:
    """Step 1 for a night (no Spark: it runs in-process)."""
    step_here(home, "effective_retention", night)


def kill_repeatedly(
    home: Path,
    reference: Path,
    step: str,
    night: tuple[str, datetime],
    kills: tuple[Kill, ...],
    cross: set[int],
) -> list[tuple[int, int, int]]:
    """Kill ``step`` on ``home`` at each of ``kills`` in turn, checking every instant, then
    let the job with Spark finish; ``reference`` (a copy of ``home``) runs it once first,
    unkilled.

    Returns the files in tables, in fail-safe and in both after each kill.
    """
    files, now = ledger(home), night[1]
    kinds = {fault.split(":")[0] for fault, _ in kills}
    assert kinds == {fault.split(":")[0] for fault, spark in kills if spark}, kills
    step_here(reference, step, night)
    seen = []
    for fault, spark in kills:
        job(home, step, night, fault, spark)
        how = "with Spark" if spark else "with Python workers"
        check_instant(home, files, now, cross, f"{step} {how} killed at {fault}")
        seen.append(progress(home, files))
    summary = json.loads(job(home, step, night).splitlines()[-1])
    check_settled(home, files, now)
    assert summary.get("files_missing", 0) == 0, summary
    assert observe(home) == observe(reference)
    # Many different instants. Every kill fired (job() asserts it); how many distinct states
    # they leave depends on the order Spark's tasks take the tables (the cross-device kill
    # may come after most moves) and re-run deletes of gone files change nothing: a
    # clean-clone run on a slow machine saw 7 of 15, which failed the 8 required before.
    assert len(kills) >= 12 and len(set(seen)) >= 6, seen
    return seen


def copy_of(home: Path, target: Path) -> Path:
    """A copy of a home; a fail-safe directory on another file system is copied in."""
    return Path(shutil.copytree(home, target, symlinks=False))


# -- the tests -------------------------------------------------------------------------------------
def test_expire_job_killed_anywhere_loses_nothing_moves_nothing_early_and_converges(
    warehouse: Path, tmp_path: Path, elsewhere: Path | None
) -> None:
    # SPEC R31, R12, R30: 14 kills of expire_versions on night 1 (move, journal, delete),
    # and one between the copy and the unlink of a cross-device move (with Spark).
    home = copy_of(warehouse, tmp_path / "killed")
    plan(home, NIGHT_1)
    reference = copy_of(home, tmp_path / "reference")
    cross = failsafe_elsewhere(home, elsewhere)
    failsafe_elsewhere(reference, elsewhere)
    due = [e for e in ledger(home).values() if e.settled(NIGHT_1[1]) != "table"]
    assert (sum(not e.transient for e in due), sum(e.transient for e in due)) == (80, 30)
    kills = EXPIRE_KILLS[:1] + (CROSS_DEVICE_KILL,) * bool(cross) + EXPIRE_KILLS[1:]

    seen = kill_repeatedly(home, reference, "expire_versions", NIGHT_1, kills, cross)

    # The "copied" kill left a PX file in both places; the next attempt finished it.
    assert not cross or seen[1][2] > 0, seen


def test_purge_job_killed_anywhere_loses_nothing_purges_nothing_early_and_converges(
    warehouse: Path, tmp_path: Path
) -> None:
    # SPEC R31, R12: 12 kills of purge_failsafe (delete, purge journal). The lifecycle
    # first runs on day 9 only: fail-safe time still counts from the end of each file's
    # window, so what left time travel on day 1 is purged on this same night. Its step 2
    # runs here (the expire job is the other test's).
    home = copy_of(warehouse, tmp_path / "killed")
    plan(home, NIGHT_2)
    step_here(home, "expire_versions", NIGHT_2)
    reference = copy_of(home, tmp_path / "reference")
    files = ledger(home)
    due = [e for e in files.values() if not e.transient and e.settled(NIGHT_2[1]) == "gone"]
    kept = [e for e in files.values() if e.settled(NIGHT_2[1]) == "failsafe"]
    assert (len(due), len(kept)) == (80, 20)

    kill_repeatedly(home, reference, "purge_failsafe", NIGHT_2, PURGE_KILLS, set())

    # SPEC R30: the clone C1 still uses P1's 30 purged files, whose rows stay RETAINED.
    assert catalog(home, "SELECT COUNT(*) FROM file_states WHERE state = 'RETAINED'") == [(30,)]
