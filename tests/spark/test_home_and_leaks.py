"""Nobody gets in where they don't belong (SPEC R12, R37, R38).

A home only its owner reads: Rewind creates its directories 0700 and its catalog file
0600, and tightens a home it finds looser, saying so. An object a role holds nothing on
answers exactly like a missing one, in every statement and in UNDROP: the same code and
the same message, with only the name differing.
"""

from __future__ import annotations

import logging
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rewind.errors import RewindError

pytestmark = pytest.mark.spark

CLOCK = "2026-03-0{}T{:02d}:00:00+00:00"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_is_owner_only_r38(connect: Callable[..., Any], home: Path) -> None:
    """Home, warehouse, system/, pins and the fail-safe root 0700; the catalog and its
    WAL files 0600 — after statements, a time-travel read (which pins) and a lifecycle
    run that moved files into fail-safe."""
    connect(now=CLOCK.format(1, 0)).sql(
        "CREATE DATABASE D; CREATE TABLE T (ID INT) DATA_RETENTION_TIME_IN_DAYS = 1;"
        "INSERT INTO T VALUES (1); DELETE FROM T"
    )
    connect(now=CLOCK.format(1, 1)).sql("SELECT * FROM D.PUBLIC.T AT(OFFSET => -1800)")
    connect(now=CLOCK.format(3, 0)).lifecycle()
    directories = [home, home / "warehouse", home / "system", home / "pins", home / "failsafe"]
    assert {str(p): mode(p) for p in directories} == {str(p): 0o700 for p in directories}
    assert any((home / "failsafe").iterdir())  # the run did move a file there
    catalog = sorted(home.glob("catalog.db*"))
    assert catalog and {p.name: mode(p) for p in catalog} == {p.name: 0o600 for p in catalog}


def test_a_home_found_readable_by_others_is_tightened_with_a_warning(
    connect: Callable[..., Any], home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A home made by an older Rewind, or by hand, with the umask's 0755 / 0644."""
    connect(now=CLOCK.format(1, 0)).sql("CREATE DATABASE D")
    for path in (home, home / "warehouse", home / "system"):
        path.chmod(0o755)
    (home / "catalog.db").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="rewind.home"):
        connect(now=CLOCK.format(1, 1)).sql("SHOW DATABASES")
    assert (mode(home), mode(home / "warehouse"), mode(home / "catalog.db")) == (
        0o700,
        0o700,
        0o600,
    )
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert f"{home} was readable by others (mode 755); tightened to 700" in warned
    assert "catalog.db was readable by others (mode 644); tightened to 600" in warned


# -- no existence leaks (SPEC R37) -------------------------------------------------------------
SETUP = (
    "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT); INSERT INTO D.PUBLIC.T VALUES (1);"
    "CREATE TABLE D.PUBLIC.SEEN (ID INT); CREATE DATABASE HIDDEN;"
    "CREATE TABLE HIDDEN.PUBLIC.T (ID INT);"
    "CREATE ROLE CLERK; CREATE USER ANALYST DEFAULT_ROLE = CLERK; GRANT ROLE CLERK TO USER ANALYST;"
    "GRANT SELECT ON TABLE D.PUBLIC.SEEN TO ROLE CLERK"
)
STATEMENTS = [
    "SELECT * FROM {t}",
    "SELECT * FROM {t} AT(OFFSET => -60)",
    "INSERT INTO {t} VALUES (2)",
    "UPDATE {t} SET ID = 2",
    "DELETE FROM {t}",
    "MERGE INTO {t} USING D.PUBLIC.SEEN S ON {t}.ID = S.ID WHEN MATCHED THEN DELETE",
    "DROP TABLE {t}",
    "ALTER TABLE {t} SET DATA_RETENTION_TIME_IN_DAYS = 3",
    "DESCRIBE TABLE {t}",
    "CREATE TABLE D.PUBLIC.MINE CLONE {t}",
    "GRANT SELECT ON TABLE {t} TO ROLE CLERK",
    "SELECT * FROM D.PUBLIC.SEEN JOIN {t} USING (ID)",
]
# (an object ANALYST holds nothing on, a missing name of the same shape)
PAIRS = [
    ("D.PUBLIC.T", "D.PUBLIC.NOPE"),  # in a database the role sees (it holds SEEN)
    ("HIDDEN.PUBLIC.T", "NOPE.PUBLIC.T"),  # in a database the role holds nothing in
]


def answer(conn: Any, statement: str) -> tuple[str, str]:
    with pytest.raises(RewindError) as raised:
        conn.sql(statement)
    return raised.value.code, raised.value.message


@pytest.mark.parametrize("pair", PAIRS, ids=["visible-db", "hidden-db"])
def test_an_object_without_privileges_answers_like_a_missing_one_r37(
    connect: Callable[..., Any], pair: tuple[str, str]
) -> None:
    connect(now=CLOCK.format(1, 0)).sql(SETUP)
    analyst = connect(now=CLOCK.format(1, 1), user="ANALYST")
    existing, missing = pair
    for template in STATEMENTS:
        code, message = answer(analyst, template.format(t=existing))
        expected = answer(analyst, template.format(t=missing))
        for a, b in zip(missing.split("."), existing.split("."), strict=True):
            expected = (expected[0], expected[1].replace(a, b))
        assert (code, message) == expected, template
    shown = analyst.sql("SHOW DATABASES")[0].column("name")
    assert "HIDDEN" not in shown and "D" in shown


@pytest.mark.parametrize("days_later", [0, 3], ids=["in-time-travel", "in-failsafe"])
def test_undrop_of_someone_elses_table_answers_like_a_missing_one_r37(
    connect: Callable[..., Any], days_later: int
) -> None:
    """Dropped by ADMIN with 1 day of retention; ANALYST's UNDROP — while undroppable, or
    after it left time travel for fail-safe — is told what a missing name is told, not
    CANNOT_UNDROP or ACCESS_DENIED."""
    connect(now=CLOCK.format(1, 0)).sql(
        SETUP
        + "; ALTER TABLE D.PUBLIC.T SET DATA_RETENTION_TIME_IN_DAYS = 1; DROP TABLE D.PUBLIC.T"
    )
    analyst = connect(now=CLOCK.format(1 + days_later, 2), user="ANALYST")
    code, message = answer(analyst, "UNDROP TABLE D.PUBLIC.T")
    expected = answer(analyst, "UNDROP TABLE D.PUBLIC.NOPE")
    assert (code, message) == (expected[0], expected[1].replace("NOPE", "T"))
    assert code == "OBJECT_NOT_FOUND"
