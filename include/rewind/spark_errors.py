"""Spark and Java failures as one-line RewindErrors (SPEC R39).

A ``Py4JJavaError`` reads "An error occurred while calling o93.parquet." followed by a
Java stack trace: the reason is in its chain of causes. A data file Spark cannot read
(missing, truncated, not Parquet) or a table directory it cannot write is a
``STORAGE_ERROR`` whose message holds the file's path, so that the statement can name
the table it belongs to (:func:`rewind.sql.tables.naming_table`).
"""

from __future__ import annotations

import re
from typing import Any

from rewind.errors import (
    ExecutionError,
    InvalidValue,
    RewindError,
    SparkUnavailable,
    SqlSyntaxError,
    StorageError,
)

_MAX_CAUSES = 12
# What a write raises in Spark for a NULL in a column Delta says is not nullable
# (rewind.sql.frames.write_frame), in Snowflake's words, then the column's quoted name.
NOT_NULL_VIOLATION = "NULL result in a non-nullable column"
# ... and for a row a Delta CHECK constraint or invariant does not hold for: its name and
# expression.
CHECK_VIOLATION = "A row breaks the table's Delta constraint"
# ... and for a value a statement gives a GENERATED ALWAYS AS IDENTITY column (delta-spark's
# words), then the column's quoted name.
IDENTITY_VIOLATION = "Providing values for GENERATED ALWAYS AS IDENTITY column"
# ... and for a string longer than its column's declared length, then the column's quoted
# name and its type (VARCHAR(10)).
LENGTH_VIOLATION = "A string is too long for column"
# ... and for a value of another kind than its semi-structured column's (an OBJECT into an
# ARRAY column), then the column's quoted name and its type.
KIND_VIOLATION = "A value is not of the type of column"
_VIOLATIONS = (
    NOT_NULL_VIOLATION,
    CHECK_VIOLATION,
    IDENTITY_VIOLATION,
    LENGTH_VIOLATION,
    KIND_VIOLATION,
)
_VIOLATION = re.compile(
    rf"(?:{'|'.join(map(re.escape, _VIOLATIONS))})"
    r" '(?:[^']|'')*'"
    r"(?: \([^\n]*?\))?(?= SQLSTATE|\.?\s*$|\n)"
)
_READ_FAILED = re.compile(r"\[FAILED_READ_FILE[.\w]*\][^\n]*?\bfile (?P<path>\S+?)\.?(\s|$)")
_PATH_NOT_FOUND = re.compile(r"\[PATH_NOT_FOUND\] Path does not exist: (?P<path>\S+?)\.?(\s|$)")
# Java exceptions that mean the storage refused or lost something, not a bad query.
_STORAGE_CLASSES = ("java.io.", "java.nio.file.", "org.apache.hadoop.fs.")


# Spark's advice to change its configuration, which a Rewind user cannot (nor should).
_SPARK_ADVICE = re.compile(r'\s*If necessary set "spark\.[\w.]+" to "\w+"[^.]*\.')


# A gRPC failure's text (Spark Connect) names the RPC object on its first line; its
# reason is in ``details``.
_GRPC_DETAILS = re.compile(
    r'^<_\w+ of RPC that terminated with:.*?\bdetails = "(?P<details>[^"]*)"', re.S
)


def _first_line(text: str) -> str:
    grpc = _GRPC_DETAILS.match(text.strip())
    if grpc:
        return grpc["details"][:300]
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return _SPARK_ADVICE.sub("", lines[0])[:300] if lines else ""


def _local(path: str) -> str:
    """``file:///a/b`` as ``/a/b``."""
    return re.sub(r"^file:/+", "/", path)


def _about(path: str, text: str) -> str:
    """``text`` without the words naming ``path`` (Spark repeats it in every cause)."""
    name = path.rsplit("/", 1)[-1]
    words = " ".join(w for w in text.split() if name not in w)
    return words.removeprefix("is ").strip()


def _causes(exc: BaseException) -> list[tuple[str, str]]:
    """(Java class, message) of a Py4JJavaError and its causes, outermost first."""
    java: Any = getattr(exc, "java_exception", None)
    found: list[tuple[str, str]] = []
    while java is not None and len(found) < _MAX_CAUSES:
        found.append((str(java.getClass().getName()), str(java.getMessage() or "")))
        java = java.getCause()
    return found


