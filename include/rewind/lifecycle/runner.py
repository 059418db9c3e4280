"""The whole nightly lifecycle in-process: ``rewind lifecycle run`` (SPEC R29).

Airflow runs the same step functions as separate Spark jobs (``spark_jobs/``).
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

STEPS: dict[str, Callable[[Run], dict[str, Any]]] = {
    "effective_retention": effective_retention,
    "expire_versions": expire_versions,
    "purge_failsafe": purge_failsafe,
    "storage_metrics": storage_metrics,
}


def run_step(config: Config, step: str, run_id: str, now: datetime) -> dict[str, Any]:
    """One step of one run (what a Spark job or an Airflow task calls)."""
    run = Run.open(config, run_id, now)
    try:
        return {"step": step, "run_id": run_id, **STEPS[step](run)}
    finally:
        run.engine.dispose()


def run_lifecycle(config: Config, now: datetime, run_id: str | None = None) -> list[dict[str, Any]]:
    """Steps 1–5 in order; each returns its summary (SPEC R29)."""
    run = Run.open(config, run_id or str(uuid.uuid4()), now)
    try:
        steps = [{"step": name, "run_id": run.run_id, **step(run)} for name, step in STEPS.items()]
        with run.catalog() as catalog:  # the last runs' summaries, for people (R35)
            catalog.session.merge(
                LifecycleRun(run_id=run.run_id, now=now, summary={"steps": steps})
            )
        return steps
    finally:
        run.engine.dispose()
