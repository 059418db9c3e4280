"""The platform engineer's path, end to end (SPEC R29, R33, R35; issue 5).

A Spark standalone master + worker and ``airflow standalone`` (api-server, scheduler,
dag-processor, triggerer, SQLite metadata) run on loopback with the repository's DAGs
and plugin. Everything after start-up goes through Airflow's REST API as a user would:
log in with the generated admin password, trigger ``rewind_nightly`` for the night of
the e2e warehouse (its Spark jobs run on the standalone cluster), then trigger
``rewind_restore`` with a form, wait for both to succeed, and read the Rewind views'
API as each user: it must give the night's real numbers to the admin and what its role
may see to everyone else. (The views themselves are opened in Chromium by
``tests/spark/test_plugin_browser.py``.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from other_engines import stamp, versions
from services import NOW, RESTORE_FORM, Airflow, Cluster, build_warehouse, storage_metrics

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("spark_standalone")]

DAGS = ["rewind_nightly", "rewind_restore", "rewind_failsafe_recovery"]
SPARK_STEPS = ("effective_retention", "expire_versions", "purge_failsafe", "storage_metrics")
NIGHTLY_STEPS = [
    "authorize",
    "effective_retention",
    "expire_versions",
    "purge_failsafe",
    "storage_metrics",
    "validate",
]
BYTE_COLUMNS = ["ACTIVE_BYTES", "TIME_TRAVEL_BYTES", "FAILSAFE_BYTES", "RETAINED_FOR_CLONE_BYTES"]
# The night before NOW: its data interval ends at NOW, the clock of the run (SPEC R15).
LOGICAL_DATE = "2026-05-20T00:00:00+00:00"
RESTORE_AFTER = "2026-05-21T06:00:00+00:00"


# A team's Delta table beside Rewind's own (SPEC R41): delta-rs wrote it on 2026-04-30,
# Rewind registered it on 05-01 (retention 14), delta-rs overwrote it on 05-02. On the
# night of NOW the overwritten file has left time travel and sits in fail-safe.
TEAM_TABLE = "SHOP.PUBLIC.EVENTS"


@pytest.fixture(scope="module")
def team_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lake") / "events"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, team_table: Path) -> Path:
    import rewind

    path = tmp_path_factory.mktemp("airflow-e2e") / "rewind-home"
    build_warehouse(path)
    write_deltalake(str(team_table), pa.table({"id": [1, 2, 3]}))
    stamp(team_table, 0, datetime(2026, 4, 30, tzinfo=UTC))
    with rewind.connect(home=path, now="2026-05-01T06:00:00+00:00") as conn:
        conn.sql(
            f"CREATE EXTERNAL TABLE {TEAM_TABLE} LOCATION = '{team_table.as_uri()}' "
            "TABLE_FORMAT = DELTA DATA_RETENTION_TIME_IN_DAYS = 14"
        )
    write_deltalake(str(team_table), pa.table({"id": [4]}), mode="overwrite")
    stamp(team_table, versions(team_table)[-1], datetime(2026, 5, 2, tzinfo=UTC))
    return path


@pytest.fixture(scope="module")
def airflow(
    cluster: Cluster, home: Path, postgres: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Airflow]:
    """``airflow standalone`` whose ``spark_default`` is the standalone master."""
    host, port = cluster.url.rsplit(":", 1)
    connection = f'{{"conn_type": "spark", "host": "{host}", "port": {port}}}'
    service = Airflow(
        tmp_path_factory.mktemp("airflow"),
        {
            "REWIND_HOME": str(home),
            "AIRFLOW_CONN_SPARK_DEFAULT": connection,
            # Unpausing a scheduled DAG starts the latest interval at the wall clock's
            # date; this warehouse lives in May 2026, so only the triggered night runs.
            "REWIND_NIGHTLY_SCHEDULE": "none",
        },
        metadata_url=postgres.create_database("airflow_e2e"),
    )
    try:
        service.start()
        service.cli("pools", "set", "rewind_lifecycle", "1", "Rewind lifecycle and restores")
        cluster.wait_for_worker()
        service.wait_ready(DAGS)
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="module")
def apps_before(cluster: Cluster, airflow: Airflow) -> set[str]:
    """The cluster's applications before this module's runs (the e2e modules share it)."""
    return cluster.app_ids()


@pytest.fixture(scope="module")
def nightly(airflow: Airflow, apps_before: set[str]) -> tuple[str, dict[str, Any]]:
    run_id = airflow.trigger(
        "rewind_nightly",
        {},
        logical_date=LOGICAL_DATE,
        data_interval_start=LOGICAL_DATE,
        data_interval_end=NOW,
        run_after=NOW,
    )
    return run_id, airflow.wait_run("rewind_nightly", run_id)


@pytest.fixture(scope="module")
def restore(airflow: Airflow, nightly: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    run_id = airflow.trigger("rewind_restore", RESTORE_FORM, run_after=RESTORE_AFTER)
    return run_id, airflow.wait_run("rewind_restore", run_id)


def test_nightly_run_succeeds_on_the_cluster(
    airflow: Airflow, nightly: tuple[str, dict[str, Any]], cluster: Cluster, apps_before: set[str]
) -> None:
    """SPEC R29: every step of the nightly DAG succeeded, its Spark jobs on the cluster."""
    run_id, run = nightly
    states = airflow.task_states("rewind_nightly", run_id)
    assert run["state"] == "success", states
    assert states == dict.fromkeys(NIGHTLY_STEPS, "success")
    # The steps that move and delete files run them on executors (the plan and the
    # metrics are computed from the catalog on the driver and start no application).
    apps = cluster.apps_since(apps_before, cluster.state())
    assert len(apps) >= 2 and {app["state"] for app in apps} == {"FINISHED"}
    moved = airflow.xcom("rewind_nightly", run_id, "expire_versions")
    purged = airflow.xcom("rewind_nightly", run_id, "purge_failsafe")
    assert moved["files_moved"] > 0 and purged["files_purged"] > 0


def test_the_steps_task_logs_show_their_progress(
    airflow: Airflow, nightly: tuple[str, dict[str, Any]]
) -> None:
    """Issue 28 item 6, SPEC R35: each Spark step's task log, as the UI serves it, holds
    its job's progress lines (rewind.lifecycle.progress): first its start, and one end
    with how long it took and what it did; the expire step's counts the files it moved or
    deleted."""
    run_id, _ = nightly
    shown = {step: progress_lines(airflow, run_id, step) for step in SPARK_STEPS}
    for step, lines in shown.items():
        assert lines[:1] == ["started"], (step, lines)
        assert len([line for line in lines if line.startswith("done in ")]) == 1, (step, lines)
    expired = airflow.xcom("rewind_nightly", run_id, "expire_versions")
    files = expired["files_moved"] + expired["files_deleted"]  # a transient table's: deleted
    assert f"files moved or deleted {files}/{files}" in shown["expire_versions"][-1]


def progress_lines(airflow: Airflow, run_id: str, step: str) -> list[str]:
    """What the step's Spark job reported as its progress, from its task log."""
    content = json.loads(airflow.task_log("rewind_nightly", run_id, step))["content"]
    prefix = f"lifecycle progress: {step}: "
    events = (str(line.get("event", "")) for line in content if isinstance(line, dict))
    return [event.split(prefix, 1)[1] for event in events if prefix in event]


