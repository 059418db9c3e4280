"""Retention through SQL (SPEC R5–R11), observed as a user sees it: ``retention_time`` in
SHOW, what SHOW ... HISTORY still lists, and when UNDROP works, with ``--now`` moving
across days. Only the last test starts Spark (AT | BEFORE reads, SPEC R17).
"""

from __future__ import annotations

from typing import Any

import pytest
from cli_helpers import at, rows

pytestmark = pytest.mark.cli

TWO_DAYS = 2 * 86400


def retention_by_name(result: dict[str, Any]) -> dict[str, int]:
    """``name -> retention_time`` of a SHOW listing whose names are distinct."""
    listed = rows(result)
    assert len({r["name"] for r in listed}) == len(listed), listed
    return {r["name"]: int(r["retention_time"]) for r in listed}


def history(kind: str, name: str) -> str:
    """SHOW <kind>S HISTORY for one name, over the whole account."""
    scope = "" if kind == "DATABASE" else " IN ACCOUNT"
    return f"SHOW {kind}S HISTORY LIKE '{name}'{scope}"


# -- R5: values and defaults -----------------------------------------------------------------
def test_account_default_is_one_day_and_the_range_bounds_are_accepted_r2_r5(sql):
    out = sql(
        "CREATE DATABASE d; "
        "CREATE TABLE dflt (a INT); "
        "CREATE TABLE t0 (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        "CREATE TABLE t90 (a INT) DATA_RETENTION_TIME_IN_DAYS = 90; "
        "CREATE TRANSIENT TABLE tr0 (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        "CREATE TRANSIENT TABLE tr1 (a INT) DATA_RETENTION_TIME_IN_DAYS = 1; "
        "CREATE TRANSIENT TABLE tr (a INT); "
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 90; "
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 0; "
        "SHOW TABLES; SHOW SCHEMAS; SHOW DATABASES"
    )
    assert retention_by_name(out[-3]) == {
        "DFLT": 1,
        "T0": 0,
        "T90": 90,
        "TR0": 0,
        "TR1": 1,
        "TR": 1,
    }
    assert {r["name"]: r["kind"] for r in rows(out[-3])}["TR"] == "TRANSIENT"
    assert retention_by_name(out[-2]) == {"PUBLIC": 1}
    assert retention_by_name(out[-1]) == {"D": 1}


def test_transient_containers_make_transient_tables_capped_at_one_day_r2_r5(sql):
    out = sql(
        "ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 10; "
        "CREATE DATABASE d; CREATE TABLE perm (a INT); CREATE TRANSIENT TABLE tr (a INT); "
        "CREATE TRANSIENT SCHEMA ts; CREATE TABLE in_ts (a INT); "
        "CREATE TRANSIENT DATABASE td; CREATE TABLE in_td (a INT); "
        "SHOW TABLES IN ACCOUNT"
    )
    listed = {r["name"]: (r["kind"], int(r["retention_time"])) for r in rows(out[-1])}
    assert listed == {
        "PERM": ("TABLE", 10),
        "TR": ("TRANSIENT", 1),
        "IN_TS": ("TRANSIENT", 1),
        "IN_TD": ("TRANSIENT", 1),
    }


