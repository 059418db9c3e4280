"""The home's Spark Connect server (issue 14): started by the first ``rewind`` call that
needs Spark, reused by the next ones, stopped when idle or asked, owner-only, loopback
only, token required; a server killed between two statements is started again (CLI) or
reported as SPARK_UNAVAILABLE (library), never waited on; two homes never share one.

Every test here uses the home's own server (not the suite's REWIND_SPARK_REMOTE) and
stops it at the end. The tests that only read share one served home (a server start is
ten seconds of the suite); each starts it again if another test stopped it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from cli_helpers import DAY0, at, counted_call, rows, terminal
from other_engines import delta_rs_append, stamp
from sockets import LOOPBACK, listening

from rewind import spark_server
from rewind.errors import RewindError
from rewind.processes import process_runs
from rewind.spark import SESSION_CONF

pytestmark = pytest.mark.cli
SERVED = pytest.mark.xdist_group("cli_server")  # the tests of the shared served home

REWIND = str(Path(sys.executable).parent / "rewind")
SETUP = "CREATE DATABASE d; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (1, 'a')"


def run(home: Path, *args: str, env: dict[str, str] | None = None, **kw: Any) -> Any:
    """``rewind --home home args`` with the home's own server (no REWIND_* of the caller)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    return subprocess.run(
        [REWIND, "--home", str(home), *args],
        stdout=subprocess.PIPE,
        stderr=kw.pop("stderr", subprocess.PIPE),
        text=True,
        timeout=300,
        check=False,
        env=base | (env or {}),
        **kw,
    )


