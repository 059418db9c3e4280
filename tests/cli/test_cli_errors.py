"""The error contract of ``rewind sql`` (SPEC R39) and what bad input must not change (R28).

At the first failing statement the command prints the results before it, writes one
line ``error: <CODE>: <message>`` to stderr and exits 1. A failing statement leaves the
catalog as it was: the tests compare ``SHOW ... HISTORY IN ACCOUNT`` before and after.
Only the last test starts Spark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import at, rows

pytestmark = pytest.mark.cli

ERROR_LINE = re.compile(r"error: ([A-Z_]+): (\S.*)")
INSPECT = "SHOW DATABASES HISTORY; SHOW SCHEMAS HISTORY IN ACCOUNT; SHOW TABLES HISTORY IN ACCOUNT"
BASE = (
    "CREATE DATABASE d; CREATE TABLE t (a INT) COMMENT = 'keep'; "
    "CREATE TRANSIENT SCHEMA ts; CREATE TABLE tt (a INT); CREATE TRANSIENT DATABASE td"
)


@dataclass
class Failure:
    code: str
    message: str
    printed: str  # stdout: the results of the statements before the failing one


def failure(result: Any) -> Failure:
    """Check the error contract (SPEC R39): exit 1, one line on stderr, no traceback."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    match = ERROR_LINE.fullmatch(lines[0])
    assert match is not None, lines[0]
    return Failure(match[1], match[2], result.stdout)


def catalog(results: list[dict[str, Any]]) -> list[list[list[Any]]]:
    """The rows of the INSPECT listings that end ``results``: every incarnation, its
    retention and drop time. ``is_current`` is blanked: it belongs to the session."""
    inspected = results[-3:]
    assert [r["statement"] for r in inspected] == INSPECT.split("; ")
    listings = []
    for result in inspected:
        current = (
            result["columns"].index("is_current") if "is_current" in result["columns"] else None
        )
        listings.append([[v for i, v in enumerate(row) if i != current] for row in result["rows"]])
    return listings


@pytest.fixture
def run(cli: Callable[..., Any]) -> Callable[..., Any]:
    """``run(text, days=, hours=, fmt=)`` runs statements once and returns the CliResult."""

    def _run(text: str, days: float = 0, hours: int = 0, fmt: str = "json") -> Any:
        return cli("sql", "--format", fmt, text, now=at(days, hours))

    return _run


def assert_each_fails_and_changes_nothing(
    run: Callable[..., Any], setup: str, cases: list[tuple[str, str, str]]
) -> None:
    """Run ``setup``, then each ``(statement, code, name)`` right after INSPECT in one
    invocation: it must fail with ``code`` and a message naming ``name``, and the next
    INSPECT (and a last one) must show what the first showed (SPEC R28, R39)."""
    before: list[list[list[Any]]] | None = None
    for index, (statement, code, name) in enumerate(cases):
        prefix = f"{setup}; " if index == 0 else ""
        error = failure(run(f"{prefix}{INSPECT}; {statement}", hours=1))
        assert (error.code, name in error.message) == (code, True), (statement, error)
        now = catalog(json.loads(error.printed))
        assert now == (before or now), f"changed by the statement before: {statement}"
        before = now
    last = run(INSPECT, hours=1)
    assert last.returncode == 0, last.stderr
    assert catalog(last.json) == before, f"changed by: {cases[-1][0]}"


# -- Bad retention values (SPEC R5, R7, R28, R39) ----------------------------------------------
PERMANENT_FORMS = [
    ("CREATE DATABASE x DATA_RETENTION_TIME_IN_DAYS = {}", "X"),
    ("CREATE SCHEMA d.x DATA_RETENTION_TIME_IN_DAYS = {}", "D.X"),
    ("CREATE TABLE d.public.x (a INT) DATA_RETENTION_TIME_IN_DAYS = {}", "D.PUBLIC.X"),
    ("ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = {}", "account"),
    ("ALTER DATABASE d SET DATA_RETENTION_TIME_IN_DAYS = {}", "D"),
    ("ALTER SCHEMA d.public SET DATA_RETENTION_TIME_IN_DAYS = {}", "D.PUBLIC"),
    ("ALTER TABLE d.public.t SET DATA_RETENTION_TIME_IN_DAYS = {}", "D.PUBLIC.T"),
]
TRANSIENT_FORMS = [  # 0..1 only (SPEC R5); a table in a transient schema is transient (R2)
    ("CREATE TRANSIENT TABLE d.public.x (a INT) DATA_RETENTION_TIME_IN_DAYS = {}", "D.PUBLIC.X"),
    ("CREATE TABLE d.ts.x (a INT) DATA_RETENTION_TIME_IN_DAYS = {}", "D.TS.X"),
    ("ALTER TABLE d.ts.tt SET DATA_RETENTION_TIME_IN_DAYS = {}", "D.TS.TT"),
    ("CREATE TRANSIENT SCHEMA d.x DATA_RETENTION_TIME_IN_DAYS = {}", "D.X"),
    ("ALTER DATABASE td SET DATA_RETENTION_TIME_IN_DAYS = {}", "TD"),
]