# -- R6: inheritance -------------------------------------------------------------------------
def test_objects_without_a_value_inherit_from_their_parents_r6(sql):
    """Each step changes one level; T (no value) follows, U (explicit 4) never moves.
    Snowflake's SHOW PARAMETERS IN TABLE says where T's value comes from."""
    steps = [
        ("ALTER DATABASE d SET DATA_RETENTION_TIME_IN_DAYS = 7", 7, "DATABASE"),
        ("ALTER SCHEMA d.public SET DATA_RETENTION_TIME_IN_DAYS = 3", 3, "SCHEMA"),
        ("ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 2", 2, "TABLE"),
        ("ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 20", 2, "TABLE"),
        ("ALTER TABLE t UNSET DATA_RETENTION_TIME_IN_DAYS", 3, "SCHEMA"),
        ("ALTER SCHEMA d.public UNSET DATA_RETENTION_TIME_IN_DAYS", 7, "DATABASE"),
        ("ALTER DATABASE d UNSET DATA_RETENTION_TIME_IN_DAYS", 20, "ACCOUNT"),
        ("ALTER ACCOUNT UNSET DATA_RETENTION_TIME_IN_DAYS", 1, ""),  # the default
    ]
    script = "; ".join(f"{s}; SHOW TABLES; SHOW PARAMETERS IN TABLE t" for s, *_ in steps)
    out = sql(
        "CREATE DATABASE d; CREATE TABLE t (a INT); "
        f"CREATE TABLE u (a INT) DATA_RETENTION_TIME_IN_DAYS = 4; {script}"
    )
    shown = [retention_by_name(result) for result in out[4::3]]
    assert shown == [{"T": days, "U": 4} for _, days, _ in steps]
    parameters = [rows(result) for result in out[5::3]]
    assert [[(p["key"], p["value"], p["level"]) for p in listed] for listed in parameters] == [
        [("DATA_RETENTION_TIME_IN_DAYS", str(days), level)] for _, days, level in steps
    ]


# -- R7: MIN_DATA_RETENTION_TIME_IN_DAYS -----------------------------------------------------
def test_min_retention_overrides_zero_for_permanent_tables_only_r7(sql, fails):
    """MIN = 5 makes a 0-day permanent table undroppable for 5 days without changing its
    stored value; transient tables ignore MIN (0 stays 0, the default stays 1)."""
    code, out = fails(
        "CREATE DATABASE d; "
        "CREATE TABLE z (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        "CREATE TRANSIENT TABLE tz (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        "CREATE TRANSIENT TABLE tt (a INT); "
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 5; "
        "SHOW TABLES; SHOW PARAMETERS LIKE '%retention%' IN ACCOUNT; "
        "SHOW PARAMETERS IN TABLE z; "
        "DROP TABLE z; DROP TABLE tz; DROP TABLE tt; UNDROP TABLE tz"
    )
    assert code == "CANNOT_UNDROP"
    shown = retention_by_name(out[5])
    assert (shown["TZ"], shown["TT"]) == (0, 1)
    account, z = rows(out[6]), rows(out[7])
    assert [(p["key"], p["value"], p["default"], p["level"]) for p in account] == [
        ("DATA_RETENTION_TIME_IN_DAYS", "1", "1", ""),
        ("MIN_DATA_RETENTION_TIME_IN_DAYS", "5", "0", "ACCOUNT"),
    ]
    assert (z[0]["value"], z[0]["level"]) == ("0", "TABLE")  # MIN never changes the value

    code, out = fails("USE d; SHOW TABLES HISTORY; UNDROP TABLE tt", days=1, hours=1)
    assert code == "CANNOT_UNDROP"
    assert retention_by_name(out[1]) == {"Z": 5}  # frozen at drop: MAX(0, 5) (R7, R10)

    out = sql(
        "USE d; UNDROP TABLE z; ALTER ACCOUNT UNSET MIN_DATA_RETENTION_TIME_IN_DAYS; SHOW TABLES",
        days=4,
    )
    assert retention_by_name(out[-1]) == {"Z": 0}  # the stored value never changed


# -- R8: retention 0 ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "create",
    [
        "CREATE TABLE x (a INT) DATA_RETENTION_TIME_IN_DAYS = 0",
        "CREATE SCHEMA x DATA_RETENTION_TIME_IN_DAYS = 0",
        "CREATE DATABASE x DATA_RETENTION_TIME_IN_DAYS = 0",
    ],
    ids=["table", "schema", "database"],
)
def test_dropped_with_zero_retention_cannot_be_undropped_r8(fails, create):
    kind = create.split()[1]
    code, out = fails(
        f"CREATE DATABASE d; {create}; USE d; DROP {kind} x; {history(kind, 'x')}; UNDROP {kind} x"
    )
    assert code == "CANNOT_UNDROP"
    assert out[-1]["rows"] == []  # not in time travel, so not in SHOW ... HISTORY (R22)


