"""Whether a process still runs: the one answer the CLI's resident server
(:mod:`rewind.resident`), the Spark Connect server's supervisor (:mod:`rewind.spark_server`)
and the tests use (standard library only)."""

from __future__ import annotations

import os
from pathlib import Path


def process_runs(pid: int) -> bool:
    """Whether ``pid`` is a process of this user that runs: one that exited and its parent
    has not reaped yet does not, nor one that ends while this reads its state."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone (ESRCH, ENOENT: also during the read), or another user's pid now
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
