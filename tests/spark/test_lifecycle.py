"""The nightly lifecycle day by day, moving files through Spark executors (SPEC R8–R13,
R17, R19, R29–R33).

One module-scoped history (``world``) is built once: a warehouse with a few tables per
rule, changed at noon, and the lifecycle run at 11:00 and 13:00 every day for three
weeks. Retention is in whole days, so every time-travel window and every fail-safe
period ends at noon, between two runs one hour either side of it. Every run is made
twice at the same instant (idempotence, SPEC R31), and what each run left behind —
file states, files on disk, the storage metrics — is recorded for the tests to read.
A second, small history (``late``) runs the job days late (SPEC R12).

Both histories share the suite's SparkSession (the session-scoped ``spark`` fixture);
they open their own connections because the ``connect`` fixture is per test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

import rewind
from rewind.catalog.db import make_engine
from rewind.catalog.models import CatalogObject, FileState
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.errors import RewindError
from rewind.lifecycle import pins
from rewind.result import Result
from rewind.runner import run_lifecycle
from rewind.storage.arrow_read import read_arrow
from rewind.storage.delta import TableStore
from rewind.storage.snapshot import DataFile

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("lifecycle")]

DAY0 = datetime(2026, 3, 2, tzinfo=UTC)
FAILSAFE = timedelta(days=7)  # SPEC R12
HOUR = timedelta(hours=1)
BYTES = ["ACTIVE_BYTES", "TIME_TRAVEL_BYTES", "FAILSAFE_BYTES", "RETAINED_FOR_CLONE_BYTES"]
WORK = ["files_journaled", "files_moved", "files_deleted", "files_purged", "tables_purged"]
WAREHOUSE, FAILSAFE_STORE, GONE = "warehouse", "failsafe", "gone"
COLUMNS = "(ID INT, V VARCHAR)"

Key = tuple[int, str]  # (table id, data file path relative to the table root)


def at(day: int, hour: int = 12, minute: int = 0) -> datetime:
    """An instant of a history: changes happen at noon, runs at 11:00 and 13:00."""
    return DAY0 + timedelta(days=day, hours=hour, minutes=minute)


@dataclass(frozen=True)
class FileRow:
    state: str
    left_time_travel_at: datetime | None
    purge_at: datetime | None


@dataclass
class Seen:
    """What one lifecycle run left behind."""

    now: datetime
    steps: list[dict[str, Any]]
    states: dict[Key, FileRow]
    disk: dict[tuple[str, int, str], tuple[int, int, int]]  # -> (device, inode, size)
    metrics: dict[int, dict[str, Any]]  # the run's TABLE_STORAGE_METRICS rows by ID

    def place(self, key: Key) -> str:
        """Where a table's file is: warehouse, failsafe, both (never!) or gone."""
        places = [p for p in (WAREHOUSE, FAILSAFE_STORE) if (p, *key) in self.disk]
        return "+".join(places) or GONE

    def stored_bytes(self) -> int:
        """Bytes of the distinct inodes of every data file under warehouse/ and failsafe/."""
        return sum({(dev, ino): size for dev, ino, size in self.disk.values()}.values())

    def counted(self, table_id: int, column: str) -> int:
        return int(self.metrics[table_id][column])

    def step(self, name: str) -> dict[str, Any]:
        return next(s for s in self.steps if s["step"] == name)


