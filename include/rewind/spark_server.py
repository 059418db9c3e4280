"""A home's long-lived Spark Connect server: interactive statements without a JVM start.

Starting Spark costs seconds; a query on a running Spark costs milliseconds. The
``rewind`` command therefore runs its Spark work on a Spark Connect server (Spark's own
client/server protocol) that it starts on first use and that stops by itself after
``REWIND_SPARK_SERVER_IDLE`` seconds without a statement (default 5 minutes).

One server per home, run as the home's owner (``<home>/server/``, owner-only like the
rest of the home, SPEC R38): it listens on the loopback interface only and refuses any
client without the secret token kept in ``<home>/server/state.json`` (0600). A Spark
Connect server runs whatever it is sent, so whoever could reach it could read every file
its owner can; the token is passed to the JVM through its environment, never on a
command line another local user could list.

A small supervisor process (``python -m rewind.spark_server serve <home> ...``) owns the
JVM: it publishes the endpoint once the server answers, stops the JVM when the home has
been idle long enough or on ``rewind server stop``, and removes the endpoint whenever the
JVM is gone, so a client never waits on a dead port (it starts a new one or reports
``SPARK_UNAVAILABLE``).

A server reaches object stores with the credentials of the environment it started in (its
JVM and executors read the ``AWS_*`` variables there, SPEC R44). It serves only callers
with the same ``AWS_*`` variables: for any other caller (new keys, none at all) it is not
running, and the CLI replaces it with one started in the caller's environment, so a server
never keeps using credentials its caller no longer has (SPEC R45). Credentials read from
files (a profile) are not compared: a changed file reaches a server when it restarts.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from pathlib import Path

from rewind.errors import InvalidValue, SparkUnavailable
from rewind.home import PRIVATE_FILE, private_dir
from rewind.processes import process_runs

# An idle server holds ~0.5-0.7 GB of resident memory (most of it outside the Java heap:
# neither a 512 MB heap cap nor G1 giving its free heap back shrinks it) and saves the next
# call ~10 s of start-up: worth keeping between the calls of a session, not for half an hour
# after it, once per home (README, "Answers in a second"; benchmarks/server_footprint.py).
IDLE_DEFAULT_S = 300
START_TIMEOUT_S = 180
_POLL_S = 0.2
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# The server's Spark session that Rewind's calls share (Endpoint.session): a call made a
# session of its own before, and the server built its state and compiled the query's
# generated code (~0.1-0.4 s of a warm ``SELECT``) again for each. The shared one holds
# no state of a call's: Rewind creates no temporary view and sets no configuration in it
# (a home server's defaults are Rewind's session settings), a call ends by closing its
# channel, never the session. It lives as long as the server (never expired, however long
# a statement goes without a request), and keeps no resolved plan between requests, so
# every query analyses its input again as in a session of its own (a table's files are
# listed when it is read, never remembered from an earlier call).
SHARED_SESSION_CONF = {
    "spark.connect.session.manager.defaultSessionTimeout": "-1",
    "spark.connect.session.planCache.enabled": "false",
}


@dataclass(frozen=True)
class Endpoint:
    """A running server: where it listens and the token it wants."""

    port: int
    token: str
    supervisor: int  # the supervisor's pid; the JVM is its child
    jvm: int
    idle_s: int
    store: str = ""  # which object-store settings it serves: :func:`store_mac`
    session: str = ""  # the Spark session Rewind's calls share (none: each its own)

    @property
    def url(self) -> str:
        return f"sc://localhost:{self.port}/;token={self.token}"  # plaintext on loopback only

    @property
    def session_url(self) -> str:
        """:attr:`url` in the server's shared Spark session (:func:`serve`)."""
        return f"{self.url};session_id={self.session}" if self.session else self.url


def server_dir(home: Path) -> Path:
    return home / "server"


def _state_file(home: Path) -> Path:
    return server_dir(home) / "state.json"


def _used_file(home: Path) -> Path:
    return server_dir(home) / "last_used"


def log_file(home: Path) -> Path:
    return home / "logs" / "spark-server.log"


