"""Validation of what a restore produced, for the ``rewind_restore`` DAG (SPEC R21, R24).

An UNDROP, a clone at a point, or a restore in place (clone + swap) must give back the
rows the object had at the point: a Great Expectations row-count expectation checks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rewind.quality.expectations import Check, evaluate, require

if TYPE_CHECKING:
    import pandas as pd

RESTORED = "restored_table"


def validate_restored_table(name: str, frame: pd.DataFrame, expected_rows: int) -> dict[str, Any]:
    """Check that a restored table holds as many rows as it had at the point.

    Args:
        name: the restored table's name, as the user gave it (for the message).
        frame: the restored table's rows, e.g. ``pandas.DataFrame(result.rows,
            columns=result.columns)`` of ``SELECT * FROM <name>``.
        expected_rows: the row count at the point, e.g. ``SELECT COUNT(*) FROM
            <source> AT(...)`` taken before the restore.

    Returns:
        ``{"table", "expectations": 1, "passed": 1, "failed": 0, "results": [...]}``;
        the result's ``observed.value`` is the restored row count.

    Raises:
        ValidationFailed: "1 of 1 expectations failed: <name> has the rows it had at
            the point (2 rows, expected 3)".
    """
    check = Check(
        f"{name} has the rows it had at the point",
        "SPEC R21, R24",
        RESTORED,
        "ExpectTableRowCountToEqual",
        {"value": expected_rows},
        "{observed} rows, expected {value}",
    )
    return require({"table": name, **evaluate([check], {RESTORED: frame})})
