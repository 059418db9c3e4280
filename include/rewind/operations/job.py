"""``main(argv)`` of the restore's validation Spark job (``spark_jobs/validate_restore.py``),
on the lifecycle jobs' harness (``--home``, ``--now``, ``--summary-file``, one JSON
summary line).

Its arguments come from the task that submits it, derived from its own run
(:func:`rewind.operations.restore.job_arguments`), never from another task's XCom.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rewind.lifecycle.job import finish, job_parser


def validate_main(argv: Sequence[str] | None = None) -> int:
    """Validate what the run's restore produced, at most once."""
    from rewind.connection import RunKey
    from rewind.operations.form import restore_request
    from rewind.operations.restore import VALIDATE, validate_restore

    parser = job_parser("validate_restore", "Rewind restore: rows at the point")
    parser.add_argument("--request", required=True, help="the checked request (JSON)")
    parser.add_argument("--dag-id", required=True, help="the Airflow run's DAG")
    parser.add_argument("--dag-run-id", required=True, help="the Airflow run's id")
    args = parser.parse_args(argv)
    key = RunKey(args.dag_id, args.dag_run_id, VALIDATE)

    def action() -> dict[str, Any]:
        return validate_restore(args.home, restore_request(json.loads(args.request)), args.now, key)

    return finish(args.summary_file, action)
