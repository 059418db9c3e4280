"""``rewind_nightly`` with ``dag.test()``, three nights in a row, on a simulated warehouse
(SPEC R12, R15, R29–R35).

The history is written with ``rewind.connect(now=...)`` before the first night; each
night runs the real DAG: four spark-submit jobs on ``local[2]`` and the Great
Expectations step. Every table is there for one rule, and the expected storage
metrics of every night are written out below from the SPEC, as which of each table's
data files each byte column counts.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow_nightly")]

DAY = timedelta(days=1)
# Night n is the run of logical date 2026-11-0(n+1) 00:00; its clock is data_interval_end.
NIGHTS = [datetime(2026, 11, 2, tzinfo=UTC) + n * DAY for n in range(3)]
HISTORY = [
    # Dropped 13 days before the first night, retention 1: it left time travel on
    # 10-21 and its fail-safe week ended on 10-28, so the first night moves and purges
    # it, and no night shows it (SPEC R12, R33).
    (
        "2026-10-20T09:00:00+00:00",
        "CREATE DATABASE SHOP; CREATE TABLE ANCIENT (ID INT); INSERT INTO ANCIENT VALUES (1); "
        "CREATE TABLE BASE (ID INT); INSERT INTO BASE VALUES (1)",
    ),
    # BASE's file, deleted on 10-20 with retention 1, is past its fail-safe week by the
    # first night, but the clone still uses it: it stays, RETAINED_FOR_CLONE (R30).
    ("2026-10-20T09:30:00+00:00", "USE SHOP; CREATE TABLE BASE_COPY CLONE BASE"),
    ("2026-10-20T10:00:00+00:00", "USE SHOP; DROP TABLE ANCIENT; DELETE FROM BASE"),
    # Dropped 10-26 06:00, retention 1: in fail-safe from 10-27 06:00 until 11-03 06:00,
    # so nights 1 and 2 count it as fail-safe and night 3 finds it purged.
    (
        "2026-10-26T05:00:00+00:00",
        "USE SHOP; CREATE TABLE WEEKOLD (ID INT); INSERT INTO WEEKOLD VALUES (1)",
    ),
    ("2026-10-26T06:00:00+00:00", "USE SHOP; DROP TABLE WEEKOLD"),
    (
        "2026-11-01T09:00:00+00:00",
        "USE SHOP; "
        # retention 1 (account default): the deleted row's file is in time travel on
        # night 1 and in fail-safe on nights 2 and 3.
        "CREATE TABLE ORDERS (ID INT, V VARCHAR); INSERT INTO ORDERS VALUES (1, 'a'), (2, 'b'); "
        # retention 5: its deleted file stays in time travel all three nights.
        "CREATE TABLE KEEP (ID INT) DATA_RETENTION_TIME_IN_DAYS = 5; INSERT INTO KEEP VALUES (1); "
        # transient: its deleted file leaves time travel straight out of storage (R12).
        "CREATE TRANSIENT TABLE SCRATCH (ID INT); INSERT INTO SCRATCH VALUES (1); "
        # dropped at noon with retention 1: time travel on night 1, fail-safe after.
        "CREATE TABLE OLD (ID INT); INSERT INTO OLD VALUES (1)",
    ),
    (
        "2026-11-01T10:00:00+00:00",
        "USE SHOP; DELETE FROM ORDERS WHERE ID = 1; DELETE FROM KEEP; DELETE FROM SCRATCH",
    ),
    ("2026-11-01T12:00:00+00:00", "USE SHOP; DROP TABLE OLD"),
]
LIVE, REMOVED, ALL = "live", "removed", "all"  # which of a table's data files
ACTIVE, TIME_TRAVEL = "ACTIVE_BYTES", "TIME_TRAVEL_BYTES"
FAILSAFE, FOR_CLONE = "FAILSAFE_BYTES", "RETAINED_FOR_CLONE_BYTES"
BYTE_COLUMNS = [ACTIVE, TIME_TRAVEL, FAILSAFE, FOR_CLONE]
# night -> table -> byte column -> the files it counts; columns not named count 0, and
# a table not named has no metrics row that night (purged, SPEC R33).
EXPECTED: list[dict[str, dict[str, str]]] = [
    {
        "WEEKOLD": {FAILSAFE: ALL},
        "ORDERS": {ACTIVE: LIVE, TIME_TRAVEL: REMOVED},
        "KEEP": {TIME_TRAVEL: REMOVED},
        "SCRATCH": {TIME_TRAVEL: REMOVED},
        "BASE": {FOR_CLONE: REMOVED},
        "BASE_COPY": {},  # its only file is BASE's, counted once, by BASE (R33)
        "OLD": {TIME_TRAVEL: ALL},
    },
    {
        "WEEKOLD": {FAILSAFE: ALL},
        "ORDERS": {ACTIVE: LIVE, FAILSAFE: REMOVED},
        "KEEP": {TIME_TRAVEL: REMOVED},
        "SCRATCH": {},
        "BASE": {FOR_CLONE: REMOVED},
        "BASE_COPY": {},
        "OLD": {FAILSAFE: ALL},
    },
    {
        "ORDERS": {ACTIVE: LIVE, FAILSAFE: REMOVED},
        "KEEP": {TIME_TRAVEL: REMOVED},
        "SCRATCH": {},
        "BASE": {FOR_CLONE: REMOVED},
        "BASE_COPY": {},
        "OLD": {FAILSAFE: ALL},
    },
]


@dataclass
class Night:
    """What one run of the DAG left: the run, the day's metrics rows, bytes on disk."""

    now: datetime
    run: Any
    metrics: dict[str, dict[str, Any]]  # table name -> its TABLE_STORAGE_METRICS row
    stored_bytes: int


