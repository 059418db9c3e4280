"""The one clock (SPEC R15): ``--now`` / ``REWIND_NOW`` / Airflow's logical end.

No other module reads the wall clock; they all ask a :class:`Clock`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rewind.errors import InvalidValue


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO 8601 timestamp; one without an offset is taken as UTC.

    Raises:
        InvalidValue: when the text is not a timestamp Rewind can use.
    """
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidValue(f"'{text}' is not an ISO 8601 timestamp.") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


# Snowflake's AUTO timestamp input beyond ISO 8601: its default output format
# ('DY MON DD HH24:MI:SS TZHTZM YYYY') and day-month-year spellings.
_SNOWFLAKE_FORMATS = (
    "%a %b %d %H:%M:%S %z %Y",
    "%a %b %d %H:%M:%S.%f %z %Y",
    "%d-%b-%Y %H:%M:%S",
    "%d-%b-%Y %H:%M:%S %z",
    "%b %d, %Y %H:%M:%S",
    "%m/%d/%Y %H:%M:%S",
)
_SPACED_OFFSET = re.compile(r"^(.*\d)\s+([+-]\d{2}:?\d{2})$")
_ZONE_NAME = re.compile(r"^(.*\d)\s+([A-Za-z][A-Za-z_+\-/0-9]*)$")


def parse_timestamp_input(text: str) -> datetime:
    """A timestamp as a user copies it from Snowflake's or BigQuery's documentation:
    ISO 8601 (``T`` or a space, the offset also after a space), RFC 2822
    (``Wed, 04 Mar 2026 09:20:00 -0700``, Snowflake's ``::timestamp_tz`` examples),
    Snowflake's default output format, or a trailing time zone name
    (``2026-03-04 09:20:00 UTC``, ``... America/Los_Angeles``: BigQuery's literals).
    Without an offset or zone, UTC. The result keeps the offset it was given (a
    TIMESTAMP_NTZ keeps the wall-clock time).

    Raises:
        InvalidValue: none of these.
    """
    value = text.strip()
    spaced = _SPACED_OFFSET.match(value)
    candidate = f"{spaced[1]}{spaced[2]}" if spaced else value
    try:
        parsed: datetime | None = datetime.fromisoformat(
            candidate[:-1] + "+00:00" if candidate.endswith(("Z", "z")) else candidate
        )
    except ValueError:
        parsed = _other_spellings(value)
    if parsed is None:
        raise InvalidValue(
            f"Timestamp '{text}' is not recognized: use ISO 8601 "
            "('2026-03-04 09:20:00 -07:00') or RFC 2822 ('Wed, 04 Mar 2026 09:20:00 -0700')."
        )
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _other_spellings(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        pass
    for spelling in _SNOWFLAKE_FORMATS:
        try:
            return datetime.strptime(value, spelling)
        except ValueError:
            continue
    zoned = _ZONE_NAME.match(value)
    if zoned:
        try:
            zone = UTC if zoned[2].upper() in ("UTC", "GMT", "Z") else ZoneInfo(zoned[2])
            local = datetime.fromisoformat(zoned[1])
        except (ZoneInfoNotFoundError, ValueError):
            return None
        return local.replace(tzinfo=zone) if local.tzinfo is None else None
    return None


def format_timestamp(value: datetime) -> str:
    """ISO 8601 with offset, microseconds only when present."""
    return value.astimezone(UTC).isoformat()


@dataclass(frozen=True)
class Clock:
    """A fixed instant (``fixed``) or the system clock when ``fixed`` is None."""

    fixed: datetime | None = None

    def now(self) -> datetime:
        if self.fixed is not None:
            return self.fixed
        return datetime.now(UTC)

    @classmethod
    def from_text(cls, text: str | None) -> Clock:
        return cls(parse_timestamp(text) if text else None)
