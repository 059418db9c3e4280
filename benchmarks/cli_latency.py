"""Wall time of each kind of ``rewind`` CLI call on a fresh home.

Baseline: ``python -c pass`` with the same interpreter (the floor any Python CLI pays)
and ``rewind --help`` (import cost of the command itself). Each kind of call runs
REPEAT times in a subprocess, from the same process tree; the median and spread go
to benchmarks/results/cli_latency.json.

    .venv/bin/python benchmarks/cli_latency.py [--repeat N] [--compare DIR]

``--compare DIR`` also measures the ``include/`` of another checkout (say the commit
before a change, ``git worktree add /tmp/before <commit>``) with the same interpreter and
packages, each call kind of both side by side in the same run, on a home of its own.
"""

from __future__ import annotations

import argparse
import os
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


def run(code: str | None, command: list[str]) -> None:
    """``command`` with ``code`` (an ``include/`` directory) first on the import path."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = code
    subprocess.run(command, check=True, capture_output=True, env=env)


def timed(code: str | None, command: list[str]) -> float:
    start = time.perf_counter()
    run(code, command)
    return time.perf_counter() - start


def measure(code: str | None, command: list[str], repeat: int) -> dict[str, float]:
    samples = [timed(code, command) for _ in range(repeat)]
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "max_s": round(max(samples), 3),
        "runs": repeat,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compare", type=Path, help="a checkout whose include/ to measure too")
    args = parser.parse_args(argv)
    codes = {"this_checkout": None}
    if args.compare is not None:
        codes["compared"] = str((args.compare / "include").resolve())
    homes = {code: Path(tempfile.mkdtemp(prefix=f"rewind-bench-{code}-")) for code in codes}
    try:
        for code, path in codes.items():
            run(path, [REWIND, "--home", str(homes[code]), "--now", NOW, "sql", SETUP])
        results: dict[str, dict[str, dict[str, float]]] = {
            "baseline_python_startup": {
                "any": measure(None, [sys.executable, "-c", "pass"], args.repeat)
            },
            "baseline_rewind_help": {"any": measure(None, [REWIND, "--help"], args.repeat)},
        }
        for kind, sql in CALLS.items():
            results[kind] = {
                code: measure(
                    path,
                    [REWIND, "--home", str(homes[code]), "--now", LATER, "sql", sql],
                    args.repeat,
                )
                for code, path in codes.items()
            }
    finally:
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)
    write_report("cli_latency", {"compared": codes.get("compared"), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
