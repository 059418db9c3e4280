"""Data-quality validation with Great Expectations (SPEC R29 step 6).

``validate`` checks what a nightly lifecycle run produced (step 6 of ``rewind.runner``);
``validate_restored_table`` checks what a restore produced. Great Expectations and
pandas are imported only when a validation runs, never when a DAG file is parsed.
"""

from __future__ import annotations

from rewind.quality.restore import validate_restored_table
from rewind.quality.run import validate

__all__ = ["validate", "validate_restored_table"]
