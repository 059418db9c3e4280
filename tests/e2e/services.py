"""Real services for the e2e tests, on loopback only, every wait bounded.

A Spark standalone master + worker started from the pip package's ``spark-class``
(shared by the lifecycle-on-cluster test and the Airflow e2e test).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
JOBS = REPO / "spark_jobs"
# The nightly lifecycle's Spark jobs, in the order the nightly DAG runs them (SPEC R29).
STEPS = ["effective_retention", "expire_versions", "purge_failsafe", "storage_metrics"]

# -- the e2e warehouse: every kind of lifecycle work happens on its night ----------

# The night the jobs run: 20 days after the history below began.
NOW = "2026-05-21T00:00:00+00:00"
# Airflow's simple auth manager: one user of each of its roles (name:role).
AIRFLOW_USERS = {"admin": "admin", "alice": "user", "vic": "viewer", "olga": "op"}
HISTORY = [
    (
        "2026-05-01T00:00:00+00:00",
        "CREATE DATABASE SHOP; "
        # retention 1 (account default): removed files leave on day 3, purged on day 10;
        # a clone keeps them (RETAINED_FOR_CLONE, SPEC R30).
        "CREATE TABLE ORDERS (ID INT, V VARCHAR); INSERT INTO ORDERS VALUES (1, 'a'), (2, 'b'); "
        "INSERT INTO ORDERS VALUES (3, 'c'); CREATE TABLE ORDERS_COPY CLONE ORDERS; "
        # retention 14: a removed file is in fail-safe on the night of the run.
        "CREATE TABLE KEEP (ID INT) DATA_RETENTION_TIME_IN_DAYS = 14; "
        "INSERT INTO KEEP VALUES (1), (2); INSERT INTO KEEP VALUES (3); "
        # transient: removed files are deleted, never kept in fail-safe (SPEC R12).
        "CREATE TRANSIENT TABLE SCRATCH (ID INT); INSERT INTO SCRATCH VALUES (1); "
        "INSERT INTO SCRATCH VALUES (2); "
        # dropped on day 2: every file leaves on day 3 and is purged on day 10.
        "CREATE TABLE OLD (ID INT); INSERT INTO OLD VALUES (1); "
        # dropped on day 15 with retention 3: in fail-safe on the night of the run.
        "CREATE TABLE RECENT (ID INT) DATA_RETENTION_TIME_IN_DAYS = 3; "
        "INSERT INTO RECENT VALUES (5); "
        # retention 30: its removed file is still in time travel.
        "CREATE TABLE LONG (ID INT) DATA_RETENTION_TIME_IN_DAYS = 30; INSERT INTO LONG VALUES (1);"
        # SPEC R37: the Rewind users of the Airflow users below (same name by default);
        # ADMIN is built in. CLERK may read ORDERS and nothing else.
        "CREATE ROLE CLERK; GRANT SELECT ON TABLE SHOP.PUBLIC.ORDERS TO ROLE CLERK; "
        "CREATE USER ALICE DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER ALICE; "
        "CREATE USER VIC DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER VIC; "
        "CREATE USER OLGA DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER OLGA",
    ),
    (
        "2026-05-02T00:00:00+00:00",
        "USE SHOP; UPDATE ORDERS SET V = 'B' WHERE ID = 2; DELETE FROM ORDERS WHERE ID = 1; "
        "DELETE FROM KEEP WHERE ID = 1; DELETE FROM SCRATCH WHERE ID = 1; DROP TABLE OLD; "
        "DELETE FROM LONG",
    ),
    ("2026-05-15T00:00:00+00:00", "USE SHOP; DROP TABLE RECENT"),
]


def build_warehouse(home: Path) -> None:
    """The history above, written with the Python API with the clock moving."""
    import rewind

    for now, script in HISTORY:
        conn = rewind.connect(home=home, now=now)
        try:
            conn.sql(script)
        finally:
            conn.close()  # the copies below must see a quiet catalog


def storage_metrics(home: Path) -> list[dict[str, Any]]:
    """The rows of ``system/table_storage_metrics`` (SPEC R33), by table id."""
    from rewind.storage.arrow_read import read_arrow

    rows = read_arrow(home / "system" / "table_storage_metrics")
    return sorted(rows.to_pylist(), key=lambda row: (row["AS_OF_DATE"], row["ID"]))


START_TIMEOUT_S = 120  # master up and the worker registered
SUBMIT_TIMEOUT_S = 300  # one spark-submit
APPS_TIMEOUT_S = 60  # the master lists a finished application as completed
STOP_TIMEOUT_S = 30


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_env(**extra: str) -> dict[str, str]:
    """The environment of every Spark process: the pip package's Spark, loopback only,
    the venv's Python on driver and executors, no REWIND_* settings of the caller."""
    import pyspark

    drop = ("REWIND_", "PYSPARK_GATEWAY_", "SPARK_")
    keep = ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS")  # the suite's JVM flags (conftest)
    env = {k: v for k, v in os.environ.items() if k in keep or not k.startswith(drop)}
    env.update(
        SPARK_HOME=str(Path(pyspark.__file__).parent),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join(
            p for p in (str(REPO / "include"), os.environ.get("PYTHONPATH", "")) if p
        ),
        **extra,
    )
    return env


