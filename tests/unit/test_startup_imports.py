"""What a ``rewind`` call imports (issue 26): a DDL statement pays for the catalog
(SQLAlchemy), the SQL front (sqlglot) and delta-rs, never for Arrow, numpy, pandas or
Spark's client, which cost a call more than its statement (README, "Tests and
benchmarks": CLI latency). A statement that needs Spark imports them at its first use
of Spark (rewind.spark.heavy_imports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlglot
from deltalake.schema import Field
from deltalake.schema import Schema as DeltaSchema

from rewind.sql.tables import arrow_schema, delta_field, delta_schema
from rewind.storage.columns import new_column
from rewind.types import column_type

pytestmark = pytest.mark.unit

NOW = "2026-11-01T00:00:00+00:00"
# Run ``rewind`` in this process, then report what it imported (top-level packages).
CALL = """
import gc, json, sys
from rewind.cli import main
code = main(sys.argv[1:])
imported = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"code": code, "imported": imported, "gc": gc.isenabled()}))
"""
SPARK_SIDE = {"pyarrow", "numpy", "pandas", "pyspark", "py4j", "grpc", "google"}


def call(home: Path, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    # Any use of Spark fails at once (no server there): a statement that needs Spark
    # fails this test instead of starting one.
    env["REWIND_SPARK_REMOTE"] = "sc://127.0.0.1:9/;token=none"
    done = subprocess.run(
        [sys.executable, "-c", CALL, "--home", str(home), "--now", NOW, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, done.stdout + done.stderr
    return report


def test_a_ddl_call_imports_neither_arrow_nor_pandas_nor_spark(tmp_path: Path) -> None:
    home = tmp_path / "home"
    call(home, "sql", "CREATE DATABASE d; CREATE TABLE d.public.t (id INT, v VARCHAR)")
    report = call(
        home,
        "sql",
        "USE d; CREATE OR REPLACE TABLE u (id INT, n NUMBER(10, 2), at TIMESTAMP_TZ); "
        "ALTER TABLE u ADD COLUMN w VARCHAR; ALTER TABLE u SET DATA_RETENTION_TIME_IN_DAYS = 3; "
        "SHOW TABLES; DROP TABLE t; UNDROP TABLE t",
    )
    imported = set(report["imported"])  # type: ignore[arg-type]
    assert imported & SPARK_SIDE == set()
    assert "alembic" not in imported  # a current catalog opens without migrating
    assert {"sqlalchemy", "sqlglot", "deltalake"} <= imported
    assert report["gc"] is True  # paused while the libraries import, then on again


@pytest.mark.parametrize(
    "sql_type",
    ["INT", "FLOAT", "VARCHAR", "BOOLEAN", "DATE", "TIMESTAMP_TZ", "BINARY", "NUMBER(10,2)"],
)
def test_a_new_column_s_delta_type_is_the_one_delta_rs_makes_from_arrow(sql_type: str) -> None:
    """CREATE TABLE and ADD COLUMN build their Delta schema and field without Arrow
    (:func:`delta_schema`, :func:`delta_field`): the log says what it said when delta-rs
    converted the Arrow schema."""
    parsed = sqlglot.parse_one(f"CAST(x AS {sql_type})", read="snowflake").to
    columns = [new_column("C", column_type(parsed), []), new_column("D", column_type(parsed), [])]
    from_arrow = DeltaSchema.from_arrow(arrow_schema(columns))
    assert delta_schema(columns).to_json() == from_arrow.to_json()
    assert delta_field(columns[0]).to_json() == Field.from_arrow(arrow_schema(columns)[0]).to_json()
