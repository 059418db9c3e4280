"""The nightly lifecycle as Airflow runs it (``rewind_nightly``, SPEC R29, R35).

Steps 1–5 are Spark jobs; this module holds what the DAG adds around them: the run's
id, step 6 with the run's record, and the figures sent to Airflow's metrics: a step's
totals (:func:`figures`) and, for the storage metrics step, each table's
(:func:`table_figures`).
"""

from __future__ import annotations

import hashlib
import string
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

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


# Per-table gauges (issue 28 item 7, SPEC R33, R35): ``<prefix>.by_table.<database>.
# <schema>.<table>.<figure>``, tags ``database``, ``schema``, ``table``. The object is in
# the name because plain StatsD drops tags (Airflow appends them to the name only with
# ``statsd_influxdb_enabled``); DogStatsD and OpenTelemetry take the tags as well.
BY_TABLE = "by_table"
# A name part as it is when made of these; any other character (a quoted identifier's
# space, dot, dash or ``$``, a non-ASCII letter) is ``-`` and two hex digits per UTF-8
# byte, so that no two names share a part: a stat name takes letters, digits and ``_ . -
# /`` only, and its dots are the levels of Graphite's tree.
KEPT = frozenset(string.ascii_letters + string.digits + "_")
# At most this many characters a part: a longer one is its first 18, ``-h`` and 8 hex
# digits of its SHA-256. Three parts of 28 keep the longest name at 135 characters and,
# with InfluxDB-style tags appended, under the 250 Airflow's StatsD logger allows.
PART_LENGTH = 28


class Gauge(NamedTuple):
    name: str
    value: float
    tags: dict[str, str]


def metric_part(name: str) -> str:
    """A database, schema or table name as one level of a stat name, and as a tag value:
    ``ORDERS`` stays ``ORDERS``, ``my table`` is ``my-20table``, ``A-B`` is ``A-2DB``."""
    part = "".join(c if c in KEPT else "".join(f"-{b:02X}" for b in c.encode()) for c in name)
    if len(part) <= PART_LENGTH:
        return part
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{part[: PART_LENGTH - 10]}-h{digest}"


def table_figures(
    prefix: str, rows: Iterable[Mapping[str, Any]], before: Iterable[Mapping[str, Any]] = ()
) -> list[Gauge]:
    """Each table's byte figures (TABLE_STORAGE_METRICS rows, SPEC R33) as gauges under
    ``prefix``: ``rewind.storage.by_table.SHOP.PUBLIC.ORDERS.failsafe_bytes`` with tags
    ``{"database": "SHOP", "schema": "PUBLIC", "table": "ORDERS"}``. The incarnations of
    one name (a dropped ORDERS and the ORDERS created since) add up: a chart of a name
    keeps its line across a re-creation; the view has one row per incarnation (its ID).
    A name of the previous run's rows (``before``) that has none now (purged) gets its
    figures once more, at 0: a StatsD daemon repeats a gauge's last value, and a chart
    of a purged table's fail-safe must fall to 0, not stay where it was.
    """
    from rewind.lifecycle.metrics import BYTE_COLUMNS  # here: DAG files import this module

    def key(row: Mapping[str, Any]) -> tuple[str, str, str]:
        return (
            metric_part(str(row["TABLE_CATALOG"])),
            metric_part(str(row["TABLE_SCHEMA"])),
            metric_part(str(row["TABLE_NAME"])),
        )

    sums: dict[tuple[str, str, str], dict[str, float]] = {}
    for row in rows:
        figures_of = sums.setdefault(key(row), dict.fromkeys(BYTE_COLUMNS, 0.0))
        for column in BYTE_COLUMNS:
            figures_of[column] += float(row[column] or 0)
    for row in before:
        sums.setdefault(key(row), dict.fromkeys(BYTE_COLUMNS, 0.0))
    return [
        Gauge(
            f"{prefix}.{BY_TABLE}.{database}.{schema}.{table}.{column.lower()}",
            value,
            {"database": database, "schema": schema, "table": table},
        )
        for (database, schema, table), figures_of in sums.items()
        for column, value in figures_of.items()
    ]
