"""Airflow is a door too (issue 25; SPEC R12, R28, R36, R37, R38, R39).

``airflow standalone`` (api-server, scheduler, dag-processor, triggerer; simple auth
manager with one user per role: admin, alice = user, olga = op, vic = viewer) runs the
repository's DAGs on loopback with Spark on ``local[1]``. Everything after start-up goes
through Airflow's REST API with each user's own token, as a person would:

- admin triggers a database clone of SECRETDB, a restore in place of PUBLICDB's NOTES
  and a fail-safe recovery of a dropped SECRETDB table; alice (whose Rewind role holds
  privileges on PUBLICDB only) triggers a clone that fails, a recovery and a night;
- before them olga (op) creates ``spark_default`` in Airflow's database, pointing at a
  master of her own: the runs still run on the workers' ``AIRFLOW_CONN_SPARK_DEFAULT``
  (Rewind never reads a connection from the database, ``dagkit.deployment_connection``);
- then every role tries every door on its own runs and on admin's: PATCH an XCom (the
  attack of the issue: ``requested_by: ADMIN``, a SECRETDB target, an admin query tag),
  clear with and without downstream, mark success and failed, set a note.

It asserts what a security review would: every statement of a run ran as the Rewind
user of the Airflow user who triggered it (QUERY_HISTORY), no committed action ran
twice, nothing reached SECRETDB or fail-safe for alice, and no XCom or task log a
viewer can read names an object the run's form did not name (the SECRETDB tables, the
fail-safe's), counts rows, or shows the home's path.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from services import Airflow

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("airflow_door")]

DAGS = ["rewind_nightly", "rewind_restore", "rewind_failsafe_recovery"]
ROLES = {"admin": "admin", "alice": "user", "olga": "op", "vic": "viewer"}
# Names only the ACCOUNTADMIN may know: no viewer-readable XCom or log may hold them.
HIDDEN = ("PAYROLL_2026", "SALARY_BANDS", "VAULT_OLD")
HISTORY = [
    (
        "2026-06-01T00:00:00+00:00",
        "CREATE DATABASE SECRETDB; CREATE TABLE SECRETDB.PUBLIC.PAYROLL_2026 (ID INT, PAY INT); "
        "INSERT INTO SECRETDB.PUBLIC.PAYROLL_2026 VALUES (1, 100), (2, 200); "
        "CREATE TABLE SECRETDB.PUBLIC.SALARY_BANDS (BAND INT); "
        "INSERT INTO SECRETDB.PUBLIC.SALARY_BANDS VALUES (1); "
        "CREATE TABLE SECRETDB.PUBLIC.VAULT_OLD (ID INT); "
        "INSERT INTO SECRETDB.PUBLIC.VAULT_OLD VALUES (7); "
        "CREATE DATABASE PUBLICDB; "
        "CREATE TABLE PUBLICDB.PUBLIC.NOTES (ID INT) DATA_RETENTION_TIME_IN_DAYS = 10; "
        "INSERT INTO PUBLICDB.PUBLIC.NOTES VALUES (1), (2), (3); "
        "CREATE ROLE CLERK; GRANT SELECT ON TABLE PUBLICDB.PUBLIC.NOTES TO ROLE CLERK; "
        "GRANT CREATE TABLE ON SCHEMA PUBLICDB.PUBLIC TO ROLE CLERK; "
        + "; ".join(
            f"CREATE USER {user} DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER {user}"
            for user in ("ALICE", "OLGA", "VIC")
        ),
    ),
    ("2026-06-01T06:00:00+00:00", "DROP TABLE SECRETDB.PUBLIC.VAULT_OLD"),
    ("2026-06-02T00:00:00+00:00", "DELETE FROM PUBLICDB.PUBLIC.NOTES WHERE ID = 3"),
]
NIGHT = "2026-06-03T00:00:00+00:00"  # VAULT_OLD (retention 1) moves into fail-safe
RUN_AT = "2026-06-04T{:02d}:00:00+00:00"  # each triggered run at its own hour
# An Op's spark_default in Airflow's database: a master nobody runs (Rewind never reads it)
OPS_MASTER = {
    "connection_id": "spark_default",
    "conn_type": "spark",
    "host": "spark://127.0.0.1",
    "port": 9,
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import rewind
    from rewind.clock import parse_timestamp
    from rewind.config import Config
    from rewind.runner import run_lifecycle

    path = tmp_path_factory.mktemp("door") / "rewind-home"
    for now, script in HISTORY:
        with rewind.connect(home=path, now=now) as conn:
            conn.sql(script)
    run_lifecycle(Config.load(home=path), parse_timestamp(NIGHT))
    return path


@pytest.fixture(scope="module")
def airflow(
    home: Path, postgres: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Airflow]:
    service = Airflow(
        tmp_path_factory.mktemp("airflow-door"),
        {
            "REWIND_HOME": str(home),
            "AIRFLOW_CONN_SPARK_DEFAULT": '{"conn_type": "spark", "host": "local[1]"}',
            "REWIND_NIGHTLY_SCHEDULE": "none",
        },
        users=ROLES,
        metadata_url=postgres.create_database("airflow_door"),
    )
    try:
        service.start()
        service.cli("pools", "set", "rewind_lifecycle", "1", "Rewind lifecycle and restores")
        service.wait_ready(DAGS)
        for dag_id in DAGS:
            service.request("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False})
        yield service
    finally:
        service.stop()


@dataclass
class Run:
    """One triggered run: who triggered it and the Rewind user it must act as."""

    dag_id: str
    run_id: str
    by: str
    acts_as: str
    form: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return f"/api/v2/dags/{self.dag_id}/dagRuns/{urllib.parse.quote(self.run_id, safe='')}"


@dataclass
class Campaign:
    runs: dict[str, Run]
    # (who, what, on which run) -> the HTTP status Airflow answered
    answers: dict[tuple[str, str, str], int]
    failsafe_id: int


RESTORE_FORM = {
    "operation": "clone",
    "object_type": "TABLE",
    "name": "",
    "point_kind": "now",
    "point_relation": "AT",
    "point_value": "",
    "target_name": "",
    "ignore_insufficient_retention": False,
}


@pytest.fixture(scope="module")
def campaign(airflow: Airflow, home: Path) -> Campaign:
    """The runs, then every role's attempt at every door, each run waited for."""
    failsafe_id = _failsafe_table_id(home)
    forms = {
        # admin: a database clone (its tables are children the form does not name)
        "admin_clone": (
            "rewind_restore",
            "admin",
            {
                **RESTORE_FORM,
                "object_type": "DATABASE",
                "name": "SECRETDB",
                "target_name": "SECRETDB_COPY",
            },
        ),
        # admin: NOTES before the DELETE, in place (a repeat would discard later changes)
        "admin_in_place": (
            "rewind_restore",
            "admin",
            {
                **RESTORE_FORM,
                "operation": "restore_in_place",
                "name": "PUBLICDB.PUBLIC.NOTES",
                "point_kind": "timestamp",
                "point_value": "2026-06-01T12:00:00+00:00",
            },
        ),
        "admin_recovery": (
            "rewind_failsafe_recovery",
            "admin",
            {"table_id": failsafe_id, "target_name": "SECRETDB.PUBLIC.VAULT_BACK"},
        ),
        # alice: a clone of a point before NOTES existed fails in its task (R17)
        "alice_clone": (
            "rewind_restore",
            "alice",
            {
                **RESTORE_FORM,
                "name": "PUBLICDB.PUBLIC.NOTES",
                "point_kind": "timestamp",
                "point_value": "2026-05-01T00:00:00+00:00",
                "target_name": "PUBLICDB.PUBLIC.MINE",
            },
        ),
        "alice_recovery": (
            "rewind_failsafe_recovery",
            "alice",
            {"table_id": failsafe_id, "target_name": "PUBLICDB.PUBLIC.MINE_TOO"},
        ),
        "alice_night": ("rewind_nightly", "alice", {}),
        "olga_night": ("rewind_nightly", "olga", {}),  # op: refused by Rewind too
    }
    answers: dict[tuple[str, str, str], int] = {}
    tokens = {user: airflow.token_for(user) for user in ROLES}
    # olga (op) points spark_default at a master of her own, in Airflow's database: the
    # workers' AIRFLOW_CONN_SPARK_DEFAULT still decides where every run below runs
    status, _ = airflow.call("POST", "/api/v2/connections", OPS_MASTER, tokens["olga"])
    answers[("olga", "edit_connection", "spark_default")] = status
    runs: dict[str, Run] = {}
    for hour, (name, (dag_id, user, form)) in enumerate(forms.items()):
        when = RUN_AT.format(hour)
        dates = {"data_interval_start": when, "data_interval_end": when, "logical_date": when}
        run_id = airflow.trigger(
            dag_id, form, as_user=user, run_after=when, **(dates if "night" in name else {})
        )
        runs[name] = Run(dag_id, run_id, user, user.upper(), form)
        ended = airflow.wait_run(dag_id, run_id)
        print(name, ended["queued_at"], ended["start_date"], ended["end_date"], ended["state"])
    for dag_id in DAGS:  # a viewer may not even trigger
        body = {"logical_date": None, "conf": {}}
        status, _ = airflow.call("POST", f"/api/v2/dags/{dag_id}/dagRuns", body, tokens["vic"])
        answers[("vic", "trigger", dag_id)] = status
    patched = {
        **RESTORE_FORM,
        "name": "SECRETDB.PUBLIC.PAYROLL_2026",
        "target_name": "PUBLICDB.PUBLIC.PAYROLL_LEAK",
        "requested_by": "ADMIN",
        "query_tag": "airflow_user=admin; dag_run=rewind_restore/whatever",
    }
    doors = [
        # the attack, then the same door on every run, by every role
        ("patch_xcom", lambda run: _patch_xcom(run, patched)),
        ("clear", lambda run: _clear(run, _action_task(run), downstream=False)),
        ("clear_downstream", lambda run: _clear(run, _first_task(run), downstream=True)),
        ("mark_success", lambda run: _mark(run, _first_task(run), "success")),
        ("note", lambda run: ("PATCH", run.path, {"note": "looked at this"})),
        ("mark_failed", lambda run: _mark(run, _action_task(run), "failed")),
    ]
    for door, call in doors:
        for user in ROLES:
            for name, run in runs.items():
                if user == "admin" and run.by != "admin":
                    continue  # admin on its own runs: a retry by the one who asked
                method, path, body = call(run)
                answers[(user, door, name)] = _answer(airflow, method, path, body, tokens[user])
            for run in runs.values():
                airflow.wait_run(run.dag_id, run.run_id)
    return Campaign(runs, answers, failsafe_id)


