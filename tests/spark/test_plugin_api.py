"""The plugin's JSON API inside the real Airflow api-server app (issue 29; SPEC R12,
R21, R33, R35, R37, R38).

A small warehouse is built with real SQL and the real lifecycle (Spark local[2]), three
nights: the first two in this process, the last one as Airflow runs it, ``airflow dags
test rewind_nightly`` in an Airflow home of its own (the four Spark steps through
spark-submit, then the Great Expectations step), so that the night's tab and links are
a real run's (``test_plugin_browser.py`` serves a copy of that home). The API is then
called through Airflow's own FastAPI app (``create_app``, the simple auth manager, real
JWTs signed by the api-server) in a subprocess with its own ``AIRFLOW_HOME``, and what
it answers is compared with ``REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS`` and the
lifecycle's own summaries.

- SHOP.PUBLIC.ORDERS, updated on day 1: its old file is in fail-safe from day 2's run;
- LAB.PUBLIC.OLD, dropped on day 1 (1 day): in fail-safe from day 2's run;
- LAB.PUBLIC.SCRATCH (5 days), dropped on day 2: undroppable until day 7;
- Airflow user ``analyst`` is Rewind user ANALYST, role CLERK, SELECT on ORDERS only;
  Airflow user ``stranger`` has no Rewind user.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from airflow_env import BIN, DAG_TEST_USER, subprocess_environment
from test_dashboard import table

import rewind
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.lifecycle.metrics import BYTE_COLUMNS
from rewind.operations.dagkit import POOL
from rewind.operations.nightly import lifecycle_run_id
from rewind.runner import recorded_steps, run_lifecycle

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("dashboard")]

REPO = Path(__file__).resolve().parents[2]
DAY0 = datetime(2026, 3, 2, tzinfo=UTC)


def at(day: int, hour: int = 12) -> datetime:
    return DAY0 + timedelta(days=day, hours=hour)


VIEW_AT = at(2, 14)
RUNS = [at(day, 13) for day in range(3)]
# The night's DAG run in a path of CALLS: `airflow dags test` names its run after the
# time it ran (the fixture finds it in Airflow's metadata).
NIGHT_RUN = "/rewind/api/v1/dag_runs/rewind_nightly/{run}"


EVENTS = {
    at(0): [
        "CREATE DATABASE SHOP",
        table("SHOP.PUBLIC.ORDERS"),
        table("SHOP.PUBLIC.ITEMS"),
        "CREATE DATABASE LAB",
        table("LAB.PUBLIC.OLD"),
        table("LAB.PUBLIC.SCRATCH", 5),
        "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK",
        "GRANT ROLE CLERK TO USER ANALYST; GRANT SELECT ON TABLE SHOP.PUBLIC.ORDERS TO ROLE CLERK",
    ],
    at(1): ["UPDATE SHOP.PUBLIC.ORDERS SET V = 'x' WHERE ID = 1", "DROP TABLE LAB.PUBLIC.OLD"],
    at(2): ["DROP TABLE LAB.PUBLIC.SCRATCH"],
}

# label -> (path, credential): "admin" / "analyst" a real token as a bearer header,
# "cookie:<user>" the UI's cookie, "forged" the admin's claims signed with another key,
# "garbage" not a JWT, None nothing.
NOW_Q = urlencode({"now": format_timestamp(VIEW_AT)})
CALLS: dict[str, tuple[str, str | None]] = {
    "anonymous": (f"/rewind/api/v1/storage?{NOW_Q}", None),
    "forged": (f"/rewind/api/v1/storage?{NOW_Q}", "forged"),
    "forged cookie": (f"/rewind/api/v1/failsafe?{NOW_Q}", "cookie:forged"),
    "garbage": (f"/rewind/api/v1/runs?{NOW_Q}", "garbage"),
    "anonymous run": (NIGHT_RUN, None),
    "admin me": (f"/rewind/api/v1/me?{NOW_Q}", "admin"),
    "admin storage": (f"/rewind/api/v1/storage?{NOW_Q}", "admin"),
    "admin shop": (f"/rewind/api/v1/storage?{NOW_Q}&database=shop&schema=PUBLIC", "admin"),
    "admin dropped": (f"/rewind/api/v1/dropped?{NOW_Q}", "admin"),
    "admin failsafe": (f"/rewind/api/v1/failsafe?{NOW_Q}", "cookie:admin"),
    "admin runs": (f"/rewind/api/v1/runs?{NOW_Q}", "admin"),
    "admin card": (f"/rewind/api/v1/card?{NOW_Q}", "admin"),
    "admin run": (NIGHT_RUN, "admin"),
    "admin other run": ("/rewind/api/v1/dag_runs/other_dag/manual__1", "admin"),
    "analyst me": (f"/rewind/api/v1/me?{NOW_Q}", "cookie:analyst"),
    "analyst storage": (f"/rewind/api/v1/storage?{NOW_Q}", "analyst"),
    "analyst shop": (f"/rewind/api/v1/storage?{NOW_Q}&database=SHOP&schema=PUBLIC", "analyst"),
    "analyst lab": (f"/rewind/api/v1/storage?{NOW_Q}&database=LAB", "analyst"),
    "analyst dropped": (f"/rewind/api/v1/dropped?{NOW_Q}", "analyst"),
    "analyst failsafe": (f"/rewind/api/v1/failsafe?{NOW_Q}", "analyst"),
    "analyst runs": (f"/rewind/api/v1/runs?{NOW_Q}", "analyst"),
    "analyst card": (f"/rewind/api/v1/card?{NOW_Q}", "analyst"),
    "analyst run": (NIGHT_RUN, "analyst"),
    "stranger storage": (f"/rewind/api/v1/storage?{NOW_Q}", "stranger"),
    "bad instant": ("/rewind/api/v1/storage?now=yesterday", "admin"),
    "bad instant card": ("/rewind/api/v1/card?now=yesterday", "cookie:admin"),
    "bundle": ("/rewind/static/rewind-page.js", None),
}

AIRFLOW_SCRIPT = """
import json, sys
import jwt
from airflow import plugins_manager
from airflow.api_fastapi.app import create_app, get_auth_manager
from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
from airflow.api_fastapi.core_api.datamodels.plugins import PluginResponse
from airflow.utils.db import initdb
from fastapi.testclient import TestClient

