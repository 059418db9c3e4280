"""The object store's settings from an Airflow connection of type ``aws`` (SPEC R44, R45):
the Amazon provider's fields mapped onto the standard AWS variables, for a task's body and
the ``spark-submit`` it starts; a missing connection leaves the worker's environment; a
connection of another type or without keys is a CONFIGURATION_ERROR naming it, never its
secret. Then a ``rewind_restore`` run whose only AWS settings are the connection brings
back a team's Delta table on a real S3 server (SeaweedFS), and its secret key is in no
task log, XCom, rendered field, catalog or QUERY_HISTORY.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rewind.errors import ConfigurationError
from rewind.operations.dagkit import aws_connection
from rewind.storage import objectstore

pytestmark = pytest.mark.xdist_group("airflow_aws")

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEXAMPLETOKEN"
WORKER = {"AWS_PROFILE": "the-workers-own", "AWS_DEFAULT_REGION": "eu-west-3"}


def aws_conn(**fields: Any) -> str:
    """``AIRFLOW_CONN_<ID>``'s JSON form of an ``aws`` connection with these fields."""
    return json.dumps({"conn_type": "aws", **fields})


def aws_variables() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name.startswith("AWS_")}


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A worker with AWS variables of its own, and no ``aws`` connection defined."""
    for name in [n for n in os.environ if n.startswith(("AWS_", "AIRFLOW_CONN_AWS"))]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("REWIND_AWS_CONN_ID", raising=False)
    for name, value in WORKER.items():
        monkeypatch.setenv(name, value)
    return monkeypatch


@pytest.mark.unit
def test_an_aws_connection_supplies_the_standard_variables_for_the_block_r44(
    worker: pytest.MonkeyPatch,
) -> None:
    """login, password, extra aws_session_token / endpoint_url / region_name become the AWS
    variables, and only those (no worker profile mixed in), which every client then reads;
    the worker's come back after the block."""
    worker.setenv(
        "AIRFLOW_CONN_AWS_DEFAULT",
        aws_conn(
            login="AKIDCONNECTION",
            password=SECRET,
            extra={
                "aws_session_token": TOKEN,
                "endpoint_url": "http://127.0.0.1:8333",
                "region_name": "eu-central-1",
            },
        ),
    )
    with aws_connection():
        assert aws_variables() == {
            "AWS_ACCESS_KEY_ID": "AKIDCONNECTION",
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_SESSION_TOKEN": TOKEN,
            "AWS_ENDPOINT_URL": "http://127.0.0.1:8333",
            "AWS_REGION": "eu-central-1",
        }
        s3 = objectstore.settings()
    assert aws_variables() == WORKER
    assert (s3.endpoint_url, s3.region, s3.access_key_id) == (
        "http://127.0.0.1:8333",
        "eu-central-1",
        "AKIDCONNECTION",
    )
    assert (s3.secret_access_key, s3.session_token, s3.keys_in_environment) == (
        SECRET,
        TOKEN,
        True,  # a spark-submitted JVM reads them from its environment, not from --conf
    )
    assert objectstore.delta_rs_options(s3)["AWS_ALLOW_HTTP"] == "true"


@pytest.mark.unit
def test_the_connection_id_is_configurable_and_its_extra_optional_r44(
    worker: pytest.MonkeyPatch,
) -> None:
    """``REWIND_AWS_CONN_ID`` names the connection; one with keys only sets keys only."""
    worker.setenv("REWIND_AWS_CONN_ID", "lake_s3")
    worker.setenv("AIRFLOW_CONN_LAKE_S3", aws_conn(login="AKIDLAKE", password=SECRET))
    with aws_connection():
        assert aws_variables() == {"AWS_ACCESS_KEY_ID": "AKIDLAKE", "AWS_SECRET_ACCESS_KEY": SECRET}
    assert aws_variables() == WORKER


@pytest.mark.unit
def test_without_a_connection_the_workers_environment_serves_r44(
    worker: pytest.MonkeyPatch,
) -> None:
    with aws_connection():
        assert aws_variables() == WORKER


