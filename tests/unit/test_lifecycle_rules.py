"""The lifecycle's pure rules: when a file leaves time travel, where it goes, how long
fail-safe holds it and which byte column counts it (SPEC R8–R13, R19, R30, R31, R33).

Expected values come from the SPEC text (7 days of fail-safe, 0..90 days of retention),
not from ``rewind.constants``, so a drifting constant is caught here.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewind.lifecycle import rules
from rewind.lifecycle.rules import Expiry, TableFacts, expiry, metric_of, purge_due, time_travel_end

pytestmark = pytest.mark.unit

FAILSAFE = timedelta(days=7)  # SPEC R12: exactly 7 days, not configurable
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
T0 = datetime(2026, 3, 2, 12, tzinfo=UTC)

instants = st.datetimes(
    min_value=datetime(2026, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC)
)
retentions = st.integers(min_value=0, max_value=90)  # SPEC R5
gaps = st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=200))


@st.composite
def tables(draw: st.DrawFn) -> TableFacts:
    transient = draw(st.booleans())
    days = draw(st.integers(0, 1) if transient else retentions)  # SPEC R5: transient 0..1
    return TableFacts(transient, days, draw(st.none() | instants))


def leaves(table: TableFacts, removed_at: datetime | None, now: datetime) -> Expiry | None:
    return expiry(table, removed_at, now, pinned=False)


# -- the window (SPEC R30) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("removed", "dropped", "days", "end"),
    [
        (None, None, 3, None),  # current data of a live table never leaves
        (T0, None, 3, T0 + 3 * DAY),  # removed by a commit
        (None, T0, 3, T0 + 3 * DAY),  # current data of a dropped table
        (T0, T0 + DAY, 3, T0 + 3 * DAY),  # removed, then dropped: the earlier end wins
        (T0 + DAY, T0, 3, T0 + 3 * DAY),  # a log may show a removal after the drop
        (T0, None, 0, T0),  # SPEC R8: retention 0 ends the window at the change
        (None, T0, 0, T0),
    ],
)
def test_time_travel_end(
    removed: datetime | None, dropped: datetime | None, days: int, end: datetime | None
) -> None:
    """SPEC R30: removed_at + retention, dropped_on + retention at drop, whichever first."""
    assert time_travel_end(TableFacts(False, days, dropped), removed) == end


# -- leaving time travel at the boundary (SPEC R8, R12, R30, R31) ----------------------------


@pytest.mark.parametrize(
    ("transient", "days", "removed", "dropped"),
    [
        (transient, days, removed, dropped)
        for transient, days in itertools.chain(
            itertools.product([False], range(91)), itertools.product([True], range(2))
        )
        for removed, dropped in [(T0, None), (None, T0), (T0, T0 + 5 * HOUR)]
    ],
)
def test_every_retention_one_hour_either_side_of_the_end(
    transient: bool, days: int, removed: datetime | None, dropped: datetime | None
) -> None:
    """Exhaustive over SPEC R5's range: a file stays until the hour before its window
    ends and has left the hour after; permanent data goes to fail-safe for exactly 7
    days from the end, transient data is deleted (SPEC R8, R12, R30)."""
    table = TableFacts(transient, days, dropped)
    end = T0 + days * DAY
    assert leaves(table, removed, end - HOUR) is None
    assert leaves(table, removed, end) == Expiry(end, to_failsafe=not transient)
    after = leaves(table, removed, end + HOUR)
    assert after == Expiry(end, to_failsafe=not transient)
    assert after.purge_at == end + FAILSAFE


def test_current_data_of_a_live_table_never_leaves() -> None:
    """SPEC R30: only a commit's removal or a drop starts a window."""
    for transient, days in [(False, 0), (False, 90), (True, 0)]:
        assert leaves(TableFacts(transient, days), None, T0 + 10_000 * DAY) is None


def test_retention_zero_leaves_at_the_next_run() -> None:
    """SPEC R8: retention 0 switches time travel off: any run after the change moves it."""
    assert leaves(TableFacts(False, 0), T0, T0 + timedelta(seconds=1)) == Expiry(T0, True)
    assert leaves(TableFacts(True, 0), T0, T0 + timedelta(seconds=1)) == Expiry(T0, False)
    assert leaves(TableFacts(False, 0, dropped_on=T0), None, T0) == Expiry(T0, True)


# -- properties ---------------------------------------------------------------------------


@given(tables(), st.none() | instants, instants, gaps)
def test_a_late_run_changes_neither_the_window_nor_the_purge_date(
    table: TableFacts, removed: datetime | None, now: datetime, late: timedelta
) -> None:
    """SPEC R12: fail-safe is counted from the end of the window, not from when the job
    ran: a run ``late`` after another decides the same dates."""
    first, later = leaves(table, removed, now), leaves(table, removed, now + late)
    if first is not None:
        assert later == first
        assert first.purge_at - first.left_time_travel_at == FAILSAFE


@given(tables(), st.none() | instants, instants)
def test_nothing_leaves_early(table: TableFacts, removed: datetime | None, now: datetime) -> None:
    """SPEC R31: a file leaves only once ``now`` has reached the end of its window, and
    the end is never before the change that started it (SPEC R30)."""
    decision = leaves(table, removed, now)
    end = time_travel_end(table, removed)
    assert (decision is not None) == (end is not None and now >= end)
    if decision is not None:
        assert decision.left_time_travel_at == end <= now
        starts = [m for m in (removed, table.dropped_on) if m is not None]
        assert end >= min(starts)
        assert decision.to_failsafe is not table.transient  # SPEC R12