initdb()  # the auth manager checks a token's id against revoked tokens there
client = TestClient(create_app())
calls, prefix = json.loads(sys.argv[2]), sys.argv[3]
manager = get_auth_manager()
tokens = {
    "admin": manager.generate_jwt(SimpleAuthManagerUser(username="admin", role="admin")),
    "analyst": manager.generate_jwt(SimpleAuthManagerUser(username="analyst", role="viewer")),
    "stranger": manager.generate_jwt(SimpleAuthManagerUser(username="stranger", role="viewer")),
}
claims = jwt.decode(tokens["admin"], options={"verify_signature": False})
tokens["forged"] = jwt.encode(claims, "not the api secret", algorithm="HS512")
tokens["garbage"] = "garbage"
seen = {}
for label, (path, credential) in calls.items():
    headers, cookies = {}, {}
    if credential and credential.startswith("cookie:"):
        cookies["_token"] = tokens[credential.split(":", 1)[1]]
    elif credential:
        headers["Authorization"] = "Bearer " + tokens[credential]
    client.cookies.clear()
    response = client.get(prefix + path, headers=headers, cookies=cookies)
    kind = response.headers.get("content-type", "")
    body = response.json() if kind.startswith("application/json") else response.text[:200]
    seen[label] = [response.status_code, kind, body]
# How Airflow's plugins manager loaded plugins/: what GET /api/v2/plugins would answer.
[info] = [p for p in plugins_manager.get_plugin_info() if p["name"] == "rewind"]
fastapi_apps = plugins_manager.get_fastapi_plugins()[0]
seen["plugin"] = {
    "import_errors": plugins_manager.get_import_errors(),
    "fastapi_apps": [[a["name"], a["url_prefix"]] for a in fastapi_apps],
    "info": PluginResponse.model_validate(info).model_dump(mode="json"),
}
json.dump(seen, open(sys.argv[1], "w"))
"""


def sql(home: Path, now: datetime, text: str) -> list[Any]:
    conn = rewind.connect(home=home, now=format_timestamp(now))
    try:
        return conn.sql(text)
    finally:
        conn.close()


def storage_view(home: Path) -> list[dict[str, Any]]:
    """``REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS`` through the SQL API (SPEC R33)."""
    result = sql(home, VIEW_AT, "SELECT * FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS")[-1]
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


@pytest.fixture(scope="module")
def warehouse(plugin_night: dict[str, Any]) -> dict[str, Any]:
    """The plugin's warehouse and night (tests/spark/conftest.py builds it once for this
    module and test_plugin_browser.py: no test writes to it, test_serving_every_call_wrote_
    nothing checks the API's calls)."""
    return plugin_night


