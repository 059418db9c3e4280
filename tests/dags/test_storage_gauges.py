"""Issue 28 item 7, SPEC R33, R35: the storage_metrics task's per-table gauges, read from
the metrics table the step wrote, through Airflow's real StatsD logger to a UDP socket:
the object in the name (plain StatsD), and with ``statsd_influxdb_enabled`` the
database, schema and table as tags too. The same gauges from a real run of
``rewind_nightly``: tests/dags/test_nightly_dag.py."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 2, tzinfo=UTC)
YESTERDAY = datetime(2026, 11, 1, tzinfo=UTC)
FIGURES = ["active_bytes", "time_travel_bytes", "failsafe_bytes", "retained_for_clone_bytes"]
# (id, database, schema, table, deleted, active, time travel, fail-safe, for clone)
ROWS = [
    (1, "SHOP", "PUBLIC", "ORDERS", True, 0, 0, 700, 0),  # dropped, in fail-safe
    (2, "SHOP", "PUBLIC", "ORDERS", False, 100, 20, 3, 0),  # ORDERS created since
    (3, "SHOP", "PUBLIC", "my table", False, 50, 0, 0, 9),  # a quoted name
    (4, "LAB", "TMP", "T1", False, 0, 0, 0, 0),
]


def write_metrics(home: Path, now: datetime, rows: list[tuple[Any, ...]]) -> None:
    """One day of the metrics table as the storage_metrics step writes it."""
    from rewind.config import Config
    from rewind.lifecycle.metrics import BYTE_COLUMNS, METRICS_SCHEMA, metrics_path
    from rewind.lifecycle.plan import write_partition
    from rewind.storage import location

    records = [
        {
            "ID": i,
            "TABLE_NAME": table,
            "TABLE_SCHEMA": schema,
            "TABLE_CATALOG": database,
            "IS_TRANSIENT": "NO",
            **dict(zip(BYTE_COLUMNS, figures, strict=True)),
            "DELETED": deleted,
            "TABLE_CREATED": YESTERDAY,
            "TABLE_DROPPED": YESTERDAY if deleted else None,
            "TABLE_ENTERED_FAILSAFE": None,
            "AS_OF": now,
            "AS_OF_DATE": now.date().isoformat(),
        }
        for i, database, schema, table, deleted, *figures in rows
    ]
    path = metrics_path(Config.load(home=home).system_root)
    location.make_dir(path)
    write_partition(
        path,
        pa.Table.from_pylist(records, schema=METRICS_SCHEMA),
        "AS_OF_DATE",
        now.date().isoformat(),
    )


@pytest.fixture
def statsd(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], list[str]]]:
    """A UDP socket as the StatsD server of Airflow's metrics, InfluxDB-style tags on;
    yields what it received, line by line."""
    from airflow.sdk._shared.observability.metrics import stats
    from airflow.sdk._shared.observability.metrics.base_stats_logger import NoStatsLogger
    from airflow.sdk.observability.metrics import stats_utils

    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(1)
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_ON", "True")
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_HOST", "127.0.0.1")
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_PORT", str(server.getsockname()[1]))
    monkeypatch.setenv("AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED", "True")
    stats.initialize(factory=stats_utils.get_stats_factory(), export_legacy_names=False)

    def received() -> list[str]:
        lines = []
        while True:
            try:
                lines += server.recv(65536).decode().splitlines()
            except TimeoutError:
                return lines

    try:
        yield received
    finally:
        stats.initialize(factory=NoStatsLogger, export_legacy_names=False)
        server.close()


def test_per_table_gauges_with_tags(
    tmp_path: Path, statsd: Callable[[], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's rows, summed per name over incarnations, under
    ``rewind.storage.by_table.<database>.<schema>.<table>.<figure>`` with the tags
    ``database``, ``schema`` and ``table`` appended InfluxDB-style; a table of the
    previous day's rows that has none today (purged) at 0."""
    from rewind.operations.dagkit import LifecycleJob

    home = tmp_path / "home"
    monkeypatch.setenv("REWIND_HOME", str(home))
    write_metrics(home, YESTERDAY - timedelta(days=1), [(8, "X", "Y", "Z", False, 1, 1, 1, 1)])
    write_metrics(home, YESTERDAY, [(9, "OLD", "PUBLIC", "GONE", False, 1, 1, 1, 1), *ROWS])
    write_metrics(home, NOW, ROWS)
    job = LifecycleJob(
        task_id="storage_metrics",
        job="storage_metrics",
        now=str(NOW),
        metrics_prefix="rewind.storage",
    )
    job.home, job.now = str(home), str(NOW)  # as Airflow renders the templates
    job.table_gauges("rewind.storage")

    gauges = {}
    for line in statsd():
        name, _, rest = line.partition(":")
        value, _, kind = rest.partition("|")
        assert kind == "g", line
        gauges[name] = float(value)
    tags = ",database=SHOP,schema=PUBLIC,table="
    orders = "airflow.rewind.storage.by_table.SHOP.PUBLIC.ORDERS"
    quoted = "airflow.rewind.storage.by_table.SHOP.PUBLIC.my-20table"
    lab = "airflow.rewind.storage.by_table.LAB.TMP.T1"
    lab_tags = ",database=LAB,schema=TMP,table=T1"
    gone = "airflow.rewind.storage.by_table.OLD.PUBLIC.GONE"  # yesterday's, purged since
    gone_tags = ",database=OLD,schema=PUBLIC,table=GONE"
    assert gauges == {
        f"{orders}.active_bytes{tags}ORDERS": 100,
        f"{orders}.time_travel_bytes{tags}ORDERS": 20,
        f"{orders}.failsafe_bytes{tags}ORDERS": 703,
        f"{orders}.retained_for_clone_bytes{tags}ORDERS": 0,
        f"{quoted}.active_bytes{tags}my-20table": 50,
        f"{quoted}.time_travel_bytes{tags}my-20table": 0,
        f"{quoted}.failsafe_bytes{tags}my-20table": 0,
        f"{quoted}.retained_for_clone_bytes{tags}my-20table": 9,
        f"{lab}.active_bytes{lab_tags}": 0,
        f"{lab}.time_travel_bytes{lab_tags}": 0,
        f"{lab}.failsafe_bytes{lab_tags}": 0,
        f"{lab}.retained_for_clone_bytes{lab_tags}": 0,
        **{f"{gone}.{figure}{gone_tags}": 0 for figure in FIGURES},
    }


def test_no_metrics_table_sends_nothing_and_fails_nothing(
    tmp_path: Path, statsd: Callable[[], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gauges are best effort, as Airflow's own: a home without the metrics table (or a
    read that fails) sends no per-table gauge and does not fail the task."""
    from rewind.operations.dagkit import LifecycleJob

    monkeypatch.setenv("REWIND_HOME", str(tmp_path / "home"))
    job = LifecycleJob(
        task_id="storage_metrics",
        job="storage_metrics",
        now=str(NOW),
        metrics_prefix="rewind.storage",
    )
    job.home, job.now = str(tmp_path / "home"), str(NOW)
    job.table_gauges("rewind.storage")
    assert statsd() == []