def _live(home: Path) -> Endpoint | None:
    """The home's server if its supervisor and JVM are alive, else None."""
    try:
        endpoint = Endpoint(**json.loads(_state_file(home).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if process_runs(endpoint.supervisor) and process_runs(endpoint.jvm):
        return endpoint
    return None


def store_mac(token: str) -> str:
    """Which object-store settings a server serves: an HMAC, keyed with the server's token,
    of the caller's ``AWS_*`` variables (a server's JVM and executors read the credentials
    of the environment it started in; SPEC R45: never written, not even in the home)."""
    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))
    return hmac.new(token.encode(), json.dumps(settings).encode(), hashlib.sha256).hexdigest()


def running(home: Path) -> Endpoint | None:
    """The home's server if it runs with this caller's object-store settings and answers,
    else None: a server started with other credentials (or with some, where the caller
    has none) does not serve this caller (SPEC R45), and one whose port no longer answers
    is going away (its JVM stopping, out of memory: the next statement failed on it);
    :func:`start` replaces either."""
    endpoint = _live(home)
    if endpoint is None or not _serves_caller(endpoint) or not _answers(endpoint.port):
        return None
    return endpoint


def _serves_caller(endpoint: Endpoint) -> bool:
    return hmac.compare_digest(endpoint.store, store_mac(endpoint.token))


def touch(home: Path) -> None:
    """A statement ran: the idle clock starts again."""
    with contextlib.suppress(OSError):
        os.utime(_used_file(home))


def hold(home: Path) -> int:
    """A statement is about to use the home's server: a shared lock that the supervisor's
    idle stop waits for (a statement may run longer than the idle time). Give the
    descriptor back to :func:`let_go` when the statement ends; a process that dies lets
    go by itself."""
    private_dir(server_dir(home))
    fd = os.open(server_dir(home) / "clients", os.O_CREAT | os.O_RDWR, PRIVATE_FILE)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def let_go(home: Path, fd: int) -> None:
    touch(home)
    os.close(fd)


