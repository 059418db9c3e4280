"""The four lifecycle Spark jobs on a real Spark standalone cluster (SPEC R29, R31).

A master and one worker are started on 127.0.0.1 from the pip package's
``spark-class`` (the e2e modules' one cluster, ``conftest.cluster``). A small warehouse
is built with the Python API and copied twice; the jobs of ``spark_jobs/`` are
submitted in order against the cluster (``spark-submit``, as Airflow's
SparkSubmitOperator does), and the same steps run on the other copy in this process's
local Spark (``runner.run_step``, what each job runs; the jobs themselves on a local
master are the DAG tests'). Both must end in the same place: the same step summaries,
the same files in ``warehouse/`` and ``failsafe/``, the same catalog file states and the
same storage metrics. The cluster's own record (the applications this module started
and the executor logs in the worker's work directory) shows the file operations really
ran on the worker.

Nothing here reaches beyond 127.0.0.1, and every wait is bounded.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from services import (
    APPS_TIMEOUT_S,
    BIN,
    JOBS,
    NOW,
    STEPS,
    SUBMIT_TIMEOUT_S,
    Cluster,
    build_warehouse,
    spark_env,
    spark_submit,
    storage_metrics,
)

from rewind.home import MARKER

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("spark_standalone")]

RUN_ID = "e2e-standalone-run"


@dataclass
class Runs:
    """Both copies of the warehouse after the jobs ran, and what each job printed."""

    local_home: Path
    cluster_home: Path
    local: list[dict[str, Any]]
    cluster: list[dict[str, Any]]
    seconds: dict[str, float]
    apps_before: set[str]  # the cluster's applications before this module's


def submit(master: str, home: Path, step: str, run_id: str = RUN_ID) -> dict[str, Any]:
    """``spark-submit spark_jobs/<step>.py``; returns the job's JSON summary line."""
    args = ["--home", str(home), "--now", NOW, "--run-id", run_id]
    return spark_submit(master, JOBS / f"{step}.py", args, home.parent)


def run_jobs(master: str, home: Path, run_id: str = RUN_ID) -> list[dict[str, Any]]:
    """The four lifecycle steps in order, as the nightly DAG runs them (SPEC R29)."""
    return [submit(master, home, step, run_id) for step in STEPS]


def without_elapsed(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in s.items() if k != "elapsed_s"} for s in summaries]


def stored_files(home: Path) -> dict[str, int]:
    """Every file under warehouse/ and failsafe/: relative path -> size (the catalog's
    markers, which name each home, left out)."""
    return {
        str(path.relative_to(home)): path.stat().st_size
        for root in ("warehouse", "failsafe")
        for path in sorted((home / root).rglob("*"))
        if path.is_file() and path.name != MARKER
    }


def file_states(home: Path) -> list[tuple[Any, ...]]:
    """The catalog's lifecycle state of every file (the fail-safe manifest among them)."""
    with sqlite3.connect(home / "catalog.db") as db:
        return db.execute(
            "SELECT table_id, path, size, state, removed_at, left_time_travel_at, purge_at "
            "FROM file_states ORDER BY table_id, path"
        ).fetchall()


def run_in_process(home: Path) -> list[dict[str, Any]]:
    """The four steps in this process's local Spark, each summary as its job prints it."""
    from rewind.clock import parse_timestamp
    from rewind.config import Config
    from rewind.runner import run_step

    config, now = Config.load(home=home), parse_timestamp(NOW)
    return [json.loads(json.dumps(run_step(config, step, RUN_ID, now))) for step in STEPS]


