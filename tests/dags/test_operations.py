"""The plain functions the DAGs run: trigger forms to requests (SPEC R4, R16, R39), the
lifecycle run id, the metric figures, and the retry policy of every Rewind task."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from rewind.errors import InvalidValue, RewindError, UnsupportedError
from rewind.operations.form import (
    Operation,
    PointKind,
    recovery_request,
    restore_request,
)
from rewind.operations.nightly import figures, lifecycle_run_id

pytestmark = pytest.mark.unit

QUERY_ID = "0b9d3c3e-4f4a-4a57-9f0e-2a1c1b2d3e4f"
FORM: dict[str, Any] = {
    "operation": "clone",
    "object_type": "TABLE",
    "name": "shop.public.orders",
    "point_kind": "now",
    "point_relation": "AT",
    "point_value": "",
    "target_name": "shop.public.orders_copy",
    "ignore_insufficient_retention": False,
    "requested_by": "analyst",
}


def test_clone_form_becomes_a_normalised_statement() -> None:
    """SPEC R4: unquoted names fold to upper case; quoted ones keep their case."""
    request = restore_request(
        {
            **FORM,
            "point_kind": "timestamp",
            "point_value": "2026-11-10T09:30:00Z",
            "target_name": 'shop.public."Copy"',
        }
    )
    assert request.operation is Operation.CLONE and request.requested_by == "ANALYST"
    assert request.statement() == (
        'CREATE TABLE SHOP.PUBLIC."Copy" CLONE SHOP.PUBLIC.ORDERS '
        "AT(TIMESTAMP => '2026-11-10T09:30:00+00:00')"
    )


@pytest.mark.parametrize(
    ("kind", "relation", "value", "clause"),
    [
        ("offset", "AT", "-3600", " AT(OFFSET => -3600)"),
        ("statement", "BEFORE", QUERY_ID.upper(), f" BEFORE(STATEMENT => '{QUERY_ID}')"),
        (
            "timestamp",
            "AT",
            "2026-11-10 09:30+01:00",
            " AT(TIMESTAMP => '2026-11-10T08:30:00+00:00')",
        ),
        ("now", "AT", "ignored", ""),
    ],
)
def test_points_follow_snowflake(kind: str, relation: str, value: str, clause: str) -> None:
    """SPEC R16: AT|BEFORE(TIMESTAMP | OFFSET | STATEMENT), normalised."""
    form = {**FORM, "point_kind": kind, "point_relation": relation, "point_value": value}
    assert restore_request(form).point.sql() == clause


def test_a_request_survives_its_trip_through_xcom() -> None:
    """The normalised form (the validate_form task's XCom) gives the same request back."""
    request = restore_request({**FORM, "point_kind": "offset", "point_value": "-60"})
    assert restore_request(request.as_form()) == request


def test_undrop_and_restore_in_place() -> None:
    undrop = restore_request(
        {
            **FORM,
            "operation": "undrop",
            "object_type": "SCHEMA",
            "name": "shop.s",
            "target_name": "",
        }
    )
    assert undrop.statement() == "UNDROP SCHEMA SHOP.S"
    restore = restore_request(
        {
            **FORM,
            "operation": "restore_in_place",
            "point_kind": "statement",
            "point_relation": "BEFORE",
            "point_value": QUERY_ID,
            "target_name": "",
        }
    )
    assert restore.point.kind is PointKind.STATEMENT
    assert restore.point.restore_args() == {"before": QUERY_ID}


@pytest.mark.parametrize(
    ("fields", "error", "words"),
    [
        ({"operation": "drop"}, InvalidValue, "operation: 'drop' is not one of"),
        ({"name": ""}, InvalidValue, "name is required"),
        ({"name": "orders"}, InvalidValue, "is not a TABLE name (DATABASE.SCHEMA.TABLE)"),
        ({"name": "a.b.c; DROP TABLE x"}, InvalidValue, "is not a TABLE name"),
        ({"object_type": "SCHEMA", "name": "a.b.c"}, InvalidValue, "not a SCHEMA name"),
        ({"target_name": ""}, InvalidValue, "clone needs a target_name"),
        ({"target_name": "SHOP.PUBLIC.ORDERS"}, InvalidValue, "must differ"),
        ({"point_kind": "offset", "point_value": "3600"}, InvalidValue, "seconds before now"),
        ({"point_kind": "offset", "point_value": "soon"}, InvalidValue, "not an integer"),
        ({"point_kind": "timestamp", "point_value": "yesterday"}, InvalidValue, "ISO 8601"),
        ({"point_kind": "statement", "point_value": "42"}, InvalidValue, "not a query id"),
        ({"point_kind": "timestamp", "point_value": ""}, InvalidValue, "point_value is required"),
        ({"requested_by": " "}, InvalidValue, "requested_by"),
        ({"ignore_insufficient_retention": True}, InvalidValue, "schema and database clones"),
        ({"ignore_insufficient_retention": "yes"}, InvalidValue, "true or false"),
        ({"operation": "undrop"}, InvalidValue, "target_name goes with clone"),
        (
            {"operation": "undrop", "target_name": "", "point_kind": "offset", "point_value": "-1"},
            InvalidValue,
            "give point_kind now",
        ),
        ({"operation": "restore_in_place", "target_name": ""}, InvalidValue, "point in the past"),
        (
            {
                "operation": "restore_in_place",
                "object_type": "DATABASE",
                "name": "shop",
                "target_name": "",
                "point_kind": "offset",
                "point_value": "-60",
            },
            UnsupportedError,
            "restore in place works on tables",
        ),
    ],
)
def test_bad_forms_name_the_field_and_the_reason(
    fields: dict[str, Any], error: type[RewindError], words: str
) -> None:
    """SPEC R39: a stable code and one line naming what is wrong, before anything runs."""
    with pytest.raises(error) as raised:
        restore_request({**FORM, **fields})
    assert words in raised.value.message


def test_recovery_form() -> None:
    request = recovery_request(
        {"requested_by": "admin", "table_id": "12", "target_name": "db.s.back", "version": None}
    )
    assert (request.table_id, str(request.target), request.version) == (12, "DB.S.BACK", None)
    assert recovery_request(request.as_form()) == request
    for bad, words in [
        ({"table_id": None}, "table_id must be a table id"),
        ({"table_id": 0}, "table_id must be a table id"),
        ({"version": -1}, "version must be 0 or more"),
        ({"target_name": "back"}, "is not a TABLE name"),
    ]:
        with pytest.raises(InvalidValue, match=words):
            recovery_request({**request.as_form(), **bad})


def test_lifecycle_run_id_is_a_stable_uuid_per_dag_run() -> None:
    """One id per DAG run, the same on every try (SPEC R31), 36 characters like the catalog's."""
    first = lifecycle_run_id("rewind_nightly", "scheduled__2026-11-21T00:00:00+00:00")
    assert first == lifecycle_run_id("rewind_nightly", "scheduled__2026-11-21T00:00:00+00:00")
    assert first != lifecycle_run_id("rewind_nightly", "scheduled__2026-11-22T00:00:00+00:00")
    assert str(uuid.UUID(first)) == first and len(first) == 36


def test_figures_are_the_numbers_of_a_summary() -> None:
    summary = {"step": "storage_metrics", "tables": 3, "failsafe_bytes": 10, "ok": True, "x": {}}
    assert figures("rewind.storage", summary) == {
        "rewind.storage.tables": 3.0,
        "rewind.storage.failsafe_bytes": 10.0,
    }


def test_retry_policy_fails_refusals_and_retries_outages() -> None:
    """A RewindError is Rewind's answer, which a retry cannot change; an unreachable
    catalog or storage, or a job that crashed, is worth a retry."""
    from airflow.sdk import RetryAction

    from rewind.errors import AccessDenied, CatalogError, StorageError, ValidationFailed
    from rewind.operations.dagkit import RETRY_POLICY

    def action(error: BaseException) -> RetryAction:
        return RETRY_POLICY.evaluate(error, try_number=1, max_tries=3).action

    assert action(AccessDenied("no")) == RetryAction.FAIL
    assert action(ValidationFailed("bad")) == RetryAction.FAIL
    assert action(CatalogError("locked")) == RetryAction.RETRY
    assert action(StorageError("gone")) == RetryAction.RETRY
    assert action(RuntimeError("JVM died")) == RetryAction.DEFAULT


def test_job_errors_cross_the_process_boundary_with_their_class(tmp_path: Any) -> None:
    """A job's reported error comes back as the same RewindError class and code."""
    from rewind.errors import AccessDenied
    from rewind.lifecycle.job import finish, read_summary

    summary_file = tmp_path / "summary.json"

    def refused() -> dict[str, Any]:
        raise AccessDenied("role CLERK lacks SELECT on table SHOP.PUBLIC.ORDERS.")

    assert finish(str(summary_file), refused) == 1
    with pytest.raises(AccessDenied, match="lacks SELECT") as raised:
        read_summary(summary_file)
    assert raised.value.code == "ACCESS_DENIED"
    assert finish(str(summary_file), lambda: {"step": "x", "files": 2}) == 0
    assert read_summary(summary_file) == {"step": "x", "files": 2}
    assert read_summary(tmp_path / "missing.json") is None