# -- R9, R10: lowering retention ---------------------------------------------------------------
def test_lowering_retention_shrinks_live_windows_but_not_dropped_ones_r9_r10(sql, fails):
    sql(
        "ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 10; CREATE DATABASE d; "
        "CREATE TABLE gone (a INT); CREATE TABLE live (a INT); CREATE TABLE later (a INT); "
        "DROP TABLE gone"
    )
    out = sql(
        "ALTER ACCOUNT SET DATA_RETENTION_TIME_IN_DAYS = 1; SHOW TABLES HISTORY IN DATABASE d; "
        "DROP TABLE d.public.later",
        days=1,
    )
    assert retention_by_name(out[1]) == {"GONE": 10, "LIVE": 1, "LATER": 1}

    code, out = fails("USE d; SHOW TABLES HISTORY; UNDROP TABLE later", days=2, hours=1)
    assert code == "CANNOT_UNDROP"
    assert retention_by_name(out[1]) == {"GONE": 10, "LIVE": 1}

    # To change a dropped table's retention, undrop it first (R10).
    code, _ = fails("ALTER TABLE d.public.gone SET DATA_RETENTION_TIME_IN_DAYS = 1", days=9)
    assert code == "OBJECT_NOT_FOUND"
    out = sql("USE d; UNDROP TABLE gone; SHOW TABLES", days=9, hours=23)
    assert retention_by_name(out[-1]) == {"GONE": 1, "LIVE": 1}


def test_dropped_table_ignores_later_changes_to_its_parents_r10(sql):
    sql(
        "CREATE DATABASE d; CREATE SCHEMA s DATA_RETENTION_TIME_IN_DAYS = 2; "
        "CREATE TABLE t (a INT); DROP TABLE t"
    )
    out = sql(
        "ALTER SCHEMA d.s SET DATA_RETENTION_TIME_IN_DAYS = 30; "
        "ALTER DATABASE d SET DATA_RETENTION_TIME_IN_DAYS = 30; "
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 30; "
        "SHOW TABLES HISTORY IN SCHEMA d.s",
        days=1,
    )
    assert retention_by_name(out[-1]) == {"T": 2}
    assert sql("SHOW TABLES HISTORY IN SCHEMA d.s", days=2, hours=1)[0]["rows"] == []


# -- R11: children of a dropped container ------------------------------------------------------
@pytest.mark.parametrize(
    ("container", "listing"),
    [
        ("SCHEMA d.s", "SHOW SCHEMAS HISTORY LIKE 's' IN DATABASE d"),
        ("DATABASE d", "SHOW DATABASES HISTORY LIKE 'd'"),
    ],
    ids=["schema", "database"],
)
def test_children_are_retained_for_the_containers_retention_r11(sql, fails, container, listing):
    """Container 2 days, children 10 and 0 days: all come back within 2 days (even the
    0-day one), none after, whatever their own setting."""
    sql(
        "CREATE DATABASE d; CREATE SCHEMA s; "
        f"ALTER {container} SET DATA_RETENTION_TIME_IN_DAYS = 2; "
        "CREATE TABLE d.s.long (a INT) DATA_RETENTION_TIME_IN_DAYS = 10; "
        "CREATE TABLE d.s.zero (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        f"DROP {container}"
    )
    out = sql(f"UNDROP {container}; SHOW TABLES IN SCHEMA d.s; DROP {container}", days=2, hours=-1)
    assert retention_by_name(out[1]) == {"LONG": 10, "ZERO": 0}

    code, out = fails(f"{listing}; UNDROP {container}", days=4)
    assert code == "CANNOT_UNDROP"
    assert out[0]["rows"] == []


