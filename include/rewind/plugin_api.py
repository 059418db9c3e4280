"""The JSON API of the Rewind views in the Airflow UI (issue 29; SPEC R33–R35, R37, R38).

Mounted by ``plugins/rewind_plugin.py`` on the Airflow api-server at ``/rewind`` (below
``[api] base_url``'s path, if any); the React views (``ui/``) call it with the Airflow
UI's own session cookie. Routes, all GET, all JSON:

- ``/api/v1/me``: the Airflow user, the Rewind user it maps to and its default role;
- ``/api/v1/storage``: the four byte figures of SPEC R33 per day (the last 30 days)
  and per database / schema / table at the latest lifecycle run, with their totals;
- ``/api/v1/dropped``: what UNDROP can still restore, and until when (SPEC R10, R21);
- ``/api/v1/failsafe``: fail-safe contents and their purge dates — ACCOUNTADMIN only
  (SPEC R12, R38), 403 otherwise;
- ``/api/v1/runs``: the last lifecycle runs with each step's summary, and the Airflow
  ``rewind_nightly`` run each came from — ACCOUNTADMIN only (runs are account-wide);
- ``/api/v1/dag_runs/{dag_id}/{run_id}``: one ``rewind_nightly`` run's lifecycle
  summary and the tables of its night with their figures (``applies: false`` for
  another DAG's run) — ACCOUNTADMIN, and Airflow's
  read access to the DAG's runs;
- ``/api/v1/card``: the dashboard card: totals by class, the next purge and the last
  night (the last two for ACCOUNTADMIN only).

``database``, ``schema``, ``table`` narrow storage and dropped objects to one object;
``now`` (ISO 8601) replaces the clock, like ``REWIND_NOW`` (SPEC R15).

Who: Airflow's own auth dependencies (``get_user``: the bearer token, else the UI's
``_token`` cookie; ``requires_access_view`` / ``requires_access_dag``), then Rewind's
user mapping (:func:`rewind.operations.identity.rewind_user`) and the data functions of
:mod:`rewind.dashboard`, which read the metrics rows behind ``TABLE_STORAGE_METRICS``:
one implementation of each figure and of each visibility rule. No
credential, a forged or an expired token: 401 (Airflow answers 403 for a token it cannot
decode; a plugin's caller is told to log in instead). A user the mapping leaves out, or
unknown to Rewind: 403.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.auth.managers.models.resource_details import (
    AccessView,
    DagAccessEntity,
    DagDetails,
)
from airflow.api_fastapi.common.db.common import SessionDep
from airflow.api_fastapi.core_api.security import (
    bearer_scheme,
    get_user,
    requires_access_dag,
    requires_access_view,
)
from airflow.models.dagrun import DagRun
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy import select

from rewind.clock import Clock
from rewind.config import Config
from rewind.constants import ACCOUNTADMIN
from rewind.dashboard import load_dashboard, load_run
from rewind.dashboard_model import Dashboard, Group, RunSummary, Scope
from rewind.errors import AccessDenied, InvalidValue, RewindError, UnknownUser
from rewind.operations.identity import rewind_user
from rewind.operations.nightly import lifecycle_run_id

NIGHTLY = "rewind_nightly"
# Airflow runs of the nightly DAG looked at to link lifecycle runs to their DAG runs.
LINKED_RUNS = 200

Name = Annotated[str | None, Query(description="a name as shown, or unquoted (SPEC R4)")]
Now = Annotated[str | None, Query(description="ISO 8601 instant instead of the clock")]


async def airflow_user(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> BaseUser:
    """The Airflow user of the request, by Airflow's own ``get_user`` (bearer header, else
    the UI's cookie, checked by the configured auth manager); 401 for no credential or
    one the auth manager refuses."""
    try:
        return await get_user(request, None, bearer)
    except HTTPException as refused:
        if refused.status_code not in (401, 403):
            raise
        raise HTTPException(
            status_code=401,
            detail="Log in to Airflow first: the Rewind views need the Airflow API's token.",
            headers={"WWW-Authenticate": "Bearer"},
        ) from None


AirflowUser = Annotated[BaseUser, Depends(airflow_user)]


@contextmanager
def rewind_errors() -> Iterator[None]:
    """Rewind errors as one-line HTTP errors (SPEC R39)."""
    try:
        yield
    except InvalidValue as error:
        raise HTTPException(status_code=400, detail=str(error)) from None
    except (AccessDenied, UnknownUser) as error:
        raise HTTPException(status_code=403, detail=str(error)) from None
    except RewindError as error:
        raise HTTPException(status_code=503, detail=str(error)) from None


def viewer(user: AirflowUser) -> str:
    """The Rewind user the Airflow user acts as (SPEC R37); 403 when unmapped."""
    with rewind_errors():
        return rewind_user(str(user.get_name()))


Viewer = Annotated[str, Depends(viewer)]


def dashboard(
    user: Viewer,
    database: Name = None,
    schema: Name = None,
    table: Name = None,
    now: Now = None,
) -> Dashboard:
    """What ``user`` may see, as of ``now``, for the scope asked for."""
    config = Config.load()
    with rewind_errors():
        instant = Clock.from_text(now or config.now).now()
        return load_dashboard(config, instant, user, Scope(database, schema, table))


Board = Annotated[Dashboard, Depends(dashboard)]


def accountadmin_only(board: Board, what: str) -> None:
    """SPEC R12, R38: fail-safe contents and the account-wide runs are ACCOUNTADMIN's."""
    if board.catalog_found and board.role != ACCOUNTADMIN:  # no catalog: nothing to hide
        raise HTTPException(
            status_code=403,
            detail=f"ACCESS_DENIED: {what} are shown to ACCOUNTADMIN only; role {board.role}.",
        )


