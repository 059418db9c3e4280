"""Point resolution as a pure function (SPEC R16, R17)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewind.errors import TimeTravelUnavailable, UnknownStatement
from rewind.sql.bigquery import reword
from rewind.timetravel import AT, BEFORE, Point, StatementFacts, VersionInfo, resolve

pytestmark = pytest.mark.unit

CREATED = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
# v0 created, v1 and v2 one hour apart, v3 at the same instant as v2 (same --now).
VERSIONS = [
    VersionInfo(0, CREATED),
    VersionInfo(1, CREATED + HOUR),
    VersionInfo(2, CREATED + 2 * HOUR),
    VersionInfo(3, CREATED + 2 * HOUR),
]
NOW = CREATED + 3 * HOUR


def at(point: Point, *, now: datetime = NOW, retention: int = 1, facts=None) -> int:
    return resolve(
        point,
        table="D.S.T",
        versions=VERSIONS,
        created_on=CREATED,
        now=now,
        retention_days=retention,
        statement=facts,
    )


@pytest.mark.parametrize(
    ("when", "offset_hours", "expected"),
    [
        (AT, 0, 3),  # SPEC R16: the latest version at or before the instant
        (BEFORE, 0, 3),
        (AT, -1, 3),  # CREATED + 2h: v2 and v3 share the instant; the latest wins
        (BEFORE, -1, 1),  # strictly before CREATED + 2h
        (AT, -1.5, 1),
        (AT, -2, 1),
        (BEFORE, -2, 0),
    ],
)
def test_timestamp_and_offset_points(when: str, offset_hours: float, expected: int) -> None:
    """SPEC R16: OFFSET => -n is AT(TIMESTAMP => now - n seconds)."""
    instant = NOW + timedelta(hours=offset_hours)
    assert at(Point(when, timestamp=instant)) == expected
    assert at(Point(when, offset_seconds=offset_hours * 3600)) == expected


@pytest.mark.parametrize(
    "point",
    [
        Point(AT, timestamp=NOW + timedelta(seconds=1)),  # in the future
        Point(AT, offset_seconds=1),
        Point(AT, timestamp=CREATED),  # at creation
        Point(BEFORE, timestamp=CREATED),
        Point(AT, timestamp=CREATED - HOUR),  # before creation
    ],
)
def test_points_outside_the_table_life_fail(point: Point) -> None:
    """SPEC R17: future, at or before creation."""
    with pytest.raises(
        TimeTravelUnavailable, match=r"Time travel data is not available for table D\.S\.T"
    ):
        at(point, retention=90)


def test_retention_floor_boundary() -> None:
    """SPEC R17: exactly at now - retention is allowed; one second older is not."""
    now = CREATED + timedelta(days=1, hours=1)
    assert at(Point(AT, timestamp=now - timedelta(days=1)), now=now) == 1
    with pytest.raises(TimeTravelUnavailable) as error:
        at(Point(AT, timestamp=now - timedelta(days=1, seconds=1)), now=now)
    assert error.value.code == "TIME_TRAVEL_UNAVAILABLE"


def test_retention_zero_allows_only_now() -> None:
    """SPEC R8: retention 0 switches time travel off."""
    assert at(Point(AT, offset_seconds=0), retention=0) == 3
    with pytest.raises(TimeTravelUnavailable):
        at(Point(AT, offset_seconds=-1), retention=0)


def test_statement_points() -> None:
    """SPEC R16: AT(STATEMENT) includes its changes, BEFORE excludes them."""
    wrote_v2 = StatementFacts(CREATED + 2 * HOUR, written_version=2)
    assert at(Point(AT, statement="q"), facts=wrote_v2) == 2
    assert at(Point(BEFORE, statement="q"), facts=wrote_v2) == 1
    read_v1 = StatementFacts(CREATED + HOUR, read_version=1)  # a SELECT: the state it read
    assert at(Point(AT, statement="q"), facts=read_v1) == 1
    assert at(Point(BEFORE, statement="q"), facts=read_v1) == 1
    other = StatementFacts(CREATED + 90 * timedelta(minutes=1))  # touched another table
    assert at(Point(AT, statement="q"), facts=other) == 1
    assert at(Point(AT, statement="q"), facts=StatementFacts(CREATED + 2 * HOUR)) == 3


def test_statement_errors() -> None:
    """SPEC R17: an unknown statement, or BEFORE the creating statement, fails."""
    with pytest.raises(UnknownStatement):
        at(Point(AT, statement="nope"))
    created = StatementFacts(CREATED, written_version=0)
    with pytest.raises(TimeTravelUnavailable):
        at(Point(BEFORE, statement="q"), facts=created)
    old = StatementFacts(CREATED + HOUR, written_version=1)
    with pytest.raises(TimeTravelUnavailable):
        at(Point(AT, statement="q"), facts=old, now=CREATED + timedelta(days=2), retention=1)


def test_a_statement_point_is_checked_at_the_statement_s_time_not_the_version_s() -> None:
    """SPEC R17: a read made an hour ago of a version committed days ago is in the window
    (the clone-now validation of issue 25: ``AT(STATEMENT => clone)`` of a table last
    changed outside its retention); so is BEFORE a recent write of an old version. A
    statement older than the window is still refused."""
    later = CREATED + timedelta(days=10)
    read_old = StatementFacts(later - HOUR, read_version=3)
    assert at(Point(AT, statement="q"), facts=read_old, now=later) == 3
    wrote = [*VERSIONS, VersionInfo(4, later - HOUR)]
    recent_write = StatementFacts(later - HOUR, written_version=4)
    version = resolve(
        Point(BEFORE, statement="q"),
        table="D.S.T",
        versions=wrote,
        created_on=CREATED,
        now=later,
        retention_days=1,
        statement=recent_write,
    )
    assert version == 3
    stale = StatementFacts(CREATED + 2 * HOUR, read_version=3)
    with pytest.raises(TimeTravelUnavailable):
        at(Point(AT, statement="q"), facts=stale, now=later)


@given(st.integers(min_value=1, max_value=3 * 3600), st.sampled_from([AT, BEFORE]))
def test_resolved_version_is_never_after_the_instant(seconds: int, when: str) -> None:
    """SPEC R16 as a property: the version's commit time is at/before (or before) the point."""
    instant = CREATED + timedelta(seconds=seconds)
    version = at(Point(when, timestamp=instant), retention=90)
    commit = VERSIONS[version].commit_time
    assert commit <= instant if when == AT else commit < instant
    later = [v for v in VERSIONS if v.version > version]
    assert all(v.commit_time > instant if when == AT else v.commit_time >= instant for v in later)


def test_bigquerys_wording_of_a_point_at_the_creation_instant() -> None:
    # SPEC R17, R27: a point at the creation instant is refused; BigQuery's wording must
    # not say the table was created "after it" then.
    created = datetime(2026, 11, 1, 9, tzinfo=UTC)

    def message(asked: datetime) -> str:
        error = TimeTravelUnavailable(
            "x", table="P.DS.T", instant=asked, earliest=created, created=True
        )
        return reword(error).message

    assert "1793523600000, at that very time. Creation time" in message(created)
    assert "1793523600000, after it. Creation time" in message(created - timedelta(hours=1))
