"""Undrop, clone or restore in place as the requesting user (``rewind_restore``).

The request runs through ``rewind.connect(user=requested_by)`` — the Rewind user of
the Airflow user who triggered the run (:mod:`rewind.operations.trigger`) — so Rewind's
access control decides what that user may do (SPEC R37): nothing here acts with more
privileges than the user has. The validation that follows, in a job of its own (a
retry must not run the operation twice), reads as the same user: every restored table
now, against the same table at the point the operation used.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import rewind
from rewind.connection import Connection
from rewind.constants import TABLE
from rewind.errors import ValidationFailed
from rewind.identifiers import QualifiedName
from rewind.operations.form import Operation, RecoveryRequest, RestoreRequest, restore_request
from rewind.result import Result, json_value

if TYPE_CHECKING:
    import pandas as pd

Home = str | os.PathLike[str]


def run_restore(home: Home, request: RestoreRequest, now: str) -> dict[str, Any]:
    """Run ``request`` in ``home`` at ``now`` (ISO 8601) as its user; the summary is the
    restore task's XCom.

    Returns:
        The request (normalised form), the statement text, its query id and Rewind's
        message.

    Raises:
        RewindError: whatever Rewind refused (ACCESS_DENIED, TIME_TRAVEL_UNAVAILABLE, ...);
            a refused operation changed nothing (SPEC R28).
    """
    with session_for(home, request, now) as conn:
        if request.operation is Operation.RESTORE_IN_PLACE:
            result = conn.restore(str(request.name), **request.point.restore_args())
        else:
            result = conn.run(request.statement())
    return outcome_of(request.as_form(), result)


def validate_restore(home: Home, outcome: dict[str, Any], now: str) -> dict[str, Any]:
    """Check every table a restore produced holds the rows it had at the point.

    Args:
        home: the Rewind home.
        outcome: the summary ``run_restore`` returned.
        now: the clock the restore ran at (an OFFSET point means the same instant).

    Returns:
        ``{"query_id", "tables": [...]}``, one Great Expectations summary per table.

    Raises:
        ValidationFailed: naming every table whose rows differ from the point's.
    """
    from rewind.quality import validate_restored_table

    request = restore_request(outcome["request"])
    checked, failed = [], []
    with session_for(home, request, now) as conn:
        for table in restored_tables(conn, request):
            reference = at_point(request, table, outcome["query_id"])
            expected = count_rows(conn, reference)
            try:
                report = validate_restored_table(str(table), rows_of(conn, str(table)), expected)
                checked.append({"expected_from": reference, "expected_rows": expected, **report})
            except ValidationFailed as failure:
                failed.append(failure.message)
    if failed:
        raise ValidationFailed("; ".join(failed))
    return {"query_id": outcome["query_id"], "tables": checked}


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


def outcome_of(form: dict[str, Any], result: Result) -> dict[str, Any]:
    """What a task reports of the statement it ran for a request: the request's form,
    the statement, its query id and Rewind's message (the status line of a DDL)."""
    status = result.columns == ["status"] and result.rows
    return {
        "request": form,
        "statement": result.statement,
        "query_id": result.query_id,
        "message": str(json_value(result.rows[0][0])) if status else f"{len(result.rows)} rows",
    }


def describe(outcome: dict[str, Any], validation: dict[str, Any]) -> str:
    """What a restore did, for people: the statement, as whom, Rewind's message, and the
    row count of every restored table against the point."""
    request = outcome["request"]
    counts = "; ".join(
        f"{table['table']}: {table['expected_rows']} rows, as at {table['expected_from']}"
        for table in validation["tables"]
    )
    return (
        f"{request['operation']} by {request['requested_by']}: {outcome['statement']} "
        f"(query id {outcome['query_id']}). {outcome['message']} Row counts: {counts}."
    )
