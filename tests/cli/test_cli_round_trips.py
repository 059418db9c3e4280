"""What a warm ``rewind sql`` call asks its Spark Connect server (issue 26): a query's
table versions travel inside its plan, so a ``SELECT ... AT`` is one ExecutePlan (no
temporary view created or dropped, no separate schema request, no SqlCommand before it,
no ReleaseExecute on a loopback server), and the text around them reaches Spark as
written, braces included.

The call runs in a child process whose Connect stub counts its calls by method
(cli_helpers.counted_call).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import at, counted_call, rows

from rewind.spark import SESSION_CONF

pytestmark = pytest.mark.cli


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