def _analysis_message(exc: Any) -> str:
    """Spark's analysis error in Snowflake's words where Spark's words name its insides:
    an unknown function (Spark lists its catalog's search path) and an unknown column
    (Spark's suggestions include Rewind's working columns, ``__rw_file`` ...)."""
    condition = str(getattr(exc, "getCondition", lambda: "")() or "")
    params = getattr(exc, "getMessageParameters", lambda: None)() or {}
    if condition == "UNRESOLVED_ROUTINE" and "routineName" in params:
        return f"Unknown function {params['routineName'].replace('`', '')}."
    if condition.startswith("UNRESOLVED_COLUMN") and "objectName" in params:
        from rewind.storage.columns import RESERVED_PREFIX

        proposals = re.findall(r"`([^`]*)`", str(params.get("proposal", "")))
        kept = [p for p in proposals if not p.startswith(RESERVED_PREFIX)]
        hint = f" Did you mean {', '.join(kept)}?" if kept else ""
        return f"invalid identifier '{params['objectName'].replace('`', '')}'.{hint}"
    return _first_line(str(exc))


def _java_error(exc: BaseException) -> RewindError:
    causes = _causes(exc)
    for _, message in causes:
        unreadable = _READ_FAILED.search(message)
        if unreadable:
            path = _local(unreadable["path"])
            reason = _about(path, _first_line(causes[-1][1])) or "unreadable"
            return StorageError(f"Cannot read data file {path}: {reason}.")
    if not causes:
        return ExecutionError(_first_line(str(exc)) or type(exc).__name__)
    root_class, root_message = causes[-1]
    if root_class.startswith(_STORAGE_CLASSES):
        return StorageError(_first_line(root_message) or root_class)
    named = next((m for _, m in causes if m.startswith("[")), root_message)
    bad = _bad_value(named[1 : named.find("]")], {}) if named.startswith("[") else None
    if bad is not None:  # a condition that needs no parameters (the JVM's, in process)
        return InvalidValue(bad)
    return ExecutionError(_first_line(named) or root_class)


_STOPPED = "Cannot call methods on a stopped SparkContext"


def lost_jvm(exc: BaseException) -> RewindError | None:
    """An in-process Spark whose JVM is gone (py4j's connection to it refused or broken,
    after it ran out of memory or was killed): Spark, not storage, is unavailable. The
    failure may be one raised while handling that one (PySpark asking the gone JVM what
    its error was: "py4j.reflection.TypeUtil.isInstanceOf does not exist in the JVM"), or
    py4j's bare "An error occurred while calling o71.getResult" (it logs the broken
    connection and answers that) from a JVM process that has exited."""
    link: BaseException | None = exc
    for _ in range(8):  # the exception, then what it was raised from or while handling
        if link is None:
            return None
        kind = type(link).__name__
        if (
            kind == "Py4JNetworkError"
            or (isinstance(link, ConnectionError) and _raised_in_py4j(link))
            or (kind == "Py4JError" and _jvm_exited())
        ):
            return SparkUnavailable(
                "Spark does not answer: this process's Spark JVM is gone (it ran out of "
                "memory or was stopped); a new process starts a new one."
            )
        link = link.__cause__ or link.__context__
    return None


def _jvm_exited() -> bool:
    """Whether this process's Spark JVM has exited, or does within a few seconds (its
    connection breaks as it exits, a moment before the process ends)."""
    import subprocess

    from pyspark import SparkContext

    jvm = getattr(SparkContext._gateway, "proc", None)
    if jvm is None:
        return False
    try:
        jvm.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return False
    return True


