"""Hypothesis strategies for the statements Rewind supports (README, include/rewind/sql/).

Names come from small pools, so that statements meet the objects earlier ones made,
mixed with hostile quoted names (quotes, dots, slashes, NUL, emoji, 256 characters)
and random ones; values and points mix valid and absurd ones. What depends on the run
— query ids of earlier statements, instants of the history — comes from
:class:`History`. :func:`actions` draws from the whole grammar, where statements that
need Spark (reads and writes of table data) are a small share (the in-process fuzz,
tests/unit/test_fuzz_analysis.py), or, with ``mostly_spark``, mostly those (the Spark
fuzz, tests/spark/test_fuzz_statements.py). The runs: tests/fuzz_run.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from typing import Any

from hypothesis import strategies as st

Strategy = st.SearchStrategy[Any]


@dataclass
class History:
    """What earlier statements left for later ones to name."""

    query_ids: list[str] = field(default_factory=list)
    instants: list[datetime] = field(default_factory=list)


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A Snowflake string literal (backslash escapes there)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def weighted(*choices: tuple[int, Strategy]) -> Strategy:
    """One of ``choices`` in proportion to its weight."""
    return st.sampled_from([s for weight, s in choices for _ in range(weight)]).flatmap(
        lambda strategy: strategy
    )


def recent(items: list[Any], n: int) -> Strategy:
    """One of the last ``n`` of ``items`` as they are when drawn (never empty: the run
    is seeded). The choice itself has a fixed range, so that Hypothesis sees the same
    shape of data whatever the run has done so far."""
    return st.integers(1, n).map(lambda i: items[-min(i, len(items))])


HOSTILE_NAMES = [
    "a/../b",
    'x"y',
    "..",
    "/etc/passwd",
    "🦀",
    "\x00",
    "",
    "n" * 256,
    "'; DROP DATABASE D; --",
    "`t`",
    "__rw_file",
]
RANDOM_NAME = st.text(max_size=6).map(quoted)


def name(pool: list[str]) -> Strategy:
    return weighted(
        (12, st.sampled_from(pool)),
        (2, st.sampled_from([quoted(n) for n in HOSTILE_NAMES])),
        (1, RANDOM_NAME),
    )


DATABASE = name(["D", "E", '"d"', '"a/../b"'])
SCHEMA_PART = name(["PUBLIC", "S", '"s.t"'])
TABLE_PART = name(["T", "U", "V", '"t"', '"x""y"', '"🦀"'])
COLUMN = name(["ID", "V", '"v"', "W"])
SCHEMA = st.one_of(SCHEMA_PART, st.tuples(DATABASE, SCHEMA_PART).map(".".join))
SEEDED = st.sampled_from(["D.PUBLIC.T", "D.PUBLIC.U"])  # the seeded tables, wherever USE is
TABLE = weighted(
    (4, SEEDED),
    (6, TABLE_PART),
    (3, st.tuples(SCHEMA_PART, TABLE_PART).map(".".join)),
    (3, st.tuples(DATABASE, SCHEMA_PART, TABLE_PART).map(".".join)),
    (1, st.just("A.B.C.D")),
)
KIND_NAME = {"DATABASE": DATABASE, "SCHEMA": SCHEMA, "TABLE": TABLE}

TYPE = weighted(
    (8, st.sampled_from(["INT", "VARCHAR", "NUMBER(10,2)", "FLOAT", "BOOLEAN", "DATE"])),
    (1, st.sampled_from(["TIMESTAMP", "NUMBER(99,99)", "VARCHAR(-1)", "FOO", "ARRAY"])),
)
RETENTION = st.sampled_from(
    ["0", "1", "2", "7", "90", "91", "-1", "1.5", "'abc'", "NULL", "100000000000000000000", "1e400"]
)
TEXT = st.text(max_size=12)
VALUE = weighted(
    (6, st.integers(-5, 5).map(str)),
    (3, TEXT.map(literal)),
    (2, st.sampled_from(["NULL", "1e400", "'abc'", "99999999999999999999", "TRUE", "-0.5"])),
)


def optional(text: str) -> Strategy:
    return st.sampled_from(["", text])


def properties() -> Strategy:
    return st.tuples(
        optional(" DATA_RETENTION_TIME_IN_DAYS = "), RETENTION, optional(" COMMENT = "), TEXT
    ).map(lambda p: (p[0] + p[1] if p[0] else "") + (p[2] + literal(p[3]) if p[2] else ""))


# -- points in time (SPEC R16, R17) -------------------------------------------------------
def timestamp(history: History) -> Strategy:
    near = st.tuples(recent(history.instants, 40), st.integers(-7200, 7200)).map(
        lambda p: literal((p[0] + timedelta(seconds=p[1])).isoformat())
    )
    absurd = st.sampled_from(
        ["'0000-01-01'", "'0001-01-01'", "'9999-12-31 23:59:59'", "'garbage'", "'2026-13-45'"]
    )
    # The spellings the two products' pages print (issue 13), right and wrong.
    printed = weighted(
        (
            2,
            recent(history.instants, 40).map(
                lambda t: literal(format_datetime(t)) + "::timestamp_tz"
            ),
        ),
        (
            1,
            st.sampled_from(
                [
                    "'Wed, 26 Jun 2024 09:20:00 -0700'::timestamp_tz",
                    "'2026-03-01 00:00:00 America/Los_Angeles'::timestamp_tz",
                    "TIMESTAMP '2026-03-01 10:00:00 UTC'",
                    "TO_TIMESTAMP_TZ('01/03/2026 10:00 +0000', 'DD/MM/YYYY HH24:MI TZHTZM')",
                    "TO_TIMESTAMP_TZ('2026-03-01 10:00:00 -07:00', "
                    "'YYYY-MM-DD HH24:MI:SS TZH:TZM')",
                    "TO_TIMESTAMP_TZ('2026-03-01', 'DD/MM/YYYY')",
                    "TO_TIMESTAMP_TZ('x', 'NOT A FORMAT')",
                    "'Thu, 31 Feb 2026 09:20:00 -0700'::timestamp_tz",
                    "'2026-03-01 10:00:00 Mars/Olympus'::timestamp_tz",
                    "DATEADD(days, -4, current_timestamp)::timestamp_tz",
                ]
            ),
        ),
    )
    return weighted((6, near), (2, absurd), (1, st.just("CURRENT_TIMESTAMP()")), (3, printed))


def point(history: History) -> Strategy:
    offsets = weighted(
        (6, st.sampled_from([0, 1, 30, 600, 3600, 86400, 3 * 86400]).map(lambda s: f"-{s}")),
        (2, st.sampled_from(["60", "-99999999999999999999", "1e400", "'abc'", "NULL", "-60*5"])),
    )
    statements = weighted(
        (6, recent(history.query_ids, 60)),
        (1, st.uuids().map(str)),
        (1, st.sampled_from(["not-a-uuid", ""])),
    )
    kind = weighted(
        (3, timestamp(history).map(lambda v: f"TIMESTAMP => {v}")),
        (3, offsets.map(lambda v: f"OFFSET => {v}")),
        (2, statements.map(lambda v: f"STATEMENT => {literal(v)}")),
    )
    return st.tuples(st.sampled_from(["AT", "BEFORE"]), kind).map(lambda p: f" {p[0]}({p[1]})")


# -- statements ------------------------------------------------------------------------------
def columns() -> Strategy:
    return st.lists(st.tuples(COLUMN, TYPE).map(" ".join), min_size=0, max_size=3).map(
        lambda cols: f" ({', '.join(cols)})"
    )


def create(history: History) -> Strategy:
    head = st.tuples(
        st.sampled_from(["", "OR REPLACE ", ""]),
        optional("TRANSIENT "),
        st.sampled_from(list(KIND_NAME)),
        optional(" IF NOT EXISTS"),
    )

    def statement(parts: tuple[str, str, str, str]) -> Strategy:
        replace, transient, kind, exists = parts
        target = KIND_NAME[kind]
        body = weighted(
            (4, columns() if kind == "TABLE" else st.just("")),
            (
                2,
                st.tuples(target, weighted((1, point(history)), (1, st.just("")))).map(
                    lambda c: f" CLONE {c[0]}{c[1]}"
                ),
            ),
        )
        return st.tuples(target, body, properties()).map(
            lambda p: f"CREATE {replace}{transient}{kind}{exists} {p[0]}{p[1]}{p[2]}"
        )

    return head.flatmap(statement)


def drop_or_undrop() -> Strategy:
    return st.sampled_from(list(KIND_NAME)).flatmap(
        lambda kind: st.tuples(
            st.sampled_from(["DROP", "DROP", "UNDROP"]), optional(" IF EXISTS"), KIND_NAME[kind]
        ).map(lambda p: f"{p[0]} {kind}{p[1] if p[0] == 'DROP' else ''} {p[2]}")
    )


def show() -> Strategy:
    scope = weighted(
        (3, st.just("")),
        (1, DATABASE.map(lambda d: f" IN DATABASE {d}")),
        (1, SCHEMA.map(lambda s: f" IN SCHEMA {s}")),
        (1, st.just(" IN ACCOUNT")),
    )
    like = weighted((3, st.just("")), (1, TEXT.map(lambda t: f" LIKE {literal(t)}")))
    return st.tuples(
        st.sampled_from(["DATABASES", "SCHEMAS", "TABLES"]), optional(" HISTORY"), like, scope
    ).map(lambda p: f"SHOW {p[0]}{p[1]}{p[2]}{p[3]}")


def alter() -> Strategy:
    table_action = weighted(
        (2, TABLE.map(lambda t: f"RENAME TO {t}")),
        (2, TABLE.map(lambda t: f"SWAP WITH {t}")),
        (3, properties().filter(bool).map(lambda p: f"SET{p}")),
        (1, st.sampled_from(["UNSET DATA_RETENTION_TIME_IN_DAYS", "UNSET COMMENT"])),
        (2, st.tuples(COLUMN, TYPE).map(lambda c: f"ADD COLUMN {c[0]} {c[1]}")),
        (1, COLUMN.map(lambda c: f"DROP COLUMN {c}")),
    )
    container = st.sampled_from(["DATABASE", "SCHEMA"]).flatmap(
        lambda kind: st.tuples(
            KIND_NAME[kind],
            weighted(
                (2, KIND_NAME[kind].map(lambda n: f"RENAME TO {n}")),
                (1, KIND_NAME[kind].map(lambda n: f"SWAP WITH {n}")),
                (3, RETENTION.map(lambda r: f"SET DATA_RETENTION_TIME_IN_DAYS = {r}")),
                (1, st.just("UNSET DATA_RETENTION_TIME_IN_DAYS")),
            ),
        ).map(lambda p: f"ALTER {kind} {p[0]} {p[1]}")
    )
    account = st.tuples(
        st.sampled_from(["DATA_RETENTION_TIME_IN_DAYS", "MIN_DATA_RETENTION_TIME_IN_DAYS"]),
        weighted((3, RETENTION.map(lambda r: f"= {r}")), (1, st.just(""))),
    ).map(lambda p: f"ALTER ACCOUNT {'SET' if p[1] else 'UNSET'} {p[0]} {p[1]}".rstrip())
    tables = st.tuples(optional("IF EXISTS "), TABLE, table_action).map(
        lambda p: f"ALTER TABLE {p[0]}{p[1]} {p[2]}"
    )
    return weighted((5, tables), (3, container), (1, account))


def use() -> Strategy:
    return weighted(
        (2, DATABASE.map(lambda d: f"USE DATABASE {d}")),
        (2, SCHEMA.map(lambda s: f"USE SCHEMA {s}")),
        (1, DATABASE.map(lambda d: f"USE {d}")),
    )


def select(history: History) -> Strategy:
    table = weighted((2, SEEDED), (1, TABLE))
    reference = st.tuples(table, weighted((1, st.just("")), (2, point(history)))).map("".join)
    shape = st.sampled_from(
        [
            "SELECT * FROM {}",
            "SELECT COUNT(*) FROM {}",
            "SELECT ID FROM {} WHERE ID > 0",
            "WITH X AS (SELECT * FROM {}) SELECT * FROM X",
        ]
    )
    return st.tuples(shape, reference).map(lambda p: p[0].format(p[1]))


def dml(table: Strategy = TABLE) -> Strategy:
    """Row changes of ``table`` (and CTAS from it into any name)."""
    values = st.lists(VALUE, min_size=1, max_size=3).map(lambda v: f"({', '.join(v)})")
    return weighted(
        (3, st.tuples(table, values).map(lambda p: f"INSERT INTO {p[0]} VALUES {p[1]}")),
        (1, st.tuples(table, COLUMN, VALUE).map(lambda p: f"UPDATE {p[0]} SET {p[1]} = {p[2]}")),
        (1, st.tuples(table, VALUE).map(lambda p: f"DELETE FROM {p[0]} WHERE ID = {p[1]}")),
        (2, table.map(lambda t: f"TRUNCATE TABLE {t}")),
        (
            1,
            st.tuples(table, VALUE).map(
                lambda p: (
                    f"MERGE INTO {p[0]} USING (SELECT {p[1]} AS ID) S ON {p[0]}.ID = S.ID "
                    "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (ID) VALUES (S.ID)"
                )
            ),
        ),
        (
            1,
            st.tuples(table, VALUE).map(
                lambda p: (
                    f"MERGE INTO {p[0]} X USING (SELECT {p[1]} AS ID) S ON X.ID = S.ID "
                    "WHEN MATCHED THEN UPDATE SET ID = S.ID + 1 "
                    "WHEN NOT MATCHED THEN INSERT (ID) VALUES (S.ID)"
                )
            ),
        ),
        (1, st.tuples(TABLE, table).map(lambda p: f"CREATE TABLE {p[0]} AS SELECT * FROM {p[1]}")),
    )


def functions(table: Strategy = TABLE) -> Strategy:
    """SQL functions: made (bodies right and wrong), called, dropped (issue 13)."""
    function = name(["F", "G", "PUBLIC.F", "D.PUBLIC.G"])
    body = weighted(
        (4, st.sampled_from(["'X * 2'", "$$ X + 1 $$", "'UPPER(CAST(X AS VARCHAR))'"])),
        (
            1,
            st.sampled_from(
                ["'Y'", "'(SELECT 1)'", "'X +'", "''", "'F(X)'", "'X FROM T'", "'*'", "$$ $$"]
            ),
        ),
    )
    create = st.tuples(
        st.sampled_from(["", "OR REPLACE ", ""]),
        optional("IF NOT EXISTS "),
        function,
        TYPE,
        TYPE,
        optional(" LANGUAGE SQL"),
        body,
    ).map(lambda p: f"CREATE {p[0]}FUNCTION {p[1]}{p[2]}(X {p[3]}) RETURNS {p[4]}{p[5]} AS {p[6]}")
    call = st.tuples(function, VALUE, table).map(
        lambda p: f"SELECT {p[0]}(ID), {p[0]}({p[1]}) FROM {p[2]}"
    )
    drop = st.tuples(optional("IF EXISTS "), function, TYPE).map(
        lambda p: f"DROP FUNCTION {p[0]}{p[1]}({p[2]})"
    )
    return weighted((3, create), (3, call), (1, drop))


def conformance() -> Strategy:
    """The other statement kinds the README lists (issue 13), with hostile arguments."""
    flatten = st.tuples(
        st.sampled_from(
            [
                "input => a.direct_objects_accessed",
                "a.objects_modified",
                "input => a.base_objects_accessed, outer => true",
                "input => a.object_modified_by_ddl",
                "input => a.direct_objects_accessed, recursive => true",
                "input => a.query_id, path => 'x'",
                "outer => false",
            ]
        ),
        st.sampled_from(["LATERAL FLATTEN({}) f", "TABLE(FLATTEN({})) f"]),
    ).map(
        lambda p: (
            "SELECT a.query_id, f.index, f.value:objectName::string "
            f"FROM REWIND.ACCOUNT_USAGE.ACCESS_HISTORY a, {p[1].format(p[0])}"
        )
    )
    flow = st.tuples(
        st.sampled_from(["SHOW TABLES", "SHOW SCHEMAS HISTORY", "SHOW DATABASES HISTORY"]),
        st.sampled_from(
            [
                'SELECT "name", "retention_time" FROM $1 WHERE "retention_time" > 1',
                "SELECT COUNT(*) FROM $1",
                "SELECT * FROM $2",
                "SELECT * FROM $0",
                'SELECT "nope" FROM $1',
            ]
        ),
    ).map(lambda p: f"{p[0]} ->> {p[1]}")
    location = st.sampled_from(
        ["/nonexistent/x", "relative/path", "/etc", "file:///tmp", "s3://bucket/t", "", "/"]
    )
    return weighted(
        (2, st.tuples(TABLE, TABLE).map(lambda p: f"CREATE TABLE {p[0]} LIKE {p[1]}")),
        (
            2,
            st.tuples(TABLE, COLUMN, COLUMN).map(
                lambda p: f"ALTER TABLE {p[0]} RENAME COLUMN {p[1]} TO {p[2]}"
            ),
        ),
        (2, flatten),
        (2, flow),
        (
            1,
            st.tuples(TABLE, location, st.sampled_from(["DELTA", "PARQUET"])).map(
                lambda p: (
                    f"CREATE EXTERNAL TABLE {p[0]} LOCATION = {literal(p[1])} TABLE_FORMAT = {p[2]}"
                )
            ),
        ),
        (
            1,
            st.sampled_from(
                [
                    "CREATE TASK T1 AS SELECT 1",
                    "UNDROP NOTEBOOK N",
                    "CREATE STAGE S",
                    "DROP PIPE P",
                    "GRANT CREATE FUNCTION ON SCHEMA D.PUBLIC TO ROLE R1",
                ]
            ),
        ),
    )


# Brings the seeded objects back (a "revive" action runs them in order), so that reads,
# writes and points keep meeting tables with data and history however often D, its
# PUBLIC schema or its tables are dropped, renamed or replaced.
REVIVE = (
    "CREATE DATABASE IF NOT EXISTS D",
    "CREATE SCHEMA IF NOT EXISTS D.PUBLIC",
    "CREATE TABLE IF NOT EXISTS D.PUBLIC.T (ID INT, V VARCHAR)",
    "CREATE TABLE IF NOT EXISTS D.PUBLIC.U (ID INT)",
    "INSERT INTO D.PUBLIC.T VALUES (3, 'c')",
    "USE SCHEMA D.PUBLIC",
)


SNAPSHOTS = st.sampled_from(["D.PUBLIC.SNAP", "D.PUBLIC.SNAP2"])


def bigquery(history: History, table: Strategy = TABLE) -> Strategy:
    instant = timestamp(history)
    return weighted(
        (
            2,
            st.tuples(table, instant).map(
                lambda p: f"SELECT * FROM {p[0]} FOR SYSTEM_TIME AS OF {p[1]}"
            ),
        ),
        (
            2,
            st.tuples(
                TABLE, TABLE, st.sampled_from(["-3600000", "0", "99999999999999999999", "-1"])
            ).map(lambda p: f"CREATE TABLE {p[0]} CLONE {p[1]}@{p[2]}"),
        ),
        (
            2,
            st.tuples(SCHEMA, st.sampled_from(["48", "72", "168", "47", "169", "50", "'x'"])).map(
                lambda p: f"ALTER SCHEMA {p[0]} SET OPTIONS (max_time_travel_hours = {p[1]})"
            ),
        ),
        (
            1,
            st.tuples(
                SCHEMA,
                st.sampled_from(
                    [
                        "max_time_travel_hours = 72",
                        "description = 'd'",
                        "max_time_travel_hours = 24",
                        "labels = [('a', 'b')]",
                        "default_table_expiration_days = 1",
                        "default_table_expiration_days = 0.01",
                        "default_table_expiration_days = NULL",
                    ]
                ),
            ).map(lambda p: f"CREATE SCHEMA {p[0]} OPTIONS ({p[1]})"),
        ),
        (  # table snapshots, under names of their own (a snapshot named as a working table
            # would make every later write to it READ_ONLY_TABLE): made at a point, written
            # to, dropped (rewind.sql.snapshots); DROP SNAPSHOT TABLE of a table too
            2,
            st.tuples(SNAPSHOTS, TABLE, instant).map(
                lambda p: f"CREATE SNAPSHOT TABLE {p[0]} CLONE {p[1]} FOR SYSTEM_TIME AS OF {p[2]}"
            ),
        ),
        (
            1,
            st.tuples(
                st.sampled_from(["INSERT INTO {} VALUES (9, 'z')", "DROP SNAPSHOT TABLE {}"]),
                st.one_of(SNAPSHOTS, TABLE),
            ).map(lambda p: p[0].format(p[1])),
        ),
        (  # table expiration: in the past, the future, NULL, not a timestamp
            1,
            st.tuples(
                TABLE,
                st.sampled_from(
                    [
                        "NULL",
                        "TIMESTAMP '2020-01-01 00:00:00 UTC'",
                        "TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)",
                        "'x'",
                        "1",
                    ]
                ),
            ).map(lambda p: f"ALTER TABLE {p[0]} SET OPTIONS (expiration_timestamp = {p[1]})"),
        ),
        (
            1,
            st.sampled_from(
                [
                    "SELECT table_catalog, total_physical_bytes "
                    "FROM `region-us`.INFORMATION_SCHEMA.TABLE_STORAGE",
                    "SELECT COUNT(*), ID + 1 FROM D.PUBLIC.T GROUP BY ID",
                    "SELECT * FROM `region-eu`.INFORMATION_SCHEMA.TABLES",
                ]
            ),
        ),
    )


def access() -> Strategy:
    """Roles and grants; R1 is ANALYST's role (tests/fuzz_run.py's seed), so that what is
    granted to it and revoked from it changes what ANALYST's sessions may do (SPEC R37)."""
    role = weighted((3, st.just("R1")), (1, st.sampled_from(["R2", '"r"', "ACCOUNTADMIN"])))
    on_table = st.tuples(
        st.sampled_from(["SELECT", "INSERT", "UPDATE, DELETE", "OWNERSHIP", "ALL"]), TABLE
    ).map(lambda p: f"{p[0]} ON TABLE {p[1]}")
    on_container = st.tuples(
        st.sampled_from(["CREATE TABLE", "CREATE SCHEMA", "OWNERSHIP", "ALL PRIVILEGES"]),
        st.sampled_from(["SCHEMA", "DATABASE"]).flatmap(
            lambda kind: KIND_NAME[kind].map(lambda n: f"{kind} {n}")
        ),
    ).map(lambda p: f"{p[0]} ON {p[1]}")
    privileges = weighted((3, on_table), (2, on_container))
    return weighted(
        (1, role.map(lambda r: f"CREATE ROLE {r}")),
        (4, st.tuples(privileges, role).map(lambda p: f"GRANT {p[0]} TO ROLE {p[1]}")),
        (2, st.tuples(privileges, role).map(lambda p: f"REVOKE {p[0]} FROM ROLE {p[1]}")),
        (
            1,
            st.tuples(st.sampled_from(["GRANT", "REVOKE"]), role).map(
                lambda p: f"{p[0]} ROLE {p[1]} {'TO' if p[0] == 'GRANT' else 'FROM'} USER ANALYST"
            ),
        ),
        (1, role.map(lambda r: f"USE ROLE {r}")),
        (
            1,
            st.sampled_from(
                ["SHOW GRANTS", "SHOW GRANTS TO ROLE R1", "SHOW GRANTS TO USER ANALYST"]
            ),
        ),
    )


