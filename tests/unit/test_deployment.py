"""The deployment (docker-compose.yaml, Dockerfile, deploy/) checked without Docker.

No Docker engine runs on the development machines or in CI, so the deployment is read
as Compose reads it (YAML merge keys, ``${VAR:-default}`` with an empty environment)
and held against what it must agree with: the Compose Specification's JSON schema
(vendored in deploy/compose-spec/), Airflow 3.3's own CLI parser, configuration options
and Spark connection handling (asked in a subprocess with a throw-away AIRFLOW_HOME),
``rewind.config.Config``, the DAG kit (pool, connection id, where it finds spark_jobs/),
SQLAlchemy's dialects, deploy/postgres-init.sql, requirements.txt and delta-spark's own
artifact naming. The Compose CLI validates the file too where it is installed.

Every check returns the problems it finds. The real files must have none, and each check
is run on copies broken the way a person would break them, and must notice.
"""

from __future__ import annotations

import functools
import json
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml
from sqlalchemy.engine import make_url

from rewind.config import Config

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yaml"
SCHEMA = REPO / "deploy" / "compose-spec" / "compose-spec.json"

INIT = "airflow-init"
API_SERVER = "airflow-apiserver"
DRIVER = "airflow-scheduler"  # LocalExecutor: tasks, hence client-mode Spark drivers, run here
DAEMONS = {
    API_SERVER: "api-server",
    DRIVER: "scheduler",
    "airflow-dag-processor": "dag-processor",
    "airflow-triggerer": "triggerer",
}
AIRFLOW = (INIT, *DAEMONS)
POSTGRES = "postgres"
MASTER = "spark-master"
WORKERS = ("spark-worker-1", "spark-worker-2")
S3 = "seaweedfs"  # the object store (SPEC section 11)
S3_KEYS = ("S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY")  # from .env only, no default
FAILSAFE_SERVICES = {DRIVER, *WORKERS}  # SPEC R12, R38: only where lifecycle jobs move files
WAREHOUSE_SERVICES = {*FAILSAFE_SERVICES, API_SERVER}  # and the plugin's dashboard


# --- reading the files -------------------------------------------------------------------

_INTERPOLATION = re.compile(r"\$\$|\$\{(\w+)(?::?-([^}]*)|:?\?[^}]*)?\}")


def interpolate(node: Any) -> Any:
    """Compose's interpolation with an empty environment (``${X:-d}`` is d, ``$$`` is $,
    a required ``${X:?message}`` is empty: the values no commit holds).

    Every node is rebuilt, so YAML aliases stop sharing objects and a broken copy
    changes one service only.
    """
    if isinstance(node, dict):
        return {key: interpolate(value) for key, value in node.items()}
    if isinstance(node, list):
        return [interpolate(value) for value in node]
    if isinstance(node, str):
        return _INTERPOLATION.sub(lambda m: "$" if m[0] == "$$" else m[2] or "", node)
    return node


def parse_dockerfile(text: str) -> list[list[str]]:
    """``[INSTRUCTION, arguments]`` per instruction, continuation lines joined."""
    lines = text.replace("\\\n", " ").splitlines()
    return [
        [word.upper(), rest.strip()]
        for word, _, rest in (line.strip().partition(" ") for line in lines)
        if word and not word.startswith("#")
    ]


def parse_pins(text: str) -> dict[str, str]:
    """requirements.txt as ``{normalised name: pinned version}``."""
    pins = {}
    for line in text.splitlines():
        if match := re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^\s;#]+)", line.strip()):
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return pins


def argvs(service: dict[str, Any]) -> list[list[str]]:
    """Every command a service runs: its command (each line of a ``bash -c`` script)
    and its healthcheck, as argument lists."""
    found = []
    command = service.get("command") or []
    if isinstance(command, str):
        command = shlex.split(command)
    if command[:1] in (["bash"], ["sh"]) and any(re.fullmatch(r"-\w*c\w*", a) for a in command):
        found += [shlex.split(line) for line in command[-1].splitlines() if line.strip()]
    elif command:
        found.append(command)
    test = service.get("healthcheck", {}).get("test") or []
    if isinstance(test, str):
        test = ["CMD-SHELL", test]
    if test[:1] == ["CMD"]:
        found.append(test[1:])
    elif test[:1] == ["CMD-SHELL"]:
        found.append(shlex.split(test[1]))
    return found


@contextmanager
def rewind_environ(values: dict[str, str]) -> Iterator[None]:
    """Exactly ``values`` as this process's ``REWIND_*`` variables, for a while."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("REWIND_")}
    try:
        for key in saved:
            del os.environ[key]
        os.environ.update(values)
        yield
    finally:
        for key in [k for k in os.environ if k.startswith("REWIND_")]:
            del os.environ[key]
        os.environ.update(saved)


def config_of(env: dict[str, str]) -> Config:
    """The Config that ``rewind.config`` loads from a service's environment."""
    with rewind_environ({k: v for k, v in env.items() if k.startswith("REWIND_")}):
        return Config.load()


