"""The crash tests' hook (SPEC R28, R31): ``REWIND_FAULT="<point>:<n>"`` kills the whole
job, its process group, with SIGKILL at the n-th pass of ``point`` in a process.

Points: the lifecycle's file operations (``rewind.lifecycle.fileops``): "move" (before a
move, and after a cross-device or S3 copy), "copied" (after such a copy only), "delete",
and its steps' "journal" and "purge_journal"; a statement's "committed" (its Delta
commit made, its catalog transaction not: ``rewind.sql.tables``).

The job's process group is taken in the driver (which imports this module before it
starts the JVM) and inherited by the JVM and its Python workers. PySpark's worker
daemon puts itself and the workers in a process group of their own: killing that group
alone fails a task and the driver exits normally, unkilled, and killing the job's group
alone leaves the workers moving files after the "kill". A test starts the job in a
session of its own, so that the kill never reaches the test.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import Counter

FAULT_ENV = "REWIND_FAULT"
FAULT_GROUP_ENV = "REWIND_FAULT_PGID"
if os.environ.get(FAULT_ENV):
    os.environ.setdefault(FAULT_GROUP_ENV, str(os.getpgid(0)))
_passes: Counter[str] = Counter()
_passes_lock = threading.Lock()


def fault_point(name: str) -> None:
    """Kill the job here when a crash test asks for ``name`` (a no-op otherwise)."""
    spec = os.environ.get(FAULT_ENV, "")
    if not spec.startswith(name + ":"):
        return
    with _passes_lock:
        _passes[name] += 1
        due = _passes[name] >= int(spec.split(":", 1)[1])
    if due:
        job, own = int(os.environ.get(FAULT_GROUP_ENV) or os.getpgid(0)), os.getpgid(0)
        if job != own:  # an executor's Python worker: the driver and the JVM first
            os.killpg(job, signal.SIGKILL)
        os.killpg(own, signal.SIGKILL)
