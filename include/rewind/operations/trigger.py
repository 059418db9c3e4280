"""Who a task of a Rewind DAG acts for, re-derived by every task from its own run
(SPEC R37, issue 25).

Airflow lets a user who may edit a run change what travels between its tasks (PATCH an
XCom entry, clear a task, mark one successful). So no task takes identity or authority
from XCom: each builds a :class:`TaskRun` from its own context (the DAG run Airflow
recorded at trigger time: its triggering user, its form, its type; the try), maps the
Airflow user to a Rewind user (:mod:`rewind.operations.identity`; a scheduled run acts
as the service user), checks the form (:mod:`rewind.operations.form`) and logs a refusal
in QUERY_HISTORY with a query tag naming the Airflow user, the try and the run. An
action a run asked for commits at most once (:class:`~rewind.connection.RunKey`): a task
that finds it done reports it, logged as ``ALREADY_DONE``, and repeats nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import rewind
from rewind.config import Config
from rewind.connection import RunKey, record_refusal
from rewind.errors import AccessDenied, AlreadyDone, UnknownUser
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


@dataclass(frozen=True)
class TaskRun:
    """What one task knows of its run, from Airflow's record of the run (the task's
    context), never from another task's output.

    ``params``: the run's form as triggered (the DAG's defaults under ``conf``);
    ``now``: the run's clock (SPEC R15); ``home``: the Rewind home.
    """

    dag_id: str
    run_id: str
    run_type: str
    triggering_user: str | None
    try_number: int
    home: str
    now: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def key(self, action: str) -> RunKey:
        return RunKey(self.dag_id, self.run_id, action)

    @property
    def query_tag(self) -> str:
        """``airflow_user=<name>; try=<n>; dag_run=<dag id>/<run id>`` (QUERY_TAG)."""
        return (
            f"airflow_user={self.triggering_user or ''}; try={self.try_number}; "
            f"dag_run={self.dag_id}/{self.run_id}"
        )


Request = TypeVar("Request", RestoreRequest, RecoveryRequest)


def restore_request_of(run: TaskRun) -> RestoreRequest:
    """``rewind_restore``'s request, acting as the run's user (refusals logged)."""
    return _authorized(restore_request, run)


def recovery_request_of(run: TaskRun) -> RecoveryRequest:
    """``rewind_failsafe_recovery``'s request, acting as the run's user."""
    return _authorized(recovery_request, run)


def statement_text(request: RestoreRequest | RecoveryRequest) -> str:
    """The statement a request runs, as QUERY_HISTORY shows it."""
    if isinstance(request, RestoreRequest) and request.operation is Operation.RESTORE_IN_PLACE:
        from rewind.sql.restore import restore_text

        return restore_text(str(request.name), **request.point.restore_args())
    return request.statement()


def lifecycle_user(run: TaskRun) -> dict[str, str]:
    """Every task of ``rewind_nightly``: the user the run acts as (the service user when
    scheduled) may run the lifecycle, or the task stops here. Logged in QUERY_HISTORY
    either way (``LIFECYCLE AUTHORIZE``, with the query tag)."""
    user = _identity(run, lambda _user: LIFECYCLE_TEXT)
    with rewind.connect(home=run.home, user=user, now=run.now, query_tag=run.query_tag) as conn:
        result = conn.authorize_lifecycle()
    return {"acting_as": user, "query_id": result.query_id}


def already_done(
    run: TaskRun, request: RestoreRequest | RecoveryRequest, action: str
) -> dict[str, Any] | None:
    """The task's report when ``action`` of this run committed already: the request's
    form and what the action reported, with ``already_done`` set; the re-run logged in
    QUERY_HISTORY as ALREADY_DONE (who re-ran it: the tag's try). None when it has not
    committed."""
    key = run.key(action)
    with rewind.connect(
        home=run.home, user=request.requested_by, now=run.now, query_tag=run.query_tag
    ) as conn:
        done = conn.done(key)
    if done is None:
        return None
    refusal = AlreadyDone(
        f"The {key} committed already (query id {done['query_id']}); it is not repeated."
    )
    record_refusal(_config(run, request.requested_by), statement_text(request), refusal)
    return {"request": request.as_form(), **done, "already_done": True}


def _authorized(parse: Callable[[Mapping[str, Any]], Request], run: TaskRun) -> Request:
    def text(user: str) -> str:  # a bad form fails here, unlogged: it is no request
        return statement_text(parse({**run.params, "requested_by": user}))

    user = _identity(run, text)
    try:
        return parse(with_identity(run.params, user, run.query_tag))
    except AccessDenied as refusal:  # the form names another user
        record_refusal(_config(run, user), text(user), refusal)
        raise


def _identity(run: TaskRun, text: Callable[[str], str]) -> str:
    """The Rewind user the run acts as; an unmapped Airflow user or a Rewind user that
    does not exist is refused and logged with ``text(user)``."""
    user = run.triggering_user or NOBODY
    try:
        user = acting_user(run.run_type, run.triggering_user)
        with rewind.connect(home=run.home, user=user, now=run.now, query_tag=run.query_tag):
            pass  # the user exists: the job's session will open
    except (AccessDenied, UnknownUser) as refusal:
        record_refusal(_config(run, user), text(user), refusal)
        raise
    return user


def _config(run: TaskRun, user: str) -> Config:
    return Config.load(home=run.home, user=user, now=run.now, query_tag=run.query_tag)
