"""Retention rules as pure functions: validation, inheritance, windows (SPEC R5-R11).

Expected values are written from the SPEC text (literal 0..90 and 0..1 ranges, the
table → schema → database → account chain), not from ``rewind.constants``, so a
drifting constant is caught here.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewind.errors import InvalidRetention
from rewind.retention import (
    earliest_point,
    effective_retention,
    guarded_properties,
    in_time_travel,
    inherited_retention,
    time_travel_end,
    undroppable,
    validate_retention,
)

pytestmark = pytest.mark.unit

RETENTION = "DATA_RETENTION_TIME_IN_DAYS"
MIN_RETENTION = "MIN_DATA_RETENTION_TIME_IN_DAYS"

# SPEC R5, R7: the allowed upper bound per (param, transient).
UPPER = {
    (RETENTION, False): 90,
    (RETENTION, True): 1,
    (MIN_RETENTION, False): 90,
    (MIN_RETENTION, True): 90,  # the minimum is an account setting: transient is irrelevant
}
VALIDATION_CASES = [
    (value, transient, param) for param, transient in UPPER for value in range(-5, 101)
]
ACCEPTED = [case for case in VALIDATION_CASES if 0 <= case[0] <= UPPER[case[2], case[1]]]
REJECTED = [case for case in VALIDATION_CASES if case not in ACCEPTED]
KINDS = pytest.mark.parametrize("transient", [False, True], ids=["permanent", "transient"])
BOTH_PARAMS = pytest.mark.parametrize("param", [RETENTION, MIN_RETENTION])

START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)

# Hypothesis building blocks. Instants stay far from datetime.min/max so that
# +/- 90 days never overflows; offsets other than UTC check aware comparisons.
days = st.integers(min_value=0, max_value=90)
explicit = st.none() | days
parents = st.lists(explicit, max_size=3)
chains = st.builds(lambda above, account: [*above, account], parents, days)
instants = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=2)), timezone(-timedelta(hours=5, minutes=30))]
    ),
)


def spec_effective(chain: list[int | None], *, account_min: int, transient: bool) -> int:
    """SPEC R5-R7 read literally: first explicit value up the chain, then the rule."""
    stored = next(value for value in chain if value is not None)  # R6
    if transient:
        return min(stored, 1)  # R5: transient objects allow 0..1; R7: no minimum
    return max(stored, account_min)  # R7


# --- validate_retention (SPEC R5, R7) -------------------------------------------------


@pytest.mark.parametrize(("value", "transient", "param"), ACCEPTED)
def test_validate_retention_accepts_spec_range_r5_r7(value, transient, param):
    result = validate_retention(value, transient=transient, param=param)
    assert result == value
    assert type(result) is int


@pytest.mark.parametrize(("value", "transient", "param"), REJECTED)
def test_validate_retention_rejects_outside_spec_range_r5_r7(value, transient, param):
    with pytest.raises(InvalidRetention) as raised:
        validate_retention(value, transient=transient, param=param)
    assert raised.value.code == "INVALID_RETENTION"
    # R39-style clear message: names the parameter, the value and the allowed range.
    assert param in raised.value.message
    assert str(value) in raised.value.message
    assert f"0..{UPPER[param, transient]}" in raised.value.message


@KINDS
@BOTH_PARAMS
@pytest.mark.parametrize(
    "value",
    [True, False, 1.0, 0.5, -0.0, "1", "", None, [1], Decimal(1), 10**20, -(10**20)],
    ids=repr,
)
def test_validate_retention_rejects_non_integers_and_huge_values_r5_r7(value, transient, param):
    # bool is an int subclass in Python but TRUE is not a number of days.
    with pytest.raises(InvalidRetention) as raised:
        validate_retention(value, transient=transient, param=param)
    assert raised.value.code == "INVALID_RETENTION"
    assert str(raised.value).startswith("INVALID_RETENTION: ")


@pytest.mark.parametrize(("value", "accepted"), [(1, True), (2, False)])
def test_validate_retention_default_param_is_data_retention_r5(value, accepted):
    # Without ``param`` the transient 0..1 range of DATA_RETENTION_TIME_IN_DAYS applies.
    if accepted:
        assert validate_retention(value, transient=True) == value
    else:
        with pytest.raises(InvalidRetention, match=RETENTION):
            validate_retention(value, transient=True)


# --- inherited_retention / effective_retention (SPEC R5-R7) ---------------------------


@pytest.mark.parametrize(
    ("chain", "expected"),
    [
        pytest.param([None, None, None, 1], 1, id="account-default"),
        pytest.param([None, 5, 90, 1], 5, id="schema-wins"),
        pytest.param([0, 5, 90, 1], 0, id="explicit-zero-is-a-value"),
        pytest.param([None, None, 0, 1], 0, id="database-zero"),
        pytest.param([7], 7, id="account-only"),
    ],
)
def test_inherited_retention_first_explicit_value_up_the_chain_r6(chain, expected):
    assert inherited_retention(chain) == expected


def test_inherited_retention_without_account_value_is_a_programming_error_r6():
    with pytest.raises(ValueError, match="account retention"):
        inherited_retention([None, None, None])


@pytest.mark.parametrize(
    ("chain", "account_min", "transient", "expected"),
    [
        pytest.param([None, None, None, 1], 0, False, 1, id="R5-account-default-1"),
        pytest.param([None, 5, 90, 1], 0, False, 5, id="R6-schema-overrides-database"),
        pytest.param([0, 5, 90, 1], 0, False, 0, id="R8-explicit-zero-kept"),
        pytest.param([0, 5, 90, 1], 7, False, 7, id="R7-minimum-lifts-zero"),
        pytest.param([30, None, None, 1], 7, False, 30, id="R7-max-not-override"),
        pytest.param([None, None, None, 90], 0, True, 1, id="R5-transient-capped-at-1"),
        pytest.param([0, None, None, 1], 90, True, 0, id="R7-transient-ignores-minimum"),
        pytest.param([None, None, None, 1], 45, True, 1, id="R7-transient-inherits-no-min"),
    ],
)
def test_effective_retention_scenarios_r5_r6_r7(chain, account_min, transient, expected):
    assert effective_retention(chain, account_min=account_min, transient=transient) == expected


def test_minimum_never_changes_the_stored_value_r7():
    chain = [None, 3, None, 1]
    assert effective_retention(chain, account_min=10, transient=False) == 10
    assert chain == [None, 3, None, 1]
    assert inherited_retention(chain) == 3


@KINDS
@pytest.mark.parametrize("account_min", [0, 1, 2, 7, 30, 89, 90])
@pytest.mark.parametrize("account", [0, 1, 2, 7, 30, 89, 90])
def test_effective_retention_every_small_chain_r5_r6_r7(account, account_min, transient):
    """All 5**3 table/schema/database settings, and every object level on each chain."""
    wrong = []
    for levels in itertools.product([None, 0, 1, 5, 90], repeat=3):
        table_chain = [*levels, account]
        # table, schema, database and account objects read the chain from their level.
        for chain in (table_chain[level:] for level in range(len(table_chain))):
            got = effective_retention(chain, account_min=account_min, transient=transient)
            want = spec_effective(chain, account_min=account_min, transient=transient)
            if got != want:
                wrong.append((chain, got, want))
    assert wrong == []


# --- properties of effective_retention (SPEC R5-R7) -----------------------------------


@given(chain=chains, account_min=days)
def test_permanent_never_below_account_minimum_r7(chain, account_min):
    result = effective_retention(chain, account_min=account_min, transient=False)
    assert result >= account_min
    assert result == max(inherited_retention(chain), account_min)


@given(chain=chains, account_min=days, other_min=days)
def test_transient_at_most_one_day_and_ignores_minimum_r5_r7(chain, account_min, other_min):
    result = effective_retention(chain, account_min=account_min, transient=True)
    assert result <= 1
    assert result == min(inherited_retention(chain), 1)
    assert result == effective_retention(chain, account_min=other_min, transient=True)


@given(
    unset=st.integers(min_value=0, max_value=3),
    first=days,
    above=parents,
    account=days,
    new_above=parents,
    new_account=days,
    account_min=days,
    transient=st.booleans(),
)
def test_values_above_first_explicit_value_never_matter_r6(
    unset, first, above, account, new_above, new_account, account_min, transient
):
    own = [*[None] * unset, first]
    before = effective_retention(
        [*own, *above, account], account_min=account_min, transient=transient
    )
    after = effective_retention(
        [*own, *new_above, new_account], account_min=account_min, transient=transient
    )
    assert before == after


@given(
    unset=st.integers(min_value=1, max_value=3),
    parent_chain=chains,
    account_min=days,
    transient=st.booleans(),
)
def test_descendant_without_explicit_value_follows_its_parent_r6(
    unset, parent_chain, account_min, transient
):
    child = effective_retention(
        [*[None] * unset, *parent_chain], account_min=account_min, transient=transient
    )
    parent = effective_retention(parent_chain, account_min=account_min, transient=transient)
    assert child == parent


@given(chain=chains, low=days, high=days, transient=st.booleans())
def test_raising_minimum_never_lowers_effective_retention_r7(chain, low, high, transient):
    low, high = sorted((low, high))
    assert effective_retention(chain, account_min=low, transient=transient) <= (
        effective_retention(chain, account_min=high, transient=transient)
    )


# --- windows: in_time_travel / undroppable / time_travel_end (SPEC R8-R10) ------------


@given(start=instants, retention=days, now=instants)
def test_in_time_travel_is_now_before_window_end_r8_r30(start, retention, now):
    end = start + timedelta(days=retention)
    assert time_travel_end(start, retention) == end
    assert in_time_travel(start, retention, now) is (now < end)


@given(start=instants, elapsed=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=400)))
def test_zero_retention_is_never_in_time_travel_r8(start, elapsed):
    assert in_time_travel(start, 0, start + elapsed) is False


@given(dropped_on=instants, now=instants)
def test_zero_retention_can_never_be_undropped_r8(dropped_on, now):
    assert undroppable(dropped_on, 0, now) is False


@given(dropped_on=instants, retention=st.integers(min_value=1, max_value=90), now=instants)
def test_undroppable_exactly_while_in_time_travel_r8_r10(dropped_on, retention, now):
    assert undroppable(dropped_on, retention, now) is in_time_travel(dropped_on, retention, now)


@given(start=instants, low=days, high=days, now=instants)
def test_window_monotonic_in_retention_r9(start, low, high, now):
    low, high = sorted((low, high))
    assert time_travel_end(start, low) <= time_travel_end(start, high)
    # Raising retention keeps what is still in time travel; lowering only removes.
    if in_time_travel(start, low, now):
        assert in_time_travel(start, high, now)
    if not in_time_travel(start, high, now):
        assert not in_time_travel(start, low, now)


@pytest.mark.parametrize("retention", [1, 5, 90])
@pytest.mark.parametrize(
    ("offset", "inside"),
    [(-HOUR, True), (timedelta(0), False), (HOUR, False)],
    ids=["1h-before-end", "exactly-at-end", "1h-after-end"],
)
def test_window_end_boundary_r8_r9_r10(retention, offset, inside):
    now = START + timedelta(days=retention) + offset
    assert in_time_travel(START, retention, now) is inside
    assert undroppable(START, retention, now) is inside


@pytest.mark.parametrize(
    "offset", [timedelta(0), HOUR, timedelta(days=1)], ids=["at-start", "1h-after", "1d-after"]
)
def test_zero_retention_boundary_r8(offset):
    now = START + offset
    assert in_time_travel(START, 0, now) is False
    assert undroppable(START, 0, now) is False


def test_zero_retention_not_undroppable_even_before_drop_time_r8():
    assert undroppable(START, 0, START - HOUR) is False


def test_window_end_compares_instants_not_wall_clock_text_r8():
    # The same instant as START + 1 day, written at +02:00, is exactly at the end.
    at_end = (START + timedelta(days=1)).astimezone(timezone(timedelta(hours=2)))
    assert in_time_travel(START, 1, at_end) is False
    assert in_time_travel(START, 1, at_end - timedelta(microseconds=1)) is True


@given(now=instants, retention=days)
def test_earliest_point_is_the_window_start_seen_from_now_r17(now, retention):
    oldest = earliest_point(now, retention)
    assert oldest == now - timedelta(days=retention)
    # Data that left at the earliest point is exactly at its window end: out (R8).
    assert in_time_travel(oldest, retention, now) is False


VACUUM = "delta.deletedFileRetentionDuration"
LOG = "delta.logRetentionDuration"


@pytest.mark.parametrize(
    ("retention", "configuration", "cloned", "raised"),
    [
        (0, {}, False, {}),  # Delta's 7 and 30 days cover a week of late nights
        (1, {}, False, {VACUUM: "interval 8 days"}),
        (30, {}, False, {VACUUM: "interval 37 days", LOG: "interval 37 days"}),
        (1, {}, True, {VACUUM: "interval 36500 days"}),  # the clone needs no log
        (30, {}, True, {VACUUM: "interval 36500 days", LOG: "interval 37 days"}),
        (1, {VACUUM: "interval 40 days"}, True, {VACUUM: "interval 36500 days"}),
        (1, {VACUUM: "interval 36500 days"}, True, {}),
        (1, {VACUUM: "interval 5300 weeks"}, True, {}),  # the team's own, longer: kept
        (1, {VACUUM: "interval 1 days"}, False, {VACUUM: "interval 8 days"}),
    ],
)
def test_guarded_properties_cover_time_travel_and_a_clones_files_r42_r47(
    retention, configuration, cloned, raised
):
    """SPEC R42: never below time travel plus a week; SPEC R24, R47: while a clone references
    the table's objects, a VACUUM keeps every removed file (Rewind's own tables' 36500 days);
    never lowers a value."""
    assert guarded_properties(retention, configuration, clone_held=cloned) == raised