@pytest.mark.unit
def test_the_variables_come_back_when_the_block_fails(worker: pytest.MonkeyPatch) -> None:
    worker.setenv("AIRFLOW_CONN_AWS_DEFAULT", aws_conn(login="AKIDX", password=SECRET))
    with pytest.raises(RuntimeError), aws_connection():
        raise RuntimeError("the task failed")
    assert aws_variables() == WORKER


@pytest.mark.unit
@pytest.mark.parametrize(
    ("connection", "reason"),
    [
        (
            json.dumps({"conn_type": "generic", "login": "AKIDX", "password": SECRET}),
            "is of type 'generic'",
        ),
        (aws_conn(login="AKIDX", extra={"aws_session_token": TOKEN}), "lacks"),
        (aws_conn(password=SECRET), "lacks"),
    ],
    ids=["wrong_type", "no_password", "no_login"],
)
def test_a_connection_of_another_type_or_without_keys_is_refused_r44_r45(
    worker: pytest.MonkeyPatch, connection: str, reason: str
) -> None:
    """CONFIGURATION_ERROR naming the connection, never its secret; nothing changed."""
    worker.setenv("AIRFLOW_CONN_AWS_DEFAULT", connection)
    with pytest.raises(ConfigurationError) as caught, aws_connection():
        pytest.fail("the block must not run")
    error = caught.value
    assert error.code == "CONFIGURATION_ERROR"
    assert "'aws_default'" in error.message and reason in error.message
    assert SECRET not in str(error) and TOKEN not in str(error)
    assert aws_variables() == WORKER


@pytest.mark.integration
@pytest.mark.spark
def test_a_restore_run_reaches_s3_with_the_airflow_connection_alone_r44_r45(
    s3_bucket: Any,
    rewind_home: Path,
    run_dag: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A team's Delta table on S3 (written by delta-rs), registered and dropped; then, with
    no AWS variable in the environment and the settings in ``AIRFLOW_CONN_AWS_DEFAULT``
    only, ``rewind_restore`` undrops it and its Spark validation reads its rows from S3.
    The secret key is in no task log (spark-submit's command line included), XCom,
    rendered field, file of the Airflow home (metadata) or of the Rewind home (catalog,
    QUERY_HISTORY)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    import rewind

    server = s3_bucket.server
    uri = f"{s3_bucket.uri}team/orders"
    write_deltalake(
        uri,
        pa.table({"ID": [1, 2, 3], "V": ["a", "b", "c"]}),
        storage_options=objectstore.delta_rs_options(objectstore.settings()),
    )
    conn = rewind.connect(home=rewind_home)
    try:
        conn.sql(
            "CREATE DATABASE LAKE; "
            f"CREATE EXTERNAL TABLE ORDERS LOCATION = '{uri}' TABLE_FORMAT = DELTA; "
            "DROP TABLE ORDERS"
        )
    finally:
        conn.close()

    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv(
        "AIRFLOW_CONN_AWS_DEFAULT",
        aws_conn(
            login=server.access_key,
            password=server.secret_key,
            extra={"endpoint_url": server.endpoint, "region_name": s3_bucket.env["AWS_REGION"]},
        ),
    )
    capfd.readouterr()
    run = run_dag(
        "rewind_restore",
        run_after=datetime.now(UTC),
        conf={
            "operation": "undrop",
            "object_type": "TABLE",
            "name": "LAKE.PUBLIC.ORDERS",
            "point_kind": "now",
            "point_relation": "AT",
            "point_value": "",
            "target_name": "",
            "ignore_insufficient_retention": False,
        },
    )
    logs = "".join(capfd.readouterr())
    states = run.task_states()
    assert set(states.values()) == {"success"}, (states, logs[-3000:])
    assert run.xcom("restore")["statement"] == "UNDROP TABLE LAKE.PUBLIC.ORDERS"
    assert run.xcom("validate_result")["tables_checked"] == 1  # its rows, read from S3
    assert aws_variables() == {}  # the connection's settings lived in the tasks only

    secret = server.secret_key
    assert "Spark-Submit cmd" in logs and secret not in logs
    for task_id in states:
        assert secret not in json.dumps(run.xcom(task_id), default=str), task_id
        assert secret not in json.dumps(run.rendered(task_id), default=str), task_id
    for home in (rewind_home, Path(os.environ["AIRFLOW_HOME"])):
        for path in home.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
