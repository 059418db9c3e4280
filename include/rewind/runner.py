"""The nightly lifecycle's steps 1–6 (SPEC R29): in-process (``rewind lifecycle run``),
one step at a time (``main``: the Spark entry points in ``spark_jobs/``), or step 6 alone
(``validate_run``: Airflow's TaskFlow task, no Spark), all through ``run_step``.

Above both ``rewind.lifecycle`` (steps 1–5) and ``rewind.quality`` (step 6, which reads
what the lifecycle wrote), so that neither package imports the other's caller.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from rewind.catalog.db import make_engine
from rewind.catalog.models import LifecycleRun
from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.lifecycle import progress
from rewind.lifecycle.context import Run
from rewind.lifecycle.expire import expire_versions
from rewind.lifecycle.job import finish, job_parser
from rewind.lifecycle.metrics import storage_metrics
from rewind.lifecycle.plan import effective_retention
from rewind.lifecycle.purge import purge_failsafe
from rewind.quality.run import run_at, validate

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STEPS: dict[str, Callable[[Run], dict[str, Any]]] = {
    "effective_retention": effective_retention,
    "expire_versions": expire_versions,
    "purge_failsafe": purge_failsafe,
    "storage_metrics": storage_metrics,
    "validate": validate,
}


def run_step(config: Config, step: str, run_id: str, now: datetime) -> dict[str, Any]:
    """One step of one run (what a Spark job or an Airflow task calls); its summary is
    recorded with the run (:func:`recorded_steps`)."""
    run = Run.open(config, run_id, now)
    try:
        return _step(run, step)
    finally:
        run.engine.dispose()


def run_lifecycle(
    config: Config,
    now: datetime,
    run_id: str | None = None,
    spark_provider: Callable[[], SparkSession] | None = None,
) -> list[dict[str, Any]]:
    """Steps 1–6 in order; each returns its summary (SPEC R29). ``spark_provider``: the
    session's Spark (default: a SparkSession in this process).

    Raises:
        ValidationFailed: step 6 found the run's results wrong (the data steps are done).
    """
    run = Run.open(config, run_id or str(uuid.uuid4()), now, spark_provider)
    try:
        return [_step(run, name) for name in STEPS]
    finally:
        run.engine.dispose()


def _step(run: Run, name: str) -> dict[str, Any]:
    with progress.step(name):  # shown where the caller watches (rewind.lifecycle.progress)
        summary = {"step": name, "run_id": run.run_id, **STEPS[name](run)}
    _record(run, summary)
    return summary


def record_step(config: Config, run_id: str, now: datetime, summary: dict[str, Any]) -> None:
    """Record one step's summary (or its error) with the run, replacing an earlier try's."""
    run = Run.open(config, run_id, now)
    try:
        _record(run, summary)
    finally:
        run.engine.dispose()


def recorded_steps(config: Config, run_id: str) -> list[dict[str, Any]]:
    """The summaries the steps of ``run_id`` recorded, in step order: what a run did,
    from the catalog, where only Rewind's own jobs write (never from Airflow's XCom,
    which any user who may edit a run can change)."""
    engine = make_engine(config.catalog_url)
    try:
        with Session(engine) as session:
            row = session.get(LifecycleRun, run_id)
            return list((row.summary or {}).get("steps", [])) if row is not None else []
    finally:
        engine.dispose()


def _record(run: Run, summary: dict[str, Any]) -> None:
    """The run's ``LifecycleRun`` row gets ``summary`` in its step's place (SPEC R35)."""
    with run.catalog() as catalog:
        row = catalog.session.get(LifecycleRun, run.run_id, with_for_update=True)
        earlier = (row.summary or {}).get("steps", []) if row is not None else []
        steps = {s["step"]: s for s in earlier} | {summary["step"]: summary}
        ordered = sorted(steps.values(), key=lambda s: list(STEPS).index(s["step"]))
        catalog.session.merge(
            LifecycleRun(run_id=run.run_id, now=run.now, summary={"steps": ordered})
        )


def validate_run(config: Config, now: datetime, run_id: str | None = None) -> dict[str, Any]:
    """Validate the lifecycle run ``run_id`` made at ``now`` (SPEC R29 step 6).

    What the Airflow task of step 6 calls, after the storage metrics job; no Spark.

    Args:
        config: the Rewind configuration (home, catalog).
        now: the run's clock (the Airflow run's logical end, SPEC R15).
        run_id: the run; by default the latest run made at ``now``.

    Returns:
        The JSON summary: ``expectations``, ``passed``, ``failed``, per-expectation
        ``results`` with observed values, ``stored_bytes``, ``files_checked``.

    Raises:
        ValidationFailed: when an expectation fails (code VALIDATION_FAILED).
    """
    return run_step(config, "validate", run_id or run_at(config.system_root, now), now)


def main(step: str, argv: Sequence[str] | None = None) -> int:
    """A Spark entry point's ``main``: one step of one run, its summary as JSON on stdout;
    its progress on stderr, which spark-submit hands to the Airflow task's log: a line
    at least every ``REWIND_PROGRESS_INTERVAL`` seconds (rewind.lifecycle.progress)."""
    parser = job_parser(step, f"Rewind lifecycle step {step}")
    parser.add_argument("--run-id", required=True, help="the lifecycle run id")
    args = parser.parse_args(argv)

    def action() -> dict[str, Any]:
        with progress.reporting(progress.shown_on(sys.stderr)):
            return run_step(
                Config.load(home=args.home), step, args.run_id, parse_timestamp(args.now)
            )

    return finish(args.summary_file, action)
