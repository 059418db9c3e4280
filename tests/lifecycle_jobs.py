"""A lifecycle step run as its own Spark job (``spark_jobs/<step>.py``), as Airflow runs it:
driver, JVM and Python workers in a session of their own, so that a fault
(``REWIND_FAULT``, SPEC R31) kills that session and never pytest.

Run as a script (``python tests/lifecycle_jobs.py STEP --home ... --now ... --run-id ...``)
it is the same job, ``rewind.runner.main``, with its file operations in two plain Python
workers instead of Spark's (:class:`PythonWorkers`): a kill at a file operation costs no
JVM start (10-30 s on a loaded 2-core machine), for the crash tests' many depths.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from rewind.faults import FAULT_ENV

REPO = Path(__file__).resolve().parents[1]


def run_job(
    home: Path,
    step: str,
    run_id: str,
    now: datetime,
    fault: str | None,
    timeout: float,
    settings: Mapping[str, str] | None = None,
    *,
    spark: bool = True,
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the step's job on ``home`` at ``now``; with ``fault``
    the fault hook is armed there; ``settings``: ``REWIND_*`` variables of the job (none of
    this process's reaches it); ``spark=False``: its file operations in plain Python
    workers (:class:`PythonWorkers`). A job still running after ``timeout`` s is killed,
    all of its session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    env.update(settings or {})
    if fault is not None:
        env[FAULT_ENV] = fault
    entry = [str(REPO / "spark_jobs" / f"{step}.py")] if spark else [__file__, step]
    command = [sys.executable, *entry, "--home", str(home)]
    command += ["--now", now.isoformat(), "--run-id", run_id]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=home.parent,
        start_new_session=True,  # the fault kills this group, not pytest
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:  # timed out: end the job started here, all of its group
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out, err


# One worker: the rows of its slice as JSON on stdin, ``fileops.run_batches`` over them as
# one Arrow batch (what Spark's mapInArrow hands a Python worker), the outcomes on stdout.
WORKER = """
import json, sys
import pyarrow as pa
from rewind.lifecycle import fileops
rows = json.load(sys.stdin)
done = fileops.run_batches(iter([pa.RecordBatch.from_pylist(rows)]))
json.dump([row for batch in done for row in batch.to_pylist()], sys.stdout)
"""


class PythonWorkers:
    """What ``Run.run_tasks`` asks of its SparkSession (``createDataFrame(tasks, schema)
    .mapInArrow(fileops.run_batches, schema).collect()``), done as a local[2] Spark job does
    it: the tasks cut into two contiguous slices (``parallelize``), each run at once by
    ``fileops.run_batches`` in a Python worker of its own. The workers stay in the job's
    process group: a fault (``REWIND_FAULT``) in either kills the driver and both, as it
    kills a Spark job's driver, JVM and workers. A worker that raised fails ``collect``
    with pyspark's ``PythonException`` carrying its traceback, as Spark's does, so the
    job reports it as with Spark (``Run.run_tasks``: STORAGE_ERROR naming the error)."""

    slices = 2

    def createDataFrame(self, rows: Sequence[Any], schema: str) -> PythonWorkers:
        self._rows = [row._asdict() for row in rows]
        return self

    def mapInArrow(self, function: Callable[..., Iterator[Any]], schema: str) -> PythonWorkers:
        from rewind.lifecycle import fileops

        assert function is fileops.run_batches, function  # the only map the lifecycle makes
        return self

    def collect(self) -> list[dict[str, str]]:
        from pyspark.errors import PythonException

        count = len(self._rows)
        cuts = [count * i // self.slices for i in range(self.slices + 1)]
        slices = [self._rows[start:end] for start, end in itertools.pairwise(cuts) if end > start]
        outcomes = []
        with contextlib.ExitStack() as stack:
            errors = [stack.enter_context(tempfile.TemporaryFile()) for _ in slices]
            workers = [
                subprocess.Popen(
                    [sys.executable, "-c", WORKER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=error,
                )
                for error in errors
            ]
            for worker, rows in zip(workers, slices, strict=True):  # both start before a read
                assert worker.stdin is not None
                worker.stdin.write(json.dumps(rows).encode())
                worker.stdin.close()
            for worker, error in zip(workers, errors, strict=True):
                assert worker.stdout is not None
                text = worker.stdout.read()
                code = worker.wait()
                error.seek(0)
                said = error.read()
                if code != 0:  # as Spark reports a Python worker's exception
                    raise PythonException(message=said.decode(errors="replace"))
                sys.stderr.buffer.write(said)  # what the worker logged, in the job's stderr
                outcomes += json.loads(text)
        return outcomes


def main(step: str, argv: Sequence[str]) -> int:
    """``spark_jobs/<step>.py`` (``rewind.runner.main``) with :class:`PythonWorkers` for
    its Spark: the job's own code, from its arguments to its summary."""
    import rewind.spark
    from rewind.runner import main as job

    rewind.spark.get_spark = lambda *_, **__: PythonWorkers()
    return job(step, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