def _raised_in_py4j(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None and "py4j" not in tb.tb_frame.f_code.co_filename:
        tb = tb.tb_next
    return tb is not None


def _unreachable(exc: BaseException) -> RewindError | None:
    """A Spark Connect server that does not answer or refuses the client's token; a
    Spark that stopped while answering."""
    import grpc

    if isinstance(exc, grpc.RpcError):
        status = exc.code()
    else:
        status = getattr(exc, "getGrpcStatusCode", lambda: None)()
    # The server's JVM exited mid-statement (it exits when out of memory: spark.DRIVER_CONF),
    # or its SparkContext stopped while the JVM still answered.
    if _STOPPED in str(exc) or status == grpc.StatusCode.UNAVAILABLE:
        return SparkUnavailable(
            "Spark stopped while answering this statement, most often because a value of "
            "its result was too large to hold in memory (a very long string or array); "
            "the next statement starts a new Spark Connect server."
        )
    if status == grpc.StatusCode.UNAUTHENTICATED:
        return SparkUnavailable(
            f"The Spark Connect server refused this client: {_first_line(str(exc))}"
        )
    return None


_NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")
_NAMED_VALUES = {"DATE": "Date", "TIMESTAMP": "Timestamp", "TIMESTAMP_NTZ": "Timestamp"}


# A table whose Delta protocol lists fewer features than its schema uses (a NOT NULL column
# beside a TIMESTAMP_NTZ one, written so by delta-rs and by Rewind before 2026-12-07):
# delta-spark reads none of it; a schema change of Rewind's writes the protocol it needs.
_PROTOCOL_SHORT = (
    "The table's Delta protocol does not list a feature its columns use (invariants: a NOT "
    "NULL column), so Spark reads none of it; its data is whole. Any change of its columns "
    "writes the protocol they need, e.g. COMMENT ON COLUMN <table>.<column> IS '...'."
)


# Spark's conditions about a bad value, in Snowflake's words: (the parameters they need,
# the message), as :func:`_bad_value` answers them.
_WORDED = {
    "DUPLICATED_MAP_KEY": (("key",), "Duplicate field key '{key}'."),  # OBJECT_AGG
    # a check a rewritten function makes (PARSE_JSON)
    "USER_RAISED_EXCEPTION": (("errorMessage",), "{errorMessage}"),
    # BASE64_DECODE_STRING / HEX_DECODE_STRING of malformed text
    "CONVERSION_INVALID_INPUT": (("str", "fmt"), "The string {str} is not valid {fmt}."),
    # BigQuery's DATE(y, m, d) / DATETIME(...) of a part past its range (hour 25)
    "DATETIME_FIELD_OUT_OF_BOUNDS.WITH_SUGGESTION": (("rangeMessage",), "{rangeMessage}."),
    # a VALUES row's value that fails (Spark computes its inline tables first)
    "INVALID_INLINE_TABLE.FAILED_SQL_EXPRESSION_EVALUATION": (
        ("sqlExpr",),
        "A value of the VALUES list cannot be computed: {sqlExpr}.",
    ),
}


def _bad_value(condition: str, params: dict[str, str]) -> str | None:
    """Spark's error about a value the statement gave or computed, in Snowflake's words
    (a value that is no number or date, a number too large for its column, a division
    by zero): the statement's data is at fault, not Spark, and Spark's words name its own
    types and settings. None for any other error."""
    if condition == "CAST_INVALID_INPUT":
        target = params.get("targetType", "").strip('"').upper()
        value = params.get("expression", "")
        if target.startswith(_NUMERIC_TYPES):
            return f"Numeric value {value} is not recognized."
        if target == "BOOLEAN":
            return f"Boolean value {value} is not recognized."
        kind = _NAMED_VALUES.get(target)
        return f"{kind} {value} is not recognized." if kind else None
    if condition == "CANNOT_PARSE_TIMESTAMP":  # TO_DATE / PARSE_DATE of text its format misses
        found = re.search(r"Text '(?P<text>.*)' could not be parsed", params.get("message", ""))
        text = f" '{found['text']}'" if found else ""
        return f"Can't parse{text} as a date or time with its format."
    worded = _WORDED.get(condition)
    if worded is not None and all(params.get(key) for key in worded[0]):
        return worded[1].format_map(params)
    if condition.startswith("NUMERIC_VALUE_OUT_OF_RANGE") and "value" in params:
        number = f"NUMBER({params.get('precision')},{params.get('scale')})"
        return f"Numeric value '{params['value'].strip()}' is out of range for {number}."
    return {
        "DIVIDE_BY_ZERO": "Division by zero.",
        "ARITHMETIC_OVERFLOW": "Number out of representable range.",
        "SCALAR_SUBQUERY_TOO_MANY_ROWS": "Single-row subquery returns more than one row.",
    }.get(condition)


def _analysis_error(exc: Exception) -> RewindError:
    """Spark's analysis refusing the statement: a data file gone, else a compilation error."""
    missing = _PATH_NOT_FOUND.search(str(exc))
    if missing:
        return StorageError(f"Data file {_local(missing['path'])} is missing.")
    return RewindError(
        f"SQL compilation error: {_analysis_message(exc)}", code="SQL_COMPILATION_ERROR"
    )


def spark_error(exc: BaseException) -> RewindError | None:
    """The RewindError for a Spark or Py4J failure; None for any other exception."""
    try:
        from pyspark.errors import AnalysisException, ParseException, PySparkException
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    unreachable = _unreachable(exc)
    if unreachable is not None:
        return unreachable
    if "[DELTA_FEATURES_PROTOCOL_METADATA_MISMATCH]" in str(exc):
        return StorageError(_PROTOCOL_SHORT)
    violation = _VIOLATION.search(str(exc))
    if violation:
        return InvalidValue(f"{violation[0].strip()}: nothing was written.")
    if isinstance(exc, PySparkException):  # a value at fault, whenever Spark computed it
        bad = _bad_value(str(exc.getCondition() or ""), exc.getMessageParameters() or {})
        if bad is not None:
            return InvalidValue(bad)
    if isinstance(exc, ParseException):
        return SqlSyntaxError(f"SQL compilation error: {_first_line(str(exc))}")
    if isinstance(exc, AnalysisException):
        return _analysis_error(exc)
    if isinstance(exc, PySparkException):
        unreadable = _READ_FAILED.search(str(exc))
        if unreadable:
            return StorageError(f"Cannot read data file {_local(unreadable['path'])}.")
        return ExecutionError(_first_line(str(exc)))
    if type(exc).__name__ in ("Py4JJavaError", "Py4JError"):
        return _java_error(exc)
    return None
