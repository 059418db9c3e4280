"""Fixtures of the DAG tests: a private Airflow (SQLite metadata, the repo's ``dags/``),
``spark_default`` on ``local[2]``, the ``rewind_lifecycle`` pool, and helpers that run a
DAG with ``dag.test()`` and read what its tasks left (states, XCom, rendered arguments).

Airflow reads its configuration once, when it is first imported, so the private
``AIRFLOW_HOME`` is set when this file is loaded, before any test module imports
Airflow (they import it inside fixtures and tests).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from airflow_env import DAG_TEST_USER, airflow_environment

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
POOL = "rewind_lifecycle"
AIRFLOW_HOME = Path(tempfile.mkdtemp(prefix="rewind-airflow-"))

os.environ.update(airflow_environment(AIRFLOW_HOME))


@pytest.fixture(scope="session")
def airflow_db() -> Iterator[Path]:
    """``airflow db migrate`` once per test process, and the pool the Rewind DAGs share."""
    subprocess.run(
        [str(BIN / "airflow"), "db", "migrate"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    from airflow.models.pool import Pool

    Pool.create_or_update_pool(POOL, 1, "Rewind lifecycle and restores", include_deferred=False)
    yield AIRFLOW_HOME
    shutil.rmtree(AIRFLOW_HOME, ignore_errors=True)


def parse_dags() -> Any:
    """The repo's DAG files, parsed as Airflow parses them."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(str(REPO / "dags"), known_pools={"default_pool", POOL})
    assert not bag.import_errors, bag.import_errors
    return bag


@pytest.fixture(scope="session")
def dagbag() -> Any:
    """The DAGs as their files declare them (the tests that run DAGs use a copy of their own)."""
    return parse_dags()


@pytest.fixture(scope="module")
def rewind_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A Rewind home for one test module; the DAGs render ``REWIND_HOME`` at run time."""
    home = tmp_path_factory.mktemp("rewind") / "home"
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("REWIND_")]:
            patch.delenv(name)
        patch.setenv("REWIND_HOME", str(home))
        patch.setenv("REWIND_AIRFLOW_USERS", json.dumps({DAG_TEST_USER: "ADMIN"}))
        yield home


@pytest.fixture
def trigger_as(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``trigger_as("ANALYST")``: this test's ``dag.test()`` runs act as that Rewind user
    (SPEC R37: identity comes from the Airflow user who triggered the run)."""

    def _map(rewind_user: str) -> None:
        monkeypatch.setenv("REWIND_AIRFLOW_USERS", json.dumps({DAG_TEST_USER: rewind_user}))

    return _map


@dataclass
class Finished:
    """A finished DAG run: its state, and per task its state, XCom and rendered fields."""

    dag_run: Any

    def task_states(self) -> dict[str, str]:
        return {ti.task_id: str(ti.state) for ti in self.dag_run.get_task_instances()}

    def xcom(self, task_id: str) -> Any:
        return self._ti(task_id).xcom_pull(task_ids=task_id)

    def rendered(self, task_id: str) -> dict[str, Any]:
        from airflow.models.renderedtifields import RenderedTaskInstanceFields

        return RenderedTaskInstanceFields.get_templated_fields(self._ti(task_id)) or {}

    def _ti(self, task_id: str) -> Any:
        return next(ti for ti in self.dag_run.get_task_instances() if ti.task_id == task_id)


@pytest.fixture(scope="session")
def run_dag(airflow_db: Path) -> Callable[..., Finished]:
    """``run_dag(dag_id, logical_date=, run_after=, conf=)``: one run with ``dag.test()``
    (tasks in this process, Spark jobs through spark-submit), without retries: a parse of
    its own, so that the ``dagbag`` the DagBag tests read keeps the declared retries."""
    dagbag = parse_dags()

    def _run(
        dag_id: str,
        *,
        logical_date: datetime | None = None,
        run_after: datetime | None = None,
        conf: dict[str, Any] | None = None,
    ) -> Finished:
        dag = dagbag.dags[dag_id]
        for task in dag.tasks:  # a failure shows at once instead of after minutes of back-off
            task.retries = 0
        return Finished(dag.test(logical_date=logical_date, run_after=run_after, run_conf=conf))

    return _run
