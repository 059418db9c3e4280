"""The one clock (SPEC R15): ``--now`` / ``REWIND_NOW`` / Airflow's logical end.

No other module reads the wall clock; they all ask a :class:`Clock`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

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
