"""A night on a table on S3 converges through an object store that misbehaves (SPEC R49;
R12, R31, R48), on a real S3 server (SeaweedFS, rewind/seaweedfs.py).

The team's delta-rs writer makes a table of ``FILES`` one-row files and then deletes all but
one row: ``FILES - 1`` objects leave the table and, two days later, time travel. The night
that moves them into fail-safe runs

- through a loopback proxy (tests/s3_proxy.py) that answers ``503 SlowDown`` to some
  requests, drops the connection before others reach the server, and drops it *after*
  others took effect (a copy done, a delete done, an answer the client never hears): every
  step of the night, in process and in the expire job's file-operation workers, talks to
  the store through it;
- with the S3 server itself stopped and started again while the expire job is moving
  objects, early in the job and half-way through.

Through the proxy the expire job is ``rewind.runner.main`` with its file operations in two
plain Python workers (tests/lifecycle_jobs.py ``PythonWorkers``, what a local[2] Spark
job runs them in): the faults are answered by ``fileops``'s retries, the same from either,
and each run costs no JVM start. The restarts stop a run, and how a failed Spark task
becomes STORAGE_ERROR is Spark's: those runs are Spark jobs.

A run either completes or stops with STORAGE_ERROR, and the next one converges (R31, R49).
After every run each removed object is in the bucket or, whole, in fail-safe (never
neither, never a partial copy), no current object of the table changed (ETags), and in the
end every removed object is in fail-safe and gone from the bucket.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from lifecycle_jobs import run_job
from s3_proxy import FaultyProxy
from test_s3_external import ids, objects, options, register
from test_s3_lifecycle import PREFIX, data_objects, places, step, table_id

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("s3_lifecycle")]

FILES = 40
JOB_TIMEOUT_S = 300
RUNS = 4  # a run may stop with STORAGE_ERROR; a later one must converge


def removed_objects(lake: Any, connect: Any) -> tuple[Any, dict[str, bytes], dict[str, str]]:
    """The team's table, registered, with ``FILES - 1`` objects removed by its writer: the
    session, the removed objects' bytes and the table's current objects (ETags)."""
    uri = f"{lake.uri}team/orders"
    for i in range(FILES):
        batch = pa.table({"ID": [i], "V": [f"v{i}"]})
        write_deltalake(uri, batch, mode="append", storage_options=options())
    conn = connect()
    conn.sql("CREATE DATABASE LAKE")
    register(conn, "ORDERS", uri)
    DeltaTable(uri, storage_options=options()).delete(f"ID < {FILES - 1}")
    client = lake.server.client()
    adds = DeltaTable(uri, storage_options=options()).get_add_actions(flatten=True)
    current = set(pa.table(adds)["path"].to_pylist())
    kept = {path: etag for path, etag in data_objects(lake).items() if path in current}
    content = {
        path: client.get_object(Bucket=lake.name, Key=PREFIX + path)["Body"].read()
        for path in data_objects(lake)
        if path not in current
    }
    assert len(content) == FILES - 1 and len(kept) == 1, (content.keys(), kept)
    return conn, content, kept


def expire_until_converged(
    home: Path,
    night: tuple[str, datetime],
    check: Any,
    settings: dict[str, str] | None = None,
    during: Any = None,
    spark: bool = True,
) -> None:
    """The expire job, run again after each run that stopped, until one completes; ``check``
    after every run; ``during(job)`` (its future) while the first runs; ``spark=False``: its
    file operations in plain Python workers."""
    codes = []
    for attempt in range(RUNS):
        with ThreadPoolExecutor(1) as pool:
            job = pool.submit(
                run_job,
                home,
                "expire_versions",
                *night,
                None,
                JOB_TIMEOUT_S,
                settings,
                spark=spark,
            )
            if during is not None and attempt == 0:
                during(job)
            code, _, err = job.result()
        codes.append(code)
        check()
        if code == 0:
            return
        assert code == 1 and "STORAGE_ERROR" in err, f"exit {code}\n{err[-3000:]}"
    pytest.fail(f"the night did not converge in {RUNS} runs: {codes}")


def invariant(lake: Any, home: Path, content: dict[str, bytes], kept: dict[str, str]) -> Any:
    """R31, R48: every removed object in the bucket or whole in fail-safe, never neither;
    the table's current objects untouched."""
    failsafe = home / "failsafe" / str(table_id(home, "ORDERS"))

    def check() -> None:
        where = places(lake, failsafe, content)  # a fail-safe copy is always whole
        assert all(where[path] for path in content), where
        now = data_objects(lake)
        assert {path: now.get(path) for path in kept} == kept

    return check


