"""File operations the executors run (SPEC R31): idempotent, so a rerun after a kill
at any instant converges. They touch only paths they are given: no driver state."""

from __future__ import annotations

import errno
import os
import shutil
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rewind.storage import location

if TYPE_CHECKING:
    import pyarrow as pa

FAULT_ENV = "REWIND_FAULT"  # "point:n": SIGKILL the job at the n-th pass of ``point``
# Points: "move" (before a move, and after a cross-device or S3 copy), "copied" (after
# such a copy only), "delete", and the steps' "journal" and "purge_journal".
# SPEC R31 crash tests: the job's process group, taken in the driver (which imports this
# module before it starts the JVM) and inherited by the JVM and its Python workers.
# PySpark's worker daemon puts itself and the workers in a process group of their own:
# killing that group alone fails a task and the driver exits normally, unkilled, and
# killing the job's group alone leaves the workers moving files after the "kill".
FAULT_GROUP_ENV = "REWIND_FAULT_PGID"
if os.environ.get(FAULT_ENV):
    os.environ.setdefault(FAULT_GROUP_ENV, str(os.getpgid(0)))
_passes: Counter[str] = Counter()


def fault_point(name: str) -> None:
    """Crash tests enable this to kill the whole job (its process group) mid-step."""
    spec = os.environ.get(FAULT_ENV, "")
    if not spec.startswith(name + ":"):
        return
    _passes[name] += 1
    if _passes[name] >= int(spec.split(":", 1)[1]):
        job, own = int(os.environ.get(FAULT_GROUP_ENV) or os.getpgid(0)), os.getpgid(0)
        if job != own:  # an executor's Python worker: the driver and the JVM first
            os.killpg(job, signal.SIGKILL)
        os.killpg(own, signal.SIGKILL)


def move(source: str, target: str) -> str:
    """Move a file so that it is, at every instant, in at least one of the two places.

    ``target`` is a local path; ``source`` a local path or an object of a table on S3
    (``s3://bucket/key``, SPEC R44). A rename within one file system is atomic. Across
    file systems, and from S3, the bytes are copied to ``target + '.part'``, synced,
    checked against the source's size (SPEC R48) and renamed, then the source is removed.
    A rerun finds the file in the source, the target or both (then the copy is complete
    and the source goes), never in neither unless it was already gone before the first
    run.

    Returns:
        "moved", "done" (already in place) or "missing" (in neither place).
    """
    origin = location.file(source)
    in_source, in_target = location.exists(origin), os.path.exists(target)
    if in_target and not in_source:
        return "done"
    if not in_source:
        return "missing"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if in_target:  # a copy had finished when the last run died
        location.unlink(origin)
        return "moved"
    fault_point("move")
    if isinstance(origin, Path):
        try:
            os.rename(source, target)
            return "moved"
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        partial = target + ".part"
        shutil.copyfile(source, partial)
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, target)
    else:
        location.download(origin, Path(target))
    fault_point("move")
    fault_point("copied")  # in both places: what a rerun must finish (crash tests)
    location.unlink(origin)
    return "moved"


def delete(path: str) -> str:
    """Remove a file (a local path or an object on S3); already gone is fine."""
    fault_point("delete")
    target = location.file(path)
    if isinstance(target, Path):
        try:
            target.unlink()
        except FileNotFoundError:
            return "done"
        return "deleted"
    location.unlink(target)  # DeleteObject: idempotent, it tells no "already gone"
    return "deleted"


def run(task: tuple[str, str, str]) -> tuple[str, str]:
    """``(op, source, target)`` -> ``(source, outcome)``; op is "move" or "delete"."""
    op, source, target = task
    return source, move(source, target) if op == "move" else delete(source)


TASK_SCHEMA = "op string, source string, target string"
OUTCOME_SCHEMA = "source string, outcome string"


def run_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """:func:`run` over Arrow batches of :data:`TASK_SCHEMA` (Spark's ``mapInArrow``)."""
    import pyarrow as pa

    for batch in batches:
        outcomes = [run((t["op"], t["source"], t["target"])) for t in batch.to_pylist()]
        yield pa.RecordBatch.from_pylist(
            [{"source": source, "outcome": outcome} for source, outcome in outcomes],
            schema=pa.schema([("source", pa.string()), ("outcome", pa.string())]),
        )
