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

import contextlib
import functools
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import ExceptionRetryPolicy, RetryAction, RetryRule
from airflow.sdk.observability.stats import Stats

from rewind.config import Config
from rewind.errors import CatalogError, ConfigurationError, RewindError, StorageError
from rewind.lifecycle.job import read_summary
from rewind.operations.nightly import figures, lifecycle_run_id, table_figures

if TYPE_CHECKING:
    from airflow.sdk import Connection, Context

    from rewind.operations.trigger import TaskRun

OWNER = "rewind"
POOL = "rewind_lifecycle"  # 1 slot: lifecycle mutations, restores and recoveries one at a time
SPARK_CONN_ID = "spark_default"
AWS_CONN_ID = "aws_default"  # REWIND_AWS_CONN_ID names another
SPARK_JOBS = Path(__file__).resolve().parents[3] / "spark_jobs"
STORAGE_METRICS = "storage_metrics"  # the job whose figures are also per table

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


def aws_conn_id() -> str:
    """The Airflow connection of the object store's settings: ``REWIND_AWS_CONN_ID``,
    default ``aws_default``."""
    return os.environ.get("REWIND_AWS_CONN_ID", "").strip() or AWS_CONN_ID


def deployment_connection(conn_id: str) -> Connection | None:
    """The Airflow connection ``conn_id`` as the deployment defines it: in the worker's
    environment (``AIRFLOW_CONN_<ID>``) or a configured secrets backend, which Airflow
    searches before its metadata database; ``None`` when nothing defines it.

    A connection kept only in the metadata database is refused: Airflow's ``Op`` role (any
    connection editor) can change it from the UI or the REST API, and the connections
    Rewind's tasks use decide where its jobs run (``spark_default``: a master of the
    editor's own would receive every executor's data) and which store they reach. The
    deployment defines them where only whoever runs the worker can (the Makefile and
    ``docker-compose.yaml`` do); a database copy of the same id is then never read.

    The connection is read through Airflow's own lookup, so its secrets are masked in
    every log line (SPEC R45).

    Raises:
        ConfigurationError: only the metadata database defines ``conn_id``.
    """
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None
    if not any(backend.get_connection(conn_id) for backend in _deployment_backends()):
        raise ConfigurationError(
            f"Airflow connection {conn_id!r} is defined only in Airflow's database, where "
            "any connection editor can change it; define it in the workers' environment "
            f"(AIRFLOW_CONN_{conn_id.upper()}) or a secrets backend"
        )
    return conn


def _deployment_backends() -> list[Any]:
    """The secrets backends Airflow searches for a task, but its metadata database (read
    directly, or through the API server by a worker)."""
    from airflow.sdk.execution_time.secrets import ExecutionAPISecretsBackend
    from airflow.sdk.execution_time.supervisor import ensure_secrets_backend_loaded
    from airflow.secrets.metastore import MetastoreBackend

    return [
        backend
        for backend in ensure_secrets_backend_loaded()
        if not isinstance(backend, MetastoreBackend | ExecutionAPISecretsBackend)
    ]


@contextlib.contextmanager
def aws_connection() -> Iterator[None]:
    """The block reaches the object store with the Airflow connection :func:`aws_conn_id`
    (SPEC R44): its settings are this process's AWS variables for the block
    (:func:`rewind.storage.objectstore.environment`), so that Rewind's code in the task and
    the ``spark-submit`` it starts (its driver and JVMs) all read them. Without such a
    connection the worker's own environment serves, as outside Airflow.

    Airflow's secrets masker hides the connection's password and token in every log line
    once the connection is read (R45); the variables are never a template field, an XCom
    or a command-line argument.

    Raises:
        ConfigurationError: the connection is not of type ``aws``, lacks its keys, or is
            kept only in Airflow's database (:func:`deployment_connection`).
    """
    from rewind.storage import objectstore

    conn_id = aws_conn_id()
    conn = deployment_connection(conn_id)
    if conn is None:
        yield
        return
    variables = objectstore.connection_variables(
        conn_id, conn.conn_type, conn.login, conn.password, conn.extra_dejson
    )
    with objectstore.environment(variables):
        yield


P = ParamSpec("P")
R = TypeVar("R")


def with_aws_connection(function: Callable[P, R]) -> Callable[P, R]:
    """A task's body run in :func:`aws_connection` (under ``@task``)."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with aws_connection():
            return function(*args, **kwargs)

    return run


def task_run(context: Context, home: str, now: str) -> TaskRun:
    """What a task knows of its run, from its own context: the DAG run as Airflow
    recorded it (who triggered it, with which form) and this try (issue 25: never XCom).
    ``home`` and ``now``: the rendered ``HOME`` and the run's clock."""
    from rewind.operations.trigger import TaskRun

    run = context["dag_run"]
    return TaskRun(
        dag_id=run.dag_id,
        run_id=run.run_id,
        run_type=str(getattr(run.run_type, "value", run.run_type)),
        triggering_user=run.triggering_user_name,
        try_number=int(context["ti"].try_number or 1),
        home=home,
        now=now,
        params=dict(context.get("params") or {}),
    )


