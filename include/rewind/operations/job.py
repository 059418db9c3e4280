"""``main(argv)`` of the restore Spark jobs (``spark_jobs/restore.py``,
``spark_jobs/validate_restore.py``), on the lifecycle jobs' harness (``--home``,
``--now``, ``--summary-file``, one JSON summary line)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rewind.lifecycle.job import finish, job_parser


def restore_main(argv: Sequence[str] | None = None) -> int:
    """Run one restore request (the ``validate_form`` task's XCom) as its user."""
    parser = job_parser("restore", "Rewind restore: undrop, clone or restore in place")
    parser.add_argument("--request", required=True, help="the request form (JSON)")
    args = parser.parse_args(argv)
    from rewind.operations.form import restore_request
    from rewind.operations.restore import run_restore

    return finish(
        args.summary_file,
        lambda: run_restore(args.home, restore_request(json.loads(args.request)), args.now),
    )


def validate_main(argv: Sequence[str] | None = None) -> int:
    """Validate what a restore produced (the ``restore`` task's XCom)."""
    parser = job_parser("validate_restore", "Rewind restore: row counts at the point")
    parser.add_argument("--outcome", required=True, help="the restore job's summary (JSON)")
    args = parser.parse_args(argv)
    from rewind.operations.restore import validate_restore

    return finish(
        args.summary_file,
        lambda: validate_restore(args.home, json.loads(args.outcome), args.now),
    )
