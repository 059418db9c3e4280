"""The Rewind page of the Airflow UI against a real warehouse (SPEC R10–R12, R21, R33, R35).

One module-scoped warehouse is built with real SQL (Spark local[2], delta-rs, SQLite)
and the real nightly lifecycle, run every day at 13:00 for eleven days; changes happen
at noon. The page and its JSON are then read through the plugin's FastAPI app, and
inside the real Airflow api-server, and compared with what the warehouse says
independently: the metrics Delta table, ``REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS``
and the lifecycle's own summaries.

The history (retention 1 day unless said otherwise):

- SHOP.PUBLIC.ITEMS, cloned as ITEMS_COPY on day 0, updated on day 1: the old file is in
  fail-safe from day 2, then RETAINED_FOR_CLONE from day 9 (SPEC R30);
- LAB.PUBLIC.OLD dropped on day 4: in fail-safe from day 5, purged on day 12;
- SHOP.PUBLIC.ORDERS updated on day 5: old file in fail-safe from day 6, purged day 13;
- LAB.PUBLIC.SCRATCH (5 days) dropped on day 10: undroppable until day 15 (SPEC R10);
- schema LAB.TMP dropped on day 10 with its table T1: undroppable until day 11 (R11).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlencode, urljoin

import pytest
from fastapi.testclient import TestClient

import rewind
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.dashboard_html import human_bytes
from rewind.dashboard_model import LAST_RUNS
from rewind.lifecycle.metrics import BYTE_COLUMNS, metrics_path
from rewind.operations.identity import rewind_user
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
        # SPEC R37: the page as a user who may read one table of SHOP and nothing else.
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


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """``plugins/rewind_plugin.py`` imported the way Airflow imports it: by file path."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIRFLOW_HOME", str(tmp_path_factory.mktemp("airflow")))
        spec = importlib.util.spec_from_file_location(
            "rewind_plugin", REPO / "plugins" / "rewind_plugin.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module


@pytest.fixture
def viewer(plugin: ModuleType) -> Iterator[Callable[[str], None]]:
    """``viewer("analyst")``: the Airflow user the page's requests come from. The token
    check itself (401 without a real Airflow JWT) runs against the real api-server in
    :func:`test_airflow_loads_the_plugin_and_serves_the_page` and in the e2e suite;
    here the data is under test, so the identity is given, as ``admin`` by default."""

    def _as(airflow_user: str) -> None:
        plugin.app.dependency_overrides[plugin.viewer] = lambda: rewind_user(airflow_user)

    _as("admin")
    yield _as
    plugin.app.dependency_overrides.clear()


@pytest.fixture
def client(
    plugin: ModuleType, viewer: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """A client of the plugin's app; each test points REWIND_HOME where it wants."""
    for name in ("REWIND_NOW", "REWIND_CATALOG_URL", "REWIND_FAILSAFE_URI", "REWIND_AIRFLOW_USERS"):
        monkeypatch.delenv(name, raising=False)
    with TestClient(plugin.app) as test_client:
        yield test_client


def summary(client: Any, now: datetime, **scope: str) -> dict[str, Any]:
    response = client.get("/api/summary", params={"now": format_timestamp(now), **scope})
    assert response.status_code == 200, response.text
    return response.json()


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# -- reading the page ---------------------------------------------------------------------


@dataclass
class Cell:
    attrs: dict[str, str]
    text: str = ""
    times: list[datetime] = field(default_factory=list)


@dataclass
class Row:
    attrs: dict[str, str]
    cells: list[Cell] = field(default_factory=list)


class Page(HTMLParser):
    """The page's chart segments, links and table rows, as a browser test would see them."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.rects: list[dict[str, str]] = []
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.tables: dict[str, list[Row]] = defaultdict(list)
        self.steps: list[tuple[str, str]] = []  # lifecycle steps shown: (name, text)
        self._table: str | None = None
        self._cell: Cell | None = None
        self._in_step = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.ids.add(found.get("id", ""))
        if tag == "rect":
            self.rects.append(found)
        elif tag in ("a", "form"):
            self.links.append(found.get("href", found.get("action", "")))
        elif tag == "table":
            self._table = found["id"]
        elif tag == "tr" and self._table:
            self.tables[self._table].append(Row(found))
        elif tag == "td" and self._table:
            self._cell = Cell(found)
            self.tables[self._table][-1].cells.append(self._cell)
        elif tag == "li" and "data-step" in found:
            self.steps.append((found["data-step"], ""))
            self._in_step = True
        elif tag == "time" and self._cell is not None:
            self._cell.times.append(instant(found["datetime"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag == "td":
            self._cell = None
        elif tag == "li":
            self._in_step = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text += data
        if self._in_step:
            name, text = self.steps[-1]
            self.steps[-1] = (name, text + data)

    def rows(self, table_id: str, **attrs: str) -> list[Row]:
        """The rows of a table (not its header) that have ``attrs``."""
        return [r for r in self.tables[table_id] if r.cells and attrs.items() <= r.attrs.items()]


def page(client: Any, now: datetime, **scope: str) -> Page:
    response = client.get("/", params={"now": format_timestamp(now), **scope})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    return Page(response.text)


def figures(row: Row) -> dict[str, int]:
    return {
        c.attrs["data-metric"]: int(c.attrs["data-bytes"])
        for c in row.cells
        if "data-bytes" in c.attrs
    }


# -- the storage chart and figures (SPEC R33, R35) ----------------------------------------


def test_the_chart_stacks_the_four_figures_of_every_day_of_the_metrics_table(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R33, R35: one segment per day and byte column, its bytes the day's sum in the
    metrics time series; the stack of a day is every byte stored that day."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    shown = page(client, VIEW_AT)
    segments: dict[str, dict[str, int]] = defaultdict(dict)
    for rect in shown.rects:
        segments[rect["data-date"]][rect["data-metric"]] = int(rect["data-bytes"])
    assert len(shown.rects) == len(BYTE_COLUMNS) * len(RUNS)
    assert segments == warehouse.daily_metrics()
    assert sorted(segments) == [run.date().isoformat() for run in RUNS]
    # the history reaches every figure somewhere, so no column can be silently dropped
    assert all(any(day[c] for day in segments.values()) for c in BYTE_COLUMNS)


def test_totals_are_the_latest_run_of_table_storage_metrics(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R33: per database and in total, the page shows the figures of the view."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    view = warehouse.view(VIEW_AT)
    shown = page(client, VIEW_AT)
    expected: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(BYTE_COLUMNS, 0))
    for row in view:
        for column in BYTE_COLUMNS:
            expected[row["TABLE_CATALOG"]][column] += row[column]
            expected["Total"][column] += row[column]
    found = {r.attrs["data-name"]: figures(r) for r in shown.rows("totals", **{"class": "group"})}
    [total] = shown.rows("totals", **{"class": "total"})
    found["Total"] = figures(total)
    for figs in found.values():
        assert figs.pop("TOTAL") == sum(figs.values())
    assert found == expected
    assert [c.text for c in total.cells[2:6]] == [
        human_bytes(expected["Total"][c]) for c in BYTE_COLUMNS
    ]


def test_a_scope_narrows_every_section_to_its_objects(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per database, schema and table: the breakdown goes one level down, unquoted names
    match in any case (SPEC R4), and the figures are the view's rows of those objects."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    view = warehouse.view(VIEW_AT)
    lab = summary(client, VIEW_AT, database="lab")
    assert [(g["database"], g["schema"]) for g in lab["groups"]] == [
        ("LAB", "PUBLIC"),
        ("LAB", "TMP"),
    ]
    assert {d["name"] for d in lab["dropped"]} == {"LAB.PUBLIC.SCRATCH", "LAB.TMP", "LAB.TMP.T1"}
    assert [b["table"] for b in lab["failsafe"]] == ["LAB.PUBLIC.OLD"]

    shop = summary(client, VIEW_AT, database="SHOP", schema="PUBLIC")
    by_table = {r["TABLE_NAME"]: r for r in view if r["TABLE_CATALOG"] == "SHOP"}
    assert {g["table"]: g["bytes"] for g in shop["groups"]} == {
        name: {c: row[c] for c in BYTE_COLUMNS} for name, row in by_table.items()
    }
    assert (shop["dropped"], [b["table"] for b in shop["failsafe"]]) == ([], ["SHOP.PUBLIC.ORDERS"])

    orders = summary(client, VIEW_AT, database="SHOP", schema="PUBLIC", table="ORDERS")
    assert orders["totals"] == {c: by_table["ORDERS"][c] for c in BYTE_COLUMNS}
    assert {d["date"] for d in orders["days"]} == {run.date().isoformat() for run in RUNS}


def test_the_window_is_the_last_30_days_up_to_now(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R15, R35: the page as of an instant shows the runs up to it and no later, and
    no day older than 30 days; dropped objects and runs follow the same clock."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    early = summary(client, at(3, 14))
    assert [d["date"] for d in early["days"]] == [run.date().isoformat() for run in RUNS[:4]]
    assert instant(early["latest_as_of"]) == at(3, 13)
    assert [instant(r["now"]) for r in early["runs"]] == RUNS[3::-1]
    assert early["dropped"] == []  # nothing was dropped yet
    late = summary(client, at(35, 14))
    assert [d["date"] for d in late["days"]] == [run.date().isoformat() for run in RUNS[6:]]
    assert late["dropped"] == []  # every UNDROP deadline has passed


# -- dropped objects, fail-safe, runs (SPEC R10–R12, R21, R29) ----------------------------


def test_dropped_objects_are_listed_until_their_undrop_deadline(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R10, R11, R21: the deadline is dropped_on + the retention at drop; children
    dropped with their schema keep the schema's retention and name it; OLD, dropped on
    day 4 with 1 day, is no longer undroppable."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    rows = page(client, VIEW_AT).rows("dropped")
    found = [(r.cells[0].text, r.cells[1].text, r.cells[3].text, r.cells[5].text) for r in rows]
    assert found == [
        ("SCHEMA", "LAB.TMP", "1", ""),
        ("TABLE", "LAB.TMP.T1", "1", "LAB.TMP"),
        ("TABLE", "LAB.PUBLIC.SCRATCH", "5", ""),
    ]
    deadlines = [(r.cells[2].times, r.cells[4].times) for r in rows]
    assert deadlines == [([at(10)], [at(11)]), ([at(10)], [at(11)]), ([at(10)], [at(15)])]
    assert [r.cells[1].text for r in page(client, at(11, 14)).rows("dropped")] == [
        "LAB.PUBLIC.SCRATCH"
    ]


def test_failsafe_lists_the_manifest_with_purge_dates(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R12, R33: what left time travel, from when and until its purge 7 days later;
    the bytes of a table are its FAILSAFE_BYTES in the view. ITEMS's old file, purged
    for ITEMS on day 9, is retained for its clone, not in fail-safe (SPEC R30)."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    view = {r["TABLE_NAME"]: r for r in warehouse.view(VIEW_AT)}
    rows = page(client, VIEW_AT).rows("fail-safe")
    found = [
        (r.cells[0].text, int(r.cells[2].attrs["data-bytes"]), r.cells[3].times, r.cells[4].times)
        for r in rows
    ]
    assert found == [
        ("LAB.PUBLIC.OLD", view["OLD"]["FAILSAFE_BYTES"], [at(5)], [at(5) + FAILSAFE]),
        ("SHOP.PUBLIC.ORDERS", view["ORDERS"]["FAILSAFE_BYTES"], [at(6)], [at(6) + FAILSAFE]),
    ]
    assert all(b > 0 for _, b, _, _ in found)
    assert view["ITEMS"]["FAILSAFE_BYTES"] == 0 < view["ITEMS"]["RETAINED_FOR_CLONE_BYTES"]


def test_runs_show_the_last_lifecycle_summaries(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R29, R35: the last runs, newest first, with what each step reported."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    rows = page(client, VIEW_AT).rows("runs")
    assert [r.cells[0].times for r in rows] == [[run] for run in RUNS[::-1][:LAST_RUNS]]
    newest = warehouse.steps[RUNS[-1]]
    assert rows[0].attrs["data-run-id"] == newest[0]["run_id"]
    shown = page(client, VIEW_AT).steps[: len(newest)]
    assert [name for name, _ in shown] == [step["step"] for step in newest]
    for step, (_, text) in zip(newest, shown, strict=True):
        figures_shown = set(text.split(": ", 1)[1].split(" · "))
        scalars = {f"{k} {v}" for k, v in step.items() if isinstance(v, int | float | str)}
        assert scalars - {f"step {step['step']}", f"run_id {step['run_id']}"} <= figures_shown
    totals = {c: sum(r[c] for r in warehouse.view(VIEW_AT)) for c in BYTE_COLUMNS}
    metrics_text = dict(shown)["storage_metrics"].split(": ", 1)[1]
    assert {f"{c.lower()} {v}" for c, v in totals.items()} <= set(metrics_text.split(" · "))
    moved = summary(client, at(6, 14))["runs"][0]["steps"]
    assert [s["files_moved"] for s in moved if s["step"] == "expire_versions"] == [1]


# -- read-only, relative, served by Airflow -----------------------------------------------


def test_a_user_sees_only_what_its_role_may_see_and_no_failsafe_r37_r38(
    warehouse: Warehouse,
    client: Any,
    viewer: Callable[[str], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SPEC R37, R38: ANALYST (role CLERK, SELECT on SHOP.PUBLIC.ORDERS only) sees SHOP and
    ORDERS with their bytes, nothing of LAB, no dropped object of others, and neither
    fail-safe contents nor lifecycle runs; ADMIN sees them all."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    admin = summary(client, VIEW_AT)
    in_shop = summary(client, VIEW_AT, database="SHOP", schema="PUBLIC")["groups"]
    viewer("analyst")
    mine = summary(client, VIEW_AT)
    assert (mine["viewer"], mine["role"]) == ("ANALYST", "CLERK")
    assert [g["database"] for g in mine["groups"]] == ["SHOP"]
    tables = summary(client, VIEW_AT, database="SHOP", schema="PUBLIC")["groups"]
    assert [g["table"] for g in tables] == ["ORDERS"]
    assert tables == [g for g in in_shop if g["table"] == "ORDERS"]
    assert (mine["dropped"], mine["failsafe"], mine["runs"]) == ([], [], [])
    assert admin["failsafe"] and admin["runs"] and admin["dropped"]
    # Where the server keeps the home is the administrator's to know (issue 25).
    assert (admin["home"], mine["home"]) == (str(warehouse.home), "")
    shown = page(client, VIEW_AT)
    assert "admin-only" in shown.ids and "fail-safe" not in shown.ids
    html = client.get("/", params={"now": format_timestamp(VIEW_AT)}).text
    assert "LAB" not in html and str(warehouse.home) not in html
    viewer("nobody-here")
    response = client.get("/api/summary", params={"now": format_timestamp(VIEW_AT)})
    assert response.status_code == 403 and "UNKNOWN_USER" in response.text


def test_the_page_writes_nothing_and_links_relative(
    warehouse: Warehouse, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-only: the catalog is byte-for-byte the same after the page and the JSON have
    been read. Every link stays under the page's own URL, whatever prefix mounts it."""
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    before = warehouse.catalog_dump()
    shown = page(client, VIEW_AT, database="SHOP")
    summary(client, VIEW_AT)
    assert warehouse.catalog_dump() == before
    base = "http://airflow.example/some/prefix/rewind/"
    assert shown.links and all(urljoin(base, link).startswith(base) for link in shown.links)
    json_link = "api/summary?" + urlencode({"database": "SHOP", "now": format_timestamp(VIEW_AT)})
    assert json_link in shown.links


def test_an_empty_home_shows_an_empty_page_and_creates_nothing(
    client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No catalog yet: an empty state, not a traceback, and no file is created."""
    home = tmp_path / "nothing-here"
    monkeypatch.setenv("REWIND_HOME", str(home))
    shown = page(client, VIEW_AT)
    assert "empty" in shown.ids and not shown.rects
    data = summary(client, VIEW_AT)
    assert (data["catalog_found"], data["metrics_found"], data["groups"]) == (False, False, [])
    assert not home.exists()


def test_a_home_without_lifecycle_runs_still_lists_dropped_tables(
    connect: Any, home: Path, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R21: before the first lifecycle run there are no metrics, but UNDROP works and
    the page says until when."""
    connect(now=format_timestamp(at(0))).sql(
        "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT); DROP TABLE D.PUBLIC.T"
    )
    monkeypatch.setenv("REWIND_HOME", str(home))
    data = summary(client, at(0, 14))
    assert (data["catalog_found"], data["metrics_found"], data["days"]) == (True, False, [])
    assert [(d["name"], instant(d["undrop_until"])) for d in data["dropped"]] == [
        ("D.PUBLIC.T", at(1))
    ]


def test_a_bad_instant_is_a_one_line_error(
    client: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SPEC R39: a stable code and one line, no traceback."""
    monkeypatch.setenv("REWIND_HOME", str(tmp_path))
    response = client.get("/", params={"now": "yesterday"})
    assert response.status_code == 400
    assert response.json() == {"detail": "INVALID_VALUE: 'yesterday' is not an ISO 8601 timestamp."}


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
[info] = [p for p in plugins_manager.get_plugin_info() if p["name"] == "rewind"]
apps = plugins_manager.get_fastapi_plugins()[0]
client = TestClient(create_app())
prefix, now = sys.argv[2], sys.argv[3]
token = get_auth_manager().generate_jwt(SimpleAuthManagerUser(username="admin", role="admin"))
claims = jwt.decode(token, options={"verify_signature": False})
forged = jwt.encode(claims, "not the api secret", algorithm="HS512")
summary_url, page_url = prefix + "/rewind/api/summary", prefix + "/rewind/"
refused = [
    client.get(summary_url, params={"now": now}).status_code,
    client.get(page_url, params={"now": now}).status_code,
    client.get(summary_url, headers={"Authorization": "Bearer " + forged}).status_code,
    client.get(page_url, cookies={"_token": forged}).status_code,
    client.get(summary_url, headers={"Authorization": "Bearer garbage"}).status_code,
]
summary = client.get(summary_url, params={"now": now}, headers={"Authorization": "Bearer " + token})
page = client.get(page_url, params={"now": now}, cookies={"_token": token})
json.dump({
    "refused": refused,
    "import_errors": plugins_manager.get_import_errors(),
    "fastapi_apps": [[a["name"], a["url_prefix"]] for a in apps],
    "plugin": PluginResponse.model_validate(info).model_dump(mode="json"),
    "summary": [summary.status_code, summary.json()],
    "page": [page.status_code, page.text],
}, open(sys.argv[1], "w"))
"""


@pytest.mark.parametrize(
    "base_url, prefix", [("", ""), ("http://localhost:8080/airflow", "/airflow")]
)
def test_airflow_loads_the_plugin_and_serves_the_page(
    warehouse: Warehouse,
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    base_url: str,
    prefix: str,
) -> None:
    """Airflow's plugins manager loads ``plugins/``: the FastAPI app is mounted on the real
    api-server app, its three React views are valid react_apps (the Browse-menu entry
    among them, under ``[api] base_url`` too), and the mounted page serves the warehouse's
    real data — only to a request carrying a real Airflow JWT (bearer header or the UI's
    cookie): without one, with a forged or a malformed one, 401 (SPEC R37, R38)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REWIND_", "AIRFLOW"))}
    env.update(
        AIRFLOW_HOME=str(tmp_path / "airflow"),
        AIRFLOW__CORE__PLUGINS_FOLDER=str(REPO / "plugins"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__API__BASE_URL=base_url,
        REWIND_HOME=str(warehouse.home),
    )
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-c", AIRFLOW_SCRIPT, str(out), prefix, format_timestamp(VIEW_AT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(out.read_text())
    assert seen["refused"] == [401] * 5
    assert seen["import_errors"] == {}
    assert ["Rewind", "/rewind"] in seen["fastapi_apps"]
    assert seen["plugin"]["external_views"] == []
    apps = {a["destination"]: a for a in seen["plugin"]["react_apps"]}
    assert {k: apps["nav"][k] for k in ("name", "url_route", "category")} == {
        "name": "Rewind",
        "url_route": "rewind",
        "category": "browse",
    }
    assert sorted(apps) == ["dag_run", "dashboard", "nav"]
    monkeypatch.setenv("REWIND_HOME", str(warehouse.home))
    assert seen["summary"] == [200, summary(client, VIEW_AT)]
    assert seen["page"][0] == 200
    assert len(Page(seen["page"][1]).rects) == len(BYTE_COLUMNS) * len(RUNS)