# Asks the installed Airflow, in a process of its own (its configuration and CLI are
# global state): which commands parse, which options exist, how the DAG kit's Spark
# connection resolves, and the DAG kit's names. One JSON request per line on stdin, one
# answer per line on the original stdout; whatever Airflow prints goes to stderr.
AIRFLOW_PROBE = """
import json, os, sys
answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
from airflow.cli.cli_parser import get_parser
from airflow.configuration import conf
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from rewind.operations import dagkit

parser = get_parser()
def parses(argv):
    try:
        parser.parse_args(argv)
    except SystemExit:
        return False
    return True

def spark_connection():
    try:
        resolved = SparkSubmitHook(conn_id=dagkit.SPARK_CONN_ID)._connection
    except Exception as error:
        return {"error": repr(error)}
    return {"master": resolved["master"], "deploy_mode": resolved["deploy_mode"]}

facts = {
    "options": {s: sorted(d.get("options", {})) for s, d in conf.configuration_description.items()},
    "pool": dagkit.POOL,
    "spark_conn_id": dagkit.SPARK_CONN_ID,
    "aws_conn_id": dagkit.AWS_CONN_ID,
    "spark_jobs": str(dagkit.SPARK_JOBS),
}
for line in sys.stdin:
    request = json.loads(line)
    for key in [k for k in os.environ if k.startswith("AIRFLOW_CONN_")]:
        del os.environ[key]
    os.environ.update(request["environment"])
    answer = dict(facts, parses=[parses(argv) for argv in request["commands"]])
    answer["spark"] = spark_connection() if request["environment"] else None
    answers.write(json.dumps(answer) + "\\n")
    answers.flush()
"""
PROBE_TIMEOUT_S = 300

Probe = Callable[..., dict[str, Any]]


@dataclass
class Deployment:
    compose: dict[str, Any]
    dockerfile: list[list[str]]
    dockerignore: list[str]
    init_sql: str
    pins: dict[str, str]
    probe: Probe
    delta_pom: str

    def env_of_image(self) -> dict[str, str]:
        """``ENV KEY=VALUE ...`` of the Dockerfile."""
        found = {}
        for instruction, arguments in self.dockerfile:
            if instruction == "ENV":
                found.update(dict(a.partition("=")[::2] for a in arguments.split()))
        return found

    def service(self, name: str) -> dict[str, Any]:
        return self.compose["services"][name]

    def services(self) -> dict[str, dict[str, Any]]:
        return self.compose["services"]

    def env(self, name: str) -> dict[str, str]:
        raw = self.service(name).get("environment") or {}
        if isinstance(raw, list):
            raw = dict(item.partition("=")[::2] for item in raw)
        return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in raw.items()}

    def mounts(self, name: str) -> dict[str, str]:
        """``{target: source}`` of a service's volumes."""
        found = {}
        for volume in self.service(name).get("volumes", []):
            if isinstance(volume, str):
                source, target = volume.split(":")[:2]
            else:
                source, target = volume.get("source", ""), volume["target"]
            found[target] = source
        return found

    def command(self, name: str) -> list[str]:
        command = self.service(name).get("command") or []
        return shlex.split(command) if isinstance(command, str) else list(command)

    def airflow(self, commands: tuple[tuple[str, ...], ...] = (), driver_conns: bool = False):
        """The probe's answers for these ``airflow`` argument lists and, if asked, the
        driver's ``AIRFLOW_CONN_*`` variables."""
        conns = (
            {k: v for k, v in self.env(DRIVER).items() if k.startswith("AIRFLOW_CONN_")}
            if driver_conns
            else {}
        )
        return self.probe(commands, tuple(sorted(conns.items())))

    def airflow_commands(self) -> list[tuple[str, list[str]]]:
        return [
            (name, argv)
            for name in AIRFLOW
            if name in self.services()
            for argv in argvs(self.service(name))
            if argv[:1] == ["airflow"]
        ]

    def copies(self) -> dict[str, PurePosixPath]:
        """Where each ``COPY`` source lands in the image (relative to WORKDIR)."""
        workdir, found = PurePosixPath("/"), {}
        for instruction, arguments in self.dockerfile:
            if instruction == "WORKDIR":
                workdir = workdir / arguments
            elif instruction == "COPY" and not arguments.startswith("--from="):
                *sources, target = arguments.split()
                for source in sources:
                    found[source] = workdir / target
        return found


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Probe]:
    """One probe process for the module, its answers cached by request."""
    home = tmp_path_factory.mktemp("airflow-home")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    environment["AIRFLOW_HOME"] = str(home)
    with (home / "probe.log").open("w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", AIRFLOW_PROBE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=environment,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        answers: dict[str, dict[str, Any]] = {}

        def ask(commands: tuple[tuple[str, ...], ...], conns: tuple[tuple[str, str], ...]):
            key = json.dumps([commands, conns])
            if key not in answers:
                proc.stdin.write(json.dumps({"commands": commands, "environment": dict(conns)}))
                proc.stdin.write("\n")
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], PROBE_TIMEOUT_S)
                line = proc.stdout.readline() if ready else ""
                log.seek(0)
                assert line, f"the Airflow probe did not answer:\n{log.read()[-4000:]}"
                answers[key] = json.loads(line)
            return answers[key]

        try:
            yield ask
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@functools.cache
def _files() -> tuple[Any, str, str, str, str]:
    return (
        yaml.safe_load(COMPOSE.read_text()),
        (REPO / "Dockerfile").read_text(),
        (REPO / ".dockerignore").read_text(),
        (REPO / "deploy" / "postgres-init.sql").read_text(),
        (REPO / "requirements.txt").read_text(),
    )


@pytest.fixture
def deployment(probe: Probe) -> Deployment:
    compose, dockerfile, dockerignore, init_sql, requirements = _files()
    return Deployment(
        compose=interpolate(compose),
        dockerfile=parse_dockerfile(dockerfile),
        dockerignore=[line.strip() for line in dockerignore.splitlines()],
        init_sql=init_sql,
        pins=parse_pins(requirements),
        probe=probe,
        delta_pom=(REPO / "deploy" / "delta" / "pom.xml").read_text(),
    )


# --- the checks --------------------------------------------------------------------------


@functools.cache
def _schema_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def check_compose_schema(d: Deployment) -> list[str]:
    """Valid under the official Compose Specification schema."""
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in _schema_validator().iter_errors(d.compose)
    ]


