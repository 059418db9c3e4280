"""The resident Rewind process: the ``rewind`` command's calls, without Python's imports.

``python -P -m rewind.resident <socket>``, started by :mod:`rewind.launcher` (which
describes the protocol, the socket's name and directory). It imports what a call needs
once (:data:`WARM`: the CLI, the catalog's models, the SQL front, pyspark's Spark
Connect client with pandas and Arrow), then forks a copy of itself per call, which runs
:func:`rewind.cli.main` in its caller's directory, environment and umask, on its
caller's stdin, stdout and stderr.

Fork-safety: the parent opens no gRPC channel, no Spark session, no catalog connection
and no file of a home, and runs one thread only, checked after the imports (a fork copies
the calling thread alone; a lock another thread held would stay locked in the child):
OpenBLAS and the two jemallocs (pyarrow's, delta-rs') start without their helper
threads. Its objects are frozen out of the garbage collector's reach, so a child neither
scans them nor touches (copies) their pages. It holds no state of any home: each call
opens its catalog and its Spark Connect client itself (in the home server's shared
session, rewind.spark_server), so ``rewind server stop`` (a home's Spark server) leaves
nothing stale here.

Only its own user's calls run: a peer with another uid (SO_PEERCRED) is refused and
logged. So is a peer that sees another system than this process does (another mount,
network, user, PID, IPC or UTS namespace, or another root directory: a container, a
private read-only mount, a chroot): a call runs with the files, network and limits of the
one who made it, so such a caller runs it in its own process.

It stops after ``REWIND_CLI_SERVER_IDLE`` seconds without a call, and within ``CHECK_S``
once no caller can reach it (its package changed, so callers compute another socket name;
its socket was removed); calls running then finish (they are processes of their own).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rewind.launcher import (
    ACCEPTED,
    EXITED,
    FORWARDED,
    GO,
    LENGTH,
    idle_seconds,
    server_key,
)
from rewind.processes import process_runs

# The modules a call imports on its way (the statements that run on Spark Connect, the
# catalog, the errors); what a rare command needs on top is imported by its call. The
# lifecycle's (rewind.runner, and Great Expectations for its step 6) are here too: GX's
# imports (scipy.stats, altair, pydantic models) were 1.5-4 s of a 2-6 s no-change
# ``rewind lifecycle run``, whose own work is ~0.5 s; they add ~140 MB to this process.
WARM = (
    "rewind.cli",
    "rewind.connection",
    "rewind.spark_server",
    "pyspark.sql.connect.session",
    "pyspark.sql.connect.client.retries",
    "pyspark.sql.connect.dataframe",
    "pyspark.sql.connect.functions",
    "pyspark.sql.connect.plan",
    "pyspark.sql.pandas.types",
    "pyspark.logger",
    "sqlglot.dialects.snowflake",
    "sqlglot.dialects.bigquery",
    "sqlglot.dialects.spark",
    "rewind.audit.views",
    "rewind.lifecycle.views",
    "rewind.storage.arrow_read",
    "grpc._channel",
    "pyarrow.fs",
    "sqlite3",
    "rich.console",  # the table format
    "rich.table",
    "rewind.runner",  # rewind lifecycle run
    "great_expectations",  # its step 6 (rewind.quality.expectations imports it on use)
    "pyarrow.dataset",  # its system tables' reads (rewind.storage.arrow_read)
)
# Libraries that start helper threads when loaded, unless told not to.
ONE_THREAD = {
    "OPENBLAS_NUM_THREADS": "1",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "_RJEM_MALLOC_CONF": "background_thread:false",
}
PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid
CHECK_S = 30  # how often an idle process looks whether it should stop


def peer(conn: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of ``conn`` (an AF_UNIX socket)."""
    pid, uid, _gid = PEER.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER.size))
    return pid, uid


def admits(conn: socket.socket, uid: int) -> bool:
    """Whether ``conn``'s peer runs as ``uid`` (the server's own user)."""
    return peer(conn)[1] == uid


# The namespaces whose difference would change what a call sees or reaches.
NAMESPACES = ("mnt", "net", "user", "pid", "ipc", "uts")


