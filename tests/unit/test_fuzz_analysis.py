"""Fuzzing the SQL front in process, without Spark (issue 6, issue 26; SPEC R28, R36,
R37, R39, with R4, R5, R17, R27).

Hypothesis generates statements from the whole supported grammar (tests/fuzz_grammar.py):
random and hostile names, valid and absurd values and points, the BigQuery dialect,
roles and grants, token soup; with the clock moving forward between them (it may not
run backwards, R15) and some sessions as ANALYST, a user of a role with only what the
generated GRANTs give it. At least 3,000 statements run, in two runs of 1,500 or more,
each one statement after another on one home (tests/fuzz_run.py; two, so that xdist can
give one to each worker), each through the parser, the analysis
(include/rewind/sql/analysis.py), authorization (sql/needs.py, security.py), the
catalog and delta-rs as it runs for a user — but with no Spark: where a statement would
start Spark work it is stopped (:class:`fuzz_run.SparkWork`) and rolled back. After
every statement:

* R39: it succeeded or raised a RewindError with a stable code and one line, never
  another exception and never INTERNAL_ERROR;
* R28: if it failed, or was stopped at Spark, every catalog row and the listing of the
  warehouse, fail-safe and system stores are as they were;
* R36, R37: if it succeeded, its audit rows say exactly what its analysis (from which it
  was authorized) says it read, wrote and changed.

What needs Spark to run — reads, DML, MERGE, CTAS, computed points, the audit views,
data in time travel — is fuzzed on Spark by tests/spark/test_fuzz_statements.py, with
the same checks.

Reproducible (a fixed seed per run, no example database). No shrinking: the examples share
the home, so a smaller example would not replay the failure; the failure message names
the statement and the ones before it instead. The home is on tmpfs where there is one:
the catalog commits every statement (with fsync) and the checks read it after each.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_grammar import actions
from fuzz_run import Run, without_local_constants
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.unit

# At least 3,000 statements in all; ``make test-fast`` asks for fewer (its recipe sets
# REWIND_FUZZ_STATEMENTS): the full fuzz is ~70 s of CPU, more than that target's minute.
STATEMENTS = int(os.environ.get("REWIND_FUZZ_STATEMENTS") or 3000)
RUNS = (1, 2)  # the runs' seeds
PER_RUN = STATEMENTS // len(RUNS)
ACTIONS_PER_EXAMPLE = 25
EXAMPLES = -(-PER_RUN // ACTIONS_PER_EXAMPLE)  # ~1.1 statements an action


@pytest.fixture
def fast_home(tmp_path: Path) -> Iterator[Path]:
    """A home on tmpfs (/dev/shm) if there is one, else under ``tmp_path``."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path / "home"
        return
    with tempfile.TemporaryDirectory(dir=shm, prefix="rewind-fuzz-") as folder:
        yield Path(folder) / "home"


@pytest.mark.parametrize("run_seed", RUNS)
def test_generated_statements_fail_cleanly_or_succeed_without_spark(
    fast_home: Path, run_seed: int
) -> None:
    """SPEC R28, R36, R37, R39: half of 3,000 generated statements or more (each run)
    from the whole grammar, as ADMIN and as ANALYST, each a success whose audit is its
    analysis, or a RewindError with a stable code that changed nothing, or stopped at
    Spark having changed nothing."""
    run = Run(fast_home, spark=False)
    action = actions(run.history)
    started = time.monotonic()

    @seed(run_seed)
    @settings(
        max_examples=EXAMPLES,
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
    assert counts["statements"] >= PER_RUN
    # The grammar reaches every outcome in bulk: successes (as ANALYST too), failures of
    # many kinds, refusals, and statements that would go on to Spark.
    assert counts["SUCCESS"] >= PER_RUN // 10
    assert counts["SUCCESS as ANALYST"] >= PER_RUN // 100
    assert counts["ACCESS_DENIED"] >= PER_RUN // 100
    assert counts["stopped at Spark"] >= PER_RUN // 20
    assert len(run.errors()) >= min(8, PER_RUN // 50), run.errors()
    assert counts["audit checked"] == counts["SUCCESS"] - counts["restored"]
