"""The nightly DAG's first task (``rewind.operations.trigger.lifecycle_user``): who a
run acts as (SPEC R37), against a real catalog and QUERY_HISTORY read through Spark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from rewind.errors import RewindError

pytestmark = pytest.mark.spark


@dataclass
class Run:
    """The fields of Airflow's DAG run that :mod:`rewind.operations.trigger` reads."""

    run_type: str
    triggering_user_name: str | None
    dag_id: str = "rewind_nightly"
    run_id: str = "scheduled__2026-11-20T00:00:00+00:00"


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
    assert lifecycle_user(Run("scheduled", None), home, now)["acting_as"] == "REWIND_SERVICE"
    assert lifecycle_user(Run("manual", "admin"), home, now)["acting_as"] == "ADMIN"
    with pytest.raises(AccessDenied, match="requires role ACCOUNTADMIN or REWIND_LIFECYCLE"):
        lifecycle_user(Run("manual", "bob", run_id="manual__1"), home, now)
    with pytest.raises(AccessDenied, match="not mapped"):
        lifecycle_user(Run("manual", "eve", run_id="manual__2"), home, now)
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
            ("REWIND_SERVICE", None, "airflow_user=; dag_run=rewind_nightly/" + Run("", "").run_id),
            ("ADMIN", None, "airflow_user=admin; dag_run=rewind_nightly/" + Run("", "").run_id),
            ("BOB", "ACCESS_DENIED", "airflow_user=bob; dag_run=rewind_nightly/manual__1"),
            ("eve", "ACCESS_DENIED", "airflow_user=eve; dag_run=rewind_nightly/manual__2"),
        ]
    )
