"""Objects through the ``rewind sql`` command: DDL, DROP/UNDROP, SHOW ... HISTORY,
RENAME/SWAP and USE, written from SPEC.md as a Snowflake user would expect them.

Every test runs the installed command in a subprocess against a fresh home, moving
``--now`` across days (SPEC R15). None of them needs Spark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import at, by_name, rows

pytestmark = pytest.mark.cli

TABLE_COLUMNS = [  # SPEC R22, in this order
    "created_on",
    "name",
    "database_name",
    "schema_name",
    "kind",
    "comment",
    "cluster_by",
    "rows",
    "bytes",
    "owner",
    "retention_time",
    "dropped_on",
    "is_external",  # Snowflake's, after R22's columns: Y for a registered table (R41)
    "change_tracking",  # Snowflake's: ON where Delta's row tracking is (CHANGES reads)
]


# -- CREATE and USE (SPEC R1, R20, R25) ------------------------------------------------------
def test_create_database_makes_it_current_with_schema_public_r1_r20(sql):
    out = sql("CREATE DATABASE d; SHOW SCHEMAS; CREATE TABLE t (a INT); SHOW TABLES")
    (public,) = rows(out[1])
    assert (public["name"], public["database_name"], public["is_current"]) == ("PUBLIC", "D", "Y")
    (table,) = rows(out[3])
    assert (table["database_name"], table["schema_name"], table["name"]) == ("D", "PUBLIC", "T")
    assert table["created_on"] == at()
    assert table["dropped_on"] is None


def test_use_carries_over_within_one_invocation_only_r25(sql, fails):
    out = sql(
        "CREATE DATABASE d1; CREATE SCHEMA s; CREATE DATABASE d2; "
        "USE SCHEMA d1.s; CREATE TABLE t (a INT); "
        "USE DATABASE d2; CREATE TABLE u (a INT); "
        "USE d1; CREATE TABLE v (a INT); "
        "SHOW TABLES IN ACCOUNT"
    )
    placed = {r["name"]: (r["database_name"], r["schema_name"]) for r in rows(out[-1])}
    assert placed == {"T": ("D1", "S"), "U": ("D2", "PUBLIC"), "V": ("D1", "PUBLIC")}
    # Each invocation is a new session: nothing is current any more.
    assert fails("CREATE TABLE w (a INT)")[0] == "NO_CURRENT_CONTAINER"


def test_if_exists_and_if_not_exists_change_nothing_r20_r21(sql):
    out = sql(
        "CREATE DATABASE d; CREATE TABLE t (a INT) COMMENT = 'first'; "
        "CREATE TABLE IF NOT EXISTS t (b INT) COMMENT = 'second'; "
        "DROP TABLE IF EXISTS nope; DROP SCHEMA IF EXISTS nope; DROP DATABASE IF EXISTS nope; "
        "SHOW TABLES HISTORY"
    )
    ((name, comment),) = [(r["name"], r["comment"]) for r in rows(out[-1])]
    assert (name, comment) == ("T", "first")


QUOTED_SETUP = 'CREATE DATABASE "myDb"; CREATE TABLE "Orders" (a INT); CREATE TABLE orders (a INT)'


@pytest.mark.parametrize(
    ("statements", "listed"),
    [
        ("SHOW TABLES", {"Orders", "ORDERS"}),
        ("SHOW TABLES LIKE 'orders'", {"Orders", "ORDERS"}),  # LIKE ignores case in SHOW
        ('DROP TABLE "myDb".public."ORDERS"; SHOW TABLES', {"Orders"}),
    ],
)
def test_quoted_names_keep_case_unquoted_fold_to_upper_r4(sql, statements, listed):
    """SPEC R4: ``orders`` and ``"ORDERS"`` are one name; ``"Orders"`` is another."""
    shown = rows(sql(f"{QUOTED_SETUP}; {statements}")[-1])
    assert {(r["database_name"], r["name"]) for r in shown} == {("myDb", n) for n in listed}


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        ('CREATE TABLE "ORDERS" (a INT)', "OBJECT_ALREADY_EXISTS"),
        ('DROP TABLE "myDb".PUBLIC."orders"', "OBJECT_NOT_FOUND"),
        ("USE DATABASE mydb", "OBJECT_NOT_FOUND"),
    ],
)
def test_names_resolve_by_the_same_rule_r4(fails, statement, code):
    assert fails(f"{QUOTED_SETUP}; {statement}")[0] == code


def test_names_never_reach_outside_the_warehouse_r4(sql, home: Path):
    """SPEC R4: storage locations come from ids, so hostile names write nothing elsewhere."""
    evil = "../../../escape"
    out = sql(
        f'CREATE DATABASE "{evil}"; CREATE SCHEMA ".."; CREATE TABLE "{evil}" (a INT); '
        f'CREATE TABLE "/tmp/escape" (a INT); SHOW TABLES'
    )
    assert {r["name"] for r in rows(out[-1])} == {evil, "/tmp/escape"}
    assert [p.name for p in home.parent.iterdir()] == [home.name]
    assert not [p for p in home.rglob("*") if "escape" in p.name or p.name == ".."]


# -- DROP / UNDROP of incarnations (SPEC R3, R21, R22) ----------------------------------------
def test_each_dropped_incarnation_is_undropped_in_turn_after_renames_r3_r21_r22(sql, fails):
    """Four incarnations of T, created and dropped on successive days; UNDROP restores the
    most recently dropped one each time, the right one (same created_on and comment)."""
    sql("CREATE DATABASE d DATA_RETENTION_TIME_IN_DAYS = 10; CREATE TABLE t (a INT) COMMENT = 'v1'")
    for day in (1, 2, 3):
        sql(f"USE d; DROP TABLE t; CREATE TABLE t (a INT) COMMENT = 'v{day + 1}'", days=day)

    history = rows(sql("SHOW TABLES HISTORY LIKE 't' IN DATABASE d", days=4)[0])
    assert sorted((r["comment"], r["created_on"], r["dropped_on"]) for r in history) == [
        ("v1", at(0), at(1)),
        ("v2", at(1), at(2)),
        ("v3", at(2), at(3)),
        ("v4", at(3), None),
    ]
    assert fails("USE d; UNDROP TABLE t", days=4)[0] == "OBJECT_ALREADY_EXISTS"

    out = sql(
        "USE d; ALTER TABLE t RENAME TO t_v4; "
        "UNDROP TABLE t; ALTER TABLE t RENAME TO first_back; "
        "UNDROP TABLE t; ALTER TABLE t RENAME TO second_back; "
        "UNDROP TABLE t; SHOW TABLES HISTORY",
        days=4,
    )
    restored = {r["name"]: (r["comment"], r["created_on"], r["dropped_on"]) for r in rows(out[-1])}
    assert restored == {
        "T_V4": ("v4", at(3), None),
        "FIRST_BACK": ("v3", at(2), None),
        "SECOND_BACK": ("v2", at(1), None),
        "T": ("v1", at(0), None),
    }
    assert fails("USE d; UNDROP TABLE t", days=4)[0] == "OBJECT_ALREADY_EXISTS"
    assert fails("USE d; ALTER TABLE t RENAME TO v1; UNDROP TABLE t", days=4)[0] == (
        "OBJECT_NOT_FOUND"
    )


def test_create_or_replace_drops_the_old_incarnation_into_time_travel_r20_r21(sql, fails):
    sql("CREATE DATABASE d; CREATE TABLE t (a INT) COMMENT = 'old'")
    out = sql(
        "USE d; CREATE OR REPLACE TABLE t (b INT) COMMENT = 'new'; SHOW TABLES HISTORY", hours=2
    )
    assert sorted((r["comment"], r["dropped_on"]) for r in rows(out[-1])) == [
        ("new", None),
        ("old", at(hours=2)),
    ]
    assert fails("USE d; UNDROP TABLE t", hours=3)[0] == "OBJECT_ALREADY_EXISTS"
    out = sql("USE d; ALTER TABLE t RENAME TO t_new; UNDROP TABLE t; SHOW TABLES", hours=3)
    assert {r["name"]: r["comment"] for r in rows(out[-1])} == {"T": "old", "T_NEW": "new"}


@pytest.mark.parametrize("kind", ["TABLE", "SCHEMA", "DATABASE"])
def test_undrop_fails_while_a_live_object_has_the_name_r21(sql, fails, kind):
    create = f"CREATE {kind} x" + (" (a INT)" if kind == "TABLE" else "")
    code, _ = fails(f"CREATE DATABASE d; {create}; DROP {kind} x; USE d; {create}; UNDROP {kind} x")
    assert code == "OBJECT_ALREADY_EXISTS"
    listing = f"SHOW {kind}S HISTORY LIKE 'x'" + (" IN ACCOUNT" if kind != "DATABASE" else "")
    listed = rows(sql(listing, hours=1)[0])  # still one live and one dropped incarnation
    assert sorted(r["dropped_on"] is None for r in listed) == [False, True]


@pytest.mark.parametrize("container", ["SCHEMA d.s", "DATABASE d"])
def test_container_undrop_brings_back_children_but_not_one_dropped_alone_r11_r21(sql, container):
    """SPEC R21: dropping a container drops its live children and UNDROP brings back
    exactly those; a table dropped on its own before stays dropped with its own
    retention (R11) and can be undropped by itself later."""
    sql(
        "CREATE DATABASE d; CREATE SCHEMA s; "
        "CREATE TABLE t1 (a INT) COMMENT = 'with container'; "
        "CREATE TABLE own (a INT) DATA_RETENTION_TIME_IN_DAYS = 10 COMMENT = 'alone'; "
        "DROP TABLE own"
    )
    assert sql(f"DROP {container}; SHOW TABLES IN ACCOUNT", hours=1)[-1]["rows"] == []

    out = sql(f"UNDROP {container}; SHOW TABLES HISTORY IN SCHEMA d.s; SHOW SCHEMAS IN d", hours=2)
    tables = by_name(out[1])
    assert (tables["T1"]["comment"], tables["T1"]["dropped_on"]) == ("with container", None)
    assert (tables["OWN"]["dropped_on"], tables["OWN"]["retention_time"]) == (at(), 10)
    assert {r["name"] for r in rows(out[2])} == {"PUBLIC", "S"}

    out = sql("UNDROP TABLE d.s.own; SHOW TABLES IN SCHEMA d.s", days=5)
    assert set(by_name(out[-1])) == {"T1", "OWN"}


# -- SHOW ... HISTORY, LIKE and IN (SPEC R22) --------------------------------------------------
def test_show_tables_history_lists_dropped_incarnations_still_in_time_travel_r22(sql):
    sql(
        "CREATE DATABASE d; "
        "CREATE TABLE short (a INT) DATA_RETENTION_TIME_IN_DAYS = 1; "
        "CREATE TABLE long (a INT) DATA_RETENTION_TIME_IN_DAYS = 3; "
        "CREATE TABLE zero (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        "CREATE TABLE live (a INT); "
        "DROP TABLE short; DROP TABLE long; DROP TABLE zero"
    )
    out = sql("USE d; SHOW TABLES HISTORY; SHOW TABLES; SHOW TABLES HISTORY IN ACCOUNT", days=2)
    assert out[1]["columns"] == TABLE_COLUMNS
    history = by_name(out[1])
    assert set(history) == {"LONG", "LIVE"}  # SHORT left time travel, ZERO never was in it
    in_d = {("D", "PUBLIC", "LONG"), ("D", "PUBLIC", "LIVE")}
    assert (history["LONG"]["dropped_on"], history["LONG"]["retention_time"]) == (at(), 3)
    assert history["LIVE"]["dropped_on"] is None
    assert set(by_name(out[2])) == {"LIVE"}
    assert out[3]["rows"] == out[1]["rows"]
    # The tables a schema or database took with it are dropped incarnations too: listed
    # in the scopes that held them, for the container's window (they were missing once).
    out = sql(
        "CREATE SCHEMA d.s DATA_RETENTION_TIME_IN_DAYS = 3; CREATE TABLE d.s.kept (a INT); "
        "CREATE DATABASE e; CREATE TABLE e.public.other (a INT); DROP SCHEMA d.s; DROP DATABASE e; "
        "SHOW TABLES HISTORY IN DATABASE d; SHOW TABLES HISTORY IN ACCOUNT",
        days=2,
    )
    assert {place(r) for r in rows(out[-2])} == {("D", "S", "KEPT"), *in_d}
    assert {place(r) for r in rows(out[-1])} == {
        ("D", "S", "KEPT"),
        ("E", "PUBLIC", "OTHER"),
        *in_d,
    }
    later = sql("SHOW TABLES HISTORY IN ACCOUNT", days=4)  # E's 1 day is over, S's 3 are not
    assert {place(r) for r in rows(later[0])} == {("D", "S", "KEPT"), ("D", "PUBLIC", "LIVE")}


def place(row: dict[str, Any]) -> tuple[str, str, str]:
    """(database, schema, name) of a SHOW row; '' where the listing has no such column."""
    return row.get("database_name", ""), row.get("schema_name", ""), row["name"]


def test_show_like_and_in_scopes_r22(sql, fails):
    sql(
        "CREATE DATABASE d1; CREATE SCHEMA s; "
        "CREATE TABLE orders (a INT); CREATE TABLE order_lines (a INT); CREATE TABLE ox (a INT); "
        "CREATE TABLE d1.public.orders (a INT); "
        "CREATE DATABASE d2; CREATE TABLE orders (a INT); DROP TABLE orders"
    )
    s_orders, public_orders = ("D1", "S", "ORDERS"), ("D1", "PUBLIC", "ORDERS")
    cases: list[tuple[str, set[tuple[str, str, str]]]] = [
        ("SHOW TABLES", {s_orders, ("D1", "S", "ORDER_LINES"), ("D1", "S", "OX")}),
        ("SHOW TABLES LIKE 'order%'", {s_orders, ("D1", "S", "ORDER_LINES")}),
        ("SHOW TABLES LIKE 'O_'", {("D1", "S", "OX")}),
        ("SHOW TABLES LIKE 'ORDERS' IN DATABASE", {s_orders, public_orders}),
        ("SHOW TABLES IN SCHEMA d1.public", {public_orders}),
        ("SHOW TABLES IN d1.public", {public_orders}),
        ("SHOW TABLES LIKE 'orders' IN ACCOUNT", {s_orders, public_orders}),
        (
            "SHOW TABLES HISTORY LIKE 'orders' IN ACCOUNT",
            {s_orders, public_orders, ("D2", "PUBLIC", "ORDERS")},
        ),
        ("SHOW TABLES HISTORY IN DATABASE d2", {("D2", "PUBLIC", "ORDERS")}),
        ("SHOW SCHEMAS LIKE 's' IN ACCOUNT", {("D1", "", "S")}),
        ("SHOW SCHEMAS IN DATABASE d2", {("D2", "", "PUBLIC")}),
        ("SHOW DATABASES LIKE '%2'", {("", "", "D2")}),
        # Snowflake's STARTS WITH (a case-sensitive prefix) and LIMIT n [FROM 'after'],
        # over the listing's order (they were ignored once: every row came back).
        ("SHOW TABLES STARTS WITH 'ORDER'", {s_orders, ("D1", "S", "ORDER_LINES")}),
        ("SHOW TABLES STARTS WITH 'order'", set()),
        ("SHOW TABLES LIMIT 1", {s_orders}),  # by name: 'S' sorts before '_'
        ("SHOW TABLES LIMIT 1 FROM 'ORDERS'", {("D1", "S", "ORDER_LINES")}),
    ]
    statements = "; ".join(statement for statement, _ in cases)
    out = sql(f"USE SCHEMA d1.s; {statements}", hours=1)[1:]
    for (statement, expected), result in zip(cases, out, strict=True):
        assert {place(r) for r in rows(result)} == expected, statement
    terse = sql("SHOW TERSE TABLES IN SCHEMA d1.s", hours=1)[0]
    assert terse["columns"] == ["created_on", "name", "database_name", "schema_name", "kind"]
    code, _ = fails("SHOW ICEBERG TABLES", hours=1)  # listed every Delta table once
    assert code == "UNSUPPORTED"


# -- RENAME and SWAP (SPEC R3, R25) -------------------------------------------------------------
def test_rename_and_swap_keep_each_incarnation_r3_r25(sql, fails):
    sql(
        "CREATE DATABASE d; CREATE SCHEMA s; "
        "CREATE TABLE a (x INT) COMMENT = 'A'; CREATE TABLE b (x INT) COMMENT = 'B'"
    )
    out = sql(
        "USE SCHEMA d.s; ALTER TABLE a SWAP WITH b; "
        "ALTER TABLE b RENAME TO d.public.moved; "
        "ALTER SCHEMA d.s RENAME TO d.s2; ALTER DATABASE d RENAME TO e; "
        "SHOW TABLES IN DATABASE e",
        days=1,
    )
    placed = {(r["database_name"], r["schema_name"], r["name"]): r for r in rows(out[-1])}
    assert {k: (v["comment"], v["created_on"]) for k, v in placed.items()} == {
        ("E", "S2", "A"): ("B", at()),
        ("E", "PUBLIC", "MOVED"): ("A", at()),
    }
    assert (
        fails("ALTER TABLE e.s2.a RENAME TO e.public.moved", days=1)[0] == "OBJECT_ALREADY_EXISTS"
    )
    assert fails("ALTER TABLE e.s2.a SWAP WITH e.s2.nope", days=1)[0] == "OBJECT_NOT_FOUND"

    # A renamed table is dropped and undropped under its new name (same incarnation).
    out = sql(
        "DROP TABLE e.public.moved; UNDROP TABLE e.public.moved; SHOW TABLES IN SCHEMA e.public",
        days=2,
    )
    (moved,) = rows(out[-1])
    assert (moved["name"], moved["comment"], moved["created_on"]) == ("MOVED", "A", at())


def test_schema_swap_exchanges_contents_r25(sql):
    out = sql(
        "CREATE DATABASE d; CREATE TABLE in_public (a INT); "
        "CREATE SCHEMA s; CREATE TABLE in_s (a INT); "
        "ALTER SCHEMA d.s SWAP WITH d.public; SHOW TABLES IN DATABASE d"
    )
    assert {(r["schema_name"], r["name"]) for r in rows(out[-1])} == {
        ("S", "IN_PUBLIC"),
        ("PUBLIC", "IN_S"),
    }
