"""One error hierarchy with stable codes (SPEC R39).

Every user-facing failure is a :class:`RewindError`; the CLI prints it as one line
``error: <CODE>: <message>`` and exits 1. Codes are part of the contract: never
rename one, add new ones instead.
"""

from __future__ import annotations

from datetime import datetime


def one_line(text: str) -> str:
    """``text`` with its control characters escaped (``\\n``): a message names objects,
    and a quoted name may hold a newline, yet the message stays one line (SPEC R39)."""
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode() for c in text
    )


class RewindError(Exception):
    """A user-facing error with a stable code and a one-line message (SPEC R39)."""

    code = "INTERNAL_ERROR"

    def __init__(self, message: str, code: str | None = None) -> None:
        message = one_line(message)
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class SqlSyntaxError(RewindError):
    code = "SYNTAX_ERROR"


class UnsupportedError(RewindError):
    code = "UNSUPPORTED"


class ObjectNotFound(RewindError):
    code = "OBJECT_NOT_FOUND"


class ObjectAlreadyExists(RewindError):
    code = "OBJECT_ALREADY_EXISTS"


class NoCurrentContainer(RewindError):
    code = "NO_CURRENT_CONTAINER"


class InvalidRetention(RewindError):
    code = "INVALID_RETENTION"


class InvalidValue(RewindError):
    code = "INVALID_VALUE"


class TimeTravelUnavailable(RewindError):
    """SPEC R17. ``instant`` is the point asked for, ``earliest`` the oldest readable one,
    ``created`` whether that is the table's creation (the dialects word the message
    differently from these facts)."""

    code = "TIME_TRAVEL_UNAVAILABLE"

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        instant: datetime | None = None,
        earliest: datetime | None = None,
        created: bool = False,
    ) -> None:
        super().__init__(message)
        self.table, self.instant, self.earliest = table, instant, earliest
        self.created = created


class UnknownStatement(RewindError):
    code = "UNKNOWN_STATEMENT"


class CannotUndrop(RewindError):
    code = "CANNOT_UNDROP"


class ClockBehind(RewindError):
    code = "CLOCK_BEHIND"


class UnknownUser(RewindError):
    code = "UNKNOWN_USER"


class ExecutionError(RewindError):
    """A statement was well-formed but failed while running (e.g. a bad cast)."""

    code = "EXECUTION_ERROR"


class StorageError(RewindError):
    code = "STORAGE_ERROR"


class CatalogError(RewindError):
    code = "CATALOG_ERROR"


class SparkUnavailable(RewindError):
    """Spark does not answer: the Spark Connect server did not start, stopped, or cannot
    be reached."""

    code = "SPARK_UNAVAILABLE"


class ConfigurationError(RewindError):
    """Something the installation must provide is missing (Delta Lake's jars)."""

    code = "CONFIGURATION_ERROR"


class InvalidLocation(RewindError):
    """CREATE EXTERNAL TABLE: the location is missing, unreadable, not a Delta table or
    Rewind's own storage (SPEC R41)."""

    code = "INVALID_LOCATION"


class LocationInUse(RewindError):
    """CREATE EXTERNAL TABLE: another table (live or dropped) governs the location (R41)."""

    code = "LOCATION_IN_USE"


class ConcurrentWrite(RewindError):
    """Another writer's commit conflicts with this statement's, even after the bounded
    retries (SPEC R40): the statement changed nothing; run it again."""

    code = "CONCURRENT_WRITE"


class UnsupportedTableFeature(RewindError):
    """A Delta table uses a feature Rewind cannot read or write correctly (SPEC R41, R43)."""

    code = "UNSUPPORTED_TABLE_FEATURE"


class ReadOnlyTable(RewindError):
    """A statement would change a table snapshot's rows or columns (BigQuery's
    ``CREATE SNAPSHOT TABLE``, SPEC R27): a snapshot keeps its instant as it was; a
    writable copy is ``CREATE TABLE x CLONE snapshot``."""

    code = "READ_ONLY_TABLE"


class AccessDenied(RewindError):
    """The current role lacks a privilege (SPEC R37); the message names it."""

    code = "ACCESS_DENIED"


class ValidationFailed(RewindError):
    """A data-quality expectation on the lifecycle's outputs failed (SPEC R29 step 6).

    ``failed``: the titles of the failed expectations, without the objects they name
    (what Airflow may show to every reader of the run, R37)."""

    code = "VALIDATION_FAILED"

    def __init__(self, message: str, failed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.failed = failed


class AlreadyDone(RewindError):
    """The action an Airflow run asked for committed already (a re-run of its task after
    a retry or a clear): it is reported, never repeated (issue 25)."""

    code = "ALREADY_DONE"


class ChangeTrackingUnavailable(RewindError):
    """SPEC R40: the CHANGES clause over an interval whose rows' identities the table did
    not keep (change tracking off at its start or within it, or a writer that gave copied
    rows new ids)."""

    code = "CHANGE_TRACKING_UNAVAILABLE"


def error_of(code: str, message: str) -> RewindError:
    """Rebuild an error reported across a process boundary (a Spark job's summary file)
    as the class that has ``code``, so callers can tell the kinds apart."""
    pending: list[type[RewindError]] = [RewindError]
    while pending:
        cls = pending.pop()
        if cls.code == code:
            return cls(message)
        pending.extend(cls.__subclasses__())
    return RewindError(message, code=code)
