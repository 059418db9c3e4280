"""``rewind_restore`` with ``dag.test()``: undrop, clone at a point and restore in place
from the trigger form, a bad form, and a user without privileges (SPEC R16, R21, R24,
R28, R37, R39).

One warehouse for the module; each run's clock (``run_after``) is later than the last.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow_restore")]

SETUP = (
    "2026-11-10T09:00:00+00:00",
    "CREATE DATABASE SHOP; CREATE TABLE ORDERS (ID INT, V VARCHAR); "
    "INSERT INTO ORDERS VALUES (1, 'a'), (2, 'b'), (3, 'c'); "
    "CREATE TABLE GONE (ID INT); INSERT INTO GONE VALUES (1), (2); "
    "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER ANALYST",
)
DELETE = ("2026-11-10T10:00:00+00:00", "USE SHOP; DELETE FROM ORDERS WHERE ID = 1")
DROP = ("2026-11-10T11:00:00+00:00", "USE SHOP; DROP TABLE GONE")
FIRST_RUN = datetime(2026, 11, 10, 12, tzinfo=UTC)
FORM = {
    "operation": "undrop",
    "object_type": "TABLE",
    "name": "",
    "point_kind": "now",
    "point_relation": "AT",
    "point_value": "",
    "target_name": "",
    "ignore_insufficient_retention": False,
}


@dataclass
class Warehouse:
    home: Path
    delete_query_id: str
    clock: datetime = FIRST_RUN

    def tick(self) -> datetime:
        """The next run's clock: one minute after the previous one."""
        self.clock += timedelta(minutes=1)
        return self.clock

    def sql(self, text: str, user: str | None = None) -> list[Any]:
        import rewind

        conn = rewind.connect(home=self.home, user=user, now=self.tick())
        try:
            return conn.sql(text)
        finally:
            conn.close()

    def count(self, reference: str) -> int:
        return int(self.sql(f"SELECT count(*) FROM {reference}")[0].rows[0][0])

    def fingerprint(self) -> tuple[int, list[tuple[str, int]]]:
        """The statement log's length and every file in the warehouse (path, size)."""
        with sqlite3.connect(self.home / "catalog.db") as db:
            (statements,) = db.execute("SELECT count(*) FROM statements").fetchone()
        files = sorted(
            (str(p.relative_to(self.home)), p.stat().st_size)
            for p in (self.home / "warehouse").rglob("*")
            if p.is_file()
        )
        return int(statements), files


@pytest.fixture(scope="module")
def warehouse(rewind_home: Path) -> Warehouse:
    import rewind

    query_ids = []
    for now, script in (SETUP, DELETE, DROP):
        conn = rewind.connect(home=rewind_home, now=now)
        try:
            query_ids.append(conn.sql(script)[-1].query_id)
        finally:
            conn.close()
    return Warehouse(rewind_home, query_ids[1])


@pytest.fixture
def restore(warehouse: Warehouse, run_dag: Callable[..., Any]) -> Callable[..., Any]:
    """``restore(**form fields)``: one run of the DAG with the form, at the next clock."""

    def _run(**fields: Any) -> Any:
        return run_dag("rewind_restore", run_after=warehouse.tick(), conf={**FORM, **fields})

    return _run


def succeeded(run: Any) -> bool:
    from airflow.sdk import DagRunState

    states = run.task_states()
    return run.dag_run.state == DagRunState.SUCCESS and set(states.values()) == {"success"}


def test_undrop_a_table(warehouse: Warehouse, restore: Callable[..., Any]) -> None:
    """SPEC R21: UNDROP brings the dropped table back with its rows; the validation
    compares them with the state when it was dropped."""
    run = restore(operation="undrop", name="shop.public.gone")
    assert succeeded(run), run.task_states()
    outcome = run.xcom("restore")
    assert outcome["statement"] == "UNDROP TABLE SHOP.PUBLIC.GONE"
    assert outcome["request"]["requested_by"] == "ADMIN"
    validated = run.xcom("validate_result")
    assert (validated["query_id"], validated["tables_checked"]) == (outcome["query_id"], 1)
    assert warehouse.count("SHOP.PUBLIC.GONE") == 2
    assert validated["message"].startswith("undrop by ADMIN: UNDROP TABLE SHOP.PUBLIC.GONE")