def spark_submit(
    master: str, script: Path, args: list[str], cwd: Path, **env: str
) -> dict[str, Any]:
    """``spark-submit`` of ``script`` with Rewind's options (as Airflow's SparkSubmitOperator
    runs the jobs), in :func:`spark_env` plus ``env``; returns the job's JSON summary line."""
    from rewind.spark import submit_options

    command = [str(BIN / "spark-submit"), "--master", master, *submit_options(), str(script)]
    proc = subprocess.Popen(
        [*command, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=spark_env(**env),
        cwd=cwd,  # anything Spark drops in its working directory stays in tmp
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=SUBMIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        out, err = proc.communicate()
        pytest.fail(f"{script.name} on {master} ran over {SUBMIT_TIMEOUT_S}s:\n{err[-3000:]}")
    assert proc.returncode == 0, f"{script.name} on {master} failed:\n{err[-3000:]}"
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, f"{script.name} on {master} printed no JSON summary:\n{out}\n{err[-3000:]}"
    return dict(json.loads(lines[-1]))


def stop_group(proc: subprocess.Popen[Any]) -> None:
    """End a process started in its own session, and everything it started."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


# Restore LONG (retention 30) as it was before the DELETE of 2026-05-02 (SPEC R16).
RESTORE_FORM = {
    "operation": "restore_in_place",
    "object_type": "TABLE",
    "name": "SHOP.PUBLIC.LONG",
    "point_kind": "timestamp",
    "point_relation": "AT",
    "point_value": "2026-05-01T12:00:00+00:00",
    "target_name": "",
    "ignore_insufficient_retention": False,
}


# Run as ``isolated HIDDEN OWN... -- COMMAND...``: COMMAND in a user and mount namespace of
# its own (``unshare``, no privilege needed), where HIDDEN is an empty tmpfs but for each OWN,
# bound back at its place from a descriptor opened before (``--no-canonicalize``: the
# descriptor, not the path it names, which the tmpfs now covers). It starts in the first
# OWN as bound back: its first working directory, in the covered tree, would reach the rest
# of HIDDEN by "..".
ISOLATE = """
hidden="$1"; shift; own=(); fds=()
while [ "$1" != "--" ]; do own+=("$1"); shift; done; shift
for dir in "${own[@]}"; do exec {fd}<"$dir" || exit 1; fds+=("$fd"); done
mount -t tmpfs -o mode=0700 rewind-worker "$hidden" || exit 1
for i in "${!own[@]}"; do
  mkdir -p "${own[$i]}" || exit 1
  mount --no-canonicalize --bind "/proc/self/fd/${fds[$i]}" "${own[$i]}" || exit 1
done
for fd in "${fds[@]}"; do exec {fd}<&-; done
cd "${own[0]}" && exec "$@"
"""


@dataclass
class Cluster:
    """A standalone master and one worker (1 core, 1 GB) on loopback.

    ``hide``: a directory the worker does not see (None: it sees the machine as the driver
    does). Under it the worker sees its own ``root`` only, as a worker on another machine
    shares no directory with the driver, and this checkout (:data:`REPO`: the code, venv and
    jars a machine of the cluster has installed) if it is under ``hide`` (a clone in the
    temporary directory); its executors inherit its view, and its environment plus
    ``worker_env`` (the credentials a cluster's machines hold).
    """

    root: Path
    hide: Path | None = None
    worker_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    webui_port: int = field(default_factory=free_port)
    worker_webui_port: int = field(default_factory=free_port)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    @property
    def work_dir(self) -> Path:
        return self.root / "worker-work"

    def start(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        spark_class = str(BIN / "spark-class")
        self._daemon(
            "master",
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                *("--host", "127.0.0.1", "--port", str(self.port)),
                *("--webui-port", str(self.webui_port)),
            ],
        )
        worker = [
            spark_class,
            "org.apache.spark.deploy.worker.Worker",
            self.url,
            *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
            *("--webui-port", str(self.worker_webui_port), "--work-dir", str(self.work_dir)),
        ]
        if self.hide is not None:
            isolate = ["unshare", "--user", "--map-root-user", "--mount", "bash", "-c", ISOLATE]
            own = [self.root, *[REPO] * REPO.is_relative_to(self.hide)]
            worker = [*isolate, "isolated", str(self.hide), *map(str, own), "--", *worker]
        self._daemon("worker", worker, **self.worker_env)

    @property
    def worker_pid(self) -> int:
        """The worker's JVM (``unshare``, bash and ``spark-class`` exec into it)."""
        return self.procs[1].pid

    def _daemon(self, name: str, command: list[str], **env: str) -> None:
        with open(self.root / f"{name}.log", "wb") as log:
            self.procs.append(
                subprocess.Popen(
                    command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=spark_env(SPARK_WORKER_DIR=str(self.work_dir), **env),
                    cwd=self.root,
                    start_new_session=True,  # its own process group, killed as a whole
                )
            )

    def state(self) -> dict[str, Any]:
        """The master's web UI JSON (proxies bypassed: loopback only)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as response:
            return dict(json.load(response))

    def wait_until(self, ready: Any, timeout: float, what: str) -> dict[str, Any]:
        """Poll the master's state until ``ready(state)``; fail after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        state: dict[str, Any] = {}
        while time.monotonic() < deadline:
            if any(proc.poll() is not None for proc in self.procs):
                break  # a daemon died: its log says why
            try:
                state = self.state()
            except (OSError, ValueError):
                state = {}
            if state and ready(state):
                return state
            time.sleep(1)
        pytest.fail(
            f"Spark standalone: {what} not reached in {timeout}s; last state {state}\n"
            f"master log:\n{tail(self.root / 'master.log')}\n"
            f"worker log:\n{tail(self.root / 'worker.log')}"
        )

    def app_ids(self) -> set[str]:
        """Every application the master knows, running or ended."""
        state = self.state()
        return {app["id"] for app in [*state["activeapps"], *state["completedapps"]]}

    def apps_since(self, known: set[str], state: dict[str, Any]) -> list[dict[str, Any]]:
        """The ended applications of ``state`` that were not among ``known``."""
        return [app for app in state["completedapps"] if app["id"] not in known]

    def wait_for_worker(self) -> None:
        self.wait_until(lambda s: s.get("aliveworkers", 0) >= 1, START_TIMEOUT_S, "a live worker")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop_group(proc)


AIRFLOW_START_TIMEOUT_S = 240  # api-server healthy and the DAGs parsed
DAG_RUN_TIMEOUT_S = 900  # one DAG run with its Spark jobs on a loaded 2-core box


@dataclass
class Airflow:
    """``airflow standalone`` (api-server, scheduler, dag-processor, triggerer) on loopback,
    with the repository's DAGs and plugin, talking to Airflow only through its REST API."""

    root: Path
    env_extra: dict[str, str]
    metadata_url: str  # its own PostgreSQL database (tests/postgres_server.py)
    users: dict[str, str] = field(default_factory=lambda: dict(AIRFLOW_USERS))  # name: role
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    token: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def home(self) -> Path:
        return self.root / "airflow-home"

    def env(self) -> dict[str, str]:
        env = spark_env(
            PATH=os.pathsep.join((str(BIN), os.environ.get("PATH", ""))),
            AIRFLOW_HOME=str(self.home),
            AIRFLOW__CORE__DAGS_FOLDER=str(REPO / "dags"),
            AIRFLOW__CORE__PLUGINS_FOLDER=str(REPO / "plugins"),
            AIRFLOW__CORE__LOAD_EXAMPLES="False",
            AIRFLOW__API__HOST="127.0.0.1",
            AIRFLOW__API__PORT=str(self.port),
            AIRFLOW__API__BASE_URL=self.url,
            AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"{self.url}/execution/",
            AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT=str(free_port()),
            AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT=str(free_port()),
            AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS=",".join(
                f"{name}:{role}" for name, role in self.users.items()
            ),
        )
        # Nothing of the test process's own Airflow (tests/dags/conftest.py points
        # AIRFLOW__DATABASE__* at the dag.test() database): this installation's metadata
        # is a PostgreSQL database of its own. Not SQLite: the api-server, scheduler,
        # dag-processor, triggerer and task processes all write it, and on 2 loaded cores
        # SQLite's one writer lock made the scheduler die of "database is locked" and REST
        # reads wait past their time-outs.
        inherited = ("AIRFLOW_CONN_", "AIRFLOW__DATABASE__")
        env = {k: v for k, v in env.items() if not k.startswith(inherited)}
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = self.metadata_url
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = self.metadata_url  # psycopg 3 is both
        env.update(self.env_extra)
        return env

    def cli(self, *args: str) -> str:
        """One ``airflow`` CLI command against this installation (set-up only)."""
        proc = subprocess.run(
            [str(BIN / "airflow"), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, f"airflow {' '.join(args)}:\n{proc.stderr[-3000:]}"
        return proc.stdout

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.cli("db", "migrate")
        with open(self.root / "standalone.log", "wb") as log:
            self.proc = subprocess.Popen(
                [str(BIN / "airflow"), "standalone"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(),
                cwd=self.root,
                start_new_session=True,  # its own process group, killed as a whole
            )

    def fail(self, message: str) -> None:
        pytest.fail(f"{message}\nairflow standalone log:\n{tail(self.root / 'standalone.log', 60)}")

    def request(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        """A JSON call to the REST API with a token (the admin's unless given; proxies
        bypassed)."""
        status, answer = self.call(method, path, body, token or self.token)
        if status >= 400:
            raise urllib.error.HTTPError(f"{self.url}{path}", status, answer, None, None)  # type: ignore[arg-type]
        return json.loads(answer)

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None, **headers: str
    ) -> tuple[int, str]:
        """(status, body text) of one call, whatever the status; no token unless given."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for name, value in headers.items():
            request.add_header(name, value)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        # The api-server shares 2 cores with the scheduler, the task processes and their
        # JVMs: under a loaded suite a read can wait past any short timeout. A read that
        # timed out is asked again (twice); a change is never sent twice.
        tries = 3 if method == "GET" else 1
        for attempt in range(1, tries + 1):
            try:
                with opener.open(request, timeout=60) as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as error:
                return error.code, error.read().decode()
            except (TimeoutError, urllib.error.URLError) as error:
                timed_out = isinstance(getattr(error, "reason", error), TimeoutError)
                if attempt == tries or not timed_out:
                    raise
                print(f"{method} {path}: no answer in 60 s; asking again", flush=True)
        raise AssertionError("unreachable")

    def password(self, user: str = "admin") -> str:
        """A password ``airflow standalone`` generated (what the README points to)."""
        path = self.home / "simple_auth_manager_passwords.json.generated"
        return str(json.loads(path.read_text())[user])

    def token_for(self, user: str) -> str:
        """A real JWT of an Airflow user, from the api-server's login endpoint."""
        login = {"username": user, "password": self.password(user)}
        return str(self.request("POST", "/auth/token", login)["access_token"])

    def wait_ready(self, dag_ids: list[str]) -> None:
        """The api-server answers, a token is issued and every DAG is parsed."""
        deadline = time.monotonic() + AIRFLOW_START_TIMEOUT_S
        missing = list(dag_ids)
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                self.fail("airflow standalone exited")
            try:
                if not self.token:
                    self.token = self.token_for("admin")
                parsed = {d["dag_id"] for d in self.request("GET", "/api/v2/dags")["dags"]}
                missing = [d for d in dag_ids if d not in parsed]
                if not missing:
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(2)
        self.fail(f"Airflow not ready in {AIRFLOW_START_TIMEOUT_S}s (DAGs missing: {missing})")

    def trigger(
        self, dag_id: str, conf: dict[str, Any], as_user: str | None = None, **dates: str | None
    ) -> str:
        """Unpause and trigger ``dag_id`` (as the admin, or ``as_user`` with its own
        token); ``dates``: logical_date, run_after, data_interval_*."""
        self.request("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False})
        body = {"logical_date": None, **dates, "conf": conf}
        token = self.token_for(as_user) if as_user else None
        path = f"/api/v2/dags/{dag_id}/dagRuns"
        return str(self.request("POST", path, body, token=token)["dag_run_id"])

    def wait_run(self, dag_id: str, run_id: str) -> dict[str, Any]:
        """Poll the run until it ends; return it (state success or failed)."""
        quoted = urllib.request.quote(run_id, safe="")
        deadline = time.monotonic() + DAG_RUN_TIMEOUT_S
        run: dict[str, Any] = {}
        while time.monotonic() < deadline:
            run = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{quoted}")
            if run["state"] in ("success", "failed"):
                return run
            time.sleep(1)
        self.fail(f"{dag_id} run {run_id} did not end in {DAG_RUN_TIMEOUT_S}s: {run}")
        return run

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        quoted = urllib.request.quote(run_id, safe="")
        tis = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances")
        return list(tis["task_instances"])

    def task_states(self, dag_id: str, run_id: str) -> dict[str, str]:
        return {ti["task_id"]: ti["state"] for ti in self.task_instances(dag_id, run_id)}

    def task_log(
        self, dag_id: str, run_id: str, task_id: str, attempt: int = 1, token: str | None = None
    ) -> str:
        """One try's task log as the UI shows it, read with ``token`` (the admin's unless
        given)."""
        quoted = urllib.request.quote(run_id, safe="")
        path = (
            f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances/{task_id}/logs/{attempt}"
            "?full_content=true"
        )
        status, text = self.call("GET", path, token=token or self.token, Accept="application/json")
        assert status == 200, (path, status, text[:300])
        return text

    def xcom(self, dag_id: str, run_id: str, task_id: str) -> Any:
        """A task's return value as the UI shows it."""
        quoted = urllib.request.quote(run_id, safe="")
        path = (
            f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances/{task_id}"
            "/xcomEntries/return_value?deserialize=true"
        )
        return self.request("GET", path)["value"]

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc)
