"""The restore DAG's functions on schemas and databases, in-process (SPEC R21, R24, R37):
every table of the restored container is counted against the point, and a table whose
rows differ fails the validation by name.

The DAG runs these same functions in its Spark jobs (``test_restore_dag.py`` runs the
DAG on tables); here they run in this process's SparkSession, which is quicker. The
validation reports how many tables it checked, never their names or row counts (those
would reach every reader of the DAG's XComs, SPEC R38).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rewind.connection import RunKey
from rewind.errors import ObjectNotFound, ValidationFailed
from rewind.operations.form import restore_request
from rewind.operations.restore import RESTORE, VALIDATE, run_restore, validate_restore

pytestmark = pytest.mark.spark

# Three moments of one day: retention is the account's 1 day.
DAY1, DAY2, DAY3 = (f"2026-11-10T{hour:02d}:00:00+00:00" for hour in (9, 12, 15))
FORM = {"object_type": "SCHEMA", "point_kind": "now", "requested_by": "ADMIN"}
RUN = ("rewind_restore", "manual__2026-11-10T15:00:00+00:00")


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
    request = restore_request({**FORM, "operation": "undrop", "name": "shop.sales"})
    outcome = run_restore(home, request, DAY3, RunKey(*RUN, RESTORE))
    assert outcome["statement"] == "UNDROP SCHEMA SHOP.SALES"
    validated = validate_restore(home, request, DAY3, RunKey(*RUN, VALIDATE))
    assert (validated["query_id"], validated["tables_checked"]) == (outcome["query_id"], 2)
    assert shop("SHOP.SALES.ORDERS", DAY3) == 3 and shop("SHOP.SALES.REFUNDS", DAY3) == 1


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
    run_restore(home, request, DAY3, RunKey(*RUN, RESTORE))
    assert (shop("SHOP.SALES_BACK.ORDERS", DAY3), shop("SHOP.SALES_BACK.REFUNDS", DAY3)) == (3, 1)
    # A change to the clone before the validation fails it, counting the tables.
    connect(now=DAY3).sql("DELETE FROM SHOP.SALES_BACK.REFUNDS")
    with pytest.raises(ValidationFailed, match=r"1 of 2 tables of SHOP\.SALES_BACK do not hold"):
        validate_restore(home, request, DAY3, RunKey(*RUN, VALIDATE))
    connect(now=DAY3).sql("INSERT INTO SHOP.SALES_BACK.REFUNDS VALUES (9)")
    validated = validate_restore(home, request, DAY3, RunKey(*RUN, VALIDATE))
    assert validated["tables_checked"] == 2


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
        run_restore(home, request, DAY3, RunKey(*RUN, RESTORE))
    schemas = connect(now=DAY3).sql("SHOW SCHEMAS IN DATABASE SHOP")[0].column("name")
    assert "MINE" not in schemas