@pytest.mark.parametrize(
    ("value", "forms"),
    [
        *[(v, PERMANENT_FORMS) for v in ("-1", "91", "1.5", "'x'", "100000000000000000000")],
        ("2", TRANSIENT_FORMS),
    ],
    ids=["minus-1", "91", "1.5", "string", "10e20", "2-on-transient"],
)
def test_bad_retention_is_invalid_retention_and_changes_nothing_r5_r7_r28(run, value, forms):
    cases = [(form.format(value), "INVALID_RETENTION", name) for form, name in forms]
    assert_each_fails_and_changes_nothing(run, BASE, cases)


def test_failing_statements_leave_nothing_half_done_r20_r28(run):
    """Statements that could change something before they fail (OR REPLACE drops the old
    incarnation first, a multi-property SET applies one value before the bad one), a bad
    MIN_DATA_RETENTION_TIME_IN_DAYS (R7), and name clashes: none leaves a trace."""
    assert_each_fails_and_changes_nothing(
        run,
        BASE,
        [
            (
                "CREATE OR REPLACE TABLE d.public.t (a INT) DATA_RETENTION_TIME_IN_DAYS = 91",
                "INVALID_RETENTION",
                "D.PUBLIC.T",
            ),
            (
                "CREATE OR REPLACE SCHEMA d.public DATA_RETENTION_TIME_IN_DAYS = -1",
                "INVALID_RETENTION",
                "D.PUBLIC",
            ),
            (
                "CREATE OR REPLACE DATABASE d DATA_RETENTION_TIME_IN_DAYS = 'x'",
                "INVALID_RETENTION",
                "D",
            ),
            (
                "CREATE TABLE d.public.x DATA_RETENTION_TIME_IN_DAYS = 91 AS SELECT 1 AS a",
                "INVALID_RETENTION",
                "D.PUBLIC.X",
            ),
            (
                "ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 5 "
                "MIN_DATA_RETENTION_TIME_IN_DAYS = 91",
                "INVALID_RETENTION",
                "account",
            ),
            (
                "ALTER TABLE d.public.t SET COMMENT = 'changed' DATA_RETENTION_TIME_IN_DAYS = 1.5",
                "INVALID_RETENTION",
                "D.PUBLIC.T",
            ),
            (
                "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = -1",
                "INVALID_RETENTION",
                "account",
            ),
            ("CREATE DATABASE d", "OBJECT_ALREADY_EXISTS", "D"),
            ("ALTER TABLE d.public.t RENAME TO d.ts.tt", "OBJECT_ALREADY_EXISTS", "TT"),
        ],
    )


# -- Output before a failure (SPEC R39) ------------------------------------------------------------
@pytest.mark.parametrize(
    ("fmt", "failing", "code"),
    [
        ("json", "CREATE TABLE t (b INT)", "OBJECT_ALREADY_EXISTS"),
        ("csv", "CREATE TABLE never (a INT", "SYNTAX_ERROR"),
        ("table", "INSERT INTO nope VALUES (1)", "OBJECT_NOT_FOUND"),
    ],
)
def test_results_before_the_failure_are_printed_and_kept_r28_r39(cli, tmp_path, fmt, failing, code):
    script = tmp_path / "script.sql"
    script.write_text(
        f"CREATE DATABASE d;\nCREATE TABLE t (a INT);\n{failing};\nCREATE TABLE after (a INT);\n"
    )
    error = failure(cli("sql", "--format", fmt, "-f", str(script), now=at()))
    assert error.code == code
    if fmt == "json":
        printed = [r["statement"] for r in json.loads(error.printed)]
        assert printed == ["CREATE DATABASE d", "CREATE TABLE t (a INT)"]
    else:
        assert "Database D successfully created." in error.printed
        assert "Table T successfully created." in error.printed
    assert "AFTER" not in error.printed

    listed = cli("sql", "--format", "json", "SHOW TABLES HISTORY IN ACCOUNT", now=at(hours=1))
    assert (listed.returncode, listed.stderr) == (0, "")
    assert [(r["name"], r["dropped_on"]) for r in rows(listed.json[0])] == [("T", None)]


# -- Syntax errors and unknown objects (SPEC R39) ----------------------------------------------
@pytest.mark.parametrize(
    "statement",
    [
        "FROB x",
        "SELEC 1",
        "CREATE TABLE t (a INT",
        "ALTER DATABASE d SET DATA_RETENTION_TIME_IN_DAYS",
    ],
)
def test_syntax_errors_are_reported_as_syntax_error_r39(run, statement):
    assert failure(run(statement)).code == "SYNTAX_ERROR"


