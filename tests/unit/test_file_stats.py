"""Delta statistics of the files Rewind adds to a clustered table (SPEC R40): bounds of
the clustering columns from the file's Parquet footer, never narrower than its values."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rewind.sql.frames import _column_stats

pytestmark = pytest.mark.unit


def test_bounds_hold_every_value_and_a_timestamp_is_rounded_out_to_the_millisecond(
    tmp_path: Path,
) -> None:
    table = pa.table(
        {
            "ID": pa.array([3, None, -7], pa.int64()),
            "AT": pa.array(
                [
                    datetime(2026, 5, 5, 5, 5, 5, 555500, UTC),
                    None,
                    datetime(2026, 1, 1, tzinfo=UTC),
                ],
                pa.timestamp("us", "UTC"),
            ),
            "NAME": ["b", "a" * 40, None],
            "DAY": [date(2026, 1, 2), None, None],
            "AMOUNT": pa.array([Decimal("1.50"), None, Decimal("-2.25")], pa.decimal128(10, 2)),
            "SCORE": [float("nan"), 1.0, None],
            "OTHER": [1, 2, 3],
        }
    )
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=2)
    footer = pq.ParquetFile(tmp_path / "f.parquet").metadata
    stats = json.loads(
        _column_stats(footer, ["ID", "AT", "NAME", "DAY", "AMOUNT", "SCORE", "GONE"])
    )
    assert stats["numRecords"] == 3 and stats["tightBounds"] is False
    assert stats["minValues"] == {
        "ID": -7,
        "AT": "2026-01-01T00:00:00.000Z",
        "NAME": "a" * 40,
        "DAY": "2026-01-02",
        "AMOUNT": -2.25,
    }
    assert stats["maxValues"] == {
        "ID": 3,
        "AT": "2026-05-05T05:05:05.556Z",  # rounded up: .5555 is past .555
        "NAME": "b",
        "DAY": "2026-01-02",
        "AMOUNT": 1.5,
    }
    assert stats["nullCount"] == {
        "ID": 1, "AT": 1, "NAME": 1, "DAY": 2, "AMOUNT": 1, "SCORE": 1
    }  # fmt: skip
