"""The whole nightly lifecycle in-process: ``rewind lifecycle run`` (SPEC R29).

Airflow runs the same step functions as separate Spark jobs (``spark_jobs/``); step 6,
``validate``, needs no Spark and runs as a TaskFlow task through the same ``run_step``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rewind.catalog.models import LifecycleRun
from rewind.config import Config
from rewind.lifecycle.context import Run
from rewind.lifecycle.expire import expire_versions
from rewind.lifecycle.metrics import storage_metrics
from rewind.lifecycle.plan import effective_retention
from rewind.lifecycle.purge import purge_failsafe
from rewind.quality.run import validate

STEPS: dict[str, Callable[[Run], dict[str, Any]]] = {
    "effective_retention": effective_retention,
    "expire_versions": expire_versions,
    "purge_failsafe": purge_failsafe,
    "storage_metrics": storage_metrics,
    "validate": validate,
}


def run_step(config: Config, step: str, run_id: str, now: datetime) -> dict[str, Any]:
    """One step of one run (what a Spark job or an Airflow task calls)."""
    run = Run.open(config, run_id, now)
    try:
        return {"step": step, "run_id": run_id, **STEPS[step](run)}
    finally:
        run.engine.dispose()


def run_lifecycle(config: Config, now: datetime, run_id: str | None = None) -> list[dict[str, Any]]:
    """Steps 1–6 in order; each returns its summary (SPEC R29).

    Raises:
        ValidationFailed: step 6 found the run's results wrong (the data steps are done).
    """
    run = Run.open(config, run_id or str(uuid.uuid4()), now)
    try:
        steps = [{"step": name, "run_id": run.run_id, **step(run)} for name, step in STEPS.items()]
        _record(run, steps)
        return steps
    finally:
        run.engine.dispose()


def record_run(config: Config, run_id: str, now: datetime, steps: list[dict[str, Any]]) -> None:
    """Keep a run's per-step summaries as its ``LifecycleRun`` row (what Airflow's
    ``rewind_nightly`` records after step 6; ``run_lifecycle`` does it in-process)."""
    run = Run.open(config, run_id, now)
    try:
        _record(run, steps)
    finally:
        run.engine.dispose()


def _record(run: Run, steps: list[dict[str, Any]]) -> None:
    with run.catalog() as catalog:  # the last runs' summaries, for people (R35)
        catalog.session.merge(
            LifecycleRun(run_id=run.run_id, now=run.now, summary={"steps": steps})
        )
