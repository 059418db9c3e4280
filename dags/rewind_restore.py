"""
# rewind_restore — undrop, clone at a point, restore in place (SPEC R21, R24)

Trigger it with the form:

- **operation**: `undrop` (the most recently dropped incarnation, R21), `clone` (a new
  object holding the point, R24) or `restore_in_place` (the table's next version holds
  the point).
- **object_type**, **name**: `TABLE DB.SCHEMA.T`, `SCHEMA DB.S` or `DATABASE DB`.
- **point_kind**, **point_relation**, **point_value**: `now`, or `AT`/`BEFORE` a
  `timestamp` (ISO 8601), an `offset` (seconds, `-3600`) or a `statement` (query id), R16.
- **target_name**: the clone's name.
- **ignore_insufficient_retention**: a schema/database clone skips the tables whose
  retention does not reach the point.

1. **validate_form** — a bad form fails at once with the reason (`INVALID_VALUE: ...`).
   The run acts as the Rewind user mapped from the Airflow user who triggered it
   (`REWIND_AIRFLOW_USERS`, same name by default); an unmapped user is refused
   (`ACCESS_DENIED`), and the refusal is in QUERY_HISTORY with the Airflow user named.
2. **restore** — the operation, as that user, in the task itself: undrop, clones and
   restores in place write the catalog and Delta logs only, so no Spark job is started
   for them; Rewind's refusals (ACCESS_DENIED, TIME_TRAVEL_UNAVAILABLE, ...) fail it at
   once, without retries, and change nothing (R28).
3. **validate_result** — a Great Expectations row-count check in a Spark job
   (`spark_jobs/validate_restore.py`): every restored table holds the rows it had at
   the point. Its XCom says what was done, as whom, and how many tables matched.

Every task derives the user and the request from the run itself (who triggered it, with
which form), never from another task's XCom, which a user who may edit runs can change.
The restore commits at most once per run, and so does its validation: a retry or a
clear of a task whose action committed reports it (`already_done`, logged in
QUERY_HISTORY as `ALREADY_DONE` with the try in the query tag) and repeats nothing. XComs
and logs name only what the form named and count no rows: anyone who may read this
DAG's runs reads them.

The clock is the run's `run_after` (the trigger time). The restore and its validation
share the pool `rewind_lifecycle` with the nightly lifecycle, so a restore never
overlaps a step that moves files. Restore in place is one new version of the same table
holding the point's files (like Delta's RESTORE), not clone + swap: the table keeps its
id and history.
Airflow's permissions decide who may trigger this DAG; Rewind's access control decides
what the triggering user's Rewind user may do (R37): the form has no identity field.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import Param, dag, task

from rewind.operations.dagkit import (
    HOME,
    POOL,
    TRIGGER_TIME,
    RestoreValidationJob,
    on_trigger,
    task_run,
    with_aws_connection,
)

PARAMS = {
    "operation": Param(
        "undrop",
        type="string",
        enum=["undrop", "clone", "restore_in_place"],
        title="Operation",
        description="undrop, clone at a point, or restore a table in place as of a point",
    ),
    "object_type": Param(
        "TABLE", type="string", enum=["TABLE", "SCHEMA", "DATABASE"], title="Object type"
    ),
    "name": Param(
        "",
        type="string",
        title="Object",
        description="fully qualified: DB.SCHEMA.TABLE, DB.SCHEMA or DB",
    ),
    "point_kind": Param(
        "now",
        type="string",
        enum=["now", "timestamp", "offset", "statement"],
        title="Point in time",
    ),
    "point_relation": Param("AT", type="string", enum=["AT", "BEFORE"], title="AT or BEFORE"),
    "point_value": Param(
        "",
        type="string",
        title="Point value",
        description="ISO 8601 timestamp, negative seconds (-3600) or a query id",
    ),
    "target_name": Param(
        "", type="string", title="Target", description="the clone's fully qualified name"
    ),
    "ignore_insufficient_retention": Param(
        False,
        type="boolean",
        title="Ignore tables with insufficient data retention",
        description="schema and database clones only",
    ),
}


@dag(**on_trigger(), params=PARAMS, tags=["rewind", "restore", "spark"], doc_md=__doc__)
def rewind_restore() -> None:
    @task
    @with_aws_connection
    def validate_form(home: str, now: str) -> dict[str, Any]:
        """The form as a checked request acting as the run's user (a RewindError names
        what is wrong)."""
        from airflow.sdk import get_current_context

        from rewind.operations.trigger import restore_request_of

        return restore_request_of(task_run(get_current_context(), home, now)).as_form()

    @task(pool=POOL)
    @with_aws_connection
    def restore(home: str, now: str) -> dict[str, Any]:
        """The operation as the run's user, at most once per run (no Spark)."""
        from airflow.sdk import get_current_context

        from rewind.operations.restore import restore

        return restore(task_run(get_current_context(), home, now))

    validate_result = RestoreValidationJob(
        task_id="validate_result", job="validate_restore", now=TRIGGER_TIME, pool=POOL
    )
    validate_form(HOME, TRIGGER_TIME) >> restore(HOME, TRIGGER_TIME) >> validate_result


rewind_restore()
