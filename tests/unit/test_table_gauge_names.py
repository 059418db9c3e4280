"""Issue 28 item 7, SPEC R33, R35: each table's storage figures as Airflow gauge names
that plain StatsD can chart (the object in the name) and tags for the backends that take
them. The gauges reaching a real StatsD socket: tests/dags/test_storage_gauges.py and
tests/dags/test_nightly_dag.py."""

from __future__ import annotations

import string
from typing import Any

import pytest

from rewind.operations.nightly import PART_LENGTH, metric_part, table_figures

pytestmark = pytest.mark.unit

# Airflow's StatsD logger takes these in a stat name (validators.ALLOWED_CHARACTERS).
STAT_CHARACTERS = set(string.ascii_letters + string.digits + "_.-/")
FIGURES = ["active_bytes", "time_travel_bytes", "failsafe_bytes", "retained_for_clone_bytes"]


def row(database: str, schema: str, table: str, **figures: int) -> dict[str, Any]:
    columns = ["ACTIVE_BYTES", "TIME_TRAVEL_BYTES", "FAILSAFE_BYTES", "RETAINED_FOR_CLONE_BYTES"]
    return {
        "TABLE_CATALOG": database,
        "TABLE_SCHEMA": schema,
        "TABLE_NAME": table,
        **{c: figures.get(c.lower(), 0) for c in columns},
    }


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("ORDERS", "ORDERS"),
        ("order_lines_2026", "order_lines_2026"),
        ("my table", "my-20table"),
        ("A.B", "A-2EB"),
        ("A-B", "A-2DB"),
        ("A-2DB", "A-2D2DB"),
        ("PAY$", "PAY-24"),
        ("Zürich", "Z-C3-BCrich"),
    ],
)
def test_a_name_part_keeps_letters_digits_and_underscores(name: str, part: str) -> None:
    assert metric_part(name) == part


def test_name_parts_are_distinct_valid_and_short() -> None:
    """Different names never share a part (no two tables on one line of a chart); every
    part is a valid stat name level (no dot: the levels of Graphite's tree) of at most
    PART_LENGTH characters, a longer one ending in a hash of the whole name."""
    names = [
        "A B",
        "A_B",
        "A-20B",
        "a b",
        "A.B",
        "x" * 40,
        "x" * 41,
        "x" * 39 + "y",
        "名前",
        "",
        "-",
        "-2D",
    ]
    parts = [metric_part(n) for n in names]
    assert len(set(parts)) == len(names), parts
    for part in parts:
        assert set(part) <= STAT_CHARACTERS - {".", "/"}
        assert len(part) <= PART_LENGTH
    assert metric_part("x" * 40).startswith("x" * (PART_LENGTH - 10) + "-h")
    assert metric_part("x" * 40) == metric_part("x" * 40)  # stable from night to night


def test_table_figures_name_tags_and_values() -> None:
    gauges = table_figures(
        "rewind.storage",
        [row("SHOP", "PUBLIC", "ORDERS", active_bytes=10, failsafe_bytes=7)],
    )
    tags = {"database": "SHOP", "schema": "PUBLIC", "table": "ORDERS"}
    assert [(g.name, g.value, g.tags) for g in gauges] == [
        ("rewind.storage.by_table.SHOP.PUBLIC.ORDERS.active_bytes", 10.0, tags),
        ("rewind.storage.by_table.SHOP.PUBLIC.ORDERS.time_travel_bytes", 0.0, tags),
        ("rewind.storage.by_table.SHOP.PUBLIC.ORDERS.failsafe_bytes", 7.0, tags),
        ("rewind.storage.by_table.SHOP.PUBLIC.ORDERS.retained_for_clone_bytes", 0.0, tags),
    ]


def test_incarnations_of_one_name_add_up() -> None:
    """A dropped ORDERS and the ORDERS created since are two rows of the view (two IDs)
    and one series of gauges, their sum; other tables keep their own."""
    gauges = table_figures(
        "p",
        [
            row("SHOP", "PUBLIC", "ORDERS", failsafe_bytes=7),
            row("SHOP", "PUBLIC", "ORDERS", active_bytes=3, failsafe_bytes=5),
            row("SHOP", "PUBLIC", "orders", failsafe_bytes=1),
        ],
    )
    values = {g.name: g.value for g in gauges}
    assert len(values) == len(gauges) == 8
    assert values["p.by_table.SHOP.PUBLIC.ORDERS.failsafe_bytes"] == 12
    assert values["p.by_table.SHOP.PUBLIC.ORDERS.active_bytes"] == 3
    assert values["p.by_table.SHOP.PUBLIC.orders.failsafe_bytes"] == 1


def test_the_longest_names_fit_airflow_s_limits() -> None:
    """Three parts at their longest and the longest figure: within the 250 characters of
    Airflow's StatsD logger also with InfluxDB-style tags appended to the name
    (``statsd_influxdb_enabled``), and within OpenTelemetry's 255 with the prefix."""
    long = "ü" * 300
    (gauge,) = [
        g
        for g in table_figures("rewind.storage", [row(long, long + "s", long + "t")])
        if g.name.endswith("retained_for_clone_bytes")
    ]
    influx = gauge.name + "".join(f",{k}={v}" for k, v in gauge.tags.items())
    assert len(influx) <= 250 and len("airflow." + gauge.name) <= 255
    assert len(set(gauge.tags.values())) == 3


def test_a_name_gone_since_the_previous_run_falls_to_0() -> None:
    """A table of the previous run's rows without a row now (purged) gets its four
    figures at 0 (a StatsD daemon would repeat its last value); one that is still there
    keeps today's figures."""
    before = [
        row("SHOP", "PUBLIC", "OLD", failsafe_bytes=9),
        row("SHOP", "PUBLIC", "T", active_bytes=1),
    ]
    gauges = table_figures("p", [row("SHOP", "PUBLIC", "T", active_bytes=2)], before)
    values = {g.name: g.value for g in gauges}
    assert values == {
        **{f"p.by_table.SHOP.PUBLIC.OLD.{f}": 0 for f in FIGURES},
        **{f"p.by_table.SHOP.PUBLIC.T.{f}": 0 for f in FIGURES if f != "active_bytes"},
        "p.by_table.SHOP.PUBLIC.T.active_bytes": 2,
    }