def sql(home: Path, text: str, days: float = 0, env: dict[str, str] | None = None) -> Any:
    done = run(home, "--now", at(days), "sql", "--format", "json", text, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def error(done: Any) -> str:
    assert done.returncode == 1, done.stdout
    (line,) = done.stderr.splitlines()
    return line


@pytest.fixture
def homes(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``homes(name)``: a fresh home whose server, if any, is stopped at the end."""
    made: list[Path] = []

    def make(name: str) -> Path:
        made.append(tmp_path / name)
        return made[-1]

    yield make
    for home in made:
        spark_server.stop(home)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A home whose first ``rewind sql`` call that needed Spark started its server."""
    home = tmp_path_factory.mktemp("served") / "home"
    assert "not running" in run(home, "server", "status").stdout
    first = run(home, "--now", at(0), "sql", SETUP)
    assert first.returncode == 0 and first.stderr == ""  # in a pipe the start says nothing
    assert spark_server.running(home) is not None
    yield home
    spark_server.stop(home)


def on_terminal(home: Path, *args: str, env: dict[str, str]) -> tuple[Any, bytes]:
    """``run`` with stderr on a terminal (stdout still a pipe); returns what the terminal
    showed (read while the command runs: a spinner of a slow start fills a pty's small
    buffer, and a command blocked writing to it would never end)."""
    with terminal() as (follower, shown):
        done = run(home, *args, env=env, stderr=follower)
    return done, bytes(shown)


@SERVED
def test_later_calls_reuse_the_server_owner_only_loopback_token(served: Path) -> None:
    home = served
    sql(home, "SELECT 1")  # started again if a test before stopped it
    first = spark_server.running(home)
    assert first is not None
    assert rows(sql(home, "SELECT id, v FROM d.public.t AT(OFFSET => -1)", days=0.1)[0]) == [
        {"ID": 1, "V": "a"}
    ]
    assert spark_server.running(home) == first  # reused, not started again
    # Snowflake's flow operator over a result with no row (it failed on a Connect session)
    flow = 'SHOW TABLES LIKE \'NONE%\' ->> SELECT "name", "rows" FROM $1'
    (result,) = sql(home, flow)  # the chain shows its last result only
    assert (result["columns"], result["rows"]) == (["name", "rows"], [])
    # SPEC R39: Spark's failures on the server keep their codes, in one line on stderr.
    for text, code in [
        ("SELECT nope FROM d.public.t", "SQL_COMPILATION_ERROR"),
        ("SELECT CAST(v AS INT) FROM d.public.t", "INVALID_VALUE"),  # Snowflake's words
    ]:
        assert error(run(home, "sql", text)).startswith(f"error: {code}: "), text
    before = set((home / "warehouse").glob("*/*.parquet"))
    sql(home, "CREATE TABLE d.public.b (id INT); INSERT INTO d.public.b VALUES (1)", days=0.05)
    (data,) = set((home / "warehouse").glob("*/*.parquet")) - before
    data.write_bytes(b"not parquet")
    broken = error(run(home, "sql", "SELECT * FROM d.public.b"))
    assert broken == f"error: STORAGE_ERROR: Cannot read data file {data} (table D.PUBLIC.B)."
    assert spark_server.running(home) == first
    assert f"127.0.0.1:{first.port}" in run(home, "server", "status").stdout
    # SPEC R38: the token is the owner's alone; the server answers on loopback only.
    state = home / "server" / "state.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "server").stat().st_mode) == 0o700
    addresses = listening(first.jvm)
    assert addresses and set(addresses) <= LOOPBACK, addresses
    # The token travels in the JVM's environment, never on its command line.
    assert first.token not in Path(f"/proc/{first.jvm}/cmdline").read_text()
    # A client without the token, or with another one, gets nothing done.
    for url in (f"sc://localhost:{first.port}", f"sc://localhost:{first.port}/;token=guess"):
        refused = run(home, "sql", "SELECT 1", env={"REWIND_SPARK_REMOTE": url})
        assert error(refused).startswith("error: SPARK_UNAVAILABLE: "), refused.stderr


@SERVED
def test_views_and_pins_are_gone_after_each_statement_even_a_failed_one_r19(served: Path) -> None:
    import rewind

    home = served
    sql(home, "SELECT 1")  # started again if a test before stopped it
    endpoint = spark_server.running(home)
    with rewind.connect(home=home, now=at(0.1)) as conn:
        conn.sql("SELECT * FROM d.public.t AT(OFFSET => -60) JOIN d.public.t u USING (id)")
        with pytest.raises(RewindError) as failed:
            conn.sql("SELECT 1 / (id - 1) FROM d.public.t AT(OFFSET => -60)")
        assert (failed.value.code, failed.value.message) == ("INVALID_VALUE", "Division by zero.")
        assert conn.sql("SELECT COUNT(*) FROM d.public.t")[-1].rows == [[1]]
        spark = conn.spark()
        assert spark_server.running(home) == endpoint  # the statements ran on the server
        assert type(spark).__module__.startswith("pyspark.sql.connect")
        assert spark.catalog.listTables() == []  # no temporary view left
        # The server's sessions have Rewind's settings (SPEC R4 names, R38 no path reads).
        for key, value in SESSION_CONF.items():
            assert spark.conf.get(key) == value, key
        # Its driver's own ports (RPC, blocks) want Spark's authentication (SPEC R38).
        assert spark.conf.get("spark.authenticate") == "true"
        assert (home / "pins").is_dir()  # the AT reads were pinned (SPEC R19) ...
        assert not any((home / "pins").glob("*.json"))  # ... and released


@SERVED
def test_two_homes_never_share_a_server_and_the_lifecycle_runs_on_it_r29(
    served: Path, homes: Callable[[str], Path]
) -> None:
    one, two = served, homes("two")
    sql(one, "SELECT 1")  # started again if a test before stopped it
    sql(two, "CREATE DATABASE d; CREATE TABLE t (id INT, v VARCHAR); INSERT INTO t VALUES (2, 'b')")
    a, b = spark_server.running(one), spark_server.running(two)
    assert a is not None and b is not None
    assert (a.port, a.token, a.jvm) != (b.port, b.token, b.jvm)
    assert a.token != b.token
    # One home's token does not open the other's server.
    crossed = run(
        one,
        "sql",
        "SELECT 1",
        env={"REWIND_SPARK_REMOTE": f"sc://localhost:{b.port}/;token={a.token}"},
    )
    assert error(crossed).startswith("error: SPARK_UNAVAILABLE: ")
    assert rows(sql(one, "SELECT count(*) AS n FROM d.public.t", days=0.1)[0]) == [{"N": 1}]
    assert rows(sql(two, "SELECT id FROM d.public.t")[0]) == [{"ID": 2}]
    # The lifecycle's file operations run on the home's server too (mapInArrow, no RDD).
    sql(two, "DELETE FROM d.public.t", days=0.1)
    done = run(two, "--now", at(40), "lifecycle", "run", "--format", "json")
    assert done.returncode == 0, done.stderr
    steps = {s["step"]: s for s in json.loads(done.stdout)}
    assert steps["expire_versions"]["files_moved"] == 1  # into fail-safe, on the executors
    assert steps["purge_failsafe"]["files_purged"] == 1  # 40 days: past fail-safe too
    assert spark_server.running(two) == b


@SERVED
def test_calls_share_the_servers_session_yet_each_reads_the_table_as_it_is_r36_r40(
    served: Path, tmp_path: Path
) -> None:
    """Issue 26: the calls on a home's server share one Spark session of the server's (a
    session per call built its state and compiled the query's code again each time). It
    keeps nothing of a call's: a query reads the version its statement resolved, so
    another writer's commit between two calls is read by the next (SPEC R40) while the
    version before stays readable; two calls run in it side by side; a call's end leaves
    it to the next, and its query is its one request; every statement is still audited
    (SPEC R36)."""
    home = served
    sql(home, "SELECT 1")  # started again if a test before stopped it
    endpoint = spark_server.running(home)
    assert endpoint is not None and endpoint.session
    lake = tmp_path / "lake"  # another engine's table (delta-rs), registered where it is
    delta_rs_append(lake, {"id": pa.array([1], pa.int32())})
    stamp(lake, 0, DAY0 + timedelta(days=1))
    table = f"CREATE EXTERNAL TABLE d.public.x LOCATION = '{lake.as_uri()}' TABLE_FORMAT = DELTA"
    sql(home, table, days=1.1)
    count = "SELECT count(*) AS n FROM d.public.x"
    first = sql(home, count, days=1.2)
    assert rows(first[0]) == [{"N": 1}]
    delta_rs_append(lake, {"id": pa.array([2], pa.int32())})  # the other writer's commit
    stamp(lake, 1, DAY0 + timedelta(days=1.3))
    then = f"{count} AT(OFFSET => -{int(0.15 * 86400)})"  # day 1.25: before that commit
    again = sql(home, f"{count}; {then}", days=1.4)
    assert [rows(r) for r in again] == [[{"N": 2}], [{"N": 1}]]
    side_by_side = [
        subprocess.Popen(
            [REWIND, "--home", str(home), "--now", at(1.4), "sql", "--format", "json", text],
            stdout=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("REWIND_")},
        )
        for text in (count, then)
    ]
    answers = [json.loads(call.communicate(timeout=300)[0]) for call in side_by_side]
    assert [rows(a[0]) for a in answers] == [[{"N": 2}], [{"N": 1}]]
    # On the home's own server a call's query is its one request: no session settings,
    # no release of the session at its end (the session is the server's).
    counted, calls = counted_call(home, None, at(1.4), then)
    assert rows(counted[0]) == [{"N": 1}]
    assert calls == Counter(ExecutePlan=1)
    assert spark_server.running(home) == endpoint  # all of it on the same server
    # No call ended the shared session: a client in it still runs a query.
    from rewind.spark import query, remote_spark, to_arrow

    spark = remote_spark(endpoint.session_url, configure=False, shared=True)
    try:
        assert to_arrow(query(spark, "SELECT 1 AS one", {})).to_pylist() == [{"one": 1}]
    finally:
        spark.stop()
    # SPEC R36: each SELECT has its ACCESS_HISTORY row, naming the table it read.
    ids = [r["query_id"] for r in [*first, *again, *(a[0] for a in answers)]]
    history = sql(
        home,
        "SELECT query_id, base_objects_accessed FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY "
        f"WHERE query_id IN ({', '.join(repr(i) for i in ids)})",
        days=1.5,
    )
    read = {r["QUERY_ID"]: r["BASE_OBJECTS_ACCESSED"] for r in rows(history[0])}
    assert set(read) == set(ids)
    names = [[json.loads(o)["objectName"] for o in objects] for objects in read.values()]
    assert names == [["D.PUBLIC.X"]] * len(ids)


@SERVED
def test_stop_by_hand(served: Path) -> None:
    home = served
    sql(home, "SELECT 1")  # started again if a test before stopped it
    assert "stopped" in run(home, "server", "stop").stdout
    assert spark_server.running(home) is None
    assert not (home / "server" / "state.json").exists()
    assert "not running" in run(home, "server", "status").stdout


LIBRARY = """
import os, signal, sys
import rewind
from rewind import spark_server
from rewind.errors import RewindError
conn = rewind.connect(home=sys.argv[1], now=sys.argv[2])
print(conn.sql("SELECT count(*) FROM d.public.t")[0].rows, flush=True)
os.kill(spark_server.running(conn.config.home).jvm, signal.SIGKILL)
for _ in range(2):
    try:
        conn.sql("SELECT count(*) FROM d.public.t")
    except RewindError as exc:
        print(exc.code, flush=True)
"""


def test_a_killed_server_is_reported_by_a_session_started_again_by_the_cli_idle_stops(
    homes: Callable[[str], Path],
) -> None:
    home = homes("home")
    sql(home, SETUP)
    killed = spark_server.running(home)
    assert killed is not None
    # A library session whose server is killed under it reports it, never hangs.
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY, str(home), at(0.1)],
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails here
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("REWIND_")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["[[1]]", "SPARK_UNAVAILABLE", "SPARK_UNAVAILABLE"]
    assert spark_server.running(home) is None
    # The next CLI call starts it again (here with an idle time of 2 s); on a terminal it
    # says so, in a pipe it says nothing (every other call here).
    count = "SELECT count(*) AS n FROM d.public.t"
    done, shown = on_terminal(
        home,
        "--now",
        at(0.1),
        "sql",
        "--format",
        "json",
        count,
        env={"REWIND_SPARK_SERVER_IDLE": "2"},
    )
    assert done.returncode == 0
    assert b"Starting Spark for" in shown
    assert rows(json.loads(done.stdout)[0]) == [{"N": 1}]
    started = spark_server.running(home)
    assert started is not None and started.jvm != killed.jvm and started.idle_s == 2
    # ... and, idle, it stops by itself.
    deadline = time.monotonic() + 60
    while spark_server.running(home) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert spark_server.running(home) is None
    assert "idle for 2 s" in spark_server.log_file(home).read_text()


