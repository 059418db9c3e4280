"""Other Delta writers, run as other engines (SPEC R40, R43): a plain PySpark job with
delta-spark in a process of its own (no Rewind code), and a plain delta-rs writer.

A commit's time, for a writer without in-commit timestamps, is its log file's
modification time (Delta's rule); :func:`stamp` sets it, so that tests on Rewind's
simulated clock can place another writer's commit at a chosen instant.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from rewind.spark import DEFAULT_DELTA_JARS

REPO = Path(__file__).resolve().parents[1]
# What a data team's own job starts with: examples/orders_job.py's session (pyspark +
# delta-spark's jars, extension and catalog).
HEADER = f"""\
import sys
sys.path.insert(0, {str(REPO / "examples")!r})
from delta.tables import DeltaTable
from orders_job import session
spark = session("team-job")
path = sys.argv[1]
"""


def start_delta_spark(path: Path, body: str) -> subprocess.Popen[str]:
    """Start ``body`` (Python, with ``spark``, ``path`` and ``DeltaTable`` in scope) as a
    plain PySpark job in its own process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REWIND_", "PYSPARK_GATEWAY"))}
    env["DELTA_JARS"] = str(os.environ.get("REWIND_DELTA_JARS") or DEFAULT_DELTA_JARS)
    return subprocess.Popen(
        [sys.executable, "-c", HEADER + textwrap.dedent(body), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(job: subprocess.Popen[str], timeout: float = 300) -> str:
    """Wait for a job started by :func:`start_delta_spark`; returns what it printed."""
    try:
        out, err = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        job.kill()
        out, err = job.communicate()
    assert job.returncode == 0, err[-3000:]
    return out


def delta_spark(path: Path, body: str, timeout: float = 300) -> str:
    """Run ``body`` as a plain PySpark job (see :func:`start_delta_spark`) to its end."""
    return finish(start_delta_spark(path, body), timeout)


def delta_rs_append(path: Path, rows: dict[str, pa.Array]) -> None:
    """A plain delta-rs writer appending rows."""
    write_deltalake(str(path), pa.table(rows), mode="append")


def stamp(path: Path, version: int, when: datetime) -> None:
    """Give commit ``version`` the commit time ``when`` (its file's modification time)."""
    log = path / "_delta_log" / f"{version:020d}.json"
    os.utime(log, (when.timestamp(), when.timestamp()))


def versions(path: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))
