"""The harness of the Spark entry points in ``spark_jobs/`` (``rewind.runner.main``).

argparse -> the Spark session from the one factory -> one lifecycle step -> one JSON
summary line on stdout and, with ``--summary-file``, in that file: the Airflow operator
(``rewind.operations.spark_job``) reads it back as the task's XCom, since
SparkSubmitOperator pushes no output of its own. A refused job writes its error there.
A lifecycle step's progress goes to stderr meanwhile (``rewind.runner.main``), which
spark-submit merges into the task's log.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rewind.errors import RewindError, error_of


def job_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The arguments every Rewind Spark job takes: ``--home``, ``--now``, ``--summary-file``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--home", required=True, help="the Rewind home")
    parser.add_argument("--now", required=True, help="the run's clock (ISO 8601)")
    parser.add_argument("--summary-file", help="also write the JSON summary (or error) here")
    return parser


def finish(summary_file: str | None, action: Callable[[], dict[str, Any]]) -> int:
    """Run a job's action: its summary is one JSON line on stdout (and the summary file);
    a RewindError is one line on stderr (and ``{"error": {code, message}}`` in the file)."""
    try:
        summary = action()
    except RewindError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        _write(summary_file, {"error": {"code": exc.code, "message": exc.message}})
        return 1
    print(json.dumps(summary))
    _write(summary_file, summary)
    return 0


def read_summary(summary_file: Path) -> dict[str, Any] | None:
    """What a job wrote with ``--summary-file``; None if it wrote nothing (it crashed).

    Raises:
        RewindError: the error the job reported, with its code (SPEC R39).
    """
    if not summary_file.exists():
        return None
    summary = dict(json.loads(summary_file.read_text()))
    if "error" in summary:
        raise error_of(summary["error"]["code"], summary["error"]["message"])
    return summary


def _write(summary_file: str | None, content: dict[str, Any]) -> None:
    if summary_file:
        Path(summary_file).write_text(json.dumps(content))
