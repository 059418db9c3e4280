"""Trigger forms → typed requests (the ``rewind_restore`` and ``rewind_failsafe_recovery`` DAGs).

A form is what Airflow's ``Param`` fields hold: strings, booleans, integers. A request
is what Rewind runs: names parsed and normalised (SPEC R4), the point checked (R16),
the combination allowed. A bad form raises a :class:`~rewind.errors.RewindError` that
names the field and the reason (SPEC R39) before anything runs; a request turns back
into its normalised form (``as_form``), which is what travels between tasks as XCom.

Identity is not a form field (SPEC R37): :func:`with_identity` puts the Rewind user the
run acts as (:mod:`rewind.operations.identity`) and the query tag naming the Airflow user
and run into the form, over anything typed there.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rewind.clock import format_timestamp, parse_timestamp
from rewind.constants import DATABASE, SCHEMA, TABLE
from rewind.errors import AccessDenied, InvalidValue, UnsupportedError
from rewind.identifiers import QualifiedName, normalize, rewind_name

NAME_PARTS = {DATABASE: 1, SCHEMA: 2, TABLE: 3}
NAME_SHAPES = {DATABASE: "DATABASE", SCHEMA: "DATABASE.SCHEMA", TABLE: "DATABASE.SCHEMA.TABLE"}
IGNORE_CLAUSE = " IGNORE TABLES WITH INSUFFICIENT DATA RETENTION"
_PART = r'([A-Za-z_][A-Za-z0-9_$]*)|"((?:[^"]|"")+)"'
_NAME_PART = re.compile(_PART)
_NAME = re.compile(rf"(?:{_PART})(?:\.(?:{_PART}))*")


class Operation(StrEnum):
    UNDROP = "undrop"
    CLONE = "clone"
    RESTORE_IN_PLACE = "restore_in_place"


class PointKind(StrEnum):
    NOW = "now"
    TIMESTAMP = "timestamp"
    OFFSET = "offset"
    STATEMENT = "statement"


RELATIONS = ("AT", "BEFORE")


@dataclass(frozen=True)
class Point:
    """``AT|BEFORE(kind => value)`` (SPEC R16), or now. ``value`` is normalised text."""

    kind: PointKind = PointKind.NOW
    relation: str = "AT"
    value: str = ""

    def sql(self) -> str:
        """The clause after a table reference: ``" AT(OFFSET => -3600)"``; empty for now."""
        if self.kind is PointKind.NOW:
            return ""
        literal = self.value if self.kind is PointKind.OFFSET else f"'{self.value}'"
        return f" {self.relation}({self.kind.value.upper()} => {literal})"

    def restore_args(self) -> dict[str, str]:
        """``Connection.restore``'s ``at=`` or ``before=`` (it reads the kind off the value)."""
        return {self.relation.lower(): self.value}


@dataclass(frozen=True)
class RestoreRequest:
    """One undrop, clone or restore in place, run as ``requested_by`` (SPEC R21, R24, R37)."""

    operation: Operation
    object_type: str
    name: QualifiedName
    point: Point
    target: QualifiedName | None
    ignore_insufficient_retention: bool
    requested_by: str
    query_tag: str = ""

    def statement(self) -> str:
        """The SQL of an undrop or a clone (restore in place is ``Connection.restore``)."""
        if self.operation is Operation.UNDROP:
            return f"UNDROP {self.object_type} {self.name}"
        ignore = IGNORE_CLAUSE if self.ignore_insufficient_retention else ""
        return (
            f"CREATE {self.object_type} {self.target} CLONE {self.name}{self.point.sql()}{ignore}"
        )

    @property
    def restored(self) -> QualifiedName:
        """The object that holds the result: the clone, or the object itself."""
        return self.target if self.target is not None else self.name

    def as_form(self) -> dict[str, Any]:
        """The normalised form: JSON for XCom, and ``restore_request`` gives this back."""
        return {
            "operation": self.operation.value,
            "object_type": self.object_type,
            "name": str(self.name),
            "point_kind": self.point.kind.value,
            "point_relation": self.point.relation,
            "point_value": self.point.value,
            "target_name": str(self.target) if self.target is not None else "",
            "ignore_insufficient_retention": self.ignore_insufficient_retention,
            "requested_by": self.requested_by,
            "query_tag": self.query_tag,
        }


