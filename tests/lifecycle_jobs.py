"""A lifecycle step run as its own Spark job (``spark_jobs/<step>.py``), as Airflow runs it:
driver, JVM and Python workers in a session of their own, so that a fault
(``REWIND_FAULT``, SPEC R31) kills that session and never pytest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from rewind.lifecycle.fileops import FAULT_ENV

REPO = Path(__file__).resolve().parents[1]


def run_job(
    home: Path,
    step: str,
    run_id: str,
    now: datetime,
    fault: str | None,
    timeout: float,
    settings: Mapping[str, str] | None = None,
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the step's job on ``home`` at ``now``; with ``fault``
    the fault hook is armed there; ``settings``: ``REWIND_*`` variables of the job (none of
    this process's reaches it). A job still running after ``timeout`` s is killed, all of
    its session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    env.update(settings or {})
    if fault is not None:
        env[FAULT_ENV] = fault
    command = [sys.executable, str(REPO / "spark_jobs" / f"{step}.py"), "--home", str(home)]
    command += ["--now", now.isoformat(), "--run-id", run_id]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=home.parent,
        start_new_session=True,  # the fault kills this group, not pytest
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:  # timed out: end the job started here, all of its group
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out, err