def same_system(pid: int) -> bool:
    """Whether process ``pid`` sees the system this process sees: the same namespaces
    (:data:`NAMESPACES`) and root directory. Anything unreadable counts as different."""
    try:
        for name in NAMESPACES:
            if os.readlink(f"/proc/{pid}/ns/{name}") != os.readlink(f"/proc/self/ns/{name}"):
                return False
        theirs, mine = os.stat(f"/proc/{pid}/root"), os.stat("/proc/self/root")
    except OSError:
        return False
    return (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino)


def serving(path: Path) -> int | None:
    """The pid of this user's resident process serving ``path``, or None: the listening
    socket's peer (SO_PEERCRED)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return None
        pid, uid = peer(probe)
    return pid if uid == os.getuid() else None


def stop(path: Path) -> bool:
    """Stop the resident process serving ``path`` and wait (a minute at most) until it
    has removed its socket and exited; its calls running then finish. False if none
    serves it."""
    pid = serving(path)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while process_runs(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def serve(path: Path) -> int:
    """Serve calls on ``path`` until idle; 0 at once if another process serves it."""
    idle = idle_seconds()
    lock = os.open(path.with_suffix(".lock"), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0
    log_fd = os.open(path.with_suffix(".log"), os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
    os.dup2(log_fd, 2)  # what goes wrong here (a traceback) is in the log
    with open(log_fd, "a", buffering=1) as log:
        note(log, f"pid {os.getpid()} importing")
        if rehearsed := _warm():
            note(log, f"the rehearsal call exited {rehearsed}: first uses stay slower")
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:  # a child would inherit locks of threads it does not have
            note(log, f"not serving: {threads} threads after the imports")
            path.with_suffix(".off").touch(0o600)
            return 1
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the calls
        path.unlink(missing_ok=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(str(path))
            bound = Bound(path, idle, path.stat().st_ino)
            listener.listen(64)
            listener.settimeout(min(idle, CHECK_S))
            note(log, f"pid {os.getpid()} serving, stops after {idle} s idle")
            try:
                _accept(listener, lock, log, bound)
            except Stopped:
                note(log, "stopping: asked to")
            finally:
                if bound.ours():
                    path.unlink()
    return 0


def note(log: TextIO, text: str) -> None:
    log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {text}\n")


class Stopped(Exception):
    """SIGTERM: :func:`stop`."""


def _stop(_signum: int, _frame: object) -> None:
    raise Stopped


def _warm() -> int:
    """Import what calls need and rehearse one; the rehearsal's exit code."""
    os.environ.update(ONE_THREAD)
    from rewind.spark import heavy_imports

    with heavy_imports():
        for name in WARM:
            importlib.import_module(name)
        from sqlalchemy.orm import configure_mappers

        configure_mappers()  # the catalog's models, mapped once here instead of per call
        rehearsed = _rehearse()
    gc.collect()  # what the rehearsal left, before the rest is frozen
    gc.freeze()
    return rehearsed


# What :func:`_rehearse` runs: statements on the catalog alone (no Spark, no Delta table:
# delta-rs' runtime starts threads, which a fork cannot copy).
REHEARSAL = "CREATE DATABASE REHEARSAL; CREATE SCHEMA REHEARSAL.S; USE REHEARSAL; SHOW TABLES"


def _rehearse() -> int:
    """One call of the CLI on a scratch home, before the first fork: what a call builds
    on its first use and keeps (SQLAlchemy's and sqlglot's statement caches, compiled
    regular expressions, the table renderer) is built once here and shared by every call
    (~25 ms of a 60-80 ms catalog call). The home, in a temporary directory, is removed
    after; the process's environment is as before; its output is dropped. Its exit code
    (not 0: the calls' first uses stay slower, nothing else)."""
    import io
    import shutil
    import tempfile

    from rewind import cli

    saved = dict(os.environ)
    try:
        scratch = tempfile.mkdtemp(prefix="rewind-rehearsal-")
    except OSError:
        return 1
    try:
        for name in [n for n in os.environ if n.startswith("REWIND_")]:
            del os.environ[name]
        os.environ["REWIND_SPARK_SERVER"] = "off"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return cli.main(["--home", f"{scratch}/home", "sql", REHEARSAL])
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass
class Bound:
    """The socket this process listens on, and when it last took a call."""

    path: Path
    idle: int
    inode: int = 0
    last: float = field(default_factory=time.monotonic)

    def ours(self) -> bool:
        """Whether ``path`` is still this process's socket (its directory may have been
        removed, and another process may have bound the name since)."""
        try:
            return self.path.stat().st_ino == self.inode
        except FileNotFoundError:
            return False

    def done(self) -> str | None:
        """Why to stop now, or None."""
        if not self.ours():
            return "its socket is gone: no caller reaches it"
        if server_key() != self.path.stem:
            return "its package changed: callers start a new process"
        return f"idle for {self.idle} s" if time.monotonic() - self.last >= self.idle else None


