"""Fuzzing the SQL front on Spark (issue 6, issue 26; SPEC R28, R39, R36, R37, with R4,
R5, R16, R17, R27).

Hypothesis generates statements from the supported grammar (tests/fuzz_grammar.py),
weighted towards the ones that run on Spark (``mostly_spark``): SELECTs at points in
time, INSERT, UPDATE, DELETE, MERGE, CTAS, SQL function calls, BigQuery reads,
FLATTEN over ACCESS_HISTORY, points computed by Spark (TO_TIMESTAMP_TZ, DATEADD), with
enough DDL, restores, sessions of ANALYST and clock moves that they meet dropped,
replaced, renamed and cloned tables. They run one after another on one warehouse with
real Spark (tests/fuzz_run.py), and after every statement either it succeeded or it
raised a RewindError with a stable code and one line (R39) — never another exception,
whatever Spark raised — and a failed statement changed nothing, also when it failed in
the middle of its Spark work (R28); what each successful one was authorized for is what
its audit rows say it read, wrote and changed (R36, R37).

The same checks over the whole grammar, 3,000 statements and more, run in process
without Spark in tests/unit/test_fuzz_analysis.py (parser, analysis, authorization,
audit, catalog): this run is for what only execution on Spark shows.

Reproducible (``derandomize``, no example database); no shrinking (the examples share
the warehouse): the failure message names the statement and the ones before it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fuzz_grammar import actions
from fuzz_run import Run, without_local_constants
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.spark

EXAMPLES, ACTIONS_PER_EXAMPLE = 18, 25
MIN_STATEMENTS = 400


def test_generated_statements_on_spark_fail_cleanly_or_succeed(tmp_path: Path, spark: Any) -> None:
    """SPEC R28, R39, R36, R37: at least 400 generated statements, most of them run on
    Spark, each a success whose audit is its analysis or a RewindError with a stable
    code that changed nothing."""
    run = Run(tmp_path / "home", spark=True)
    action = actions(run.history, mostly_spark=True)
    started = time.monotonic()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def examples(data: st.DataObject) -> None:
        for _ in range(ACTIONS_PER_EXAMPLE):
            run.step(data.draw(action, label="action"))

    try:
        with without_local_constants():
            examples()
    finally:
        run.close()
    elapsed = time.monotonic() - started
    print(f"\n{run.counts['statements']} statements in {elapsed:.0f} s: {dict(run.counts)}")
    counts = run.counts
    assert counts["statements"] >= MIN_STATEMENTS
    # Spark ran many of them, and both ways: statements that succeeded on it, and
    # statements that failed in the middle of their Spark work. The run is the same in
    # every process (fuzz_run.without_local_constants): 525 statements, 45 succeeded on
    # Spark and 96 failed there (2026-12-07, alone and after other modules).
    assert counts["SUCCESS on Spark"] >= 40 and counts["FAILED on Spark"] >= 40
    assert len(run.errors()) >= 8, run.errors()
    assert counts["audit checked"] == counts["SUCCESS"] - counts["restored"]
