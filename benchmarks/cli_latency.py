"""Wall time of each kind of ``rewind`` CLI call, side by side (issues 14 and 26).

- ``warm``: the home's Spark Connect server runs and so does the resident Rewind process
  (rewind/launcher.py, rewind/resident.py) that the command hands its call to: what
  every call after the first costs.
- ``warm_in_process``: the same Spark server, the call in the command's own process
  (``REWIND_CLI_SERVER=off``): the baseline before issue 26, every import paid per call.
- ``cold_server``: no Spark server runs (``rewind server stop`` before each sample,
  untimed): the call starts one, as the first call of a day does.
- ``in_process``: ``REWIND_SPARK_SERVER=off`` and ``REWIND_CLI_SERVER=off``, each call
  starts its own Spark (how every call ran before issue 14).

Baselines: ``python -c pass`` (the floor any Python command pays) and ``rewind --help``
(the command's own start-up, in process). Each mode has a home of its own with the same
small table; each sample runs in a subprocess; the resident process lives in a runtime
directory of the benchmark's own (stopped at the end), and its resident and proportional
memory (RSS, PSS) are recorded. Medians and spread go to benchmarks/results/
cli_latency.json, with the machine's load average before and after the run and a warm
``SELECT ... AT`` over a warm DDL call (issue 26's target: 1.5; DDL's: under 0.6 s).

The calls read Rewind's compiled bytecode, compiled once before the run: an installed
package has it, and Python writes it at a checkout's first call, unless
``PYTHONDONTWRITEBYTECODE`` is set (as in this machine's shells), under which every call
would compile its ~100 modules again (~0.1 s; ``--no-bytecode`` measures that: no
bytecode of Rewind's, none written).

    .venv/bin/python benchmarks/cli_latency.py [--repeat N] [--modes warm warm_in_process ...]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from report import write_report

from rewind import launcher, resident

BIN = Path(sys.executable).parent
PACKAGE = Path(__file__).resolve().parents[1] / "include" / "rewind"
REWIND = str(BIN / "rewind")
NOW = "2026-11-01T00:00:00+00:00"
LATER = "2026-11-01T01:00:00+00:00"

SETUP = "CREATE DATABASE bench; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (1, 'a')"
CALLS = {
    "ddl": ["sql", "USE bench; CREATE OR REPLACE TABLE d (id INT)"],
    "dml": ["sql", "USE bench; INSERT INTO t VALUES (2, 'b')"],
    "select": ["sql", "USE bench; SELECT count(*) FROM t"],
    "select_at": ["sql", "USE bench; SELECT count(*) FROM t AT(OFFSET => -1800)"],
    "clone": ["sql", "USE bench; CREATE OR REPLACE TABLE c CLONE t AT(OFFSET => -1800)"],
}
# The lifecycle sample has work to do: before it (untimed) a row is inserted and deleted,
# and the run two days later moves the removed file into fail-safe with Spark (retention
# 1 day). Each sample is a week after the one before (the clock never runs backwards).
CHURN = "USE bench; INSERT INTO t VALUES (3, 'c'); DELETE FROM t WHERE id = 3"
MODES = {
    "warm": {},
    "warm_in_process": {"REWIND_CLI_SERVER": "off"},
    "cold_server": {},
    "in_process": {"REWIND_SPARK_SERVER": "off", "REWIND_CLI_SERVER": "off"},
}
RUNTIME = Path(tempfile.mkdtemp(prefix="rewind-bench-run-"))  # the resident process's


def rewind(home: Path, mode: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    command = [REWIND, "--home", str(home), *args]
    done = subprocess.run(
        command, check=True, capture_output=True, text=True, env=env | MODES[mode]
    )
    return done.stdout


def resident_memory() -> dict[str, float]:
    """The resident process's memory, once it serves (the first call started it)."""
    path = launcher.socket_path()
    deadline = time.monotonic() + 120
    while (pid := resident.serving(path)) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid is not None, f"no resident process serves {path}"
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    kb = {line.split(":")[0]: int(line.split()[1]) for line in rollup[1:]}
    return {"rss_mb": round(kb["Rss"] / 1024, 1), "pss_mb": round(kb["Pss"] / 1024, 1)}


def day(n: int) -> str:
    return (datetime.fromisoformat(NOW) + timedelta(days=n)).isoformat()


