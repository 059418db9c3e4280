"""The one injectable clock and its timestamp text (SPEC R15)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewind.clock import Clock, format_timestamp, parse_timestamp, parse_timestamp_input
from rewind.errors import InvalidValue

pytestmark = pytest.mark.unit

NOON_UTC = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)

aware_instants = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.builds(
        timezone, st.timedeltas(min_value=-timedelta(hours=23), max_value=timedelta(hours=23))
    ),
)


@pytest.mark.parametrize(
    "text",
    [
        "2024-03-01T12:00:00Z",
        "2024-03-01T12:00:00z",
        "2024-03-01T12:00:00+00:00",
        "2024-03-01T14:00:00+02:00",
        "2024-03-01T06:30:00-05:30",
        "2024-03-02T00:00:00+12:00",
        "2024-03-01T12:00:00",
        "2024-03-01 12:00:00",
        "  2024-03-01T12:00:00Z\n",
    ],
)
def test_parse_timestamp_converts_to_utc_r15(text):
    parsed = parse_timestamp(text)
    assert parsed == NOON_UTC
    assert parsed.utcoffset() == timedelta(0)


@pytest.fixture
def far_local_zone(monkeypatch):
    """Run with the machine's local zone far from UTC, so 'taken as UTC' is observable."""
    monkeypatch.setenv("TZ", "Asia/Kathmandu")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("far_local_zone")
def test_parse_timestamp_without_offset_ignores_local_zone_r15():
    assert parse_timestamp("2024-03-01T12:00:00") == NOON_UTC


def test_parse_timestamp_keeps_microseconds_r15():
    parsed = parse_timestamp("2024-03-01T12:00:00.000250Z")
    assert parsed == NOON_UTC + timedelta(microseconds=250)


def test_parse_timestamp_date_only_is_utc_midnight_r15():
    assert parse_timestamp("2024-03-01") == datetime(2024, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Z",
        "yesterday",
        "12:00",
        "2024-13-01T00:00:00Z",
        "2024-02-30T00:00:00Z",
        "2024-03-01T25:00:00Z",
        "2024-03-01T12:00:00+25:00",
        "2024/03/01 12:00",
    ],
)
def test_parse_timestamp_rejects_invalid_text_r15_r39(text):
    with pytest.raises(InvalidValue) as raised:
        parse_timestamp(text)
    assert raised.value.code == "INVALID_VALUE"
    assert f"'{text}'" in raised.value.message


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (NOON_UTC, "2024-03-01T12:00:00+00:00"),
        (NOON_UTC + timedelta(microseconds=5), "2024-03-01T12:00:00.000005+00:00"),
        (
            datetime(2024, 3, 1, 14, 0, tzinfo=timezone(timedelta(hours=2))),
            "2024-03-01T12:00:00+00:00",
        ),
    ],
)
def test_format_timestamp_is_utc_iso_8601_r15(value, text):
    assert format_timestamp(value) == text


@given(aware_instants)
def test_format_then_parse_round_trips_r15(value):
    parsed = parse_timestamp(format_timestamp(value))
    assert parsed == value
    assert parsed.utcoffset() == timedelta(0)


@given(aware_instants)
def test_parse_then_format_round_trips_canonical_text_r15(value):
    text = format_timestamp(value)
    assert format_timestamp(parse_timestamp(text)) == text


def test_fixed_clock_returns_the_fixed_instant_every_time_r15():
    clock = Clock(NOON_UTC)
    assert clock.now() == NOON_UTC
    assert clock.now() == clock.now()


@pytest.mark.parametrize("text", [None, ""])
def test_clock_without_text_reads_the_aware_system_clock_r15(text):
    before = datetime.now(UTC)
    now = Clock.from_text(text).now()
    after = datetime.now(UTC)
    assert now.tzinfo is not None
    assert now.utcoffset() is not None
    assert before <= now <= after


def test_clock_from_text_is_fixed_at_the_parsed_instant_r15():
    clock = Clock.from_text("2024-03-01T14:00:00+02:00")
    assert clock == Clock(NOON_UTC)
    assert clock.now() == NOON_UTC


def test_clock_from_invalid_text_raises_invalid_value_r15():
    with pytest.raises(InvalidValue) as raised:
        Clock.from_text("not a time")
    assert raised.value.code == "INVALID_VALUE"


# The spellings the seed pages print (Snowflake: 000/003 Time Travel; BigQuery: 001).
SEVEN_PM_PACIFIC = datetime(2026, 3, 4, 16, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "Wed, 04 Mar 2026 09:20:00 -0700",  # Snowflake's AT(TIMESTAMP => ...::timestamp_tz)
        "Wed Mar 04 09:20:00 -0700 2026",  # Snowflake's default output format
        "2026-03-04 09:20:00 -07:00",
        "2026-03-04 09:20:00 -0700",
        "2026-03-04 16:20:00 UTC",  # BigQuery's TIMESTAMP literal
        "2026-03-04 08:20:00 America/Los_Angeles",  # PST in March before the switch
        "04-Mar-2026 16:20:00",
        "2026-03-04T16:20:00Z",
    ],
)
def test_documented_timestamp_spellings_name_one_instant(text: str) -> None:
    assert parse_timestamp_input(text).astimezone(UTC) == SEVEN_PM_PACIFIC


def test_an_input_timestamp_keeps_its_offset_for_wall_clock_types() -> None:
    parsed = parse_timestamp_input("Wed, 04 Mar 2026 09:20:00 -0700")
    assert parsed.replace(tzinfo=None) == datetime(2026, 3, 4, 9, 20)


@pytest.mark.parametrize(
    "text",
    ["yesterday", "1 2 3", "Mon, 99 Foo 2026", "2026-03-04 09:20 Nowhere/City", "x ../etc", ""],
)
def test_an_unknown_spelling_is_invalid_value_naming_what_works(text: str) -> None:
    with pytest.raises(InvalidValue) as refused:
        parse_timestamp_input(text)
    assert "RFC 2822" in refused.value.message
