"""Step 6 of the nightly lifecycle: data-quality validation with Great Expectations of
what each run produced (SPEC R29), and of what a restore produced (SPEC R21, R24).

One module-scoped history (``shop``): a permanent table, its clone, a transient table
and a table dropped on day 1, changed at noon and run through the lifecycle at 13:00
every night for ten nights. Every run validates as its last step. The tests that break
an expectation do it on a copy of the home (hard links kept, so the clone still shares
its source's bytes), the way it would go wrong in real life: a metrics row lost or
tampered with, a file copied back into a table directory, a fail-safe row whose purge
date was missed, an impossible retention in the plan.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from other_engines import versions
from sqlalchemy import select
from sqlalchemy.orm import Session

import rewind
from rewind.catalog.db import make_engine
from rewind.catalog.models import CatalogObject, FileState, LogCursor
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.errors import RewindError, ValidationFailed
from rewind.lifecycle.metrics import BYTE_COLUMNS, metrics_path
from rewind.lifecycle.plan import plan_path, write_partition
from rewind.quality import validate_restored_table
from rewind.result import Result
from rewind.runner import STEPS, run_lifecycle, run_step, validate_run
from rewind.storage import log
from rewind.storage.arrow_read import read_arrow
from rewind.storage.delta import TableStore

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("quality")]

DAY0 = datetime(2026, 3, 2, tzinfo=UTC)
NIGHTS = range(1, 11)
CHECKS = 12
COLUMNS = "(ID INT, V VARCHAR)"
ROWS = "(1, 'a'), (2, 'b'), (3, 'c')"


def at(day: int, hour: int = 12) -> datetime:
    """Changes happen at noon, the lifecycle runs at 13:00."""
    return DAY0 + timedelta(days=day, hours=hour)


LAST = at(NIGHTS[-1], 13)


def sql(home: Path, now: datetime, text: str) -> list[Result]:
    conn = rewind.connect(home=home, now=format_timestamp(now))
    try:
        return conn.sql(text)
    finally:
        conn.close()


@dataclass
class Shop:
    """A Rewind home, its lifecycle runs, and the files each UPDATE removed."""

    home: Path
    runs: dict[datetime, list[dict[str, Any]]] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    removed: dict[str, dict[str, int]] = field(default_factory=dict)  # label -> path -> size

    @property
    def config(self) -> Config:
        return Config.load(home=self.home)

    def label(self, name: str) -> str:
        return f"SHOP.PUBLIC.{name} id {self.ids[name]}"

    def files(self, name: str) -> dict[str, int]:
        store = TableStore(self.config.warehouse_root)
        snap = store.snapshot(self.ids[name], store.latest_version(self.ids[name]))
        return {f.path: f.size for f in snap.files}

    def update(self, now: datetime, label: str, name: str, where: str) -> None:
        before = self.files(name)
        sql(self.home, now, f"UPDATE SHOP.PUBLIC.{name} SET V = 'x' WHERE {where}")
        self.removed[label] = {p: s for p, s in before.items() if p not in self.files(name)}
        assert self.removed[label], label

    @contextmanager
    def catalog(self) -> Iterator[Session]:
        """One committed catalog transaction."""
        engine = make_engine(self.config.catalog_url)
        try:
            with Session(engine) as session, session.begin():
                yield session
        finally:
            engine.dispose()

    def validation(self, now: datetime = LAST) -> dict[str, Any]:
        return self.runs[now][-1]

    def data_files(self) -> dict[str, list[Path]]:
        """Data files under warehouse/ (table data only) and failsafe/, by place."""
        places = {"warehouse": self.config.warehouse_root, "failsafe": self.config.failsafe_root}
        return {
            place: [
                f
                for f in root.rglob("*.parquet")
                if not {"_delta_log", "_rewind_staging"} & set(f.relative_to(root).parts)
            ]
            for place, root in places.items()
        }

    def stored_bytes(self) -> int:
        """Distinct inodes in both stores: what the disk really holds (SPEC R33)."""
        stats = [f.stat() for files in self.data_files().values() for f in files]
        return sum({(s.st_dev, s.st_ino): s.st_size for s in stats}.values())


def build(shop: Shop) -> Shop:
    sql(
        shop.home,
        at(0),
        f"CREATE DATABASE SHOP; USE SCHEMA SHOP.PUBLIC; "
        f"CREATE TABLE ORDERS {COLUMNS}; INSERT INTO ORDERS VALUES {ROWS}; "
        f"CREATE TRANSIENT TABLE STAGE {COLUMNS}; INSERT INTO STAGE VALUES {ROWS}; "
        f"CREATE TABLE GONE {COLUMNS}; INSERT INTO GONE VALUES {ROWS}; "
        "CREATE TABLE ORDERS_DEV CLONE ORDERS",
    )
    with shop.catalog() as session:
        shop.ids = {
            o.name: o.id
            for o in session.scalars(select(CatalogObject).where(CatalogObject.kind == "TABLE"))
        }
    for day in NIGHTS:
        if day == 1:  # the file ORDERS drops is one ORDERS_DEV still uses (SPEC R30)
            shop.update(at(1), "day 1", "ORDERS", "ID = 1")
            shop.update(at(1), "stage", "STAGE", "ID = 1")
            sql(shop.home, at(1), "DROP TABLE SHOP.PUBLIC.GONE")
        if day == 6:
            shop.update(at(6), "day 6", "ORDERS", "ID = 2")
        shop.runs[at(day, 13)] = run_lifecycle(shop.config, at(day, 13))
    return shop


@pytest.fixture(scope="module")
def shop(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Shop:
    return build(Shop(tmp_path_factory.mktemp("quality") / "home"))


def copy_home(source: Path, target: Path) -> None:
    """Copy a home keeping hard links as links (a clone shares its source's inodes)."""
    first: dict[tuple[int, int], Path] = {}
    for folder, _, files in os.walk(source):
        (target / Path(folder).relative_to(source)).mkdir(parents=True, exist_ok=True)
        for name in files:
            src = Path(folder) / name
            dst = target / src.relative_to(source)
            inode = (src.stat().st_dev, src.stat().st_ino)
            if inode in first:
                os.link(first[inode], dst)
            else:
                shutil.copy2(src, dst)
                first[inode] = dst


@pytest.fixture
def broken(shop: Shop, tmp_path: Path) -> Iterator[Shop]:
    """A copy of the history's home to break (the history itself stays valid)."""
    copy_home(shop.home, tmp_path / "home")
    yield replace(shop, home=tmp_path / "home")


def failure(shop: Shop) -> str:
    """The message validating the last run fails with."""
    run_id = shop.validation()["run_id"]
    with pytest.raises(ValidationFailed) as error:
        validate_run(shop.config, LAST, run_id)
    assert error.value.code == "VALIDATION_FAILED"
    return error.value.message


def rewrite(path: Path, column: str, value: str, change: Any) -> None:
    """Replace one partition of a system table with ``change(rows)`` (a pyarrow Table)."""
    rows = read_arrow(path, filters=[(column, "=", value)])
    write_partition(path, change(rows), column, value)


def counted(shop: Shop) -> int:
    return shop.validation()["stored_bytes"]


# -- every run passes -------------------------------------------------------------------


def test_r29_validation_is_step_6_of_every_nightly_run(shop: Shop) -> None:
    """SPEC R29: validate runs last, after the metrics, and every night's run passed all
    its expectations (a failed one would have raised out of run_lifecycle)."""
    assert list(STEPS)[-2:] == ["storage_metrics", "validate"]
    for now, steps in shop.runs.items():
        assert [s["step"] for s in steps] == list(STEPS), now
        summary = steps[-1]
        assert (summary["expectations"], summary["passed"], summary["failed"]) == (
            CHECKS,
            CHECKS,
            0,
        )


def test_r33_the_last_run_validates_with_the_expected_counts(shop: Shop) -> None:
    """SPEC R12, R29, R30, R33: the last run covers every kind of stored byte — live,
    time travel, fail-safe (the day-6 update), retained for the clone (the day-1
    update, past its fail-safe week) — and GONE, purged on day 9, is gone."""
    with shop.catalog() as session:
        states = {(r.table_id, r.path): r.state for r in session.scalars(select(FileState))}
    orders = shop.ids["ORDERS"]
    assert {states[(orders, p)] for p in shop.removed["day 1"]} == {"RETAINED"}
    assert {states[(orders, p)] for p in shop.removed["day 6"]} == {"FAILSAFE"}
    summary = shop.validation()
    observed = {r["expectation"]: r["observed"] for r in summary["results"]}
    assert observed["every live table has a metrics row"]["rows"] == 3  # ORDERS, its clone, STAGE
    assert observed["ACTIVE_BYTES is never negative"]["rows"] == 3
    # the account, SHOP, PUBLIC, ORDERS, ORDERS_DEV, GONE; STAGE is transient
    assert observed["effective retention of permanent objects is 0..90 days"]["rows"] == 6
    assert observed["effective retention of transient objects is 0..1 days"]["rows"] == 1
    assert observed["no fail-safe row is older than 7 days"]["rows"] == len(shop.removed["day 6"])
    assert observed["no expired file is left in a table directory"]["rows"] == len(
        shop.data_files()["warehouse"]
    )
    assert summary["stored_bytes"] == shop.stored_bytes() > 0
    assert observed["the byte columns add up to the stored bytes"]["value"] == shop.stored_bytes()
    assert summary["files_unread"] == 0


def test_validate_run_finds_the_run_made_at_now(shop: Shop) -> None:
    """Without a run id, the run made at ``now`` is validated; no run there is an error."""
    summary = validate_run(shop.config, LAST)
    assert (summary["run_id"], summary["passed"]) == (shop.validation()["run_id"], CHECKS)
    with pytest.raises(RewindError) as error:
        validate_run(shop.config, LAST + timedelta(minutes=1))
    assert error.value.code == "LIFECYCLE_ORDER"


def test_a_statement_after_the_metrics_is_left_to_the_next_run(broken: Shop) -> None:
    """SPEC R32: files of commits the lifecycle has not read yet are in no metrics row;
    validation leaves them to the next run instead of failing on them."""
    before = broken.files("ORDERS")
    sql(broken.home, LAST, f"INSERT INTO SHOP.PUBLIC.ORDERS VALUES {ROWS}")
    added = set(broken.files("ORDERS")) - set(before)
    summary = validate_run(broken.config, LAST, broken.validation()["run_id"])
    assert (summary["passed"], summary["files_unread"]) == (CHECKS, len(added))
    assert added


def test_a_write_not_committed_yet_is_left_out_until_delta_would_call_it_a_leftover(
    broken: Shop,
) -> None:
    """A data file in ORDERS's directory that no commit names yet (another engine's job
    still writing, SPEC R40) is left out of the checks and the stored bytes while it is
    younger than Delta's 7 days (``files_in_flight``); 8 days old by the machine's clock,
    it is a leftover no run tracked, named by the check and by the byte total."""
    stray = broken.config.warehouse_root / str(broken.ids["ORDERS"]) / "part-in-flight.parquet"
    pq.write_table(pa.table({"ID": [1]}), stray)
    run_id = broken.validation()["run_id"]
    summary = validate_run(broken.config, LAST, run_id)
    assert (summary["passed"], summary["files_in_flight"]) == (CHECKS, 1)
    assert summary["stored_bytes"] == counted(broken)
    old = (datetime.now(UTC) - timedelta(days=8)).timestamp()
    os.utime(stray, (old, old))
    assert failure(broken) == (
        f"2 of {CHECKS} expectations failed: the byte columns add up to the stored bytes "
        f"(counted {counted(broken)} bytes, stored {counted(broken) + stray.stat().st_size}); "
        f"no expired file is left in a table directory (still there: "
        f"{broken.label('ORDERS')} file part-in-flight.parquet = UNTRACKED)"
    )


@pytest.mark.parametrize(
    ("listed", "commit"),
    [("whole", True), ("half written", True), ("half written", False)],
    ids=["written-then-listed", "listed-mid-write", "listed-mid-write-never-committed"],
)
def test_a_write_a_listing_tracked_before_its_commit_landed_is_counted_once(
    broken: Shop, listed: str, commit: bool
) -> None:
    """SPEC R33, R40: another engine's job writes a data file into ORDERS's directory;
    the next night's listing (expire_versions) sees it before the commit naming it and
    tracks it as a leftover, so the night's metrics count its bytes; the commit lands
    before the validation. The validation counts the file on disk too: left out as a file
    of a commit the lifecycle has not read, it failed the byte total (the race a
    delta-spark appender beside a lifecycle run met, test_concurrent_writers.py). The
    night after reads the commit: the file is current.

    Spark writes a Delta table's data files in place, so the listing can also see the
    file half written ("listed-mid-write"): the night counted the bytes it saw, and the
    validation, finding the file grown since the listing, counts those too (it failed the
    byte total, the same appender's second race) and names ORDERS for the next run to
    list; the next night takes the commit's size, or, if the job died before its commit,
    the size its listing finds (the leftover's bytes were under-counted for good before)."""
    night = LAST + timedelta(days=1)
    orders = broken.ids["ORDERS"]
    sql(broken.home, night - timedelta(hours=1), f"INSERT INTO SHOP.PUBLIC.ORDERS VALUES {ROWS}")
    root = broken.config.warehouse_root / str(orders)
    theirs = root / "part-their-job.parquet"
    pq.write_table(pa.table({"ID": pa.array([9], pa.int32()), "V": ["z"]}), theirs)
    whole = theirs.read_bytes()
    if listed == "half written":
        theirs.write_bytes(whole[: len(whole) // 2])
    run_id = "their-commit-lands-mid-run"
    steps = [run_step(broken.config, step, run_id, night) for step in list(STEPS)[:-1]]
    assert steps[1]["leftover_files_tracked"] == 1
    theirs.write_bytes(whole)
    if commit:
        their_commit(root, theirs, night - timedelta(minutes=30))
    summary = run_step(broken.config, "validate", run_id, night)
    assert (summary["passed"], summary["files_unread"]) == (CHECKS, 0)
    assert summary["leftover_tables"] == ([orders] if listed == "half written" else [])
    assert summary["stored_bytes"] == sum(
        sum(row[c] for c in BYTE_COLUMNS)
        for row in read_arrow(metrics_path(broken.config.system_root)).to_pylist()
        if row["AS_OF"] == night
    )
    run_lifecycle(broken.config, night + timedelta(days=1))  # raises if it does not validate
    with broken.catalog() as session:
        row = session.get(FileState, (orders, theirs.name))
        assert row is not None
        assert (row.state, row.added_version, row.size) == (
            "LIVE" if commit else "REMOVED",
            -1,
            len(whole),
        )


def their_commit(root: Path, data_file: Path, at: datetime) -> None:
    """Another engine's commit adding ``data_file`` to the table at ``root``."""
    version = versions(root)[-1] + 1
    commit = [
        {
            "commitInfo": {
                "inCommitTimestamp": int(at.timestamp() * 1000),
                "operation": "WRITE",
                "engineInfo": "their-engine",
            }
        },
        {
            "add": {
                "path": data_file.name,
                "partitionValues": {},
                "size": data_file.stat().st_size,
                "modificationTime": int(data_file.stat().st_mtime * 1000),
                "dataChange": True,
            }
        },
    ]
    log.commit_file(root, version).write_text(
        "\n".join(json.dumps(action) for action in commit) + "\n"
    )


def test_an_old_leftover_no_run_could_list_yet_is_left_out_and_the_next_run_tracks_it(
    broken: Shop,
) -> None:
    """SPEC R32, R33: a failed writer's file in ORDERS's directory, 8 days old, written
    after ORDERS's last listing (9 days back here), in a table that got no commit since:
    no run could have tracked it (a run lists a directory when its table gets commits).
    The validation leaves it out of the checks and the byte total instead of failing the
    night (``leftovers_unseen``) and names ORDERS in ``leftover_tables``; the next run
    lists ORDERS though it got no commit, tracks the file, and validates with its bytes
    counted. The same file older than the last listing fails (the test above)."""
    orders = broken.ids["ORDERS"]
    stray = broken.config.warehouse_root / str(orders) / "part-failed-writer.parquet"
    pq.write_table(pa.table({"ID": [1]}), stray)
    old = (datetime.now(UTC) - timedelta(days=8)).timestamp()
    os.utime(stray, (old, old))
    size = stray.stat().st_size
    with broken.catalog() as session:
        cursor = session.get(LogCursor, orders)
        assert cursor is not None and cursor.listed_at is not None  # listed on day 6
        cursor.listed_at = datetime.now(UTC) - timedelta(days=9)
    summary = validate_run(broken.config, LAST, broken.validation()["run_id"])
    assert (summary["passed"], summary["leftovers_unseen"], summary["leftover_tables"]) == (
        CHECKS,
        1,
        [orders],
    )
    assert (summary["files_in_flight"], summary["stored_bytes"]) == (0, counted(broken))
    steps = run_lifecycle(broken.config, LAST + timedelta(days=1))
    assert steps[1]["leftover_files_tracked"] == 1
    assert (steps[-1]["leftovers_unseen"], steps[-1]["leftover_tables"]) == (0, [])
    with broken.catalog() as session:
        row = session.scalars(
            select(FileState).where(FileState.table_id == orders, FileState.path == stray.name)
        ).one()
        assert (row.size, row.added_version) == (size, -1)
        assert session.get(LogCursor, orders).listed_at > datetime.now(UTC) - timedelta(hours=1)


# -- each expectation broken the way it would break -------------------------------------


def test_r33_a_live_table_without_a_metrics_row_fails(broken: Shop) -> None:
    """SPEC R33: a lost metrics row is named; the clone's row held no bytes of its own
    (its files count for ORDERS), so the byte total still matches."""
    dev = broken.ids["ORDERS_DEV"]
    rewrite(
        metrics_path(broken.config.system_root),
        "AS_OF_DATE",
        LAST.date().isoformat(),
        lambda rows: rows.filter(pc.field("ID") != dev),
    )
    assert failure(broken) == (
        f"1 of {CHECKS} expectations failed: every live table has a metrics row "
        f"(missing: {broken.label('ORDERS_DEV')})"
    )


def test_r33_a_negative_byte_column_fails_and_breaks_the_total(broken: Shop) -> None:
    """SPEC R33: a tampered TIME_TRAVEL_BYTES is named, and the total no longer matches
    the bytes on disk."""
    orders = broken.ids["ORDERS"]
    rows = read_arrow(
        metrics_path(broken.config.system_root),
        filters=[("AS_OF_DATE", "=", LAST.date().isoformat())],
    )
    was = next(r for r in rows.to_pylist() if r["ID"] == orders)["TIME_TRAVEL_BYTES"]

    def tamper(rows: pa.Table) -> pa.Table:
        column = rows.schema.get_field_index("TIME_TRAVEL_BYTES")
        values = [
            -100 if i == orders else v
            for i, v in zip(rows["ID"].to_pylist(), rows[column].to_pylist(), strict=True)
        ]
        return rows.set_column(column, "TIME_TRAVEL_BYTES", pa.array(values, pa.int64()))

    rewrite(metrics_path(broken.config.system_root), "AS_OF_DATE", LAST.date().isoformat(), tamper)
    assert failure(broken) == (
        f"2 of {CHECKS} expectations failed: TIME_TRAVEL_BYTES is never negative "
        f"(negative: {broken.label('ORDERS')} = -100); the byte columns add up to the "
        f"stored bytes (counted {counted(broken) - was - 100} bytes, stored {counted(broken)})"
    )


@pytest.mark.parametrize(
    ("label", "state", "place"),
    [("day 6", "FAILSAFE", "failsafe"), ("day 1", "RETAINED", "clone")],
)
def test_r12_an_expired_file_copied_back_into_its_table_fails(
    broken: Shop, label: str, state: str, place: str
) -> None:
    """SPEC R12, R30, R31: a file that left time travel — in fail-safe, or purged and
    only still used by the clone — copied back into ORDERS's directory is named with
    its state, and its bytes, stored twice now, break the total; the next nightly run
    fails at step 6."""
    path, size = sorted(broken.removed[label].items())[0]
    orders, dev = broken.ids["ORDERS"], broken.ids["ORDERS_DEV"]
    roots = {
        "failsafe": broken.config.failsafe_root / str(orders),
        "clone": broken.config.warehouse_root / str(dev),
    }
    shutil.copyfile(roots[place] / path, broken.config.warehouse_root / str(orders) / path)
    assert failure(broken) == (
        f"2 of {CHECKS} expectations failed: the byte columns add up to the stored bytes "
        f"(counted {counted(broken)} bytes, stored {counted(broken) + size}); no expired "
        f"file is left in a table directory (still there: {broken.label('ORDERS')} file "
        f"{path} = {state})"
    )
    with pytest.raises(ValidationFailed):
        run_lifecycle(broken.config, at(NIGHTS[-1] + 1, 13))


def test_r12_a_failsafe_row_past_its_7_days_fails(broken: Shop) -> None:
    """SPEC R12: a fail-safe row whose purge date was set wrong outlives its 7 days."""
    path = sorted(broken.removed["day 6"])[0]
    with broken.catalog() as session:
        row = session.get(FileState, (broken.ids["ORDERS"], path))
        assert row is not None
        row.left_time_travel_at = LAST - timedelta(days=8)
    assert failure(broken) == (
        f"1 of {CHECKS} expectations failed: no fail-safe row is older than 7 days (days since it "
        f"left time travel: {broken.label('ORDERS')} file {path} = 8.0)"
    )


@pytest.mark.parametrize(
    ("table", "days", "expectation"),
    [
        ("ORDERS", 91, "effective retention of permanent objects is 0..90 days"),
        ("STAGE", 2, "effective retention of transient objects is 0..1 days"),
    ],
)
def test_r5_a_retention_out_of_range_in_the_plan_fails(
    broken: Shop, table: str, days: int, expectation: str
) -> None:
    """SPEC R5, R7: the plan holds a retention no object may have."""
    run_id, table_id = broken.validation()["run_id"], broken.ids[table]

    def tamper(rows: pa.Table) -> pa.Table:
        column = rows.schema.get_field_index("EFFECTIVE_RETENTION_DAYS")
        ids, values = rows["OBJECT_ID"].to_pylist(), rows[column].to_pylist()
        fixed = [days if i == table_id else v for i, v in zip(ids, values, strict=True)]
        return rows.set_column(column, "EFFECTIVE_RETENTION_DAYS", pa.array(fixed, pa.int64()))

    rewrite(plan_path(broken.config.system_root), "RUN_ID", run_id, tamper)
    assert failure(broken) == (
        f"1 of {CHECKS} expectations failed: {expectation} "
        f"(out of range: {broken.label(table)} = {days})"
    )


# -- a transient table's file still used by its clone ------------------------------------


def test_r33_bytes_a_transient_clone_still_shares_are_counted(connect: Any, home: Path) -> None:
    """SPEC R24, R30, R33: a transient table's changed file, deleted from its table
    after its day but still linked by the clone, is stored and must be counted."""
    connect(now=format_timestamp(at(0))).sql(
        f"CREATE DATABASE T; CREATE TRANSIENT TABLE T.PUBLIC.S {COLUMNS}; "
        f"INSERT INTO T.PUBLIC.S VALUES {ROWS}; CREATE TRANSIENT TABLE T.PUBLIC.C CLONE T.PUBLIC.S"
    )
    connect(now=format_timestamp(at(1))).sql("UPDATE T.PUBLIC.S SET V = 'x'")
    steps = run_lifecycle(Config.load(home=home), at(2, 13))  # validates (raised before)
    expire = next(s for s in steps if s["step"] == "expire_versions")
    metrics = next(s for s in steps if s["step"] == "storage_metrics")
    assert expire["files_deleted"] >= 1
    assert metrics["retained_for_clone_bytes"] > 0  # the owner keeps counting them


# -- restores ------------------------------------------------------------------------------


def test_r24_a_clone_at_a_point_has_the_rows_it_had_then(connect: Any) -> None:
    """SPEC R24: the restore DAG's check passes for a clone at a point with the count at
    that point, and fails, naming the table and both counts, with another count."""
    point = format_timestamp(at(0, 13))
    connect(now=format_timestamp(at(0))).sql(
        f"CREATE DATABASE R; CREATE TABLE R.PUBLIC.T {COLUMNS}; "
        f"INSERT INTO R.PUBLIC.T VALUES {ROWS}"
    )
    conn = connect(now=format_timestamp(at(1)))
    conn.sql("INSERT INTO R.PUBLIC.T VALUES (4, 'd')")
    expected = conn.sql(f"SELECT COUNT(*) FROM R.PUBLIC.T AT(TIMESTAMP => '{point}')")[0].rows[0][0]
    conn.sql(f"CREATE TABLE R.PUBLIC.BACK CLONE R.PUBLIC.T AT(TIMESTAMP => '{point}')")
    result = conn.sql("SELECT * FROM R.PUBLIC.BACK")[0]
    frame = pd.DataFrame(result.rows, columns=result.columns)
    summary = validate_restored_table("R.PUBLIC.BACK", frame, expected)
    assert (summary["table"], summary["passed"], expected) == ("R.PUBLIC.BACK", 1, 3)
    assert summary["results"][0]["observed"] == {"value": 3}
    with pytest.raises(ValidationFailed) as error:
        validate_restored_table("R.PUBLIC.BACK", frame, 4)
    assert error.value.message == (
        "1 of 1 expectations failed: R.PUBLIC.BACK has the rows it had at the point "
        "(3 rows, expected 4)"
    )
