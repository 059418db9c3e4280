"""Fail-safe recovery (SPEC R12, R38): ACCOUNTADMIN only, at table level, into a new table."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import RewindError
from rewind.runner import run_lifecycle

pytestmark = pytest.mark.spark

DAY = "2026-02-{:02d}T00:00:00+00:00"


def lifecycle(home: Path, day: int) -> None:
    run_lifecycle(Config.load(home=home), parse_timestamp(DAY.format(day)))


@pytest.fixture
def dropped(connect: Any, home: Path) -> int:
    """Table T (2 versions with data, retention 1 set on it) dropped on day 2: in fail-safe on
    day 4."""
    conn = connect(now=DAY.format(1))
    conn.sql(
        "CREATE DATABASE D; CREATE TABLE T (A INT, B VARCHAR) DATA_RETENTION_TIME_IN_DAYS = 1; "
        "INSERT INTO T VALUES (1, 'x'); "
        "INSERT INTO T VALUES (2, 'y')"
    )
    connect(now=DAY.format(2)).sql("DROP TABLE D.PUBLIC.T")
    lifecycle(home, 4)
    (table_id,) = connect(now=DAY.format(4)).failsafe_list().column("table_id")
    return table_id


def test_dropped_table_is_recovered_as_dropped_into_a_new_table(
    connect: Any, home: Path, dropped: int
) -> None:
    conn = connect(now=DAY.format(4))
    listed = conn.failsafe_list()
    assert listed.column("files") == [2]
    assert listed.column("next_purge_at")[0].isoformat().startswith("2026-02-10")  # R12: 3rd + 7
    conn.sql("ALTER DATABASE D SET DATA_RETENTION_TIME_IN_DAYS = 9")
    conn.failsafe_recover(dropped, "D.PUBLIC.T_BACK")
    assert conn.sql("SELECT A, B FROM D.PUBLIC.T_BACK ORDER BY A")[0].rows == [[1, "x"], [2, "y"]]
    # SPEC R12, R24: as it was, with the retention set on it (not the database's 9 days)
    assert conn.sql("SHOW TABLES LIKE 'T_BACK' IN D.PUBLIC")[0].column("retention_time") == [1]
    # The recovered table owns copies: the old fail-safe files still purge on their date.
    lifecycle(home, 10)
    assert not (home / "failsafe" / str(dropped)).exists() or not any(
        (home / "failsafe" / str(dropped)).iterdir()
    )
    assert connect(now=DAY.format(10)).sql("SELECT count(*) FROM D.PUBLIC.T_BACK")[0].rows == [[2]]


def test_an_older_version_whose_files_are_held(connect: Any, dropped: int) -> None:
    conn = connect(now=DAY.format(4))
    conn.failsafe_recover(dropped, "D.PUBLIC.T_V1", version=1)
    assert conn.sql("SELECT A FROM D.PUBLIC.T_V1")[0].rows == [[1]]


def test_recovery_errors(connect: Any, home: Path, dropped: int) -> None:
    conn = connect(now=DAY.format(4))
    for call, code in [
        (lambda: conn.failsafe_recover(999, "D.PUBLIC.X"), "OBJECT_NOT_FOUND"),
        (lambda: conn.failsafe_recover(dropped, "D.NOPE.X"), "OBJECT_NOT_FOUND"),
    ]:
        with pytest.raises(RewindError) as error:
            call()
        assert error.value.code == code
    conn.failsafe_recover(dropped, "D.PUBLIC.X")
    with pytest.raises(RewindError) as error:
        conn.failsafe_recover(dropped, "D.PUBLIC.X")
    assert error.value.code == "OBJECT_ALREADY_EXISTS"
    lifecycle(home, 11)  # purged: nothing left to recover
    with pytest.raises(RewindError) as error:
        connect(now=DAY.format(11)).failsafe_recover(dropped, "D.PUBLIC.Y")
    assert error.value.code == "NOT_RECOVERABLE"


def test_only_accountadmin_reads_failsafe(connect: Any, home: Path, dropped: int) -> None:
    """SPEC R12, R38 (users and grants come with the access issue: made here in the catalog)."""
    with sqlite3.connect(home / "catalog.db") as db:
        db.execute("INSERT INTO roles VALUES ('ANALYST', '2026-02-01 00:00:00')")
        db.execute("INSERT INTO users VALUES ('ANA', 'ANALYST', '2026-02-01 00:00:00')")
    conn = connect(now=DAY.format(4), user="ANA")
    for call in (conn.failsafe_list, lambda: conn.failsafe_recover(dropped, "D.PUBLIC.Z")):
        with pytest.raises(RewindError) as error:
            call()
        assert error.value.code == "ACCESS_DENIED"
