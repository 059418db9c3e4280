"""The Rewind page of the Airflow UI: what Time Travel and Fail-safe hold and cost.

Where: the api-server (``airflow standalone`` or ``airflow api-server``) serves it at
``http://<host>:8080/rewind/`` (HTML) and ``/rewind/api/summary`` (the same data as
JSON). The Airflow UI lists it in its menu as *Browse → Rewind*, which shows the page
inside the UI at ``/plugin/rewind``. Under an ``[api] base_url`` with a path, both
move below that path.

What, for the Rewind home of the api-server's environment (``REWIND_HOME``):

- ACTIVE, TIME_TRAVEL, FAILSAFE and RETAINED_FOR_CLONE bytes (SPEC R33) as a stacked
  chart over the last 30 days, and per database, schema or table at the latest
  lifecycle run (SPEC R35);
- dropped objects UNDROP can still restore, with their deadline (SPEC R10, R21);
- fail-safe contents with their purge dates, from the catalog's manifest (SPEC R12, R38);
- the summaries of the last lifecycle runs (SPEC R29).

Query parameters: ``database``, ``schema``, ``table`` narrow the page to one object;
``now`` (ISO 8601) replaces the clock, like ``REWIND_NOW`` (SPEC R15).

Read-only, and thin on purpose: data from :mod:`rewind.dashboard`, markup from
:mod:`rewind.dashboard_html`.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any
from urllib.parse import urlsplit

from airflow.configuration import conf
from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Query
from fastapi.responses import HTMLResponse

from rewind.clock import Clock
from rewind.config import Config
from rewind.dashboard import Dashboard, Scope, load_dashboard
from rewind.dashboard_html import render_page
from rewind.errors import InvalidValue, RewindError

URL_PREFIX = "/rewind"
# The menu entry links to the page through the api-server's own path, if it has one.
API_ROOT = urlsplit(conf.get("api", "base_url", fallback="")).path.rstrip("/")

Name = Annotated[str | None, Query(description="a name as shown, or unquoted (SPEC R4)")]
Now = Annotated[str | None, Query(description="ISO 8601 instant instead of the clock")]

app = FastAPI(
    title="Rewind",
    description="Storage, undroppable objects, fail-safe and lifecycle runs (read-only).",
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
)


def dashboard(
    database: Name = None, schema: Name = None, table: Name = None, now: Now = None
) -> Dashboard:
    """The dashboard the request asks for; Rewind errors become one-line HTTP errors (R39)."""
    config = Config.load()
    try:
        instant = Clock.from_text(now or config.now).now()
        return load_dashboard(config, instant, Scope(database, schema, table))
    except InvalidValue as error:
        raise HTTPException(status_code=400, detail=str(error)) from None
    except RewindError as error:
        raise HTTPException(status_code=503, detail=str(error)) from None


Board = Annotated[Dashboard, Depends(dashboard)]


@app.get("/", response_class=HTMLResponse)
def page(board: Board, now: Now = None) -> str:
    """The page; its links keep ``now`` when the request fixed it."""
    return render_page(board, now)


@app.get("/api/summary")
def summary(board: Board) -> dict[str, Any]:
    """The page's data: exact bytes, ISO 8601 instants."""
    return dataclasses.asdict(board)


class RewindPlugin(AirflowPlugin):
    """Mounts the page on the api-server and adds it to the UI's Browse menu."""

    name = "rewind"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "Rewind"}]
    external_views = [
        {
            "name": "Rewind",
            "href": f"{API_ROOT}{URL_PREFIX}/",
            "url_route": "rewind",
            "destination": "nav",
            "category": "browse",
        }
    ]