@dataclass
class World:
    """One Rewind home, its clock moved by hand, and what every lifecycle run saw."""

    home: Path
    runs: dict[datetime, tuple[Seen, Seen]] = field(default_factory=dict)
    removed: dict[str, dict[str, DataFile]] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)  # label -> version before it
    notes: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.config = Config.load(home=self.home)
        self.engine: Engine | None = None

    def sql(self, now: datetime, text: str, dialect: str = "snowflake") -> list[Result]:
        conn = rewind.connect(home=self.home, now=format_timestamp(now))
        try:
            return conn.sql(text, dialect)
        finally:
            conn.close()

    def code_of(self, now: datetime, action: Callable[[Any], object]) -> str:
        """The error code ``action(connection)`` fails with, or "no error"."""
        conn = rewind.connect(home=self.home, now=format_timestamp(now))
        try:
            action(conn)
        except RewindError as error:
            return error.code
        finally:
            conn.close()
        return "no error"

    def catalog(self) -> Session:
        if self.engine is None:
            self.engine = make_engine(self.config.catalog_url)
        return Session(self.engine)

    def id(self, name: str) -> int:
        """The newest incarnation of the table named ``name`` (names are unique here)."""
        with self.catalog() as session:
            return session.scalars(
                select(CatalogObject.id)
                .where(CatalogObject.kind == "TABLE", CatalogObject.name == name)
                .order_by(CatalogObject.id.desc())
            ).first()

    def files(self, name: str) -> dict[str, DataFile]:
        """The data files of the current version of a table."""
        store, table_id = TableStore(self.config.warehouse_root), self.id(name)
        snap = store.snapshot(table_id, store.latest_version(table_id))
        return {f.path: f for f in snap.files}

    def update(self, now: datetime, label: str, table: str, where: str) -> None:
        """UPDATE the rows of ``where`` in ``table`` (qualified); remember under ``label``
        the version before and the files the update removed."""
        name = table.rsplit(".", 1)[-1]
        store = TableStore(self.config.warehouse_root)
        self.versions[label] = store.latest_version(self.id(name))
        before = self.files(name)
        self.sql(now, f"UPDATE {table} SET V = 'x' WHERE {where}")
        after = self.files(name)
        self.removed[label] = {p: f for p, f in before.items() if p not in after}
        assert self.removed[label], f"{label}: the change removed no file"

    def keys(self, label: str, table: str | None = None) -> list[Key]:
        table_id = self.id(table or label)
        return [(table_id, path) for path in sorted(self.removed[label])]

    def removed_bytes(self, label: str) -> int:
        return sum(f.size for f in self.removed[label].values())

    def lifecycle(self, now: datetime) -> None:
        """Run the lifecycle twice at ``now`` (SPEC R31: the second run changes nothing)."""
        first = self._seen(now, run_lifecycle(self.config, now))
        self.runs[now] = (first, self._seen(now, run_lifecycle(self.config, now)))

    def seen(self, now: datetime) -> Seen:
        return self.runs[now][0]

    def _seen(self, now: datetime, steps: list[dict[str, Any]]) -> Seen:
        with self.catalog() as session:
            states = {
                (row.table_id, row.path): FileRow(row.state, row.left_time_travel_at, row.purge_at)
                for row in session.scalars(select(FileState))
            }
        rows = read_arrow(
            self.config.system_root / "table_storage_metrics",
            filters=[("AS_OF_DATE", "=", now.date().isoformat())],
        )
        return Seen(
            now,
            steps,
            states,
            self._disk(),
            {r["ID"]: r for r in rows.to_pylist() if r["AS_OF"] == now},
        )

    def _disk(self) -> dict[tuple[str, int, str], tuple[int, int, int]]:
        found = {}
        for place, root in (
            (WAREHOUSE, self.config.warehouse_root),
            (FAILSAFE_STORE, self.config.failsafe_root),
        ):
            for file in root.rglob("*.parquet"):
                parts = file.relative_to(root).parts
                if "_delta_log" in parts:  # a Delta checkpoint is log, not table data
                    continue
                stat = file.stat()
                key = (place, int(parts[0]), "/".join(parts[1:]))
                found[key] = (stat.st_dev, stat.st_ino, stat.st_size)
        return found

    def view(self, now: datetime, name: str = "TABLE_STORAGE_METRICS") -> dict[int, dict]:
        """``REWIND.ACCOUNT_USAGE.<name>`` through the SQL API, rows by ID."""
        result = self.sql(now, f"SELECT * FROM REWIND.ACCOUNT_USAGE.{name}")[-1]
        rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
        return {r.get("ID", r.get("TABLE_NAME")): r for r in rows}

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()


Event = tuple[datetime, Callable[[World], Any]]


def play(world: World, events: list[Event], runs: list[datetime]) -> World:
    """Run the events and lifecycle runs in time order (events first at equal times)."""
    timeline = [(when, 0, action) for when, action in events]
    timeline += [(when, 1, World.lifecycle) for when in runs]
    for when, _, action in sorted(timeline, key=lambda item: item[:2]):
        if action is World.lifecycle:
            world.lifecycle(when)
        else:
            action(world)
    return world


def statement(when: datetime, text: str) -> Event:
    return when, lambda w: w.sql(when, text)


def update(when: datetime, label: str, table: str, where: str) -> Event:
    return when, lambda w: w.update(when, label, table, where)


def note(when: datetime, name: str, query: str) -> Event:
    """Remember a query's rows (or the code it failed with) as ``notes[name]``."""

    def run(w: World) -> None:
        try:
            w.notes[name] = w.sql(when, query)[-1].rows
        except RewindError as error:
            w.notes[name] = error.code

    return when, run


# -- the three-week history ------------------------------------------------------------

DAYS = 20
SCHEMAS = {  # schema -> its DATA_RETENTION_TIME_IN_DAYS (None: inherit the account's 1)
    "R8": None,
    "R9": None,
    "R10": 3,
    "R11": 2,
    "MISC": 1,
    "SIM": None,
}
TABLES = {  # table -> (schema, transient, explicit retention)
    "P0": ("R8", False, 0),
    "T0": ("R8", True, 0),
    "Z0": ("R8", False, 0),
    "UP": ("R9", False, 1),
    "DOWN": ("R9", False, 5),
    "CUT": ("R9", False, 10),
    "GONE": ("R10", False, None),
    "SIB": ("R10", False, None),
    "A": ("R11", False, 5),
    "B": ("R11", False, 0),
    "C": ("R11", False, 4),
    "R13": ("MISC", False, None),
    "PINX": ("MISC", False, None),
    "PINR": ("MISC", False, None),
    "OWN": ("MISC", False, None),
    "OWN2": ("MISC", False, None),
    "NP": ("SIM", False, 2),
    "NT": ("SIM", True, 1),
}
UPDATED_ON_DAY1 = ["P0", "T0", "UP", "DOWN", "CUT", "SIB", "PINX", "PINR", "OWN"]
DROPPED_ON_DAY1 = ["Z0", "GONE", "C", "OWN2"]
CLONES = {"CL": "OWN", "CL2": "OWN2"}
ROWS = [(1, "a"), (2, "b"), (3, "c")]


