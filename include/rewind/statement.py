"""What a statement sees while it runs: its query id, the clock, the catalog, storage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewind.catalog.repository import Catalog
from rewind.result import Result
from rewind.storage.delta import TableStore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class SessionState:
    """What carries over between statements of one session (``USE``)."""

    user: str
    role: str
    database: str | None = None
    schema: str | None = None
    dialect: str = "snowflake"
    flow: list[Result] = field(default_factory=list)  # earlier results of a ->> chain


@dataclass
class Context:
    """One statement's execution context.

    ``undo`` collects storage changes to reverse if the statement fails, so that a
    failed statement leaves nothing behind (SPEC R28).
    """

    query_id: str
    text: str
    now: datetime
    catalog: Catalog
    store: TableStore
    state: SessionState
    spark_provider: Callable[[], SparkSession]
    undo: list[Callable[[], None]] = field(default_factory=list)
    # Rewind's own storage roots: never a table's external location (SPEC R41).
    own_roots: tuple[Path, ...] = ()

    def spark(self) -> SparkSession:
        return self.spark_provider()

    def result(self, columns: list[str], rows: list[list[Any]]) -> Result:
        return Result(self.query_id, self.text, columns, rows)

    def status(self, message: str) -> Result:
        return self.result(["status"], [[message]])