@dataclass
class Nights:
    home: Path
    files: dict[str, dict[str, int]]  # table name -> live / removed / all -> bytes
    nights: list[Night]
    gauges: dict[str, list[float]]  # StatsD gauge name -> values received, in order


def table_files(home: Path) -> dict[str, dict[str, int]]:
    """Per table name, the bytes of its live, removed and all data files (its Delta log)."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from rewind.catalog.db import make_engine
    from rewind.catalog.models import CatalogObject
    from rewind.lifecycle.scan import commit_actions

    engine = make_engine(f"sqlite:///{home / 'catalog.db'}")
    with Session(engine) as session:
        tables = session.execute(
            select(CatalogObject.id, CatalogObject.name).where(CatalogObject.kind == "TABLE")
        ).all()
    engine.dispose()
    found = {}
    for table_id, name in tables:
        root = home / "warehouse" / str(table_id)
        added: dict[str, int] = {}
        removed: set[str] = set()
        version = 0
        while (root / "_delta_log" / f"{version:020d}.json").exists():
            for action in commit_actions(root, version):
                if "add" in action:
                    added[action["add"]["path"]] = int(action["add"]["size"])
                if "remove" in action:
                    removed.add(action["remove"]["path"])
            version += 1
        found[name] = {
            ALL: sum(added.values()),
            REMOVED: sum(size for path, size in added.items() if path in removed),
            LIVE: sum(size for path, size in added.items() if path not in removed),
        }
    return found


def stored_bytes(home: Path) -> int:
    """Bytes of the distinct data files under warehouse/ and failsafe/ (hard links once)."""
    inodes = {}
    for root in (home / "warehouse", home / "failsafe"):
        for path in root.rglob("*.parquet"):
            if "_delta_log" not in path.parts:
                stat = path.stat()
                inodes[(stat.st_dev, stat.st_ino)] = stat.st_size
    return sum(inodes.values())


def metrics_of(home: Path, now: datetime) -> dict[str, dict[str, Any]]:
    """The day's TABLE_STORAGE_METRICS rows (the Delta system table), by table name."""
    from rewind.storage.arrow_read import read_arrow

    rows = read_arrow(home / "system" / "table_storage_metrics")
    return {row["TABLE_NAME"]: row for row in rows.to_pylist() if row["AS_OF"] == now}


