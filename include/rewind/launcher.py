"""The ``rewind`` command: hands its call to the resident Rewind process, or runs it here.

Most of a short ``rewind`` call used to be Python importing Rewind, SQLAlchemy, sqlglot
and pyspark's Spark Connect client (~0.9 s of a ~1.3 s DDL call). A resident process
(:mod:`rewind.resident`) imports them once and forks a copy of itself per call; this
module, the command itself, imports the standard library only and hands the call over
an AF_UNIX socket: its stdin, stdout and stderr (the descriptors themselves), argv, the
working directory, the umask and the whole environment. The call then runs
:func:`rewind.cli.main` unchanged, in the caller's directory and environment, writing
to the caller's terminal or pipes; the command exits with the call's exit code.

- One resident process per OS user and installation: its socket is named by a hash of
  the interpreter, the package's path, its newest ``.py`` file's mtime and the variables
  that shape an interpreter's start-up (:data:`STARTUP_VARS`), so an upgraded checkout
  or another locale never talks to a server that imported other code.
- Its socket lives in an owner-only directory (0700, checked: owned by this user, not a
  symlink) under ``$XDG_RUNTIME_DIR`` or the temp directory, and the process serves only
  its own user (the peer's uid, SO_PEERCRED): it runs statements with its user's file
  rights and credentials, so nobody else may hand it a call (SPEC R37).
- None runs: this call starts one, detached, and runs in this process meanwhile (no
  waiting). It stops after ``REWIND_CLI_SERVER_IDLE`` seconds without a call.
- Ctrl-C (SIGINT), SIGTERM and SIGHUP to this command are passed to the call; a command
  that disappears takes its call with it.
- The server drops a call before running it (it stops, or was killed): the call runs in
  this process. It dies while running one: ``error: CLI_SERVER_LOST: ...`` (SPEC R39),
  as the statement may or may not have run.
- ``REWIND_CLI_SERVER=off``: every call runs in this process.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import socket
import stat
import struct
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

MODE_ENV = "REWIND_CLI_SERVER"
IDLE_ENV = "REWIND_CLI_SERVER_IDLE"
# An idle resident process holds ~0.2 GB (README, "Answers in a second") and saves every
# call ~1 s; a working session's calls come minutes apart, a day's sessions hours apart.
IDLE_DEFAULT_S = 900
# What Python reads once, as it starts (the encoding of stdout, sys.path, hashing,
# warnings): a resident process serves only callers whose values it started with.
STARTUP_VARS = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "LC_ALL",
    "LC_CTYPE",
    "LANG",
)
# Read by a Rewind module when it is imported (the crash tests' hook, rewind.faults, which
# also takes the caller's process group): a call with one set runs in process.
IMPORT_TIME_VARS = ("REWIND_FAULT",)
PACKAGE = Path(__file__).resolve().parent
# The protocol: the caller sends a 4-byte length with its three descriptors, then that
# many bytes of JSON; the server answers ACCEPTED once it has taken them, the caller GO
# (or, after ACCEPT_TIMEOUT_S without an answer, closes the connection and runs the call
# itself: it never runs twice), and the server EXITED and the exit code once the call
# ends. Meanwhile the caller may send a byte: a signal number for the call.
ACCEPTED = b"A"
GO = b"G"
ACCEPT_TIMEOUT_S = 10.0  # a fork and a read: milliseconds, unless the server is stuck
EXITED = b"X"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
LENGTH = struct.Struct("!I")
SOCKET_NAME_MAX = 108  # sun_path, with its terminating NUL (Linux)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``rewind`` command (``pyproject.toml``'s entry point)."""
    args = list(sys.argv[1:] if argv is None else argv)
    mode = os.environ.get(MODE_ENV) or "auto"
    try:
        if mode not in ("auto", "off"):
            raise ValueError(f"{MODE_ENV} must be auto or off, not {mode!r}.")
        idle = idle_seconds()
    except ValueError as exc:
        print(f"error: INVALID_VALUE: {exc}", file=sys.stderr)
        return 1
    shared = hasattr(socket, "SO_PEERCRED")  # Linux: who calls can be checked
    if mode == "off" or not shared or any(os.environ.get(n) for n in IMPORT_TIME_VARS):
        return in_process(args)
    try:
        path = socket_path()
    except OSError:  # no private directory for the socket: nothing to share
        return in_process(args)
    code = _served(path, args)
    if code is not None:
        return code
    if not path.with_suffix(".off").exists():
        _start(path, idle)
    return in_process(args)


