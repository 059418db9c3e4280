"""processes.process_runs: the one answer to "does this process still run" that the CLI's
resident server, the Spark server's supervisor and the tests all ask (SPEC R39)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewind.processes import process_runs

pytestmark = pytest.mark.unit


def test_a_running_process_runs_an_exited_one_does_not_reaped_or_not() -> None:
    reader = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    child = subprocess.Popen(reader, stdin=subprocess.PIPE)
    assert process_runs(os.getpid())
    assert process_runs(child.pid)
    assert child.stdin is not None
    child.stdin.close()
    deadline = time.monotonic() + 30
    while process_runs(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not process_runs(child.pid)  # a zombie: exited, its parent (this) has not reaped it
    state = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    assert state == "Z"
    child.wait()
    assert not process_runs(child.pid)  # reaped: no /proc entry, no signal 0
