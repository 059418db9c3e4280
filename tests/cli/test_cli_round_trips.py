"""What a warm ``rewind sql`` call asks its Spark Connect server (issue 26): a query's
table versions travel inside its plan, so a ``SELECT ... AT`` is one ExecutePlan (no
temporary view created or dropped, no separate schema request, no SqlCommand before it,
no ReleaseExecute on a loopback server), and the text around them reaches Spark as
written, braces included.

The call runs in a child process whose Connect stub counts its calls by method.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import at, rows

from rewind.spark import SESSION_CONF

pytestmark = pytest.mark.cli

COUNTED_CALL = """
import collections, json, sys
import pyspark.sql.connect.proto.base_pb2_grpc as grpc_stubs

calls = collections.Counter()
plain_init = grpc_stubs.SparkConnectServiceStub.__init__

def counting_init(stub, channel):
    plain_init(stub, channel)
    for method, call in list(vars(stub).items()):
        def counted(*args, _call=call, _method=method, **kwargs):
            calls[_method] += 1
            return _call(*args, **kwargs)
        setattr(stub, method, counted)

grpc_stubs.SparkConnectServiceStub.__init__ = counting_init
from rewind.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "calls": calls}), file=sys.stderr)
"""


def counted_call(home: Path, remote: str, now: str, text: str) -> tuple[list, Counter[str]]:
    """``rewind sql --format json text`` on ``remote``: its results and its Connect calls."""
    script = home.parent / "counted_call.py"  # a file: pyspark treats `python -c` as doctests
    script.write_text(COUNTED_CALL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    command = [sys.executable, str(script), "--home", str(home), "--now", now]
    done = subprocess.run(
        [*command, "sql", "--format", "json", text],
        capture_output=True,
        text=True,
        env={**env, "REWIND_SPARK_REMOTE": remote},
        timeout=300,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return json.loads(done.stdout), Counter(report["calls"])


def test_a_select_at_is_one_query_on_the_server(home: Path, spark_remote: str, sql) -> None:
    sql("CREATE DATABASE d; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (1, '{a}')")
    sql("USE d; UPDATE t SET v = v || '}{' WHERE id = 1", hours=1)
    results, calls = counted_call(
        home,
        spark_remote,
        at(hours=2),
        "USE d; SELECT id, v, '{0}' AS braces, '`__rw_x`' AS quoted FROM t AT(OFFSET => -5400)",
    )
    assert rows(results[-1]) == [{"ID": 1, "V": "{a}", "BRACES": "{0}", "QUOTED": "`__rw_x`"}]
    # The session's settings (Config: one call each on a server the user names, as here,
    # none on the home's own; no look-up of pyspark's plan compression), the query, then
    # the session's end.
    assert calls == Counter(Config=len(SESSION_CONF), ExecutePlan=1, ReleaseSession=1)


def test_a_chain_and_a_merge_read_their_frames(home: Path, spark_remote: str, sql) -> None:
    """Frames of earlier results (``->>``) and a MERGE's several queries over one target."""
    sql("CREATE DATABASE d; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (1, 'a')")
    results, _ = counted_call(
        home,
        spark_remote,
        at(hours=1),
        "USE d; MERGE INTO t USING (SELECT 1 AS id, '{m}' AS v UNION ALL SELECT 2, '{n}') s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v); "
        "SELECT * FROM t ->> SELECT v FROM $1 WHERE id = 2",
    )
    assert rows(results[1]) == [
        {"number of rows inserted": 1, "number of rows updated": 1, "number of rows deleted": 0}
    ]
    assert rows(results[-1]) == [{"V": "{n}"}]
