"""The restore DAG's functions on schemas and databases, in-process (SPEC R21, R24, R37):
every table of the restored container is counted against the point, and a table whose
rows differ fails the validation by name.

The DAG runs these same functions in its Spark jobs (``test_restore_dag.py`` runs the
DAG on tables); here they run in this process's SparkSession, which is quicker.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rewind.errors import ObjectNotFound, ValidationFailed
from rewind.operations.form import restore_request
from rewind.operations.restore import run_restore, validate_restore

pytestmark = pytest.mark.spark

# Three moments of one day: retention is the account's 1 day.
DAY1, DAY2, DAY3 = (f"2026-11-10T{hour:02d}:00:00+00:00" for hour in (9, 12, 15))
FORM = {"object_type": "SCHEMA", "point_kind": "now", "requested_by": "ADMIN"}


@pytest.fixture
def shop(connect: Callable[..., Any]) -> Callable[..., Any]:
    """Schema SHOP.SALES with two tables, written at DAY1; ``count(ref, now)``."""
    connect(now=DAY1).sql(
        "CREATE DATABASE SHOP; CREATE SCHEMA SALES; "
        "CREATE TABLE ORDERS (ID INT); INSERT INTO ORDERS VALUES (1), (2), (3); "
        "CREATE TABLE REFUNDS (ID INT); INSERT INTO REFUNDS VALUES (9)"
    )

    def count(reference: str, now: str) -> int:
        return int(connect(now=now).sql(f"SELECT count(*) FROM {reference}")[0].rows[0][0])

    return count


def test_undrop_a_schema_counts_every_table(
    home: Path, connect: Callable[..., Any], shop: Callable[..., Any]
) -> None:
    connect(now=DAY2).sql("DROP SCHEMA SHOP.SALES")
    outcome = run_restore(
        home, restore_request({**FORM, "operation": "undrop", "name": "shop.sales"}), DAY3
    )
    assert outcome["statement"] == "UNDROP SCHEMA SHOP.SALES"
    checked = validate_restore(home, outcome, DAY3)["tables"]
    assert [(t["table"], t["expected_rows"]) for t in checked] == [
        ("SHOP.SALES.ORDERS", 3),
        ("SHOP.SALES.REFUNDS", 1),
    ]
    assert shop("SHOP.SALES.ORDERS", DAY3) == 3


def test_clone_a_schema_at_a_point(
    home: Path, connect: Callable[..., Any], shop: Callable[..., Any]
) -> None:
    """SPEC R24: each table of the clone is counted against its source at the clone's
    point; a later change to the clone fails the validation, naming the table."""
    connect(now=DAY2).sql("DELETE FROM SHOP.SALES.ORDERS WHERE ID = 1")
    request = restore_request(
        {
            **FORM,
            "operation": "clone",
            "name": "SHOP.SALES",
            "point_kind": "timestamp",
            "point_value": "2026-11-10T10:00:00Z",
            "target_name": "SHOP.SALES_BACK",
        }
    )
    outcome = run_restore(home, request, DAY3)
    checked = validate_restore(home, outcome, DAY3)["tables"]
    assert [(t["table"], t["expected_rows"]) for t in checked] == [
        ("SHOP.SALES_BACK.ORDERS", 3),
        ("SHOP.SALES_BACK.REFUNDS", 1),
    ]
    assert checked[0]["expected_from"] == (
        f"SHOP.SALES.ORDERS AT(STATEMENT => '{outcome['query_id']}')"
    )
    connect(now=DAY3).sql("DELETE FROM SHOP.SALES_BACK.REFUNDS")
    failing = r"SHOP\.SALES_BACK\.REFUNDS .*\(0 rows, expected 1\)"
    with pytest.raises(ValidationFailed, match=failing):
        validate_restore(home, outcome, DAY3)


def test_restore_runs_as_the_requesting_user(
    home: Path, connect: Callable[..., Any], shop: Callable[..., Any]
) -> None:
    """SPEC R37: a user without privileges on the schema is refused — told it does not
    exist, as for a missing one (no existence leak); nothing is created."""
    connect(now=DAY2).sql(
        "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK; "
        "GRANT ROLE CLERK TO USER ANALYST"
    )
    request = restore_request(
        {
            **FORM,
            "operation": "clone",
            "name": "SHOP.SALES",
            "target_name": "SHOP.MINE",
            "requested_by": "analyst",
        }
    )
    with pytest.raises(ObjectNotFound):
        run_restore(home, request, DAY3)
    schemas = connect(now=DAY3).sql("SHOW SCHEMAS IN DATABASE SHOP")[0].column("name")
    assert "MINE" not in schemas
