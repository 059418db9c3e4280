"""``rewind restore`` and ``rewind sql --dialect bigquery`` through the installed command
(SPEC R24, R27, R39)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import at, rows

from rewind.faults import FAULT_ENV

pytestmark = pytest.mark.cli


@pytest.fixture
def cli_env() -> dict[str, str]:
    """This module runs Spark in the command's own process (no server): both paths stay
    correct (issue 14)."""
    return {"REWIND_SPARK_SERVER": "off"}


def test_restore_in_place_then_time_travel_to_the_replaced_state(
    sql: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    sql("CREATE DATABASE d; CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2)")
    sql("USE d; DELETE FROM t WHERE a = 1", hours=2)
    restored = cli(
        "restore", "d.public.t", "--before", "-3600", "--format", "json", now=at(hours=3)
    )
    assert restored.returncode == 0, restored.stderr
    (result,) = restored.json
    assert result["statement"] == "RESTORE TABLE d.public.t BEFORE(OFFSET => -3600)"
    out = sql(
        "USE d; SELECT a FROM t ORDER BY a; "
        f"SELECT a FROM t BEFORE(STATEMENT => '{result['query_id']}') ORDER BY a",
        hours=4,
    )
    assert [r["A"] for r in rows(out[1])] == [1, 2]  # the restored state
    assert [r["A"] for r in rows(out[2])] == [2]  # the replaced state, still in time travel


def test_a_restore_killed_after_its_commit_is_taken_back_and_keeps_the_data_it_restored(
    sql: Callable[..., Any], cli: Callable[..., Any], home: Path
) -> None:
    """SPEC R28, R40: the restore task killed between its Delta commit and its catalog
    transaction (an Airflow worker lost, a timeout). The next statement takes the commit
    back; that deleted the files the commit added, which for a restore are the files of
    the version it restored (still in time travel; on an external table the team's own):
    the version read fails and the restore cannot run again. Now they stay."""
    sql("CREATE DATABASE d; CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2)")
    sql("USE d; DELETE FROM t WHERE a = 1", hours=2)
    files = sorted(p.name for p in home.rglob("*.parquet"))
    killed = cli(
        "restore",
        "d.public.t",
        "--before",
        "-3600",
        now=at(hours=3),
        env={FAULT_ENV: "committed:1"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    out = sql(
        f"USE d; SELECT a FROM t ORDER BY a; SELECT a FROM t AT(TIMESTAMP => '{at(hours=1)}')",
        hours=4,
    )
    assert [r["A"] for r in rows(out[1])] == [2]  # the killed restore taken back
    assert [r["A"] for r in rows(out[2])] == [1, 2]  # the version it restored, whole
    assert sorted(p.name for p in home.rglob("*.parquet")) == files
    again = cli("restore", "d.public.t", "--at", at(hours=1), now=at(hours=5))
    assert again.returncode == 0, again.stderr
    assert [r["A"] for r in rows(sql("SELECT a FROM d.public.t ORDER BY a", hours=6)[0])] == [
        1,
        2,
    ]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["d.public.t", "--at", "2020-01-01T00:00:00Z"], "TIME_TRAVEL_UNAVAILABLE"),
        (["d.public.nope", "--at", "-60"], "OBJECT_NOT_FOUND"),
        (["d.public.t", "--at", "00000000-0000-0000-0000-000000000000"], "UNKNOWN_STATEMENT"),
        (["d.public.t", "--at", "yesterday"], "INVALID_VALUE"),
        (["t", "--at", "-60"], "NO_CURRENT_CONTAINER"),  # names the full form, not USE SCHEMA
    ],
)
def test_restore_errors_are_one_line(
    sql: Callable[..., Any], cli: Callable[..., Any], args: list[str], code: str
) -> None:
    """SPEC R39: one line on stderr with a stable code, exit 1; the table is unchanged."""
    sql("CREATE DATABASE d; CREATE TABLE t (a INT)")
    failed = cli("restore", *args, now=at(hours=1))
    assert failed.returncode == 1
    assert failed.stderr.startswith(f"error: {code}: ") and failed.stderr.count("\n") == 1
    assert "USE SCHEMA" not in failed.stderr


def test_bigquery_dataset_options_and_errors(
    sql: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    """SPEC R27: max_time_travel_hours maps to the dataset (schema) retention."""
    sql("CREATE DATABASE p; CREATE SCHEMA ds")
    ok = cli(
        "sql",
        "--dialect",
        "bigquery",
        "--format",
        "json",
        "ALTER SCHEMA p.ds SET OPTIONS (max_time_travel_hours = 96)",
        now=at(hours=1),
    )
    assert ok.returncode == 0, ok.stderr
    shown = sql("SHOW SCHEMAS LIKE 'DS' IN DATABASE p", hours=1)
    assert [r["retention_time"] for r in rows(shown[0])] == [4]
    bad = cli(
        "sql",
        "--dialect",
        "bigquery",
        "ALTER SCHEMA p.ds SET OPTIONS (max_time_travel_hours = 30)",
        now=at(hours=1),
    )
    assert bad.returncode == 1 and bad.stderr.startswith("error: INVALID_RETENTION: ")


def test_change_tracking_killed_after_its_commit_is_taken_back_keeping_every_row_r28_r40(
    sql: Callable[..., Any], cli: Callable[..., Any], home: Path
) -> None:
    """SPEC R28, R40: ``ALTER TABLE ... SET CHANGE_TRACKING = TRUE`` killed between its Delta
    commit, which re-adds the table's live files with row ids, and its catalog
    transaction. The next statement takes the commit back: its log entry, never the files
    it re-added, which are the table's data. Turned on again, it holds."""
    sql("CREATE DATABASE d; CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2)")
    files = sorted(p.name for p in home.rglob("*.parquet"))
    killed = cli(
        "sql",
        "ALTER TABLE d.public.t SET CHANGE_TRACKING = TRUE",
        now=at(hours=1),
        env={FAULT_ENV: "committed:1"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    out = sql("USE d; SELECT a FROM t ORDER BY a; SHOW TABLES LIKE 'T'", hours=2)
    assert [r["A"] for r in rows(out[1])] == [1, 2]
    assert [r["change_tracking"] for r in rows(out[2])] == ["OFF"]  # taken back
    assert sorted(p.name for p in home.rglob("*.parquet")) == files
    again = sql("USE d; ALTER TABLE t SET CHANGE_TRACKING = TRUE; SHOW TABLES LIKE 'T'", hours=3)
    assert [r["change_tracking"] for r in rows(again[2])] == ["ON"]
    out = sql(
        "USE d; DELETE FROM t WHERE a = 1; SELECT a, METADATA$ACTION FROM t "
        f"CHANGES(INFORMATION => DEFAULT) AT(TIMESTAMP => '{at(days=3.5 / 24)}')",
        hours=4,
    )
    assert [(r["A"], r["METADATA$ACTION"]) for r in rows(out[2])] == [(1, "DELETE")]