def _answer(airflow: Airflow, method: str, path: str, body: Any, token: str) -> int:
    """Airflow's answer to one call. A 500 is not an answer about who may do what (under
    a loaded suite the api-server can fail a write): such a call is tried again, three
    times at most."""
    for _ in range(3):
        status, text = airflow.call(method, path, body, token=token)
        if status < 500:
            return status
        print(f"{method} {path}: {status} {text[:300]}; trying again")
        time.sleep(2)
    return status


def test_a_viewer_is_refused_every_door_and_users_may_edit_runs(campaign: Campaign) -> None:
    """Airflow's own answers, so that the assertions below mean something: the viewer
    was refused every change and every trigger, and alice (user), olga (op) and admin
    could patch XComs, clear and mark tasks on every run they tried, their own and
    (alice, olga) admin's; olga could create ``spark_default`` in Airflow's database
    before the runs (which went on, on the workers' own: the tests below)."""
    for (user, door, name), status in campaign.answers.items():
        if door == "edit_connection":
            assert status == 201  # an Op may; the runs below went on on the workers' master
        elif user == "vic":
            assert status in (401, 403), (door, name, status)
        elif door == "patch_xcom" and name.endswith("_night"):
            assert status == 404  # a refused authorize task returned nothing
        elif door in ("patch_xcom", "clear", "clear_downstream", "note"):
            assert status < 300, (user, door, name, status)