@dataclass(frozen=True)
class RecoveryRequest:
    """Recover one table from fail-safe into a new table (SPEC R12; ACCOUNTADMIN only)."""

    table_id: int
    target: QualifiedName
    version: int | None
    requested_by: str
    query_tag: str = ""

    def statement(self) -> str:
        """The request as ``Connection.failsafe_recover`` logs it."""
        version = f" VERSION {self.version}" if self.version is not None else ""
        return f"FAILSAFE RECOVER {self.table_id} INTO {self.target}{version}"

    def as_form(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "target_name": str(self.target),
            "version": self.version,
            "requested_by": self.requested_by,
            "query_tag": self.query_tag,
        }


def restore_request(form: Mapping[str, Any]) -> RestoreRequest:
    """Check a ``rewind_restore`` form and build its request.

    Raises:
        InvalidValue: a field is missing, malformed, or does not go with the operation.
        UnsupportedError: restore in place of a schema or database.
    """
    operation = Operation(_choice(form, "operation", [o.value for o in Operation]))
    object_type = _choice(form, "object_type", list(NAME_PARTS))
    name = qualified_name(_text(form, "name"), object_type, "name")
    point = _point(form)
    target_text = _text(form, "target_name", required=False)
    target = qualified_name(target_text, object_type, "target_name") if target_text else None
    ignore = _flag(form, "ignore_insufficient_retention")
    request = RestoreRequest(
        operation,
        object_type,
        name,
        point,
        target,
        ignore,
        user_name(form.get("requested_by")),
        str(form.get("query_tag") or ""),
    )
    _check_operation(request)
    return request


def _check_operation(request: RestoreRequest) -> None:
    """What each operation needs: UNDROP takes no point and no target (R21); a clone a
    target (R24); restore in place a table and a past point (sql/restore.py)."""
    op = request.operation
    if op is not Operation.CLONE and request.target is not None:
        raise InvalidValue(f"Restore form: target_name goes with clone, not {op.value}.")
    if op is Operation.UNDROP and request.point.kind is not PointKind.NOW:
        raise InvalidValue("Restore form: undrop restores the dropped object; give point_kind now.")
    if op is Operation.CLONE and request.target is None:
        raise InvalidValue("Restore form: clone needs a target_name for the new object.")
    if op is Operation.CLONE and request.target == request.name:
        raise InvalidValue("Restore form: the clone's target_name must differ from its name.")
    if op is Operation.RESTORE_IN_PLACE and request.object_type != TABLE:
        raise UnsupportedError(
            f"Restore form: restore in place works on tables, not a {request.object_type}; "
            "clone the point instead."
        )
    if op is Operation.RESTORE_IN_PLACE and request.point.kind is PointKind.NOW:
        raise InvalidValue("Restore form: restore in place needs a point in the past.")
    if request.ignore_insufficient_retention and not (
        op is Operation.CLONE and request.object_type != TABLE
    ):
        raise InvalidValue(
            "Restore form: ignore_insufficient_retention goes with schema and database clones."
        )


def recovery_request(form: Mapping[str, Any]) -> RecoveryRequest:
    """Check a ``rewind_failsafe_recovery`` form and build its request.

    Raises:
        InvalidValue: a field is missing or malformed.
    """
    table_id = _integer(form.get("table_id"), "table_id")
    if table_id is None or table_id <= 0:
        raise InvalidValue("Recovery form: table_id must be a table id (a positive integer).")
    version = _integer(form.get("version"), "version")
    if version is not None and version < 0:
        raise InvalidValue("Recovery form: version must be 0 or more.")
    target = qualified_name(_text(form, "target_name"), TABLE, "target_name")
    return RecoveryRequest(
        table_id,
        target,
        version,
        user_name(form.get("requested_by")),
        str(form.get("query_tag") or ""),
    )


