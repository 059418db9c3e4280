"""The shared ``main(argv)`` of the Spark entry points in ``spark_jobs/``.

argparse -> the Spark session from the one factory -> one lifecycle step -> one JSON
summary line on stdout (the Airflow task's XCom).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from rewind.clock import parse_timestamp
from rewind.config import Config
from rewind.errors import RewindError


def main(step: str, argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=step, description=f"Rewind lifecycle step {step}")
    parser.add_argument("--home", required=True, help="the Rewind home")
    parser.add_argument("--now", required=True, help="the run's clock (ISO 8601)")
    parser.add_argument("--run-id", required=True, help="the lifecycle run id")
    args = parser.parse_args(argv)
    from rewind.lifecycle.runner import run_step

    try:
        summary = run_step(
            Config.load(home=args.home), step, args.run_id, parse_timestamp(args.now)
        )
    except RewindError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    print(json.dumps(summary))
    return 0
