"""The audit trail is kept 365 days (SPEC R36): the nightly lifecycle removes the rest.

A statement leaves QUERY_HISTORY and ACCESS_HISTORY, with everything it recorded, once
it started 365 days or more before the run's clock — at the boundary exactly, as the
fail-safe purge does (SPEC R12). One catalog transaction: a run killed half-way leaves
everything as it was, and the next run removes the same rows (SPEC R31).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import CursorResult, delete, select

from rewind.catalog.models import ColumnLineage, Statement, StatementObject
from rewind.catalog.repository import Catalog
from rewind.constants import AUDIT_RETENTION_DAYS


def audit_cutoff(now: datetime) -> datetime:
    """Statements that started at or before this instant are removed at ``now``."""
    return now - timedelta(days=AUDIT_RETENTION_DAYS)


def purge_audit(catalog: Catalog, now: datetime) -> int:
    """Remove statements older than the audit retention, with their access and lineage
    rows, in ``catalog``'s transaction. Returns how many statements were removed."""
    cutoff = audit_cutoff(now)
    old = select(Statement.query_id).where(Statement.start_time <= cutoff)
    session = catalog.session
    session.execute(delete(ColumnLineage).where(ColumnLineage.query_id.in_(old)))
    session.execute(delete(StatementObject).where(StatementObject.query_id.in_(old)))
    removed = session.execute(delete(Statement).where(Statement.start_time <= cutoff))
    assert isinstance(removed, CursorResult)
    return int(removed.rowcount)
