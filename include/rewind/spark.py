"""The one SparkSession factory (ARCHITECTURE: Engines)."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import string
import sys
import warnings
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

LOG4J = Path(__file__).with_name("log4j2.properties")
# `make setup` copies Delta Lake's jars here from Maven Central (deploy/delta/pom.xml).
DEFAULT_DELTA_JARS = Path(__file__).resolve().parents[2] / ".jars"
# Rewind's LogStore for S3 (deploy/logstore/, built into .jars/ by `make setup`): Delta's
# commits to s3:// and s3a:// tables are conditional creates (SPEC R46), where Delta's default
# for S3 (S3SingleDriverLogStore) lets a second writer's commit overwrite the first's.
S3_LOGSTORE = "rewind.delta.ConditionalPutLogStore"
# Delta Lake's SQL extension and catalog: every session reads and writes Delta natively.
DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.delta.logStore.s3a.impl": S3_LOGSTORE,
    "spark.delta.logStore.s3.impl": S3_LOGSTORE,
}


# How every Rewind session runs, in process or on a Spark Connect server (spark_server.py):
# UTC session time zone (the clock is UTC), microsecond Parquet timestamps (what Delta
# expects), case-sensitive names (quoted identifiers keep their case, SPEC R4), few
# shuffle and Delta snapshot partitions (small statements dominate).
SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    # A variant column's values in their plain encoding: a shredded one (Spark 4.2's
    # default) needs Delta's variantShredding feature, which Rewind's tables do not have.
    "spark.sql.variant.writeShredding.enabled": "false",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.shuffle.partitions": "2",
    # Delta rebuilds an older version's file list with a Spark job over its log, in 50
    # partitions by default: one is 5x faster on the logs Rewind reads (0.7 s against
    # 3.6 s per time-travel read of an 8-version table).
    "spark.databricks.delta.snapshotPartitions": "1",
    # Which versions are reachable is Rewind's to say (its retention, SPEC R16, R42), and
    # its lifecycle keeps their files: delta-spark 4 refuses a read of a version committed
    # longer ago than the table's delta.deletedFileRetentionDuration, though that version
    # was current within the window (AT a point an hour ago on a table unchanged for weeks).
    "spark.databricks.delta.vacuum.enforceTimeTravelWithinDeletedFileRetentionDuration": "false",
    "spark.sql.caseSensitive": "true",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    # SPEC R38: no SQL text reads files by path (parquet.`/any/dir`); Rewind reads table
    # versions through the DataFrame API only.
    "spark.sql.runSQLOnFiles": "false",
}
# The driver's: no UI, no progress bars, Rewind's log4j configuration, and a JVM that exits
# when it runs out of memory. Spark exits on an OutOfMemoryError in a task's thread only; one
# in another thread (the driver deserializing a 100 MB result: "task-result-getter") left
# the JVM up and the statement waiting forever. Exiting makes it SPARK_UNAVAILABLE "Spark
# stopped" at once (spark_errors.lost_jvm), and the next call starts a new server.
DRIVER_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": (
        f"-Dlog4j2.configurationFile={LOG4J} -XX:+ExitOnOutOfMemoryError"
    ),
}
# A driver with a local master serves nobody but itself, yet it listens: its RPC and block
# manager ports answer anyone by default, on the host name's address. Loopback only, and
# Spark's own authentication (in local mode Spark makes a secret per application), so no
# other machine and no other local account reads a block of the home's data through them.
LOCAL_DRIVER_CONF = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.authenticate": "true",
}


def driver_conf(master: str) -> dict[str, str]:
    """:data:`DRIVER_CONF`, with :data:`LOCAL_DRIVER_CONF` for a local master."""
    return {**DRIVER_CONF, **(LOCAL_DRIVER_CONF if master.startswith("local") else {})}


def delta_jars() -> list[str]:
    """The pinned Delta Lake jars (``REWIND_DELTA_JARS``, default ``.jars/`` of the checkout),
    with what reaches S3 where `make setup` put it beside them: s3a (``hadoop-aws`` and the
    AWS SDK modules it needs, deploy/s3/pom.xml) and Rewind's LogStore (deploy/logstore/).

    Raises:
        ConfigurationError: none are there (``make setup`` fetches them).
    """
    from rewind.errors import ConfigurationError

    folder = Path(os.environ.get("REWIND_DELTA_JARS") or DEFAULT_DELTA_JARS)
    jars = sorted(str(jar) for jar in folder.glob("*.jar"))
    if not any(Path(jar).name.startswith("delta-spark_") for jar in jars):
        raise ConfigurationError(
            f"Delta Lake's jars are not in {folder}: run `make setup` (Maven fetches them) or "
            "set REWIND_DELTA_JARS."
        )
    return jars


def submit_options() -> list[str]:
    """``spark-submit``'s options for Delta Lake: the jars (driver and executors), the SQL
    extension and the catalog. Airflow's operator passes the same (SPEC R43)."""
    options = ["--jars", ",".join(delta_jars())]
    for key, value in {**DELTA_CONF, **object_store_conf()}.items():
        options += ["--conf", f"{key}={value}"]
    return options


