"""The connections Rewind's tasks use are the deployment's, not a connection editor's
(SPEC R37, R44, R45; the README's "Airflow" security notes).

Airflow's ``Op`` role may create and edit any connection kept in Airflow's database, from
the UI or the REST API. ``spark_default`` decides where Rewind's jobs run (a master of the
editor's own would receive every executor's data) and ``aws_default`` which store they
reach, so Rewind's tasks read them only from the workers' environment
(``AIRFLOW_CONN_<ID>``) or a secrets backend, which Airflow searches first: a database copy
of the same id is never read, and a connection defined only in the database is a
CONFIGURATION_ERROR before any Spark job starts. Here with Airflow's real metadata database
and ``dag.test()`` (outside a task, Airflow reads no connection from its database);
``tests/e2e/test_airflow_door.py`` has an Op create ``spark_default`` through the REST API
of a running Airflow whose workers define it, and the runs go on as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow_aws")]

ELSEWHERE = {"conn_type": "spark", "host": "spark://127.0.0.1", "port": 9}  # nobody listens


@pytest.fixture
def in_database(airflow_db: Path) -> Iterator[Callable[..., None]]:
    """``in_database(conn_id, conn_type=..., ...)``: a connection in Airflow's metadata
    database, as an Op's edit leaves it; removed after the test."""
    from airflow.models import Connection
    from airflow.utils.session import create_session

    added: list[str] = []

    def _add(conn_id: str, **fields: Any) -> None:
        with create_session() as session:
            session.add(Connection(conn_id=conn_id, **fields))
        added.append(conn_id)

    yield _add
    with create_session() as session:
        session.query(Connection).filter(Connection.conn_id.in_(added)).delete()


@pytest.fixture
def night(
    run_dag: Callable[..., Any], capfd: pytest.CaptureFixture[str]
) -> Callable[[int], tuple[Any, dict[str, str], str]]:
    """``night(day)``: ``rewind_nightly`` of 2026-06-<day> with ``dag.test()``: the run,
    its task states and what its tasks logged."""

    def _night(day: int) -> tuple[Any, dict[str, str], str]:
        capfd.readouterr()
        run = run_dag("rewind_nightly", logical_date=datetime(2026, 6, day, tzinfo=UTC))
        log = capfd.readouterr()
        return run, run.task_states(), log.out + log.err

    return _night


def test_a_night_whose_master_an_op_chose_runs_no_spark_job(
    in_database: Callable[..., None],
    rewind_home: Path,
    night: Callable[[int], tuple[Any, dict[str, str], str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``rewind_nightly`` with ``spark_default`` only in the database: the run's user may
    run the lifecycle, and still its first Spark step fails with the refusal before
    ``spark-submit`` starts; no step is recorded (SPEC R31: nothing half done)."""
    import rewind
    from rewind.config import Config
    from rewind.operations.nightly import lifecycle_run_id
    from rewind.runner import recorded_steps

    with rewind.connect(home=rewind_home) as conn:
        conn.sql("CREATE DATABASE DOOR")
    monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT")
    in_database("spark_default", **ELSEWHERE)
    run, states, text = night(3)
    assert states["authorize"] == "success"
    assert states["effective_retention"] == "failed"
    assert {states[step] for step in ("expire_versions", "validate")} == {"upstream_failed"}
    assert "'spark_default' is defined only in Airflow's database" in text
    assert "spark-submit" not in text and "127.0.0.1:9" not in text
    lifecycle = lifecycle_run_id("rewind_nightly", run.dag_run.run_id)
    assert recorded_steps(Config.load(home=rewind_home), lifecycle) == []


def test_an_object_store_an_op_chose_is_refused(
    in_database: Callable[..., None],
    rewind_home: Path,
    night: Callable[[int], tuple[Any, dict[str, str], str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``aws_default`` only in the database (an Op's keys and endpoint): the night's first
    task, which reads the object store's settings, fails with the refusal naming the
    connection and where to define it, never its secret (R45); nothing ran after it."""
    monkeypatch.delenv("AIRFLOW_CONN_AWS_DEFAULT", raising=False)
    monkeypatch.delenv("REWIND_AWS_CONN_ID", raising=False)
    in_database(
        "aws_default",
        conn_type="aws",
        login="AKIDOP",
        password="op-secret-key",
        extra=json.dumps({"endpoint_url": "http://127.0.0.1:9"}),
    )
    _, states, text = night(4)
    assert states["authorize"] == "failed"
    assert {states[step] for step in ("effective_retention", "validate")} == {"upstream_failed"}
    assert "'aws_default' is defined only in Airflow's database" in text
    assert "AIRFLOW_CONN_AWS_DEFAULT" in text
    assert "op-secret-key" not in text