def _accept(listener: socket.socket, lock: int, log: TextIO, bound: Bound) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            reason = bound.done()
            if reason is not None:
                note(log, f"stopping: {reason}")
                return
            continue
        bound.last = time.monotonic()
        with conn:
            pid, uid = peer(conn)
            if uid != os.getuid():
                note(log, f"refused pid {pid}: uid {uid}")
                continue
            if not same_system(pid):  # the caller runs the call in its own process
                note(log, f"refused pid {pid}: it sees another system (namespaces, root)")
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            # A stop (SIGTERM) waits until the fork is done: raised in the fork's hooks,
            # Python would print and drop it.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            child = os.fork()
            if child == 0:  # never returns into the parent's loop, whatever happens
                code = 2
                try:
                    listener.close()
                    os.close(lock)
                    log.close()
                    code = _call(conn)
                finally:
                    os._exit(code)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            note(log, f"served pid {pid} in pid {child}")


def _call(conn: socket.socket) -> int:
    """In the forked child: take the caller's descriptors, environment and directory, run
    the call, report its exit code. Returns early (the caller then runs the call itself)
    if the request is incomplete or its directory is gone."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    conn.setblocking(True)
    header, fds, _flags, _address = socket.recv_fds(conn, LENGTH.size, 3)
    if len(header) != LENGTH.size or len(fds) != 3:
        return 2
    (size,) = LENGTH.unpack(header)
    request = json.loads(_receive(conn, size))
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    try:
        os.chdir(request["cwd"])
    except OSError:
        return 2
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    os.umask(request["umask"])
    for stream in (sys.stdin, sys.stdout):  # as a process on these descriptors has them
        stream.reconfigure(line_buffering=stream.isatty())  # type: ignore[union-attr]
    conn.sendall(ACCEPTED)
    if conn.recv(1) != GO:  # the caller gave up waiting and runs the call itself
        return 2
    threading.Thread(target=_signals, args=(conn,), daemon=True).start()
    code = _run(request["argv"])
    conn.sendall(EXITED + bytes([code & 0xFF]))
    return code


def _receive(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the caller left before its request was complete")
        data += chunk
    return data


def _run(argv: list[str]) -> int:
    """:func:`rewind.cli.main`'s exit code, as ``sys.exit(main())`` would give it."""
    from rewind.cli import main

    try:
        return main(argv)
    except SystemExit as exc:  # argparse: a usage error (2), --help (0)
        return _exit_code(exc.code)
    except KeyboardInterrupt:  # Ctrl-C while the arguments were parsed
        return 130
    finally:
        with contextlib.suppress(OSError):
            sys.stdout.flush()
            sys.stderr.flush()


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _signals(conn: socket.socket) -> None:
    """Pass the caller's signals to the call's main thread; a caller that is gone (its
    connection closed) takes the call with it."""
    main = threading.main_thread().ident
    assert main is not None
    for signum in _bytes(conn):
        if signum in FORWARDED:
            signal.pthread_kill(main, signum)
    os.kill(os.getpid(), signal.SIGKILL)


def _bytes(conn: socket.socket) -> Iterator[int]:
    while True:
        try:
            data = conn.recv(1)
        except OSError:
            return
        if not data:
            return
        yield data[0]


if __name__ == "__main__":
    # No interpreter teardown of what it imported: seconds of freeing for nothing.
    os._exit(serve(Path(sys.argv[1])))
