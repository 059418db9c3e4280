"""The suite's archive of Spark's classes (JDK class data sharing), made by ``make test``.

Every Spark JVM the suite starts (in-process sessions, spark-submit jobs, Spark Connect
servers, a standalone cluster's master, worker and executors) loads the same thousands of
classes from the same jars before it does anything, and parses and verifies each of them.
An archive of those classes, made once by a job that does what the tests' jobs do, is
mapped by every later JVM instead: measured on this machine, a Delta write, three appends
and a read in a fresh ``spark-submit`` took 19.3 CPU-s without the archive and 13.3 CPU-s
with it (three runs each, alternating).

    python tests/jvm_classes.py .jars/spark-classes.jsa

starts this file again under ``spark-submit`` (Rewind's options, the JVM told to write its
loaded classes at exit) and checks that the archive is there. The archive holds only what
the JVM's own loaders loaded (the JDK's classes and ``pyspark/jars``'s); a JVM ignores it,
silently, where the JDK, the jars or the class path differ, so a stale one costs speed,
never a result. tests/conftest.py hands it to every Spark JVM (:func:`spark_environment`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# C1 only: the suite starts hundreds of short JVMs on 2 cores, and C2's compiler threads
# spent most of a short job's CPU optimising code that ran for seconds. Measured on this
# machine (a Delta write, 5 appends and a read in a fresh local[2] session, alternating,
# the machine loaded): 47/29/73 s with C2 against 31/22/36 s with C1 only.
C1_ONLY = "-XX:TieredStopAtLevel=1"


def jvm_options(archive: Path) -> str:
    """The suite's flags for every Spark JVM: C1 only, and the archive when there is one
    (its warnings off: a JVM that cannot use it runs as it would without)."""
    if not archive.is_file():
        return C1_ONLY
    return f"{C1_ONLY} -XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off"


def spark_environment(archive: Path) -> dict[str, str]:
    """The variables that give every Spark JVM of the suite :func:`jvm_options`: drivers
    through ``SPARK_SUBMIT_OPTS`` (which also carries the executors' options, as a system
    property Spark reads as configuration), a standalone master and worker through
    ``SPARK_DAEMON_JAVA_OPTS``. Never a ``SPARK_CONF_DIR``: Spark's launcher puts that
    folder on the class path, and a JVM maps no archive while a folder on its class path
    holds files."""
    flags = jvm_options(archive)
    return {
        "SPARK_SUBMIT_OPTS": f"{flags} '-Dspark.executor.defaultJavaOptions={flags}'",
        "SPARK_DAEMON_JAVA_OPTS": flags,
    }


def train() -> None:
    """What the suite's Spark jobs do, in one session: Rewind's statements, time travel,
    a clone, a drop and an undrop, a lifecycle run that moves files (Python workers), and
    plain delta-spark SQL (INSERT, UPDATE, DELETE, MERGE, VERSION AS OF, history). About
    45 s; every statement more costs the training more than it saves the suite."""
    import rewind
    from rewind.clock import parse_timestamp
    from rewind.config import Config
    from rewind.runner import run_lifecycle

    base = Path(tempfile.mkdtemp(prefix="jvm-classes-"))
    home = base / "home"
    statements = [
        "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT, V VARCHAR)",
        "INSERT INTO D.PUBLIC.T VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        "DELETE FROM D.PUBLIC.T WHERE ID = 1",
        "UPDATE D.PUBLIC.T SET V = 'z' WHERE ID = 2",
        "SELECT * FROM D.PUBLIC.T AT(OFFSET => -7200)",
        "CREATE TABLE D.PUBLIC.C CLONE D.PUBLIC.T AT(OFFSET => -3600)",
        "DROP TABLE D.PUBLIC.C; UNDROP TABLE D.PUBLIC.C",
        "SHOW TABLES HISTORY IN D.PUBLIC",
    ]
    for hour, text in enumerate(statements):  # an hour apart
        with rewind.connect(home=home, now=f"2026-01-01T{hour:02d}:00:00+00:00") as conn:
            conn.sql(text)
    run_lifecycle(Config.load(home=home), parse_timestamp("2026-01-20T00:00:00+00:00"))

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate().newSession()  # a data team's, not Rewind's
    spark.conf.set("spark.sql.runSQLOnFiles", "true")
    path = base / "plain"
    spark.range(100).selectExpr("id", "id % 7 AS k").write.format("delta").save(str(path))
    table = f"delta.`{path}`"
    spark.sql(f"INSERT INTO {table} VALUES (1000, 1)")
    spark.sql(f"UPDATE {table} SET k = k + 1 WHERE id < 10")
    spark.sql(f"DELETE FROM {table} WHERE id > 1005")
    spark.sql(
        f"MERGE INTO {table} t USING (SELECT id, 9 AS k FROM range(50, 150)) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET k = s.k WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(f"SELECT k, count(*) FROM {table} VERSION AS OF 3 GROUP BY k").collect()
    spark.sql(f"DESCRIBE HISTORY {table}").collect()


def main() -> None:
    if sys.argv[1:] == ["--train"]:
        train()
        return
    import pyspark

    from rewind.spark import submit_options

    archive = Path(sys.argv[1]).resolve()
    archive.unlink(missing_ok=True)
    spark_home = Path(pyspark.__file__).parent
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}
    env.update(
        SPARK_HOME=str(spark_home),
        SPARK_SUBMIT_OPTS=f"{C1_ONLY} -XX:ArchiveClassesAtExit={archive} -Xlog:cds=off",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "include"), env.get("PYTHONPATH")])),
        REWIND_SPARK_SERVER="off",
    )
    done = subprocess.run(
        [
            str(spark_home / "bin" / "spark-submit"),
            *("--conf", "spark.databricks.delta.retentionDurationCheck.enabled=false"),
            *submit_options(),
            __file__,
            "--train",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if done.returncode != 0 or not archive.is_file():
        raise SystemExit(f"{done.stdout[-4000:]}\nthe training job wrote no archive at {archive}")
    print(f"{archive}: {archive.stat().st_size // 2**20} MB of classes")


if __name__ == "__main__":
    main()
