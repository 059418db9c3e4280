"""SPEC R38: no code path reads the fail-safe store except the ACCOUNTADMIN recovery.

A scan of the library: only the lifecycle modules that move files in and out, the
recovery module, and the wiring that hands them the configured root may name a path
into it (figures such as FAILSAFE_BYTES are no path).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

LIBRARY = Path(__file__).resolve().parents[2] / "include" / "rewind"
PATH_INTO_FAILSAFE = re.compile(r"failsafe_root|failsafe_path|[\"']failsafe[\"']|FAILSAFE_URI")
ALLOWED = {
    "cli.py": "the `failsafe` command group (recovery)",
    "config.py": "reads REWIND_FAILSAFE_URI",
    "connection.py": "hands the root to recovery only",
    "lifecycle/context.py": "the moving steps' paths",
    "lifecycle/expire.py": "moves data in (never reads it)",
    "lifecycle/purge.py": "deletes data (never reads it)",
}


def test_only_known_modules_name_the_failsafe_store() -> None:
    naming = {
        str(path.relative_to(LIBRARY))
        for path in LIBRARY.rglob("*.py")
        if PATH_INTO_FAILSAFE.search(path.read_text())
    }
    assert naming == set(ALLOWED)


def test_the_sql_and_storage_paths_never_name_it() -> None:
    """Queries, clones, restores and DML cannot reach fail-safe files (R38); recovery
    gets the root handed in by the connection, for ACCOUNTADMIN only."""
    for folder in ("sql", "storage"):
        for path in (LIBRARY / folder).rglob("*.py"):
            assert "failsafe" not in path.read_text().lower(), path
