"""The resident Rewind process (issue 26): the ``rewind`` command hands its call to it.

Real processes throughout: the installed command, a resident process it started, its log
(``<dir>/<key>.log``: which process served which command). Each test's calls use a
runtime directory of their own (``XDG_RUNTIME_DIR``), so their resident process is theirs
alone; it is stopped at the end. Calls that need no Spark: the properties here are the
hand-over's, and the CLI's other tests run their statements through it as well.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rewind import launcher, resident
from rewind.processes import process_runs

pytestmark = pytest.mark.cli

REWIND = str(Path(sys.executable).parent / "rewind")
START_S = 120  # a resident process imports for a few seconds; a loaded machine is slower


@dataclass
class Resident:
    """Calls of the ``rewind`` command with a runtime directory of their own."""

    runtime: Path
    home: Path
    package: Path | None = None  # a copy of the rewind package the calls import instead

    @property
    def env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
        imports = {} if self.package is None else {"PYTHONPATH": str(self.package.parent)}
        return base | {"XDG_RUNTIME_DIR": str(self.runtime)} | imports

    @property
    def socket(self) -> Path:
        if self.package is None:
            key = launcher.server_key()
        else:  # the copy's key, as its callers compute it
            code = "from rewind import launcher; print(launcher.server_key())"
            key = subprocess.run(
                [sys.executable, "-P", "-c", code],
                env=self.env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        return self.runtime / f"rewind-cli-{os.getuid()}" / f"{key}.sock"

    @property
    def log(self) -> str:
        log = self.socket.with_suffix(".log")
        return log.read_text() if log.exists() else ""

    def popen(self, *args: str, env: dict[str, str] | None = None, **kw: Any) -> Any:
        return subprocess.Popen(
            [REWIND, *args],
            stdout=kw.pop("stdout", subprocess.PIPE),
            stderr=subprocess.PIPE,
            text=True,
            env=self.env | (env or {}),
            **kw,
        )

    def run(self, *args: str, env: dict[str, str] | None = None, **kw: Any) -> Call:
        proc = self.popen(*args, env=env, **kw)
        out, err = proc.communicate(timeout=300)
        return Call(proc.pid, proc.returncode, out, err)

    def serving(self) -> int:
        """The pid of the resident process serving this directory (the socket's peer),
        once it serves: the first call starts it and runs in its own process meanwhile."""
        path = self.socket  # computed once: a copied package's key is a subprocess's answer
        if resident.serving(path) is None:
            self.run("--help")
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            pid = resident.serving(path)
            if pid is not None:
                assert f"pid {pid} serving" in self.log
                return pid
            time.sleep(0.1)
        raise AssertionError(f"no resident process serves {path}:\n{self.log}")

    def served(self, call: Call) -> int:
        """The pid of the forked process that ran ``call``, as the server's log says."""
        (child,) = re.findall(rf"served pid {call.pid} in pid (\d+)", self.log)
        return int(child)


@dataclass
class Call:
    pid: int
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def calls(tmp_path: Path) -> Iterator[Resident]:
    """A runtime directory of the test's own, with a short path: a socket's name has 107
    bytes at most, fewer than a test's temporary directory may take."""
    runtime = Path(tempfile.mkdtemp(prefix="rewind-test-"))
    calls = Resident(runtime, tmp_path / "home")
    yield calls
    for path in runtime.glob("rewind-cli-*/*.sock"):
        resident.stop(path)
    shutil.rmtree(runtime)


def gone(pid: int) -> bool:
    """Whether ``pid`` ends (waits a minute at most)."""
    deadline = time.monotonic() + 60
    while process_runs(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_runs(pid)


def without_ids(text: str) -> Any:
    return [{k: v for k, v in r.items() if k != "query_id"} for r in json.loads(text)]


def test_the_second_call_is_served_by_the_resident_process(calls: Resident) -> None:
    first = calls.run("--home", str(calls.home), "sql", "CREATE DATABASE d")
    assert first.returncode == 0, first.stderr
    assert f"served pid {first.pid} " not in calls.log  # ran in its own process
    server = calls.serving()
    second = calls.run("--home", str(calls.home), "sql", "--format", "json", "SHOW DATABASES")
    assert second.returncode == 0, second.stderr
    assert [row[1] for row in json.loads(second.stdout)[0]["rows"]] == ["D"]
    child = calls.served(second)
    assert child not in (server, second.pid)
    assert process_runs(server)  # it serves on; the child that ran the call is gone
    assert gone(child)


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "--format", "json", "CREATE DATABASE d; SHOW DATABASES"],  # success
        ["sql", "USE nowhere"],  # a RewindError: error: <CODE>: ... (SPEC R39)
        ["sql", "CREATE DATABASE d; CREATE DATABASE d"],  # the first result, then the error
        ["restore"],  # a usage error (argparse, exit 2)
        ["--help"],
        ["spark-options"],
    ],
    ids=["success", "rewind-error", "result-then-error", "usage", "help", "spark-options"],
)
def test_the_resident_process_answers_as_the_command_in_process(
    calls: Resident, tmp_path: Path, args: list[str]
) -> None:
    calls.serving()
    now = ["--now", "2026-03-01T00:00:00+00:00"]
    served = calls.run("--home", str(tmp_path / "served"), *now, *args)
    calls.served(served)
    off = {"REWIND_CLI_SERVER": "off"}
    alone = calls.run("--home", str(tmp_path / "alone"), *now, *args, env=off)
    assert f"served pid {alone.pid} " not in calls.log
    assert served.returncode == alone.returncode
    assert served.stderr == alone.stderr
    if args[-1].endswith("SHOW DATABASES"):
        assert without_ids(served.stdout) == without_ids(alone.stdout)
    else:
        assert re.sub(r"query id \S+", "", served.stdout) == re.sub(
            r"query id \S+", "", alone.stdout
        )


