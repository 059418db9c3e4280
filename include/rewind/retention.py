"""Retention rules as pure functions (SPEC R5–R11). No I/O here.

The catalog gathers the facts (explicit values up the parent chain, the account
minimum, whether the object is transient, drop times) and asks these functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from rewind.constants import (
    KEEP_FOREVER_DAYS,
    MAX_RETENTION_DAYS,
    MAX_TRANSIENT_RETENTION_DAYS,
    RETENTION_PARAM,
)
from rewind.errors import InvalidRetention


def validate_retention(
    value: object,
    *,
    transient: bool,
    param: str = RETENTION_PARAM,
    target: str = "this object",
) -> int:
    """Check a retention value before it is stored (SPEC R5, R7).

    Args:
        value: what the user wrote (already a Python value).
        transient: whether the object is (or would be) transient.
        param: ``DATA_RETENTION_TIME_IN_DAYS`` or ``MIN_DATA_RETENTION_TIME_IN_DAYS``.
        target: the object the value is for, as the message names it (SPEC R39:
            "a one-line message naming the object and the reason").

    Returns:
        The value as an int.

    Raises:
        InvalidRetention: not an integer, or outside 0..90 (0..1 for transient objects).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRetention(
            f"{param} of {target} must be an integer number of days, got {_shown(value)}."
        )
    upper = MAX_RETENTION_DAYS
    if param == RETENTION_PARAM and transient:
        upper = MAX_TRANSIENT_RETENTION_DAYS
    if not 0 <= value <= upper:
        kind = " (transient)" if upper == MAX_TRANSIENT_RETENTION_DAYS else ""
        raise InvalidRetention(
            f"{param} = {value} is out of range for {target}{kind}: allowed 0..{upper}."
        )
    return value


def _shown(value: object) -> str:
    """A value as the user wrote it in SQL, not as Python's repr."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).upper()
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def inherited_retention(chain: Sequence[int | None]) -> int:
    """The first explicit value walking up ``chain`` (object, parents..., account) (R6).

    The last element is the account's value and is never None.
    """
    for value in chain:
        if value is not None:
            return value
    raise ValueError("the account retention must be set")


def effective_retention(chain: Sequence[int | None], *, account_min: int, transient: bool) -> int:
    """Effective retention of a live object in days (SPEC R5–R7).

    Permanent: ``MAX(inherited DATA_RETENTION_TIME_IN_DAYS, MIN_DATA_RETENTION_TIME_IN_DAYS)``.
    Transient: the inherited value capped at 1 day; the account minimum does not apply.
    """
    days = inherited_retention(chain)
    if transient:
        return min(days, MAX_TRANSIENT_RETENTION_DAYS)
    return max(days, account_min)


def time_travel_end(start: datetime, retention_days: int) -> datetime:
    """When data that left the current state at ``start`` leaves time travel (SPEC R30)."""
    return start + timedelta(days=retention_days)


def in_time_travel(start: datetime, retention_days: int, now: datetime) -> bool:
    """True while ``now`` is before the end of the window; retention 0 is never in it (R8)."""
    return now < time_travel_end(start, retention_days)


def earliest_point(now: datetime, retention_days: int) -> datetime:
    """The oldest instant a time-travel point may name (SPEC R17)."""
    return now - timedelta(days=retention_days)


def undroppable(dropped_on: datetime, retention_at_drop: int, now: datetime) -> bool:
    """A dropped object can be undropped while it is in time travel (SPEC R8, R10, R21)."""
    return retention_at_drop > 0 and in_time_travel(dropped_on, retention_at_drop, now)


def released(
    location: str | None, dropped_on: datetime | None, retention_at_drop: int, now: datetime
) -> bool:
    """A dropped external table whose time travel is over: Rewind no longer governs its
    location (SPEC R41): it moves none of its files, follows none of its commits, and the
    location may be registered again. Its files stay the team's, where they are."""
    return (
        location is not None
        and dropped_on is not None
        and not in_time_travel(dropped_on, retention_at_drop, now)
    )


# -- SPEC R42: other engines' VACUUM and log clean-up cannot cut into time travel ---------
# Delta's own defaults, which Rewind never lowers (VACUUM 7 days, log clean-up 30 days).
DELETED_FILE_RETENTION = "delta.deletedFileRetentionDuration"
DELTA_DEFAULT_DAYS = {DELETED_FILE_RETENTION: 7, "delta.logRetentionDuration": 30}
# A file that left time travel waits for the next nightly run to be moved out; the
# properties cover a week of late or failed nights on top of the retention.
LATE_NIGHTS_DAYS = 7
_UNIT_DAYS = {"week": 7.0, "day": 1.0, "hour": 1 / 24, "minute": 1 / 1440, "second": 1 / 86400}


def interval_days(text: str | None) -> float | None:
    """The days of a Delta interval property (``interval 30 days``, ``1 week``)."""
    found = re.fullmatch(
        r"\s*(?:interval\s+)?(\d+)\s*(week|day|hour|minute|second)s?\s*", text or "", re.I
    )
    return int(found[1]) * _UNIT_DAYS[found[2].lower()] if found else None


def guarded_properties(
    retention_days: int, configuration: dict[str, str], *, clone_held: bool = False
) -> dict[str, str]:
    """The properties to raise so that a Delta-conformant VACUUM or log clean-up elsewhere
    keeps every file and commit still in time travel, plus a week (the nightly run that
    moves a file out of time travel may be that late).

    ``clone_held``: a clone references the table's objects where they are (SPEC R24, R30,
    R47), so a VACUUM must delete none of its removed files, however old: the deleted-file
    retention is then the one Rewind's own tables have (KEEP_FOREVER_DAYS). The clone needs
    only the data files, not the table's log, so the log retention stays as time travel
    needs it.
    Never lowers a value (the team's own, or Delta's default): empty when nothing is due."""
    needed = dict.fromkeys(DELTA_DEFAULT_DAYS, retention_days + LATE_NIGHTS_DAYS)
    if clone_held:
        needed[DELETED_FILE_RETENTION] = KEEP_FOREVER_DAYS
    raised = {}
    for key, default in DELTA_DEFAULT_DAYS.items():
        have = interval_days(configuration.get(key))
        if (default if have is None else have) < needed[key]:
            raised[key] = f"interval {needed[key]} days"
    return raised
