"""SQLAlchemy models of the catalog (ARCHITECTURE: "Where state lives").

One ``objects`` table holds databases, schemas and tables, so that drop history,
ids and name uniqueness work the same for all three (SPEC R3). Timestamps are
stored as naive UTC and handed out as aware UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes over a naive column (SQLite has no time zones)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    pass


class AccountParameter(Base):
    __tablename__ = "account_parameters"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[int] = mapped_column(Integer)


class StorageRoot(Base):
    """The roots the catalog keeps: its warehouse and its fail-safe store (revision 0012,
    ``Catalog.keep_roots``, SPEC R4, R44, R48)."""

    __tablename__ = "storage_roots"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    uri: Mapped[str] = mapped_column(Text)
    # What the catalog writes into the root's marker, so that no other catalog uses it
    # (revision 0015, ``rewind.home.own_root``); None until its first connection.
    token: Mapped[str | None] = mapped_column(String(32), nullable=True)


class User(Base):
    __tablename__ = "users"
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    default_role: Mapped[str] = mapped_column(String(255))
    created_on: Mapped[datetime] = mapped_column(UtcDateTime())


class Role(Base):
    __tablename__ = "roles"
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    created_on: Mapped[datetime] = mapped_column(UtcDateTime())


class RoleGrant(Base):
    __tablename__ = "role_grants"
    role_name: Mapped[str] = mapped_column(ForeignKey("roles.name"), primary_key=True)
    user_name: Mapped[str] = mapped_column(ForeignKey("users.name"), primary_key=True)
    # SHOW GRANTS TO USER (SPEC R37); NULL for grants made before migration 0004.
    created_on: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    granted_by: Mapped[str | None] = mapped_column(String(255), nullable=True)


class CatalogObject(Base):
    """A database, schema or table incarnation (SPEC R1–R3, R10, R11).

    ``parent_id`` is 0 for databases. ``retention_days`` is the explicit value (None:
    inherit). Once dropped, ``dropped_retention_days`` freezes the effective
    retention (R10, R11) and ``dropped_with`` names the container whose drop took it.
    """

    __tablename__ = "objects"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    parent_id: Mapped[int] = mapped_column(BigInteger, index=True)
    name: Mapped[str] = mapped_column(String(255))
    is_transient: Mapped[bool] = mapped_column(Boolean, default=False)
    retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    owner_role: Mapped[str] = mapped_column(String(255))
    created_on: Mapped[datetime] = mapped_column(UtcDateTime())
    created_by: Mapped[str] = mapped_column(String(36))
    dropped_on: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    dropped_retention_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    dropped_with: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    columns: Mapped[list[dict[str, str]] | None] = mapped_column(JSON, nullable=True)
    # SPEC R41 (migration 0008): an external table's resolved location; NULL for a table
    # Rewind created under ``warehouse/<id>/``.
    location: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Migration 0016, BigQuery's table expiration and table snapshots (SPEC R27): the
    # instant the table is dropped; the incarnation a read-only snapshot was taken of, and
    # when; a schema's lifetime of the tables created in it. NULL: never expires; no
    # snapshot; no default lifetime.
    expires_on: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    snapshot_of: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    snapshot_time: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    table_expiration_days: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Migration 0017: a table's declared clustering key and (BigQuery's) partitioning, as
    # Snowflake SQL (``A, TO_DATE(TS)``, ``DATE(TS)``); layout hints, not applied to files.
    cluster_by: Mapped[str | None] = mapped_column(Text, nullable=True)
    partition_by: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        # SPEC R3: a name maps to at most one live incarnation.
        Index(
            "uq_objects_live_name",
            "parent_id",
            "kind",
            "name",
            unique=True,
            sqlite_where=text("dropped_on IS NULL"),
            postgresql_where=text("dropped_on IS NULL"),
        ),
    )


class Statement(Base):
    """The statement log (SPEC R14, R36): every statement, its user, status and error."""

    __tablename__ = "statements"
    query_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    user_name: Mapped[str] = mapped_column(String(255))
    role_name: Mapped[str] = mapped_column(String(255))
    start_time: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    end_time: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    status: Mapped[str] = mapped_column(String(16))
    error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    parent_query_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    # QUERY_HISTORY.QUERY_TYPE (SPEC R36), from the statement's text; NULL before 0005.
    query_type: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # QUERY_HISTORY.QUERY_TAG (migration 0007): who outside Rewind asked (an Airflow run).
    query_tag: Mapped[str | None] = mapped_column(Text, nullable=True)


class StatementObject(Base):
    """What a statement read, wrote or changed by DDL, and at which table version."""

    __tablename__ = "statement_objects"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    query_id: Mapped[str] = mapped_column(String(36), index=True)
    object_id: Mapped[int] = mapped_column(BigInteger, index=True)
    access: Mapped[str] = mapped_column(String(16))  # READ, WRITE, DDL
    operation: Mapped[str | None] = mapped_column(String(16), nullable=True)
    version: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    columns: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # ACCESS_HISTORY (SPEC R36), fixed when the statement ran (migration 0005): the
    # object's name then, whether the statement named it (direct) or reached it through
    # a container it named (a schema clone's tables: base only), and for the statement's
    # main DDL row the Snowflake ``properties`` of object_modified_by_ddl.
    object_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    direct: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    properties: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class TableVersion(Base):
    """The version timeline: table version -> commit time and query id (SPEC R14)."""

    __tablename__ = "table_versions"
    table_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    commit_time: Mapped[datetime] = mapped_column(UtcDateTime())
    query_id: Mapped[str] = mapped_column(String(36), index=True)
    operation: Mapped[str] = mapped_column(String(32))


class ObjectName(Base):
    """Where an object was, by name and parent, from ``valid_from`` on (CREATE, RENAME,
    SWAP). Container clones take the tables that existed at the point "with the names
    they had then" (SPEC R24)."""

    __tablename__ = "object_names"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    object_id: Mapped[int] = mapped_column(BigInteger, index=True)
    valid_from: Mapped[datetime] = mapped_column(UtcDateTime())
    parent_id: Mapped[int] = mapped_column(BigInteger, index=True)
    name: Mapped[str] = mapped_column(String(255))


