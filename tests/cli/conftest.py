"""Fixtures of the CLI tests (helpers live in cli_helpers.py).

The CLI tests run their Spark work on one Spark Connect server per test process, named
by ``REWIND_SPARK_REMOTE`` (issue 14): the path every ``rewind sql`` call takes on a
user's machine, without a server start per test home. test_cli_restore.py runs in the
command's own process instead, so that both paths stay correct; test_cli_server.py
covers the home's own server (start on first use, reuse, idle stop, a killed server).

Every call goes through the resident Rewind process (rewind/launcher.py), as a user's
do: one per test process, in a runtime directory of its own, stopped at the end (none is
left behind); test_cli_resident.py covers the hand-over itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import fails, sql

from rewind import resident, spark_server

REWIND = shutil.which("rewind", path=str(Path(sys.executable).parent)) or "rewind"

__all__ = ["fails", "sql"]


@pytest.fixture(scope="session", autouse=True)
def resident_process() -> Iterator[None]:
    """This test process's ``rewind`` calls share one resident process, in a runtime
    directory of their own (``XDG_RUNTIME_DIR``, which the calls inherit), stopped at the
    end."""
    runtime = Path(tempfile.mkdtemp(prefix="rewind-tests-"))  # short: a socket's name
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    yield
    for path in runtime.glob("rewind-cli-*/*.sock"):
        resident.stop(path)
    if saved is None:
        del os.environ["XDG_RUNTIME_DIR"]
    else:
        os.environ["XDG_RUNTIME_DIR"] = saved
    shutil.rmtree(runtime)


@pytest.fixture(scope="session")
def spark_remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running Spark Connect server's URL (with its token), stopped at the end. It never
    stops idle meanwhile: this worker's CLI tests may come minutes apart (a server stopped
    after the default 5 idle minutes failed a later test with SPARK_UNAVAILABLE)."""
    home = tmp_path_factory.mktemp("spark-server") / "home"
    subprocess.run(
        [REWIND, "--home", str(home), "server", "start"],
        check=True,
        timeout=300,
        env={**os.environ, "REWIND_SPARK_SERVER_IDLE": str(24 * 3600)},
    )
    endpoint = spark_server.running(home)
    assert endpoint is not None
    yield endpoint.url
    spark_server.stop(home)


@pytest.fixture
def cli_env(spark_remote: str) -> dict[str, str]:
    return {"REWIND_SPARK_REMOTE": spark_remote}