@given(tables(), instants, instants, st.integers(0, 90))
def test_a_longer_window_never_lets_a_file_leave_sooner(
    table: TableFacts, removed: datetime, now: datetime, longer_by: int
) -> None:
    """SPEC R9: raising retention keeps data longer; lowering only ever lets it go sooner."""
    longer = TableFacts(table.transient, table.retention_days + longer_by, table.dropped_on)
    if leaves(longer, removed, now) is not None:
        assert leaves(table, removed, now) is not None


@given(tables(), instants, instants, gaps, gaps)
def test_a_window_lowered_since_the_last_run_closes_at_this_run(
    table: TableFacts, removed: datetime, now: datetime, shorter_by: timedelta, late: timedelta
) -> None:
    """SPEC R9, R12, R31: the last run planned the window to end at ``planned``; it has
    shrunk since (lower retention, a container's drop). The file leaves at this run or
    at the planned end, whichever is first — never at the new end in the past, which
    would cut its 7 days of fail-safe short — and a late run does not move the date."""
    end = time_travel_end(table, removed)
    planned = end + shorter_by
    decision = expiry(table, removed, now, pinned=False, planned_end=planned)
    if now < end:
        assert decision is None
        return
    assert decision is not None
    assert decision.left_time_travel_at == min(planned, now) >= end
    assert decision.purge_at == decision.left_time_travel_at + FAILSAFE
    if planned <= now:  # a window that closed by its own plan keeps its date (R12)
        later = expiry(table, removed, now + late, pinned=False, planned_end=planned)
        assert later == decision


@given(tables(), instants, instants, gaps)
def test_a_window_raised_or_kept_since_the_last_run_ends_where_it_ends(
    table: TableFacts, removed: datetime, now: datetime, longer_by: timedelta
) -> None:
    """SPEC R9: raised (or unchanged) retention: the new end is the end."""
    end = time_travel_end(table, removed)
    planned = end - longer_by
    decision = expiry(table, removed, now, pinned=False, planned_end=planned)
    assert decision == leaves(table, removed, now)


def test_lowering_a_long_window_never_skips_failsafe() -> None:
    """SPEC R9, R12: 10 days, changed on day 0, lowered to 1 day on day 8: the file was in
    time travel until day 8; it leaves at the run after (day 8, 13:00), purged 7 days on."""
    run = T0 + 8 * DAY + HOUR
    decision = expiry(TableFacts(False, 1), T0, run, pinned=False, planned_end=T0 + 10 * DAY)
    assert decision == Expiry(run, to_failsafe=True)
    assert not purge_due(decision.purge_at, run + 7 * DAY - HOUR)


@given(tables(), st.none() | instants, instants)
def test_a_pin_holds_any_file(table: TableFacts, removed: datetime | None, now: datetime) -> None:
    """SPEC R19: the lifecycle never moves the files of a pinned version."""
    assert expiry(table, removed, now, pinned=True) is None


@given(instants, st.timedeltas(min_value=-30 * DAY, max_value=30 * DAY))
def test_purge_is_due_from_the_purge_date_on(purge_at: datetime, offset: timedelta) -> None:
    """SPEC R12: after 7 days it is purged for good, and not one instant before."""
    assert purge_due(purge_at, purge_at + offset) is (offset >= timedelta(0))


# -- storage metrics (SPEC R33) -------------------------------------------------------------

BYTE_COLUMNS = {
    "ACTIVE_BYTES",
    "TIME_TRAVEL_BYTES",
    "FAILSAFE_BYTES",
    "RETAINED_FOR_CLONE_BYTES",
}


@pytest.mark.parametrize(
    ("state", "table_live", "column"),
    [
        ("LIVE", True, "ACTIVE_BYTES"),
        ("LIVE", False, "TIME_TRAVEL_BYTES"),  # a dropped table's data is in time travel
        ("REMOVED", True, "TIME_TRAVEL_BYTES"),
        ("REMOVED", False, "TIME_TRAVEL_BYTES"),
        ("MOVING", True, "FAILSAFE_BYTES"),  # already decided: counted where it is going
        ("MOVING", False, "FAILSAFE_BYTES"),
        ("FAILSAFE", True, "FAILSAFE_BYTES"),
        ("FAILSAFE", False, "FAILSAFE_BYTES"),
        ("PURGING", True, "FAILSAFE_BYTES"),  # still stored until the purge has run
        ("PURGING", False, "FAILSAFE_BYTES"),
        ("RETAINED", True, "RETAINED_FOR_CLONE_BYTES"),  # SPEC R30
        ("RETAINED", False, "RETAINED_FOR_CLONE_BYTES"),
        # Transient data on its way out: the expire step deletes it before metrics run.
        ("DELETING", True, None),
        ("DELETING", False, None),
    ],
)
def test_each_state_counts_in_exactly_one_column(
    state: str, table_live: bool, column: str | None
) -> None:
    """SPEC R33: every stored byte of a table is counted in exactly one byte column."""
    assert metric_of(state, table_live=table_live) == column


def test_the_states_and_columns_are_the_documented_ones() -> None:
    """Every state of ``file_states`` is mapped above, and only SPEC R33's columns exist."""
    states = {rules.LIVE, rules.REMOVED, rules.MOVING, rules.FAILSAFE}
    states |= {rules.PURGING, rules.DELETING, rules.RETAINED}
    assert states == {"LIVE", "REMOVED", "MOVING", "FAILSAFE", "PURGING", "DELETING", "RETAINED"}
    columns = {
        rules.ACTIVE_BYTES,
        rules.TIME_TRAVEL_BYTES,
        rules.FAILSAFE_BYTES,
        rules.RETAINED_FOR_CLONE_BYTES,
    }
    assert columns == BYTE_COLUMNS
    for state, live in itertools.product(states, [True, False]):
        assert metric_of(state, table_live=live) in BYTE_COLUMNS | {None}