def measure(
    sample: Callable[[], object], repeat: int, before: Callable[[], object] | None = None
) -> dict[str, float]:
    """``sample``'s wall time, ``repeat`` times, each after ``before`` (untimed)."""
    samples = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        sample()
        samples.append(time.perf_counter() - start)
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "max_s": round(max(samples), 3),
        "runs": repeat,
    }


def cold(home: Path, mode: str) -> None:
    """Before a ``cold_server`` sample: no server runs."""
    if mode == "cold_server":
        rewind(home, mode, "server", "stop")


def measure_lifecycle(home: Path, mode: str, repeat: int) -> dict[str, float]:
    """``rewind lifecycle run`` two days after a churn (untimed) that it expires."""
    days = [7 * (n + 1) for n in range(repeat)]
    churned: list[int] = []

    def churn() -> None:
        churned.append(days[len(churned)])
        rewind(home, mode, "--now", day(churned[-1]), "sql", CHURN)
        cold(home, mode)

    def run() -> None:
        out = rewind(
            home, mode, "--now", day(churned[-1] + 2), "lifecycle", "run", "--format", "json"
        )
        moved.append(next(s for s in json.loads(out) if s["step"] == "expire_versions"))

    moved: list[dict[str, int]] = []

    timed = measure(run, repeat, churn)
    assert all(step["files_moved"] >= 1 for step in moved), moved  # Spark moved files each run
    return timed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--no-bytecode", action="store_true", help="every call compiles Rewind's modules"
    )
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=list(MODES),
        default=list(MODES),
        help="the ways to run a call to measure (default: all; warm is always one)",
    )
    args = parser.parse_args(argv)
    modes = list(dict.fromkeys(["warm", *args.modes]))
    if args.no_bytecode:
        for cache in PACKAGE.rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        compileall.compile_dir(PACKAGE, quiet=1)
    os.environ["XDG_RUNTIME_DIR"] = str(RUNTIME)  # every call's, the benchmark's too
    load_before = os.getloadavg()
    homes = {
        mode: Path(tempfile.mkdtemp(prefix=f"rewind-bench-{mode}-")) / "home" for mode in modes
    }
    results: dict[str, dict[str, dict[str, float]]] = {
        "baseline_python_startup": {
            "any": measure(lambda: subprocess.run([sys.executable, "-c", "pass"]), args.repeat)
        },
        "baseline_rewind_help": {
            "any": measure(
                lambda: subprocess.run(
                    [REWIND, "--help"],
                    capture_output=True,
                    env={**os.environ, **MODES["warm_in_process"]},
                ),
                args.repeat,
            )
        },
    }
    try:
        for mode, home in homes.items():
            rewind(home, mode, "--now", NOW, "sql", SETUP)
        for mode in ("warm", "warm_in_process"):
            if mode in homes:
                rewind(homes[mode], mode, "server", "start")
        memory = resident_memory()
        for kind, call in CALLS.items():
            results[kind] = {}
            for mode, home in homes.items():
                results[kind][mode] = measure(
                    lambda h=home, m=mode, c=call: rewind(h, m, "--now", LATER, *c),
                    args.repeat,
                    lambda h=home, m=mode: cold(h, m),
                )
        results["lifecycle"] = {
            mode: measure_lifecycle(home, mode, args.repeat) for mode, home in homes.items()
        }
    finally:
        for home in homes.values():
            rewind(home, "warm", "server", "stop")
            shutil.rmtree(home.parent, ignore_errors=True)
        for path in RUNTIME.glob("rewind-cli-*/*.sock"):
            resident.stop(path)
        shutil.rmtree(RUNTIME, ignore_errors=True)
    ratios = {
        mode: round(results["select_at"][mode]["median_s"] / results["ddl"][mode]["median_s"], 2)
        for mode in modes
        if mode.startswith("warm")
    }
    write_report(
        "cli_latency",
        {
            "modes": modes,
            "bytecode": "none: compiled by every call" if args.no_bytecode else "compiled first",
            "load_average_1_5_15_min": {
                "before": [round(x, 2) for x in load_before],
                "after": [round(x, 2) for x in os.getloadavg()],
            },
            "warm_select_at_over_ddl": ratios,
            "warm_ddl_s": results["ddl"]["warm"]["median_s"],
            "resident_process_memory": memory,
            "results": results,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