def object_store_conf(*, in_process: bool = False) -> dict[str, str]:
    """s3a's settings from the AWS settings (rewind.storage.objectstore), empty when none
    are set. Only ``in_process`` ones may carry keys (those not in the environment, which a
    JVM started from here cannot read there): never a command line's (SPEC R45)."""
    from rewind.storage import objectstore

    if not objectstore.configured():
        return {}
    s3 = objectstore.settings()
    secret = objectstore.spark_secret_conf(s3) if in_process else {}
    return {**objectstore.spark_conf(s3), **secret}


def with_delta(builder: SparkSession.Builder) -> SparkSession.Builder:
    """``builder`` with Delta Lake's jars, SQL extension and catalog, and the object store's
    settings (SPEC R44, R46): what a user's own PySpark job adds to read and write the tables
    Rewind governs (SPEC R43)."""
    builder = builder.config("spark.jars", ",".join(delta_jars()))
    for key, value in {**DELTA_CONF, **object_store_conf(in_process=True)}.items():
        builder = builder.config(key, value)
    return builder


@contextlib.contextmanager
def heavy_imports() -> Iterator[None]:
    """Import large libraries (pyspark's Connect client; the CLI's catalog and SQL front)
    with the cyclic garbage collector paused. Their modules, classes and functions live as
    long as the process, yet CPython scans them again at every full collection while the
    heap grows: about a tenth of a short ``rewind`` call's CPU time. A collector that is
    paused already is left as it is."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextlib.contextmanager
def _output_to(log: Path | None) -> Iterator[None]:
    """Send what the JVM started here prints to ``log``, for as long as it runs (it inherits
    the descriptors): the CLI's stderr is for errors, its stdout for results (a JVM out of
    memory prints "Terminating due to java.lang.OutOfMemoryError" on its stdout)."""
    if log is None:
        yield
        return
    log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the home is owner-only (R38)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    with open(log, "ab") as sink:
        for fd in saved:
            os.dup2(sink.fileno(), fd)
        try:
            yield
        finally:
            for fd, kept in saved.items():
                os.dup2(kept, fd)
                os.close(kept)


@lru_cache(maxsize=1)
def get_spark(master: str = "local[2]", log: Path | None = None) -> SparkSession:
    """A SparkSession for ``master`` in this process, configured the way every Rewind job
    needs it (:data:`SESSION_CONF`, :func:`driver_conf`) with Delta Lake's connector
    (:func:`with_delta`)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # under spark-submit, its --master rules
        from pyspark import SparkConf

        master = SparkConf().get("spark.master", "")
    else:
        builder = builder.master(master)
    builder = with_delta(builder).appName("rewind")
    for key, value in {**SESSION_CONF, **driver_conf(master)}.items():
        builder = builder.config(key, value)
    with _output_to(log):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if log is not None:
        _query_errors_to(log)
    return spark


