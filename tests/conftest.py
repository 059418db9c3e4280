"""Shared fixtures. Every test must carry one of the declared markers (STYLE.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jvm_classes import spark_environment

MARKERS = {"unit", "spark", "cli", "integration", "e2e"}
REPO = Path(__file__).resolve().parent.parent
REWIND = shutil.which("rewind", path=str(Path(sys.executable).parent)) or "rewind"
# Every Spark JVM of the suite compiles with C1 only and maps the classes `make test` archived
# (tests/jvm_classes.py says why); the subprocesses the tests start inherit it.
os.environ.pop("SPARK_CONF_DIR", None)
os.environ.update(spark_environment(REPO / ".jars" / "spark-classes.jsa"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse unmarked tests."""
    unmarked = [i.nodeid for i in items if not MARKERS & {m.name for m in i.iter_markers()}]
    if unmarked:
        raise pytest.UsageError(
            f"tests without a marker ({', '.join(sorted(MARKERS))}): {unmarked}"
        )


TIMELINE = REPO / ".pytest_cache" / "timeline"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run's timeline starts empty (in the controlling process: workers append to it)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        shutil.rmtree(TIMELINE, ignore_errors=True)
    if os.environ.get("REWIND_SUITE_CPU") == "1":
        _cpu_mark[:] = [tree_cpu_seconds()]


def tree_cpu_seconds() -> float:
    """CPU seconds this process and its descendants have used: its own, its reaped
    children's, and every live descendant's (with the children each reaped). A process
    that left the tree (a daemon re-parented to init) counts only while it was in it."""
    import resource

    used = sum(
        getattr(resource.getrusage(who), field)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        for field in ("ru_utime", "ru_stime")
    )
    parents: dict[int, list[tuple[int, float]]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        ticks = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        parents.setdefault(int(fields[1]), []).append((int(entry.name), ticks / tick))
    pending = [os.getpid()]
    while pending:
        for pid, seconds in parents.get(pending.pop(), []):
            used += seconds
            pending.append(pid)
    return used


# REWIND_SUITE_CPU=1: each timeline line also has the phase's CPU seconds (tree_cpu_seconds'
# growth since the worker's previous phase; ~5 ms a phase to read /proc, so not by default).
_cpu_mark: list[float] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Where the suite's time goes (issue 26): every phase of every test, with its worker
    and wall-clock span, one JSON line per phase in ``.pytest_cache/timeline/<worker>.jsonl``
    (``python benchmarks/suite_timeline.py`` sums it by module and shows each worker's idle
    time), and with ``REWIND_SUITE_CPU=1`` the CPU the phase used (``cpu_s``)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if worker == "main" and hasattr(report, "node"):
        return  # xdist's controller hearing a worker's report: the worker wrote it
    TIMELINE.mkdir(parents=True, exist_ok=True)
    line = {
        "test": report.nodeid,
        "phase": report.when,
        "worker": worker,
        "start": report.start,
        "stop": report.stop,
        "outcome": report.outcome,
    }
    if os.environ.get("REWIND_SUITE_CPU") == "1":
        used = tree_cpu_seconds()
        line["cpu_s"] = round(used - (_cpu_mark or [used])[-1], 3)
        _cpu_mark[:] = [used]
    with open(TIMELINE / f"{worker}.jsonl", "a") as out:
        out.write(json.dumps(line) + "\n")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """One PostgreSQL server per test process (tests/postgres_server.py); a database each."""
    from postgres_server import PostgresServer

    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession per test process (the factory caches it)."""
    from rewind.spark import get_spark

    return get_spark("local[2]")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def connect(home: Path, spark) -> Callable[..., object]:
    """``connect(now=..., user=...)`` opens a session on the test's home."""
    import rewind

    opened = []

    def _connect(now: str | None = None, user: str | None = None):
        conn = rewind.connect(home=home, user=user, now=now)
        opened.append(conn)
        return conn

    yield _connect
    for conn in opened:
        conn.close()


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> list[dict]:
        return json.loads(self.stdout)


@pytest.fixture
def cli_env() -> dict[str, str]:
    """The ``REWIND_*`` settings of the ``cli`` fixture's calls (the caller's are dropped).
    Spark in the command's own process here, so that no test leaves a server behind;
    tests/cli runs on a Spark Connect server (its conftest)."""
    return {"REWIND_SPARK_SERVER": "off"}


@pytest.fixture
def cli(home: Path, cli_env: dict[str, str]) -> Iterator[Callable[..., CliResult]]:
    """Run the installed ``rewind`` command against the test's home."""

    def _run(
        *args: str,
        now: str | None = None,
        user: str | None = None,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
    ) -> CliResult:
        command = [REWIND, "--home", str(home)]
        if now is not None:
            command += ["--now", now]
        if user is not None:
            command += ["--user", user]
        own = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
        proc = subprocess.run(
            [*command, *args],
            capture_output=True,
            text=True,
            input=stdin,
            env=own | cli_env | (env or {}),
            timeout=300,
            check=False,
            start_new_session=True,  # a crash test's kill (REWIND_FAULT) takes its group
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    yield _run


# --- S3 (SPEC section 11): one SeaweedFS per test session, a bucket per test ----------------


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A SeaweedFS S3 server on loopback (rewind/seaweedfs.py) for the whole session, with
    keys of its own: a random secret, which the R45 tests look for where it must not be,
    and a reader's keys (read and list only: a bucket without permission to write)."""
    import secrets

    from rewind.seaweedfs import SeaweedFS

    server = SeaweedFS(
        tmp_path_factory.mktemp("seaweedfs"),
        access_key="REWINDTEST" + secrets.token_hex(5).upper(),
        secret_key="s3cret-" + secrets.token_urlsafe(24),
        readers={"REWINDREAD" + secrets.token_hex(5).upper(): "r3ad-" + secrets.token_urlsafe(24)},
    )
    server.start()
    yield server
    server.stop()


@dataclass
class S3Bucket:
    """A fresh bucket of the session's server: ``uri`` (``s3://name/``), ``env`` (the AWS
    variables that reach it, also set in this process for the test)."""

    name: str
    uri: str
    env: dict[str, str]
    server: Any


@pytest.fixture
def s3_bucket(
    s3_server: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> S3Bucket:
    """A new bucket for the test, and the standard AWS variables set to reach it."""
    import re
    import secrets

    stem = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"{stem}-{secrets.token_hex(4)}"
    s3_server.create_bucket(name)
    env = s3_server.env()
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return S3Bucket(name=name, uri=f"s3://{name}/", env=env, server=s3_server)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """``plugins/rewind_plugin.py`` imported the way Airflow imports it: by file path."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIRFLOW_HOME", str(tmp_path_factory.mktemp("airflow")))
        spec = importlib.util.spec_from_file_location(
            "rewind_plugin", REPO / "plugins" / "rewind_plugin.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