def test_nightly_xcom_shows_the_metrics_written(
    airflow: Airflow, nightly: tuple[str, dict[str, Any]], home: Path
) -> None:
    """SPEC R33, R35: the storage_metrics task's XCom (what the UI shows) carries the
    account totals of the metrics rows the job wrote for the night."""
    run_id, _ = nightly
    summary = airflow.xcom("rewind_nightly", run_id, "storage_metrics")
    rows = [r for r in storage_metrics(home) if r["AS_OF_DATE"] == NOW[:10]]
    assert rows and summary["tables"] == len(rows)
    for column in BYTE_COLUMNS:
        assert summary[column.lower()] == sum(r[column] for r in rows), column
    assert sum(r["FAILSAFE_BYTES"] for r in rows) > 0  # the night moved data to fail-safe
    validation = airflow.xcom("rewind_nightly", run_id, "validate")
    assert validation["failed"] == 0 and validation["passed"] == validation["expectations"]


def test_the_night_protects_a_team_s_delta_table_where_it_is_r41_r42(
    airflow: Airflow, nightly: tuple[str, dict[str, Any]], home: Path, team_table: Path
) -> None:
    """The same night governs a table another engine wrote: the file its overwrite
    removed went to fail-safe (counted in FAILSAFE_BYTES), its current file and its log
    stayed at the team's location, and no other file of the team moved."""
    import rewind

    run_id, run = nightly
    assert run["state"] == "success", airflow.task_states("rewind_nightly", run_id)
    current = {Path(f).name for f in DeltaTable(str(team_table)).file_uris()}
    assert {p.name for p in team_table.glob("*.parquet")} == current  # the removed one left
    with rewind.connect(home=home, now=NOW) as conn:
        row = conn.run(
            "SELECT ACTIVE_BYTES, TIME_TRAVEL_BYTES, FAILSAFE_BYTES "
            "FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS "
            f"WHERE TABLE_CATALOG || '.' || TABLE_SCHEMA || '.' || TABLE_NAME = '{TEAM_TABLE}'"
        ).rows
        assert conn.run(f"SELECT ID FROM {TEAM_TABLE}").rows == [[4]]
        assert conn.run(f"SELECT ID FROM {TEAM_TABLE} AT(TIMESTAMP => '2026-05-08')").rows == [[4]]
    ((active, time_travel, failsafe),) = row
    assert active > 0 and time_travel == 0 and failsafe > 0
    assert DeltaTable(str(team_table)).metadata().configuration == {
        "delta.deletedFileRetentionDuration": "interval 21 days"  # 14 + a week of late nights
    }


