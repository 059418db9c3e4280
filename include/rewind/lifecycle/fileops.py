"""File operations the executors run (SPEC R31): idempotent, so a rerun after a kill
at any instant converges. They touch only paths they are given: no driver state."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rewind.faults import fault_point
from rewind.storage import location
from rewind.storage.location import Root
from rewind.storage.objectstore import S3Location

if TYPE_CHECKING:
    import pyarrow as pa

# Threads per batch of tasks on an executor: file operations wait on the disk or the
# network (an object store's request takes milliseconds); a boto3 client pools 10
# connections.
THREADS = 8


class Task(NamedTuple):
    """One file operation: ``op`` "move" (``source`` into ``target``), "delete" (a table's
    file) or "purge" (a fail-safe copy, :func:`delete`). A move into an S3 store is written
    with ``storage_class`` (empty: the bucket's default) and, with ``locked_until`` (an
    ISO 8601 instant; empty: none), an Object Lock in COMPLIANCE mode until then (SPEC R48)."""

    op: str
    source: str
    target: str = ""
    locked_until: str = ""
    storage_class: str = ""

    def placement(self) -> location.Placement:
        """The copy's placement. A lock ending before now is none: S3 refuses a lock
        that has ended, and the copy's purge is due already."""
        until = datetime.fromisoformat(self.locked_until) if self.locked_until else None
        return location.Placement(
            self.storage_class or None,
            until if until is not None and until > datetime.now(UTC) else None,
        )


def move(
    source: str,
    target: str,
    placement: location.Placement | None = None,
    remove: Callable[[Root], None] = location.unlink,
) -> str:
    """Move a file so that it is, at every instant, in at least one of the two places.

    ``source`` is a local path or an object of a table on S3 (``s3://bucket/key``, SPEC
    R44); ``target`` a local path or an object on S3. A rename within one file system is
    atomic. Into S3 (:func:`_into_s3`), the source is copied and the copy verified first.
    Into a local path across file systems, and from S3, the bytes go to ``target +
    '.part'``, are synced, checked against the source's size and renamed. Only then is the
    source removed. A rerun finds the file in the source, the target or both, never in
    neither unless it was already gone before the first run. ``remove`` removes the source
    (:func:`run_batches`: a table's objects on S3 together, once every copy of the batch is
    verified).

    Returns:
        "moved", "done" (already in place) or "missing" (in neither place).
    """
    origin, destination = location.file(source), location.file(target)
    if isinstance(destination, S3Location):
        return _into_s3(origin, destination, placement or location.Placement(), remove)
    in_source, in_target = location.exists(origin), location.exists(destination)
    if in_target and not in_source:
        return "done"
    if not in_source:
        return "missing"
    if in_target:  # a copy had finished when the last run died
        remove(origin)
        return "moved"
    fault_point("move")
    if _copied_locally(origin, destination):
        return "moved"  # renamed: atomic, nothing left in the source
    fault_point("move")
    fault_point("copied")  # in both places: what a rerun must finish (crash tests)
    remove(origin)
    return "moved"


def _into_s3(
    origin: Root,
    destination: S3Location,
    placement: location.Placement,
    remove: Callable[[Root], None],
) -> str:
    """Copy into S3, verified, placed as ``placement`` says (SPEC R48), then remove the
    source: one HEAD of the source (an object's fingerprint; a local file is read for its
    MD5) and one server-side copy conditional on it, verified by the copy's answer (SPEC
    R50; :func:`rewind.storage.location.copy_verified`). A copy a killed run left at the
    target is never trusted: it is replaced. Only with the source gone is the target
    looked at: "done" when the copy is there, else "missing"."""
    try:
        expected = location.fingerprint(origin)
    except FileNotFoundError:
        return "done" if location.exists(destination) else "missing"
    fault_point("move")
    location.copy_verified(origin, destination, placement, expected)
    fault_point("move")
    fault_point("copied")  # in both places: what a rerun must finish (crash tests)
    remove(origin)
    return "moved"


def _copied_locally(source: Root, target: Path) -> bool:
    """Rename a local file within one file system (True: moved); else copy it (from
    another file system or from S3) to ``target + '.part'``, synced and checked, and
    rename that (False: the source is still to be removed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, S3Location):
        location.download(source, target)
        return False
    try:
        os.rename(source, target)
        return True
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    partial = target.with_name(target.name + ".part")
    shutil.copyfile(source, partial)
    with open(partial, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, target)
    return False


def delete(path: str, remove: Callable[[S3Location], None]) -> str:
    """Remove a file: a local one here (already gone is fine), an object on S3 by
    ``remove`` (:func:`run_batches`: in batches)."""
    fault_point("delete")
    target = location.file(path)
    if isinstance(target, Path):
        try:
            target.unlink()
        except FileNotFoundError:
            return "done"
        return "deleted"
    remove(target)  # DeleteObject(s): idempotent, it tells no "already gone"
    return "deleted"


def run(
    task: Task, remove: Callable[[Root], None], purge: Callable[[S3Location], None]
) -> tuple[str, str]:
    """A task -> ``(source, outcome)``; ``remove`` removes a table's file, ``purge`` a
    fail-safe copy on S3."""
    if task.op == "move":
        return task.source, move(task.source, task.target, task.placement(), remove)
    return task.source, delete(task.source, purge if task.op == "purge" else remove)


TASK_SCHEMA = "op string, source string, target string, locked_until string, storage_class string"
OUTCOME_SCHEMA = "source string, outcome string"


def run_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """:func:`run` over Arrow batches of :data:`TASK_SCHEMA` (Spark's ``mapInArrow``), a
    batch's tasks on :data:`THREADS` threads (an object call waits on the network, SPEC
    R50). A batch's table objects on S3 leave together at its end, 1000 in a DeleteObjects
    request, after every copy of theirs is verified (R48): a kill before leaves them in
    both places, which a rerun finishes (R31). Its fail-safe copies on S3 are purged
    together too (:func:`rewind.storage.location.purge_all`); one an Object Lock still
    holds is never forced (R48): it stays, "locked". Outcomes are reported only after that."""
    import pyarrow as pa

    for batch in batches:
        leaving: list[S3Location] = []
        purging: list[S3Location] = []

        def remove(origin: Root, leaving: list[S3Location] = leaving) -> None:
            if isinstance(origin, S3Location):
                leaving.append(origin)
            else:
                location.unlink(origin)

        tasks = [Task(**task) for task in batch.to_pylist()]
        with ThreadPoolExecutor(THREADS) as pool:
            outcomes = list(pool.map(partial(run, remove=remove, purge=purging.append), tasks))
        location.unlink_all(leaving)
        held = location.purge_all(purging)
        yield pa.RecordBatch.from_pylist(
            [
                {"source": source, "outcome": "locked" if location.file(source) in held else done}
                for source, done in outcomes
            ],
            schema=pa.schema([("source", pa.string()), ("outcome", pa.string())]),
        )