def with_identity(form: Mapping[str, Any], requested_by: str, query_tag: str) -> dict[str, Any]:
    """``form`` acting as ``requested_by`` (the run's user, never the form's, SPEC R37).

    Raises:
        AccessDenied: the form names another user in ``requested_by``.
    """
    typed = str(form.get("requested_by") or "").strip()
    if typed and user_name(typed) != requested_by:
        raise AccessDenied(
            f"Form field requested_by: a run acts as the Rewind user of the Airflow user who "
            f"triggered it ({requested_by}), not as '{typed}'."
        )
    return {**form, "requested_by": requested_by, "query_tag": query_tag}


def qualified_name(text: str, object_type: str, field: str) -> QualifiedName:
    """A fully qualified name of ``object_type`` (SPEC R4): the form has no current database.

    Each part is a plain identifier (folded to upper case) or a double-quoted one (kept
    as written, ``""`` for a quote); nothing else gets through to the SQL.

    Raises:
        InvalidValue: not a name, or not as many parts as the object type has.
    """
    found = [
        normalize(quoted.replace('""', '"'), quoted=True) if quoted else normalize(plain)
        for plain, quoted in _NAME_PART.findall(text)
    ]
    shape = NAME_SHAPES[object_type]
    if len(found) != NAME_PARTS[object_type] or not _NAME.fullmatch(text):
        raise InvalidValue(f"Form field {field}: '{text}' is not a {object_type} name ({shape}).")
    return QualifiedName(tuple(found))


def user_name(value: Any) -> str:
    """The Rewind user a request runs as (SPEC R37); names fold like identifiers (R4)."""
    text = str(value or "").strip()
    if not text:
        raise InvalidValue("Form field requested_by: name the Rewind user this runs as.")
    return rewind_name(text)


def _point(form: Mapping[str, Any]) -> Point:
    kind = PointKind(_choice(form, "point_kind", [k.value for k in PointKind]))
    relation = _choice(form, "point_relation", list(RELATIONS), default="AT")
    if kind is PointKind.NOW:
        return Point()
    text = _text(form, "point_value")
    if kind is PointKind.TIMESTAMP:
        return Point(kind, relation, format_timestamp(parse_timestamp(text)))
    if kind is PointKind.OFFSET:
        seconds = _integer(text, "point_value")
        if seconds is None or seconds >= 0:
            raise InvalidValue(
                f"Form field point_value: an offset is seconds before now (like -3600), "
                f"not '{text}'."
            )
        return Point(kind, relation, str(seconds))
    try:
        return Point(kind, relation, str(uuid.UUID(text)))
    except ValueError:
        raise InvalidValue(f"Form field point_value: '{text}' is not a query id.") from None


def _text(form: Mapping[str, Any], field: str, required: bool = True) -> str:
    text = str(form.get(field) or "").strip()
    if required and not text:
        raise InvalidValue(f"Form field {field} is required.")
    return text


def _choice(
    form: Mapping[str, Any], field: str, allowed: list[str], default: str | None = None
) -> str:
    value = str(form.get(field) or default or "").strip()
    matched = [a for a in allowed if a.lower() == value.lower()]
    if not matched:
        raise InvalidValue(f"Form field {field}: '{value}' is not one of {', '.join(allowed)}.")
    return matched[0]


def _flag(form: Mapping[str, Any], field: str) -> bool:
    value = form.get(field, False)
    if not isinstance(value, bool):
        raise InvalidValue(f"Form field {field} must be true or false.")
    return value


def _integer(value: Any, field: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InvalidValue(f"Form field {field}: '{value}' is not an integer.")
    try:
        return int(str(value).strip())
    except ValueError:
        raise InvalidValue(f"Form field {field}: '{value}' is not an integer.") from None
