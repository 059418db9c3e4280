"""
# rewind_nightly — the nightly lifecycle (SPEC R29–R35)

Every night, for the Rewind home of the workers (`REWIND_HOME`):

1. **effective_retention** — the retention plan: every object's effective retention.
2. **expire_versions** — what left time travel moves into fail-safe (transient: deleted).
3. **purge_failsafe** — fail-safe data 7 days past its window is purged for good.
4. **storage_metrics** — `REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS` for the day
   (the Asset `rewind_table_storage_metrics`).
5. **validate** — Great Expectations checks of what the run produced; records the run
   (every step's summary) for the Rewind page.

Steps 1–4 are Spark jobs (`spark_jobs/<step>.py`, connection `spark_default`); each
job's JSON summary is its task's XCom, and its figures are Airflow metrics
`rewind.storage.*` and `rewind.lifecycle.<step>.*`. The clock is the run's
`data_interval_end` (SPEC R15): a backfill of day D decides what a run on day D would
have decided (a manual run without a logical date uses its trigger time). A retried
run continues the same lifecycle run (SPEC R31).

0. **authorize** — who the run acts as (SPEC R37): a scheduled run as the service user
   (`REWIND_SERVICE_USER`, default `REWIND_SERVICE`, role `REWIND_LIFECYCLE`: the
   lifecycle and nothing else), a manual one as the Rewind user mapped from the Airflow
   user who triggered it; a user who may not run the lifecycle stops the run here.
   Logged in QUERY_HISTORY with the Airflow user, the try and the run in its query tag.
   Every later task checks it again from the run itself (a task marked successful by
   hand authorizes nothing), and step 6 reads what each step did from the run's record
   in the catalog, where each job wrote it, not from XCom.

Every task takes the one slot of the pool `rewind_lifecycle`, which restores and
fail-safe recoveries share: they never run while a lifecycle step moves files.
Schedule: `@daily`, or `REWIND_NIGHTLY_SCHEDULE` (a cron expression; `none`: manual only).
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import Asset, chain, dag, task

from rewind.operations.dagkit import (
    HOME,
    MACROS,
    POOL,
    START_DATE,
    LifecycleJob,
    default_args,
    nightly_schedule,
    task_run,
    with_aws_connection,
)

STEPS = ("effective_retention", "expire_versions", "purge_failsafe", "storage_metrics")
NOW = "{{ data_interval_end or dag_run.run_after }}"
RUN_ID = "{{ lifecycle_run_id(dag.dag_id, run_id) }}"
STORAGE_METRICS = Asset(
    name="rewind_table_storage_metrics", uri="rewind://account_usage/table_storage_metrics"
)


@dag(
    schedule=nightly_schedule(),
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    default_args=default_args(),
    tags=["rewind", "lifecycle", "spark"],
    doc_md=__doc__,
    user_defined_macros=MACROS,
)
def rewind_nightly() -> None:
    jobs = [
        LifecycleJob(
            task_id=step,
            job=step,
            now=NOW,
            arguments=["--run-id", RUN_ID],
            pool=POOL,
            metrics_prefix="rewind.storage"
            if step == "storage_metrics"
            else f"rewind.lifecycle.{step}",
            outlets=[STORAGE_METRICS] if step == "storage_metrics" else [],
        )
        for step in STEPS
    ]

    @task
    @with_aws_connection
    def authorize(home: str, now: str) -> dict[str, str]:
        """The Rewind user this run acts as, allowed to run the lifecycle (SPEC R37)."""
        from airflow.sdk import get_current_context

        from rewind.operations.trigger import lifecycle_user

        return lifecycle_user(task_run(get_current_context(), home, now))

    @task(pool=POOL)
    @with_aws_connection
    def validate(home: str, now: str, lifecycle_run: str) -> dict[str, Any]:
        """Step 6 (Great Expectations) over what the steps recorded, as the run's user."""
        from airflow.sdk import get_current_context

        from rewind.operations.nightly import finish_run
        from rewind.operations.trigger import lifecycle_user

        lifecycle_user(task_run(get_current_context(), home, now))
        return finish_run(home, lifecycle_run, now)

    chain(authorize(HOME, NOW), *jobs, validate(HOME, NOW, RUN_ID))


rewind_nightly()
