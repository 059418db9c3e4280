"""The nightly DAG's first task (``rewind.operations.trigger.lifecycle_user``): who a
run acts as (SPEC R37), against a real catalog and QUERY_HISTORY read through Spark."""

from __future__ import annotations

from typing import Any

import pytest

from rewind.errors import RewindError

pytestmark = pytest.mark.spark


SCHEDULED = "scheduled__2026-11-20T00:00:00+00:00"


def run(run_type: str, user: str | None, home: str, run_id: str = SCHEDULED) -> Any:
    """A task's view of its nightly run (what the task reads from its own context)."""
    from rewind.operations.trigger import TaskRun

    return TaskRun(
        dag_id="rewind_nightly",
        run_id=run_id,
        run_type=run_type,
        triggering_user=user,
        try_number=1,
        home=home,
        now="2026-11-20T00:00:00+00:00",
    )


def test_a_scheduled_night_acts_as_the_service_user_r37(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nightly DAG's authorize task: a scheduled run acts as REWIND_SERVICE (role
    REWIND_LIFECYCLE, built in), which may run the lifecycle and read nothing; a manual
    run acts as its trigger's user, and one without the lifecycle's role stops there.
    Both answers are in QUERY_HISTORY with the run in the query tag."""
    import rewind
    from rewind.errors import AccessDenied
    from rewind.operations.trigger import lifecycle_user

    home, now = str(tmp_path / "home"), "2026-11-20T00:00:00+00:00"
    monkeypatch.delenv("REWIND_SERVICE_USER", raising=False)
    monkeypatch.setenv("REWIND_AIRFLOW_USERS", '{"admin": "ADMIN", "bob": "BOB"}')
    with rewind.connect(home=home, now=now) as conn:
        conn.sql("CREATE USER BOB")
    assert lifecycle_user(run("scheduled", None, home))["acting_as"] == "REWIND_SERVICE"
    assert lifecycle_user(run("manual", "admin", home))["acting_as"] == "ADMIN"
    with pytest.raises(AccessDenied, match="requires role ACCOUNTADMIN or REWIND_LIFECYCLE"):
        lifecycle_user(run("manual", "bob", home, "manual__1"))
    with pytest.raises(AccessDenied, match="not mapped"):
        lifecycle_user(run("manual", "eve", home, "manual__2"))
    with rewind.connect(home=home, now=now, user="REWIND_SERVICE") as service:
        with pytest.raises(RewindError) as refused:
            service.sql("SELECT * FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY")
        assert refused.value.code == "ACCESS_DENIED"
    with rewind.connect(home=home, now=now) as conn:
        logged = conn.sql(
            "SELECT USER_NAME, ERROR_CODE, QUERY_TAG FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
            "WHERE QUERY_TEXT = 'LIFECYCLE AUTHORIZE' ORDER BY QUERY_TAG"
        )[0].rows
    assert sorted(map(tuple, logged)) == sorted(
        [
            ("REWIND_SERVICE", None, f"airflow_user=; try=1; dag_run=rewind_nightly/{SCHEDULED}"),
            ("ADMIN", None, f"airflow_user=admin; try=1; dag_run=rewind_nightly/{SCHEDULED}"),
            ("BOB", "ACCESS_DENIED", "airflow_user=bob; try=1; dag_run=rewind_nightly/manual__1"),
            ("eve", "ACCESS_DENIED", "airflow_user=eve; try=1; dag_run=rewind_nightly/manual__2"),
        ]
    )
