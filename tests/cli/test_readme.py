"""The first ten minutes (issue 26): what the README tells a new user to type, and the
commands ``make run`` prints at its end, run as printed.

- The README's ```bash blocks marked ``<!-- runnable ... -->`` run in order in one bash
  shell, in a fresh directory that stands for the checkout (it holds the project's
  ``.venv``, linked, and nothing else), with a PATH on which ``rewind`` is not: the
  README's own words must put it there. The directory and TMPDIR are new, so whatever
  home the blocks use is fresh.
- ``python -m rewind.demo next`` (the end of ``make run``) prints CLI calls on the demo's
  home; each runs as printed, from the checkout, on a home holding the demo's first day.

Both use the home's own Spark Connect server, as a user's calls do (the first call that
needs Spark starts it), and the commands under test stop it; a server left running is
stopped at the end of the test all the same.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind import demo, spark_server

pytestmark = pytest.mark.cli

REPO = Path(__file__).resolve().parents[2]
RUNNABLE = re.compile(r"<!-- runnable\b[^>]*-->\s*```bash\n(.*?)```", re.S)
IN_VENV = pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the README's .venv")


def runnable_blocks() -> list[str]:
    return RUNNABLE.findall((REPO / "README.md").read_text())


@pytest.fixture
def checkout(tmp_path: Path) -> Iterator[Path]:
    """A directory standing for a fresh checkout: the project's venv (a link), no home.
    Every home's server started under ``tmp_path`` is stopped at the end."""
    where = tmp_path / "checkout"
    where.mkdir()
    (where / ".venv").symlink_to(sys.prefix)
    (tmp_path / "tmp").mkdir()
    yield where
    for state in tmp_path.rglob("server/state.json"):
        spark_server.stop(state.parent.parent)


def new_user_shell(tmp_path: Path) -> dict[str, str]:
    """A new user's environment: no REWIND_* setting, no venv active, no ``rewind`` on
    the PATH; ``mktemp`` writes under ``tmp_path``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("REWIND_") and k not in ("VIRTUAL_ENV", "PYTHONHOME")
    }
    path = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in path if d and not (Path(d) / "rewind").exists())
    env["TMPDIR"] = str(tmp_path / "tmp")
    return env


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``script`` in ``bash -x``, stopping at the first failing command."""
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-x", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith(("error:", "Traceback"))]


@IN_VENV
def test_the_readme_examples_run_as_printed(checkout: Path, tmp_path: Path) -> None:
    blocks = runnable_blocks()
    assert len(blocks) >= 2, "README: the PATH block and the Using it examples are marked"
    env = new_user_shell(tmp_path)
    assert bash("command -v rewind || true", checkout, env).stdout == ""  # not found yet

    done = bash("\n".join(blocks), checkout, env)

    assert done.returncode == 0 and not errors(done), done.stderr[-3000:]
    out = done.stdout
    assert "usage: rewind" in out  # the PATH block: `rewind --help` found the command
    assert "9.99" in out  # the deleted row, read back with AT(OFFSET => ...)
    assert "ORDERS" in out and "dropped_on" in out  # SHOW TABLES HISTORY
    assert "stopped." in out  # the examples end by stopping the home's server...
    assert not list(tmp_path.rglob("server/state.json"))  # ... and none runs


@IN_VENV
def test_make_run_ends_with_commands_that_run_as_printed(checkout: Path, tmp_path: Path) -> None:
    env = new_user_shell(tmp_path)
    home = checkout / ".rewind-demo"
    (first_day, script), *_ = demo.history()  # the demo's databases and tables
    built = subprocess.run(
        [".venv/bin/rewind", "--home", str(home), "--now", first_day.isoformat(), "sql", script],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    # What the Makefile's run target calls last, as it calls it.
    printed = subprocess.run(
        [".venv/bin/python", "-m", "rewind.demo", "next", "--home", str(home)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    makefile = (REPO / "Makefile").read_text()
    assert "make airflow" in printed and re.search(r"^airflow:", makefile, re.M)
    assert "http://localhost:8080" in printed and "AIRFLOW_HOME=$(CURDIR)/.airflow" in makefile
    assert ".airflow/simple_auth_manager_passwords.json.generated" in printed
    assert ".airflow/rewind_nightly.log" in printed and ">.airflow/rewind_nightly.log" in makefile
    assert "rewind.demo next --home $(DEMO_HOME)" in makefile
    commands = [line.strip() for line in printed.splitlines() if ".venv/bin/rewind " in line]
    assert [c.startswith(".venv/bin/rewind --home .rewind-demo ") for c in commands] == [True] * 3
    shown, at_point, stop = (bash(command, checkout, env) for command in commands)
    for done in (shown, at_point, stop):
        assert done.returncode == 0 and not errors(done), done.stderr[-3000:]
    assert {"ORDERS", "CUSTOMERS", "STAGING"} <= set(re.findall(r"\b[A-Z_]{4,}\b", shown.stdout))
    assert re.search(r"ORDERS_ON_NOV_17[\s\S]*\b1\b", at_point.stdout), at_point.stdout
    assert "stopped." in stop.stdout and spark_server.running(home) is None
