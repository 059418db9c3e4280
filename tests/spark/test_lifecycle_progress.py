"""Progress of the nightly lifecycle as plain lines (issue 28, SPEC R29): what a pipe and
an Airflow task's log get. Each step's start, a line every ``REWIND_PROGRESS_INTERVAL``
seconds while it works (30 s at most by default; a few hundredths here, so that a small
warehouse shows several), and its end with the counts, which are the step summary's.

A run in this process (``rewind.runner.run_lifecycle``, as the CLI makes it) and the
Spark job of a step (``spark_jobs/expire_versions.py``, as Airflow submits it: its
stderr is the task's log). Terminal bars: tests/cli/test_cli_progress.py.
"""

from __future__ import annotations

import io
import json
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from lifecycle_jobs import run_job

from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.lifecycle import progress
from rewind.lifecycle.metrics import BYTE_COLUMNS
from rewind.runner import run_lifecycle

pytestmark = pytest.mark.spark

CREATED_AT = datetime(2026, 3, 2, 12, tzinfo=UTC)
RUN_AT = CREATED_AT + timedelta(days=40)  # past time travel (1 day) and fail-safe (7)
LINE = re.compile(r"^lifecycle progress: (?P<step>\w+): (?P<text>.*)$")
COUNT = r"{what} (\d+)/(\d+)(?:, bytes (\d+)/(\d+))?"
JOB_TIMEOUT_S = 600


@pytest.fixture
def warehouse(home: Path, connect: Callable[..., Any]) -> Path:
    """Two tables; ORDERS had 4 files of which a DELETE removed 3."""
    conn = connect(now=format_timestamp(CREATED_AT))
    conn.sql("CREATE DATABASE SHOP; CREATE TABLE SHOP.PUBLIC.ORDERS (ID INT)")
    for value in range(4):
        conn.sql(f"INSERT INTO SHOP.PUBLIC.ORDERS VALUES ({value})")
    conn.sql("CREATE TABLE SHOP.PUBLIC.ITEMS (ID INT); INSERT INTO SHOP.PUBLIC.ITEMS VALUES (1)")
    conn.sql("DELETE FROM SHOP.PUBLIC.ORDERS WHERE ID < 3")
    return home


def lines(text: str) -> list[tuple[str, str]]:
    """(step, text) of every progress line of ``text``."""
    return [(m["step"], m["text"]) for m in map(LINE.match, text.splitlines()) if m]


def counted(text: str, what: str) -> list[tuple[int, ...]]:
    """(done, total[, bytes done, bytes total]) of every ``what`` count in ``text``."""
    return [
        tuple(int(g) for g in found if g)
        for found in re.findall(COUNT.format(what=re.escape(what)), text)
    ]