def query(spark: SparkSession, text: str, frames: Mapping[str, DataFrame]) -> DataFrame:
    """pyspark's ``spark.sql(text, **frames)`` for a query: a ``{name}`` field of ``text``
    reads ``frames[name]`` (with frames, the text's other braces are doubled). On Spark
    Connect, without the SqlCommand pyspark sends first (a round trip, in which the server
    parses and analyses the query) whose answer to a query is the query's own plan: the
    plan is that query, with the frames it names as its references (pyspark's own
    formatter builds the same)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    if not isinstance(spark, ConnectSession):
        return spark.sql(text, None, **frames)
    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame
    from pyspark.sql.connect.plan import SQL, SubqueryAlias

    views = None
    if frames:
        named = sorted({field for _, field, _, _ in string.Formatter().parse(text) if field})
        views = [SubqueryAlias(frames[name]._plan, name) for name in named]
        text = text.format_map({name: name for name in named})
    return ConnectFrame(SQL(text, views=views), spark)


def to_arrow(frame: DataFrame) -> pa.Table:
    """``frame.toArrow()``, in one round trip on Spark Connect: pyspark's own first asks
    the server for the schema (an AnalyzePlan, which plans the query once more), yet the
    query's answer carries that schema too. The rows are cast to it as pyspark's
    ``toArrow`` casts them (timestamps in UTC), an empty array's or map's elements
    nullable (:func:`_nullable_voids`)."""
    import pyarrow as pa
    from pyspark.sql.classic.dataframe import DataFrame as ClassicFrame
    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    if isinstance(frame, ClassicFrame):  # as pyspark's classic toArrow reads it
        batches = frame._collect_as_arrow(split_batches=False, empty_list_if_zero_records=False)
        table, schema = pa.Table.from_batches(batches), None
    else:
        assert isinstance(frame, ConnectFrame)
        table, schema = frame._to_table()  # pyspark's toArrow and collect call it, as here
    nullable = _nullable_voids(schema or frame.schema)
    assert isinstance(nullable, StructType)
    table, nullable = _variants_as_json(table, nullable)
    arrow = to_arrow_schema(
        nullable, error_on_duplicated_field_names_in_struct=True, timezone="UTC"
    )
    return table.cast(arrow)


def _variants_as_json(table: pa.Table, kind: StructType) -> tuple[pa.Table, StructType]:
    """A result's VARIANT columns as their JSON text, as Rewind answers every
    semi-structured value (a VARIANT column's value, rewind.types.VARIANT; pyspark's own
    cast of one failed on a NULL)."""
    import pyarrow as pa
    from pyspark.sql.types import StringType, StructField, StructType, VariantType, VariantVal

    fields = list(kind.fields)
    for i, field in enumerate(fields):
        if not isinstance(field.dataType, VariantType):
            continue
        texts = [
            None
            if not v or v.get("value") is None
            else VariantVal(v["value"], v["metadata"]).toJson()
            for v in table.column(i).to_pylist()
        ]
        table = table.set_column(i, field.name, pa.array(texts, pa.string()))
        fields[i] = StructField(field.name, StringType(), True)
    return table, StructType(fields)


def _nullable_voids(kind: DataType) -> DataType:
    """``kind`` with every array element, map value and struct field of no type (Spark's
    VOID: ``ARRAY_CONSTRUCT()``'s element, an empty MAP's value) nullable, which Arrow
    requires of a null type (the conversion failed: "A null type field may not be
    non-nullable"), and a map key of no type text."""
    from pyspark.sql.types import ArrayType, MapType, NullType, StringType, StructField, StructType

    if isinstance(kind, ArrayType):
        element = _nullable_voids(kind.elementType)
        return ArrayType(element, kind.containsNull or isinstance(element, NullType))
    if isinstance(kind, MapType):  # a key is never null: an empty map's key is text
        key, value = _nullable_voids(kind.keyType), _nullable_voids(kind.valueType)
        key = StringType() if isinstance(key, NullType) else key
        return MapType(key, value, kind.valueContainsNull or isinstance(value, NullType))
    if isinstance(kind, StructType):
        fields = [(f, _nullable_voids(f.dataType)) for f in kind.fields]
        return StructType(
            [
                StructField(f.name, t, f.nullable or isinstance(t, NullType), f.metadata)
                for f, t in fields
            ]
        )
    return kind


def functions(spark: SparkSession) -> ModuleType:
    """pyspark's column functions for ``spark``'s kind of session. ``pyspark.sql.functions``
    builds Connect columns only in a process that is in Connect mode as a whole; a Rewind
    process may hold a session of either kind."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    if isinstance(spark, ConnectSession):
        from pyspark.sql.connect import functions as connect_functions

        return connect_functions
    from pyspark.sql import functions as classic_functions

    return classic_functions


# A Spark Connect client retries an unreachable server for ten minutes by default; Rewind's
# servers are local or named by the user, so a few seconds tell it is gone (issue 14).
_CONNECT_RETRIES = 3
_CONNECT_MAX_BACKOFF_MS = 1000
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def remote_spark(
    url: str, log: Path | None = None, *, configure: bool = True, shared: bool = False
) -> SparkSession:
    """A new Spark Connect session on ``url`` (``sc://host:port/;token=...``) with Rewind's
    session settings (:data:`SESSION_CONF`; ``configure=False``: the server's defaults
    are those already, as a home's own server's are); its temporary views are its own,
    unless ``shared``: the session ``url`` names (``;session_id=...``) is the server's,
    which other calls use too (Rewind makes no temporary view), and stopping this client
    closes its channel only
    (rewind.spark_server.SHARED_SESSION_CONF). Failed queries' details go to ``log``, as
    in process."""
    with heavy_imports():
        from pyspark.sql.connect.client.retries import DefaultPolicy
        from pyspark.sql.connect.session import SparkSession as ConnectSession

    # pyspark warns on stderr when it gives up; the error that follows says it (R39).
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
    spark = ConnectSession.builder.remote(url).create()
    spark.release_session_on_close = not shared
    spark.client.set_retry_policies(
        [DefaultPolicy(max_retries=_CONNECT_RETRIES, max_backoff=_CONNECT_MAX_BACKOFF_MS)]
    )
    if urlparse(url).hostname in _LOOPBACK:
        # Reattachable execution resumes a query whose stream a network cut, at the price
        # of a ReleaseExecute call per response and per query (two thirds of a SELECT's
        # round trips); nothing cuts a stream between two processes of this machine.
        spark.client.disable_reattachable_execute()
    # Before its first plan pyspark asks the server whether and how to compress plans (a
    # Config round trip, one in three of a warm SELECT's); Rewind's plans are a few
    # hundred bytes, never worth compressing: what pyspark itself sets when a server
    # cannot read compressed plans.
    spark.client._plan_compression_threshold, spark.client._plan_compression_algorithm = (
        -1,
        "NONE",
    )
    for key, value in SESSION_CONF.items() if configure else ():
        spark.conf.set(key, value)
    if log is not None:
        _query_errors_to(log)
    return spark  # type: ignore[return-value]


def _query_errors_to(log: Path) -> None:
    """PySpark logs every failed query with its Java stack trace to stderr, and py4j its
    lost connection to a JVM that exited; the CLI's stderr carries the one-line error only
    (SPEC R39), so they go to the log."""
    from pyspark.logger import PySparkLogger

    log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    names = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
    # py4j's own: "An error occurred while sending or receiving" when the JVM is gone
    for logger in [*map(PySparkLogger.getLogger, names), logging.getLogger("py4j")]:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        logger.addHandler(logging.FileHandler(log))
        logger.propagate = False
    # ... and what py4j logs on the root logger ("Exception while sending command.", with
    # the broken connection's traceback): to the log, whatever the root's handlers are.
    root = logging.getLogger()
    if not any(isinstance(f, _Py4jToLog) for f in root.filters):
        root.addFilter(_Py4jToLog(logging.FileHandler(log)))


class _Py4jToLog(logging.Filter):
    """Hands the root logger's records from py4j's code to ``handler``, not the root's."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        if f"{os.sep}py4j{os.sep}" not in record.pathname:
            return True
        self.handler.handle(record)
        return False