def test_clone_at_a_timestamp(warehouse: Warehouse, restore: Callable[..., Any]) -> None:
    """SPEC R16, R24: the clone holds the rows of the point (3, before the DELETE); the
    validation job's templated arguments are the home and the run's clock (the request
    is derived by the task from its own run, never rendered from XCom), and the request
    the restore ran is the form's, acting as the run's user (R37)."""
    run = restore(
        operation="clone",
        name="SHOP.PUBLIC.ORDERS",
        point_kind="timestamp",
        point_value="2026-11-10T09:30:00Z",
        target_name="shop.public.orders_0930",
    )
    assert succeeded(run), run.task_states()
    assert run.xcom("restore")["statement"] == (
        "CREATE TABLE SHOP.PUBLIC.ORDERS_0930 CLONE SHOP.PUBLIC.ORDERS "
        "AT(TIMESTAMP => '2026-11-10T09:30:00+00:00')"
    )
    assert run.xcom("validate_result")["tables_checked"] == 1
    assert warehouse.count("SHOP.PUBLIC.ORDERS_0930") == 3
    assert warehouse.count("SHOP.PUBLIC.ORDERS") == 2  # the source is untouched
    args = run.rendered("validate_result")["application_args"]
    assert args == ["--home", str(warehouse.home), "--now", str(run.dag_run.run_after)]
    assert run.xcom("restore")["request"] == {
        **FORM,
        "operation": "clone",
        "name": "SHOP.PUBLIC.ORDERS",
        "point_kind": "timestamp",
        "point_value": "2026-11-10T09:30:00+00:00",
        "target_name": "SHOP.PUBLIC.ORDERS_0930",
        "requested_by": "ADMIN",  # from the run's trigger, not from the form (SPEC R37)
        "query_tag": f"airflow_user=dag_test; try=1; dag_run=rewind_restore/{run.dag_run.run_id}",
    }


