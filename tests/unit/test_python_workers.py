"""``tests/lifecycle_jobs.py``'s plain Python workers stand in for Spark in the fast
kill-anywhere and S3 tests: what they do must be what a Spark job does, up to the error
a failed file operation ends the step with (SPEC R39, R49: STORAGE_ERROR naming the
operation's error, as ``Run.run_tasks`` reports pyspark's ``PythonException``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from lifecycle_jobs import PythonWorkers

from rewind.config import Config
from rewind.errors import StorageError
from rewind.lifecycle.context import Run
from rewind.lifecycle.fileops import Task

pytestmark = pytest.mark.unit


def run(tmp_path: Path) -> Run:
    return Run.open(Config.load(home=tmp_path / "home"), "r", datetime.now(UTC), PythonWorkers)


def test_the_workers_move_files_and_report_each_outcome(tmp_path: Path) -> None:
    sources = [tmp_path / f"{n}.parquet" for n in range(3)]
    for source in sources:
        source.write_bytes(b"data")
    tasks = [Task("move", str(s), str(tmp_path / "failsafe" / s.name)) for s in sources]
    lifecycle = run(tmp_path)
    try:
        outcomes = lifecycle.run_tasks(tasks)
    finally:
        lifecycle.engine.dispose()
    assert set(outcomes) == {str(s) for s in sources}
    assert all(not s.exists() for s in sources)
    assert sorted(p.name for p in (tmp_path / "failsafe").iterdir()) == [s.name for s in sources]


def test_a_worker_whose_operation_raised_ends_the_step_with_a_storage_error(
    tmp_path: Path,
) -> None:
    """A move whose target's folder is a file fails in the worker: the step's error is
    STORAGE_ERROR with the worker's own last line, not INTERNAL_ERROR."""
    source, blocker = tmp_path / "a.parquet", tmp_path / "blocker"
    source.write_bytes(b"data")
    blocker.write_bytes(b"not a folder")
    lifecycle = run(tmp_path)
    try:
        with pytest.raises(StorageError) as caught:
            lifecycle.run_tasks([Task("move", str(source), str(blocker / "a.parquet"))])
    finally:
        lifecycle.engine.dispose()
    assert caught.value.code == "STORAGE_ERROR"
    assert "Error: " in caught.value.message and "Traceback" not in caught.value.message
    assert source.exists()  # nothing lost