def check_services(d: Deployment) -> list[str]:
    """The services ARCHITECTURE names, each running what it is for, on the LocalExecutor."""
    missing = {INIT, *DAEMONS, POSTGRES, MASTER, *WORKERS} - set(d.services())
    if missing:
        return [f"missing services: {sorted(missing)}"]
    problems = [
        f"{name} runs {d.command(name)}, not ['airflow', '{sub}']"
        for name, sub in DAEMONS.items()
        if d.command(name) != ["airflow", sub]
    ]
    if ["airflow", "db", "migrate"] not in argvs(d.service(INIT)):
        problems.append(f"{INIT} does not run `airflow db migrate`")
    problems += [
        f"{name}: AIRFLOW__CORE__EXECUTOR is not LocalExecutor (tasks must run in {DRIVER})"
        for name in AIRFLOW
        if d.env(name).get("AIRFLOW__CORE__EXECUTOR") != "LocalExecutor"
    ]
    for name, role in [(MASTER, "master.Master"), *((w, "worker.Worker") for w in WORKERS)]:
        if f"org.apache.spark.deploy.{role}" not in d.command(name):
            problems.append(f"{name} does not run the Spark standalone {role}")
    return problems


def check_airflow_commands(d: Deployment) -> list[str]:
    """Every ``airflow ...`` a service or healthcheck runs parses with Airflow 3.3's CLI."""
    commands = d.airflow_commands()
    parses = d.airflow(tuple(tuple(argv[1:]) for _, argv in commands))["parses"]
    return [
        f"{name}: `{shlex.join(argv)}` is not an Airflow 3.3 command"
        for (name, argv), ok in zip(commands, parses, strict=True)
        if not ok
    ]


def check_airflow_options(d: Deployment) -> list[str]:
    """Every ``AIRFLOW__SECTION__KEY`` names an option of Airflow 3.3 (not a removed or
    moved one, which Airflow would ignore or only warn about)."""
    options = d.airflow()["options"]
    problems = []
    for name in AIRFLOW:
        for key in d.env(name):
            if key.startswith("AIRFLOW__"):
                _, section, option = key.lower().split("__", 2)
                if option not in options.get(section, []):
                    problems.append(f"{name}: {key} is no Airflow 3.3 option")
    return problems


def check_airflow_settings_shared(d: Deployment) -> list[str]:
    """All Airflow services see the same Airflow settings: one JWT secret and Fernet key,
    one database, one connection set (from the YAML anchor, not copies that drift)."""
    problems = []
    reference = {k: v for k, v in d.env(API_SERVER).items() if k.startswith("AIRFLOW")}
    for name in AIRFLOW:
        theirs = {k: v for k, v in d.env(name).items() if k.startswith("AIRFLOW")}
        differ = sorted(
            k for k in reference.keys() | theirs.keys() if reference.get(k) != theirs.get(k)
        )
        if differ:
            problems.append(f"{name} differs from {API_SERVER} in {differ}")
    return problems


def check_rewind_settings(d: Deployment) -> list[str]:
    """Every ``REWIND_*`` variable set is one that ``Config`` reads, and the clock is never
    frozen (SPEC R15: scheduled runs use the run's logical end)."""
    problems = []
    for name in d.services():
        env = d.env(name)
        own = {k: v for k, v in env.items() if k.startswith("REWIND_")}
        if "REWIND_NOW" in own:
            problems.append(f"{name}: REWIND_NOW freezes the clock (SPEC R15)")
        for key in own:
            if config_of(env) == config_of({k: v for k, v in env.items() if k != key}):
                problems.append(f"{name}: {key} changes nothing in rewind.config.Config")
    return problems


def check_warehouse(d: Deployment) -> list[str]:
    """The Rewind home is one volume at one path wherever tables are read or written: the
    driver ships absolute paths to the executors (ARCHITECTURE: Engines)."""
    home = str(config_of(d.env(DRIVER)).home)
    volume = d.mounts(DRIVER).get(home)
    if volume is None:
        return [f"{DRIVER} has no volume at its REWIND_HOME {home}"]
    problems = [
        f"{name} must mount volume {volume} at {home}"
        for name in sorted(WAREHOUSE_SERVICES)
        if d.mounts(name).get(home) != volume
    ]
    problems += [
        f"{name}: REWIND_HOME is {config_of(d.env(name)).home}, the driver's is {home}"
        for name in d.services()
        if "REWIND_HOME" in d.env(name) and str(config_of(d.env(name)).home) != home
    ]
    return problems


def check_failsafe(d: Deployment) -> list[str]:
    """The fail-safe volume is mounted exactly on the driver and the Spark workers, at the
    driver's fail-safe root, outside the warehouse; never on the api-server (R12, R38)."""
    driver = config_of(d.env(DRIVER))
    root = str(driver.failsafe_root)
    volume = d.mounts(DRIVER).get(root)
    if volume is None:
        return [f"{DRIVER} has no volume at its fail-safe root {root}"]
    problems = []
    if driver.failsafe_root.is_relative_to(driver.home):
        problems.append(f"fail-safe root {root} lies inside the Rewind home {driver.home}")
    holders = {name for name in d.services() if volume in d.mounts(name).values()}
    if holders != FAILSAFE_SERVICES:
        problems.append(
            f"volume {volume} is mounted on {sorted(holders)}, "
            f"must be exactly {sorted(FAILSAFE_SERVICES)} (SPEC R38)"
        )
    problems += [
        f"{name} mounts {volume} at {target}, not at {root}"
        for name in sorted(holders)
        for target, source in d.mounts(name).items()
        if source == volume and target != root
    ]
    problems += [
        f"{name} sets REWIND_FAILSAFE_URI without holding the fail-safe (SPEC R38)"
        for name in d.services()
        if "REWIND_FAILSAFE_URI" in d.env(name) and name not in FAILSAFE_SERVICES
    ]
    return problems


