"""When a data file leaves time travel, and what happens then (SPEC R8–R13, R30, R33).

Pure functions over plain facts, so the rules can be tested exhaustively.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

# The file states are named in rewind.constants (the catalog counts them too) and used as
# rules.LIVE, rules.FAILSAFE, ... by the steps.
from rewind.constants import DELETING as DELETING
from rewind.constants import FAILSAFE as FAILSAFE
from rewind.constants import FAILSAFE_DAYS, IN_FAILSAFE, LIVE, REMOVED, RETAINED
from rewind.constants import MOVING as MOVING
from rewind.constants import PURGING as PURGING

ACTIVE_BYTES = "ACTIVE_BYTES"
TIME_TRAVEL_BYTES = "TIME_TRAVEL_BYTES"
FAILSAFE_BYTES = "FAILSAFE_BYTES"
RETAINED_FOR_CLONE_BYTES = "RETAINED_FOR_CLONE_BYTES"


@dataclass(frozen=True)
class TableFacts:
    """What the rules need to know about a table incarnation.

    ``retention_days`` is the effective retention now, or the one frozen at drop for a
    dropped table (SPEC R10, R11).
    """

    transient: bool
    retention_days: int
    dropped_on: datetime | None = None


def time_travel_end(table: TableFacts, removed_at: datetime | None) -> datetime | None:
    """When a file leaves time travel (SPEC R30); None while it is current data.

    A file removed by a commit leaves at ``removed_at + retention``; every file of a
    dropped table leaves at ``dropped_on + retention at drop``, whichever comes first.
    """
    ends = [
        moment + timedelta(days=table.retention_days)
        for moment in (removed_at, table.dropped_on)
        if moment is not None
    ]
    return min(ends) if ends else None


@dataclass(frozen=True)
class Expiry:
    """A file that has left time travel: where it goes and until when."""

    left_time_travel_at: datetime
    to_failsafe: bool  # permanent data; transient data is deleted (SPEC R12)

    @property
    def purge_at(self) -> datetime:
        """Fail-safe lasts exactly 7 days from leaving time travel (SPEC R12)."""
        return self.left_time_travel_at + timedelta(days=FAILSAFE_DAYS)


def expiry(
    table: TableFacts,
    removed_at: datetime | None,
    now: datetime,
    *,
    pinned: bool,
    planned_end: datetime | None = None,
    governed_since: datetime | None = None,
) -> Expiry | None:
    """The expiry of a file at ``now``, or None while it stays where it is.

    Nothing is moved early (SPEC R31): a file leaves only once ``now`` has reached the
    end of its window, and never while a read pins its version (SPEC R19).

    ``planned_end`` is the end the previous run computed for the file's window (None:
    no earlier run knew it). A window that has shrunk since — retention lowered (SPEC
    R9), a drop with a container's shorter retention (R11) — was still open when it
    shrank: the file leaves time travel at this run (R9: "at the next lifecycle run"),
    or at the planned end if that came first, never at the new end in the past, which
    would cut its 7 days of fail-safe short or purge it at once (R12).

    ``governed_since`` is when an external table was registered (SPEC R41): a file it
    removed before, already past its window, leaves time travel at the registration, so
    it still gets its full 7 days of fail-safe.
    """
    end = time_travel_end(table, removed_at)
    if end is None or now < end or pinned:
        return None
    if planned_end is not None and planned_end > end:
        end = min(planned_end, now)
    if governed_since is not None and governed_since > end:
        end = min(governed_since, now)
    return Expiry(end, to_failsafe=not table.transient)


def purge_due(purge_at: datetime, now: datetime) -> bool:
    return now >= purge_at


def metric_of(state: str, *, table_live: bool) -> str | None:
    """The byte column a file of its owner counts in (SPEC R33), None once gone."""
    if state == LIVE:
        return ACTIVE_BYTES if table_live else TIME_TRAVEL_BYTES
    if state == REMOVED:
        return TIME_TRAVEL_BYTES
    if state in IN_FAILSAFE:
        return FAILSAFE_BYTES
    if state == RETAINED:
        return RETAINED_FOR_CLONE_BYTES
    return None  # DELETING: transient data on its way out
