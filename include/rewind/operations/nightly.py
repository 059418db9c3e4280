"""The nightly lifecycle as Airflow runs it (``rewind_nightly``, SPEC R29, R35).

Steps 1–5 are Spark jobs; this module holds what the DAG adds around them: the run's
id, step 6 with the run's record, and the figures sent to Airflow's metrics.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import ValidationFailed

# uuid5 namespace of lifecycle runs made by Airflow (fixed: ids must not change).
AIRFLOW_RUNS = uuid.uuid5(uuid.NAMESPACE_URL, "https://rewind/airflow/dag-runs")


def lifecycle_run_id(dag_id: str, airflow_run_id: str) -> str:
    """The lifecycle run id of one Airflow DAG run.

    The catalog keeps run ids of 36 characters (a UUID) and Airflow's are longer
    (``scheduled__2026-11-21T00:00:00+00:00``), so the id is a UUID derived from the
    DAG run: every task and every retry of the run gets the same one, and the steps of
    a retried run continue the same lifecycle run (SPEC R31).
    """
    return str(uuid.uuid5(AIRFLOW_RUNS, f"{dag_id}/{airflow_run_id}"))


def finish_run(home: str, run_id: str, now: str) -> dict[str, Any]:
    """Step 6 of an Airflow run: validate what steps 1–5 produced (SPEC R29); the run's
    record (``LifecycleRun``, SPEC R35) holds every step's summary, as each step's job
    recorded it, and the validation's full report or error (the Rewind page shows it
    to ACCOUNTADMIN). What it returns and raises, Airflow shows to every reader of the
    run: expectations and counts, not the objects a failure names (R37).

    Raises:
        ValidationFailed: a data step of this run recorded nothing (its task was marked
            successful without running), or an expectation failed; recorded first.
    """
    from rewind.runner import STEPS, record_step, recorded_steps, validate_run

    config, clock = Config.load(home=home), parse_timestamp(now)
    try:
        done = {step["step"] for step in recorded_steps(config, run_id)}
        missing = [step for step in STEPS if step != "validate" and step not in done]
        if missing:
            raise ValidationFailed(
                f"Lifecycle run {run_id}: step {', '.join(missing)} recorded no summary "
                "(a task marked successful without running?); run the DAG again."
            )
        report = validate_run(config, clock, run_id)
    except ValidationFailed as failure:
        error = {"code": failure.code, "message": failure.message}
        record_step(config, run_id, clock, {"step": "validate", "run_id": run_id, "error": error})
        if not failure.failed:
            raise
        raise ValidationFailed(
            f"Lifecycle run {run_id}: {len(failure.failed)} expectations failed: "
            f"{'; '.join(failure.failed)} (the objects they name: the Rewind page, as "
            "ACCOUNTADMIN).",
            failure.failed,
        ) from None
    return {
        **report,
        "results": [
            {key: result[key] for key in ("expectation", "rule", "success")}
            for result in report["results"]
        ],
    }


def figures(prefix: str, summary: Mapping[str, Any]) -> dict[str, float]:
    """The numbers of a step summary as metric names under ``prefix`` (SPEC R35):
    ``figures("rewind.storage", {"failsafe_bytes": 12})`` is
    ``{"rewind.storage.failsafe_bytes": 12.0}``. Text, flags and nested values are left out.
    """
    return {
        f"{prefix}.{key}": float(value)
        for key, value in summary.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
