"""``rewind lifecycle run`` on a terminal (issue 28, SPEC R29): rich progress bars on
stderr while the steps work, then what each step did and how long it took.

The call goes through the resident process (tests/cli/conftest.py), which runs it in a
forked child on the caller's own descriptors (rewind/launcher.py): the terminal the
command was given is the child's stderr, a terminal there too. Plain lines, where stderr
is not a terminal, are covered in tests/spark/test_lifecycle_progress.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import at, terminal

from rewind import launcher, resident
from rewind.lifecycle.progress import INTERVAL_ENV

pytestmark = pytest.mark.cli

REWIND = str(Path(sys.executable).parent / "rewind")
STEPS = ["effective_retention", "expire_versions", "purge_failsafe", "storage_metrics", "validate"]


@pytest.fixture
def cli_env(spark_remote: str) -> dict[str, str]:
    return {"REWIND_SPARK_REMOTE": spark_remote, INTERVAL_ENV: "0.05"}


def on_terminal(command: list[str], env: dict[str, str]) -> tuple[int, int, str, bytes]:
    """(pid, exit code, stdout, what the terminal showed) of ``command`` with stderr on a
    pseudo-terminal."""
    with terminal() as (follower, shown):
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=follower, env=env, text=True
        )
        out, _ = proc.communicate(timeout=600)
    return proc.pid, proc.returncode, out, bytes(shown)


def test_a_run_on_a_terminal_shows_bars_then_each_step_s_time(
    home: Path, sql: Callable[..., Any], cli_env: dict[str, str]
) -> None:
    sql("CREATE DATABASE d; CREATE TABLE d.public.t (id INT)")
    for value in range(3):
        sql(f"INSERT INTO d.public.t VALUES ({value})", days=0.01 * (value + 1))
    sql("DELETE FROM d.public.t WHERE id < 2", days=0.1)
    socket = launcher.socket_path()
    assert resident.serving(socket) is not None  # the calls above started it
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")} | cli_env
    command = [REWIND, "--home", str(home), "--now", at(40), "lifecycle", "run"]
    pid, code, out, shown = on_terminal(command, env | {"COLUMNS": "160", "TERM": "xterm"})
    assert code == 0, shown.decode(errors="replace")
    # The resident process ran it, in a child on this terminal (not the command itself).
    assert f"served pid {pid} in pid" in socket.with_suffix(".log").read_text()
    terminal = shown.decode()
    assert "━" in terminal  # rich's bars
    assert "\x1b[" in terminal  # drawn and redrawn in place: escape sequences
    assert "lifecycle progress:" not in terminal  # not the plain lines of a log
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)
    for step in STEPS:
        assert f"{step} done" in plain, plain[-3000:]
    # The deleted rows' files left time travel (1 day) long before day 40: moved into
    # fail-safe and, past its 7 days too, purged in the same run, each with its count.
    moved = re.findall(r"files moved or deleted\s.*?(\d+)/(\d+)", plain)
    purged = re.findall(r"files purged\s.*?(\d+)/(\d+)", plain)
    assert moved and moved[-1][0] == moved[-1][1] != "0", plain[-3000:]
    assert purged and purged[-1][0] == purged[-1][1] == moved[-1][1]
    # The storage metrics' bar: the one table measured, with its bytes.
    measured = re.findall(r"tables measured\s.*?(\d+)/(\d+)\s+[\d.]+ (?:bytes|[kMG]B)/", plain)
    assert measured and measured[-1] == ("1", "1"), plain[-3000:]
    # The summary on stdout: every step with what it did and its time (SPEC R29).
    (header, *_) = [line for line in out.splitlines() if line.startswith("┃ step")]
    assert "elapsed_s" in header and "files_moved" in header
    table = [line.split("│") for line in out.splitlines() if line.startswith("│")]
    timed = {cells[1].strip(): cells[-2].strip() for cells in table}
    assert all(float(timed[step]) > 0 for step in STEPS), out