@pytest.fixture(scope="module")
def statsd() -> Iterator[list[str]]:
    """A UDP socket as the StatsD server, and Airflow's metrics sent to it: set up the way
    the task runner does at start-up (``dag.test()`` runs tasks without that step). The
    packets it receives, read as they come by a thread: a socket left unread through the
    three nights dropped the last nights' gauges once its buffer was full (each gauge is
    a datagram of its own)."""
    from airflow.sdk._shared.observability.metrics import stats
    from airflow.sdk._shared.observability.metrics.base_stats_logger import NoStatsLogger
    from airflow.sdk.observability.metrics import stats_utils

    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(0.2)
    packets: list[str] = []
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                packets.append(server.recv(65536).decode())

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    settings = {
        "AIRFLOW__METRICS__STATSD_ON": "True",
        "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
        "AIRFLOW__METRICS__STATSD_PORT": str(server.getsockname()[1]),
    }
    with pytest.MonkeyPatch.context() as patch:
        for name, value in settings.items():
            patch.setenv(name, value)
        stats.initialize(factory=stats_utils.get_stats_factory(), export_legacy_names=False)
        yield packets
    stats.initialize(factory=NoStatsLogger, export_legacy_names=False)
    stop.set()
    reader.join()
    server.close()


def received_gauges(packets: list[str]) -> dict[str, list[float]]:
    """``airflow.rewind.*`` gauges received, by name without the prefix, once no packet has
    come for a second."""
    count = -1
    while count != len(packets):
        count = len(packets)
        time.sleep(1)
    gauges: dict[str, list[float]] = {}
    for packet in packets[:count]:
        for line in packet.splitlines():
            name, _, rest = line.partition(":")
            value, _, kind = rest.partition("|")
            if kind == "g" and name.startswith("airflow.rewind."):
                gauges.setdefault(name.removeprefix("airflow."), []).append(float(value))
    return gauges


@pytest.fixture(scope="module")
def nights(rewind_home: Path, run_dag: Callable[..., Any], statsd: list[str]) -> Nights:
    """The history, then three nights of the DAG."""
    import rewind

    for now, script in HISTORY:
        conn = rewind.connect(home=rewind_home, now=now)
        try:
            conn.sql(script)
        finally:
            conn.close()
    files = table_files(rewind_home)
    seen = []
    for now in NIGHTS:
        run = run_dag("rewind_nightly", logical_date=now)
        seen.append(Night(now, run, metrics_of(rewind_home, now), stored_bytes(rewind_home)))
    return Nights(rewind_home, files, seen, received_gauges(statsd))


def test_every_night_succeeds(nights: Nights) -> None:
    """SPEC R29: all six steps, every night, and the validation step passed."""
    from airflow.sdk import DagRunState

    for night in nights.nights:
        assert night.run.dag_run.state == DagRunState.SUCCESS, night.run.task_states()
        assert set(night.run.task_states().values()) == {"success"}
        validation = night.run.xcom("validate")
        assert validation["failed"] == 0 and validation["passed"] == validation["expectations"]


@pytest.mark.parametrize("night", range(3))
def test_storage_metrics_follow_the_spec(nights: Nights, night: int) -> None:
    """SPEC R12, R30, R33: per table, each byte column counts the files the SPEC puts
    there that night; a purged table has no row."""
    seen = nights.nights[night]
    assert set(seen.metrics) == set(EXPECTED[night])
    for table, columns in EXPECTED[night].items():
        expected = {
            column: nights.files[table][columns[column]] if column in columns else 0
            for column in BYTE_COLUMNS
        }
        assert {c: seen.metrics[table][c] for c in BYTE_COLUMNS} == expected, table
    for table in EXPECTED[night]:  # nothing counted twice, nothing left out (R33)
        assert nights.files[table][ALL] >= sum(seen.metrics[table][c] for c in BYTE_COLUMNS)


def test_every_stored_byte_is_counted_once(nights: Nights) -> None:
    """SPEC R33: over the account, the four byte columns add up to the bytes stored."""
    for night in nights.nights:
        counted = sum(row[c] for row in night.metrics.values() for c in BYTE_COLUMNS)
        assert counted == night.stored_bytes > 0


