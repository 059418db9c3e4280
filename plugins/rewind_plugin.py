"""Rewind in the Airflow UI: what Time Travel and Fail-safe hold and cost (issue 29).

Three native views (React, ``ui/``; the built bundles are committed under
``include/rewind/ui_static/``, so installing needs no Node), rendered inside Airflow's
own UI with its theme and color mode:

- **Browse → Rewind** (``/plugin/rewind``): storage over time by object, what can still
  be undropped, fail-safe contents and upcoming purges (ACCOUNTADMIN), recent runs;
- a **Rewind lifecycle** tab on every DAG run (``.../runs/<run>/plugin/rewind_run``):
  that night's lifecycle for a ``rewind_nightly`` run; other DAGs' runs say it does not
  apply;
- a **Rewind storage** card on Airflow's dashboard;
- a **Rewind lifecycle** extra link on each lifecycle step's task, to its run's tab.

Their data is the JSON API of :mod:`rewind.plugin_api` at ``/rewind/api/v1/...``,
guarded by Airflow's auth dependencies and Rewind's user mapping (SPEC R37, R38); the
bundles are served at ``/rewind/static/``. Under an ``[api] base_url`` with a path, all
of it moves below that path (the UI resolves the bundles' relative URLs against it).

Query parameters: ``database``, ``schema``, ``table`` narrow the data to one object;
``now`` (ISO 8601) replaces the clock, like ``REWIND_NOW`` (SPEC R15).

Read-only, and thin on purpose: data from :mod:`rewind.dashboard`, routes and
authorization in :mod:`rewind.plugin_api`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from airflow.configuration import conf
from airflow.plugins_manager import AirflowPlugin
from airflow.sdk import BaseOperatorLink
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

import rewind
from rewind.operations.dagkit import LifecycleJob
from rewind.plugin_api import airflow_user, router, viewer

URL_PREFIX = "/rewind"
# The api-server's own path ([api] base_url), for links the UI opens as they are.
API_ROOT = urlsplit(conf.get("api", "base_url", fallback="")).path.rstrip("/")
RUN_TAB_ROUTE = "rewind_run"
STATIC = Path(rewind.__file__).parent / "ui_static"
# name (the UI keeps each app's component under globalThis[name]), bundle, destination,
# url_route: one bundle per view, so each has a URL of its own (the UI caches by URL).
VIEWS = [
    ("Rewind", "rewind-page.js", "nav", "rewind"),
    ("Rewind lifecycle", "rewind-run.js", "dag_run", RUN_TAB_ROUTE),
    ("Rewind storage", "rewind-card.js", "dashboard", "rewind_card"),
]

__all__ = ["RewindPlugin", "RewindRunLink", "airflow_user", "app", "viewer"]

app = FastAPI(
    title="Rewind",
    description="Storage, undroppable objects, fail-safe and lifecycle runs (read-only).",
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
)
app.include_router(router)
app.mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static")


def bundle_url(file: str) -> str:
    """The bundle's URL relative to the UI's base (``[api] base_url``), with a version
    taken from its content so a new build is never served from a browser's cache."""
    path = STATIC / file
    version = hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path.is_file() else "0"
    return f"{URL_PREFIX.lstrip('/')}/static/{file}?v={version}"


def react_apps() -> list[dict[str, Any]]:
    """The three views as Airflow's ``react_apps`` entries (``ReactAppResponse``)."""
    apps: list[dict[str, Any]] = []
    for name, file, destination, route in VIEWS:
        entry = {
            "name": name,
            "bundle_url": bundle_url(file),
            "destination": destination,
            "url_route": route,
        }
        if destination == "nav":
            entry["category"] = "browse"
        apps.append(entry)
    return apps


class RewindRunLink(BaseOperatorLink):
    """The *Rewind lifecycle* button of a lifecycle step's task: its run's Rewind tab (as
    the Great Expectations provider links a task to its Data Docs). Resolved by the
    api-server, which attaches it to ``LifecycleJob`` tasks (``operators``)."""

    name = "Rewind lifecycle"
    operators = [LifecycleJob]

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        run = quote(ti_key.run_id, safe="")
        return f"{API_ROOT}/dags/{quote(ti_key.dag_id)}/runs/{run}/plugin/{RUN_TAB_ROUTE}"


class RewindPlugin(AirflowPlugin):
    """Mounts the API and the bundles on the api-server; adds the three views to the UI."""

    name = "rewind"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "Rewind"}]
    react_apps = react_apps()
    operator_extra_links = [RewindRunLink()]
