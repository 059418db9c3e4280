"""The S3 tests' jobs, each in a process (and for Spark a JVM) of its own, on the AWS settings
of its environment (tests/conftest.py's ``s3_bucket``):

    python s3_jobs.py roundtrip s3a://bucket/t
    python s3_jobs.py spark-append URI WRITER ROUNDS BARRIER [--writers N]
    python s3_jobs.py rs-append URI WRITER ROUNDS BARRIER [--writers N]
    python s3_jobs.py rewind-write URI WRITER ROUNDS BARRIER --home HOME [--writers N]
    python s3_jobs.py logstore-race s3a://bucket/race WRITER ROUNDS BARRIER [--writers N]
    python s3_jobs.py spark-sql s3a://bucket/t STATEMENT...

``roundtrip`` is a plain PySpark job with delta-spark and the project's settings (the
builder's ``rewind.spark.with_delta``, as a user's own job gets them): it writes and reads
a Delta table on ``s3a://``, reads it as ``s3://`` too, and drives Rewind's LogStore through
the LogStore contract. The ``*-append`` jobs are writers that append ROUNDS commits of 3 rows
each (``writer``, ``round``, ``i``), every commit tagged ``WRITER:ROUND`` in its commitInfo's
``userMetadata``; before each round a writer waits at a barrier (a file per writer and round
in the directory BARRIER) until all N writers reach it, so that their commits race.
``rewind-write`` is Rewind itself: a session on HOME registers the table (``CREATE EXTERNAL
TABLE``, before its first barrier) and runs an INSERT of the round's rows every round and an
UPDATE of its own rows every other round; its commits carry their statement's query id in
``userMetadata`` (SPEC R46), which it lists. ``spark-sql`` is the team's own job: it runs
each STATEMENT (``{t}`` is the Delta table at the URI, ``{v<N>}`` it at version N) and
answers the rows of each, sorted. Each prints one JSON line: what it did, or its error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROWS = 3  # per commit


def barrier(directory: Path, writer: str, round_: int, writers: int, timeout: float) -> None:
    """Wait until ``writers`` writers have reached ``round_``."""
    (directory / f"{writer}.{round_}").touch()
    deadline = time.monotonic() + timeout
    while len(list(directory.glob(f"*.{round_}"))) < writers:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{writer}: the other writers did not reach round {round_}")
        time.sleep(0.005)


def spark_session() -> Any:
    from pyspark.sql import SparkSession

    from rewind.spark import with_delta

    builder = with_delta(SparkSession.builder.master("local[1]").appName("s3-job"))
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rows(writer: str, round_: int) -> list[tuple[str, int, int]]:
    return [(writer, round_, i) for i in range(ROWS)]


def roundtrip(uri: str) -> dict[str, Any]:
    """Write and read a Delta table on ``uri`` (s3a://), read it as s3://, and the LogStore."""
    spark = spark_session()
    schema = "writer string, round int, i int"
    spark.createDataFrame(rows("spark", 0), schema).write.format("delta").save(uri)
    spark.createDataFrame(rows("spark", 1), schema).write.format("delta").mode("append").save(uri)
    as_s3 = "s3://" + uri.split("://", 1)[1]
    from delta.tables import DeltaTable

    result = {
        "count_s3a": spark.read.format("delta").load(uri).count(),
        "count_s3": spark.read.format("delta").load(as_s3).count(),
        "versions": DeltaTable.forPath(spark, uri).history().count(),
        "logstore_conf": spark.conf.get("spark.delta.logStore.s3a.impl"),
        "contract": logstore_contract(spark, uri.rstrip("/") + "-contract/_delta_log"),
    }
    spark.stop()
    return result


def logstore_contract(spark: Any, log: str) -> dict[str, Any]:
    """Rewind's LogStore against delta-storage's LogStore contract, on S3."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    store = jvm.rewind.delta.ConditionalPutLogStore(conf)
    path = jvm.org.apache.hadoop.fs.Path

    def lines(*values: str) -> Any:
        items = jvm.java.util.ArrayList()
        for value in values:
            items.add(value)
        return items.iterator()

    first = path(log + "/00000000000000000000.json")
    store.write(first, lines('{"a":1}', '{"b":2}'), False, conf)
    again = "written"
    try:
        store.write(first, lines('{"other":1}'), False, conf)
    except Exception as error:  # py4j's Py4JJavaError: the Java exception's class
        again = error.java_exception.getClass().getName()  # type: ignore[attr-defined]
    # our own commit again (a retried PUT whose first attempt landed): no error
    store.write(first, lines('{"a":1}', '{"b":2}'), False, conf)
    store.write(path(log + "/00000000000000000001.json"), lines('{"c":3}'), False, conf)
    store.write(path(log + "/_last_checkpoint"), lines('{"v":1}'), True, conf)
    store.write(path(log + "/_last_checkpoint"), lines('{"v":2}'), True, conf)

    def read(name: str) -> list[str]:
        found = store.read(path(f"{log}/{name}"), conf)
        out = []
        while found.hasNext():
            out.append(found.next())
        found.close()
        return out

    listed = store.listFrom(path(log + "/00000000000000000001.json"), conf)
    names = []
    while listed.hasNext():
        names.append(listed.next().getPath().getName())
    return {
        "second_create": again,
        "first": read("00000000000000000000.json"),
        "last_checkpoint": read("_last_checkpoint"),
        "list_from_1": names,
        "partial_write_visible": store.isPartialWriteVisible(first, conf),
    }


def logstore_race(args: argparse.Namespace) -> dict[str, Any]:
    """Race the other writer at every version: ``write(version, overwrite=False)`` right at
    the barrier, with Delta's S3 LogStore (``delta``) and then with Rewind's (``rewind``),
    each on a log of its own under ``uri``. The versions this writer believes it wrote."""
    from py4j.protocol import Py4JJavaError

    spark = spark_session()
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    stores = {
        "delta": jvm.io.delta.storage.S3SingleDriverLogStore(conf),
        "rewind": jvm.rewind.delta.ConditionalPutLogStore(conf),
    }
    won: dict[str, list[int]] = {}
    for name, store in stores.items():
        gate = args.barrier / name
        gate.mkdir(exist_ok=True)
        won[name] = []
        for version in range(args.rounds):
            log = f"{args.uri}/{name}/_delta_log"
            path = jvm.org.apache.hadoop.fs.Path(f"{log}/{version:020d}.json")
            actions = jvm.java.util.ArrayList()
            actions.add(json.dumps({"writer": args.writer, "version": version}))
            barrier(gate, args.writer, version, args.writers, args.timeout)
            try:
                store.write(path, actions.iterator(), False, conf)
                won[name].append(version)
            except Py4JJavaError as error:
                kind = error.java_exception.getClass().getName()
                if kind != "java.nio.file.FileAlreadyExistsException":
                    raise
    spark.stop()
    return {"writer": args.writer, "commits": args.rounds, "won": won}


def spark_append(args: argparse.Namespace) -> dict[str, Any]:
    spark = spark_session()
    schema = "writer string, round int, i int"
    started = time.monotonic()
    for round_ in range(args.rounds):
        frame = spark.createDataFrame(rows(args.writer, round_), schema)
        barrier(args.barrier, args.writer, round_, args.writers, args.timeout)
        spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", f"{args.writer}:{round_}")
        frame.write.format("delta").mode("append").save(args.uri)
    seconds = time.monotonic() - started
    spark.stop()
    return {"writer": args.writer, "commits": args.rounds, "seconds": round(seconds, 1)}


def rs_append(args: argparse.Namespace) -> dict[str, Any]:
    import pyarrow as pa
    from deltalake import CommitProperties, write_deltalake

    from rewind.storage import objectstore

    options = objectstore.delta_rs_options(objectstore.settings())
    uri = "s3://" + args.uri.split("://", 1)[1]
    started = time.monotonic()
    for round_ in range(args.rounds):
        data = list(zip(*rows(args.writer, round_), strict=True))
        table = pa.table(
            {
                "writer": pa.array(data[0], pa.string()),
                "round": pa.array(data[1], pa.int32()),
                "i": pa.array(data[2], pa.int32()),
            }
        )
        barrier(args.barrier, args.writer, round_, args.writers, args.timeout)
        write_deltalake(
            uri,
            table,
            mode="append",
            storage_options=options,
            commit_properties=CommitProperties(
                custom_metadata={"userMetadata": f"{args.writer}:{round_}"},
                max_commit_retries=1000,
            ),
        )
    seconds = time.monotonic() - started
    return {"writer": args.writer, "commits": args.rounds, "seconds": round(seconds, 1)}


def rewind_write(args: argparse.Namespace) -> dict[str, Any]:
    import rewind

    started = time.monotonic()
    statements: dict[str, str] = {}  # query id -> what it was
    with rewind.connect(home=args.home) as conn:
        conn.sql(
            "CREATE DATABASE LAKE; CREATE EXTERNAL TABLE LAKE.PUBLIC.T "
            f"LOCATION = '{args.uri}' TABLE_FORMAT = DELTA"
        )
        for round_ in range(args.rounds):
            values = ", ".join(f"('{w}', {r}, {i})" for w, r, i in rows(args.writer, round_))
            barrier(args.barrier, args.writer, round_, args.writers, args.timeout)
            done = conn.sql(f"INSERT INTO LAKE.PUBLIC.T VALUES {values}")[-1]
            statements[done.query_id] = f"insert:{round_}"
            if round_ % 2:  # rewrites its own files while the others append (R13, R40)
                done = conn.sql(
                    f"UPDATE LAKE.PUBLIC.T SET i = i + 100 WHERE writer = '{args.writer}' AND i = 0"
                )[-1]
                statements[done.query_id] = f"update:{round_}"
    seconds = time.monotonic() - started
    return {
        "writer": args.writer,
        "commits": args.rounds,
        "statements": statements,
        "seconds": round(seconds, 1),
    }


def spark_sql(uri: str, statements: list[str]) -> dict[str, Any]:
    """Run ``statements`` on the table at ``uri``; the rows each answered, sorted."""
    spark = spark_session()
    versions = {f"v{n}": f"delta.`{uri}` VERSION AS OF {n}" for n in range(100)}
    results = [
        sorted(
            tuple(row) for row in spark.sql(sql.format(t=f"delta.`{uri}`", **versions)).collect()
        )
        for sql in statements
    ]
    spark.stop()
    return {"results": results}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    jobs = parser.add_subparsers(dest="job", required=True)
    jobs.add_parser("roundtrip").add_argument("uri")
    sql = jobs.add_parser("spark-sql")
    sql.add_argument("uri")
    sql.add_argument("statements", nargs="+")
    for name in ("spark-append", "rs-append", "logstore-race", "rewind-write"):
        job = jobs.add_parser(name)
        job.add_argument("uri")
        job.add_argument("writer")
        job.add_argument("rounds", type=int)
        job.add_argument("barrier", type=Path)
        job.add_argument("--writers", type=int, default=2)
        job.add_argument("--timeout", type=float, default=300.0)
        job.add_argument("--home", type=Path, help="rewind-write: the Rewind home")
    args = parser.parse_args(argv)
    try:
        if args.job == "roundtrip":
            result = roundtrip(args.uri)
        elif args.job == "spark-sql":
            result = spark_sql(args.uri, args.statements)
        elif args.job == "spark-append":
            result = spark_append(args)
        elif args.job == "logstore-race":
            result = logstore_race(args)
        elif args.job == "rewind-write":
            result = rewind_write(args)
        else:
            result = rs_append(args)
    except Exception:
        print(json.dumps({"error": traceback.format_exc()}), flush=True)
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
