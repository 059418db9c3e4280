"""Where the suite's time went (issue 26), from the timeline the tests' conftest writes.

Reads ``.pytest_cache/timeline/<worker>.jsonl`` (every phase of every test: worker, start,
stop) of the last run and prints, as JSON: the run's wall time; per worker its busy time
and when it finished (a worker that ends early while another still runs a long group is
time the suite could get back by splitting that group); and the modules that took the
most worker time, setup and teardown included. A run with ``REWIND_SUITE_CPU=1`` also
recorded each phase's CPU seconds (the worker's process tree, ``tests/conftest.py``):
then the modules that used the most CPU too, which on a 2-core machine is what bounds
the suite.

    python benchmarks/suite_timeline.py [--top 25] [--out benchmarks/results/suite_timeline.json]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeline", type=Path, default=REPO / ".pytest_cache" / "timeline")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    phases = [
        json.loads(line)
        for path in sorted(args.timeline.glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    if not phases:
        raise SystemExit(f"no timeline under {args.timeline}: run the tests first")
    begin = min(p["start"] for p in phases)
    end = max(p["stop"] for p in phases)
    workers: dict[str, dict[str, float]] = defaultdict(lambda: {"busy_s": 0.0, "last_stop_s": 0.0})
    modules: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    for phase in phases:
        spent = phase["stop"] - phase["start"]
        worker = workers[phase["worker"]]
        worker["busy_s"] += spent
        worker["last_stop_s"] = max(worker["last_stop_s"], phase["stop"] - begin)
        modules[phase["test"].split("::")[0]] += spent
        if "cpu_s" in phase:
            cpu[phase["test"].split("::")[0]] += phase["cpu_s"]
    report = {
        "wall_s": round(end - begin, 1),
        "workers": {
            name: {key: round(value, 1) for key, value in sorted(found.items())}
            for name, found in sorted(workers.items())
        },
        "modules_by_worker_time_s": {
            name: round(spent, 1)
            for name, spent in sorted(modules.items(), key=lambda item: -item[1])[: args.top]
        },
    }
    if cpu:
        report["cpu_s"] = round(sum(cpu.values()), 1)
        report["modules_by_cpu_s"] = {
            name: round(used, 1)
            for name, used in sorted(cpu.items(), key=lambda item: -item[1])[: args.top]
        }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