class CloneFile(Base):
    """A data file a clone shares with its source (SPEC R24, R30, R33).

    The lifecycle keeps such a file in storage while any clone still uses it and
    counts it as RETAINED_FOR_CLONE for its original owner.
    """

    __tablename__ = "clone_files"
    clone_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    path: Mapped[str] = mapped_column(String(1024), primary_key=True)
    source_id: Mapped[int] = mapped_column(BigInteger, index=True)
    source_path: Mapped[str] = mapped_column(String(1024))
    size: Mapped[int] = mapped_column(BigInteger)


class FileState(Base):
    """The lifecycle state of one data file of one table incarnation (SPEC R12, R30, R31).

    ``state`` moves LIVE -> REMOVED -> MOVING -> FAILSAFE -> PURGING (row deleted) for
    permanent tables, REMOVED -> DELETING (row deleted) for transient ones. MOVING,
    DELETING and PURGING are journal states: the intent is committed before the file
    is touched, so a run killed at any instant is finished by the next one. Rows in
    FAILSAFE are the fail-safe manifest. RETAINED rows are files whose owner is done
    with them but a clone still uses (RETAINED_FOR_CLONE, SPEC R33).
    """

    __tablename__ = "file_states"
    table_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    path: Mapped[str] = mapped_column(String(1024), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    added_version: Mapped[int] = mapped_column(BigInteger)
    removed_version: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    removed_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    state: Mapped[str] = mapped_column(String(16), index=True)
    left_time_travel_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    purge_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True, index=True)
    # The deletion-vector file this data file carries now (another writer's, SPEC R43).
    dv_path: Mapped[str | None] = mapped_column(String(1024), nullable=True, index=True)


