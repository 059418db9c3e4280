"""Pure parts of the Rewind views' data: which objects a scope covers, and the chart's window.

(Byte units for people are the UI's: ``ui/src/format.test.ts``.)"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pyarrow as pa
import pytest

from rewind.dashboard_model import Scope, first_day

pytestmark = pytest.mark.unit


PATHS = [
    ("SHOP",),
    ("SHOP", "PUBLIC"),
    ("SHOP", "PUBLIC", "ORDERS"),
    ("SHOP", "STAGE", "ORDERS"),
    ("LAB", "PUBLIC", "orders"),
]


@pytest.mark.parametrize(
    ("scope", "depth", "covered"),
    [
        (Scope(), 0, PATHS),
        (Scope(database="shop"), 1, PATHS[:4]),
        (Scope(database="SHOP", schema="PUBLIC"), 2, PATHS[1:3]),
        (Scope(table="ORDERS"), 3, [PATHS[2], PATHS[3]]),  # SPEC R4: quoted keeps case
        (Scope(table="orders"), 3, PATHS[2:]),
        (Scope(database="SHOP", schema="", table=None), 1, PATHS[:4]),  # empty: not given
    ],
)
def test_a_scope_covers_objects_by_name(
    scope: Scope, depth: int, covered: list[tuple[str, ...]]
) -> None:
    """Unquoted names match in any case, names shown as quoted only as written (SPEC R4);
    an object above the filtered level is not covered; the metrics rows filter alike."""
    assert scope.depth == depth
    assert [p for p in PATHS if scope.covers(p)] == covered
    tables = [p for p in PATHS if len(p) == 3]
    rows = pa.Table.from_pylist(
        [dict(zip(("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"), p, strict=True)) for p in tables]
    )
    kept = rows.filter(scope.expression()).to_pylist()
    assert [tuple(r.values()) for r in kept] == [p for p in covered if len(p) == 3]


def test_the_window_ends_on_the_day_of_now() -> None:
    assert first_day(datetime(2026, 3, 31, 0, 5, tzinfo=UTC)) == date(2026, 3, 2)