def build_night(root: Path) -> dict[str, Any]:
    """``EVENTS`` and ``RUNS`` in a home under ``root``, the last run through Airflow."""
    home, airflow_home = root / "home", root / "airflow"
    config = Config.load(home=home)
    steps = {}
    for when in sorted({*EVENTS, *RUNS}):
        if when in EVENTS:
            sql(home, when, "; ".join(EVENTS[when]))
        if when == RUNS[-1]:
            dag_run_id = run_nightly_dag(home, airflow_home, when)
            steps[when] = recorded_steps(config, lifecycle_run_id("rewind_nightly", dag_run_id))
        elif when in RUNS:
            steps[when] = run_lifecycle(config, when)
    return {
        "home": home,
        "airflow_db": airflow_home / "airflow.db",
        "dag_run_id": dag_run_id,
        "steps": steps,
        "view": storage_view(home),
        "catalog": dump(home),
    }


def run_nightly_dag(home: Path, airflow_home: Path, night: datetime) -> str:
    """SPEC R29, R35: the night as ``make run`` runs it, ``airflow dags test
    rewind_nightly <night>`` (tasks in that process, Spark jobs through spark-submit on
    local[2], the run triggered by ``dag_test``, mapped to ADMIN), in ``airflow_home``
    (SQLite metadata, the repository's plugin for the tasks' extra links); returns the
    DAG run's id. Fails with the output's tail unless the run succeeded."""
    env = subprocess_environment(
        airflow_home,
        AIRFLOW__CORE__PLUGINS_FOLDER=str(REPO / "plugins"),
        REWIND_HOME=str(home),
        REWIND_AIRFLOW_USERS=json.dumps({DAG_TEST_USER: "ADMIN"}),
    )
    for command in (
        ["db", "migrate"],
        ["pools", "set", POOL, "1", "Rewind lifecycle"],
        ["dags", "test", "rewind_nightly", night.isoformat()],
    ):
        proc = subprocess.run(
            [str(BIN / "airflow"), *command],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, (
            f"airflow {command}:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
        )
    with sqlite3.connect(airflow_home / "airflow.db") as db:
        [(run_id,)] = db.execute("SELECT run_id FROM dag_run WHERE dag_id = 'rewind_nightly'")
    return str(run_id)


def dump(home: Path) -> list[str]:
    """The catalog's content, as SQL."""
    with sqlite3.connect(home / "catalog.db") as db:
        return list(db.iterdump())


def call_airflow(
    warehouse: dict[str, Any], tmp_path: Path, base_url: str, prefix: str
) -> dict[str, Any]:
    env = subprocess_environment(
        tmp_path / "airflow",
        AIRFLOW__CORE__PLUGINS_FOLDER=str(REPO / "plugins"),
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin,analyst:viewer,stranger:viewer",
        AIRFLOW__API__BASE_URL=base_url,
        REWIND_HOME=str(warehouse["home"]),
    )
    calls = {
        label: (path.replace("{run}", warehouse["dag_run_id"]), credential)
        for label, (path, credential) in CALLS.items()
    }
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-c", AIRFLOW_SCRIPT, str(out), json.dumps(calls), prefix],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def seen(warehouse: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every call of ``CALLS``, answered by the real api-server app: label -> [status,
    content type, body]."""
    return call_airflow(warehouse, tmp_path_factory.mktemp("airflow"), "", "")


def ok(seen: dict[str, Any], label: str) -> Any:
    status, kind, body = seen[label]
    assert (status, kind) == (200, "application/json"), (label, body)
    return body


def by_class(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {c: sum(r[c] for r in rows) for c in BYTE_COLUMNS}


def test_anonymous_and_forged_calls_get_401(seen: dict[str, Any]) -> None:
    """SPEC R37: no credential, a forged token (header or cookie), a garbage one: 401,
    through Airflow's own ``get_user``; the bundle itself is public code, no data."""
    for label in ("anonymous", "forged", "forged cookie", "garbage", "anonymous run"):
        status, _, body = seen[label]
        assert status == 401, (label, body)
        assert "Log in to Airflow" in body["detail"]
    status, kind, _ = seen["bundle"]
    assert status == 200 and "javascript" in kind


