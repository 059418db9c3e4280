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

Who (SPEC R37, R38): Airflow does not authenticate a plugin's FastAPI app, so this one
does, with the Airflow API's own JWT — ``Authorization: Bearer <token>`` or the
``_token`` cookie the UI holds — checked by the configured auth manager. No token, a
forged or an expired one: 401. The Airflow user is mapped to a Rewind user
(:mod:`rewind.operations.identity`; unmapped: 403), and the page shows what that user's
default role may see: its objects, and fail-safe contents only for ACCOUNTADMIN.

Read-only, and thin on purpose: data from :mod:`rewind.dashboard`, markup from
:mod:`rewind.dashboard_html`.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any
from urllib.parse import urlsplit

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.base_auth_manager import COOKIE_NAME_JWT_TOKEN
from airflow.configuration import conf
from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from rewind.clock import Clock
from rewind.config import Config
from rewind.dashboard import load_dashboard
from rewind.dashboard_html import render_page
from rewind.dashboard_model import Dashboard, Scope
from rewind.errors import AccessDenied, InvalidValue, RewindError, UnknownUser
from rewind.operations.identity import rewind_user

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


async def airflow_user(request: Request) -> str:
    """The Airflow user whose JWT came with the request (a bearer header wins over the
    UI's cookie); 401 without one, or with one the auth manager does not accept."""
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    token = credentials.strip() if scheme.lower() == "bearer" else None
    token = token or request.cookies.get(COOKIE_NAME_JWT_TOKEN)
    unauthorized = HTTPException(
        status_code=401,
        detail="Log in to Airflow first: the Rewind page needs the Airflow API's token.",
        headers={"WWW-Authenticate": "Bearer"},
    )
    if not token:
        raise unauthorized
    try:
        user = await get_auth_manager().get_user_from_token(token)
    except Exception:  # expired, forged, malformed, revoked: all the same to the caller
        raise unauthorized from None
    return str(user.get_name())


def dashboard(
    viewer: Annotated[str, Depends(airflow_user)],
    database: Name = None,
    schema: Name = None,
    table: Name = None,
    now: Now = None,
) -> Dashboard:
    """The dashboard the request asks for, as the Rewind user mapped from the Airflow
    user; Rewind errors become one-line HTTP errors (R39)."""
    config = Config.load()
    try:
        user = rewind_user(viewer)
        instant = Clock.from_text(now or config.now).now()
        return load_dashboard(config, instant, user, Scope(database, schema, table))
    except InvalidValue as error:
        raise HTTPException(status_code=400, detail=str(error)) from None
    except (AccessDenied, UnknownUser) as error:
        raise HTTPException(status_code=403, detail=str(error)) from None
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