def jsonable(value: Any) -> Any:
    """Dataclasses as dicts, instants in ISO 8601 (FastAPI encodes the rest)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def group_json(group: Group) -> dict[str, Any]:
    """A database, schema or table's figures, with its kind."""
    return {**jsonable(group), "kind": group.kind}


def nightly_runs(session: SessionDep, user: AirflowUser) -> dict[str, str]:
    """Lifecycle run id -> the ``rewind_nightly`` DAG run it was made by, for a user who
    may read that DAG's runs (none otherwise)."""
    allowed = get_auth_manager().is_authorized_dag(
        method="GET",
        access_entity=DagAccessEntity.RUN,
        details=DagDetails(id=NIGHTLY),
        user=user,
    )
    if not allowed:
        return {}
    run_ids = session.scalars(
        select(DagRun.run_id)
        .where(DagRun.dag_id == NIGHTLY)
        .order_by(DagRun.id.desc())
        .limit(LINKED_RUNS)
    )
    return {lifecycle_run_id(NIGHTLY, run_id): run_id for run_id in run_ids}


NightlyRuns = Annotated[dict[str, str], Depends(nightly_runs)]


def run_json(run: RunSummary, dag_runs: dict[str, str]) -> dict[str, Any]:
    """A lifecycle run, its state (running, success, failed) and its Airflow run if any."""
    steps = run.steps or []
    failed = any("error" in step for step in steps)
    validated = any(step.get("step") == "validate" for step in steps)
    state = "failed" if failed else "success" if validated else "running"
    return {
        **dataclasses.asdict(run),
        "state": state,
        "dag_id": NIGHTLY if run.run_id in dag_runs else None,
        "dag_run_id": dag_runs.get(run.run_id),
    }


def next_purge(board: Dashboard) -> dict[str, Any] | None:
    """The first fail-safe batch to be purged (ACCOUNTADMIN's boards only have any)."""
    return jsonable(board.failsafe[0]) if board.failsafe else None