def test_storage_equals_table_storage_metrics(
    warehouse: dict[str, Any], seen: dict[str, Any]
) -> None:
    """SPEC R33, R35: the totals, each database and each table of the API are the rows of
    TABLE_STORAGE_METRICS; one day per night, the last one the same totals."""
    view = warehouse["view"]
    storage = ok(seen, "admin storage")
    assert storage["totals"] == by_class(view)
    assert {g["database"]: g["bytes"] for g in storage["groups"]} == {
        db: by_class([r for r in view if r["TABLE_CATALOG"] == db]) for db in ("LAB", "SHOP")
    }
    assert [d["date"] for d in storage["days"]] == [run.date().isoformat() for run in RUNS]
    assert storage["days"][-1]["bytes"] == by_class(view)
    shop = ok(seen, "admin shop")
    assert {g["table"]: g["bytes"] for g in shop["groups"]} == {
        r["TABLE_NAME"]: {c: r[c] for c in BYTE_COLUMNS}
        for r in view
        if r["TABLE_CATALOG"] == "SHOP"
    }
    assert all(g["kind"] == "TABLE" for g in shop["groups"])


def test_admin_sees_dropped_failsafe_runs_and_the_night(
    warehouse: dict[str, Any], seen: dict[str, Any]
) -> None:
    """SPEC R10, R12, R21, R29: SCRATCH is undroppable until day 7; fail-safe holds OLD
    and ORDERS's old file, purged 7 days after they left time travel, their bytes the
    view's FAILSAFE_BYTES; the runs are the three nights; the nightly run's tab finds the
    last night by its Airflow run id, with its tables' metrics rows (TABLE_STORAGE_METRICS
    at that night) summing to its storage_metrics step; another DAG's run does not
    apply."""
    me = ok(seen, "admin me")
    assert (me["viewer"], me["role"], me["accountadmin"]) == ("ADMIN", "ACCOUNTADMIN", True)
    dropped = ok(seen, "admin dropped")["dropped"]
    assert [(d["name"], d["undrop_until"][:10]) for d in dropped] == [
        ("LAB.PUBLIC.SCRATCH", at(7).date().isoformat())
    ]
    failsafe = ok(seen, "admin failsafe")
    view = {r["TABLE_NAME"]: r for r in warehouse["view"]}
    assert {b["table"]: b["bytes"] for b in failsafe["batches"]} == {
        "LAB.PUBLIC.OLD": view["OLD"]["FAILSAFE_BYTES"],
        "SHOP.PUBLIC.ORDERS": view["ORDERS"]["FAILSAFE_BYTES"],
    }
    assert failsafe["next_purge"] == failsafe["batches"][0]
    runs = ok(seen, "admin runs")["runs"]
    assert [r["now"][:13] for r in runs] == [f"{run:%Y-%m-%dT%H}" for run in RUNS[::-1]]
    assert all(r["state"] == "success" for r in runs)
    night = ok(seen, "admin run")
    last = warehouse["steps"][RUNS[-1]]
    assert night["applies"] and night["run"]["run_id"] == last[0]["run_id"]
    assert night["run"]["dag_run_id"] == warehouse["dag_run_id"]
    assert [s["step"] for s in night["run"]["steps"]] == [s["step"] for s in last]
    assert {t["table_id"]: (t["kind"], t["deleted"], t["bytes"]) for t in night["tables"]} == {
        r["ID"]: ("TABLE", r["DELETED"], {c: r[c] for c in BYTE_COLUMNS}) for r in warehouse["view"]
    }
    storage_step = next(s for s in last if s["step"] == "storage_metrics")
    assert (
        night["totals"]
        == by_class(warehouse["view"])
        == {c: storage_step[c.lower()] for c in BYTE_COLUMNS}
    )
    assert ok(seen, "admin other run") == {
        "dag_id": "other_dag",
        "dag_run_id": "manual__1",
        "applies": False,
        "run": None,
    }
    card = ok(seen, "admin card")
    assert card["totals"] == by_class(warehouse["view"])
    assert card["next_purge"] == failsafe["next_purge"]
    assert card["last_run"]["run_id"] == runs[0]["run_id"]


