"""The plugin's three React views as Airflow 3 sees them (issue 29): valid ``react_apps``
entries (Airflow's own ``ReactAppResponse``), one bundle each, committed and built for
the Airflow UI's loader (a UMD script that defines ``AirflowPlugin`` from the host's
React, JSX runtime and Chakra UI globals)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from urllib.parse import urljoin, urlsplit

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
HOST_GLOBALS = ("ReactJSXRuntime", "ChakraUI", "React")


def test_react_apps_are_valid_for_airflow(plugin: ModuleType) -> None:
    """Each entry passes Airflow's ``ReactAppResponse``; one per destination (nav in the
    Browse menu, a DAG run tab, a dashboard card) with distinct names (the UI keeps each
    component under ``globalThis[name]``), routes and bundle URLs (it caches by URL)."""
    from airflow.api_fastapi.core_api.datamodels.plugins import ReactAppResponse

    apps = [ReactAppResponse.model_validate(app) for app in plugin.RewindPlugin.react_apps]
    assert {app.destination: app.name for app in apps} == {
        "nav": "Rewind",
        "dag_run": "Rewind lifecycle",
        "dashboard": "Rewind storage",
    }
    for field in ("name", "url_route", "bundle_url"):
        values = [getattr(app, field) for app in apps]
        assert len(set(values)) == len(values), field
    [nav] = [app for app in apps if app.destination == "nav"]
    assert (nav.category, nav.url_route) == ("browse", "rewind")
    assert plugin.RewindPlugin.external_views == []


@pytest.mark.parametrize("base", ["http://localhost:8080/", "https://example.org/airflow/"])
def test_bundle_urls_resolve_below_airflow_s_base_url(plugin: ModuleType, base: str) -> None:
    """The UI loads ``new URL(bundle_url, document.baseURI)``: relative URLs land under the
    api-server's base path, at the plugin app's static mount, versioned by content."""
    for app in plugin.RewindPlugin.react_apps:
        url = urlsplit(urljoin(base, app["bundle_url"]))
        assert url.path.startswith(urlsplit(base).path + "rewind/static/rewind-")
        assert url.query.startswith("v=") and url.query != "v=0"


def test_bundles_are_committed_umd_scripts_using_the_host_s_globals(plugin: ModuleType) -> None:
    """A pip or Docker install needs no Node: the bundles are in the package. Each defines
    ``AirflowPlugin`` and takes React, the JSX runtime and Chakra UI from the globals the
    Airflow UI sets, so it bundles none of them (no second React, no second theme)."""
    for app in plugin.RewindPlugin.react_apps:
        file = plugin.STATIC / urlsplit(app["bundle_url"]).path.rsplit("/", 1)[1]
        code = file.read_text()
        assert ".AirflowPlugin=" in code
        for name in HOST_GLOBALS:
            assert f".{name}" in code, (file.name, name)
        assert "react.production" not in code and "__SECRET_INTERNALS" not in code
        assert len(code) < 100_000, file.name


def test_the_package_ships_the_bundles() -> None:
    """pyproject.toml lists them as package data of ``rewind``."""
    text = (REPO / "pyproject.toml").read_text()
    assert '"ui_static/*.js"' in text


def test_lifecycle_tasks_link_to_their_run_s_tab(plugin: ModuleType) -> None:
    """The extra link the api-server attaches to ``LifecycleJob`` tasks opens the run's
    Rewind tab (the run id quoted: ``+`` and ``:`` in scheduled run ids)."""
    from rewind.operations.dagkit import LifecycleJob

    [link] = plugin.RewindPlugin.operator_extra_links
    assert (link.name, link.operators) == ("Rewind lifecycle", [LifecycleJob])
    key = SimpleNamespace(dag_id="rewind_nightly", run_id="scheduled__2026-03-04T00:00:00+00:00")
    assert link.get_link(None, ti_key=key) == (
        "/dags/rewind_nightly/runs/scheduled__2026-03-04T00%3A00%3A00%2B00%3A00/plugin/rewind_run"
    )