def test_every_statement_of_a_run_ran_as_its_triggering_user(
    campaign: Campaign, home: Path
) -> None:
    """SPEC R36, R37: whatever was patched, cleared or marked, and by whom, each run's
    statements in QUERY_HISTORY name the Rewind user of the Airflow user who triggered
    it and that Airflow user in the query tag; alice's runs never ran as ADMIN."""
    import rewind

    with rewind.connect(home=home, now="2026-06-05T00:00:00+00:00") as conn:
        rows = conn.run(
            "SELECT USER_NAME, QUERY_TAG, QUERY_TEXT FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
            "WHERE QUERY_TAG IS NOT NULL"
        ).rows
    assert not [row for row in rows if "dag_run=rewind_restore/whatever" in row[1]]
    for name, run in campaign.runs.items():
        mine = [
            (user, tag)
            for user, tag, _ in rows
            if tag.endswith(f"/{run.run_id}") and f"dag_run={run.dag_id}/" in tag
        ]
        assert mine, name
        assert {user for user, _ in mine} == {run.acts_as}, (name, mine)
        assert {tag.split(";")[0] for _, tag in mine} == {f"airflow_user={run.by}"}, name


def test_no_committed_action_ran_twice_and_nothing_leaked(campaign: Campaign, home: Path) -> None:
    """Issue 25: admin's clone, restore in place and recovery each committed once (their
    re-runs were reported as ALREADY_DONE); NOTES got exactly one restore version;
    nothing alice asked or was patched into existing reached SECRETDB or PUBLICDB."""
    import rewind

    with rewind.connect(home=home, now="2026-06-05T00:00:00+00:00") as conn:
        history = conn.run(
            "SELECT QUERY_TAG, EXECUTION_STATUS, ERROR_CODE, QUERY_TEXT "
            "FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY WHERE QUERY_TAG IS NOT NULL"
        ).rows
        public = conn.run("SHOW TABLES IN SCHEMA PUBLICDB.PUBLIC").column("name")
        secret = conn.run("SHOW TABLES IN SCHEMA SECRETDB.PUBLIC").column("name")
        notes = conn.run("SELECT count(*) FROM PUBLICDB.PUBLIC.NOTES").rows[0][0]
        restores = conn.run(
            "SELECT count(*) FROM REWIND.ACCOUNT_USAGE.QUERY_HISTORY "
            "WHERE QUERY_TEXT LIKE 'RESTORE TABLE PUBLICDB.PUBLIC.NOTES%' "
            "AND EXECUTION_STATUS = 'SUCCESS'"
        ).rows[0][0]
    for name in ("admin_clone", "admin_in_place", "admin_recovery"):
        run = campaign.runs[name]
        mine = [row for row in history if row[0].endswith(f"dag_run={run.dag_id}/{run.run_id}")]
        statements = [
            text
            for _, status, _, text in mine
            if status == "SUCCESS" and not text.startswith(("SELECT", "SHOW", "LIFECYCLE"))
        ]
        assert len(statements) == 1, (name, statements)
        assert any(code == "ALREADY_DONE" for _, _, code, _ in mine), name
    assert (notes, restores) == (3, 1)
    assert sorted(public) == ["NOTES"]
    assert sorted(secret) == ["PAYROLL_2026", "SALARY_BANDS", "VAULT_BACK"]