def test_restore_through_the_form(
    airflow: Airflow, restore: tuple[str, dict[str, Any]], home: Path
) -> None:
    """SPEC R16, R21, R24: the form's restore ran as ADMIN and LONG has its row back."""
    import rewind

    run_id, run = restore
    states = airflow.task_states("rewind_restore", run_id)
    assert run["state"] == "success", states
    assert set(states.values()) == {"success"}
    conn = rewind.connect(home=home, now=RESTORE_AFTER)
    try:
        assert conn.sql("SELECT ID FROM SHOP.PUBLIC.LONG")[0].rows == [[1]]
    finally:
        conn.close()


def test_plugin_is_registered_with_a_menu_entry(airflow: Airflow) -> None:
    """The api-server loaded the plugin: its app at /rewind and its three React views (the
    Browse menu's Rewind page, a tab on DAG runs, a dashboard card; issue 29)."""
    plugins = {p["name"]: p for p in airflow.request("GET", "/api/v2/plugins")["plugins"]}
    rewind = plugins["rewind"]
    assert [app["url_prefix"] for app in rewind["fastapi_apps"]] == ["/rewind"]
    assert rewind["external_views"] == []
    assert {app["destination"]: app["name"] for app in rewind["react_apps"]} == {
        "nav": "Rewind",
        "dag_run": "Rewind lifecycle",
        "dashboard": "Rewind storage",
    }


API = "/rewind/api/v1/{}?now=" + NOW.replace("+00:00", "Z")


def rewind_api(airflow: Airflow, what: str, token: str, scope: str = "") -> tuple[int, Any]:
    """(status, JSON) of one route of the Rewind views' API as the token's user."""
    status, text = airflow.call("GET", API.format(what) + scope, token=token)
    return status, json.loads(text)


