"""Fixtures of the S3 tests that reach a bucket from this process's JVM (SPEC R44)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rewind.storage import objectstore


@pytest.fixture
def lake(s3_bucket: Any, spark: Any) -> Any:
    """The bucket, with this process's JVM reaching it through s3a.

    A JVM started after the AWS variables were set reads them from its environment, as
    Rewind's own processes do; this test session's JVM may be older than the bucket's
    variables (another module's test started it), so their s3a settings go into its Hadoop
    configuration here, the keys as in-process settings (``spark_secret_conf``, R45).
    """
    s3 = replace(objectstore.settings(), keys_in_environment=False)
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in {**objectstore.spark_conf(s3), **objectstore.spark_secret_conf(s3)}.items():
        hadoop.set(key.removeprefix("spark.hadoop."), value)
    return s3_bucket
