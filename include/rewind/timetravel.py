"""Resolving AT | BEFORE (TIMESTAMP | OFFSET | STATEMENT) to a table version (SPEC R16, R17).

Pure functions: the caller hands in the table's version timeline and what the
catalog knows of the named statement; nothing here reads storage or the clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from rewind.clock import format_timestamp
from rewind.errors import TimeTravelUnavailable, UnknownStatement
from rewind.retention import earliest_point

AT = "AT"
BEFORE = "BEFORE"


@dataclass(frozen=True)
class Point:
    """A point as written: ``AT|BEFORE (TIMESTAMP => ts | OFFSET => s | STATEMENT => id)``."""

    when: str
    timestamp: datetime | None = None
    offset_seconds: float | None = None
    statement: str | None = None

    @property
    def kind(self) -> str:
        if self.statement is not None:
            return "STATEMENT"
        return "OFFSET" if self.offset_seconds is not None else "TIMESTAMP"


@dataclass(frozen=True)
class VersionInfo:
    version: int
    commit_time: datetime


@dataclass(frozen=True)
class StatementFacts:
    """What the catalog knows of a statement named by ``STATEMENT => id``.

    ``written_version``: the version of this table the statement committed, if any;
    ``read_version``: the version of this table it read, if any.
    """

    start_time: datetime
    written_version: int | None = None
    read_version: int | None = None


def unavailable(
    table: str,
    reason: str,
    earliest: datetime,
    instant: datetime | None = None,
    *,
    created: bool = False,
) -> TimeTravelUnavailable:
    return TimeTravelUnavailable(
        f"Time travel data is not available for table {table}. The requested time is either "
        f"beyond the allowed time travel period or before the object creation time ({reason}).",
        table=table,
        instant=instant,
        earliest=earliest,
        created=created,
    )


def resolve(
    point: Point,
    *,
    table: str,
    versions: Sequence[VersionInfo],
    created_on: datetime,
    now: datetime,
    retention_days: int,
    statement: StatementFacts | None = None,
) -> int:
    """The table version a point names.

    Args:
        point: the point as written.
        table: the table's name, for messages.
        versions: the table's versions in ascending order (commit times never decrease).
        created_on: when this incarnation was created.
        now: the clock (SPEC R15).
        retention_days: the table's effective retention (SPEC R5–R10).
        statement: facts about ``point.statement``, None when the catalog has none.

    Raises:
        UnknownStatement: the statement id is not in the statement log.
        TimeTravelUnavailable: the point is in the future, at or before the creation,
            or older than ``now - retention`` (SPEC R17).
    """
    if point.statement is not None:
        if statement is None:
            raise UnknownStatement(f"Statement {point.statement} not found.")
        version = _statement_version(point.when, statement)
        if version is not None:
            if version < 0 or all(v.version != version for v in versions):
                raise unavailable(table, "the statement created the table", created_on)
            # The requested time is the statement's own (its commit, or when a read-only
            # statement read), not the commit of the version it names: a version current
            # for a month is still what a statement of an hour ago saw (SPEC R17).
            written = statement.written_version
            instant = next(
                (v.commit_time for v in versions if v.version == written), statement.start_time
            )
            _check_window(table, instant, now, retention_days, created_on)
            return version
        instant = statement.start_time
    elif point.offset_seconds is not None:
        instant = now + timedelta(seconds=point.offset_seconds)
    else:
        assert point.timestamp is not None
        instant = point.timestamp
    return _version_at(point.when, instant, table, versions, created_on, now, retention_days)


def _statement_version(when: str, facts: StatementFacts) -> int | None:
    if facts.written_version is not None:
        return facts.written_version if when == AT else facts.written_version - 1
    # A read-only statement changed nothing: before and at are the state it read.
    return facts.read_version


def _check_window(
    table: str, instant: datetime, now: datetime, retention_days: int, created_on: datetime
) -> None:
    floor = earliest_point(now, retention_days)
    earliest = max(floor, created_on)
    if instant > now:
        raise unavailable(table, f"{format_timestamp(instant)} is in the future", earliest, instant)
    if instant < floor:
        raise unavailable(
            table,
            f"{format_timestamp(instant)} is before the retention floor {format_timestamp(floor)}",
            earliest,
            instant,
        )


def _version_at(
    when: str,
    instant: datetime,
    table: str,
    versions: Sequence[VersionInfo],
    created_on: datetime,
    now: datetime,
    retention_days: int,
) -> int:
    _check_window(table, instant, now, retention_days, created_on)
    if instant <= created_on:
        raise unavailable(
            table,
            f"{format_timestamp(instant)} is not after the creation time "
            f"{format_timestamp(created_on)}",
            created_on,
            instant,
            created=True,
        )
    eligible = [
        v.version
        for v in versions
        if (v.commit_time <= instant if when == AT else v.commit_time < instant)
    ]
    if not eligible:
        raise unavailable(
            table, f"no version before {format_timestamp(instant)}", created_on, instant
        )
    return max(eligible)
