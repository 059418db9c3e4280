"""``REWIND.ACCOUNT_USAGE`` views over the storage metrics time series (SPEC R33, R34).

``TABLE_STORAGE_METRICS`` (Snowflake names) and ``TABLE_STORAGE`` (BigQuery names) show
the latest lifecycle run's rows. ``TABLE_STORAGE_METRICS`` also answers to the brief's
spelling ``FAIL_SAFE_BYTES`` (:data:`ALIASES`). ``ACCESS_HISTORY`` and ``QUERY_HISTORY``
(SPEC R36) come from the audit trail, see :mod:`rewind.audit.views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltalake import DeltaTable

from rewind.audit.views import AUDIT_VIEWS, audit_view
from rewind.errors import ObjectNotFound
from rewind.lifecycle.metrics import metrics_path
from rewind.lifecycle.plan import system_table_exists
from rewind.spark import functions
from rewind.storage import location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from rewind.statement import Context

ACCOUNT_USAGE = ("REWIND", "ACCOUNT_USAGE")
# BigQuery's INFORMATION_SCHEMA.TABLE_STORAGE columns (SPEC R34), in its order, over the
# same figures: a project is a database, a dataset a schema. What Rewind does not measure
# (rows, partitions, logical bytes) is NULL, never a made-up number; there is no long-term
# storage tier (0). RETAINED_FOR_CLONE_PHYSICAL_BYTES is Rewind's own (R33: every byte in
# exactly one column), after BigQuery's.
TABLE_STORAGE = [
    ("PROJECT_ID", "TABLE_CATALOG"),
    ("PROJECT_NUMBER", "CAST(NULL AS BIGINT)"),
    ("TABLE_CATALOG", "TABLE_CATALOG"),
    ("TABLE_SCHEMA", "TABLE_SCHEMA"),
    ("TABLE_NAME", "TABLE_NAME"),
    ("CREATION_TIME", "TABLE_CREATED"),
    ("TOTAL_ROWS", "CAST(NULL AS BIGINT)"),
    ("TOTAL_PARTITIONS", "CAST(NULL AS BIGINT)"),
    ("TOTAL_LOGICAL_BYTES", "CAST(NULL AS BIGINT)"),
    ("ACTIVE_LOGICAL_BYTES", "CAST(NULL AS BIGINT)"),
    ("LONG_TERM_LOGICAL_BYTES", "CAST(NULL AS BIGINT)"),
    ("CURRENT_PHYSICAL_BYTES", "ACTIVE_BYTES"),
    ("TOTAL_PHYSICAL_BYTES", "ACTIVE_BYTES + TIME_TRAVEL_BYTES"),  # BigQuery: no fail-safe
    ("ACTIVE_PHYSICAL_BYTES", "ACTIVE_BYTES"),
    ("LONG_TERM_PHYSICAL_BYTES", "CAST(0 AS BIGINT)"),
    ("TIME_TRAVEL_PHYSICAL_BYTES", "TIME_TRAVEL_BYTES"),
    ("STORAGE_LAST_MODIFIED_TIME", "AS_OF"),
    ("DELETED", "DELETED"),
    ("TABLE_TYPE", "'BASE TABLE'"),
    ("FAIL_SAFE_PHYSICAL_BYTES", "FAILSAFE_BYTES"),
    ("LAST_METADATA_INDEX_REFRESH_TIME", "CAST(NULL AS TIMESTAMP)"),
    ("TABLE_DELETION_REASON", "CASE WHEN DELETED THEN 'TABLE_DELETION' END"),
    ("TABLE_DELETION_TIME", "TABLE_DROPPED"),
    ("RETAINED_FOR_CLONE_PHYSICAL_BYTES", "RETAINED_FOR_CLONE_BYTES"),
]


# Columns of TABLE_STORAGE_METRICS under a second name (issue 28 item 7): the brief asks
# for FAIL_SAFE_BYTES, Snowflake's column is FAILSAFE_BYTES (SPEC R33). Spark has no
# column that ``SELECT *`` leaves out yet a query may name (a metadata or
# qualified-access-only column of a frame is still in its ``*``), so the alias is a
# visible column, after Snowflake's: ``SELECT *`` shows Snowflake's columns in their order,
# then the alias.
ALIASES = [("FAIL_SAFE_BYTES", "FAILSAFE_BYTES")]


def _view_name(parts: list[str]) -> str | None:
    """``REWIND.ACCOUNT_USAGE.<view>``, or BigQuery's ``[`region-xx`.]INFORMATION_SCHEMA.
    TABLE_STORAGE`` (the TABLE_STORAGE view)."""
    if tuple(parts[:2]) == ACCOUNT_USAGE and len(parts) == 3:
        return parts[2]
    # sqlglot's BigQuery reader keeps INFORMATION_SCHEMA.<view> as one quoted name.
    split = [p for part in parts for p in part.split(".")]
    if (
        [p.upper() for p in split[-2:]] == ["INFORMATION_SCHEMA", "TABLE_STORAGE"]
        and len(split) in (2, 3)
        and (len(split) == 2 or split[0].lower().startswith("region-"))
    ):
        return "TABLE_STORAGE"
    return None


def is_system_view(parts: list[str]) -> bool:
    return _view_name(parts) is not None


def system_view(ctx: Context, parts: list[str]) -> DataFrame:
    """A DataFrame for ``REWIND.ACCOUNT_USAGE.<name>``."""
    F = functions(ctx.spark())
    name = _view_name(parts)
    assert name is not None
    if name in AUDIT_VIEWS:
        return audit_view(ctx, name)
    if name not in ("TABLE_STORAGE_METRICS", "TABLE_STORAGE"):
        raise ObjectNotFound(f"View 'REWIND.ACCOUNT_USAGE.{name}' does not exist.")
    path = metrics_path(ctx.store.system)
    if not system_table_exists(path):
        raise ObjectNotFound(
            f"View 'REWIND.ACCOUNT_USAGE.{name}' has no data yet: run the lifecycle first."
        )
    metrics = DeltaTable(str(path), storage_options=location.storage_options(path))
    frame = ctx.spark().read.parquet(*metrics.file_uris())
    latest = frame.agg(F.max("AS_OF")).collect()[0][0]
    frame = frame.where(F.col("AS_OF") == F.lit(latest)).drop("AS_OF_DATE")
    if name == "TABLE_STORAGE":
        return frame.select(*[F.expr(value).alias(name) for name, value in TABLE_STORAGE])
    return frame.select("*", *[F.col(column).alias(alias) for alias, column in ALIASES])
