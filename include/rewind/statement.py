"""What a statement sees while it runs: its query id, the clock, the catalog, storage."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rewind.catalog.repository import Catalog
from rewind.clock import Clock
from rewind.errors import RewindError
from rewind.result import Result
from rewind.storage.delta import TableStore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from rewind.storage.location import Root


@dataclass
class SessionState:
    """What carries over between statements of one session (``USE``, ``SET``)."""

    user: str
    role: str
    database: str | None = None
    schema: str | None = None
    dialect: str = "snowflake"
    flow: list[Result] = field(default_factory=list)  # earlier results of a ->> chain
    query_ids: list[str] = field(default_factory=list)  # its statements', in order
    variables: dict[str, Any] = field(default_factory=dict)  # name -> variables.Variable


# What a Change does. Data: one per kind of row change it makes (each a privilege).
INSERT, UPDATE, DELETE = "INSERT", "UPDATE", "DELETE"
# DDL: a new object in a container; the live one OR REPLACE replaces; DROP; ALTER (also
# RENAME); a SWAP's partner; a RENAME into another container; GRANT ... ON / SHOW GRANTS ON.
CREATE, REPLACE, DROP, ALTER, SWAP, MOVE, GRANT = (
    "CREATE",
    "REPLACE",
    "DROP",
    "ALTER",
    "SWAP",
    "MOVE",
    "GRANT",
)
DATA_CHANGES = (INSERT, UPDATE, DELETE)


@dataclass(frozen=True)
class Reference:
    """One table reference of the statement's text, resolved to the incarnation it reads."""

    parts: tuple[str, ...]
    object_id: int | None  # None: a system view, or a name that does not resolve
    system_view: bool
    target: bool  # the table the statement writes or creates (not a read of it)
    error: RewindError | None = None  # why the name does not resolve: raised when it runs


@dataclass(frozen=True)
class Change:
    """One object the statement writes, creates, drops or alters (``operation``).

    ``object_id``: the object changed (None for CREATE: it does not exist yet);
    ``parent_id``: for CREATE and MOVE, the container the object goes into (None: the
    account).
    """

    operation: str
    kind: str
    object_id: int | None
    parent_id: int | None = None


@dataclass(frozen=True)
class Analysis:
    """What one statement reads, writes, creates, drops and alters, resolved once after
    parsing (``rewind.sql.analysis``), before it runs: authorization (SPEC R37) decides
    from it, the audit trail (R36) records from it, execution binds its table references
    to it. A plain value: ids, names and the keyed statement; no session, no Spark.

    ``keyed``: the statement's tree with every resolved table reference renamed to its
    key ``__RW_T<id>``; ``tables``: key -> that table's columns (the lineage's input).
    ``account``: account-level actions only ACCOUNTADMIN may take (``CREATE ROLE``).
    ``clone_source``: the object ``CLONE`` copies.
    """

    references: tuple[Reference, ...] = ()
    changes: tuple[Change, ...] = ()
    account: tuple[str, ...] = ()
    clone_source: Reference | None = None
    keyed: Any = None
    tables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def reads(self) -> list[Reference]:
        """The references the statement reads: every one but its target."""
        return [r for r in self.references if not r.target]

    def key_ids(self) -> dict[str, int]:
        """Lineage key -> table id."""
        return {key: int(key.removeprefix(TABLE_KEY)) for key in self.tables}


TABLE_KEY = "__RW_T"  # a resolved table's key in Analysis.keyed: __RW_T<id>


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
    own_roots: tuple[Root, ...] = ()
    # What the statement reads and changes, resolved before it runs (set by execute).
    analysis: Analysis = field(default_factory=Analysis)
    # Where ``now`` came from: on the system clock, a commit that another writer's commit
    # overtook while the statement ran takes the clock's later time (tables.check_clock).
    clock: Clock = field(default_factory=Clock)

    def spark(self) -> SparkSession:
        return self.spark_provider()

    def result(self, columns: list[str], rows: list[list[Any]]) -> Result:
        return Result(self.query_id, self.text, columns, rows)

    def status(self, message: str) -> Result:
        return self.result(["status"], [[message]])