# Keywords, punctuation and tricks for token soup (never ';': one statement per action).
WORDS = [
    *[
        "SELECT",
        "FROM",
        "CREATE",
        "TABLE",
        "DROP",
        "UNDROP",
        "AT",
        "BEFORE",
        "CLONE",
        "OFFSET",
        "TIMESTAMP",
        "STATEMENT",
    ],
    *[
        "SET",
        "ALTER",
        "SHOW",
        "HISTORY",
        "(",
        ")",
        ",",
        "=>",
        "=",
        "'",
        '"',
        "`",
        ".",
        "*",
        "--",
        "/*",
        "$$",
        "@",
        "T",
        "D",
        "1",
        "-1",
        "NULL",
        "\x00",
    ],
    "IDENTIFIER('x')",
    "read_files('/etc')",
    'parquet."/tmp"',
]


def garbage() -> Strategy:
    soup = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8)
    return weighted(
        (4, soup.map(" ".join)),
        (2, st.text(min_size=1, max_size=30).filter(lambda t: ";" not in t and t.strip())),
        (1, st.integers(30, 400).map(lambda n: "SELECT " + "(" * n + "1" + ")" * n)),
    )


# -- one action of a run --------------------------------------------------------------------
@dataclass(frozen=True)
class Action:
    """A statement (``dialect``, ``text``), a restore, or a new session: the clock moving
    on (``seconds``), as ``user``."""

    kind: str  # "sql", "restore", "clock", "revive" (the REVIVE statements)
    text: str = ""
    dialect: str = "snowflake"
    seconds: int = 0
    restore: tuple[str, str, str] = ("", "", "")  # table, "at" | "before", value
    user: str = "ADMIN"


