"""
# rewind_failsafe_recovery — recover a table from fail-safe (SPEC R12, R38)

Fail-safe holds data for 7 days after it left time travel. Nobody can query, clone or
undrop it; only `ACCOUNTADMIN` can recover it, one table at a time, into a new table:
a dropped table as it was when dropped, or a table as of a version whose files are all
still held. The run acts as the Rewind user mapped from the Airflow user who triggered
it (`REWIND_AIRFLOW_USERS`, same name by default; an unmapped user is refused and the
refusal is in QUERY_HISTORY), and Rewind enforces the role: a user without ACCOUNTADMIN
fails with `ACCESS_DENIED` and reads nothing (R37). The form has no identity field.

Form: **table_id** (the ACCOUNTADMIN finds it with `rewind failsafe list` or on the Rewind
page: what fail-safe holds is never listed here, where every reader of the DAG's runs
would see it, R38), **target_name** (`DB.SCHEMA.TABLE`, new) and optionally **version**.

1. **validate_form** — a bad form fails at once with the reason.
2. **recover** — copies the files out of fail-safe into the new table (XCom: the
   statement, its query id and Rewind's message).

Each task derives the user and the request from the run itself, never from the other's
XCom. The recovery commits at most once per run: a retry or a clear after it committed
reports it (`already_done`, logged as `ALREADY_DONE`) and copies nothing again.
The clock is the run's `run_after`. The recovery takes the pool `rewind_lifecycle`, so it
never races the nightly purge of the files it copies.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import Param, dag, task

from rewind.operations.dagkit import (
    HOME,
    POOL,
    TRIGGER_TIME,
    on_trigger,
    task_run,
    with_aws_connection,
)

PARAMS = {
    "table_id": Param(
        None,
        type=["null", "integer"],
        title="Table id",
        description="rewind failsafe list, or the Rewind page",
    ),
    "target_name": Param(
        "", type="string", title="Recover into", description="a new table: DB.SCHEMA.TABLE"
    ),
    "version": Param(
        None,
        type=["null", "integer"],
        title="Version",
        description="empty: as dropped (a dropped table) or the latest version",
    ),
}


@dag(**on_trigger(), params=PARAMS, tags=["rewind", "failsafe", "admin"], doc_md=__doc__)
def rewind_failsafe_recovery() -> None:
    @task
    @with_aws_connection
    def validate_form(home: str, now: str) -> dict[str, Any]:
        """The form as a checked request acting as the run's user (a RewindError names
        what is wrong)."""
        from airflow.sdk import get_current_context

        from rewind.operations.trigger import recovery_request_of

        return recovery_request_of(task_run(get_current_context(), home, now)).as_form()

    @task(pool=POOL)
    @with_aws_connection
    def recover(home: str, now: str) -> dict[str, Any]:
        """Recover the table into a new one, as the run's user, at most once."""
        from airflow.sdk import get_current_context

        from rewind.operations.failsafe import recover

        return recover(task_run(get_current_context(), home, now))

    validate_form(HOME, TRIGGER_TIME) >> recover(HOME, TRIGGER_TIME)


rewind_failsafe_recovery()