def qualified(table: str) -> str:
    return f"LC.{TABLES[table][0]}.{table}"


def retention(days: int | None) -> str:
    return "" if days is None else f" DATA_RETENTION_TIME_IN_DAYS = {days}"


def insert(table: str, rows: list[tuple[int, str]]) -> str:
    values = ", ".join(f"({i}, '{v}')" for i, v in rows)
    return f"INSERT INTO {table} VALUES {values}"


def create_everything(w: World) -> None:
    statements = ["CREATE DATABASE LC"]
    statements += [f"CREATE SCHEMA LC.{s}{retention(d)}" for s, d in SCHEMAS.items()]
    for table, (_, transient, days) in TABLES.items():
        kind = "TRANSIENT TABLE" if transient else "TABLE"
        statements.append(f"CREATE {kind} {qualified(table)} {COLUMNS}{retention(days)}")
        statements.append(insert(qualified(table), ROWS))
    statements.append(insert(qualified("R13"), [(4, "d"), (5, "e")]))  # a second file
    statements += [f"CREATE TABLE LC.MISC.{c} CLONE {qualified(s)}" for c, s in CLONES.items()]
    w.sql(at(0), "; ".join(statements))


def change_on_day1(w: World) -> None:
    for table in UPDATED_ON_DAY1:
        w.update(at(1), table, qualified(table), "ID = 1")
    # SPEC R13: change one row of a file holding several.
    multi_row = next(f for f in w.files("R13").values() if f.num_records > 1)
    row_id = pq.read_table(w.home / "warehouse" / str(w.id("R13")) / multi_row.path)["ID"][0]
    w.update(at(1), "R13", qualified("R13"), f"ID = {row_id}")
    w.sql(at(1), "; ".join(f"DROP TABLE {qualified(t)}" for t in DROPPED_ON_DAY1))
    w.notes["undrop Z0"] = w.code_of(at(1), lambda c: c.sql("UNDROP TABLE LC.R8.Z0"))


def pin(w: World) -> None:
    """SPEC R19: two long reads of the versions before the day-1 updates."""
    for table in ("PINX", "PINR"):
        version = w.versions[table]
        w.notes[f"pin {table}"] = pins.hold(
            w.home / "pins", w.id(table), version, f"read-{table}", at(2, 12, 30)
        )


def churn(day: int) -> Callable[[World], Any]:
    """Daily DML on LC.SIM (SPEC R33 accounting under inserts, updates, deletes, clones,
    drops, truncates and replaces)."""
    special = {
        5: "CREATE TABLE LC.SIM.NPC CLONE LC.SIM.NP",
        6: "UPDATE LC.SIM.NPC SET V = 'c' WHERE ID >= 2",
        8: f"DROP TABLE LC.SIM.NP; CREATE TABLE LC.SIM.NP {COLUMNS}{retention(2)}; "
        + insert("LC.SIM.NP", ROWS),
        12: "TRUNCATE TABLE LC.SIM.NT",
        15: f"CREATE OR REPLACE TRANSIENT TABLE LC.SIM.NT {COLUMNS}; " + insert("LC.SIM.NT", ROWS),
    }
    daily = {
        0: "DELETE FROM {t} WHERE ID = " + str(98 + day),
        1: insert("{t}", [(100 + day, f"n{day}")]),
        2: "UPDATE {t} SET V = 'u" + str(day) + "' WHERE ID % 2 = " + str(day % 2),
    }[day % 3]
    text = "; ".join([daily.format(t=t) for t in ("LC.SIM.NP", "LC.SIM.NT")])
    return lambda w: w.sql(at(day), "; ".join(filter(None, [text, special.get(day)])))


WORLD_EVENTS: list[Event] = [
    (at(0), create_everything),
    (at(1), change_on_day1),
    statement(at(1, 18), "ALTER TABLE LC.R9.UP SET DATA_RETENTION_TIME_IN_DAYS = 4"),
    statement(at(2), "ALTER SCHEMA LC.R10 SET DATA_RETENTION_TIME_IN_DAYS = 10"),
    statement(at(2), "DROP SCHEMA LC.R11"),
    (at(2, 12, 30), pin),
    (at(2, 13, 5), lambda w: pins.release([w.notes["pin PINR"]])),
    update(at(3), "DOWN2", "LC.R9.DOWN", "ID = 2"),
    statement(at(3), "ALTER SCHEMA LC.R10 SET DATA_RETENTION_TIME_IN_DAYS = 0"),
    statement(at(4), "ALTER TABLE LC.R9.DOWN SET DATA_RETENTION_TIME_IN_DAYS = 2"),
    *[note(at(9, 14), f"rows {c}", f"SELECT ID, V FROM LC.MISC.{c} ORDER BY ID") for c in CLONES],
    (at(9, 14), lambda w: w.notes.update({"view day 9": w.view(at(9, 14))})),
    statement(at(10), "ALTER TABLE LC.R9.CUT SET DATA_RETENTION_TIME_IN_DAYS = 1"),
    statement(at(10), "DROP TABLE LC.MISC.CL"),
    *[(at(day), churn(day)) for day in range(1, DAYS)],
    (at(DAYS - 1, 14), lambda w: w.notes.update({"view last": w.view(at(DAYS - 1, 14))})),
    (
        at(DAYS - 1, 14),
        lambda w: w.notes.update(
            {
                "bigquery view": w.sql(
                    at(DAYS - 1, 14),
                    "SELECT * FROM `region-us`.INFORMATION_SCHEMA.TABLE_STORAGE",
                    "bigquery",
                )[-1]
            }
        ),
    ),
]
# Day 0 starts with the tables (an empty home is tested on its own), so from 13:00.
WORLD_RUNS = [*[at(d, h) for d in range(DAYS) for h in (11, 13)][1:], at(2, 13, 10), at(2, 14, 30)]


