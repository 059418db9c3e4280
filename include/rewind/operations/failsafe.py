"""Fail-safe listing and recovery as the requesting user (``rewind_failsafe_recovery``).

Both run through ``rewind.connect(user=requested_by)`` (the Rewind user of the Airflow
user who triggered the run, :mod:`rewind.operations.trigger`): the library lets only
``ACCOUNTADMIN`` read the fail-safe store (SPEC R12, R37, R38), so a request by anyone
else fails with ACCESS_DENIED and reads nothing.
"""

from __future__ import annotations

from typing import Any

from rewind.operations.form import RecoveryRequest
from rewind.operations.restore import Home, outcome_of, session_for
from rewind.result import json_value


def list_recoverable(home: Home, request: RecoveryRequest, now: str) -> list[dict[str, Any]]:
    """What fail-safe holds, one dict per table (``rewind failsafe list``'s columns), as
    the request's user sees it."""
    with session_for(home, request, now) as conn:
        result = conn.failsafe_list()
    return [
        {column: json_value(value) for column, value in zip(result.columns, row, strict=True)}
        for row in result.rows
    ]


def recover(home: Home, request: RecoveryRequest, now: str) -> dict[str, Any]:
    """Recover ``request.table_id`` into ``request.target`` as the requesting user.

    Returns:
        The request, the statement text, its query id and Rewind's message.

    Raises:
        RewindError: ACCESS_DENIED, NOT_RECOVERABLE, OBJECT_ALREADY_EXISTS, ...; a refused
            recovery creates nothing (SPEC R28).
    """
    with session_for(home, request, now) as conn:
        result = conn.failsafe_recover(request.table_id, str(request.target), request.version)
    return outcome_of(request.as_form(), result)