def check_spark(d: Deployment) -> list[str]:
    """Workers, REWIND_SPARK_MASTER and the DAG kit's Airflow connection all name the
    master service's port; the connection keeps the driver in the scheduler (client
    mode: the fail-safe is mounted there, and the DAG kit reads the job summary there)."""
    command = d.command(MASTER)
    host = command[command.index("--host") + 1] if "--host" in command else None
    port = command[command.index("--port") + 1] if "--port" in command else "7077"
    url = f"spark://{MASTER}:{port}"
    problems = [] if host == MASTER else [f"{MASTER} binds --host {host}, not its service name"]
    problems += [f"{w} does not register with {url}" for w in WORKERS if url not in d.command(w)]
    if config_of(d.env(DRIVER)).spark_master != url:
        problems.append(f"{DRIVER}: REWIND_SPARK_MASTER is not {url}")
    answer = d.airflow(driver_conns=True)
    spark = answer["spark"] or {"error": "no AIRFLOW_CONN_* variable"}
    if "error" in spark:
        problems.append(f"{DRIVER}: connection {answer['spark_conn_id']}: {spark['error']}")
    elif spark["master"] != url:
        problems.append(f"connection {answer['spark_conn_id']} reaches {spark['master']}")
    elif spark["deploy_mode"] not in (None, "client"):
        problems.append(f"deploy mode {spark['deploy_mode']} moves the driver off {DRIVER}")
    return problems


def check_object_store(d: Deployment) -> list[str]:
    """SeaweedFS's S3 gateway (SPEC section 11) without telemetry, published on the host's
    loopback only; its keys, the Airflow connection the DAG kit reads and the Spark
    workers' AWS variables name one endpoint and hold no committed secret (R44, R45); the
    Airflow services get the settings from the connection only."""
    if S3 not in d.services():
        return [f"no {S3} service"]
    command = d.command(S3)
    problems = [
        f"{S3} does not run `weed mini` with {flag}"
        for flag in ("mini", "-master.telemetry=false")
        if flag not in command
    ]
    problems += [
        f"{S3} publishes port {port} beyond the host's loopback"
        for port in d.service(S3).get("ports", [])
        if not str(port).startswith("127.0.0.1:")
    ]
    port = next((a.split("=", 1)[1] for a in command if a.startswith("-s3.port=")), "8333")
    endpoint = f"http://{S3}:{port}"
    keys = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
    for name in (S3, *WORKERS):
        env = d.env(name)
        problems += [
            f"{name}: {key} has a committed value" for key in sorted(keys) if env.get(key, "-")
        ]
        if name in WORKERS and env.get("AWS_ENDPOINT_URL") != endpoint:
            problems.append(f"{name}: AWS_ENDPOINT_URL is not {endpoint}")
    conn_id = d.airflow()["aws_conn_id"]
    variable = f"AIRFLOW_CONN_{conn_id.upper()}"
    for name in AIRFLOW:
        env = d.env(name)
        problems += [f"{name}: {key} bypasses {variable}" for key in env if key.startswith("AWS_")]
        try:
            conn = json.loads(env.get(variable, ""))
        except json.JSONDecodeError:
            problems.append(f"{name}: {variable} is not a JSON connection")
            continue
        extra = conn.get("extra") or {}
        if (conn.get("conn_type"), extra.get("endpoint_url")) != ("aws", endpoint):
            problems.append(f"{name}: {variable} is not an aws connection to {endpoint}")
        if conn.get("login") or conn.get("password"):
            problems.append(f"{name}: {variable} holds committed keys")
    return problems


def check_one_image(d: Deployment) -> list[str]:
    """Airflow and Spark run the image of this Dockerfile, so drivers and executors have
    the same Python, pyspark and Rewind; PYSPARK_PYTHON agrees on driver and workers."""
    problems = []
    images = {d.service(name).get("image") for name in (*AIRFLOW, MASTER, *WORKERS)}
    if len(images) != 1:
        problems.append(
            f"Airflow and Spark services use several images: {sorted(map(str, images))}"
        )
    for name in (*AIRFLOW, MASTER, *WORKERS):
        build = d.service(name).get("build")
        context = build.get("context", ".") if isinstance(build, dict) else build
        if context != ".":
            problems.append(f"{name} is not built from this repository's Dockerfile")
    python = d.env(DRIVER).get("PYSPARK_PYTHON")
    problems += [
        f"{w}: PYSPARK_PYTHON {d.env(w).get('PYSPARK_PYTHON')} differs from the driver's {python}"
        for w in WORKERS
        if d.env(w).get("PYSPARK_PYTHON") != python
    ]
    return problems


