"""``main(argv)`` of the restore Spark jobs (``spark_jobs/restore.py``,
``spark_jobs/validate_restore.py``), on the lifecycle jobs' harness (``--home``,
``--now``, ``--summary-file``, one JSON summary line).

Their arguments come from the task that submits them, derived from its own run
(:func:`rewind.operations.restore.job_arguments`), never from another task's XCom.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from rewind.lifecycle.job import finish, job_parser


def restore_main(argv: Sequence[str] | None = None) -> int:
    """Run the run's restore request as its user, at most once."""
    from rewind.operations.restore import run_restore

    return _main("restore", "Rewind restore: undrop, clone or restore in place", run_restore, argv)


def validate_main(argv: Sequence[str] | None = None) -> int:
    """Validate what the run's restore produced, at most once."""
    from rewind.operations.restore import validate_restore

    return _main("validate_restore", "Rewind restore: rows at the point", validate_restore, argv)


def _main(
    prog: str, description: str, action: Callable[..., dict[str, Any]], argv: Sequence[str] | None
) -> int:
    parser = job_parser(prog, description)
    parser.add_argument("--request", required=True, help="the checked request (JSON)")
    parser.add_argument("--dag-id", required=True, help="the Airflow run's DAG")
    parser.add_argument("--dag-run-id", required=True, help="the Airflow run's id")
    args = parser.parse_args(argv)
    from rewind.connection import RunKey
    from rewind.operations.form import restore_request
    from rewind.operations.restore import RESTORE, VALIDATE

    key = RunKey(args.dag_id, args.dag_run_id, RESTORE if prog == "restore" else VALIDATE)
    return finish(
        args.summary_file,
        lambda: action(args.home, restore_request(json.loads(args.request)), args.now, key),
    )
