"""Wall time of each kind of ``rewind`` CLI call on a fresh home.

Baseline: ``python -c pass`` with the same interpreter (the floor any Python CLI pays)
and ``rewind --help`` (import cost of the command itself). Each kind of call runs
REPEAT times in a subprocess, from the same process tree; the median and spread go
to benchmarks/results/cli_latency.json.

    .venv/bin/python benchmarks/cli_latency.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import write_report

BIN = Path(sys.executable).parent
REWIND = str(BIN / "rewind")
NOW = "2026-11-01T00:00:00+00:00"
LATER = "2026-11-01T01:00:00+00:00"

SETUP = "CREATE DATABASE bench; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (1, 'a')"
CALLS = {
    "ddl": "USE bench; CREATE OR REPLACE TABLE d (id INT)",
    "dml": "USE bench; INSERT INTO t VALUES (2, 'b')",
    "select": "USE bench; SELECT count(*) FROM t",
    "select_at": "USE bench; SELECT count(*) FROM t AT(OFFSET => -1800)",
}


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def measure(command: list[str], repeat: int) -> dict[str, float]:
    samples = [timed(command) for _ in range(repeat)]
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "max_s": round(max(samples), 3),
        "runs": repeat,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="rewind-bench-"))
    try:
        subprocess.run(
            [REWIND, "--home", str(home), "--now", NOW, "sql", SETUP],
            check=True,
            capture_output=True,
        )
        results = {
            "baseline_python_startup": measure([sys.executable, "-c", "pass"], args.repeat),
            "baseline_rewind_help": measure([REWIND, "--help"], args.repeat),
        }
        for kind, sql in CALLS.items():
            command = [REWIND, "--home", str(home), "--now", LATER, "sql", sql]
            results[kind] = measure(command, args.repeat)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    write_report("cli_latency", {"results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