def _unused(home: Path) -> int | None:
    """The clients lock, exclusively, if no statement holds the server; else None."""
    fd = os.open(server_dir(home) / "clients", os.O_CREAT | os.O_RDWR, PRIVATE_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    """One start or stop at a time per home (two CLI calls at once start one server)."""
    lock = server_dir(home) / "lock"
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, PRIVATE_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def idle_seconds() -> int:
    text = os.environ.get("REWIND_SPARK_SERVER_IDLE") or str(IDLE_DEFAULT_S)
    try:
        idle = int(text)
    except ValueError:
        idle = -1
    if idle < 1:
        raise InvalidValue(
            f"REWIND_SPARK_SERVER_IDLE must be a number of seconds >= 1, not {text!r}."
        )
    return idle


def start(
    home: Path, master: str, waiting: Callable[[], AbstractContextManager[None]] | None = None
) -> Endpoint:
    """The home's server, started if none runs; while this call waits for one to start,
    it is inside ``waiting()`` (the CLI's spinner).

    Raises:
        SparkUnavailable: the server did not come up (its log says why).
    """
    private_dir(server_dir(home))
    private_dir(log_file(home).parent)
    with _locked(home):
        endpoint = _live(home)
        if endpoint is not None and running(home) == endpoint:
            return endpoint
        if endpoint is not None:  # it serves other object-store settings, or is going away
            _terminate(endpoint)
        with waiting() if waiting is not None else contextlib.nullcontext():
            return _spawn(home, master)


def _spawn(home: Path, master: str) -> Endpoint:
    """Start the supervisor and wait until the server answers or the supervisor exits."""
    _state_file(home).unlink(missing_ok=True)
    idle = idle_seconds()
    used = _used_file(home)
    used.touch(mode=PRIVATE_FILE)
    os.utime(used)
    command = [sys.executable, "-m", "rewind.spark_server", "serve", str(home), master]
    with open(log_file(home), "ab") as log:
        os.chmod(log_file(home), PRIVATE_FILE)
        supervisor = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # outlives the CLI call that started it
            env={**os.environ, "REWIND_SPARK_SERVER_IDLE": str(idle)},
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        endpoint = running(home)
        if endpoint is not None:
            return endpoint
        if supervisor.poll() is not None:
            break
        time.sleep(_POLL_S)
    with contextlib.suppress(ProcessLookupError):
        supervisor.terminate()
    raise SparkUnavailable(
        f"The Spark Connect server of {home} did not start; see {log_file(home)}."
    )


def stop(home: Path) -> bool:
    """Stop the home's server; False if none ran."""
    if not server_dir(home).is_dir():
        return False
    with _locked(home):
        endpoint = _live(home)
        if endpoint is None:
            _state_file(home).unlink(missing_ok=True)
            return False
        _terminate(endpoint)
        return True


def retire(home: Path, endpoint: Endpoint) -> None:
    """Stop ``endpoint``, a server a statement found unusable (its Spark stopped, out of
    memory, or it stopped answering), if it is still the home's: the next statement
    starts a new one instead of meeting this one while it dies."""
    with _locked(home):
        if _live(home) == endpoint:
            _terminate(endpoint)


def _terminate(endpoint: Endpoint) -> None:
    """Stop a server's supervisor (it stops the JVM) and wait for it, a minute at most."""
    os.kill(endpoint.supervisor, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while process_runs(endpoint.supervisor) and time.monotonic() < deadline:
        time.sleep(_POLL_S)


def _server_command(master: str, port: int) -> list[str]:
    """spark-submit of the Spark Connect server, with Rewind's settings and Delta Lake."""
    import pyspark

    from rewind.spark import SESSION_CONF, driver_conf, submit_options

    conf = {
        **SESSION_CONF,
        **driver_conf(master),  # with a local master, the driver's ports are loopback only
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        **SHARED_SESSION_CONF,
    }
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    command = [str(spark_submit), "--class", CONNECT_CLASS, "--master", master]
    command += ["--name", "rewind-connect", *submit_options()]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    return [*command, "spark-internal"]


def serve(home: Path, master: str) -> int:
    """The supervisor: run the JVM, publish its endpoint, stop it when idle or asked.

    The endpoint names a Spark session (a random id) that Rewind's calls share
    (:attr:`Endpoint.session_url`), one after the other or side by side: a new session
    per call made the server build a session's state and compile the query's generated
    code again at every call (:data:`SHARED_SESSION_CONF`)."""
    import pyspark

    # No umask of its own: the data files the server writes (into an external table too)
    # get the modes the user's own Spark would give them; Rewind's own files are 0600.
    idle = idle_seconds()
    port, token, session = _free_port(), secrets.token_urlsafe(32), str(uuid.uuid4())
    rewind_code = str(Path(__file__).resolve().parents[1])
    env = {
        **os.environ,
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "PYSPARK_PYTHON": sys.executable,
        # The executors' Python workers run Rewind's file operations (lifecycle).
        "PYTHONPATH": os.pathsep.join(filter(None, [rewind_code, os.environ.get("PYTHONPATH")])),
        "SPARK_CONNECT_AUTHENTICATE_TOKEN": token,
    }
    jvm = subprocess.Popen(_server_command(master, port), cwd=server_dir(home), env=env)
    stopping = False

    def on_term(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    published = False
    try:
        while not stopping:
            with contextlib.suppress(subprocess.TimeoutExpired):
                jvm.wait(_POLL_S if not published else 1.0)  # reaps a JVM that died
                print(f"rewind: the server exited ({jvm.returncode})", flush=True)
                break
            if not published and _answers(port):
                touch(home)  # the idle clock starts when the server answers
                endpoint = Endpoint(
                    port, token, os.getpid(), jvm.pid, idle, store_mac(token), session
                )
                _publish(home, endpoint)
                published = True
            # An idle server stops, unless a statement holds it; the clients lock stays
            # taken (until this process exits) while the JVM stops.
            idle_for = time.time() - _used_file(home).stat().st_mtime
            if published and idle_for > idle and _unused(home) is not None:
                print(f"rewind: idle for {idle} s, stopping the server", flush=True)
                break
    finally:
        _state_file(home).unlink(missing_ok=True)
        if jvm.poll() is None:
            jvm.terminate()
            try:
                jvm.wait(30)
            except subprocess.TimeoutExpired:
                jvm.kill()
    return 0


def _answers(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _publish(home: Path, endpoint: Endpoint) -> None:
    """Write the endpoint owner-only, atomically (a reader sees all of it or nothing)."""
    partial = _state_file(home).with_suffix(".partial")
    fd = os.open(partial, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(fd, "w") as out:
        json.dump(asdict(endpoint), out)
    partial.replace(_state_file(home))


if __name__ == "__main__":  # the supervisor, started by start()
    _, verb, home_arg, master_arg = sys.argv
    sys.exit(serve(Path(home_arg), master_arg) if verb == "serve" else 2)
