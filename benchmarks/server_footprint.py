"""What a home's idle Spark Connect server holds and what it saves (issue 26).

Per variant of the server's JVM, on a home with one small table:

- ``cold_call_s``: ``rewind sql "SELECT count(*) ..."`` with no server running (the call
  starts the home's server, as the first call after an idle stop does);
- ``warm_call_s``: the same call with the server running;
- ``jvm_rss_mb_active``: the JVM's resident memory (``VmRSS`` of ``/proc/<pid>/status``)
  after those calls and one call of some work (inserts, an update, a delete, a clone, a
  time-travel read); ``jvm_rss_mb_idle``: after ``--idle`` seconds without a statement
  (what a forgotten server holds); ``jvm_cpu_s_idle``: the CPU time the JVM used while
  idle; ``supervisor_rss_mb``: its Python supervisor.

Variants (environment of the server's start): ``default`` (Rewind's settings; Spark's
driver heap cap is 1g), ``heap_512m`` (``SPARK_DRIVER_MEMORY=512m``), and ``g1_uncommit``
(``-Xms64m -XX:G1PeriodicGCInterval=10000``: an idle G1 collects every 10 s and gives the
heap above 64 MB back to the OS). Medians over ``--repeat``; results in
benchmarks/results/server_footprint.json.

    .venv/bin/python benchmarks/server_footprint.py [--repeat N] [--idle SECONDS]
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
LATER = "2026-11-01T01:00:00+00:00"  # every call after the set-up
SETUP = "CREATE DATABASE bench; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (1, 'a')"
CALL = "USE bench; SELECT count(*) FROM t"
WORK = "; ".join(
    ["USE bench"]
    + [f"INSERT INTO t VALUES ({n}, 'v{n}')" for n in range(2, 22)]
    + [
        "UPDATE t SET v = 'w' WHERE id < 5",
        "DELETE FROM t WHERE id = 7",
        "CREATE OR REPLACE TABLE c CLONE t",
        "SELECT v, count(*) FROM c GROUP BY v ORDER BY v",
        "SELECT count(*) FROM t AT(OFFSET => -1800)",
    ]
)
VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "heap_512m": {"SPARK_DRIVER_MEMORY": "512m"},
    "g1_uncommit": {"SPARK_SUBMIT_OPTS": "-Xms64m -XX:G1PeriodicGCInterval=10000"},
}


def rewind(home: Path, env: dict[str, str], *args: str) -> float:
    """One ``rewind`` call's wall time (it must succeed)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    start = time.perf_counter()
    subprocess.run(
        [REWIND, "--home", str(home), *args], check=True, capture_output=True, env=base | env
    )
    return time.perf_counter() - start


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise LookupError(pid)


def cpu_s(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample(home: Path, env: dict[str, str], idle: int) -> dict[str, float]:
    from rewind import spark_server

    rewind(home, env, "server", "stop")
    cold = rewind(home, env, "--now", LATER, "sql", CALL)
    warm = statistics.median(rewind(home, env, "--now", LATER, "sql", CALL) for _ in range(3))
    rewind(home, env, "--now", LATER, "sql", WORK)
    endpoint = spark_server.running(home)
    assert endpoint is not None
    active, busy = rss_mb(endpoint.jvm), cpu_s(endpoint.jvm)
    time.sleep(idle)
    return {
        "cold_call_s": cold,
        "warm_call_s": warm,
        "jvm_rss_mb_active": active,
        "jvm_rss_mb_idle": rss_mb(endpoint.jvm),
        "jvm_cpu_s_idle": cpu_s(endpoint.jvm) - busy,
        "supervisor_rss_mb": rss_mb(endpoint.supervisor),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--idle", type=int, default=60, help="seconds idle before the RSS probe")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS))
    args = parser.parse_args(argv)
    results: dict[str, dict[str, float]] = {}
    for name in args.variants:
        env = VARIANTS[name]
        home = Path(tempfile.mkdtemp(prefix=f"rewind-footprint-{name}-")) / "home"
        try:
            rewind(home, env, "--now", NOW, "sql", SETUP)
            samples = [sample(home, env, args.idle) for _ in range(args.repeat)]
        finally:
            rewind(home, env, "server", "stop")
            shutil.rmtree(home.parent, ignore_errors=True)
        results[name] = {
            key: round(statistics.median(s[key] for s in samples), 2) for key in samples[0]
        } | {"runs": args.repeat}
    load = [round(figure, 1) for figure in os.getloadavg()]  # other work on the machine
    write_report(
        "server_footprint", {"idle_probe_s": args.idle, "load_avg_at_end": load, "results": results}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
