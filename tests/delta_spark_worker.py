"""A plain delta-spark engine that runs the tests' other-engine jobs (tests/other_engines.py).

No Rewind code: pyspark and delta-spark only, started with the SparkSession a data
team's own job starts with (examples/orders_job.py's ``session``), in a process and a
JVM of its own. It reads jobs from stdin, one JSON line each (``{"path": ..., "body":
...}``), and runs each job's Python ``body`` with ``spark`` (a new SparkSession of its
own: its own SQL settings and temporary views), ``path`` and ``DeltaTable`` in scope.
It answers on its own stdout, one JSON line a job: ``{"ok": true, "out": <what the job
printed>}`` or ``{"ok": false, "out": ..., "error": <traceback>}``; the JVM's and
Spark's output go to stderr. It ends when stdin closes.

One long-lived engine instead of a process and a JVM per job: a JVM start is ~10 s of
the suite, and the jobs are the same plain delta-spark a separate process starts.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def main() -> None:
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the JVM inherits fd 1: its output must not reach the replies
    sys.path.insert(0, str(EXAMPLES))
    from delta.tables import DeltaTable
    from orders_job import session

    base = session("team-job")
    replies.write(json.dumps({"ok": True, "out": "ready"}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        scope = {"spark": base.newSession(), "path": job["path"], "DeltaTable": DeltaTable}
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(job["body"], "<job>", "exec"), scope)
            reply = {"ok": True, "out": printed.getvalue()}
        except BaseException:  # the job's failure is the test's to report, not the engine's
            reply = {"ok": False, "out": printed.getvalue(), "error": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