def test_each_call_has_its_callers_environment_and_directory(
    calls: Resident, tmp_path: Path
) -> None:
    calls.serving()
    for n, (user, region) in enumerate([("ADMIN", "eu-west-1"), ("ghost", "us-east-2")]):
        cwd = tmp_path / f"caller{n}"
        cwd.mkdir()
        now = f"2026-0{n + 1}-01T00:00:00+00:00"
        env = {"REWIND_NOW": now, "AWS_REGION": region, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
        created = calls.run(
            "sql", "--format", "json", "CREATE DATABASE d; SHOW DATABASES", env=env, cwd=cwd
        )
        calls.served(created)
        assert created.returncode == 0, created.stderr
        assert (cwd / ".rewind" / "catalog.db").exists()  # the default home is ./.rewind
        assert json.loads(created.stdout)[1]["rows"][0][0] == now  # created_on
        options = calls.run("spark-options", env=env)
        assert f"spark.hadoop.fs.s3a.endpoint.region={region}" in options.stdout
        as_user = calls.run("sql", "SHOW DATABASES", env={**env, "REWIND_USER": user}, cwd=cwd)
        calls.served(as_user)
        if user == "ghost":
            # REWIND_USER folds as an unquoted name does (SPEC R4)
            assert as_user.stderr == "error: UNKNOWN_USER: User 'GHOST' does not exist.\n"
        else:
            assert as_user.returncode == 0, as_user.stderr


def test_another_users_connection_is_refused(calls: Resident) -> None:
    """SO_PEERCRED: the peer's uid, checked before the call is read (SPEC R37)."""
    mine, theirs = socket.socketpair(socket.AF_UNIX)
    with mine, theirs:
        assert resident.peer(mine) == (os.getpid(), os.getuid())
        assert resident.admits(mine, os.getuid())
        assert not resident.admits(mine, os.getuid() + 1)
    calls.serving()
    directory = calls.socket.parent
    assert (directory.stat().st_mode & 0o777) == 0o700


def test_a_caller_in_another_mount_namespace_runs_its_call_itself(calls: Resident) -> None:
    """A caller behind a private read-only mount (``unshare -m``, as in a container) is
    refused by the resident process, which sees the home writable, and runs the call in its
    own process: the call fails as the caller's system makes it fail."""
    calls.home.mkdir()
    calls.serving()
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    wrapper = ["unshare", "-m", "sh", "-c", script, "sh", str(calls.home)]
    proc = subprocess.run(
        [*wrapper, REWIND, "--home", str(calls.home), "sql", "CREATE DATABASE d"],
        capture_output=True,
        text=True,
        env=calls.env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: STORAGE_ERROR: "), proc.stderr
    assert "Read-only file system" in proc.stderr
    assert "it sees another system" in calls.log
    assert not (calls.home / "catalog.db").exists()
    with subprocess.Popen(["unshare", "-m", "sleep", "30"]) as other:
        try:
            time.sleep(0.5)
            assert not resident.same_system(other.pid)
        finally:
            other.kill()
    assert resident.same_system(os.getpid())


@pytest.mark.parametrize("change", ["open", "symlink"])
def test_a_directory_others_could_enter_is_not_used(
    calls: Resident, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """The socket's directory must be this user's own, 0700, and no symlink (one another
    user planted would lead the socket into a directory of theirs)."""
    directory = calls.runtime / f"rewind-cli-{os.getuid()}"
    if change == "open":
        directory.mkdir(mode=0o755)
    else:
        elsewhere = calls.runtime / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        directory.symlink_to(elsewhere)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(calls.runtime))
    with pytest.raises(PermissionError):
        launcher.private_directory()
    done = calls.run("--home", str(calls.home), "sql", "CREATE DATABASE d")
    assert done.returncode == 0, done.stderr  # in its own process
    assert list(directory.iterdir()) == []  # no socket, no log, no server


def test_a_killed_resident_process_is_replaced(calls: Resident) -> None:
    server = calls.serving()
    os.kill(server, signal.SIGKILL)
    assert gone(server)
    done = calls.run("--home", str(calls.home), "sql", "CREATE DATABASE d")
    assert done.returncode == 0, done.stderr  # in its own process, and it started another
    replaced = calls.serving()
    assert replaced != server
    again = calls.run("--home", str(calls.home), "sql", "SHOW DATABASES")
    assert again.returncode == 0, again.stderr
    calls.served(again)


def test_a_changed_package_gets_a_new_resident_process(calls: Resident, tmp_path: Path) -> None:
    """A newer module: callers name another socket and start a new process; the old one,
    which no caller reaches any more, stops (it looks every CHECK_S seconds). The calls
    import a copy of the package (``PYTHONPATH``), so that touching one of its modules
    changes nothing for the other tests' calls, which import the checkout's."""
    calls.package = tmp_path / "imports" / "rewind"
    shutil.copytree(
        Path(resident.__file__).parent,
        calls.package,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    old_socket = calls.socket
    assert old_socket.name != f"{launcher.server_key()}.sock"  # not the checkout's process
    server = calls.serving()
    module = calls.package / "resident.py"
    newest = max(path.stat().st_mtime_ns for path in calls.package.rglob("*.py"))
    # the newest module of the package by a second (another may be newer than this one)
    os.utime(module, ns=(module.stat().st_atime_ns, newest + 1_000_000_000))
    assert calls.socket != old_socket
    renewed = calls.serving()
    assert renewed != server
    done = calls.run("--home", str(calls.home), "sql", "CREATE DATABASE d")
    assert done.returncode == 0, done.stderr
    assert calls.served(done)
    assert gone(server)
    old_log = old_socket.with_suffix(".log").read_text()
    assert "stopping: its package changed" in old_log


def test_ctrl_c_stops_the_call(calls: Resident) -> None:
    """SIGINT to the command reaches its call: a read from a pipe that never ends stops
    with the CLI's one-line error (SPEC R39) and a non-zero exit."""
    calls.serving()
    reader, writer = os.pipe()
    proc = calls.popen("--home", str(calls.home), "sql", "-f", "/dev/stdin", stdin=reader)
    os.close(reader)
    child = _reading(calls, proc.pid)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    os.close(writer)
    assert proc.returncode == 1
    assert re.fullmatch(r"error: [A-Z_]+: .*\n", err), err
    assert "Traceback" not in err
    assert gone(child)


def test_a_command_that_disappears_takes_its_call_along(calls: Resident) -> None:
    calls.serving()
    reader, writer = os.pipe()
    proc = calls.popen("--home", str(calls.home), "sql", "-f", "/dev/stdin", stdin=reader)
    os.close(reader)
    child = _reading(calls, proc.pid)
    proc.kill()
    proc.communicate(timeout=60)
    os.close(writer)
    assert gone(child)


def _reading(calls: Resident, pid: int) -> int:
    """The forked process running the call of command ``pid``, once that call waits in
    its read of stdin (a pipe that never ends)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.findall(rf"served pid {pid} in pid (\d+)", calls.log)
        if found and "pipe_read" in Path(f"/proc/{found[0]}/wchan").read_text():
            return int(found[0])
        time.sleep(0.05)
    raise AssertionError(f"command {pid} was not served, or is not reading:\n{calls.log}")


def test_off_runs_in_process_and_a_bad_setting_is_an_error(calls: Resident) -> None:
    calls.serving()
    off = calls.run(
        "--home", str(calls.home), "sql", "CREATE DATABASE d", env={"REWIND_CLI_SERVER": "off"}
    )
    assert off.returncode == 0, off.stderr
    assert f"served pid {off.pid} " not in calls.log
    bad = calls.run("spark-options", env={"REWIND_CLI_SERVER": "yes"})
    assert (bad.returncode, bad.stderr) == (
        1,
        "error: INVALID_VALUE: REWIND_CLI_SERVER must be auto or off, not 'yes'.\n",
    )
    idle = calls.run("spark-options", env={"REWIND_CLI_SERVER_IDLE": "0"})
    assert idle.returncode == 1
    assert idle.stderr.startswith("error: INVALID_VALUE: REWIND_CLI_SERVER_IDLE")


def test_the_command_imports_the_standard_library_only() -> None:
    """What every call pays before it hands itself over: no third-party import (beyond
    what the interpreter's start-up imports anyway)."""

    def imported(code: str) -> set[str]:
        report = f"{code}; import sys; print(' '.join(sys.modules))"
        done = subprocess.run([sys.executable, "-c", report], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return {name.split(".")[0] for name in done.stdout.split()}

    added = imported("import rewind.launcher") - imported("pass")
    assert added - set(sys.stdlib_module_names) == {"rewind"}


def test_the_rehearsal_before_the_first_fork_leaves_nothing_behind(tmp_path: Path) -> None:
    """The call the resident process rehearses before serving (``resident._rehearse``)
    succeeds on a scratch home and leaves what a fork may copy: one thread, no file of
    the scratch home open or on disk, the environment as it was (REWIND_* included)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    report = textwrap.dedent(
        """
        import contextlib, json, os
        from rewind import resident
        before = dict(os.environ)
        code = resident._warm()
        fds = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # the listing's own, closed by now
                fds.append(os.readlink(f"/proc/self/fd/{fd}"))
        env = {k: v for k, v in os.environ.items() if k not in resident.ONE_THREAD}
        print(json.dumps({"code": code, "threads": len(os.listdir("/proc/self/task")),
                          "fds": fds, "env": env == before}))
        """
    )
    env = {**os.environ, "TMPDIR": str(scratch), "REWIND_HOME": str(tmp_path / "mine")}
    env["REWIND_WAREHOUSE_URI"] = "s3://nobody-may-reach-this/warehouse"
    done = subprocess.run([sys.executable, "-c", report], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout.splitlines()[-1])
    assert state["code"] == 0
    assert state["threads"] == 1
    assert not [fd for fd in state["fds"] if fd.startswith(str(tmp_path))]
    assert state["env"] is True
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "mine").exists()  # the caller's home is not the scratch one
