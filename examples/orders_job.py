"""A data team's own nightly PySpark job — plain pyspark + delta-spark, no Rewind code.

It is what Rewind meets in a lakehouse (SPEC R41): a Delta table at the team's own
location, written by a job that will not change. Each run processes one business date:

* appends the date's orders;
* every fifth date, MERGEs the corrections a shop sent in (rewriting the files it hits);
* on ``--bad-delete-on`` DATE, also runs the mistake everyone makes once: a DELETE meant
  for a test shop that removes every order of the EU region.

Every commit carries Delta's ``userMetadata`` ``orders_job date=<date>`` — how a team
tags its commits — so the history says which run wrote what.

    python examples/orders_job.py PATH --from 2026-11-01 --to 2026-11-20 [--bad-delete-on DATE]

runs the dates in order in one Spark session (a backfill), as ``make run`` does to give
the demo three weeks of the team's history. ``session()`` is the Spark session such a
job starts with; the tests' other-engine jobs start with it too (tests/other_engines.py).
"""

from __future__ import annotations

import argparse
import glob
import os
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

DELTA_JARS = Path(__file__).resolve().parents[1] / ".jars"  # `make setup` fetches them
REGIONS = ("EU", "US", "APAC")


def session(app: str = "orders-job") -> Any:
    """pyspark with delta-spark's jars, SQL extension and catalog, one local core."""
    from pyspark.sql import SparkSession

    folder = os.environ.get("DELTA_JARS") or str(DELTA_JARS)
    jars = ",".join(sorted(glob.glob(os.path.join(folder, "*.jar"))))
    spark = (
        SparkSession.builder.master("local[1]")
        .appName(app)
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")  # a small table's log
        .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")  # VACUUM
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def orders(day: date, first_id: int) -> list[tuple[int, str, str, float, str]]:
    """Six orders a day, two per region."""
    return [
        (first_id + i, f"shop-{i % 4}", REGIONS[i % 3], round(10 + day.day + i * 1.25, 2), str(day))
        for i in range(6)
    ]


def run_date(spark: Any, path: str, day: date, bad_delete: bool) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", f"orders_job date={day}")
    columns = ["id", "shop", "region", "amount", "order_date"]
    first_id = (day.toordinal() % 10_000) * 10
    spark.createDataFrame(orders(day, first_id), columns).write.format("delta").mode("append").save(
        path
    )
    table = DeltaTable.forPath(spark, path)
    if day.day % 5 == 0:  # corrections: shop-1's orders of the last four dates were 5 too high
        fixes = [(first_id - 10 * back + i,) for back in range(1, 5) for i in (1, 5)]
        table.alias("o").merge(
            spark.createDataFrame(fixes, ["id"]).alias("f"), "o.id = f.id"
        ).whenMatchedUpdate(set={"amount": F.col("o.amount") - 5}).execute()
    if bad_delete:  # meant: DELETE ... WHERE shop = 'test-shop' AND region = 'EU'
        table.delete("region = 'EU'")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="orders_job.py", description=__doc__)
    parser.add_argument("path")
    parser.add_argument("--from", dest="start", type=date.fromisoformat, required=True)
    parser.add_argument("--to", dest="end", type=date.fromisoformat, required=True)
    parser.add_argument("--bad-delete-on", type=date.fromisoformat)
    args = parser.parse_args(argv)
    spark = session()
    day = args.start
    while day <= args.end:
        run_date(spark, args.path, day, day == args.bad_delete_on)
        day += timedelta(days=1)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
