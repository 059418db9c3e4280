"""The data of the Rewind views against a real warehouse (SPEC R10–R12, R21, R33, R35,
R37, R38).

One module-scoped warehouse is built with real SQL (Spark local[2], delta-rs, SQLite)
and the real nightly lifecycle, run every day at 13:00 for eleven days; changes happen
at noon. The views' JSON API (``/rewind/api/v1/...``, :mod:`rewind.plugin_api`) is then
read through the plugin's FastAPI app and compared with what the warehouse says
independently: the metrics Delta table, ``REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS``
and the lifecycle's own summaries. The same API inside the real Airflow api-server, with
real tokens, is ``test_plugin_api.py``; the views in Chromium, ``test_plugin_browser.py``.

The history (retention 1 day unless said otherwise):

- SHOP.PUBLIC.ITEMS, cloned as ITEMS_COPY on day 0, updated on day 1: the old file is in
  fail-safe from day 2, then RETAINED_FOR_CLONE from day 9 (SPEC R30);
- LAB.PUBLIC.OLD dropped on day 4: in fail-safe from day 5, purged on day 12;
- SHOP.PUBLIC.ORDERS updated on day 5: old file in fail-safe from day 6, purged day 13;
- LAB.PUBLIC.SCRATCH (5 days) dropped on day 10: undroppable until day 15 (SPEC R10);
- schema LAB.TMP dropped on day 10 with its table T1: undroppable until day 11 (R11).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastapi.testclient import TestClient

import rewind
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.dashboard_model import LAST_RUNS
from rewind.lifecycle.metrics import BYTE_COLUMNS, metrics_path
from rewind.runner import run_lifecycle
from rewind.storage.arrow_read import read_arrow

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("dashboard")]

REPO = Path(__file__).resolve().parents[2]
DAY0 = datetime(2026, 3, 2, tzinfo=UTC)
FAILSAFE = timedelta(days=7)  # SPEC R12
LAST_DAY = 10
COLUMNS = "(ID INT, V VARCHAR)"
ROWS = "VALUES (1, 'a'), (2, 'b'), (3, 'c')"


def at(day: int, hour: int = 12) -> datetime:
    return DAY0 + timedelta(days=day, hours=hour)


VIEW_AT = at(LAST_DAY, 14)  # an hour after the last run
RUNS = [at(day, 13) for day in range(LAST_DAY + 1)]


def table(name: str, retention: int | None = None) -> str:
    option = "" if retention is None else f" DATA_RETENTION_TIME_IN_DAYS = {retention}"
    return f"CREATE TABLE {name} {COLUMNS}{option}; INSERT INTO {name} {ROWS}"


EVENTS = {
    at(0): [
        "CREATE DATABASE SHOP",
        table("SHOP.PUBLIC.ORDERS"),
        table("SHOP.PUBLIC.ITEMS"),
        "CREATE TABLE SHOP.PUBLIC.ITEMS_COPY CLONE SHOP.PUBLIC.ITEMS",
        "CREATE DATABASE LAB",
        table("LAB.PUBLIC.SCRATCH", 5),
        table("LAB.PUBLIC.OLD"),
        "CREATE SCHEMA LAB.TMP",
        table("LAB.TMP.T1"),
        # SPEC R37: the views as a user who may read one table of SHOP and nothing else.
        "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK",
        "GRANT ROLE CLERK TO USER ANALYST; GRANT SELECT ON TABLE SHOP.PUBLIC.ORDERS TO ROLE CLERK",
    ],
    at(1): ["UPDATE SHOP.PUBLIC.ITEMS SET V = 'x' WHERE ID = 1"],
    at(4): ["DROP TABLE LAB.PUBLIC.OLD"],
    at(5): ["UPDATE SHOP.PUBLIC.ORDERS SET V = 'x' WHERE ID = 1"],
    at(LAST_DAY): ["DROP TABLE LAB.PUBLIC.SCRATCH", "DROP SCHEMA LAB.TMP"],
}


@dataclass
class Warehouse:
    """A Rewind home with its history played, and what its lifecycle runs returned."""

    home: Path
    steps: dict[datetime, list[dict[str, Any]]] = field(default_factory=dict)

    def sql(self, now: datetime, text: str) -> list[Any]:
        conn = rewind.connect(home=self.home, now=format_timestamp(now))
        try:
            return conn.sql(text)
        finally:
            conn.close()

    def view(self, now: datetime) -> list[dict[str, Any]]:
        """``REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS`` through the SQL API (SPEC R33)."""
        result = self.sql(now, "SELECT * FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS")[-1]
        return [dict(zip(result.columns, row, strict=True)) for row in result.rows]

    def daily_metrics(self) -> dict[str, dict[str, int]]:
        """The metrics time series read on its own: date -> byte column -> bytes."""
        rows = read_arrow(metrics_path(self.home / "system"))
        days: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(BYTE_COLUMNS, 0))
        for row in rows.to_pylist():
            for column in BYTE_COLUMNS:
                days[row["AS_OF_DATE"]][column] += row[column]
        return dict(days)

    def catalog_dump(self) -> list[str]:
        with sqlite3.connect(self.home / "catalog.db") as db:
            return list(db.iterdump())


@pytest.fixture(scope="module")
def warehouse(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    built = Warehouse(tmp_path_factory.mktemp("dashboard") / "home")
    config = Config.load(home=built.home)
    for when in sorted({*EVENTS, *RUNS}):
        if when in EVENTS:
            built.sql(when, "; ".join(EVENTS[when]))
        if when in RUNS:
            built.steps[when] = run_lifecycle(config, when)
    return built


ENDPOINTS = ("me", "storage", "dropped", "failsafe", "runs", "card")


@pytest.fixture
def viewer(plugin: ModuleType) -> Iterator[Callable[[str], None]]:
    """``viewer("analyst")``: the Airflow user the API's requests come from. Airflow's
    token check and view permissions (401 without a real Airflow JWT) run against the real
    api-server in ``test_plugin_api.py`` and in the e2e suite, as does the link of a
    lifecycle run to its Airflow run (Airflow's metadata); here the data is under test,
    so the Airflow user is given (``admin`` by default) and Rewind's own user mapping and
    visibility rules run as they do in production."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    from rewind.plugin_api import airflow_user, nightly_runs  # after the plugin's AIRFLOW_HOME

    overrides = plugin.app.dependency_overrides
    for route in plugin.router.routes:
        for dependency in route.dependencies:
            if dependency.dependency is not airflow_user:  # requires_access_view / _dag
                overrides[dependency.dependency] = lambda: None
    overrides[nightly_runs] = lambda: {}

    def _as(name: str) -> None:
        overrides[airflow_user] = lambda: SimpleAuthManagerUser(username=name, role="admin")

    _as("admin")
    yield _as
    overrides.clear()


@pytest.fixture
def client(
    plugin: ModuleType, viewer: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """A client of the plugin's app; each test points REWIND_HOME where it wants."""
    for name in ("REWIND_NOW", "REWIND_CATALOG_URL", "REWIND_FAILSAFE_URI", "REWIND_AIRFLOW_USERS"):
        monkeypatch.delenv(name, raising=False)
    with TestClient(plugin.app) as test_client:
        yield test_client


def call(client: Any, what: str, now: datetime, **scope: str) -> Any:
    """``GET /api/v1/<what>`` as of ``now``: (status, JSON body)."""
    response = client.get(f"/api/v1/{what}", params={"now": format_timestamp(now), **scope})
    return response.status_code, response.json()


def api(client: Any, what: str, now: datetime, **scope: str) -> dict[str, Any]:
    status, body = call(client, what, now, **scope)
    assert status == 200, (what, body)
    return dict(body)


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# -- the storage chart and figures (SPEC R33, R35) ----------------------------------------


def test_the_chart_stacks_the_four_figures_of_every_day_of_the_metrics_table(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R33, R35: one day per run, each with the four byte columns, its bytes the
    day's sum in the metrics time series; the stack of a day is every byte stored that
    day."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    days = api(client, "storage", VIEW_AT)["days"]
    segments = {day["date"]: day["bytes"] for day in days}
    assert all(sorted(day["bytes"]) == sorted(BYTE_COLUMNS) for day in days)
    assert segments == warehouse.daily_metrics()
    assert [day["date"] for day in days] == [run.date().isoformat() for run in RUNS]
    # the history reaches every figure somewhere, so no column can be silently dropped
    assert all(any(day[c] for day in segments.values()) for c in BYTE_COLUMNS)


def test_totals_are_the_latest_run_of_table_storage_metrics(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R33: per database and in total, the API gives the figures of the view; the
    storage card the same totals."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    view = warehouse.view(VIEW_AT)
    storage = api(client, "storage", VIEW_AT)
    expected: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(BYTE_COLUMNS, 0))
    for row in view:
        for column in BYTE_COLUMNS:
            expected[row["TABLE_CATALOG"]][column] += row[column]
            expected["Total"][column] += row[column]
    found = {g["database"]: g["bytes"] for g in storage["groups"]}
    assert all(g["kind"] == "DATABASE" for g in storage["groups"])
    found["Total"] = storage["totals"]
    assert found == expected
    assert api(client, "card", VIEW_AT)["totals"] == expected["Total"]


def test_a_scope_narrows_every_section_to_its_objects(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per database, schema and table: the breakdown goes one level down, unquoted names
    match in any case (SPEC R4), and the figures are the view's rows of those objects;
    dropped objects and fail-safe follow the same scope."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    view = warehouse.view(VIEW_AT)
    lab = api(client, "storage", VIEW_AT, database="lab")
    assert [(g["database"], g["schema"]) for g in lab["groups"]] == [
        ("LAB", "PUBLIC"),
        ("LAB", "TMP"),
    ]
    assert lab["scope"] == {"database": "lab", "schema": None, "table": None}
    dropped = api(client, "dropped", VIEW_AT, database="lab")["dropped"]
    assert {d["name"] for d in dropped} == {"LAB.PUBLIC.SCRATCH", "LAB.TMP", "LAB.TMP.T1"}
    failsafe = api(client, "failsafe", VIEW_AT, database="lab")["batches"]
    assert [b["table"] for b in failsafe] == ["LAB.PUBLIC.OLD"]

    shop_scope = {"database": "SHOP", "schema": "PUBLIC"}
    shop = api(client, "storage", VIEW_AT, **shop_scope)
    by_table = {r["TABLE_NAME"]: r for r in view if r["TABLE_CATALOG"] == "SHOP"}
    assert {g["table"]: g["bytes"] for g in shop["groups"]} == {
        name: {c: row[c] for c in BYTE_COLUMNS} for name, row in by_table.items()
    }
    assert api(client, "dropped", VIEW_AT, **shop_scope)["dropped"] == []
    failsafe = api(client, "failsafe", VIEW_AT, **shop_scope)["batches"]
    assert [b["table"] for b in failsafe] == ["SHOP.PUBLIC.ORDERS"]

    orders = api(client, "storage", VIEW_AT, database="SHOP", schema="PUBLIC", table="ORDERS")
    assert orders["totals"] == {c: by_table["ORDERS"][c] for c in BYTE_COLUMNS}
    assert {d["date"] for d in orders["days"]} == {run.date().isoformat() for run in RUNS}


def test_the_window_is_the_last_30_days_up_to_now(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R15, R35: the API as of an instant shows the runs up to it and no later, and
    no day older than 30 days; dropped objects and runs follow the same clock."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    early = api(client, "storage", at(3, 14))
    assert [d["date"] for d in early["days"]] == [run.date().isoformat() for run in RUNS[:4]]
    assert instant(early["latest_as_of"]) == at(3, 13)
    runs = api(client, "runs", at(3, 14))["runs"]
    assert [instant(r["now"]) for r in runs] == RUNS[3::-1]
    assert api(client, "dropped", at(3, 14))["dropped"] == []  # nothing was dropped yet
    late = api(client, "storage", at(35, 14))
    assert [d["date"] for d in late["days"]] == [run.date().isoformat() for run in RUNS[6:]]
    assert api(client, "dropped", at(35, 14))["dropped"] == []  # every deadline has passed


# -- dropped objects, fail-safe, runs (SPEC R10–R12, R21, R29) ----------------------------


def test_dropped_objects_are_listed_until_their_undrop_deadline(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R10, R11, R21: the deadline is dropped_on + the retention at drop; children
    dropped with their schema keep the schema's retention and name it; OLD, dropped on
    day 4 with 1 day, is no longer undroppable."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    dropped = api(client, "dropped", VIEW_AT)["dropped"]
    found = [(d["kind"], d["name"], d["retention_days"], d["dropped_with"]) for d in dropped]
    assert found == [
        ("SCHEMA", "LAB.TMP", 1, None),
        ("TABLE", "LAB.TMP.T1", 1, "LAB.TMP"),
        ("TABLE", "LAB.PUBLIC.SCRATCH", 5, None),
    ]
    deadlines = [(instant(d["dropped_on"]), instant(d["undrop_until"])) for d in dropped]
    assert deadlines == [(at(10), at(11)), (at(10), at(11)), (at(10), at(15))]
    later = api(client, "dropped", at(11, 14))["dropped"]
    assert [d["name"] for d in later] == ["LAB.PUBLIC.SCRATCH"]


def test_failsafe_lists_the_manifest_with_purge_dates(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R12, R33: what left time travel, from when and until its purge 7 days later;
    the bytes of a table are its FAILSAFE_BYTES in the view; the next purge (the page's
    and the card's) is the first batch. ITEMS's old file, purged for ITEMS on day 9, is
    retained for its clone, not in fail-safe (SPEC R30)."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    view = {r["TABLE_NAME"]: r for r in warehouse.view(VIEW_AT)}
    failsafe = api(client, "failsafe", VIEW_AT)
    found = [
        (b["table"], b["bytes"], instant(b["left_time_travel_at"]), instant(b["purge_at"]))
        for b in failsafe["batches"]
    ]
    assert found == [
        ("LAB.PUBLIC.OLD", view["OLD"]["FAILSAFE_BYTES"], at(5), at(5) + FAILSAFE),
        ("SHOP.PUBLIC.ORDERS", view["ORDERS"]["FAILSAFE_BYTES"], at(6), at(6) + FAILSAFE),
    ]
    assert all(b > 0 for _, b, _, _ in found)
    assert failsafe["next_purge"] == failsafe["batches"][0]
    assert api(client, "card", VIEW_AT)["next_purge"] == failsafe["next_purge"]
    assert view["ITEMS"]["FAILSAFE_BYTES"] == 0 < view["ITEMS"]["RETAINED_FOR_CLONE_BYTES"]


def test_runs_show_the_last_lifecycle_summaries(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R29, R35: the last runs, newest first, each with what every step reported
    (the metrics step's totals those of the view); the card's last night is the newest."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    runs = api(client, "runs", VIEW_AT)["runs"]
    assert [instant(r["now"]) for r in runs] == RUNS[::-1][:LAST_RUNS]
    assert {r["state"] for r in runs} == {"success"}
    newest = warehouse.steps[RUNS[-1]]
    assert runs[0]["run_id"] == newest[0]["run_id"]
    shown = runs[0]["steps"]
    assert [s["step"] for s in shown] == [step["step"] for step in newest]
    for step, seen in zip(newest, shown, strict=True):
        scalars = {k: v for k, v in step.items() if isinstance(v, int | float | str)}
        assert scalars.items() <= seen.items(), step["step"]
    totals = {c: sum(r[c] for r in warehouse.view(VIEW_AT)) for c in BYTE_COLUMNS}
    [metrics] = [s for s in shown if s["step"] == "storage_metrics"]
    assert {c: metrics[c.lower()] for c in BYTE_COLUMNS} == totals
    assert api(client, "card", VIEW_AT)["last_run"]["run_id"] == runs[0]["run_id"]
    moved = api(client, "runs", at(6, 14))["runs"][0]["steps"]
    assert [s["files_moved"] for s in moved if s["step"] == "expire_versions"] == [1]


# -- who sees what, read-only, errors -----------------------------------------------------


def test_a_user_sees_only_what_its_role_may_see_and_no_failsafe_r37_r38(
    warehouse: Warehouse,
    client: Any,
    viewer: Callable[[str], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SPEC R37, R38: ANALYST (role CLERK, SELECT on SHOP.PUBLIC.ORDERS only) sees SHOP and
    ORDERS with their bytes, nothing of LAB, no dropped object of others; fail-safe
    contents and lifecycle runs are refused (403) and its card has neither; nothing it is
    sent names LAB or the home; ADMIN sees them all. An Airflow user Rewind does not know
    gets 403 UNKNOWN_USER from every route."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    admin = {what: api(client, what, VIEW_AT) for what in ENDPOINTS}
    in_shop = api(client, "storage", VIEW_AT, database="SHOP", schema="PUBLIC")["groups"]
    viewer("analyst")
    mine = {what: call(client, what, VIEW_AT) for what in ENDPOINTS}
    me, storage = mine["me"][1], mine["storage"][1]
    assert (me["viewer"], me["role"], me["accountadmin"]) == ("ANALYST", "CLERK", False)
    assert [g["database"] for g in storage["groups"]] == ["SHOP"]
    tables = api(client, "storage", VIEW_AT, database="SHOP", schema="PUBLIC")["groups"]
    assert [g["table"] for g in tables] == ["ORDERS"]
    assert tables == [g for g in in_shop if g["table"] == "ORDERS"]
    assert mine["dropped"] == (200, {"now": storage["now"], "dropped": []})
    for what in ("failsafe", "runs"):
        status, body = mine[what]
        assert status == 403 and "ACCESS_DENIED" in body["detail"], (what, body)
    card = mine["card"][1]
    assert (card["next_purge"], card["last_run"]) == (None, None)
    assert card["totals"] == storage["totals"]
    assert admin["failsafe"]["batches"] and admin["runs"]["runs"] and admin["dropped"]["dropped"]
    assert admin["card"]["next_purge"] and admin["card"]["last_run"]
    # Where the server keeps the home is the administrator's to know (issue 25).
    assert (admin["me"]["home"], me["home"]) == (str(warehouse.home), "")
    sent = json.dumps(mine)
    assert "LAB" not in sent and str(warehouse.home) not in sent
    viewer("nobody-here")
    for what in ENDPOINTS:
        status, body = call(client, what, VIEW_AT)
        assert status == 403 and "UNKNOWN_USER" in body["detail"], (what, body)


def test_reading_every_route_writes_nothing(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-only: the catalog is byte-for-byte the same, and no file of the home changed,
    after every route has been read, scoped and not, and a night's record looked up."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    before = (warehouse.catalog_dump(), files(warehouse.home))
    for what in ENDPOINTS:
        api(client, what, VIEW_AT)
        api(client, what, VIEW_AT, database="SHOP", schema="PUBLIC", table="ORDERS")
    night = client.get("/api/v1/dag_runs/rewind_nightly/scheduled__2026-03-12T00:00:00+00:00")
    assert night.status_code == 200 and night.json()["run"] is None, night.text
    assert (warehouse.catalog_dump(), files(warehouse.home)) == before


def files(home: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``home`` but the catalog's: path -> (size, mtime in ns). The
    catalog is compared by content: a SQLite reader maintains its ``-wal`` / ``-shm``."""
    return {
        str(p.relative_to(home)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.name.startswith("catalog.db")
    }


def test_an_empty_home_gives_empty_answers_and_creates_nothing(
    client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No catalog yet: every route answers an empty state (the page shows "No Rewind
    catalog yet", ``ui/src/views/RewindPage.test.tsx``), not a traceback, and no file is
    created."""
    home = tmp_path / "nothing-here"
    monkeypatch.setenv("REWIND_HOME", str(home))
    seen = {what: api(client, what, VIEW_AT) for what in ENDPOINTS}
    storage = seen["storage"]
    assert (storage["catalog_found"], storage["metrics_found"]) == (False, False)
    assert (storage["days"], storage["groups"]) == ([], [])
    assert storage["totals"] == dict.fromkeys(BYTE_COLUMNS, 0)
    assert seen["dropped"]["dropped"] == []
    assert (seen["failsafe"]["batches"], seen["failsafe"]["next_purge"]) == ([], None)
    assert seen["runs"]["runs"] == []
    assert (seen["card"]["next_purge"], seen["card"]["last_run"]) == (None, None)
    assert not home.exists()


def test_a_home_without_lifecycle_runs_still_lists_dropped_tables(
    connect: Any, home: Path, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R21: before the first lifecycle run there are no metrics, but UNDROP works and
    the API says until when."""
    connect(now=format_timestamp(at(0))).sql(
        "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT); DROP TABLE D.PUBLIC.T"
    )
    monkeypatch.setenv("REWIND_HOME", str(home))
    storage = api(client, "storage", at(0, 14))
    assert (storage["catalog_found"], storage["metrics_found"], storage["days"]) == (
        True,
        False,
        [],
    )
    dropped = api(client, "dropped", at(0, 14))["dropped"]
    assert [(d["name"], instant(d["undrop_until"])) for d in dropped] == [("D.PUBLIC.T", at(1))]


def test_a_bad_instant_is_a_one_line_error(
    client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SPEC R39: a stable code and one line, no traceback, from every route taking ``now``."""
    monkeypatch.setenv("REWIND_HOME", str(tmp_path))
    for what in ENDPOINTS:
        response = client.get(f"/api/v1/{what}", params={"now": "yesterday"})
        assert response.status_code == 400, (what, response.text)
        assert response.json() == {
            "detail": "INVALID_VALUE: 'yesterday' is not an ISO 8601 timestamp."
        }