class LogCursor(Base):
    """The last Delta version of a table the lifecycle has read (SPEC R32), and the table's
    Delta configuration as of it (its last ``metaData``; None: not read yet), which the
    quality step checks without reading the log again (SPEC R42, R50), and the oldest
    version the last clean-up of its log kept readable (None: never cleaned, revision 0013,
    :mod:`rewind.lifecycle.logs`), and when the lifecycle last listed the table's directory
    for leftover files, by the machine's clock (None: no listing recorded, revision 0014,
    :func:`rewind.lifecycle.files.track_leftovers`)."""

    __tablename__ = "log_cursors"
    table_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)
    configuration: Mapped[dict[str, str] | None] = mapped_column(JSON, nullable=True)
    log_cutoff: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    listed_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class LifecycleRun(Base):
    """One lifecycle run: its clock and, once done, its per-step summary."""

    __tablename__ = "lifecycle_runs"
    run_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    now: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class RunAction(Base):
    """An action an Airflow run asked for (a restore, clone, undrop, recovery, or the
    validation of one), done at most once: written in the action's own transaction,
    keyed by DAG, run and action (migration 0010), so a re-run of its task reports it
    instead of repeating it. ``outcome``: what the task reported (no secrets, no names
    beyond the run's form)."""

    __tablename__ = "run_actions"
    dag_id: Mapped[str] = mapped_column(String(250), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(250), primary_key=True)
    action: Mapped[str] = mapped_column(String(64), primary_key=True)
    query_id: Mapped[str] = mapped_column(String(36))
    user_name: Mapped[str] = mapped_column(String(255))
    done_at: Mapped[datetime] = mapped_column(UtcDateTime())
    outcome: Mapped[dict[str, Any]] = mapped_column(JSON)


# -- access control (SPEC R37) ----------------------------------------------------------------
class ObjectGrant(Base):
    """A privilege on one object incarnation, granted to a role (SPEC R37).

    Grants belong to the incarnation (its id), so a dropped object keeps them and
    UNDROP brings them back, while a new incarnation of the same name starts with none.
    Ownership is not a grant: it is ``objects.owner_role``.
    """

    __tablename__ = "object_grants"
    object_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("objects.id"), primary_key=True)
    privilege: Mapped[str] = mapped_column(String(32), primary_key=True)
    role_name: Mapped[str] = mapped_column(ForeignKey("roles.name"), primary_key=True, index=True)
    granted_by: Mapped[str] = mapped_column(String(255))
    created_on: Mapped[datetime] = mapped_column(UtcDateTime())


# -- audit (SPEC R36) ---------------------------------------------------------------------------
class ColumnLineage(Base):
    """One source column of one column a statement wrote (ACCESS_HISTORY ``directSources``).

    Written with the statement (INSERT ... SELECT, CTAS, UPDATE, MERGE) because names and
    columns change later; the source's name then is its READ row's ``object_name``.
    """

    __tablename__ = "column_lineage"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    query_id: Mapped[str] = mapped_column(String(36), index=True)
    target_id: Mapped[int] = mapped_column(BigInteger)
    target_column: Mapped[str] = mapped_column(String(255))
    source_id: Mapped[int] = mapped_column(BigInteger)
    source_column: Mapped[str] = mapped_column(String(255))


# -- SQL user-defined functions (migration 0009) ------------------------------------------------
class Function(Base):
    """A SQL scalar function of a schema: ``CREATE FUNCTION name(arg type, ...) RETURNS type
    AS '<expression>'``. Overloads differ by their number of arguments. Functions are not
    versioned objects: a dropped one is gone (Snowflake has no UNDROP FUNCTION), and they
    live and die with their schema's incarnation (``schema_id``)."""

    __tablename__ = "functions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    schema_id: Mapped[int] = mapped_column(BigInteger, index=True)
    name: Mapped[str] = mapped_column(String(255))
    arity: Mapped[int] = mapped_column(Integer)
    arguments: Mapped[list[list[str]]] = mapped_column(JSON)  # [[name, type], ...]
    returns: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    owner_role: Mapped[str] = mapped_column(String(255))
    created_on: Mapped[datetime] = mapped_column(UtcDateTime())

    __table_args__ = (UniqueConstraint("schema_id", "name", "arity"),)
