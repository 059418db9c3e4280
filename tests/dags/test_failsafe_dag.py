"""``rewind_failsafe_recovery`` with ``dag.test()``: ACCOUNTADMIN recovers a dropped table
from fail-safe; anyone else is refused and reads nothing (SPEC R12, R37, R38).

A table dropped on 10-01 with retention 1 leaves time travel on 10-02; the lifecycle
run of 10-03 moves it into fail-safe, where it stays until 10-09.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow_failsafe")]

HISTORY = [
    (
        "2026-10-01T09:00:00+00:00",
        "CREATE DATABASE SHOP; CREATE TABLE VICTIM (ID INT, V VARCHAR); "
        "INSERT INTO VICTIM VALUES (1, 'a'), (2, 'b'); "
        "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK; "
        "GRANT ROLE CLERK TO USER ANALYST",
    ),
    ("2026-10-01T10:00:00+00:00", "USE SHOP; DROP TABLE VICTIM"),
]
LIFECYCLE_RUN = datetime(2026, 10, 3, tzinfo=UTC)
RECOVERY = datetime(2026, 10, 4, tzinfo=UTC)


@dataclass
class Warehouse:
    home: Path
    victim_id: int

    def tables(self) -> list[str]:
        import rewind

        conn = rewind.connect(home=self.home, now=RECOVERY)
        try:
            return list(conn.sql("SHOW TABLES IN SCHEMA SHOP.PUBLIC")[0].column("name"))
        finally:
            conn.close()


@pytest.fixture(scope="module")
def warehouse(rewind_home: Path) -> Warehouse:
    """The history, then one lifecycle run in-process: VICTIM's files are in fail-safe."""
    import rewind
    from rewind.config import Config
    from rewind.runner import run_lifecycle

    results = []
    for now, script in HISTORY:
        conn = rewind.connect(home=rewind_home, now=now)
        try:
            results = conn.sql(script)
        finally:
            conn.close()
    run_lifecycle(Config.load(home=rewind_home), LIFECYCLE_RUN)
    assert list((rewind_home / "failsafe").rglob("*.parquet"))
    conn = rewind.connect(home=rewind_home, now=RECOVERY)
    try:
        victim = conn.sql("SHOW TABLES HISTORY LIKE 'VICTIM' IN SCHEMA SHOP.PUBLIC")
    finally:
        conn.close()
    assert results and victim[0].rows == []  # in fail-safe: no longer in SHOW ... HISTORY
    return Warehouse(rewind_home, _table_id(rewind_home, "VICTIM"))


def _table_id(home: Path, name: str) -> int:
    import sqlite3

    with sqlite3.connect(home / "catalog.db") as db:
        (table_id,) = db.execute(
            "SELECT id FROM objects WHERE kind = 'TABLE' AND name = ?", (name,)
        ).fetchone()
    return int(table_id)


@pytest.fixture
def recover(run_dag: Callable[..., Any]) -> Callable[..., Any]:
    def _run(**form: Any) -> Any:
        return run_dag("rewind_failsafe_recovery", run_after=RECOVERY, conf=form)

    return _run


def test_accountadmin_recovers_a_dropped_table(
    warehouse: Warehouse, recover: Callable[..., Any]
) -> None:
    """SPEC R12: ACCOUNTADMIN recovers the table in fail-safe, as it was when dropped,
    into a new table; no task lists what fail-safe holds (R38: any reader of the run
    would see it)."""
    import rewind

    run = recover(table_id=warehouse.victim_id, target_name="shop.public.victim_back")
    assert run.task_states() == dict.fromkeys(["validate_form", "recover"], "success")
    assert run.xcom("recover")["statement"] == (
        f"FAILSAFE RECOVER {warehouse.victim_id} INTO SHOP.PUBLIC.VICTIM_BACK"
    )
    assert "VICTIM'" not in str(run.xcom("validate_form")) + str(run.xcom("recover"))
    conn = rewind.connect(home=warehouse.home, now=RECOVERY)
    try:
        rows = conn.sql("SELECT * FROM SHOP.PUBLIC.VICTIM_BACK ORDER BY ID")[0].rows
    finally:
        conn.close()
    assert rows == [[1, "a"], [2, "b"]]


def test_a_rerun_of_the_recovery_reports_it_and_copies_nothing(
    warehouse: Warehouse, recover: Callable[..., Any]
) -> None:
    """Issue 25: the recover task run again for the same run (a clear, a retry) finds
    the recovery committed: it reports the first try's query id with ``already_done``,
    copies nothing, and QUERY_HISTORY logs the re-run as ALREADY_DONE with its try."""
    import rewind
    from rewind.operations.failsafe import recover as recover_task
    from rewind.operations.trigger import TaskRun

    form = {"table_id": warehouse.victim_id, "target_name": "SHOP.PUBLIC.VICTIM_ONCE"}
    first = recover(**form)
    done = first.xcom("recover")
    files = sorted(p.name for p in (warehouse.home / "warehouse").rglob("*.parquet"))
    again = recover_task(
        TaskRun(
            dag_id="rewind_failsafe_recovery",
            run_id=first.dag_run.run_id,
            run_type="manual",
            triggering_user="dag_test",
            try_number=2,
            home=str(warehouse.home),
            now=RECOVERY.isoformat(),
            params=form,
        )
    )
    assert again["already_done"] is True and again["query_id"] == done["query_id"]
    assert sorted(p.name for p in (warehouse.home / "warehouse").rglob("*.parquet")) == files
    tag = f"airflow_user=dag_test; try=2; dag_run=rewind_failsafe_recovery/{first.dag_run.run_id}"
    with rewind.connect(home=warehouse.home, now=RECOVERY) as conn:
        logged = conn.run(
            f"SELECT ERROR_CODE FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY WHERE QUERY_TAG = '{tag}'"
        ).column("ERROR_CODE")
    assert logged == ["ALREADY_DONE"]


def test_a_user_without_accountadmin_is_refused(
    warehouse: Warehouse,
    recover: Callable[..., Any],
    trigger_as: Callable[[str], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SPEC R37, R38: triggered by an Airflow user mapped to ANALYST, the library refuses
    the recovery (no ACCOUNTADMIN): it reads nothing and no table appears."""
    before = warehouse.tables()
    trigger_as("ANALYST")
    run = recover(table_id=warehouse.victim_id, target_name="SHOP.PUBLIC.MINE")
    assert run.task_states() == {"validate_form": "success", "recover": "failed"}
    assert "rewind.errors.AccessDenied: ACCESS_DENIED: " in capsys.readouterr().out
    assert warehouse.tables() == before


def test_bad_form_fails_fast(
    recover: Callable[..., Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC R39: a form without a table id fails its first task with the reason."""
    run = recover(table_id=None, target_name="SHOP.PUBLIC.X")
    assert run.task_states()["validate_form"] == "failed"
    assert "INVALID_VALUE: Recovery form: table_id" in capsys.readouterr().out
