"""``REWIND.ACCOUNT_USAGE`` views over the storage metrics time series (SPEC R33, R34).

``TABLE_STORAGE_METRICS`` (Snowflake names) and ``TABLE_STORAGE`` (BigQuery names) show
the latest lifecycle run's rows. ``ACCESS_HISTORY`` and ``QUERY_HISTORY`` (SPEC R36) come
from the audit trail, see :mod:`rewind.audit.views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltalake import DeltaTable

from rewind.audit.views import AUDIT_VIEWS, audit_view
from rewind.errors import ObjectNotFound
from rewind.lifecycle.metrics import metrics_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from rewind.statement import Context

ACCOUNT_USAGE = ("REWIND", "ACCOUNT_USAGE")
# BigQuery's INFORMATION_SCHEMA.TABLE_STORAGE names (SPEC R34) over the same figures.
TABLE_STORAGE = {
    "TABLE_CATALOG": "PROJECT_ID",
    "TABLE_SCHEMA": "TABLE_SCHEMA",
    "TABLE_NAME": "TABLE_NAME",
    "ACTIVE_BYTES": "ACTIVE_PHYSICAL_BYTES",
    "TIME_TRAVEL_BYTES": "TIME_TRAVEL_PHYSICAL_BYTES",
    "FAILSAFE_BYTES": "FAIL_SAFE_PHYSICAL_BYTES",
    "RETAINED_FOR_CLONE_BYTES": "RETAINED_FOR_CLONE_PHYSICAL_BYTES",
    "DELETED": "DELETED",
    "AS_OF": "STORAGE_LAST_MODIFIED_TIME",
}


def is_system_view(parts: list[str]) -> bool:
    return tuple(parts[:2]) == ACCOUNT_USAGE and len(parts) == 3


def system_view(ctx: Context, parts: list[str]) -> DataFrame:
    """A DataFrame for ``REWIND.ACCOUNT_USAGE.<name>``."""
    from pyspark.sql import functions as F

    name = parts[2]
    if name in AUDIT_VIEWS:
        return audit_view(ctx, name)
    if name not in ("TABLE_STORAGE_METRICS", "TABLE_STORAGE"):
        raise ObjectNotFound(f"View 'REWIND.ACCOUNT_USAGE.{name}' does not exist.")
    path = metrics_path(ctx.store.warehouse.parent / "system")
    if not (path / "_delta_log").exists():
        raise ObjectNotFound(
            f"View 'REWIND.ACCOUNT_USAGE.{name}' has no data yet: run the lifecycle first."
        )
    frame = ctx.spark().read.parquet(*DeltaTable(str(path)).file_uris())
    latest = frame.agg(F.max("AS_OF")).collect()[0][0]
    frame = frame.where(F.col("AS_OF") == F.lit(latest)).drop("AS_OF_DATE")
    if name == "TABLE_STORAGE":
        frame = frame.select(*[F.col(old).alias(new) for old, new in TABLE_STORAGE.items()])
    return frame