def actions(history: History, *, mostly_spark: bool = False) -> Strategy:
    """The next action of a run; built once, it reads ``history`` as it grows.

    ``mostly_spark``: weighted towards the statements that run on Spark (reads, DML,
    MERGE, CTAS, SQL function calls, the audit views, computed points), with enough DDL
    and clock moves that they meet dropped, replaced, renamed and cloned tables.
    """

    def sql(strategy: Strategy, dialect: str = "snowflake") -> Strategy:
        return strategy.map(lambda text: Action("sql", text, dialect))

    # Data statements on Spark mostly meet the seeded tables, which hold rows.
    table = weighted((3, SEEDED), (1, TABLE)) if mostly_spark else TABLE
    restore = st.tuples(TABLE, st.sampled_from(["at", "before"]), _restore_point(history))
    clock = st.tuples(
        st.sampled_from([0, 1, 37, 3600, 86400, 3 * 86400]),
        st.sampled_from(["ADMIN", "ADMIN", "ANALYST"]),
    ).map(lambda c: Action("clock", seconds=c[0], user=c[1]))
    # (weight in the whole grammar, weight with mostly_spark, what)
    kinds: list[tuple[int, int, Strategy]] = [
        (15, 4, sql(create(history))),
        (8, 2, sql(drop_or_undrop())),
        (8, 1, sql(show())),
        (12, 3, sql(alter())),
        (6, 2, sql(use())),
        (7, 14, sql(select(history))),
        (5, 14, sql(dml(table))),
        (2, 3, st.just(Action("revive"))),
        (4, 5, sql(bigquery(history, table), "bigquery")),
        (3, 1, sql(access())),
        (4, 5, sql(functions(table))),
        (5, 4, sql(conformance())),
        (8, 1, sql(garbage())),
        (2, 2, restore.map(lambda r: Action("restore", restore=r))),
        (5, 4, clock),
    ]
    return weighted(*[(spark if mostly_spark else whole, what) for whole, spark, what in kinds])


def _restore_point(history: History) -> Strategy:
    return weighted(
        (2, recent(history.query_ids, 60)),
        (2, recent(history.instants, 20).map(datetime.isoformat)),
        (2, st.sampled_from(["-60", "-3600", "60", "-1e400", "garbage", "0000-01-01"])),
    )
