"""Rewind's three React views inside the real Airflow UI, in Debian's Chromium (issue 29;
SPEC R33, R35, R37, R38).

The warehouse of ``test_plugin_api.py`` (three nights of the real lifecycle, Spark
local[2], the last one a real ``rewind_nightly`` run made by ``airflow dags test``) is
served by a real ``airflow api-server`` (simple auth manager, a copy of that run's SQLite
metadata, ``REWIND_NOW`` at the warehouse's clock). Chromium (Debian's ``chromium`` +
``chromium-driver`` through Selenium, nothing downloaded) logs in with the UI's
``_token`` cookie and opens the Rewind page, the run's tab and the dashboard: each
renders inside Airflow's own page (no iframe), its figures equal
``TABLE_STORAGE_METRICS`` and the run's XCom and task states as Airflow's REST API gives
them, a table of the night links to the page narrowed to that table, the browser logs
no error, and the page's background in light and dark mode is Airflow's. A non-admin
sees no fail-safe data and no object it holds no privilege on. Under a ``base_url`` path
the app loads too. Screenshots land in ``tests/e2e/artifacts/`` (ignored by git).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from airflow_env import BIN, subprocess_environment
from test_plugin_api import REPO, RUNS, VIEW_AT, by_class, warehouse

from rewind.clock import format_timestamp
from rewind.lifecycle.metrics import BYTE_COLUMNS

pytestmark = [pytest.mark.spark, pytest.mark.e2e, pytest.mark.xdist_group("dashboard")]

__all__ = ["warehouse"]  # the fixture, shared with test_plugin_api.py

ARTIFACTS = REPO / "tests" / "e2e" / "artifacts"
START_TIMEOUT_S = 180
# The window height that shows the whole page: its height, the most any scrolling panel
# of it hides, and the browser's own frame (the window is larger than its viewport).
FULL_HEIGHT = """
    let hidden = 0;
    for (const el of document.querySelectorAll('*')) {
      const overflow = getComputedStyle(el).overflowY;
      if ((overflow === 'auto' || overflow === 'scroll') && el.scrollHeight > el.clientHeight) {
        hidden = Math.max(hidden, el.scrollHeight - el.clientHeight);
      }
    }
    const page = Math.max(document.documentElement.scrollHeight, document.body.scrollHeight);
    return page + hidden + window.outerHeight - window.innerHeight;