def test_dropped_table_metrics(nights: Nights) -> None:
    """SPEC R12, R33: a dropped table's row says when it entered fail-safe: the end of its
    window (dropped at noon with retention 1), not when a night happened to run."""
    first, second, _ = nights.nights
    assert (
        first.metrics["OLD"]["DELETED"] and first.metrics["OLD"]["TABLE_ENTERED_FAILSAFE"] is None
    )
    assert second.metrics["OLD"]["TABLE_ENTERED_FAILSAFE"] == datetime(2026, 11, 2, 12, tzinfo=UTC)
    assert first.metrics["SCRATCH"]["IS_TRANSIENT"] == "YES"
    assert (
        first.metrics["ORDERS"]["IS_TRANSIENT"] == "NO" and not first.metrics["ORDERS"]["DELETED"]
    )


def test_step_summaries_are_the_tasks_xcom(nights: Nights) -> None:
    """SPEC R35: each Spark job's JSON summary is its task's XCom, with the night's work:
    night 1 moves the files of ANCIENT, WEEKOLD and BASE (BASE's is past its fail-safe
    week, the clone keeps its bytes) and purges ANCIENT; night 2 moves ORDERS' and OLD's
    files and deletes SCRATCH's (transient); night 3 purges WEEKOLD."""
    work = [
        (
            run.xcom("expire_versions")["files_moved"],
            run.xcom("expire_versions")["files_deleted"],
            run.xcom("purge_failsafe")["tables_purged"],
        )
        for run in (night.run for night in nights.nights)
    ]
    assert work == [(3, 0, 1), (2, 1, 0), (0, 0, 1)]
    storage = nights.nights[0].run.xcom("storage_metrics")
    assert storage["step"] == "storage_metrics" and storage["tables"] == len(EXPECTED[0])
    assert storage["failsafe_bytes"] == nights.files["WEEKOLD"][ALL]


def test_application_args_carry_home_clock_and_run(nights: Nights) -> None:
    """SPEC R15: the jobs get the home, the run's data_interval_end as their clock, and one
    lifecycle run id (a UUID, the catalog's 36 characters) per DAG run."""
    from rewind.operations.nightly import lifecycle_run_id

    run_ids = set()
    for night in nights.nights:
        run_id = lifecycle_run_id("rewind_nightly", night.run.dag_run.run_id)
        run_ids.add(run_id)
        for step in ("effective_retention", "expire_versions", "purge_failsafe", "storage_metrics"):
            assert night.run.rendered(step)["application_args"] == [
                *("--home", str(nights.home)),
                *("--now", str(night.now)),
                *("--run-id", run_id),
            ]
            assert night.run.xcom(step)["run_id"] == run_id
            assert night.run.rendered(step)["application"].endswith(f"spark_jobs/{step}.py")
    assert len(run_ids) == 3 and {len(r) for r in run_ids} == {36}


def test_each_run_is_recorded_with_its_steps(nights: Nights) -> None:
    """SPEC R35: the catalog keeps every run's per-step summaries (the Rewind page)."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from rewind.catalog.db import make_engine
    from rewind.catalog.models import LifecycleRun

    engine = make_engine(f"sqlite:///{nights.home / 'catalog.db'}")
    with Session(engine) as session:
        runs = {run.run_id: run for run in session.scalars(select(LifecycleRun))}
    engine.dispose()
    for night in nights.nights:
        recorded = runs[night.run.xcom("validate")["run_id"]]
        assert recorded.now == night.now
        steps = recorded.summary["steps"]
        assert [s["step"] for s in steps] == [
            "effective_retention",
            "expire_versions",
            "purge_failsafe",
            "storage_metrics",
            "validate",
        ]
        assert steps[3] == night.run.xcom("storage_metrics")


def test_metrics_table_is_an_asset(nights: Nights) -> None:
    """SPEC R35: every night's storage_metrics task updates the metrics Asset."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        events = session.scalars(
            select(AssetEvent.source_run_id)
            .join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .where(AssetModel.name == "rewind_table_storage_metrics")
        ).all()
    assert sorted(events) == sorted(night.run.dag_run.run_id for night in nights.nights)


