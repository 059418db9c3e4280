"""Other Delta writers, run as other engines (SPEC R40, R43): a plain PySpark job with
delta-spark in a process of its own (no Rewind code), and a plain delta-rs writer.

The delta-spark jobs of a test process run on one long-lived engine
(tests/delta_spark_worker.py): a process and a JVM of its own with pyspark and
delta-spark only, started on the first job with the session a data team's job starts
with (examples/orders_job.py), each job in a SparkSession of its own. It stops when the
test process ends. A job that fails or outlives its timeout fails the test; after a
timeout the engine is killed and the next job starts a new one. A job that a failed test
left running is waited for by the next one, so that one failure does not fail the next tests.

A commit's time, for a writer without in-commit timestamps, is its log file's
modification time (Delta's rule); :func:`stamp` sets it, so that tests on Rewind's
simulated clock can place another writer's commit at a chosen instant.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import textwrap
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

from rewind.spark import DEFAULT_DELTA_JARS

WORKER = Path(__file__).resolve().parent / "delta_spark_worker.py"
START_TIMEOUT_S = 300


class Engine:
    """The delta-spark engine process; its replies are read by a thread into a queue."""

    def __init__(self) -> None:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("REWIND_", "PYSPARK_GATEWAY"))
        }
        env["DELTA_JARS"] = str(os.environ.get("REWIND_DELTA_JARS") or DEFAULT_DELTA_JARS)
        # Spark's log, read when the engine fails; open as long as the engine runs.
        self.log = tempfile.TemporaryFile(mode="w+", prefix="delta-spark-")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.running: Job | None = None  # one job at a time: replies come in order
        threading.Thread(target=self._read, daemon=True).start()
        ready = self.reply(START_TIMEOUT_S)
        assert ready is not None and ready["ok"], f"delta-spark did not start: {self.tail()}"

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)  # the engine ended

    def send(self, path: Path, body: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"path": str(path), "body": body}) + "\n")
        self.process.stdin.flush()

    def reply(self, timeout: float) -> dict[str, Any] | None:
        """The next job's reply; None if the engine ended. Raises queue.Empty on timeout."""
        return self.replies.get(timeout=timeout)

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.log.close()


_engine: Engine | None = None


def engine() -> Engine:
    """This test process's delta-spark engine, started on first use."""
    global _engine
    if _engine is None or _engine.process.poll() is not None:
        _engine = Engine()
    return _engine


@atexit.register
def _stop_engine() -> None:
    if _engine is not None:
        _engine.stop()


class Job:
    """One job sent to the engine; :meth:`poll` is None until it has finished."""

    def __init__(self, path: Path, body: str) -> None:
        left = engine().running
        if left is not None:  # a job that a failed test left running: its end is not ours
            with contextlib.suppress(AssertionError):
                finish(left)
        self.engine = engine()
        self.engine.send(path, textwrap.dedent(body))
        self.engine.running = self
        self.done: dict[str, Any] | None = None
        self.finished = False

    def poll(self) -> int | None:
        """None while the job runs; then 0 if it succeeded, 1 if not."""
        if not self.finished:
            try:
                self._finished(self.engine.reply(0))
            except queue.Empty:
                return None
        return 0 if self.done and self.done["ok"] else 1

    def wait(self, timeout: float) -> dict[str, Any] | None:
        if not self.finished:
            self._finished(self.engine.reply(timeout))
        return self.done

    def _finished(self, done: dict[str, Any] | None) -> None:
        self.done, self.finished, self.engine.running = done, True, None


def start_delta_spark(path: Path, body: str) -> Job:
    """Start ``body`` (Python, with ``spark``, ``path`` and ``DeltaTable`` in scope) as a
    plain PySpark job on the delta-spark engine."""
    return Job(path, body)


def finish(job: Job, timeout: float = 300) -> str:
    """Wait for a job started by :func:`start_delta_spark`; returns what it printed."""
    global _engine
    try:
        done = job.wait(timeout)
    except queue.Empty:
        job.engine.stop()  # a job that hangs: the next one gets a new engine
        _engine = None
        raise AssertionError(f"the delta-spark job ran over {timeout} s") from None
    if done is None:
        raise AssertionError(f"the delta-spark engine ended:\n{job.engine.tail()}")
    assert done["ok"], done["error"][-3000:]
    return str(done["out"])


def delta_spark(path: Path, body: str, timeout: float = 300) -> str:
    """Run ``body`` as a plain PySpark job (see :func:`start_delta_spark`) to its end."""
    return finish(start_delta_spark(path, body), timeout)


def delta_rs_append(path: Path, rows: dict[str, pa.Array]) -> None:
    """A plain delta-rs writer appending rows."""
    write_deltalake(str(path), pa.table(rows), mode="append")


def stamp(path: Path, version: int, when: datetime) -> None:
    """Give commit ``version`` the commit time ``when`` (its file's modification time)."""
    log = path / "_delta_log" / f"{version:020d}.json"
    os.utime(log, (when.timestamp(), when.timestamp()))


def versions(path: Path) -> list[int]:
    return sorted(int(p.name[:20]) for p in (path / "_delta_log").glob("*.json"))