# -- UNDROP at the window's edge (SPEC R10, R21, R30) ----------------------------------------
@pytest.mark.parametrize(
    "create",
    [
        "CREATE TABLE {} (a INT) DATA_RETENTION_TIME_IN_DAYS = 3",
        "CREATE SCHEMA {} DATA_RETENTION_TIME_IN_DAYS = 3",
        "CREATE DATABASE {} DATA_RETENTION_TIME_IN_DAYS = 3",
    ],
    ids=["table", "schema", "database"],
)
def test_undrop_works_until_the_window_ends_not_after_r21(sql, fails, create):
    """Two objects dropped at DAY0 with 3 days: one hour before the end SHOW ... HISTORY
    lists them (R22) and UNDROP works; one hour after, UNDROP fails and they are gone."""
    kind = create.split()[1]
    sql(
        f"CREATE DATABASE d; {create.format('early')}; USE d; {create.format('late')}; "
        f"USE d; DROP {kind} early; DROP {kind} late"
    )
    out = sql(
        f"USE d; {history(kind, 'late')}; UNDROP {kind} early; {history(kind, 'early')}",
        days=3,
        hours=-1,
    )
    assert [(r["dropped_on"], int(r["retention_time"])) for r in rows(out[1])] == [(at(), 3)]
    assert [r["dropped_on"] for r in rows(out[-1])] == [None]

    code, out = fails(f"USE d; {history(kind, 'late')}; UNDROP {kind} late", days=3, hours=1)
    assert code == "CANNOT_UNDROP"
    assert out[1]["rows"] == []


@pytest.mark.parametrize(("later_retention", "undrop_day"), [(0, 0), (1, 2)])
def test_undrop_skips_a_newer_incarnation_that_left_time_travel_r8_r21_r22(
    sql, later_retention, undrop_day
):
    """T 'long' (10 days) is dropped, then T 'short' (0 or 1 day): once 'short' has left
    time travel, SHOW ... HISTORY lists only 'long' and UNDROP restores that one."""
    sql(
        "CREATE DATABASE d; "
        "CREATE TABLE t (a INT) DATA_RETENTION_TIME_IN_DAYS = 10 COMMENT = 'long'; DROP TABLE t; "
        f"CREATE TABLE t (a INT) DATA_RETENTION_TIME_IN_DAYS = {later_retention} "
        "COMMENT = 'short'; DROP TABLE t"
    )
    out = sql("USE d; SHOW TABLES HISTORY; UNDROP TABLE t; SHOW TABLES", days=undrop_day)
    assert [r["comment"] for r in rows(out[1])] == ["long"]
    assert [(r["comment"], r["dropped_on"]) for r in rows(out[-1])] == [("long", None)]


# -- Time travel reads follow the effective retention (SPEC R7, R9, R17) -- starts Spark ----------
def test_time_travel_window_follows_effective_retention_r7_r9_r17(sql, fails):
    """Two days back is allowed with 10 days, with 0 days under MIN = 5 (R7), and still
    with 1 day under MIN = 5; refused once MIN is unset and 1 day applies (R9, R17)."""
    sql(
        "CREATE DATABASE d; "
        "CREATE TABLE t (a INT) DATA_RETENTION_TIME_IN_DAYS = 10; "
        "CREATE TABLE z (a INT) DATA_RETENTION_TIME_IN_DAYS = 0; "
        "ALTER ACCOUNT SET MIN_DATA_RETENTION_TIME_IN_DAYS = 5"
    )
    two_days_back = f"AT(OFFSET => -{TWO_DAYS})"
    code, out = fails(
        f"USE d; SELECT COUNT(*) AS n FROM t {two_days_back}; "
        f"SELECT COUNT(*) AS n FROM z {two_days_back}; "
        "ALTER TABLE t SET DATA_RETENTION_TIME_IN_DAYS = 1; "
        f"SELECT COUNT(*) AS n FROM t {two_days_back}; "
        "ALTER ACCOUNT UNSET MIN_DATA_RETENTION_TIME_IN_DAYS; "
        f"SELECT COUNT(*) AS n FROM t {two_days_back}",
        days=3,
    )
    assert code == "TIME_TRAVEL_UNAVAILABLE"
    assert [out[i]["rows"] for i in (1, 2, 4)] == [[[0]]] * 3