def test_a_statement_that_exhausts_sparks_memory_says_so_and_the_next_one_answers_r39(
    homes: Callable[[str], Path],
) -> None:
    """SPEC R39: a result too large for Spark's memory (a 100-million-character string)
    made the server's JVM exit (out of memory): the statement answered EXECUTION_ERROR
    "Cannot call methods on a stopped SparkContext", and in process STORAGE_ERROR
    "Connection refused" for it and every later one. Both now say Spark stopped, with a
    stable code; the next CLI call starts a server and answers. When the memory ran out in
    the driver's thread that reads a task's result rather than in the task, the JVM stayed
    up and the statement waited forever (CI, 300 s): it now exits on any OutOfMemoryError."""
    home = homes("home")
    huge = "SELECT REPEAT('x', 100000000)"
    served = run(home, "sql", huge)
    assert error(served).startswith("error: SPARK_UNAVAILABLE: Spark stopped while answering")
    assert sql(home, "SELECT 1 AS n")[0]["rows"] == [[1]]
    # What the CLI met right after (the JVM still exiting, its port closed): a published
    # server whose processes run but whose port does not answer is not running, and the
    # next call replaces it (it failed, "its Spark Connect server is gone").
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    token = "t" * 43
    dying = spark_server.Endpoint(
        port, token, os.getpid(), os.getpid(), 60, spark_server.store_mac(token), "s"
    )
    spark_server._publish(home, dying)
    try:
        assert spark_server.running(home) is None
    finally:  # its "supervisor" is this process: nothing may stop it
        spark_server._state_file(home).unlink()
    # 1.4 GiB of text on a 1 GiB heap: out of memory in the task's own thread.
    in_process = run(
        home, "sql", "SELECT REPEAT('x', 1500000000)", env={"REWIND_SPARK_SERVER": "off"}
    )
    assert error(in_process).startswith("error: SPARK_UNAVAILABLE: Spark ")  # stopped, or gone
    # The JVM's last words ("Terminating due to java.lang.OutOfMemoryError") are in the
    # log, not in the results on stdout.
    assert in_process.stdout == ""
    assert "OutOfMemoryError" in (home / "logs" / "spark.log").read_text()


