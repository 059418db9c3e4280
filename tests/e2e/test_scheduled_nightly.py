"""A night the scheduler starts by itself acts as the service user (SPEC R37; issue 12).

``airflow standalone`` with ``rewind_nightly`` on its ``@daily`` schedule over a small
warehouse whose history ended two days ago. Unpausing the DAG is all the test does:
Airflow's scheduler creates the run of the latest midnight (run type ``scheduled``, no
triggering user), its ``authorize`` task acts as ``REWIND_SERVICE`` (role
``REWIND_LIFECYCLE``), and the run moves the file a DELETE removed into fail-safe.
QUERY_HISTORY names the service user and the scheduled run in its query tag.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from services import DAG_RUN_TIMEOUT_S, Airflow

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("spark_standalone")]

MIDNIGHT = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def at(days_before: int) -> str:
    return (MIDNIGHT - timedelta(days=days_before)).isoformat()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Retention 1 day (the default): the row deleted two days ago left time travel."""
    import rewind

    path = tmp_path_factory.mktemp("scheduled") / "rewind-home"
    with rewind.connect(home=path, now=at(3)) as conn:
        conn.sql("CREATE DATABASE SHOP; CREATE TABLE T (ID INT); INSERT INTO T VALUES (1), (2)")
    with rewind.connect(home=path, now=at(2)) as conn:
        conn.sql("DELETE FROM SHOP.PUBLIC.T WHERE ID = 1")
    return path


@pytest.fixture(scope="module")
def airflow(
    home: Path, postgres: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Airflow]:
    service = Airflow(
        tmp_path_factory.mktemp("airflow-scheduled"),
        {
            "REWIND_HOME": str(home),
            "AIRFLOW_CONN_SPARK_DEFAULT": '{"conn_type": "spark", "host": "local[2]"}',
            "REWIND_NIGHTLY_SCHEDULE": "@daily",
        },
        metadata_url=postgres.create_database("airflow_scheduled"),
    )
    try:
        service.start()
        service.cli("pools", "set", "rewind_lifecycle", "1", "Rewind lifecycle and restores")
        service.wait_ready(["rewind_nightly"])
        yield service
    finally:
        service.stop()


def scheduled_run(airflow: Airflow) -> dict[str, Any]:
    """Unpause the DAG and wait for the run the scheduler creates to end."""
    airflow.request("PATCH", "/api/v2/dags/rewind_nightly", {"is_paused": False})
    deadline = time.monotonic() + DAG_RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        runs = airflow.request("GET", "/api/v2/dags/rewind_nightly/dagRuns")["dag_runs"]
        if runs and runs[0]["state"] in ("success", "failed"):
            return dict(runs[0])
        time.sleep(3)
    airflow.fail(f"no scheduled night ended in {DAG_RUN_TIMEOUT_S}s")
    return {}


def test_the_scheduler_s_night_acts_as_the_service_user_r37(airflow: Airflow, home: Path) -> None:
    run = scheduled_run(airflow)
    run_id = run["dag_run_id"]
    assert (run["run_type"], run["triggering_user_name"]) == ("scheduled", None)
    assert run["state"] == "success", airflow.task_states("rewind_nightly", run_id)
    assert airflow.xcom("rewind_nightly", run_id, "authorize")["acting_as"] == "REWIND_SERVICE"
    assert airflow.xcom("rewind_nightly", run_id, "expire_versions")["files_moved"] == 1
    import rewind

    with rewind.connect(home=home, now=datetime.now(UTC).isoformat()) as conn:
        logged = conn.run(
            "SELECT USER_NAME, ROLE_NAME, ERROR_CODE, QUERY_TAG "
            "FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY WHERE QUERY_TEXT = 'LIFECYCLE AUTHORIZE'"
        ).rows
    # The run's six tasks (authorize, the four steps, validate) each re-derive who the run
    # acts as from the run itself, and each check is logged (issue 25). Under load Airflow
    # may retry a task (the DAG's retries): a retry checks again, as its own try.
    tries = sorted(ti["try_number"] for ti in airflow.task_instances("rewind_nightly", run_id))
    assert len(tries) == 6, tries
    tag = "airflow_user=; try={}; dag_run=rewind_nightly/" + run_id
    rows = [tuple(row) for row in logged]
    assert all(row[:3] == ("REWIND_SERVICE", "REWIND_LIFECYCLE", None) for row in rows), rows
    logged_tags = [row[3] for row in rows]
    for try_number in tries:  # every task's last try checked who the run acts as
        assert tag.format(try_number) in logged_tags, (rows, tries)
        logged_tags.remove(tag.format(try_number))
    assert all(t in {tag.format(n) for n in range(1, max(tries))} for t in logged_tags), rows
