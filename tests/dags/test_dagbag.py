"""The DAG files as Airflow parses them: no import errors, documented, tagged, owned,
retried with back-off, on the shared pool, and light to parse (no pyspark, no Great
Expectations at parse time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
POOL = "rewind_lifecycle"

DAG_IDS = {"rewind_nightly", "rewind_restore", "rewind_failsafe_recovery"}
# Tasks that move data or read what the lifecycle moves take the pool's one slot.
POOLED = {
    "rewind_nightly": {
        "effective_retention",
        "expire_versions",
        "purge_failsafe",
        "storage_metrics",
        "validate",
    },
    "rewind_restore": {"restore", "validate_result"},
    "rewind_failsafe_recovery": {"recover"},
}
PARSE = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(sys.argv[1])
nightly = bag.dags["rewind_nightly"]
print(json.dumps({
    "dags": sorted(bag.dag_ids),
    "errors": {str(k): str(v) for k, v in bag.import_errors.items()},
    "heavy": sorted(m for m in ("pyspark", "great_expectations") if m in sys.modules),
    "schedule": str(nightly.schedule),
}))
"""


def parse_in_subprocess(**env: str) -> dict[str, Any]:
    """Parse the DAG folder in a fresh interpreter, as the dag processor does."""
    proc = subprocess.run(
        [sys.executable, "-c", PARSE, str(REPO / "dags")],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=True,
    )
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_dags_parse_without_errors(dagbag: Any) -> None:
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == DAG_IDS


def test_parsing_imports_neither_pyspark_nor_great_expectations() -> None:
    """ARCHITECTURE: heavy imports happen in tasks and jobs, never at DAG-parse time."""
    parsed = parse_in_subprocess()
    assert parsed["errors"] == {} and set(parsed["dags"]) == DAG_IDS
    assert parsed["heavy"] == []


def test_nightly_schedule_comes_from_the_environment() -> None:
    assert parse_in_subprocess()["schedule"] == "@daily"
    assert parse_in_subprocess(REWIND_NIGHTLY_SCHEDULE="30 2 * * *")["schedule"] == "30 2 * * *"
    assert parse_in_subprocess(REWIND_NIGHTLY_SCHEDULE="none")["schedule"] == "None"


@pytest.mark.parametrize("dag_id", sorted(DAG_IDS))
def test_dag_is_documented_tagged_owned_and_retried(dagbag: Any, dag_id: str) -> None:
    """STYLE: the module docstring is the DAG's doc; tags; an owner; retries with
    exponential back-off and the retry policy that fails Rewind's refusals at once."""
    from rewind.operations.dagkit import RETRY_POLICY

    dag = dagbag.dags[dag_id]
    assert dag.doc_md and dag.doc_md.lstrip().startswith(f"# {dag_id} ")
    assert "rewind" in dag.tags
    for task in dag.tasks:
        assert task.owner == "rewind", task.task_id
        assert task.retries >= 1 and task.retry_exponential_backoff > 0, task.task_id
        assert task.retry_policy is RETRY_POLICY, task.task_id


@pytest.mark.parametrize("dag_id", sorted(DAG_IDS))
def test_mutating_tasks_share_the_lifecycle_pool(dagbag: Any, dag_id: str) -> None:
    """Lifecycle steps, restores and recoveries never overlap: one slot between them."""
    dag = dagbag.dags[dag_id]
    assert {t.task_id for t in dag.tasks if t.pool == POOL} == POOLED[dag_id]


def test_nightly_runs_one_at_a_time_without_catchup(dagbag: Any) -> None:
    dag = dagbag.dags["rewind_nightly"]
    assert (dag.catchup, dag.max_active_runs) == (False, 1)
    storage = dag.get_task("storage_metrics")
    assert [a.name for a in storage.outlets] == ["rewind_table_storage_metrics"]


@pytest.mark.parametrize(("dag_id", "jobs"), [("rewind_nightly", 4), ("rewind_restore", 1)])
def test_spark_jobs_go_through_spark_default(dagbag: Any, dag_id: str, jobs: int) -> None:
    """ARCHITECTURE: Spark jobs are spark-submits of ``spark_jobs/*.py`` on ``spark_default``."""
    from rewind.operations.dagkit import RewindSparkJob

    spark = [t for t in dagbag.dags[dag_id].tasks if isinstance(t, RewindSparkJob)]
    assert len(spark) == jobs
    for task in spark:
        assert task._conn_id == "spark_default"
        assert (
            Path(task.application).is_file() and Path(task.application).parent.name == "spark_jobs"
        )
