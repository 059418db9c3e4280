"""The ``validate_form`` task of the manual DAGs: a checked request, acting as the run's
user (SPEC R37).

The Rewind user comes from the DAG run, never from the form
(:mod:`rewind.operations.identity`): a scheduled run acts as the service user, a manual
one as the user mapped from the Airflow user who triggered it. The request carries a
query tag naming that Airflow user and the run, so QUERY_HISTORY shows who asked; a
refusal of the identity itself (an unmapped Airflow user, a mapped user Rewind does not
know, a form naming someone else) is logged there too before it fails the task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import rewind
from rewind.config import Config
from rewind.connection import record_refusal
from rewind.errors import AccessDenied, UnknownUser
from rewind.operations.form import (
    Operation,
    RecoveryRequest,
    RestoreRequest,
    recovery_request,
    restore_request,
    with_identity,
)
from rewind.operations.identity import acting_user

NOBODY = "NOBODY"  # the name logged for a run no Airflow user triggered
LIFECYCLE_TEXT = "LIFECYCLE AUTHORIZE"


class DagRun(Protocol):
    """What this module reads of Airflow's DAG run (``context["dag_run"]``)."""

    dag_id: str
    run_id: str
    run_type: Any
    triggering_user_name: str | None


Request = TypeVar("Request", RestoreRequest, RecoveryRequest)


def restore_form(params: Mapping[str, Any], run: DagRun, home: str, now: str) -> dict[str, Any]:
    """``rewind_restore``'s checked form (its XCom), acting as the run's user."""
    return _authorized(restore_request, params, run, home, now).as_form()


def recovery_form(params: Mapping[str, Any], run: DagRun, home: str, now: str) -> dict[str, Any]:
    """``rewind_failsafe_recovery``'s checked form (its XCom), acting as the run's user."""
    return _authorized(recovery_request, params, run, home, now).as_form()


def query_tag(run: DagRun) -> str:
    """``airflow_user=<name>; dag_run=<dag id>/<run id>`` (QUERY_HISTORY.QUERY_TAG)."""
    return f"airflow_user={run.triggering_user_name or ''}; dag_run={run.dag_id}/{run.run_id}"


def statement_text(request: RestoreRequest | RecoveryRequest) -> str:
    """The statement a request runs, as QUERY_HISTORY shows it."""
    if isinstance(request, RestoreRequest) and request.operation is Operation.RESTORE_IN_PLACE:
        from rewind.sql.restore import restore_text

        return restore_text(str(request.name), **request.point.restore_args())
    return request.statement()


def lifecycle_user(run: DagRun, home: str, now: str) -> dict[str, str]:
    """``rewind_nightly``'s first task: the user the run acts as (the service user when
    scheduled) may run the lifecycle, or the run stops here. Logged in QUERY_HISTORY
    either way (``LIFECYCLE AUTHORIZE``, with the query tag)."""
    user, tag = _identity(run, home, now, lambda _user: LIFECYCLE_TEXT)
    with rewind.connect(home=home, user=user, now=now, query_tag=tag) as conn:
        result = conn.authorize_lifecycle()
    return {"acting_as": user, "query_id": result.query_id}


def _authorized(
    parse: Callable[[Mapping[str, Any]], Request],
    params: Mapping[str, Any],
    run: DagRun,
    home: str,
    now: str,
) -> Request:
    def text(user: str) -> str:  # a bad form fails here, unlogged: it is no request
        return statement_text(parse({**params, "requested_by": user}))

    user, tag = _identity(run, home, now, text)
    try:
        return parse(with_identity(params, user, tag))
    except AccessDenied as refusal:  # the form names another user
        record_refusal(_config(home, user, now, tag), text(user), refusal)
        raise


def _identity(run: DagRun, home: str, now: str, text: Callable[[str], str]) -> tuple[str, str]:
    """(the Rewind user the run acts as, its query tag); an unmapped Airflow user or a
    Rewind user that does not exist is refused and logged with ``text(user)``."""
    tag = query_tag(run)
    run_type = str(getattr(run.run_type, "value", run.run_type))
    user = run.triggering_user_name or NOBODY
    try:
        user = acting_user(run_type, run.triggering_user_name)
        with rewind.connect(home=home, user=user, now=now, query_tag=tag):
            pass  # the user exists: the job's session will open
    except (AccessDenied, UnknownUser) as refusal:
        record_refusal(_config(home, user, now, tag), text(user), refusal)
        raise
    return user, tag


def _config(home: str, user: str, now: str, tag: str) -> Config:
    return Config.load(home=home, user=user, now=now, query_tag=tag)