def test_a_refused_night_ran_no_step_whatever_was_marked(campaign: Campaign, home: Path) -> None:
    """SPEC R37: marking a refused authorize task successful (alice's, olga's) let its
    downstream steps start, and each refused again before any Spark job: no step ran."""
    from rewind.config import Config
    from rewind.operations.nightly import lifecycle_run_id
    from rewind.runner import recorded_steps

    for name in ("alice_night", "olga_night"):
        run = campaign.runs[name]
        run_id = lifecycle_run_id(run.dag_id, run.run_id)
        assert recorded_steps(Config.load(home=home), run_id) == [], name


def test_what_a_viewer_reads_names_nothing_the_form_did_not(
    campaign: Campaign, airflow: Airflow
) -> None:
    """SPEC R37, R38: every XCom entry and every task log of every run, read as vic
    (viewer), holds none of the hidden names (SECRETDB's tables, the fail-safe's) and no
    row count of a restored table. The only exception is the XCom alice and olga wrote
    themselves (the patched validate_form entries)."""
    token = airflow.token_for("vic")
    read = 0
    for name, run in campaign.runs.items():
        for ti in airflow.request("GET", f"{run.path}/taskInstances", token=token)[
            "task_instances"
        ]:
            task = f"{run.path}/taskInstances/{ti['task_id']}"
            entries = airflow.request("GET", f"{task}/xcomEntries", token=token)["xcom_entries"]
            texts = []
            for entry in entries:
                if ti["task_id"] == "validate_form" and entry["key"] == "return_value":
                    continue  # alice and olga patched these: their own words
                value = airflow.request(
                    "GET", f"{task}/xcomEntries/{entry['key']}?deserialize=true", token=token
                )["value"]
                texts.append(json.dumps(value))
            for attempt in range(1, int(ti["try_number"] or 0) + 1):
                texts.append(
                    airflow.task_log(run.dag_id, run.run_id, ti["task_id"], attempt, token)
                )
            for text in texts:
                read += 1
                for hidden in HIDDEN:
                    assert hidden not in text, (name, ti["task_id"], hidden)
                assert "expected_rows" not in text and "rows, as at" not in text
    assert read > 20


def _failsafe_table_id(home: Path) -> int:
    import rewind

    with rewind.connect(home=home, now=NIGHT) as conn:
        (table_id,) = conn.failsafe_list().column("table_id")
    return int(table_id)


TASKS = {
    "rewind_restore": ("validate_form", "restore"),
    "rewind_failsafe_recovery": ("validate_form", "recover"),
    "rewind_nightly": ("authorize", "expire_versions"),
}


def _first_task(run: Run) -> str:
    return TASKS[run.dag_id][0]


def _action_task(run: Run) -> str:
    return TASKS[run.dag_id][1]


def _patch_xcom(run: Run, patched: dict[str, Any]) -> tuple[str, str, Any]:
    path = f"{run.path}/taskInstances/{_first_task(run)}/xcomEntries/return_value"
    value = {**patched, "table_id": 1, "version": None} if "recovery" in run.dag_id else patched
    return "PATCH", path, {"value": value, "map_index": -1}


def _clear(run: Run, task: str, downstream: bool) -> tuple[str, str, Any]:
    body = {
        "dry_run": False,
        "task_ids": [task],
        "dag_run_id": run.run_id,
        "include_downstream": downstream,
        "only_failed": False,
        "reset_dag_runs": True,
    }
    return "POST", f"/api/v2/dags/{run.dag_id}/clearTaskInstances", body


def _mark(run: Run, task: str, state: str) -> tuple[str, str, Any]:
    return "PATCH", f"{run.path}/taskInstances/{task}", {"new_state": state}
