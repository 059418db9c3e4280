"""The suite's own runner: ``make test`` runs ``pytest -n 2 --dist loadgroup``.

Heavy modules (a warehouse with three nights of Airflow, an ``airflow standalone``, a
Spark standalone cluster) mark their tests ``xdist_group`` so that one worker builds their
module fixtures once. pytest-xdist 3.8 ignores the mark under pytest 9.2 (it writes the
group to an attribute 9.2 no longer reads), and then spreads a group over the workers,
each building the fixtures again: CI took 34 minutes instead of ~25. This test runs a
tiny suite the way ``make test`` does and checks that a group stays on one worker.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

GROUPED = """
import os
import pytest

pytestmark = pytest.mark.xdist_group("heavy")


@pytest.fixture(scope="module")
def heavy():
    with open("setups.txt", "a") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.mark.parametrize("n", range(6))
def test_grouped(heavy, n):
    pass
"""
OTHERS = """
import time
import pytest


@pytest.mark.parametrize("n", range(20))
def test_other(n):
    time.sleep(0.02)
"""


def test_an_xdist_group_runs_on_one_worker_and_builds_its_fixtures_once(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_others.py").write_text(OTHERS)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "26 passed" in done.stdout
    setups = (tmp_path / "setups.txt").read_text().split()
    assert len(setups) == 1, f"the group's module fixture was built on {setups}"