def test_the_rewind_api_answers_only_a_real_airflow_token_r37_r38(
    airflow: Airflow, nightly: tuple[str, dict[str, Any]], home: Path
) -> None:
    """The Rewind views' API checks Airflow's own token: none, a forged or a garbage one
    (header or the UI's cookie) get 401. The admin sees the night's real figures (the
    day's stack is the metrics rows the nightly run wrote), fail-safe contents, and the
    night among the runs, linked to its Airflow run, whose record has the XCom's
    figures. Each other real user of the simple auth manager (user / viewer / op: alice,
    vic, olga, role CLERK, SELECT on ORDERS) sees ORDERS alone, no dropped object, and
    is refused fail-safe contents and the runs (403)."""
    run_id, _ = nightly
    admin = airflow.token_for("admin")
    forged = admin[: admin.rindex(".") + 1] + "AAAA" + admin[admin.rindex(".") + 5 :]
    storage = API.format("storage")
    assert airflow.call("GET", storage)[0] == 401
    assert airflow.call("GET", storage, token=forged)[0] == 401
    assert airflow.call("GET", storage, token="garbage")[0] == 401
    assert airflow.call("GET", storage, Cookie=f"_token={forged}")[0] == 401
    status, everything = rewind_api(airflow, "storage", admin)
    assert (status, everything["role"]) == (200, "ACCOUNTADMIN")
    rows = [r for r in storage_metrics(home) if r["AS_OF_DATE"] == NOW[:10]]
    [night] = [day for day in everything["days"] if day["date"] == NOW[:10]]
    assert night["bytes"] == {c: sum(r[c] for r in rows) for c in BYTE_COLUMNS}
    status, failsafe = rewind_api(airflow, "failsafe", admin)
    assert status == 200 and failsafe["batches"], "fail-safe lists the night's entries"
    status, runs = rewind_api(airflow, "runs", admin)
    assert status == 200 and run_id in [r["dag_run_id"] for r in runs["runs"]]
    path = f"/rewind/api/v1/dag_runs/rewind_nightly/{quote(run_id, safe='')}"
    status, text = airflow.call("GET", path, token=admin)
    record = json.loads(text)
    assert (status, record["applies"], record["run"]["state"]) == (200, True, "success")
    moved = airflow.xcom("rewind_nightly", run_id, "expire_versions")["files_moved"]
    [step] = [s for s in record["run"]["steps"] if s["step"] == "expire_versions"]
    assert step["files_moved"] == moved > 0
    for user in ("alice", "vic", "olga"):
        token = airflow.token_for(user)
        status, seen = rewind_api(airflow, "storage", token, "&database=SHOP&schema=PUBLIC")
        assert (status, seen["viewer"], seen["role"]) == (200, user.upper(), "CLERK")
        assert [g["table"] for g in seen["groups"]] == ["ORDERS"]
        assert rewind_api(airflow, "dropped", token)[1]["dropped"] == []
        for what in ("failsafe", "runs"):
            status, refused = rewind_api(airflow, what, token)
            assert status == 403 and "ACCESS_DENIED" in refused["detail"], (user, what)


def test_a_user_cannot_act_as_admin_whatever_the_form_says_r12_r37(
    airflow: Airflow, nightly: tuple[str, dict[str, Any]], home: Path
) -> None:
    """Airflow's "user" role may trigger DAGs, but a run acts as the Rewind user of the
    Airflow user who triggered it: alice typing ADMIN into a restore form is refused
    before any Spark job, and her fail-safe recovery is refused (no ACCOUNTADMIN); both
    requests and refusals are in QUERY_HISTORY naming alice."""
    run_id = airflow.trigger(
        "rewind_restore",
        {**RESTORE_FORM, "name": "SHOP.PUBLIC.KEEP", "requested_by": "ADMIN"},
        as_user="alice",
        run_after="2026-05-21T07:00:00+00:00",  # a run id of its own
    )
    assert airflow.wait_run("rewind_restore", run_id)["state"] == "failed"
    assert airflow.task_states("rewind_restore", run_id)["validate_form"] == "failed"
    # A refusal is final: the retry policy fails it at once, no second try (SPEC R39).
    assert tries(airflow, "rewind_restore", run_id)["validate_form"] == 1
    recovery = airflow.trigger(
        "rewind_failsafe_recovery",
        {"table_id": 1, "target_name": "SHOP.PUBLIC.MINE", "requested_by": "ALICE"},
        as_user="alice",
        run_after="2026-05-21T07:00:00+00:00",
    )
    assert airflow.wait_run("rewind_failsafe_recovery", recovery)["state"] == "failed"
    states = airflow.task_states("rewind_failsafe_recovery", recovery)
    assert (states["validate_form"], states["recover"]) == ("success", "failed")
    assert tries(airflow, "rewind_failsafe_recovery", recovery)["recover"] == 1
    import rewind

    with rewind.connect(home=home, now="2026-05-21T08:00:00+00:00") as conn:
        logged = conn.run(
            "SELECT USER_NAME, ERROR_CODE, QUERY_TAG FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
            "WHERE QUERY_TAG LIKE 'airflow_user=alice;%' ORDER BY START_TIME"
        ).rows
    # Both runs have the same run id (the same trigger time): the DAG tells them apart.
    by_run = {tag.split("dag_run=", 1)[1]: (user, code) for user, code, tag in logged}
    assert by_run == {
        f"rewind_restore/{run_id}": ("ALICE", "ACCESS_DENIED"),
        f"rewind_failsafe_recovery/{recovery}": ("ALICE", "ACCESS_DENIED"),
    }


def tries(airflow: Airflow, dag_id: str, run_id: str) -> dict[str, int]:
    """How many times each task of a run was tried."""
    return {ti["task_id"]: ti["try_number"] for ti in airflow.task_instances(dag_id, run_id)}