@pytest.fixture(scope="module")
def runs(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Build once (the daemons start meanwhile), copy twice, run the steps on each copy."""
    base = tmp_path_factory.mktemp("lifecycle")
    built = base / "built" / "home"
    build_warehouse(built)
    local_home = base / "local" / "home"
    cluster_home = base / "cluster" / "home"
    for copy in (local_home, cluster_home):
        shutil.copytree(built, copy, symlinks=True)
    seconds = {}
    start = time.monotonic()
    local = run_in_process(local_home)
    seconds["local"] = time.monotonic() - start
    cluster.wait_for_worker()
    apps_before = cluster.app_ids()
    start = time.monotonic()
    on_cluster = run_jobs(cluster.url, cluster_home)
    seconds["cluster"] = time.monotonic() - start
    return Runs(local_home, cluster_home, local, on_cluster, seconds, apps_before)


def test_the_jobs_ran_on_the_standalone_worker(cluster: Cluster, runs: Runs) -> None:
    """The master lists the jobs' applications as finished, and the worker's executors
    ran their file operations (the local run cannot have touched this cluster)."""
    state = cluster.wait_until(
        lambda s: not s["activeapps"] and len(cluster.apps_since(runs.apps_before, s)) >= 2,
        APPS_TIMEOUT_S,
        "two finished applications",
    )
    assert state["url"] == cluster.url
    apps = cluster.apps_since(runs.apps_before, state)
    assert {app["name"] for app in apps} == {"rewind"}
    assert {app["state"] for app in apps} == {"FINISHED"}
    for app in apps:
        logs = list((cluster.work_dir / app["id"]).glob("*/stderr"))
        assert logs, f"no executor of {app['id']} ran on the worker"
        assert any("Finished task" in log.read_text(errors="replace") for log in logs)


def test_cluster_summaries_equal_local(runs: Runs) -> None:
    """SPEC R29: every step reports the same work on the cluster as in local mode."""
    assert [s["step"] for s in runs.cluster] == STEPS
    assert without_elapsed(runs.cluster) == without_elapsed(runs.local)
    expire, purge = runs.cluster[1], runs.cluster[2]
    # The scenario makes every kind of work happen, so the comparison is not vacuous.
    assert expire["files_moved"] > 0 and expire["files_deleted"] > 0
    assert purge["files_purged"] > 0 and purge["files_retained_for_clone"] > 0
    assert purge["tables_purged"] == 1


def test_cluster_files_equal_local(runs: Runs) -> None:
    """The same data files stay in the tables, and the same reach fail-safe (SPEC R12)."""
    on_cluster = stored_files(runs.cluster_home)
    assert on_cluster == stored_files(runs.local_home)
    assert any(path.startswith("failsafe/") for path in on_cluster)
    assert file_states(runs.cluster_home) == file_states(runs.local_home)


def test_cluster_storage_metrics_equal_local(runs: Runs) -> None:
    """SPEC R33: the metrics the last step wrote are identical, row for row."""
    metrics = storage_metrics(runs.cluster_home)
    assert metrics == storage_metrics(runs.local_home)
    assert sum(row["FAILSAFE_BYTES"] for row in metrics) > 0


def test_retried_run_on_cluster_changes_nothing(cluster: Cluster, runs: Runs) -> None:
    """SPEC R31: running the same night again (an Airflow retry) converges at once."""
    files, states = stored_files(runs.cluster_home), file_states(runs.cluster_home)
    metrics = storage_metrics(runs.cluster_home)
    again = run_jobs(cluster.url, runs.cluster_home)
    expire, purge = again[1], again[2]
    assert expire["files_journaled"] == expire["files_moved"] == expire["files_deleted"] == 0
    assert purge["files_purged"] == purge["tables_purged"] == 0
    assert without_elapsed(again[3:]) == without_elapsed(runs.cluster[3:])
    assert stored_files(runs.cluster_home) == files
    assert file_states(runs.cluster_home) == states
    assert storage_metrics(runs.cluster_home) == metrics


# A plain PySpark job. Its one setting: Delta rebuilds each table's snapshot in one
# partition, not 50 (on the cluster's one core: 46 s -> 15 s for this job; what it reads
# is the same, SPEC R43).
DELTA_READ = """
import json, sys
from pyspark.sql import SparkSession
spark = (
    SparkSession.builder.appName("rewind")
    .config("spark.databricks.delta.snapshotPartitions", "1")
    .getOrCreate()
)
counts = {p: spark.read.format("delta").load(p).count() for p in sys.argv[1:]}
print(json.dumps(counts))
"""


def test_delta_reads_on_the_cluster_executors_r43(cluster: Cluster, runs: Runs) -> None:
    """SPEC R43: a plain PySpark job with Rewind's spark-submit options reads every live
    table of the warehouse through Delta Lake on the worker's executors (the jars reach
    them), with the rows Rewind's own log replay counts."""
    from rewind.spark import submit_options
    from rewind.storage import log

    with sqlite3.connect(runs.cluster_home / "catalog.db") as db:
        live = db.execute("SELECT id FROM objects WHERE kind = 'TABLE' AND dropped_on IS NULL")
        tables = [runs.cluster_home / "warehouse" / str(table_id) for (table_id,) in live]
    expected = {}
    for path in tables:
        latest = max(int(f.name[:20]) for f in (path / "_delta_log").glob("*.json"))
        expected[str(path)] = sum(
            f.num_records - f.deleted_rows for f in log.replay(path, latest).files
        )
    script = runs.cluster_home.parent / "delta_read.py"
    script.write_text(DELTA_READ)
    command = [str(BIN / "spark-submit"), "--master", cluster.url, *submit_options(), str(script)]
    done = subprocess.run(
        [*command, *expected],
        capture_output=True,
        text=True,
        env=spark_env(),
        cwd=runs.cluster_home.parent,
        timeout=SUBMIT_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == expected
    assert any(count > 0 for count in expected.values())