def test_off_runs_in_process(homes: Callable[[str], Path]) -> None:
    home = homes("home")
    sql(home, SETUP, env={"REWIND_SPARK_SERVER": "off"})
    assert spark_server.running(home) is None
    bad = run(home, "sql", "SELECT 1", env={"REWIND_SPARK_SERVER": "sometimes"})
    assert error(bad).startswith("error: INVALID_VALUE: REWIND_SPARK_SERVER must be auto or off")


def test_a_server_that_cannot_start_is_reported_with_its_log(homes: Callable[[str], Path]) -> None:
    home = homes("home")
    sql(home, "CREATE DATABASE d; CREATE TABLE t (id INT)")
    failed = run(
        home, "sql", "INSERT INTO d.public.t VALUES (1)", env={"REWIND_SPARK_MASTER": "nowhere://"}
    )
    line = error(failed)
    assert line.startswith("error: SPARK_UNAVAILABLE: The Spark Connect server of ")
    assert str(spark_server.log_file(home)) in line
    assert spark_server.running(home) is None
    assert not any((home / "warehouse").rglob("*.parquet"))  # SPEC R28: nothing written


def test_a_server_serves_only_callers_with_its_object_store_settings_r45(
    homes: Callable[[str], Path],
) -> None:
    """SPEC R45: the home's server reads the AWS credentials of the environment it started
    in. A caller with another secret is not served by it (nor would one with no keys: any
    change of the AWS variables counts): the CLI replaces it with a server started in the
    caller's environment; the same keys keep the server."""
    home = homes("keys")
    keys = {"AWS_ACCESS_KEY_ID": "AKIAFIRST", "AWS_SECRET_ACCESS_KEY": "s3cret-first"}
    first = {**keys, "AWS_REGION": "us-east-1"}
    sql(home, SETUP, env=first)
    served_first = spark_server._live(home)
    assert served_first is not None
    sql(home, "SELECT count(*) FROM d.public.t", env=first)
    assert spark_server._live(home) == served_first  # the same keys: the same server

    rotated = {**first, "AWS_SECRET_ACCESS_KEY": "s3cret-rotated"}
    assert rows(sql(home, "SELECT count(*) AS n FROM d.public.t", env=rotated)[0]) == [{"N": 1}]
    served_rotated = spark_server._live(home)
    assert served_rotated is not None and served_rotated.supervisor != served_first.supervisor
    assert not process_runs(served_first.jvm)  # the old credentials' JVM is gone
    state = (home / "server" / "state.json").read_text()
    assert "s3cret" not in state and "AKIAFIRST" not in state