def _dependencies(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("depends_on") or {}
    if isinstance(raw, list):
        return dict.fromkeys(raw, "service_started")
    return {name: spec.get("condition", "service_started") for name, spec in raw.items()}


def check_dependencies(d: Deployment) -> list[str]:
    """depends_on names real services and conditions they can meet; every long-running
    service has a healthcheck; Airflow waits for a healthy database and a finished init."""
    services = d.services()
    problems = [
        f"{name} has no healthcheck"
        for name, service in services.items()
        if service.get("restart") != "no" and "healthcheck" not in service
    ]
    meets = {
        "service_healthy": lambda s: "healthcheck" in s,
        "service_completed_successfully": lambda s: s.get("restart") == "no",
        "service_started": lambda s: True,
    }
    for name, service in services.items():
        for target, condition in _dependencies(service).items():
            if target not in services:
                problems.append(f"{name} depends on {target}, which is no service")
            elif not meets.get(condition, lambda s: False)(services[target]):
                problems.append(f"{name} waits for {target} to be {condition}, which it cannot")
    wanted = {
        name: {POSTGRES: "service_healthy", INIT: "service_completed_successfully"}
        for name in DAEMONS
    }
    wanted |= {INIT: {POSTGRES: "service_healthy"}}
    wanted |= {w: {MASTER: "service_healthy"} for w in WORKERS}
    for name, needs in wanted.items():
        for target, condition in needs.items():
            if _dependencies(services[name]).get(target) != condition:
                problems.append(f"{name} must wait for {target}: {condition}")
    return problems


def published_ports(service: dict[str, Any]) -> set[tuple[str, str]]:
    """``(host port, container port)`` pairs a service publishes."""
    pairs = set()
    for port in service.get("ports", []):
        if isinstance(port, dict):
            pairs.add((str(port.get("published")), str(port["target"])))
        elif ":" in str(port):
            host, container = str(port).split(":")[-2:]
            pairs.add((host, container.split("/")[0]))
    return pairs


def check_execution_api(d: Deployment) -> list[str]:
    """Tasks reach the Execution API on the api-server service; the UI is published there."""
    env = d.env(API_SERVER)
    port = int(env.get("AIRFLOW__API__PORT", "8080"))
    url = urlsplit(env.get("AIRFLOW__CORE__EXECUTION_API_SERVER_URL", ""))
    problems = []
    if (url.hostname, url.port, url.path) != (API_SERVER, port, "/execution/"):
        problems.append(f"EXECUTION_API_SERVER_URL is not http://{API_SERVER}:{port}/execution/")
    if ("8080", str(port)) not in published_ports(d.service(API_SERVER)):
        problems.append(f"the UI is not published as localhost:8080 -> {API_SERVER}:{port}")
    return problems


def check_pool(d: Deployment) -> list[str]:
    """The init creates the DAG kit's pool with one slot: lifecycle mutations, restores and
    recoveries run one at a time (ARCHITECTURE: Airflow; SPEC R31)."""
    pool = d.airflow()["pool"]
    created = {
        argv[3]: argv[4]
        for argv in argvs(d.service(INIT))
        if argv[:3] == ["airflow", "pools", "set"] and len(argv) > 4
    }
    if pool not in created:
        return [f"{INIT} does not create pool {pool}"]
    return [] if created[pool] == "1" else [f"pool {pool} has {created[pool]} slots, not 1"]


def check_code_in_image(d: Deployment) -> list[str]:
    """Airflow's folders are where the image puts dags/ and plugins/, and spark_jobs/ is
    where the DAG kit looks for it: beside ``include/``, which only an editable install
    keeps (the kit resolves the path from its own file)."""
    copies = d.copies()
    env = d.env(DRIVER)
    problems = [
        f"{key} is {env.get(key)}, the image has {folder}/ at {copies.get(folder)}"
        for key, folder in [
            ("AIRFLOW__CORE__DAGS_FOLDER", "dags"),
            ("AIRFLOW__CORE__PLUGINS_FOLDER", "plugins"),
        ]
        if env.get(key) != str(copies.get(folder))
    ]
    if not any(ins == "RUN" and "--no-deps -e ." in args for ins, args in d.dockerfile):
        return [*problems, "the Dockerfile does not `pip install --no-deps -e .` the project"]
    if "include" not in copies:
        return [*problems, "the Dockerfile does not copy include/"]
    # The kit's path relative to the source tree, moved to where the image has include/.
    in_image = (
        copies["include"].parent / Path(d.airflow()["spark_jobs"]).relative_to(REPO).as_posix()
    )
    if copies.get("spark_jobs") != in_image:
        problems.append(
            f"the DAG kit looks for {in_image}, the image has {copies.get('spark_jobs')}"
        )
    return problems


def check_databases(d: Deployment) -> list[str]:
    """Both Airflow engines and the catalog use a driver requirements.txt installs; the
    async URL is explicit (else Airflow derives ``postgresql+asyncpg``)."""
    env = d.env(API_SERVER)
    urls = {
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": env.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": env.get(
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"
        ),
        "REWIND_CATALOG_URL": config_of(d.env(DRIVER)).catalog_url,
    }
    problems = []
    for key, url in urls.items():
        if url is None:
            problems.append(f"{key} is not set")
            continue
        try:
            make_url(url).get_dialect().import_dbapi()
        except ImportError as error:
            problems.append(f"{key}: {make_url(url).drivername} is not installed ({error})")
    return problems


def check_database_accounts(d: Deployment) -> list[str]:
    """deploy/postgres-init.sql runs in the postgres service and creates, for each URL,
    its login with that password and its database owned by that login."""
    mounted = {
        target: source
        for target, source in d.mounts(POSTGRES).items()
        if target.startswith("/docker-entrypoint-initdb.d/")
    }
    problems = []
    if "./deploy/postgres-init.sql" not in mounted.values():
        problems.append(f"{POSTGRES} does not run deploy/postgres-init.sql at initialisation")
    logins = dict(
        re.findall(r"CREATE (?:USER|ROLE) (\w+) WITH (?:LOGIN )?PASSWORD '([^']*)'", d.init_sql)
    )
    owners = dict(re.findall(r"CREATE DATABASE (\w+) OWNER (\w+)", d.init_sql))
    for url in (
        d.env(API_SERVER).get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", ""),
        config_of(d.env(DRIVER)).catalog_url,
    ):
        parsed = make_url(url)
        if (parsed.host, parsed.port) != (POSTGRES, 5432):
            problems.append(f"{parsed!r} does not reach {POSTGRES}:5432")
        if logins.get(parsed.username or "") != parsed.password:
            problems.append(
                f"the init script creates no login {parsed.username} with that password"
            )
        if owners.get(parsed.database or "") != parsed.username:
            problems.append(
                f"the init script creates no database {parsed.database} owned by {parsed.username}"
            )
    return problems


@functools.cache
def delta_package() -> str:
    """The Maven package delta-spark's own pip helper picks for the installed pyspark."""
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    return configure_spark_with_delta_pip(SparkSession.Builder())._options["spark.jars.packages"]


def check_image_build(d: Deployment) -> list[str]:
    """The image installs requirements.txt, and fetches the Delta jars pinned in
    deploy/delta/pom.xml: the delta-spark version pinned there, built for the pinned
    pyspark, with the same Maven call as `make setup`."""
    import pyspark

    runs = [args for ins, args in d.dockerfile if ins == "RUN"]
    problems = []
    if not any(re.search(r"pip install (\S+ )*-r requirements\.txt", run) for run in runs):
        problems.append("the Dockerfile does not `pip install -r requirements.txt`")
    if pyspark.__version__ != d.pins.get("pyspark"):
        problems.append(f"the venv has pyspark {pyspark.__version__}; run `make setup`")
    pom = dict(re.findall(r"<(delta\.version|delta\.artifact)>([^<]*)<", d.delta_pom))
    if pom.get("delta.version") != d.pins.get("delta-spark"):
        problems.append(f"the pom pins Delta {pom.get('delta.version')}, not the delta-spark pin")
    fetched = f"io.delta:{pom.get('delta.artifact')}:{d.pins.get('delta-spark')}"
    if fetched != delta_package():
        problems.append(f"the pom fetches {fetched}; delta-spark names {delta_package()}")
    makefile = (REPO / "Makefile").read_text()
    copied = set(d.copies())
    for needed in ("deploy/jars.sh", "deploy/delta/pom.xml", "deploy/s3/pom.xml"):
        if needed not in copied:
            problems.append(f"the image does not copy {needed}")
    if {"deploy/logstore/pom.xml", "deploy/logstore/src"} - copied:
        problems.append("the image does not copy the LogStore's sources (deploy/logstore/)")
    if not any("deploy/jars.sh /jars" in run for run in runs) or "deploy/jars.sh" not in makefile:
        problems.append("the image and `make setup` do not fetch the jars the same way")
    if d.env_of_image().get("REWIND_DELTA_JARS") not in {
        a.split()[-1] for i, a in d.dockerfile if i == "COPY" and a.startswith("--from=")
    }:
        problems.append("REWIND_DELTA_JARS does not name where the image puts the jars")
    return problems


def check_build_context(d: Deployment) -> list[str]:
    """.dockerignore (an allowlist) lets every COPY source into the build context."""
    return [
        f".dockerignore keeps {source} out of the build context"
        for source in d.copies()
        if "*" in d.dockerignore and f"!{source}" not in d.dockerignore
    ]


Check = Callable[[Deployment], list[str]]


def check_one_user(d: Deployment) -> list[str]:
    """Every service of the Rewind image runs as the Dockerfile's one non-root user, who
    owns the warehouse and fail-safe directories, made 0700 (SPEC R38)."""
    created = re.search(r"useradd --uid (\d+) --gid (\d+)\b[^&]* (\w+)", _script(d))
    if created is None:
        return ["the Dockerfile creates no user"]
    uid, gid, name = created.groups()
    problems = [] if uid != "0" else ["the image's user is root"]
    users = [arguments for instruction, arguments in d.dockerfile if instruction == "USER"]
    if users[-1:] != [name]:
        problems.append(f"the image does not end as USER {name}: {users}")
    problems += [
        f"{service} runs as {d.service(service).get('user')}, not {uid}:{gid}"
        for service in (*AIRFLOW, MASTER, *WORKERS)
        if str(d.service(service).get("user")) != f"{uid}:{gid}"
    ]
    root = config_of(d.env(DRIVER))
    for path in (root.home, root.failsafe_root):
        if not re.search(rf"chmod 0?700 [^&]*{re.escape(str(path))}\b", _script(d)):
            problems.append(f"the Dockerfile does not make {path} owner-only (0700)")
    return problems


def _script(d: Deployment) -> str:
    return "\n".join(arguments for instruction, arguments in d.dockerfile if instruction == "RUN")


CHECKS: list[Check] = [
    check_compose_schema,
    check_services,
    check_airflow_commands,
    check_airflow_options,
    check_airflow_settings_shared,
    check_rewind_settings,
    check_warehouse,
    check_failsafe,
    check_spark,
    check_object_store,
    check_one_image,
    check_dependencies,
    check_execution_api,
    check_pool,
    check_code_in_image,
    check_databases,
    check_database_accounts,
    check_image_build,
    check_build_context,
    check_one_user,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_deployment_passes(deployment: Deployment, check: Check) -> None:
    assert check(deployment) == []


# --- realistic mistakes, each of which its check must notice ---------------------------

Mutation = Callable[[Deployment], None]


def at(path: str, value: Any = None, *, delete: bool = False) -> Mutation:
    """Set (or delete) ``a/b/0`` in the compose document; a last step ``+`` appends."""

    def mutate(d: Deployment) -> None:
        *parents, last = path.split("/")
        node: Any = d.compose
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if last == "+":
            node.append(value)
        elif delete:
            del node[last]
        else:
            node[int(last) if isinstance(node, list) else last] = value

    return mutate


def remount(volume: str, target: str, services: set[str]) -> Mutation:
    """Mount ``volume`` at ``target`` instead of where it was, on ``services``."""

    def mutate(d: Deployment) -> None:
        for name in services:
            volumes = d.service(name)["volumes"]
            volumes[:] = [
                f"{volume}:{target}" if v.startswith(f"{volume}:") else v for v in volumes
            ]

    return mutate


def setenv(key: str, value: str | None, services: tuple[str, ...] = AIRFLOW) -> Mutation:
    def mutate(d: Deployment) -> None:
        for name in services:
            env = d.service(name)["environment"]
            if value is None:
                del env[key]
            else:
                env[key] = value

    return mutate


def edit(where: str, pattern: str, replacement: str) -> Mutation:
    """Regex-replace in the Dockerfile, .dockerignore, init.sql or a service's script; a
    pattern that no longer matches fails loudly instead of testing nothing."""

    def mutate(d: Deployment) -> None:
        def sub(text: str) -> str:
            changed, count = re.subn(pattern, replacement, text)
            assert count, f"{pattern!r} is not in {where}"
            return changed

        if where == "Dockerfile":
            d.dockerfile = parse_dockerfile(sub("\n".join(" ".join(i) for i in d.dockerfile)))
        elif where == ".dockerignore":
            d.dockerignore = sub("\n".join(d.dockerignore)).splitlines()
        elif where == "init.sql":
            d.init_sql = sub(d.init_sql)
        elif where == "pom.xml":
            d.delta_pom = sub(d.delta_pom)
        else:
            d.service(where)["command"][-1] = sub(d.service(where)["command"][-1])

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(d: Deployment) -> None:
        for mutation in mutations:
            mutation(d)

    return mutate


API, W1, W2 = API_SERVER, *WORKERS


def spark_conn(host: str = "spark://spark-master", port: int = 7077, **extra: str) -> Mutation:
    value = {"conn_type": "spark", "host": host, "port": port, "extra": extra}
    return setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(value))


def database(url: str, key: str = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN") -> Mutation:
    return setenv(key, url)


MISTAKES: dict[Check, dict[str, Mutation]] = {
    check_compose_schema: {
        "misspelt key": both(
            at("services/postgres/health_check", {"test": ["CMD", "true"]}),
            at("services/postgres/healthcheck", delete=True),
        ),
        "unknown condition": at(f"services/{API}/depends_on/{INIT}/condition", "service_done"),
        "port as a number": at(f"services/{API}/ports", 8080),
    },
    check_services: {
        "no triggerer": at("services/airflow-triggerer", delete=True),
        "CeleryExecutor": setenv("AIRFLOW__CORE__EXECUTOR", "CeleryExecutor"),
        "init only checks": edit(INIT, r"airflow db migrate", "airflow db check"),
        "two masters": at(f"services/{W2}/command/1", "org.apache.spark.deploy.master.Master"),
    },
    check_airflow_commands: {
        "Airflow 2 webserver": at(f"services/{API}/command", ["airflow", "webserver"]),
        "airflow db init": edit(INIT, r"airflow db migrate", "airflow db init"),
        "job type misspelt": at(
            "services/airflow-triggerer/healthcheck/test",
            ["CMD", "airflow", "jobs", "check", "--job-type", "Triggerer"],
        ),
    },
    check_airflow_options: {
        "conn in [core]": setenv("AIRFLOW__CORE__SQL_ALCHEMY_CONN", "sqlite:////tmp/a.db"),
        "[webserver] is gone": setenv("AIRFLOW__WEBSERVER__EXPOSE_CONFIG", "true"),
    },
    check_airflow_settings_shared: {
        "own JWT secret": setenv("AIRFLOW__API_AUTH__JWT_SECRET", "x" * 40, (API,)),
        "no connection on the driver": setenv("AIRFLOW_CONN_SPARK_DEFAULT", None, (DRIVER,)),
    },
    check_rewind_settings: {
        "misspelt catalog": setenv("REWIND_CATALOG_URI", "sqlite:////tmp/c.db", (DRIVER,)),
        "frozen clock": setenv("REWIND_NOW", "2025-01-01T00:00:00+00:00"),
    },
    check_warehouse: {
        "worker elsewhere": remount("warehouse", "/warehouse", {W1}),
        "api-server without": at(f"services/{API}/volumes", ["airflow-logs:/opt/airflow/logs"]),
        "other home": setenv("REWIND_HOME", "/data/home", (API,)),
    },
    check_failsafe: {
        "on the api-server": at(f"services/{API}/volumes/+", "failsafe:/data/failsafe"),
        "missing on a worker": at(f"services/{W2}/volumes", ["warehouse:/data/rewind"]),
        "other path on a worker": remount("failsafe", "/failsafe", {W1}),
        "inside the home": both(
            setenv("REWIND_FAILSAFE_URI", "/data/rewind/failsafe", (DRIVER,)),
            remount("failsafe", "/data/rewind/failsafe", FAILSAFE_SERVICES),
        ),
        "root set on the api-server": setenv("REWIND_FAILSAFE_URI", "/data/failsafe", (API,)),
    },
    check_spark: {
        "worker on another port": at(f"services/{W1}/command/-1", "spark://spark-master:7078"),
        "jobs on local[2]": setenv("REWIND_SPARK_MASTER", "local[2]", (DRIVER,)),
        "connection to localhost": spark_conn(host="spark://localhost"),
        "connection to the UI port": spark_conn(port=8080),
        "cluster deploy mode": spark_conn(**{"deploy-mode": "cluster"}),
        "no connection": setenv("AIRFLOW_CONN_SPARK_DEFAULT", None),
    },
    check_object_store: {
        "no server": at(f"services/{S3}", delete=True),
        "telemetry on": at(f"services/{S3}/command", ["mini", "-dir=/data"]),
        "published on every interface": at(f"services/{S3}/ports", ["8333:8333"]),
        "a committed secret": setenv("AWS_SECRET_ACCESS_KEY", "demo-secret", (S3,)),
        "workers elsewhere": setenv("AWS_ENDPOINT_URL", "http://minio:9000", (W1,)),
        "keys beside the connection": setenv("AWS_ACCESS_KEY_ID", "AKIDDEMO", (DRIVER,)),
        "connection of another type": setenv(
            "AIRFLOW_CONN_AWS_DEFAULT", json.dumps({"conn_type": "generic"})
        ),
    },
    check_one_image: {
        "stock Spark image": both(
            at(f"services/{W1}/image", "apache/spark:4.0.0"),
            at(f"services/{W1}/build", delete=True),
        ),
        "other python": at(f"services/{W2}/environment/PYSPARK_PYTHON", "/usr/bin/python3"),
    },
    check_dependencies: {
        "unknown service": at(f"services/{DRIVER}/depends_on/airflow-webserver", {}),
        "postgres without healthcheck": at("services/postgres/healthcheck", delete=True),
        "api-server before init": at(
            f"services/{API}/depends_on/{INIT}/condition", "service_started"
        ),
        "init healthy": at(f"services/{DRIVER}/depends_on/{INIT}/condition", "service_healthy"),
    },
    check_execution_api: {
        "localhost": setenv(
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL", "http://localhost:8080/execution/"
        ),
        "UI not published": at(f"services/{API}/ports", ["9090:9090"]),
    },
    check_pool: {
        "two slots": edit(INIT, r"rewind_lifecycle 1", "rewind_lifecycle 2"),
        "misspelt": edit(INIT, r"rewind_lifecycle", "rewind-lifecycle"),
    },
    check_code_in_image: {
        "Airflow's dags folder": setenv("AIRFLOW__CORE__DAGS_FOLDER", "/opt/airflow/dags"),
        "plugins not copied": edit("Dockerfile", r"COPY plugins \./plugins\n", ""),
        "non-editable install": edit("Dockerfile", r"--no-deps -e \.", "--no-deps ."),
    },
    check_databases: {
        "psycopg2": database("postgresql+psycopg2://airflow:airflow@postgres:5432/airflow"),
        "async URL derived": setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC", None),
        "asyncpg": database(
            "postgresql+asyncpg://airflow:airflow@postgres:5432/airflow",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC",
        ),
    },
    check_database_accounts: {
        "catalog database renamed": database(
            "postgresql+psycopg://rewind:rewind@postgres:5432/rewind_catalog", "REWIND_CATALOG_URL"
        ),
        "password changed in one place": edit("init.sql", r"PASSWORD 'rewind'", "PASSWORD 'x'"),
        "init script not mounted": at("services/postgres/volumes", ["postgres-data:/data"]),
        "localhost": database("postgresql+psycopg://airflow:airflow@localhost:5432/airflow"),
    },
    check_image_build: {
        "requirements not installed": edit("Dockerfile", r"-r requirements\.txt", "airflow"),
        "older Delta": edit("pom.xml", r"<delta.version>[^<]*<", "<delta.version>4.0.0<"),
        "artifact without the Spark suffix": edit(
            "pom.xml", r"<delta.artifact>[^<]*<", "<delta.artifact>delta-spark_2.13<"
        ),
        "jars not fetched by the script": edit("Dockerfile", r"sh /build/deploy/jars\.sh", "sh"),
        "no s3a jars": edit("Dockerfile", r"COPY deploy/s3/pom\.xml \S+\n", ""),
        "no LogStore": edit("Dockerfile", r"COPY deploy/logstore/src \S+\n", ""),
        "jars put elsewhere": edit("Dockerfile", r"/jars /opt/rewind/\.jars", "/jars /opt/jars"),
    },
    check_build_context: {
        "plugins ignored": edit(".dockerignore", r"!plugins\n", ""),
    },
    check_one_user: {
        "a worker as root": at("services/spark-worker-1/user", "0:0"),
        "the api-server as the default user": at("services/airflow-apiserver/user", delete=True),
        "fail-safe left 0755": edit("Dockerfile", r" /data/failsafe\n", "\n"),
        "image ends as root": edit("Dockerfile", r"USER rewind", "USER root"),
    },
}


@pytest.mark.parametrize(
    ("check", "mutation"),
    [
        pytest.param(check, mutation, id=f"{check.__name__}: {name}")
        for check, mistakes in MISTAKES.items()
        for name, mutation in mistakes.items()
    ],
)
def test_check_notices(deployment: Deployment, check: Check, mutation: Mutation) -> None:
    assert check(deployment) == []  # the same deployment before the mistake
    mutation(deployment)
    assert check(deployment)


def test_every_check_has_a_mistake() -> None:
    assert set(MISTAKES) == set(CHECKS)


def compose_config(file: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``docker compose --file file config --quiet``: the plugin, a ``docker-compose`` of v2
    or later, else ``compose-check`` (tools/compose-check, built by ``make test``:
    compose-go, the loader and schema that command runs)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    docker, standalone = shutil.which("docker"), shutil.which("docker-compose", path=path)
    version = _runs([standalone, "version", "--short"]) if standalone else None
    if docker and _runs([docker, "compose", "version"]) is not None:
        command = [docker, "compose", "--file", str(file), "config", "--quiet"]
    elif standalone and re.match(r"v?([2-9]|\d\d)", version or ""):
        command = [standalone, "--file", str(file), "config", "--quiet"]
    else:
        check = shutil.which("compose-check", path=path)
        assert check, "compose-check missing: run `make compose-check`"
        command = [check, str(file)]
    environment = {k: v for k, v in os.environ.items() if k not in S3_KEYS} | env
    return subprocess.run(
        command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=120
    )


def _runs(command: list[str]) -> str | None:
    """The command's output, or None when it fails."""
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def test_compose_cli_accepts_the_file_and_refuses_a_broken_one(tmp_path: Path) -> None:
    keys = dict.fromkeys(S3_KEYS, "set-in-dot-env")
    done = compose_config(COMPOSE, **keys)
    assert done.returncode == 0, done.stderr
    keyless = compose_config(COMPOSE)  # the object store's keys have no default (SPEC R45)
    assert keyless.returncode != 0 and S3_KEYS[0] in keyless.stderr, keyless.stderr
    broken = tmp_path / "docker-compose.yaml"  # beside nothing: no .env, no build context
    broken.write_text(COMPOSE.read_text().replace("\n    image:", "\n    imagez:", 1))
    refused = compose_config(broken, **keys)
    assert refused.returncode != 0 and "imagez" in refused.stderr, refused.stderr
