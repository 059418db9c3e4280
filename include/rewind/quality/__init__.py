"""Data-quality validation with Great Expectations (SPEC R29 step 6).

``validate_run`` checks what a nightly lifecycle run produced; ``validate_restored_table``
checks what a restore produced. Great Expectations and pandas are imported only when a
validation runs, never when a DAG file is parsed.
"""

from __future__ import annotations

from rewind.quality.restore import validate_restored_table
from rewind.quality.run import validate, validate_run

__all__ = ["validate", "validate_restored_table", "validate_run"]