def test_restore_in_place_before_a_statement(
    warehouse: Warehouse, restore: Callable[..., Any]
) -> None:
    """SPEC R16: restore in place BEFORE the DELETE gives the table its 3 rows back as a new
    version of the same table; the state it replaced stays in its history."""
    run = restore(
        operation="restore_in_place",
        name="SHOP.PUBLIC.ORDERS",
        point_kind="statement",
        point_relation="BEFORE",
        point_value=warehouse.delete_query_id,
    )
    assert succeeded(run), run.task_states()
    restored = run.xcom("restore")
    assert run.xcom("validate_result")["tables_checked"] == 1
    assert warehouse.count("SHOP.PUBLIC.ORDERS") == 3
    assert warehouse.count(f"SHOP.PUBLIC.ORDERS BEFORE(STATEMENT => '{restored['query_id']}')") == 2


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (
            {
                "operation": "restore_in_place",
                "object_type": "SCHEMA",
                "name": "SHOP.PUBLIC",
                "point_kind": "offset",
                "point_value": "-60",
            },
            "UNSUPPORTED",
        ),
        ({"operation": "clone", "name": "SHOP.PUBLIC.ORDERS"}, "INVALID_VALUE"),
    ],
)
def test_bad_form_fails_fast_and_changes_nothing(
    warehouse: Warehouse,
    restore: Callable[..., Any],
    fields: dict[str, Any],
    reason: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SPEC R39: a bad form fails its first task with a coded reason; no Spark job runs and
    the warehouse and the statement log stay as they were (R28)."""
    before = warehouse.fingerprint()
    run = restore(**fields)
    assert run.task_states() == {
        "validate_form": "failed",
        "restore": "upstream_failed",
        "validate_result": "upstream_failed",
    }
    assert f"{reason}: Restore form:" in capsys.readouterr().out  # the task log
    assert warehouse.fingerprint() == before


def test_a_user_without_privileges_is_refused(
    warehouse: Warehouse,
    restore: Callable[..., Any],
    trigger_as: Callable[[str], None],
) -> None:
    """SPEC R37: the operation runs as the Rewind user of the Airflow user who triggered
    it, so ANALYST, who holds nothing on the source, cannot clone it: the job fails as
    for a missing table (no existence leak) and creates nothing. QUERY_HISTORY names the
    Airflow user in the statement's query tag."""
    trigger_as("ANALYST")
    run = restore(operation="clone", name="SHOP.PUBLIC.ORDERS", target_name="SHOP.PUBLIC.STOLEN")
    assert run.task_states()["restore"] == "failed"
    names = warehouse.sql("SHOW TABLES IN SCHEMA SHOP.PUBLIC")[0].column("name")
    assert "STOLEN" not in names and "ORDERS" in names
    assert history(warehouse, run)[-1][:3] == ("ANALYST", "FAIL", "OBJECT_NOT_FOUND")


UNDROP_GONE2 = (
    {"operation": "undrop", "name": "SHOP.PUBLIC.GONE2"},
    "UNDROP TABLE SHOP.PUBLIC.GONE2",
)
RESTORE_ORDERS = (
    {
        "operation": "restore_in_place",
        "name": "SHOP.PUBLIC.ORDERS",
        "point_kind": "offset",
        "point_value": "-60",
    },
    "RESTORE TABLE SHOP.PUBLIC.ORDERS AT(OFFSET => -60)",
)


@pytest.mark.parametrize(
    ("mapping", "typed", "user", "request_"),
    [
        # unmapped: refused as nobody
        ('{"someone_else": "ADMIN"}', None, "dag_test", UNDROP_GONE2),
        # mapped to a user Rewind does not know
        ('{"dag_test": "GHOST"}', None, "GHOST", UNDROP_GONE2),
        # the form names someone else
        ('{"dag_test": "ANALYST"}', "ADMIN", "ANALYST", UNDROP_GONE2),
        ('{"dag_test": "ANALYST"}', "ADMIN", "ANALYST", RESTORE_ORDERS),
    ],
    ids=["unmapped", "unknown-user", "typed-admin", "typed-admin-restore"],
)
def test_identity_comes_from_the_trigger_never_from_the_form(
    warehouse: Warehouse,
    restore: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    mapping: str,
    typed: str | None,
    user: str,
    request_: tuple[dict[str, str], str],
) -> None:
    """SPEC R37, R36: whatever the form says, a run acts as the Rewind user mapped from
    the Airflow user who triggered it; a trigger no Rewind user answers to, or a form that
    names another user (ADMIN), is refused in validate_form before any Spark job runs,
    changes nothing, and the request and its refusal are in QUERY_HISTORY with the
    Airflow user named."""
    monkeypatch.setenv("REWIND_AIRFLOW_USERS", mapping)
    files = warehouse.fingerprint()[1]
    extra = {"requested_by": typed} if typed else {}
    form, text = request_
    run = restore(**form, **extra)
    assert run.task_states()["validate_form"] == "failed"
    assert run.task_states()["restore"] == "upstream_failed"
    assert warehouse.fingerprint()[1] == files
    logged = history(warehouse, run)
    assert len(logged) == 1
    assert logged[0][:3] in ((user, "FAIL", "ACCESS_DENIED"), (user, "FAIL", "UNKNOWN_USER"))
    assert logged[0][3] == text


def history(warehouse: Warehouse, run: Any) -> list[tuple[Any, ...]]:
    """QUERY_HISTORY rows of one DAG run (its query tag): user, status, code, text."""
    tag = f"airflow_user=dag_test; try=_; dag_run=rewind_restore/{run.dag_run.run_id}"
    result = warehouse.sql(
        "SELECT USER_NAME, EXECUTION_STATUS, ERROR_CODE, QUERY_TEXT "
        "FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
        f"WHERE QUERY_TAG LIKE '{tag}' ORDER BY START_TIME"
    )[0]
    return [tuple(row) for row in result.rows]


def test_a_clone_of_now_of_a_table_unchanged_for_longer_than_its_retention(
    warehouse: Warehouse, restore: Callable[..., Any]
) -> None:
    """Issue 25 (SPEC R16, R17): two days after ORDERS last changed (retention 1 day), a
    clone of now succeeds and so does its validation, which reads the source as the
    clone read it (``AT(STATEMENT => clone)``: the statement's time is in the window,
    though the version it read was committed before it). Runs last: it moves the clock."""
    warehouse.clock += timedelta(days=2)
    run = restore(operation="clone", name="SHOP.PUBLIC.ORDERS", target_name="SHOP.PUBLIC.NOW")
    assert succeeded(run), run.task_states()
    assert run.xcom("validate_result")["tables_checked"] == 1
    assert warehouse.count("SHOP.PUBLIC.NOW") == warehouse.count("SHOP.PUBLIC.ORDERS")
