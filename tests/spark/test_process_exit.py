"""Every process that reads a Rewind system table into Arrow exits 0 (issue 26).

``DeltaTable.to_pyarrow_table()`` (deltalake 1.6.6, pyarrow 26.0.1) reads through a
Python filesystem; an Arrow I/O thread that drops one of its buffers while the
interpreter shuts down takes the GIL, is ended by Python, and ends the process with
"terminate called without an active exception" (SIGABRT, exit 134). The system tables
are now read through ``rewind.storage.arrow_read.read_arrow`` (pyarrow's own local
filesystem: no Python object on Arrow's threads). Each entry point below runs 20 times,
each time in a fresh process, and must exit 0 every time; the first failure stops it.

One module-scoped home is built in this (pytest) process with Spark: a database with two
tables of rows, and one lifecycle run at ``RUN_AT``, so the retention plan and the
storage metrics hold rows. Then, in fresh processes, without Spark (``JAVA_HOME`` points
nowhere, so a process that tried to start a JVM would fail instead of passing unseen):

- a process whose last act is ``read_arrow`` of each system table: the most exposed
  shape (the race is with the end of the read). Against the old read a bare read
  aborted in 3 to 83 % of runs, depending on the machine's load (the lower, the more
  often), so 20 runs may miss it on a busy machine.
- ``rewind lifecycle run`` (the CLI, Spark in process, none needed on a night where
  nothing expires): steps 2 and 6 read the plan (``read_plan``, ``read_previous_plan``)
  and the metrics (``quality.facts.metric_rows``); the 20 runs write 20 more runs. Its
  step 6 is the Great Expectations step the Airflow task runs (``rewind.runner``'s
  ``validate``), so that entry point is not run again on its own (~2 min of the suite).
- the Rewind page's model (``rewind.dashboard.load_dashboard``), as ADMIN.
- the Spark job ``spark_jobs/expire_versions.py`` run by ``python``, not
  ``spark-submit``: its Arrow read (the plan) happens before, and without, Spark, which
  it only starts for files to move (none here), and its exit code is the Python
  driver's. 20 spark-submits would take ~3 min more.

These four do seconds of work after their last read, and exited 0 in all of 80 runs
against the old read too (load 6-10 on 2 cores): they guard the entry points, the
bare reads are what fails first. ``SHOW`` reads no system table (its bytes come from
the table snapshots), and ``REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS`` is read by
Spark from the file list, so neither is here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import rewind
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.runner import run_lifecycle

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("process_exit")]

REPO = Path(__file__).resolve().parents[2]
REWIND = shutil.which("rewind", path=str(Path(sys.executable).parent)) or "rewind"
RUNS = 20
CREATED_AT = datetime(2026, 3, 2, 12, tzinfo=UTC)
RUN_AT = CREATED_AT + timedelta(hours=1)
# The CLI's runs are on the next day: a run replaces its day's metrics partition, and
# the fixture's run must keep its own for step 6 (retention 1 day: nothing expires).
CLI_AT = CREATED_AT + timedelta(hours=13)


@dataclass(frozen=True)
class Home:
    path: Path
    run_id: str


@pytest.fixture(scope="module")
def run_home(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Home:
    path = tmp_path_factory.mktemp("process_exit") / "home"
    conn = rewind.connect(home=path, now=format_timestamp(CREATED_AT))
    try:
        conn.sql(
            "CREATE DATABASE SHOP; CREATE TABLE SHOP.PUBLIC.ORDERS (ID INT, V VARCHAR);"
            "INSERT INTO SHOP.PUBLIC.ORDERS VALUES (1, 'a'), (2, 'b');"
            "CREATE TABLE SHOP.PUBLIC.ITEMS (ID INT); INSERT INTO SHOP.PUBLIC.ITEMS VALUES (1)"
        )
    finally:
        conn.close()
    steps = run_lifecycle(Config.load(home=path), RUN_AT)
    assert next(s for s in steps if s["step"] == "storage_metrics")["tables"] == 2
    return Home(path, steps[0]["run_id"])


def assert_exits_0(command: list[str]) -> None:
    """``command`` exits 0 in RUNS fresh processes, one after the other (the first
    failure ends the loop: its exit code and stderr are the message)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    env |= {"REWIND_SPARK_SERVER": "off", "JAVA_HOME": "/nonexistent/no-jvm-expected"}
    codes: list[int] = []
    while len(codes) < RUNS:
        proc = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False
        )
        codes.append(proc.returncode)
        assert proc.returncode == 0, f"exit codes {codes}, stderr:\n{proc.stderr[-2000:]}"


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.mark.parametrize("table", ["retention_plan", "table_storage_metrics"])
def test_a_process_whose_last_act_is_the_read_exits_0_every_time(
    run_home: Home, table: str
) -> None:
    assert_exits_0(
        python(
            "from pathlib import Path\n"
            "from rewind.storage.arrow_read import read_arrow\n"
            f"assert read_arrow(Path({str(run_home.path / 'system' / table)!r})).num_rows > 0\n"
        )
    )


def test_cli_lifecycle_run_exits_0_every_time(run_home: Home) -> None:
    assert_exits_0(
        [REWIND, "--home", str(run_home.path), "--now", CLI_AT.isoformat(), "lifecycle", "run"]
    )


def test_dashboard_model_exits_0_every_time(run_home: Home) -> None:
    assert_exits_0(
        python(
            "from rewind.clock import parse_timestamp\n"
            "from rewind.config import Config\n"
            "from rewind.dashboard import load_dashboard\n"
            f"board = load_dashboard(Config.load(home={str(run_home.path)!r}),"
            f" parse_timestamp({(RUN_AT + timedelta(hours=1)).isoformat()!r}), 'ADMIN')\n"
            "assert board.metrics_found and len(board.groups) == 1, board\n"
        )
    )


def test_expire_versions_job_exits_0_every_time(run_home: Home) -> None:
    assert_exits_0(
        [
            sys.executable,
            str(REPO / "spark_jobs" / "expire_versions.py"),
            "--home",
            str(run_home.path),
            "--now",
            RUN_AT.isoformat(),
            "--run-id",
            run_home.run_id,
        ]
    )