class RewindSparkJob(SparkSubmitOperator):
    """``spark_jobs/<job>.py`` through ``spark_default``; returns the job's JSON summary.

    Before it submits, the task re-derives from its own run whom it acts for
    (:meth:`gate`): a refusal fails it without starting Spark, and an action the run
    already committed is reported instead of run again. Both run in
    :func:`aws_connection`: ``spark-submit`` inherits the object store's settings in its
    environment (not ``env_vars``, a template field shown on the task's page, which
    ``spark-submit`` turns into ``--conf`` arguments on YARN and Kubernetes).

    Args:
        job: the file name in ``spark_jobs/`` without ``.py``.
        now: the run's clock (templated), passed as ``--now``.
        arguments: the job's other arguments (templated).
        metrics_prefix: when set, every number of the summary is also an Airflow
            gauge ``<metrics_prefix>.<figure>`` (StatsD / OpenTelemetry, SPEC R35); for
            the ``storage_metrics`` job, each table's figures too (:meth:`table_gauges`).
    """

    template_fields = (*SparkSubmitOperator.template_fields, "home", "now")

    def __init__(
        self,
        *,
        job: str,
        now: str,
        arguments: Sequence[str] = (),
        metrics_prefix: str | None = None,
        **kwargs: Any,
    ) -> None:
        from rewind.spark import DELTA_CONF, delta_jars

        super().__init__(
            application=str(SPARK_JOBS / f"{job}.py"),
            application_args=["--home", HOME, "--now", now, *arguments],
            conn_id=SPARK_CONN_ID,
            name=f"rewind-{job}",
            # Delta Lake's connector on the driver's class path and the executors' (R43).
            jars=",".join(delta_jars()),
            conf={**DELTA_CONF, **kwargs.pop("conf", {})},
            **kwargs,
        )
        self.job = job
        self.home = HOME
        self.now = now
        self.metrics_prefix = metrics_prefix

    def gate(self, run: TaskRun) -> list[str] | dict[str, Any]:
        """The job's arguments from the run itself, or the summary without a job (an
        action already done); raises a RewindError to refuse. Default: no check."""
        return []

    def execute(self, context: Context) -> dict[str, Any]:  # type: ignore[override]
        if deployment_connection(SPARK_CONN_ID) is None:
            raise ConfigurationError(
                f"Airflow connection {SPARK_CONN_ID!r} is not defined: set "
                f"AIRFLOW_CONN_{SPARK_CONN_ID.upper()} in the workers' environment"
            )
        with aws_connection():  # the gate's reads and spark-submit's environment (R44)
            return self._gated_run(context)

    def _gated_run(self, context: Context) -> dict[str, Any]:
        gated = self.gate(task_run(context, self.home, self.now))
        if isinstance(gated, dict):
            self.log.info("%s: %s", self.job, json.dumps(gated))
            return gated
        with tempfile.TemporaryDirectory(prefix=f"rewind-{self.job}-") as folder:
            summary_file = Path(folder) / "summary.json"
            self.application_args = [
                *(self.application_args or []),
                *gated,
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
            if self.job == STORAGE_METRICS:
                self.table_gauges(self.metrics_prefix)
        return summary

    def table_gauges(self, prefix: str) -> None:
        """Each table's figures of the run's storage metrics, as gauges (SPEC R33, R35):
        :func:`~rewind.operations.nightly.table_figures` of the rows the step wrote,
        read here from the metrics table (:func:`rewind.quality.facts.metric_rows`,
        which the validate step reads too), not through the summary: thousands of
        tables would not fit an XCom. The tables of the previous run that have no row
        now (purged) get 0 once. Best effort, as Airflow's own metrics: a failed read
        is logged and the task's result stands."""
        from rewind.clock import parse_timestamp
        from rewind.lifecycle.metrics import rows_before
        from rewind.quality.facts import metric_rows

        try:
            config, now = Config.load(home=self.home), parse_timestamp(self.now)
            rows = metric_rows(config.system_root, now)
            before = rows_before(config.system_root, now)
        except Exception:
            self.log.warning("Per-table storage gauges not sent", exc_info=True)
            return
        gauges = table_figures(prefix, rows, before)
        for gauge in gauges:
            Stats.gauge(gauge.name, gauge.value, tags=gauge.tags)
        self.log.info("%s: %d per-table gauges for %d rows", self.job, len(gauges), len(rows))


class LifecycleJob(RewindSparkJob):
    """A step of ``rewind_nightly``: the run's user may run the lifecycle (SPEC R37),
    checked by this task itself (a step marked ready by hand is still refused)."""

    def gate(self, run: TaskRun) -> list[str] | dict[str, Any]:
        from rewind.operations.trigger import lifecycle_user

        lifecycle_user(run)
        return []


class RestoreValidationJob(RewindSparkJob):
    """``rewind_restore``'s ``validate_result``: the request re-derived from the run, the
    validation at most once (:func:`rewind.operations.restore.job_arguments`)."""

    def gate(self, run: TaskRun) -> list[str] | dict[str, Any]:
        from rewind.operations.restore import job_arguments

        return job_arguments(run)