def test_a_run_s_plain_lines_count_what_its_steps_report(warehouse: Path) -> None:
    shown = io.StringIO()
    with progress.reporting(progress.PlainLines(shown, 0.02)):
        steps = {s["step"]: s for s in run_lifecycle(Config.load(home=warehouse), RUN_AT)}
    found = lines(shown.getvalue())
    assert [step for step, text in found if text == "started"] == list(steps)
    ends = {step: text for step, text in found if text.startswith("done in ")}
    assert list(ends) == list(steps)
    for step, text in ends.items():  # each step's time, as its summary has it (± rounding)
        took = float(text.split()[2])
        assert abs(took - steps[step]["elapsed_s"]) < 0.5, (step, text, steps[step])
    # Several lines while the steps work, whose counts only grow up to their totals.
    working = [(step, text) for step, text in found if text.endswith(" elapsed")]
    assert len(working) >= len(steps), shown.getvalue()
    for what in ("files moved or deleted", "files purged", "tables measured"):
        seen = [c for _, text in working for c in counted(text, what)]
        assert all(c[0] <= c[1] for c in seen) and seen == sorted(seen), seen
    # The end lines' counts are the summaries' figures.
    expire, purge = steps["expire_versions"], steps["purge_failsafe"]
    assert expire["files_moved"] == 3 and purge["files_purged"] == 3
    files = expire["files_moved"] + expire["files_deleted"]
    nbytes = expire["bytes_moved"] + expire["bytes_deleted"]
    assert counted(ends["expire_versions"], "files moved or deleted") == [
        (files, files, nbytes, nbytes)
    ]
    assert counted(ends["purge_failsafe"], "files purged") == [
        (purge["files_purged"],) * 2 + (purge["bytes_purged"],) * 2
    ]
    # Both tables' new commits read; the plan's objects: the database, its schema, the
    # two tables (the summary counts the account's row too).
    assert counted(ends["expire_versions"], "tables scanned")[0] == (2, 2)
    planned = steps["effective_retention"]["objects_seen"] - 1
    assert counted(ends["effective_retention"], "objects planned") == [(planned, planned)]
    # The storage metrics: every table it has a row for measured, with the bytes its rows
    # count (SPEC R33); no table dropped, so none checked for storage left.
    assert counted(ends["storage_metrics"], "tables measured") == [measured(steps)]
    assert steps["storage_metrics"]["tables"] == 2
    assert "dropped tables checked" not in ends["storage_metrics"]


def measured(steps: dict[str, dict[str, Any]]) -> tuple[int, ...]:
    """(done, total, bytes done, bytes total) the storage_metrics step should end with: its
    summary's tables and the sum of its byte columns."""
    metrics = steps["storage_metrics"]
    stored = sum(metrics[column.lower()] for column in BYTE_COLUMNS)
    assert stored > 0, metrics
    return (metrics["tables"],) * 2 + (stored,) * 2


def test_the_storage_metrics_count_a_dropped_table_checked_not_measured(
    warehouse: Path, connect: Callable[..., Any]
) -> None:
    """A table dropped 40 days ago is past time travel and fail-safe: the run purges its
    storage, then the metrics check it (it has none left) and measure the other two."""
    conn = connect(now=format_timestamp(CREATED_AT + timedelta(hours=1)))
    conn.sql("CREATE TABLE SHOP.PUBLIC.GONE (ID INT); INSERT INTO SHOP.PUBLIC.GONE VALUES (1)")
    conn.sql("DROP TABLE SHOP.PUBLIC.GONE")
    shown = io.StringIO()
    with progress.reporting(progress.PlainLines(shown, 0.02)):
        steps = {s["step"]: s for s in run_lifecycle(Config.load(home=warehouse), RUN_AT)}
    ends = {step: text for step, text in lines(shown.getvalue()) if text.startswith("done in ")}
    assert steps["storage_metrics"]["tables"] == 2  # the dropped one is purged (SPEC R33)
    assert counted(ends["storage_metrics"], "dropped tables checked") == [(1, 1)]
    assert counted(ends["storage_metrics"], "tables measured") == [measured(steps)]


def test_the_spark_job_of_a_step_prints_its_progress_on_stderr(warehouse: Path) -> None:
    run_id, settings = str(uuid.uuid4()), {progress.INTERVAL_ENV: "0.05"}
    for step in ("effective_retention", "expire_versions"):
        code, out, err = run_job(warehouse, step, run_id, RUN_AT, None, JOB_TIMEOUT_S, settings)
        assert code == 0, err[-3000:]
        summary = json.loads(out.splitlines()[-1])
        found = [text for job_step, text in lines(err) if job_step == step]
        assert found[0] == "started" and found[-1].startswith("done in "), err[-3000:]
        assert not lines(out)  # stdout is the summary's: Airflow reads it back
    assert len(found) >= 3  # and lines while it worked
    files, nbytes = summary["files_moved"], summary["bytes_moved"]
    assert files == 3
    assert counted(found[-1], "files moved or deleted") == [(files, files, nbytes, nbytes)]
