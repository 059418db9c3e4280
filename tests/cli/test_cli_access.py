"""Access control through the installed ``rewind --user`` command (SPEC R37, R38, R39).

Every command is checked: ``sql``, ``restore``, ``lifecycle run`` and ``failsafe``. A
refusal is exit code 1 and one line ``error: ACCESS_DENIED: ...`` naming the missing
privilege, the object and the role, without a traceback. Refusals come before any
Spark work, so only the last, allowed, query starts a JVM.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import at, rows

pytestmark = pytest.mark.cli

SETUP = (
    "CREATE DATABASE D; CREATE TABLE T (A INT); CREATE ROLE ANALYST; "
    "CREATE USER ANA DEFAULT_ROLE = ANALYST; GRANT ROLE ANALYST TO USER ANA"
)
LACKS = "Insufficient privileges: role ANALYST lacks {} on table D.PUBLIC.T."
NOT_ADMIN = "{} requires role ACCOUNTADMIN (current role ANALYST)."
# SPEC R37: ANALYST holds nothing in D, so D answers it as a missing database.
HIDDEN = "OBJECT_NOT_FOUND: Database 'D' does not exist or not authorized."


REFUSALS = [
    (["sql", "SELECT * FROM D.PUBLIC.T AT(OFFSET => -60)"], HIDDEN),
    (["sql", "INSERT INTO D.PUBLIC.T VALUES (1)"], HIDDEN),
    (["sql", "DROP TABLE D.PUBLIC.T"], HIDDEN),
    (
        ["sql", "ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 2"],
        "ACCESS_DENIED: " + NOT_ADMIN.format("ALTER ACCOUNT"),
    ),
    (
        ["sql", "USE ROLE ACCOUNTADMIN"],
        "ACCESS_DENIED: Requested role ACCOUNTADMIN is not granted to user ANA.",
    ),
    (["restore", "D.PUBLIC.T", "--at", "-60"], HIDDEN),
    (
        ["lifecycle", "run"],
        "ACCESS_DENIED: The lifecycle requires role ACCOUNTADMIN or REWIND_LIFECYCLE "
        "(current role ANALYST).",
    ),
    (["failsafe", "list"], "ACCESS_DENIED: " + NOT_ADMIN.format("Fail-safe recovery")),
    (
        ["failsafe", "recover", "1", "--into", "D.PUBLIC.X"],
        "ACCESS_DENIED: " + NOT_ADMIN.format("Fail-safe recovery"),
    ),
]


def test_every_command_refuses_in_one_line(
    sql: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    sql(SETUP)
    for args, message in REFUSALS:
        result = cli(*args, user="ANA", now=at(hours=1))
        assert result.returncode == 1, args
        assert result.stderr.splitlines() == [f"error: {message}"], args
        assert "Traceback" not in result.stdout


def test_grants_through_the_command_and_a_granted_read(
    sql: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    sql(f"{SETUP}; GRANT SELECT ON TABLE D.PUBLIC.T TO ROLE ANALYST")
    # The statements before the refused one still print (SPEC R39).
    refused = cli(
        "sql", "--format", "json", "SHOW GRANTS; DROP TABLE D.PUBLIC.T", user="ANA", now=at(1)
    )
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [f"error: ACCESS_DENIED: {LACKS.format('OWNERSHIP')}"]
    assert [r["role"] for r in rows(refused.json[0])] == ["ANALYST"]

    allowed = cli(
        "sql",
        "--format",
        "json",
        "SHOW GRANTS TO ROLE ANALYST; SELECT count(*) AS N FROM D.PUBLIC.T",
        user="ana",  # a login folds as an unquoted name does (SPEC R4): CREATE USER ANA's
        now=at(1),
    )
    assert allowed.returncode == 0, allowed.stderr
    grants, count = allowed.json
    assert [(r["privilege"], r["name"], r["grantee_name"]) for r in rows(grants)] == [
        ("SELECT", "D.PUBLIC.T", "ANALYST")
    ]
    assert rows(count) == [{"N": 0}]
