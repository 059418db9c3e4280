"""The values the Rewind views show (:mod:`rewind.dashboard` reads them,
:mod:`rewind.plugin_api` serves them as JSON): plain typed values, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import pyarrow.compute as pc

from rewind.constants import DATABASE, SCHEMA, TABLE
from rewind.lifecycle.metrics import BYTE_COLUMNS

WINDOW_DAYS = 30
LAST_RUNS = 10
NAME_COLUMNS = ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME")
# Breakdown rows one level below the scope: databases, schemas, then table incarnations.
GROUP_KEYS = (
    ["TABLE_CATALOG"],
    ["TABLE_CATALOG", "TABLE_SCHEMA"],
    ["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "ID", "DELETED"],
    ["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "ID", "DELETED"],
)

Figures = dict[str, int]  # byte column of SPEC R33 -> bytes


def _zero() -> Figures:
    return dict.fromkeys(BYTE_COLUMNS, 0)


def first_day(now: datetime) -> date:
    """The first day of the chart: a window of ``WINDOW_DAYS`` days ending on ``now``'s."""
    return now.date() - timedelta(days=WINDOW_DAYS - 1)


def _candidates(value: str) -> list[str]:
    """Names a filter value stands for: as shown, or unquoted in any case (SPEC R4)."""
    return [value, value.upper()]


@dataclass(frozen=True)
class Scope:
    """The objects the views are about: the account, or a database / schema / table by name."""

    database: str | None = None
    schema: str | None = None
    table: str | None = None

    def wanted(self) -> list[tuple[int, str]]:
        """(level, name) of every filter given; level 0 is the database."""
        return [(i, v) for i, v in enumerate((self.database, self.schema, self.table)) if v]

    @property
    def depth(self) -> int:
        """The deepest level filtered on, plus one (0: the whole account)."""
        wanted = self.wanted()
        return wanted[-1][0] + 1 if wanted else 0

    def covers(self, path: Sequence[str]) -> bool:
        """Whether an object at ``path`` (database, schema, table names) is in scope."""
        return all(i < len(path) and path[i] in _candidates(v) for i, v in self.wanted())

    def expression(self) -> pc.Expression:
        """The same test on the metrics rows' name columns."""
        test = pc.scalar(True)
        for i, value in self.wanted():
            test = test & pc.field(NAME_COLUMNS[i]).isin(_candidates(value))
        return test


@dataclass(frozen=True)
class Day:
    """One day of the storage time series (the day's last run, SPEC R35)."""

    date: str
    as_of: datetime
    bytes: Figures


@dataclass(frozen=True)
class Group:
    """The figures of one database, schema or table incarnation at the latest run."""

    database: str
    schema: str | None
    table: str | None
    table_id: int | None
    deleted: bool
    bytes: Figures

    @property
    def kind(self) -> str:
        if self.table is not None:
            return TABLE
        return SCHEMA if self.schema is not None else DATABASE


@dataclass(frozen=True)
class DroppedObject:
    """A dropped object UNDROP can still restore until ``undrop_until`` (SPEC R10, R21)."""

    object_id: int
    kind: str
    name: str
    dropped_on: datetime
    retention_days: int
    undrop_until: datetime
    dropped_with: str | None  # the container whose drop took it along (SPEC R11)


@dataclass(frozen=True)
class FailsafeBatch:
    """Files of one table that left time travel together and are purged together (R12)."""

    table_id: int
    table: str
    files: int
    bytes: int
    left_time_travel_at: datetime
    purge_at: datetime


@dataclass(frozen=True)
class RunSummary:
    """One lifecycle run; ``steps`` is None while it has not finished (SPEC R29)."""

    run_id: str
    now: datetime
    steps: list[dict[str, Any]] | None


@dataclass(frozen=True)
class RunDetail:
    """One lifecycle run with the tables of its night: the metrics rows its
    storage_metrics step wrote (AS_OF = the run's ``now``), per table incarnation, and
    their totals (SPEC R33, R35); none before that step ran."""

    run: RunSummary
    tables: list[Group]
    totals: Figures


@dataclass
class Dashboard:
    """Everything the views show, as of ``now``, for ``scope``."""

    home: str
    now: datetime
    scope: Scope
    viewer: str = ""
    role: str = ""
    catalog_found: bool = False
    metrics_found: bool = False
    latest_as_of: datetime | None = None
    days: list[Day] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    totals: Figures = field(default_factory=_zero)
    dropped: list[DroppedObject] = field(default_factory=list)
    failsafe: list[FailsafeBatch] = field(default_factory=list)
    runs: list[RunSummary] = field(default_factory=list)