def in_process(args: list[str]) -> int:
    from rewind.cli import main as cli_main

    return cli_main(args)


def idle_seconds() -> int:
    """``REWIND_CLI_SERVER_IDLE``, seconds >= 1 (ValueError otherwise)."""
    text = os.environ.get(IDLE_ENV) or str(IDLE_DEFAULT_S)
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{IDLE_ENV} must be a number of seconds >= 1, not {text!r}.")
    return int(text)


def private_directory() -> Path:
    """This user's directory of resident-process sockets, owner-only (0700).

    Raises:
        OSError: it is not a directory of this user's, or others may enter it.
    """
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    directory = Path(base) / f"rewind-cli-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)
    found = os.lstat(directory)  # a symlink planted by another user is not followed
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        raise PermissionError(f"{directory} is not a directory of this user's")
    if stat.S_IMODE(found.st_mode) & 0o077:
        raise PermissionError(f"{directory} is open to other users")
    return directory


def server_key() -> str:
    """Which resident process serves this caller: see the module's docstring."""
    newest = max(
        entry.stat().st_mtime_ns for entry in _python_files(PACKAGE)
    )  # a changed, added or replaced module
    startup = [os.environ.get(name) for name in STARTUP_VARS]
    interpreter = [os.path.realpath(sys.executable), sys.prefix]  # python, python3: one
    text = json.dumps([interpreter, str(PACKAGE), newest, startup])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _python_files(directory: Path) -> list[os.DirEntry[str]]:
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                found += _python_files(Path(entry.path))
            elif entry.name.endswith(".py"):
                found.append(entry)
    return found


def socket_path() -> Path:
    """The resident process's socket for this caller.

    Raises:
        OSError: no private directory, or its path is too long for a socket's name.
    """
    path = private_directory() / f"{server_key()}.sock"
    if len(os.fsencode(path)) >= SOCKET_NAME_MAX:
        raise OSError(errno.ENAMETOOLONG, "too long for an AF_UNIX socket", str(path))
    return path


def startup_env(idle: int) -> dict[str, str]:
    """A resident process's own environment: what shapes its start-up, never a caller's
    credentials (each call gets its caller's environment, SPEC R45)."""
    keep = ("PATH", "HOME", "XDG_RUNTIME_DIR", "TMPDIR", *STARTUP_VARS)
    env = {name: os.environ[name] for name in keep if name in os.environ}
    return {**env, IDLE_ENV: str(idle)}


def _start(path: Path, idle: int) -> None:
    """Start the resident process for ``path``, detached (it outlives this call)."""
    import subprocess

    # -P: no current directory on its sys.path (a caller's directory could shadow a module).
    subprocess.Popen(
        [sys.executable, "-P", "-m", "rewind.resident", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=startup_env(idle),
        start_new_session=True,
    )


def _served(path: Path, args: list[str]) -> int | None:
    """The exit code of the call as the resident process ran it; None: it did not take
    the call (none runs, or it dropped the call before running it)."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with client:
        try:
            client.connect(str(path))
            request = json.dumps(
                {"argv": args, "cwd": os.getcwd(), "env": dict(os.environ), "umask": _umask()}
            ).encode()
            socket.send_fds(client, [LENGTH.pack(len(request))], [0, 1, 2])
            client.sendall(request)
            client.settimeout(ACCEPT_TIMEOUT_S)  # a stopped or stuck server: not waited on
            if _receive(client, 1) != ACCEPTED:
                return None
            client.settimeout(None)
            client.sendall(GO)  # from here on the call is the server's
        except OSError:  # timeouts included
            return None
        return _outcome(client)


def _outcome(client: socket.socket) -> int:
    """Wait for the call's exit code, passing it the signals this command gets."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):  # the call ended meanwhile
            client.send(bytes([signum]))

    for signum in FORWARDED:
        signal.signal(signum, forward)
    try:
        reply = _receive(client, 2)
    except OSError:
        reply = b""
    if len(reply) == 2 and reply[:1] == EXITED:
        return reply[1]
    sys.stdout.flush()
    print(
        "error: CLI_SERVER_LOST: the resident rewind process ended during the call; "
        "the statement may or may not have run.",
        file=sys.stderr,
    )
    return 1


def _receive(sock: socket.socket, size: int) -> bytes:
    """``size`` bytes, or fewer if the peer closed the connection."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask
