"""``REWIND.ACCOUNT_USAGE.ACCESS_HISTORY`` and ``QUERY_HISTORY`` (SPEC R36), ACCOUNTADMIN only.

Both are built on the driver from the catalog (the statement log and what each
statement recorded, kept 365 days) and bound as Spark temporary views, so SELECT
filters, projects and joins them like any table. Column names are Snowflake's; the
JSON columns are described in :mod:`rewind.audit.shape`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from rewind.audit.shape import access_columns, domain, root_query_id
from rewind.catalog.models import CatalogObject, ColumnLineage, Statement, StatementObject
from rewind.catalog.repository import Catalog
from rewind.security import require_accountadmin

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from rewind.statement import Context

ACCESS_HISTORY, QUERY_HISTORY = "ACCESS_HISTORY", "QUERY_HISTORY"
AUDIT_VIEWS = (ACCESS_HISTORY, QUERY_HISTORY)
ACCESS_HISTORY_SCHEMA = (
    "QUERY_ID STRING, QUERY_START_TIME TIMESTAMP, USER_NAME STRING, "
    "DIRECT_OBJECTS_ACCESSED ARRAY<STRING>, BASE_OBJECTS_ACCESSED ARRAY<STRING>, "
    "OBJECTS_MODIFIED ARRAY<STRING>, OBJECT_MODIFIED_BY_DDL STRING, "
    "POLICIES_REFERENCED ARRAY<STRING>, PARENT_QUERY_ID STRING, ROOT_QUERY_ID STRING"
)
QUERY_HISTORY_SCHEMA = (
    "QUERY_ID STRING, QUERY_TEXT STRING, QUERY_TYPE STRING, USER_NAME STRING, "
    "ROLE_NAME STRING, EXECUTION_STATUS STRING, ERROR_CODE STRING, ERROR_MESSAGE STRING, "
    "START_TIME TIMESTAMP, END_TIME TIMESTAMP, TOTAL_ELAPSED_TIME BIGINT, QUERY_TAG STRING"
)
# Snowflake's EXECUTION_STATUS for Rewind's statement status.
EXECUTION_STATUS = {"SUCCESS": "SUCCESS", "FAILED": "FAIL"}
_ORDER = (Statement.start_time, Statement.query_id)
_MILLISECOND = timedelta(milliseconds=1)


def audit_view(ctx: Context, name: str) -> DataFrame:
    """The DataFrame of ``REWIND.ACCOUNT_USAGE.<name>`` for ``name`` in AUDIT_VIEWS.

    Raises:
        AccessDenied: the session's role is not ACCOUNTADMIN.
    """
    require_accountadmin(ctx, f"REWIND.ACCOUNT_USAGE.{name}")
    if name == QUERY_HISTORY:
        rows, schema = query_history(ctx.catalog), QUERY_HISTORY_SCHEMA
    else:
        rows, schema = access_history(ctx.catalog), ACCESS_HISTORY_SCHEMA
    return ctx.spark().createDataFrame(rows, schema)


def query_history(catalog: Catalog, conditions: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """One row per logged statement (that meets ``conditions``: SQLAlchemy's, on
    Statement), failed and denied ones with their error, in the order they started."""
    rows: list[tuple[Any, ...]] = []
    for s in catalog.session.scalars(select(Statement).where(*conditions).order_by(*_ORDER)):
        elapsed = None if s.end_time is None else (s.end_time - s.start_time) // _MILLISECOND
        status = EXECUTION_STATUS.get(s.status, s.status)
        rows.append(
            (
                s.query_id,
                s.text,
                s.query_type,
                s.user_name,
                s.role_name,
                status,
                s.error_code,
                s.error_message,
                s.start_time,
                s.end_time,
                elapsed,
                s.query_tag,
            )
        )
    return rows


def access_history(catalog: Catalog) -> list[tuple[Any, ...]]:
    """One row per statement that read, wrote or changed by DDL any object."""
    session = catalog.session
    recorded: dict[str, list[StatementObject]] = defaultdict(list)
    for row in session.scalars(select(StatementObject).order_by(StatementObject.id)):
        recorded[row.query_id].append(row)
    lineage: dict[str, list[ColumnLineage]] = defaultdict(list)
    for edge in session.scalars(select(ColumnLineage).order_by(ColumnLineage.id)):
        lineage[edge.query_id].append(edge)
    kinds = session.execute(select(CatalogObject.id, CatalogObject.kind))
    domains = {object_id: domain(kind) for object_id, kind in kinds}
    parents = {
        query_id: parent
        for query_id, parent in session.execute(
            select(Statement.query_id, Statement.parent_query_id).where(
                Statement.parent_query_id.is_not(None)
            )
        ).tuples()
        if parent is not None
    }
    statements = session.scalars(
        select(Statement)
        .where(Statement.query_id.in_(select(StatementObject.query_id)))
        .order_by(*_ORDER)
    )
    rows: list[tuple[Any, ...]] = []
    for s in statements:
        columns = access_columns(recorded[s.query_id], lineage[s.query_id], domains)
        rows += [
            (
                s.query_id,
                s.start_time,
                s.user_name,
                columns.direct_objects_accessed,
                columns.base_objects_accessed,
                columns.objects_modified,
                ddl,
                [],  # policies_referenced: Rewind has no masking or row access policies
                s.parent_query_id,
                root_query_id(s.query_id, parents),
            )
            for ddl in columns.objects_modified_by_ddl
        ]
    return rows