def converged(lake: Any, home: Path, content: dict[str, bytes], conn: Any) -> None:
    failsafe = home / "failsafe" / str(table_id(home, "ORDERS"))
    assert places(lake, failsafe, content) == {path: {"failsafe"} for path in content}
    assert not list(failsafe.rglob("*.part"))
    assert ids(conn) == [FILES - 1]


def test_a_night_through_a_store_that_throttles_and_drops_connections_converges_r31_r49(
    lake: Any, connect: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R49: 503 SlowDown, dropped connections and lost answers, for every step of the night
    (in process and in the expire job), are retried with bounded back-off; the night
    moves every removed object into fail-safe and loses none (R31, R48)."""
    conn, content, kept = removed_objects(lake, connect)
    night = ("night", datetime.now(UTC) + timedelta(days=2))
    proxy = FaultyProxy(
        lake.server.endpoint, slowdown=0.15, drop=0.05, lost_answer=0.05, seed=49
    ).start()
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)  # every client of the night
        step(home, "effective_retention", *night)
        check = invariant(lake, home, content, kept)
        settings = {"AWS_ENDPOINT_URL": proxy.endpoint}
        expire_until_converged(home, night, check, settings, spark=False)
        counted = step(home, "storage_metrics", *night)
        step(home, "validate", *night)
    finally:
        proxy.stop()
        monkeypatch.setenv("AWS_ENDPOINT_URL", lake.server.endpoint)
    for fault in ("slowdown", "drop", "lost_answer"):  # the faults did happen
        assert proxy.injected[fault] >= 2, proxy.injected
    converged(lake, home, content, conn)
    assert counted["failsafe_bytes"] == sum(len(data) for data in content.values()), counted
    assert set(objects(lake)) >= {PREFIX + path for path in kept}


@pytest.mark.parametrize("moved_before_restart", [1, FILES // 2])
def test_a_night_survives_the_s3_server_restarting_while_it_moves_objects_r31_r49(
    lake: Any, connect: Any, home: Path, moved_before_restart: int
) -> None:
    """R49: the S3 server is stopped and started again (same data) while the expire job
    moves objects, after the first one or half of them: the job completes, or stops with
    STORAGE_ERROR and the next run converges; nothing lost, nothing moved twice (R31).
    The job talks to the server through a proxy that holds each request 0.2 s (a store
    far away), so that on a fast machine it is still moving when the server stops: its
    moves run 16 at a time and a graceful stop of the server takes a while."""
    conn, content, kept = removed_objects(lake, connect)
    night = ("night", datetime.now(UTC) + timedelta(days=2))
    step(home, "effective_retention", *night)
    failsafe = home / "failsafe" / str(table_id(home, "ORDERS"))
    left_at_stop: list[int] = []  # objects the job had still to move once the server was down

    def moved() -> int:
        return sum(1 for p in failsafe.rglob("*") if p.is_file() and p.suffix != ".part")

    def restart_server(job: Future[Any]) -> None:
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while not job.done() and moved() < moved_before_restart and time.monotonic() < deadline:
            time.sleep(0.02)
        left_at_stop.append(len(content) - moved() if not job.done() else 0)
        lake.server.stop()
        time.sleep(1)
        lake.server.start()

    check = invariant(lake, home, content, kept)
    far = FaultyProxy(lake.server.endpoint, delay=0.2).start()
    try:
        settings = {"AWS_ENDPOINT_URL": far.endpoint}
        expire_until_converged(home, night, check, settings, during=restart_server)
    finally:
        far.stop()
    assert left_at_stop[0] > 0, "the job had moved everything before the server stopped"
    converged(lake, home, content, conn)
    step(home, "storage_metrics", *night)
    step(home, "validate", *night)
