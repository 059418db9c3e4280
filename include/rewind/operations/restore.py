"""Undrop, clone or restore in place as the requesting user (``rewind_restore``).

The request runs through ``rewind.connect(user=requested_by)`` — the Rewind user of
the Airflow user who triggered the run, re-derived by each task from its run
(:mod:`rewind.operations.trigger`) — so Rewind's access control decides what that user
may do (SPEC R37): nothing here acts with more privileges than the user has. The
operation commits at most once per run (``RESTORE``, :func:`restore`, in the task
itself: undrop, clones and restores in place write metadata only, no Spark), and so
does its validation (``VALIDATE``, a Spark job that reads the rows): a re-run of
either task reports what was done.
The validation reads as the same user: every restored table now, against the same
table at the point the operation used. What a task reports names nothing the form did
not name and counts no rows (any reader of the DAG's runs sees it, R37, R38).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import rewind
from rewind.connection import Connection, RunKey
from rewind.constants import TABLE
from rewind.errors import AlreadyDone, ExecutionError, ValidationFailed
from rewind.identifiers import QualifiedName
from rewind.operations.form import Operation, RecoveryRequest, RestoreRequest
from rewind.operations.trigger import TaskRun, already_done, restore_request_of

if TYPE_CHECKING:
    import pandas as pd

Home = str | os.PathLike[str]
RESTORE, VALIDATE = "restore", "validate"


def restore(run: TaskRun) -> dict[str, Any]:
    """The ``restore`` task: the run's request as its user, at most once per run
    (:func:`run_restore`); when the run committed it already, what it reported."""
    request = restore_request_of(run)
    done = already_done(run, request, RESTORE)
    if done is not None:
        return done
    return run_restore(run.home, request, run.now, run.key(RESTORE))


def job_arguments(run: TaskRun) -> list[str] | dict[str, Any]:
    """What the ``validate_result`` task hands its Spark job, derived from its own run:
    the checked request and the run's key; or, when this run's validation committed
    already, what it reported (the job is not started)."""
    request = restore_request_of(run)
    done = already_done(run, request, VALIDATE)
    if done is not None:
        return done
    return [
        *("--request", json.dumps(request.as_form())),
        *("--dag-id", run.dag_id, "--dag-run-id", run.run_id),
    ]


def run_restore(home: Home, request: RestoreRequest, now: str, run: RunKey) -> dict[str, Any]:
    """Run ``request`` in ``home`` at ``now`` (ISO 8601) as its user, at most once for
    the run ``run`` (its action ``RESTORE``); the summary is the restore task's XCom.
    No Spark: an undrop, a clone and a restore in place write the catalog and Delta
    logs only.

    Returns:
        The request (normalised form), the statement text, its query id and Rewind's
        message; ``already_done`` when an earlier try had committed it.

    Raises:
        RewindError: whatever Rewind refused (ACCESS_DENIED, TIME_TRAVEL_UNAVAILABLE, ...);
            a refused operation changed nothing (SPEC R28).
    """
    with session_for(home, request, now) as conn:
        try:
            if request.operation is Operation.RESTORE_IN_PLACE:
                restore = request.point.restore_args()
                result = conn.restore(str(request.name), **restore, once=run)
            else:
                result = conn.run(request.statement(), once=run)
        except AlreadyDone:
            return {"request": request.as_form(), **(conn.done(run) or {}), "already_done": True}
    return {"request": request.as_form(), **result.outcome()}


def validate_restore(home: Home, request: RestoreRequest, now: str, run: RunKey) -> dict[str, Any]:
    """Check every table the run's restore produced holds the rows it had at the point,
    at most once for the run ``run`` (its action ``VALIDATE``).

    Returns:
        ``{"request", "query_id", "tables_checked", "message"}``: the restore's query id,
        how many tables matched (all of them), and what was done, for people.

    Raises:
        ExecutionError: the run's restore has not committed (nothing to validate).
        ValidationFailed: some tables differ from the point (how many; the counts are
            the user's statements in QUERY_HISTORY).
    """
    from rewind.quality import validate_restored_table

    restore = RunKey(run.dag_id, run.run_id, RESTORE)
    with session_for(home, request, now) as conn:
        restored = conn.done(restore)
        if restored is None:
            raise ExecutionError(
                f"The {restore} has not committed: there is nothing to validate.",
                code="NOTHING_TO_VALIDATE",
            )
        tables, failed = restored_tables(conn, request), 0
        for table in tables:
            expected = count_rows(conn, at_point(request, table, restored["query_id"]))
            try:
                validate_restored_table(str(table), rows_of(conn, str(table)), expected)
            except ValidationFailed:
                failed += 1
        if failed:
            raise ValidationFailed(
                f"{failed} of {len(tables)} tables of {request.restored} do not hold the rows "
                "they had at the point (the counts are this user's queries in QUERY_HISTORY)."
            )
        summary = {
            "query_id": restored["query_id"],
            "tables_checked": len(tables),
            "message": describe(request, restored, len(tables)),
        }
        try:
            conn.record_done(run, restored["query_id"], summary)
        except AlreadyDone:
            return {"request": request.as_form(), **(conn.done(run) or {}), "already_done": True}
    return {"request": request.as_form(), **summary}


def session_for(home: Home, request: RestoreRequest | RecoveryRequest, now: str) -> Connection:
    """A session as the request's user, its statements tagged with who asked (R36, R37)."""
    return rewind.connect(
        home=home, user=request.requested_by, now=now, query_tag=request.query_tag or None
    )


def restored_tables(conn: Connection, request: RestoreRequest) -> list[QualifiedName]:
    """The tables of the restored object: itself, or the live tables of the container."""
    restored = request.restored
    if request.object_type == TABLE:
        return [restored]
    shown = conn.run(f"SHOW TABLES IN {request.object_type} {restored}")
    rows = zip(
        shown.column("database_name"),
        shown.column("schema_name"),
        shown.column("name"),
        strict=True,
    )
    return sorted((QualifiedName(tuple(row)) for row in rows), key=str)


def at_point(request: RestoreRequest, table: QualifiedName, query_id: str) -> str:
    """``table`` at the operation's point: for a clone, the source's version the clone
    read (``AT(STATEMENT => clone)``, SPEC R16); for an undrop, the state when dropped
    (``BEFORE(STATEMENT => undrop)``); for a restore in place, the point it was given."""
    if request.operation is Operation.CLONE:
        inner = table.parts[len(request.restored.parts) :]
        source = QualifiedName(request.name.parts + inner)
        return f"{source} AT(STATEMENT => '{query_id}')"
    if request.operation is Operation.UNDROP:
        return f"{table} BEFORE(STATEMENT => '{query_id}')"
    return f"{table}{request.point.sql()}"


def count_rows(conn: Connection, reference: str) -> int:
    """``SELECT count(*)`` of one table reference (a name with an optional point)."""
    return int(conn.run(f"SELECT count(*) FROM {reference}").rows[0][0])


def rows_of(conn: Connection, table: str) -> pd.DataFrame:
    """Every row of ``table`` now, read as the session's user."""
    import pandas as pd

    result = conn.run(f"SELECT * FROM {table}")
    return pd.DataFrame(result.rows, columns=result.columns)


def describe(request: RestoreRequest, restored: dict[str, Any], tables: int) -> str:
    """What a restore did, for people: the statement, as whom, Rewind's message, and
    that every restored table holds the point's rows (no names, no counts)."""
    return (
        f"{request.operation.value} by {request.requested_by}: {restored['statement']} "
        f"(query id {restored['query_id']}). {restored['message']} "
        f"{tables} table(s) hold the rows they had at the point."
    )
