"""
# rewind_failsafe_recovery — recover a table from fail-safe (SPEC R12, R38)

Fail-safe holds data for 7 days after it left time travel. Nobody can query, clone or
undrop it; only `ACCOUNTADMIN` can recover it, one table at a time, into a new table:
a dropped table as it was when dropped, or a table as of a version whose files are all
still held. The run acts as the Rewind user mapped from the Airflow user who triggered
it (`REWIND_AIRFLOW_USERS`, same name by default; an unmapped user is refused and the
refusal is in QUERY_HISTORY), and Rewind enforces the role: a user without ACCOUNTADMIN
fails with `ACCESS_DENIED` and reads nothing (R37). The form has no identity field.

Form: **table_id** (from `rewind failsafe list`, or
this DAG's `list_recoverable` XCom), **target_name** (`DB.SCHEMA.TABLE`, new) and
optionally **version**.

1. **validate_form** — a bad form fails at once with the reason.
2. **list_recoverable** — what fail-safe holds and which versions can be recovered
   (XCom), read as the requesting user.
3. **recover** — copies the files out of fail-safe into the new table (XCom: the
   statement, its query id and Rewind's message).

The clock is the run's `run_after`. Both steps take the pool `rewind_lifecycle`, so a
recovery never races the nightly purge of the files it copies.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import Param, dag, task

from rewind.operations.dagkit import HOME, POOL, TRIGGER_TIME, on_trigger

PARAMS = {
    "table_id": Param(
        None, type=["null", "integer"], title="Table id", description="see list_recoverable"
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
    def validate_form(
        home: str, now: str, params: dict[str, Any] | None = None, dag_run: Any = None
    ) -> dict[str, Any]:
        """The form as a checked request acting as the run's user (a RewindError names
        what is wrong)."""
        from rewind.operations.trigger import recovery_form

        return recovery_form(params or {}, dag_run, home, now)

    @task(pool=POOL)
    def list_recoverable(form: dict[str, Any], home: str, now: str) -> list[dict[str, Any]]:
        """What fail-safe holds, as the requesting user sees it (ACCOUNTADMIN only)."""
        from rewind.operations.failsafe import list_recoverable
        from rewind.operations.form import recovery_request

        return list_recoverable(home, recovery_request(form), now)

    @task(pool=POOL)
    def recover(form: dict[str, Any], home: str, now: str) -> dict[str, Any]:
        """Recover the table into a new one, as the requesting user."""
        from rewind.operations.failsafe import recover
        from rewind.operations.form import recovery_request

        return recover(home, recovery_request(form), now)

    form = validate_form(HOME, TRIGGER_TIME)
    list_recoverable(form, HOME, TRIGGER_TIME) >> recover(form, HOME, TRIGGER_TIME)


rewind_failsafe_recovery()