@pytest.mark.parametrize(
    "statement",
    [
        "DROP TABLE nope",
        "UNDROP TABLE nope",
        "ALTER DATABASE nope RENAME TO x",
        "ALTER TABLE t SWAP WITH nope",
        "USE SCHEMA d.nope",
        "CREATE TABLE nope.x (a INT)",
        "SELECT * FROM nope",
    ],
)
def test_unknown_objects_are_object_not_found_naming_them_r39(run, statement):
    error = failure(run(f"CREATE DATABASE d; CREATE TABLE t (a INT); {statement}"))
    assert error.code == "OBJECT_NOT_FOUND"
    assert "NOPE" in error.message


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"now": "yesterday"}, "INVALID_VALUE"),
        ({"user": "nobody"}, "UNKNOWN_USER"),
        ({"args": ("-f", "missing.sql")}, "INVALID_VALUE"),
        ({"args": ("   ",)}, "INVALID_VALUE"),
    ],
    ids=["bad-now", "unknown-user", "missing-file", "no-statement"],
)
def test_bad_command_line_input_follows_the_error_contract_r15_r39(cli, tmp_path, options, code):
    args = options.get("args", ("SHOW DATABASES",))
    args = tuple(str(tmp_path / a) if a.endswith(".sql") else a for a in args)
    result = cli("sql", *args, now=options.get("now", at()), user=options.get("user"))
    assert failure(result).code == code


# -- Time travel points that fail (SPEC R16, R17) ------------------------------------------------
@pytest.mark.parametrize(
    ("point", "code"),
    [
        (f"AT(TIMESTAMP => '{at(hours=1)}')", "TIME_TRAVEL_UNAVAILABLE"),  # future
        ("AT(OFFSET => 60)", "TIME_TRAVEL_UNAVAILABLE"),  # future
        (f"AT(TIMESTAMP => '{at()}')", "TIME_TRAVEL_UNAVAILABLE"),  # at creation
        (f"AT(TIMESTAMP => '{at(hours=-1)}')", "TIME_TRAVEL_UNAVAILABLE"),  # before creation
        ("AT(STATEMENT => '01234567-89ab-cdef-0123-456789abcdef')", "UNKNOWN_STATEMENT"),
    ],
    ids=["future-ts", "future-offset", "at-creation", "before-creation", "unknown-statement"],
)
def test_points_outside_the_tables_life_fail_r17(run, point, code):
    error = failure(run(f"CREATE DATABASE d; CREATE TABLE t (a INT); SELECT * FROM t {point}"))
    assert error.code == code
    named = "01234567-89ab-cdef-0123-456789abcdef" if code == "UNKNOWN_STATEMENT" else "D.PUBLIC.T"
    assert named in error.message
    assert [r["statement"] for r in json.loads(error.printed)][-1] == "CREATE TABLE t (a INT)"


def test_points_beyond_retention_or_before_the_creating_statement_fail_r17(run):
    created = run("CREATE DATABASE d; CREATE TABLE t (a INT) DATA_RETENTION_TIME_IN_DAYS = 5")
    creating_statement = created.json[-1]["query_id"]
    error = failure(
        run(f"USE d; SELECT * FROM t BEFORE(STATEMENT => '{creating_statement}')", days=3)
    )
    assert (error.code, "D.PUBLIC.T" in error.message) == ("TIME_TRAVEL_UNAVAILABLE", True)
    error = failure(
        run(
            "USE d; ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 1; "
            f"SELECT * FROM t AT(OFFSET => -{2 * 86400})",
            days=3,
        )
    )
    assert (error.code, "D.PUBLIC.T" in error.message) == ("TIME_TRAVEL_UNAVAILABLE", True)


# -- A write with the clock behind (SPEC R14, R15, R28) -- starts Spark ----------------------------
def test_write_with_the_clock_behind_fails_and_leaves_no_files_r15_r28(run, home: Path):
    assert run("CREATE DATABASE d; CREATE TABLE t (a INT)", days=1).returncode == 0
    files = sorted(p for p in (home / "warehouse").rglob("*") if p.is_file())
    error = failure(run("USE d; INSERT INTO t VALUES (1)"))
    assert (error.code, bool(re.search(r"\bT\b", error.message))) == ("CLOCK_BEHIND", True)
    assert sorted(p for p in (home / "warehouse").rglob("*") if p.is_file()) == files
    (table,) = rows(run("SHOW TABLES IN DATABASE d", days=1).json[0])
    assert (table["name"], table["rows"], table["bytes"]) == ("T", 0, 0)
