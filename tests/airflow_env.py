"""The environment of the Airflow processes the tests start or host: the repository's
DAGs, SQLite metadata in a home of the test's own, Spark on ``local[2]`` (as ``make run``
sets it). ``tests/dags`` sets it in its own process; the dashboard tests give it to
``airflow dags test`` and ``airflow api-server`` subprocesses."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DAG_TEST_USER = "dag_test"  # the Airflow user dag.test() records as the run's trigger


def airflow_environment(home: Path) -> dict[str, str]:
    """As ``make run`` sets it: the repo's DAGs, SQLite metadata in ``home``, local Spark,
    the venv's ``spark-submit`` and Python."""
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW_CONN_SPARK_DEFAULT": '{"conn_type": "spark", "host": "local[2]"}',
        "PYSPARK_PYTHON": sys.executable,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def subprocess_environment(home: Path, **settings: str) -> dict[str, str]:
    """This process's environment without its ``REWIND_*`` and Airflow settings, then
    :func:`airflow_environment` of ``home`` and ``settings``: what an Airflow
    subprocess of a test sees."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("REWIND_", "AIRFLOW"))}
    return {**inherited, **airflow_environment(home), **settings}
