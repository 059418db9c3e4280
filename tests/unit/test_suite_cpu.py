"""benchmarks/suite_cpu.py (issue 26): every process a command starts is counted, and
named by what it is."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "suite_cpu.py"
PY = "/repo/.venv/bin/python3"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("suite_cpu", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["suite_cpu"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("cmd", "parent", "expected"),
    [
        ([PY, "/repo/.venv/bin/airflow", "api-server", "--port", "1"], [], "airflow api-server"),
        ([PY, "/repo/.venv/bin/rewind", "--home", "h", "sql", "x"], [], "rewind CLI"),
        ([PY, "-m", "rewind.resident", "/tmp/s.sock"], [], "python -m rewind.resident"),
        ([PY, "-u", "-c", "import sys;exec(eval(sys.stdin.readline()))"], [], "pytest worker"),
        (
            [PY, "/repo/spark_jobs/expire_versions.py", "--home", "h"],
            [],
            "python expire_versions.py",
        ),
        (
            ["/jdk/bin/java", "-cp", "x", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"],
            [PY, "/repo/spark_jobs/purge_failsafe.py"],
            "spark session of python purge_failsafe.py",
        ),
        (
            [
                "/jdk/bin/java",
                "org.apache.spark.deploy.SparkSubmit",
                "--class",
                "org.apache.spark.sql.connect.service.SparkConnectServer",
                "spark-internal",
            ],
            [],
            "spark SparkConnectServer",
        ),
        (
            ["/jdk/bin/java", "-Xmx1g", "org.apache.spark.deploy.worker.Worker", "spark://h:1"],
            [],
            "java Worker",
        ),
        (["/repo/.venv/bin/weed", "mini"], [], "weed"),
        # titles processes set themselves (setproctitle): one argument with spaces
        (["airflow api_server -- host:127.0.0.1 port:1"], [], "airflow api-server"),
        (["airflow worker -- 01a21f4f-543d-7a77-956b-1f9fffc046bf"], [], "airflow worker"),
        (["postgres: rewind airflow_door [local] idle"], [], "postgres"),
        (["[pytest-xdist idle]"], [], "pytest worker"),
        (
            ["/jdk/bin/java", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"],
            ["test_hostile_input.py::test_the_observer@test_hostile_input"],
            "spark session of pytest worker",
        ),
        (["org.chromium.Chromium.scoped_dir.RHvV9V --type=renderer"], [], "chromium"),
    ],
)
def test_a_process_is_named_by_what_it_is(cmd: list[str], parent: list[str], expected: str) -> None:
    assert load().kind(cmd, parent) == expected


def test_the_cpu_of_a_grandchild_is_counted(tmp_path: Path) -> None:
    """A shell's child that burns ~1 CPU-s is in the report, under its own name."""
    out = tmp_path / "cpu.json"
    burn = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass\n"
    (tmp_path / "burn.py").write_text(burn)
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(out),
            "--every",
            "0.2",
            "--",
            "sh",
            "-c",
            f"{sys.executable} {tmp_path / 'burn.py'}; sleep 0.5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    kinds = {k["kind"]: k["cpu_s"] for k in report["by_kind"]}
    assert kinds.get("python burn.py", 0) >= 0.7, report
    assert report["cpu_s"] >= 0.7 and report["returncode"] == 0