"""


def run_tab(warehouse: dict[str, Any]) -> str:
    """The UI path of the night's DAG run's Rewind tab."""
    return f"dags/rewind_nightly/runs/{warehouse['dag_run_id']}/plugin/rewind_run"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ApiServer:
    """``airflow api-server`` on loopback with the repository's plugin and DAGs."""

    root: Path
    warehouse: dict[str, Any]
    path: str = ""  # the base_url's path, "" or "/airflow"
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def env(self) -> dict[str, str]:
        return subprocess_environment(
            self.root / "airflow",
            AIRFLOW__CORE__PLUGINS_FOLDER=str(REPO / "plugins"),
            AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin,analyst:viewer",
            AIRFLOW__API__HOST="127.0.0.1",
            AIRFLOW__API__PORT=str(self.port),
            AIRFLOW__API__BASE_URL=self.url,
            REWIND_HOME=str(self.warehouse["home"]),
            REWIND_NOW=format_timestamp(VIEW_AT),
        )

    def run(self, *args: str) -> None:
        proc = subprocess.run(
            args, env=self.env(), capture_output=True, text=True, timeout=600, check=False
        )
        assert proc.returncode == 0, f"{args}:\n{proc.stderr[-3000:]}"

    def start(self) -> None:
        self.port = free_port()
        # The metadata of the night's `airflow dags test` run: its DAG run, task states
        # and XCom (a copy: each server and the warehouse keep theirs).
        (self.root / "airflow").mkdir()
        shutil.copy(self.warehouse["airflow_db"], self.root / "airflow" / "airflow.db")
        self.run(str(BIN / "airflow"), "dags", "reserialize")
        with open(self.root / "api-server.log", "wb") as log:
            self.proc = subprocess.Popen(
                [str(BIN / "airflow"), "api-server", "--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(),
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/version", timeout=5):
                    return
            except OSError:
                assert self.proc.poll() is None, (self.root / "api-server.log").read_text()[-3000:]
                time.sleep(1)
        pytest.fail(f"api-server not up:\n{(self.root / 'api-server.log').read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)

    def get(self, path: str, user: str = "admin") -> Any:
        """A JSON GET of the REST API as ``user``."""
        request = urllib.request.Request(
            f"{self.url}{path}", headers={"Authorization": f"Bearer {self.token(user)}"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)

    def token(self, user: str) -> str:
        passwords = self.root / "airflow" / "simple_auth_manager_passwords.json.generated"
        login = {"username": user, "password": json.loads(passwords.read_text())[user]}
        request = urllib.request.Request(
            f"{self.url}/auth/token",
            data=json.dumps(login).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return str(json.load(response)["access_token"])


@contextmanager
def serving(root: Path, warehouse: dict[str, Any], path: str = "") -> Iterator[ApiServer]:
    server = ApiServer(root, warehouse, path)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def airflow(
    warehouse: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServer]:
    with serving(tmp_path_factory.mktemp("api-server"), warehouse) as server:
        yield server


class Browser:
    """Headless Chromium logged in to Airflow as one user, in one color mode."""

    def __init__(self, driver: Any, server: ApiServer) -> None:
        self.driver, self.server = driver, server

    def login(self, user: str, mode: str = "light") -> None:
        """Start afresh as ``user`` in ``mode``: the cookies, the color mode, the window's
        size and the console log (:meth:`errors` counts from here) are this login's."""
        self.driver.get(f"{self.server.url}/api/v2/version")
        self.driver.set_window_size(1400, 1000)
        self.errors()
        self.driver.delete_all_cookies()
        self.driver.add_cookie({"name": "_token", "value": self.server.token(user)})
        # Airflow's color mode (next-themes) is kept in localStorage under "theme";
        # "system" follows the browser's preference, here dark.
        self.driver.execute_script("localStorage.setItem('theme', arguments[0])", mode)
        scheme = {"name": "prefers-color-scheme", "value": "dark"}
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [scheme]})

    def open(self, path: str, ready: str) -> None:
        """Open a UI page and wait until ``ready`` (a CSS selector) is shown."""
        self.driver.get(f"{self.server.url}/{path}")
        self.wait(ready)

    def wait(self, ready: str, timeout: float = 90) -> None:
        """Wait until the page shows ``ready`` (a CSS selector)."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, timeout).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ready))
        )

    def all(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, selector))

    def errors(self) -> list[str]:
        """What the page logged as an error since the last call."""
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def backgrounds(self, testid: str) -> tuple[str, str]:
        """The background a view is drawn on, and that of Airflow's main content."""
        script = """
            const shown = (el) => {
              for (; el; el = el.parentElement) {
                const color = getComputedStyle(el).backgroundColor;
                if (color !== 'rgba(0, 0, 0, 0)') return color;
              }
              return null;
            };
            const view = document.querySelector(`[data-testid="${arguments[0]}"]`);
            return [shown(view), shown(document.querySelector('[data-testid=main-content]'))];
        """
        found = self.driver.execute_script(script, testid)
        return str(found[0]), str(found[1])

    def screenshot(self, name: str) -> None:
        """The whole view: the window made as tall as the page plus what its panels
        scroll (the run tab scrolls inside Airflow's run page)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        height = int(self.driver.execute_script(FULL_HEIGHT))
        self.driver.set_window_size(1400, max(1000, height))
        self.driver.save_screenshot(str(ARTIFACTS / name))
        self.driver.set_window_size(1400, 1000)


@pytest.fixture(scope="module")
def browser(airflow: ApiServer) -> Iterator[Browser]:
    """One Chromium for the module's tests on ``airflow`` (a start each cost seconds of a
    loaded 2-core machine); each test's :meth:`Browser.login` starts it afresh."""
    with chromium(airflow) as shared:
        yield shared


@contextmanager
def chromium(server: ApiServer) -> Iterator[Browser]:
    """Debian's Chromium through Debian's chromedriver: nothing is downloaded."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        pytest.fail("chromium / chromedriver missing: run `make browser` (Debian packages)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--window-size=1400,1000",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(options=options, service=Service(driver))
    try:
        yield Browser(browser, server)
    finally:
        browser.quit()


def attr_bytes(elements: list[Any]) -> dict[str, int]:
    """data-metric -> data-bytes, summed, of the elements given."""
    found: dict[str, int] = {}
    for element in elements:
        metric = str(element.get_attribute("data-metric"))
        found[metric] = found.get(metric, 0) + int(element.get_attribute("data-bytes") or 0)
    return found


@pytest.mark.parametrize(
    ("mode", "shown"), [("light", "light"), ("dark", "dark"), ("system", "dark")]
)
def test_the_rewind_page_renders_inside_airflow_with_the_view_s_figures(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser, mode: str, shown: str
) -> None:
    """SPEC R33, R35: the admin's page, inside Airflow's UI, charts every night and its
    last day's stack and totals are TABLE_STORAGE_METRICS; fail-safe and runs are listed,
    the runs linked to their Airflow runs; no console error; in Airflow's light, dark or
    system (a dark browser here) mode, on Airflow's background."""
    expected = by_class(warehouse["view"])
    browser.login("admin", mode)
    browser.open("plugin/rewind", "[data-testid=runs]")
    assert browser.all("iframe") == []
    assert browser.driver.execute_script("return document.documentElement.className") == shown
    segments = browser.all("svg rect.segment")
    assert len(segments) == len(BYTE_COLUMNS) * len(RUNS)
    last = VIEW_AT.date().isoformat()
    assert attr_bytes([s for s in segments if s.get_attribute("data-date") == last]) == expected
    [total] = browser.all("[data-testid=total]")
    cells = total.find_elements("css selector", "[data-metric]")
    assert {k: v for k, v in attr_bytes(cells).items() if k != "TOTAL"} == expected
    assert {r.get_attribute("data-name") for r in browser.all("[data-testid=failsafe] tr")} >= {
        "LAB.PUBLIC.OLD",
        "SHOP.PUBLIC.ORDERS",
    }
    links = [a.get_attribute("href") for a in browser.all("[data-testid=runs] a")]
    assert any(run_tab(warehouse).replace("+", "%2B").replace(":", "%3A") in str(h) for h in links)
    view, host = browser.backgrounds("rewind-page")
    assert view == host
    assert browser.errors() == []
    browser.screenshot(f"rewind_page_{mode}.png")


def as_shown(value: Any) -> str:
    """A JSON scalar as JavaScript's ``String()`` writes it (the tab's ``data-value``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def night_in_airflow(server: ApiServer, dag_run_id: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The night's DAG run as Airflow's REST API gives it: task id -> state, and task id
    -> its XCom ``return_value`` (the authorize task's is who the run acts as)."""
    tasks = f"/api/v2/dags/rewind_nightly/dagRuns/{quote(dag_run_id, safe='')}/taskInstances"
    states = {ti["task_id"]: ti["state"] for ti in server.get(tasks)["task_instances"]}
    xcom = {
        task: server.get(f"{tasks}/{task}/xcomEntries/return_value")["value"] for task in states
    }
    return states, xcom


def test_the_nightly_run_tab_shows_that_night_s_run(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser
) -> None:
    """SPEC R29, R33, R35: the tab of the last night's run (a real ``airflow dags test``
    run) shows one step per lifecycle task, each task successful in Airflow, with every
    figure and the time its task's XCom holds and the Great Expectations results of the
    validate task's; then the night's tables, their bytes the TABLE_STORAGE_METRICS rows
    and their totals the storage_metrics task's XCom."""
    states, xcom = night_in_airflow(airflow, warehouse["dag_run_id"])
    browser.login("admin")
    browser.open(run_tab(warehouse), "[data-testid=night-tables]")
    assert browser.all("iframe") == []
    shown = [s.get_attribute("data-step") for s in browser.all("[data-testid=steps] > div")]
    assert shown == [step["step"] for step in warehouse["steps"][RUNS[-1]]]
    assert states == {"authorize": "success", **dict.fromkeys(shown, "success")}
    for step in shown:
        figures = browser.all(f"[data-step={step}] [data-figure]")
        assert {f.get_attribute("data-figure"): f.get_attribute("data-value") for f in figures} == {
            key: as_shown(value)
            for key, value in xcom[step].items()
            if key not in ("run_id", "step", "elapsed_s") and isinstance(value, int | float | str)
        }, step
        [elapsed] = browser.all(f"[data-step={step}] [data-testid=elapsed]")
        assert elapsed.text == f"{as_shown(xcom[step]['elapsed_s'])} s"
    assert int(xcom["expire_versions"]["files_moved"]) > 0
    results = browser.all("[data-testid=expectations] [data-success]")
    assert [r.get_attribute("data-success") for r in results] == [
        as_shown(result["success"]) for result in xcom["validate"]["results"]
    ]
    tables = browser.all("[data-testid=night-tables] [data-testid=group]")
    assert {
        t.get_attribute("data-name"): attr_bytes(t.find_elements("css selector", "[data-metric]"))
        for t in tables
    } == {
        f"{r['TABLE_CATALOG']}.{r['TABLE_SCHEMA']}.{r['TABLE_NAME']}": {
            **{c: r[c] for c in BYTE_COLUMNS},
            "TOTAL": sum(r[c] for c in BYTE_COLUMNS),
        }
        for r in warehouse["view"]
    }
    [total] = browser.all("[data-testid=night-tables] [data-testid=total]")
    totals = attr_bytes(total.find_elements("css selector", "[data-metric]"))
    assert {c: totals[c] for c in BYTE_COLUMNS} == {
        c: xcom["storage_metrics"][c.lower()] for c in BYTE_COLUMNS
    }
    assert browser.errors() == []
    browser.screenshot("rewind_run_tab.png")


def test_a_table_of_the_night_links_to_the_page_on_that_table(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser
) -> None:
    """SPEC R33: following SHOP.PUBLIC.ORDERS's link in the night's tab opens the Rewind
    page narrowed to that table as of that night: the scope names it, the figures table
    and the chart's last day are its TABLE_STORAGE_METRICS row."""
    orders = next(r for r in warehouse["view"] if r["TABLE_NAME"] == "ORDERS")
    mine = {c: orders[c] for c in BYTE_COLUMNS}
    browser.login("admin")
    browser.open(run_tab(warehouse), "[data-testid=night-tables]")
    [row] = browser.all("[data-testid=night-tables] [data-name='SHOP.PUBLIC.ORDERS']")
    row.find_element("css selector", "a").click()
    browser.wait("[data-testid=rewind-page] [data-testid=group]")
    assert "/plugin/rewind?" in browser.driver.current_url
    [current] = browser.all("[data-testid=scope] [aria-current=page]")
    assert current.text == "ORDERS"
    groups = browser.all("[data-testid=rewind-page] [data-testid=group]")
    assert [g.get_attribute("data-name") for g in groups] == ["SHOP.PUBLIC.ORDERS"]
    [total] = browser.all("[data-testid=total]")
    cells = total.find_elements("css selector", "[data-metric]")
    assert {k: v for k, v in attr_bytes(cells).items() if k != "TOTAL"} == mine
    last = RUNS[-1].date().isoformat()
    segments = browser.all(f"svg rect.segment[data-date='{last}']")
    assert attr_bytes(segments) == mine
    assert browser.errors() == []
    browser.screenshot("rewind_page_table.png")


def test_a_lifecycle_task_links_to_its_run_s_tab(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser
) -> None:
    """A lifecycle step's task has the extra link *Rewind lifecycle* (as the Great
    Expectations provider links Data Docs): the run's tab, which opens in Chromium; a task
    of another kind has none."""
    run = quote(warehouse["dag_run_id"], safe="")
    links = f"/api/v2/dags/rewind_nightly/dagRuns/{run}/taskInstances/{{}}/links"
    expire = airflow.get(links.format("expire_versions"))["extra_links"]
    assert expire == {"Rewind lifecycle": f"/dags/rewind_nightly/runs/{run}/plugin/rewind_run"}
    assert airflow.get(links.format("validate"))["extra_links"] == {}
    browser.login("admin")
    browser.open(expire["Rewind lifecycle"].lstrip("/"), "[data-testid=steps]")
    steps = [s.get_attribute("data-step") for s in browser.all("[data-testid=steps] > div")]
    assert steps == [step["step"] for step in warehouse["steps"][RUNS[-1]]]


def test_the_dashboard_card_shows_the_totals(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser
) -> None:
    """The card on Airflow's home page: totals by class, the next purge, the last night."""
    browser.login("admin", "dark")
    browser.open("", "[data-testid=next-purge]")
    card = browser.all("[data-testid=rewind-card] [data-metric]")
    assert attr_bytes(card) == by_class(warehouse["view"])
    assert browser.all("[data-testid=last-run] [data-state=success]")
    view, host = browser.backgrounds("rewind-card")
    assert view == host
    assert browser.errors() == []
    browser.screenshot("rewind_card_dark.png")


PHONE = (414, 900)  # a phone held upright, in CSS pixels
# The view's box, its parent's and Airflow's main content's: right edges; the view's widths;
# how wide the main content lays out with the view and without it (the view not displayed);
# and the view's widths when held to the main content's width (the space a phone gives it).
FIT = """
    const view = document.querySelector(`[data-testid="${arguments[0]}"]`);
    const main = document.querySelector('[data-testid=main-content]');
    const right = (el) => el.getBoundingClientRect().right;
    const found = [right(view), right(view.parentElement), right(main),
                   view.scrollWidth, view.clientWidth, main.scrollWidth];
    view.style.display = 'none';
    found.push(main.scrollWidth);
    view.style.display = '';
    view.style.maxWidth = `${main.clientWidth}px`;
    found.push(view.scrollWidth, view.clientWidth, main.clientWidth);
    view.style.maxWidth = '';
    return found;
"""


@pytest.mark.parametrize(
    ("view", "ready"),
    [
        ("rewind-page", "[data-testid=runs]"),
        ("rewind-card", "[data-testid=next-purge]"),
        ("rewind-run", "[data-testid=night-tables]"),
    ],
)
def test_each_view_fits_a_phone_s_width(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser, view: str, ready: str
) -> None:
    """Issue 29 (responsive): at a phone's width each view stays inside the space Airflow
    gives it, makes Airflow's main content no wider than it is without the view, and held
    to the main content's width nothing in it is wider than the view: the tables (figures,
    Great Expectations results) scroll in their own box, the chart scales, rows of figures
    and badges wrap, long headings and run ids break. Airflow's run page itself is
    1,280 px wide below its ``md`` breakpoint (its details layout's ``minW``), so the run
    tab's box there is Airflow's details panel (991 px at 414), not the phone's width:
    the tab is checked inside that panel and at the phone's width by holding it to it."""
    path = {"rewind-page": "plugin/rewind", "rewind-card": "", "rewind-run": run_tab(warehouse)}
    browser.login("admin")
    browser.driver.set_window_size(*PHONE)
    browser.open(path[view], ready)
    right, box, space, scrolled, width, laid_out, without, *held = browser.driver.execute_script(
        FIT, view
    )
    assert right <= box + 1, (view, right, box)
    if view != "rewind-run":  # inside Airflow's main content, which is the phone's width
        assert right <= space + 1, (view, right, space)
    assert scrolled <= width + 1, (view, scrolled, width)
    assert laid_out <= without + 1, (view, laid_out, without)
    held_scrolled, held_width, main_width = held
    assert held_width <= main_width + 1, (view, held_width, main_width)
    assert held_scrolled <= held_width + 1, (view, held_scrolled, held_width)
    assert browser.errors() == []


def test_a_non_admin_sees_only_its_objects_and_no_failsafe_r37_r38(
    warehouse: dict[str, Any], airflow: ApiServer, browser: Browser
) -> None:
    """SPEC R37, R38: analyst (role CLERK, SELECT on ORDERS) gets SHOP alone with ORDERS's
    bytes, no fail-safe section nor runs, and nothing of LAB anywhere on the page."""
    orders = next(r for r in warehouse["view"] if r["TABLE_NAME"] == "ORDERS")
    browser.login("analyst")
    browser.open("plugin/rewind", "[data-testid=admin-only]")
    browser.open("plugin/rewind?database=SHOP&schema=PUBLIC", "[data-testid=figures]")
    names = [r.get_attribute("data-name") for r in browser.all("[data-testid=group]")]
    assert names == ["SHOP.PUBLIC.ORDERS"]
    [total] = browser.all("[data-testid=total]")
    cells = total.find_elements("css selector", "[data-metric]")
    assert {k: v for k, v in attr_bytes(cells).items() if k != "TOTAL"} == {
        c: orders[c] for c in BYTE_COLUMNS
    }
    assert browser.all("[data-testid=fail-safe]") == []
    assert browser.all("[data-testid=lifecycle-runs]") == []
    main = browser.all("[data-testid=rewind-page]")[0].text
    assert "LAB" not in main and "Fail-safe holds" not in main
    browser.open(run_tab(warehouse), "[data-testid=error]")
    assert "ACCESS_DENIED" in browser.all("[data-testid=error]")[0].text


def test_the_views_load_under_a_base_url_path(warehouse: dict[str, Any], tmp_path: Path) -> None:
    """``[api] base_url`` with a path: the bundle and the API resolve below it."""
    with serving(tmp_path, warehouse, "/airflow") as server, chromium(server) as browser:
        browser.login("admin")
        browser.open("plugin/rewind", "[data-testid=total]")
        assert browser.all("svg rect.segment")
        assert browser.errors() == []
