"""Fail-safe recovery as the requesting user (``rewind_failsafe_recovery``).

It runs through ``rewind.connect(user=requested_by)`` (the Rewind user of the Airflow
user who triggered the run, re-derived by the task from its run,
:mod:`rewind.operations.trigger`): the library lets only ``ACCOUNTADMIN`` read the
fail-safe store (SPEC R12, R37, R38), so a request by anyone else fails with
ACCESS_DENIED and reads nothing. What fail-safe holds is never listed in Airflow (any
reader of the DAG's runs would see it): the ACCOUNTADMIN finds a table id with
``rewind failsafe list`` or on the Rewind page.
"""

from __future__ import annotations

from typing import Any

from rewind.errors import AlreadyDone
from rewind.operations.restore import session_for
from rewind.operations.trigger import TaskRun, already_done, recovery_request_of

RECOVER = "recover"


def recover(run: TaskRun) -> dict[str, Any]:
    """Recover the form's table into its target as the run's user, at most once per run.

    Returns:
        The request, the statement text, its query id and Rewind's message;
        ``already_done`` when an earlier try of the run had committed it.

    Raises:
        RewindError: ACCESS_DENIED, NOT_RECOVERABLE, OBJECT_ALREADY_EXISTS, ...; a refused
            recovery creates nothing (SPEC R28).
    """
    request = recovery_request_of(run)
    form, key = request.as_form(), run.key(RECOVER)
    done = already_done(run, request, RECOVER)
    if done is not None:
        return done
    with session_for(run.home, request, run.now) as conn:
        try:
            result = conn.failsafe_recover(
                request.table_id, str(request.target), request.version, once=key
            )
        except AlreadyDone:
            return {"request": form, **(conn.done(key) or {}), "already_done": True}
    return {"request": form, **result.outcome()}
