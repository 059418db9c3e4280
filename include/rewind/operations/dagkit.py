"""What Rewind's DAG files share: task defaults, template macros, the Spark job operator.

The one module of the library that imports Airflow (the DAG files import it; the
logic they run lives in plain functions elsewhere in ``rewind``).

Why an operator subclass: ``SparkSubmitOperator`` only logs what ``spark-submit``
prints and returns nothing, so a job's JSON summary would be lost to XCom. Each Rewind
job also writes its summary to ``--summary-file`` (``rewind.lifecycle.job.finish``);
``RewindSparkJob`` passes a temporary file, reads it back after the job, returns it
(the task's XCom, shown in the UI) and sends its figures to Airflow's metrics. The
file is local to the task because the driver runs there (client deploy mode, the
default for ``local[*]`` and a standalone master); a job that reported an error is
re-raised as that :class:`~rewind.errors.RewindError`, so the retry policy below can
fail it at once instead of retrying a refusal.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import ExceptionRetryPolicy, RetryAction, RetryRule
from airflow.sdk.observability.stats import Stats

from rewind.config import Config
from rewind.errors import CatalogError, RewindError, StorageError
from rewind.lifecycle.job import read_summary
from rewind.operations.nightly import figures, lifecycle_run_id

if TYPE_CHECKING:
    from airflow.sdk import Context

OWNER = "rewind"
POOL = "rewind_lifecycle"  # 1 slot: lifecycle mutations, restores and recoveries one at a time
SPARK_CONN_ID = "spark_default"
SPARK_JOBS = Path(__file__).resolve().parents[3] / "spark_jobs"

# A RewindError is Rewind's answer (a bad form, ACCESS_DENIED, a point out of
# retention, a failed expectation): retrying cannot change it. The catalog or the
# storage being unreachable can pass; so can anything else (a JVM that died).
RETRY_POLICY = ExceptionRetryPolicy(
    rules=[
        RetryRule(
            exception=[CatalogError, StorageError],
            action=RetryAction.RETRY,
            reason="the catalog or the storage may be back",
        ),
        RetryRule(
            exception=RewindError,
            action=RetryAction.FAIL,
            reason="Rewind refused: a retry would be refused too",
        ),
    ]
)


def default_args(retries: int = 3) -> dict[str, Any]:
    """Every Rewind task: owner, retries with exponential back-off, the retry policy."""
    return {
        "owner": OWNER,
        "retries": retries,
        "retry_delay": timedelta(minutes=2),
        "retry_exponential_backoff": 2.0,
        "max_retry_delay": timedelta(hours=1),
        "retry_policy": RETRY_POLICY,
    }


def nightly_schedule() -> str | None:
    """``REWIND_NIGHTLY_SCHEDULE`` (a cron expression or preset; default ``@daily``);
    ``none`` leaves the lifecycle to manual triggers and backfills."""
    value = os.environ.get("REWIND_NIGHTLY_SCHEDULE", "@daily").strip()
    return None if value.lower() in ("", "none") else value


def rewind_home() -> str:
    """The Rewind home of the worker that renders the task (``REWIND_HOME``): like all
    configuration, it comes from the environment, not from the DAG file."""
    return str(Config.load().home)


# Jinja macros of every Rewind DAG: ``{{ rewind_home() }}``, ``{{ lifecycle_run_id(...) }}``.
MACROS = {"rewind_home": rewind_home, "lifecycle_run_id": lifecycle_run_id}
START_DATE = datetime(2026, 1, 1, tzinfo=UTC)
HOME = "{{ rewind_home() }}"  # templates of task arguments
TRIGGER_TIME = "{{ dag_run.run_after }}"  # the clock of a triggered run (SPEC R15)


def on_trigger() -> dict[str, Any]:
    """``@dag(**on_trigger(), ...)``: a DAG that runs when someone triggers its form."""
    return {
        "schedule": None,
        "start_date": START_DATE,
        "catchup": False,
        "default_args": default_args(retries=1),
        "user_defined_macros": MACROS,
    }


class RewindSparkJob(SparkSubmitOperator):
    """``spark_jobs/<job>.py`` through ``spark_default``; returns the job's JSON summary.

    Args:
        job: the file name in ``spark_jobs/`` without ``.py``.
        arguments: the job's arguments (templated).
        metrics_prefix: when set, every number of the summary is also an Airflow
            gauge ``<metrics_prefix>.<figure>`` (StatsD / OpenTelemetry, SPEC R35).
    """

    def __init__(
        self, *, job: str, arguments: list[str], metrics_prefix: str | None = None, **kwargs: Any
    ) -> None:
        from rewind.spark import DELTA_CONF, delta_jars

        super().__init__(
            application=str(SPARK_JOBS / f"{job}.py"),
            application_args=arguments,
            conn_id=SPARK_CONN_ID,
            name=f"rewind-{job}",
            # Delta Lake's connector on the driver's class path and the executors' (R43).
            jars=",".join(delta_jars()),
            conf={**DELTA_CONF, **kwargs.pop("conf", {})},
            **kwargs,
        )
        self.job = job
        self.metrics_prefix = metrics_prefix

    def execute(self, context: Context) -> dict[str, Any]:  # type: ignore[override]
        with tempfile.TemporaryDirectory(prefix=f"rewind-{self.job}-") as folder:
            summary_file = Path(folder) / "summary.json"
            self.application_args = [
                *(self.application_args or []),
                "--summary-file",
                str(summary_file),
            ]
            try:
                super().execute(context)
            except Exception:
                read_summary(summary_file)  # raises the job's own RewindError, if it reported one
                raise
            summary = read_summary(summary_file)
        if summary is None:
            raise RuntimeError(f"Spark job {self.job} finished without a summary.")
        self.log.info("%s: %s", self.job, json.dumps(summary))
        if self.metrics_prefix is not None:
            for name, value in figures(self.metrics_prefix, summary).items():
                Stats.gauge(name, value)
        return summary