def test_a_non_admin_sees_only_its_objects_and_no_failsafe_r37_r38(
    warehouse: dict[str, Any], seen: dict[str, Any]
) -> None:
    """SPEC R37, R38: analyst (role CLERK, SELECT on SHOP.PUBLIC.ORDERS) sees ORDERS and
    its bytes, nothing of LAB nor ITEMS, no dropped object of others; fail-safe, the runs
    and a night's record are refused (403); its card has totals only."""
    me = ok(seen, "analyst me")
    assert (me["viewer"], me["role"], me["accountadmin"], me["home"]) == (
        "ANALYST",
        "CLERK",
        False,
        "",
    )
    orders = next(r for r in warehouse["view"] if r["TABLE_NAME"] == "ORDERS")
    mine = {c: orders[c] for c in BYTE_COLUMNS}
    storage = ok(seen, "analyst storage")
    assert [g["database"] for g in storage["groups"]] == ["SHOP"]
    assert storage["totals"] == mine
    assert [(g["table"], g["bytes"]) for g in ok(seen, "analyst shop")["groups"]] == [
        ("ORDERS", mine)
    ]
    lab = ok(seen, "analyst lab")
    assert (lab["groups"], lab["days"]) == ([], [])
    assert ok(seen, "analyst dropped")["dropped"] == []
    for label in ("analyst failsafe", "analyst runs", "analyst run"):
        status, _, body = seen[label]
        assert status == 403 and "ACCESS_DENIED" in body["detail"], (label, body)
        assert "LAB" not in json.dumps(body) and "ORDERS" not in json.dumps(body)
    card = ok(seen, "analyst card")
    assert (card["totals"], card["next_purge"], card["last_run"]) == (mine, None, None)


def test_the_api_and_bundles_move_below_a_base_url_path(
    warehouse: dict[str, Any], tmp_path: Path
) -> None:
    """Under ``[api] base_url`` with a path the plugin loads alike and the same calls
    answer below it."""
    seen = call_airflow(warehouse, tmp_path, "http://localhost:8080/airflow", "/airflow")
    assert seen["plugin"]["import_errors"] == {}
    assert len(seen["plugin"]["info"]["react_apps"]) == 3
    assert seen["anonymous"][0] == 401
    assert ok(seen, "admin storage")["totals"] == by_class(warehouse["view"])
    assert seen["bundle"][0] == 200


def test_airflow_loads_the_plugin(seen: dict[str, Any]) -> None:
    """Airflow's plugins manager loads ``plugins/`` without an import error: the API app
    mounted at ``/rewind`` and the three React views, valid as Airflow's
    ``PluginResponse`` (the Browse-menu page, a DAG run tab, a dashboard card; no
    external view, no iframe)."""
    plugin = seen["plugin"]
    assert plugin["import_errors"] == {}
    assert ["Rewind", "/rewind"] in plugin["fastapi_apps"]
    assert plugin["info"]["external_views"] == []
    apps = {a["destination"]: a for a in plugin["info"]["react_apps"]}
    assert {k: apps["nav"][k] for k in ("name", "url_route", "category")} == {
        "name": "Rewind",
        "url_route": "rewind",
        "category": "browse",
    }
    assert sorted(apps) == ["dag_run", "dashboard", "nav"]


def test_an_unknown_user_and_a_bad_instant_are_one_line_errors(seen: dict[str, Any]) -> None:
    """SPEC R37, R39: an Airflow user with no Rewind user gets 403 UNKNOWN_USER; a bad
    ``now`` a 400 with a stable code and one line, no traceback."""
    status, _, body = seen["stranger storage"]
    assert status == 403 and body["detail"].startswith("UNKNOWN_USER"), body
    for label in ("bad instant", "bad instant card"):
        assert seen[label][0] == 400, seen[label]
        assert seen[label][2] == {
            "detail": "INVALID_VALUE: 'yesterday' is not an ISO 8601 timestamp."
        }


def test_serving_every_call_wrote_nothing(warehouse: dict[str, Any], seen: dict[str, Any]) -> None:
    """Read-only: after every call of ``CALLS`` (each route, each user, the errors), the
    catalog is what the lifecycle left."""
    assert len(seen) > len(CALLS)  # the calls were made
    assert dump(warehouse["home"]) == warehouse["catalog"]
