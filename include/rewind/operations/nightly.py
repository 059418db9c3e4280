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


def finish_run(home: str, run_id: str, now: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Step 6, then the run's record: validate what steps 1–5 produced (SPEC R29) and
    keep every step's summary as the run's ``LifecycleRun`` row (SPEC R35), with the
    validation's error when it fails.

    Raises:
        ValidationFailed: an expectation failed; the run is recorded first.
    """
    from rewind.runner import record_run, validate_run

    config, clock = Config.load(home=home), parse_timestamp(now)
    try:
        report = validate_run(config, clock, run_id)
    except ValidationFailed as failure:
        error = {"code": failure.code, "message": failure.message}
        record_run(config, run_id, clock, [*steps, {"step": "validate", "error": error}])
        raise
    record_run(config, run_id, clock, [*steps, report])
    return report


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