def test_storage_figures_reach_airflow_metrics(nights: Nights) -> None:
    """SPEC R35: the account's storage figures are StatsD gauges ``rewind.storage.*``,
    one value per night, equal to the metrics table's totals; the steps' work figures
    are ``rewind.lifecycle.<step>.*``."""
    for column in BYTE_COLUMNS:
        assert nights.gauges[f"rewind.storage.{column.lower()}"] == [
            sum(row[column] for row in night.metrics.values()) for night in nights.nights
        ]
    assert nights.gauges["rewind.lifecycle.expire_versions.files_moved"] == [3, 2, 0]


def test_each_table_s_figures_reach_airflow_metrics(nights: Nights) -> None:
    """SPEC R33, R35 (issue 28 item 7): each table's four figures are StatsD gauges
    ``rewind.storage.by_table.<database>.<schema>.<table>.<figure>``, one value per night
    the table has a metrics row, equal to that row; a table purged since the night before
    (WEEKOLD on night 3) gets 0 once, then nothing."""
    expected: dict[str, list[float]] = {}
    for index, night in enumerate(nights.nights):
        before = nights.nights[index - 1].metrics if index else {}
        gone = [
            {**before[name], **dict.fromkeys(BYTE_COLUMNS, 0)}
            for name in before.keys() - night.metrics.keys()
        ]
        for row in [*night.metrics.values(), *gone]:
            place = f"{row['TABLE_CATALOG']}.{row['TABLE_SCHEMA']}.{row['TABLE_NAME']}"
            for column in BYTE_COLUMNS:
                name = f"rewind.storage.by_table.{place}.{column.lower()}"
                expected.setdefault(name, []).append(row[column])
    sent = {name: v for name, v in nights.gauges.items() if ".by_table." in name}
    assert sent == expected
    assert len(expected) == 4 * len(EXPECTED[0])
    weekold = nights.files["WEEKOLD"][ALL]
    assert sent["rewind.storage.by_table.SHOP.PUBLIC.WEEKOLD.failsafe_bytes"] == [
        weekold,
        weekold,
        0,
    ]


def test_the_view_answers_to_fail_safe_bytes(nights: Nights) -> None:
    """Issue 28 item 7: TABLE_STORAGE_METRICS answers to the brief's FAIL_SAFE_BYTES as
    well as Snowflake's FAILSAFE_BYTES, through the SQL front; ``SELECT *`` shows
    Snowflake's columns (SPEC R33) in their order, then the alias; and the last night's
    per-table gauges are the view's rows."""
    import rewind

    conn = rewind.connect(home=nights.home, now=str(NIGHTS[-1] + timedelta(hours=1)))
    try:
        named = conn.sql(
            "SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, FAIL_SAFE_BYTES, FAILSAFE_BYTES "
            "FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS WHERE FAIL_SAFE_BYTES > 0"
        )[-1]
        everything = conn.sql("SELECT * FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS")[-1]
    finally:
        conn.close()
    last = nights.nights[-1].metrics
    assert sorted(r[2] for r in named.rows) == sorted(
        name for name, row in last.items() if row[FAILSAFE] > 0
    )
    assert sorted(r[2] for r in named.rows) == ["OLD", "ORDERS"]
    for database, schema, table, alias, failsafe in named.rows:
        assert alias == failsafe == last[table][FAILSAFE] > 0
        name = f"rewind.storage.by_table.{database}.{schema}.{table}.failsafe_bytes"
        assert nights.gauges[name][-1] == alias
    assert everything.columns == [
        "ID",
        "TABLE_NAME",
        "TABLE_SCHEMA",
        "TABLE_CATALOG",
        "IS_TRANSIENT",
        *BYTE_COLUMNS,
        "DELETED",
        "TABLE_CREATED",
        "TABLE_DROPPED",
        "TABLE_ENTERED_FAILSAFE",
        "AS_OF",
        "FAIL_SAFE_BYTES",
    ]
    for values in everything.rows:
        row = dict(zip(everything.columns, values, strict=True))
        assert row["FAIL_SAFE_BYTES"] == row[FAILSAFE] == last[row["TABLE_NAME"]][FAILSAFE]