@pytest.fixture(scope="module")
def world(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = play(World(tmp_path_factory.mktemp("world") / "home"), WORLD_EVENTS, WORLD_RUNS)
    yield built
    built.close()


# -- the late job ------------------------------------------------------------------------

LATE_END = at(2)  # the window of the day-1 changes (retention 1) ends here
LATE_RUNS = [at(2, 11), at(5), at(9, 11), at(9, 13)]
BEFORE_CHANGE = format_timestamp(at(1, 11))


LATE_TABLES = {"LATE": "TABLE", "LATET": "TRANSIENT TABLE", "LOST": "TABLE"}


def late_setup(w: World) -> None:
    statements = ["CREATE DATABASE LT"]
    for table, kind in LATE_TABLES.items():
        statements += [
            f"CREATE {kind} LT.PUBLIC.{table} {COLUMNS}",
            insert(f"LT.PUBLIC.{table}", ROWS),
        ]
    w.sql(at(0), "; ".join(statements))


def late_probes(w: World) -> None:
    """SPEC R9, R17: raise retention after the files left, then reach back for them.

    The clone and the restore reach for LOST, so that a wrong success cannot disturb
    what the other tests read of LATE.
    """
    w.sql(
        at(6),
        "ALTER TABLE LT.PUBLIC.LATE SET DATA_RETENTION_TIME_IN_DAYS = 10; "
        "ALTER TABLE LT.PUBLIC.LOST SET DATA_RETENTION_TIME_IN_DAYS = 10",
    )
    point = f"AT(TIMESTAMP => '{BEFORE_CHANGE}')"
    probes: dict[str, Callable[[Any], object]] = {
        "select": lambda c: c.sql(f"SELECT * FROM LT.PUBLIC.LATE {point}"),
        "clone": lambda c: c.sql(f"CREATE TABLE LT.PUBLIC.BACK CLONE LT.PUBLIC.LOST {point}"),
        "restore": lambda c: c.restore("LT.PUBLIC.LOST", at=BEFORE_CHANGE),
    }
    for name, probe in probes.items():
        w.notes[f"probe {name}"] = w.code_of(at(6), probe)


LATE_EVENTS: list[Event] = [
    (at(0), late_setup),
    *[update(at(1), t, f"LT.PUBLIC.{t}", "ID = 1") for t in LATE_TABLES],
    (at(6), late_probes),
    note(at(9, 14), "rows LOST", "SELECT ID, V FROM LT.PUBLIC.LOST ORDER BY ID"),
]


@pytest.fixture(scope="module")
def late(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = play(World(tmp_path_factory.mktemp("late") / "home"), LATE_EVENTS, LATE_RUNS)
    yield built
    built.close()


@pytest.fixture(scope="module", params=["world", "late"])
def history(request: pytest.FixtureRequest) -> World:
    return request.getfixturevalue(request.param)


# -- assertions shared by the tests --------------------------------------------------------


def assert_places(w: World, keys: list[Key], expected: dict[datetime, str]) -> None:
    """Each file is where ``expected`` says at each run."""
    for now, place in expected.items():
        found = {key: w.seen(now).place(key) for key in keys}
        assert found == dict.fromkeys(keys, place), f"at {now}"


def assert_leaves_at(w: World, keys: list[Key], end: datetime) -> None:
    """One hour before ``end`` the files are in time travel, one hour after in fail-safe,
    having left at ``end`` exactly, to be purged exactly 7 days later (SPEC R12, R30)."""
    assert_places(w, keys, {end - HOUR: WAREHOUSE, end + HOUR: FAILSAFE_STORE})
    for key in keys:
        assert w.seen(end + HOUR).states[key] == FileRow("FAILSAFE", end, end + FAILSAFE)


def assert_purged_at(w: World, keys: list[Key], purge: datetime) -> None:
    """One hour before ``purge`` the files are in fail-safe, one hour after gone for good,
    their catalog rows with them (SPEC R12)."""
    assert_places(w, keys, {purge - HOUR: FAILSAFE_STORE, purge + HOUR: GONE})
    assert all(key not in w.seen(purge + HOUR).states for key in keys)


# -- R8 ----------------------------------------------------------------------------------


def test_r8_retention_zero_changed_permanent_data_goes_to_failsafe_at_the_next_run(
    world: World,
) -> None:
    """SPEC R8, R12: with retention 0 the old file leaves at the first run after the
    change, into fail-safe, counted from the change itself."""
    keys, p0 = world.keys("P0"), world.id("P0")
    assert_places(world, keys, {at(1, 11): WAREHOUSE, at(1, 13): FAILSAFE_STORE})
    for key in keys:
        assert world.seen(at(1, 11)).states[key].state == "LIVE"  # not changed yet
        assert world.seen(at(1, 13)).states[key] == FileRow("FAILSAFE", at(1), at(8))
    assert world.seen(at(1, 13)).counted(p0, "TIME_TRAVEL_BYTES") == 0
    assert world.seen(at(1, 13)).counted(p0, "FAILSAFE_BYTES") == world.removed_bytes("P0")
    assert_purged_at(world, keys, at(8))


def test_r8_retention_zero_changed_transient_data_is_deleted(world: World) -> None:
    """SPEC R8, R12: transient data has no fail-safe: it is deleted at the next run."""
    keys, t0 = world.keys("T0"), world.id("T0")
    assert_places(world, keys, {at(1, 11): WAREHOUSE, at(1, 13): GONE})
    assert all(key not in world.seen(at(1, 13)).states for key in keys)
    assert world.seen(at(1, 13)).step("expire_versions")["files_deleted"] == len(keys)
    for seen, _ in world.runs.values():
        assert not any(place == FAILSAFE_STORE and t == t0 for place, t, _ in seen.disk)
        assert seen.counted(t0, "FAILSAFE_BYTES") == seen.counted(t0, "TIME_TRAVEL_BYTES") == 0


def test_r8_dropped_with_retention_zero_goes_at_once_and_cannot_be_undropped(
    world: World,
) -> None:
    """SPEC R8: a dropped table with retention 0 is not undroppable; all its files are in
    fail-safe after the next run and purged 7 days after the drop, row and all."""
    z0 = world.id("Z0")
    assert world.notes["undrop Z0"] == "CANNOT_UNDROP"
    keys = [key for key in world.seen(at(1, 11)).states if key[0] == z0]
    assert keys
    assert_places(world, keys, {at(1, 11): WAREHOUSE, at(1, 13): FAILSAFE_STORE})
    assert_purged_at(world, keys, at(8))
    row = world.seen(at(8, 11)).metrics[z0]
    assert [row[c] for c in ("DELETED", "TABLE_DROPPED", "TABLE_ENTERED_FAILSAFE")] == [
        True,
        at(1),
        at(1),
    ]
    assert z0 not in world.seen(at(8, 13)).metrics  # SPEC R33: a row until it is purged
    assert not (world.home / "warehouse" / str(z0)).exists()


# -- R9 ----------------------------------------------------------------------------------


def test_r9_raising_retention_keeps_data_for_the_longer_window(world: World) -> None:
    """SPEC R9: raised from 1 to 4 days while the old file was in time travel, it stays
    past the old end (day 2) until the new one (day 5)."""
    keys = world.keys("UP")
    assert_places(world, keys, {at(2, 11): WAREHOUSE, at(2, 13): WAREHOUSE})
    assert_leaves_at(world, keys, at(5))
    assert_purged_at(world, keys, at(12))


def test_r9_lowering_retention_moves_what_is_outside_the_new_window_at_the_next_run(
    world: World,
) -> None:
    """SPEC R9: DOWN is lowered from 5 to 2 days on day 4: the file changed on day 1 is
    outside the new window and leaves at the next run; the one changed on day 3 stays
    in time travel until its new end (day 5)."""
    outside, inside = world.keys("DOWN"), world.keys("DOWN2", "DOWN")
    assert_places(world, outside, {at(4, 11): WAREHOUSE, at(4, 13): FAILSAFE_STORE})
    assert_places(world, inside, {at(4, 13): WAREHOUSE})
    assert_leaves_at(world, inside, at(5))


def test_r9_r12_lowered_retention_still_gets_seven_days_of_failsafe(world: World) -> None:
    """SPEC R9, R12: data that was in time travel until the retention was lowered stays
    in fail-safe for 7 days from then. CUT (10 days, changed on day 1) is lowered to 1
    day on day 10: its old window would have ended on day 2 and its fail-safe on day 9,
    yet it was in time travel until day 10, so it is purged on day 17, not at once."""
    cut = world.keys("CUT")
    assert_places(world, cut, {at(10, 11): WAREHOUSE, at(10, 13): FAILSAFE_STORE})
    assert_purged_at(world, cut, at(17))
    assert_purged_at(world, world.keys("DOWN"), at(11))  # lowered on day 4


def test_r9_data_in_failsafe_never_comes_back(late: World) -> None:
    """SPEC R9, R12: raising retention after a file left time travel (day 6) does not
    bring it back: it stays in fail-safe, counted as fail-safe, until its purge."""
    keys, table = late.keys("LATE"), late.id("LATE")
    seen = late.seen(at(9, 11))  # the first run after the raise
    assert [seen.place(k) for k in keys] == [FAILSAFE_STORE] * len(keys)
    assert seen.counted(table, "TIME_TRAVEL_BYTES") == 0
    assert seen.counted(table, "FAILSAFE_BYTES") == late.removed_bytes("LATE")


# -- R10, R11 ----------------------------------------------------------------------------


def test_r10_dropped_table_keeps_the_retention_it_had_at_drop(world: World) -> None:
    """SPEC R10: GONE inherited 3 days from its schema when dropped on day 1. The schema
    is then raised to 10 (day 2) and lowered to 0 (day 3): GONE still leaves on day 4,
    while its live sibling SIB follows the schema and leaves at the run after day 3."""
    gone = world.id("GONE")
    keys = [key for key in world.seen(at(1, 13)).states if key[0] == gone]
    assert_places(world, keys, {at(3, 13): WAREHOUSE})
    assert_leaves_at(world, keys, at(4))
    assert_places(world, world.keys("SIB"), {at(3, 11): WAREHOUSE, at(3, 13): FAILSAFE_STORE})
    before, after = world.seen(at(4, 11)).metrics[gone], world.seen(at(4, 13)).metrics[gone]
    assert (before["DELETED"], before["TABLE_DROPPED"]) == (True, at(1))
    assert (before["TABLE_ENTERED_FAILSAFE"], after["TABLE_ENTERED_FAILSAFE"]) == (None, at(4))
    assert before["TIME_TRAVEL_BYTES"] == after["FAILSAFE_BYTES"] > 0
    assert_purged_at(world, keys, at(11))


def test_r11_dropped_schema_retains_children_for_its_own_retention(world: World) -> None:
    """SPEC R11: LC.R11 (2 days) is dropped on day 2: A (own 5 days) and B (own 0) both
    leave on day 4; C, dropped on its own on day 1 with 4 days, keeps those (day 5)."""
    a, b, c = (
        [key for key in world.seen(at(0, 13)).states if key[0] == world.id(t)]
        for t in ("A", "B", "C")
    )
    assert_places(world, a + b, {at(2, 13): WAREHOUSE})
    assert_leaves_at(world, a + b, at(4))
    assert_places(world, c, {at(4, 13): WAREHOUSE})
    assert_leaves_at(world, c, at(5))


# -- R12 ---------------------------------------------------------------------------------


def test_r12_failsafe_lasts_exactly_seven_days_for_every_file(history: World) -> None:
    """SPEC R12, R31: every file that entered fail-safe was in the warehouse before its
    window ended, in fail-safe from the run that moved it until its purge date exactly
    7 days after the window's end, and nowhere in fail-safe after it."""
    seen = [first for first, _ in history.runs.values()]
    entered = {key: row for s in seen for key, row in s.states.items() if row.state == "FAILSAFE"}
    assert entered
    for key, row in entered.items():
        assert row.purge_at - row.left_time_travel_at == FAILSAFE, key
        moved = min(s.now for s in seen if s.place(key) == FAILSAFE_STORE)
        for s in seen:
            if s.now < row.left_time_travel_at:
                assert s.place(key) != FAILSAFE_STORE, (key, s.now)  # nothing moved early
            elif moved <= s.now < row.purge_at:
                assert s.place(key) == FAILSAFE_STORE, (key, s.now)
            elif s.now >= row.purge_at:
                assert s.place(key) == GONE, (key, s.now)


def test_r12_a_late_job_does_not_move_the_purge_date(late: World) -> None:
    """SPEC R12: the window ends on day 2 at noon; the job runs an hour before, then not
    until three days later. The file leaves then, but its fail-safe is still counted
    from the end of the window: it is purged on day 9 at noon. Transient data is deleted."""
    keys = late.keys("LATE")
    assert_places(late, keys, {at(2, 11): WAREHOUSE, at(5): FAILSAFE_STORE})
    for key in keys:
        row = late.seen(at(5)).states[key]
        assert (row.left_time_travel_at, row.purge_at) == (LATE_END, LATE_END + FAILSAFE)
    assert_purged_at(late, keys, LATE_END + FAILSAFE)
    assert_places(late, late.keys("LATET"), {at(2, 11): WAREHOUSE, at(5): GONE})


# -- R13 ---------------------------------------------------------------------------------


def test_r13_one_changed_row_keeps_its_whole_file(world: World) -> None:
    """SPEC R13: updating one row of a multi-row file keeps the whole old file, every
    byte of it, in time travel and then in fail-safe; the other files stay active."""
    keys, r13 = world.keys("R13"), world.id("R13")
    [old] = world.removed["R13"].values()
    assert old.num_records > 1
    before, after = world.seen(at(2, 11)), world.seen(at(2, 13))
    assert [before.disk[(WAREHOUSE, *k)][2] for k in keys] == [old.size]
    assert before.counted(r13, "TIME_TRAVEL_BYTES") == old.size
    assert [after.disk[(FAILSAFE_STORE, *k)][2] for k in keys] == [old.size]
    assert after.counted(r13, "FAILSAFE_BYTES") == old.size
    live = sum(f.size for f in world.files("R13").values())
    assert before.counted(r13, "ACTIVE_BYTES") == after.counted(r13, "ACTIVE_BYTES") == live


# -- R19 ---------------------------------------------------------------------------------


def test_r19_a_pin_holds_files_until_released_or_expired(world: World) -> None:
    """SPEC R19: both windows end on day 2 at noon; reads pin the old versions at 12:30
    (pins last an hour). At 13:00 both files stay; PINR's read ends at 13:05 and its
    file leaves at the 13:10 run; PINX's pin expires at 13:30, its file leaves at 14:30."""
    held, released = world.keys("PINX"), world.keys("PINR")
    assert_places(world, held + released, {at(2, 11): WAREHOUSE, at(2, 13): WAREHOUSE})
    assert_places(world, released, {at(2, 13, 10): FAILSAFE_STORE})
    assert_places(world, held, {at(2, 13, 10): WAREHOUSE, at(2, 14, 30): FAILSAFE_STORE})


# -- R30 with clones ------------------------------------------------------------------------


def test_r30_a_file_shared_with_a_clone_survives_its_owners_purge(world: World) -> None:
    """SPEC R30, R33: OWN's old file (changed day 1, fail-safe from day 2) is purged for
    OWN on day 9, but CL still uses it: its bytes stay, counted once, as OWN's
    RETAINED_FOR_CLONE_BYTES, and CL still reads it. CL is dropped on day 10; once CL's
    own fail-safe copy is purged (day 18) the bytes are gone and nothing is retained."""
    own, cl = world.id("OWN"), world.id("CL")
    [key] = world.keys("OWN")
    shared = (cl, key[1])
    size = world.removed_bytes("OWN")
    before, after = world.seen(at(9, 11)), world.seen(at(9, 13))
    assert (before.place(key), before.counted(own, "FAILSAFE_BYTES")) == (FAILSAFE_STORE, size)
    assert before.counted(own, "RETAINED_FOR_CLONE_BYTES") == 0
    assert (after.place(key), after.states[key].state) == (GONE, "RETAINED")
    assert after.place(shared) == WAREHOUSE
    assert after.disk[(WAREHOUSE, *shared)] == before.disk[(FAILSAFE_STORE, *key)]  # one inode
    assert after.counted(own, "RETAINED_FOR_CLONE_BYTES") == size
    assert after.counted(own, "FAILSAFE_BYTES") == 0
    assert world.notes["view day 9"][own]["RETAINED_FOR_CLONE_BYTES"] == size
    assert world.notes["rows CL"] == [[i, v] for i, v in ROWS]
    assert_places(world, [shared], {at(11, 11): WAREHOUSE, at(11, 13): FAILSAFE_STORE})
    assert world.seen(at(17, 13)).counted(own, "RETAINED_FOR_CLONE_BYTES") == size
    assert_purged_at(world, [shared], at(18))
    assert world.seen(at(18, 13)).counted(own, "RETAINED_FOR_CLONE_BYTES") == 0
    assert key not in world.seen(at(18, 13)).states


def test_r30_a_dropped_owner_is_retained_for_its_clone(world: World) -> None:
    """SPEC R30, R33: OWN2 is dropped on day 1 (1 day): in fail-safe on day 2, purged on
    day 9 except what CL2 shares, which OWN2 keeps counting as retained-for-clone."""
    own2 = world.id("OWN2")
    files = [key for key in world.seen(at(1, 11)).states if key[0] == own2]
    stored = sum(world.seen(at(1, 11)).disk[(WAREHOUSE, *k)][2] for k in files)
    assert_places(world, files, {at(2, 13): FAILSAFE_STORE, at(9, 13): GONE})
    row = world.seen(at(9, 13)).metrics[own2]
    assert row["DELETED"] is True
    assert [row[c] for c in BYTES] == [0, 0, 0, stored]
    assert world.notes["rows CL2"] == [[i, v] for i, v in ROWS]


# -- R33 ---------------------------------------------------------------------------------


def test_r33_every_stored_byte_is_counted_once_on_every_run(history: World) -> None:
    """SPEC R33: on every run of the history, the four byte columns summed over all table
    rows equal the bytes of the distinct inodes under warehouse/ and failsafe/, and no
    file of a table is both in its table and in fail-safe (SPEC R31)."""
    for now, pair in history.runs.items():
        for seen in pair:
            counted = sum(row[c] for row in seen.metrics.values() for c in BYTES)
            assert counted == seen.stored_bytes(), now
            both = [k for k in seen.states if seen.place(k) == f"{WAREHOUSE}+{FAILSAFE_STORE}"]
            assert not both, now


def test_r31_file_states_match_the_files_on_disk(history: World) -> None:
    """SPEC R31: a file is in its table while LIVE or REMOVED, in fail-safe while
    FAILSAFE, and only in a clone once RETAINED; no journal state survives a run."""
    expected = {
        "LIVE": WAREHOUSE,
        "REMOVED": WAREHOUSE,
        "FAILSAFE": FAILSAFE_STORE,
        "RETAINED": GONE,
    }
    for now, (seen, _) in history.runs.items():
        assert {k: seen.place(k) for k in seen.states} == {
            k: expected[row.state] for k, row in seen.states.items()
        }, now
        tracked = {(place, *key) for key in seen.states for place in (WAREHOUSE, FAILSAFE_STORE)}
        assert set(seen.disk) <= tracked, now


def test_r33_the_sql_view_shows_the_latest_run(world: World) -> None:
    """SPEC R33, R34: REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS is the latest run's rows."""
    last = world.seen(at(DAYS - 1, 13)).metrics
    view = world.notes["view last"]
    assert set(view) == set(last)
    for table_id, row in last.items():
        assert {c: view[table_id][c] for c in BYTES} == {c: row[c] for c in BYTES}
        assert view[table_id]["AS_OF"] == at(DAYS - 1, 13)


def test_r34_bigquerys_table_storage_view_has_bigquerys_columns(world: World) -> None:
    """SPEC R34: `region-us`.INFORMATION_SCHEMA.TABLE_STORAGE, as a BigQuery client names it,
    carries BigQuery's documented columns over the same figures; what Rewind does not
    measure is NULL."""
    result = world.notes["bigquery view"]
    assert result.columns[:6] == [
        "PROJECT_ID",
        "PROJECT_NUMBER",
        "TABLE_CATALOG",
        "TABLE_SCHEMA",
        "TABLE_NAME",
        "CREATION_TIME",
    ]
    rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    last = world.notes["view last"]
    by_name = {(r["TABLE_SCHEMA"], r["TABLE_NAME"], r["CREATION_TIME"]): r for r in rows}
    assert len(by_name) == len(rows) == len(last)
    for row in last.values():
        bq = by_name[(row["TABLE_SCHEMA"], row["TABLE_NAME"], row["TABLE_CREATED"])]
        assert (bq["ACTIVE_PHYSICAL_BYTES"], bq["TIME_TRAVEL_PHYSICAL_BYTES"]) == (
            row["ACTIVE_BYTES"],
            row["TIME_TRAVEL_BYTES"],
        )
        assert bq["FAIL_SAFE_PHYSICAL_BYTES"] == row["FAILSAFE_BYTES"]
        assert bq["TOTAL_PHYSICAL_BYTES"] == row["ACTIVE_BYTES"] + row["TIME_TRAVEL_BYTES"]
        assert (bq["DELETED"], bq["TABLE_DELETION_TIME"]) == (row["DELETED"], row["TABLE_DROPPED"])
        assert (bq["TOTAL_ROWS"], bq["TABLE_TYPE"]) == (None, "BASE TABLE")


# -- idempotence, steps ---------------------------------------------------------------------


def test_r31_a_second_run_at_the_same_instant_changes_nothing(history: World) -> None:
    """SPEC R31, R32: run again at the same ``now``, the lifecycle reads no commit, moves,
    deletes and purges nothing, and leaves the same states, files and metrics."""
    moved = 0
    for now, (first, second) in history.runs.items():
        moved += first.step("expire_versions")["files_moved"]
        assert second.step("expire_versions")["commits_read"] == 0, now
        assert {w: sum(s.get(w, 0) for s in second.steps) for w in WORK} == dict.fromkeys(WORK, 0)
        assert second.states == first.states, now
        assert second.disk == first.disk, now
        assert second.metrics == first.metrics, now
    assert moved > 0


def test_r29_the_steps_run_in_order_every_day(world: World) -> None:
    """SPEC R29: effective retention, expiry (find + move), purge, storage metrics,
    validation (which passed on every run: a failure raises out of run_lifecycle)."""
    assert len({now.date() for now in world.runs}) == DAYS  # every day of three weeks
    steps = [s["step"] for s in world.seen(at(1, 13)).steps]
    assert steps == [
        "effective_retention",
        "expire_versions",
        "purge_failsafe",
        "storage_metrics",
        "validate",
    ]


def test_a_lifecycle_run_on_an_empty_home_does_nothing(connect: Any, home: Path) -> None:
    """SPEC R29, R31: the first nightly run of a new account succeeds and counts nothing."""
    connect(now=format_timestamp(at(0))).close()
    steps = run_lifecycle(Config.load(home=home), at(1))
    assert steps[-2]["tables"] == 0  # storage_metrics; then validate (SPEC R29)
    assert {w: sum(s.get(w, 0) for s in steps) for w in WORK} == dict.fromkeys(WORK, 0)


# -- R17 -----------------------------------------------------------------------------------


def test_r17_time_travel_to_a_version_whose_files_left_is_unavailable(late: World) -> None:
    """SPEC R17: after the raise to 10 days, the point is inside the window but its file
    is in fail-safe: the query fails with TIME_TRAVEL_UNAVAILABLE, never file-not-found."""
    assert late.notes["probe select"] == "TIME_TRAVEL_UNAVAILABLE"


@pytest.mark.parametrize("probe", ["clone", "restore"])
def test_r17_clone_or_restore_of_a_version_whose_files_left_is_unavailable(
    late: World, probe: str
) -> None:
    """SPEC R17, R24, R12 (fail-safe data cannot be cloned or restored but by
    ACCOUNTADMIN), R28: as for a query, and the table stays readable."""
    assert late.notes[f"probe {probe}"] == "TIME_TRAVEL_UNAVAILABLE"
    assert late.notes["rows LOST"] == [[1, "x"], [2, "b"], [3, "c"]]  # after its purge