router = APIRouter(
    prefix="/api/v1",
    dependencies=[Depends(airflow_user), Depends(requires_access_view(AccessView.WEBSITE))],
)


@router.get("/me")
def me(user: AirflowUser, board: Board) -> dict[str, Any]:
    """Who the views are for."""
    return {
        "airflow_user": str(user.get_name()),
        "viewer": board.viewer,
        "role": board.role,
        "accountadmin": board.role == ACCOUNTADMIN,
        "now": board.now,
        "home": board.home,
    }


@router.get("/storage")
def storage(board: Board) -> dict[str, Any]:
    """SPEC R33, R35: bytes by class per day and per object (the viewer's objects)."""
    return {
        "viewer": board.viewer,
        "role": board.role,
        "now": board.now,
        "scope": jsonable(board.scope),
        "catalog_found": board.catalog_found,
        "metrics_found": board.metrics_found,
        "latest_as_of": board.latest_as_of,
        "days": [jsonable(day) for day in board.days],
        "groups": [group_json(group) for group in board.groups],
        "totals": board.totals,
    }


@router.get("/dropped")
def dropped(board: Board) -> dict[str, Any]:
    """SPEC R10, R21: the viewer's dropped objects UNDROP can still restore."""
    return {"now": board.now, "dropped": [jsonable(d) for d in board.dropped]}


@router.get("/failsafe")
def failsafe(board: Board) -> dict[str, Any]:
    """SPEC R12, R38: fail-safe batches with their purge dates, for ACCOUNTADMIN."""
    accountadmin_only(board, "Fail-safe contents")
    return {
        "now": board.now,
        "batches": [jsonable(b) for b in board.failsafe],
        "next_purge": next_purge(board),
    }


@router.get("/runs")
def runs(board: Board, dag_runs: NightlyRuns) -> dict[str, Any]:
    """SPEC R29, R35: the last lifecycle runs, newest first, for ACCOUNTADMIN."""
    accountadmin_only(board, "Lifecycle runs")
    return {"now": board.now, "runs": [run_json(run, dag_runs) for run in board.runs]}


@router.get("/card")
def card(board: Board, dag_runs: NightlyRuns) -> dict[str, Any]:
    """The dashboard card: totals by class; the next purge and the last night for
    ACCOUNTADMIN (None for other roles: they see neither)."""
    admin = board.role == ACCOUNTADMIN
    return {
        "viewer": board.viewer,
        "role": board.role,
        "now": board.now,
        "latest_as_of": board.latest_as_of,
        "totals": board.totals,
        "next_purge": next_purge(board) if admin else None,
        "last_run": run_json(board.runs[0], dag_runs) if admin and board.runs else None,
    }


@router.get(
    "/dag_runs/{dag_id}/{run_id}",
    dependencies=[Depends(requires_access_dag("GET", DagAccessEntity.RUN))],
)
def dag_run(dag_id: str, run_id: str, user: Viewer) -> dict[str, Any]:
    """One Airflow run's lifecycle summary (SPEC R29, R35): the run of ``rewind_nightly``
    ``run_id`` is the lifecycle run ``lifecycle_run_id(dag_id, run_id)``, with the tables
    of its night (their metrics rows, SPEC R33) and their totals; another DAG's run has
    none (``applies: false``)."""
    found: dict[str, Any] = {"dag_id": dag_id, "dag_run_id": run_id, "applies": dag_id == NIGHTLY}
    if dag_id != NIGHTLY:
        return {**found, "run": None}
    lifecycle_id = lifecycle_run_id(dag_id, run_id)
    with rewind_errors():
        detail = load_run(Config.load(), user, lifecycle_id)
    if detail is None:
        return {**found, "lifecycle_run_id": lifecycle_id, "run": None}
    return {
        **found,
        "lifecycle_run_id": lifecycle_id,
        "run": run_json(detail.run, {lifecycle_id: run_id}),
        "tables": [group_json(table) for table in detail.tables],
        "totals": detail.totals,
    }
