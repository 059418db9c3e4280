"""What a failed statement must leave as it was (SPEC R28), and the R39 error shape.

:class:`Observer` reads every catalog row (all tables of ``catalog.db`` but the
statement log, which records failed statements too, SPEC R36) and lists the
``warehouse/``, ``failsafe/`` and ``system/`` stores (sizes and mtimes), as an operator
would; ``state().changes(before)`` says what differs. The hostile-input campaign, the
fail-safe read tests and both statement fuzzers (tests/fuzz_run.py) use it;
test_hostile_input.py tests that it sees every kind of change.
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewind.errors import RewindError

# The statement log records every statement, failed ones too (SPEC R36).
LOG_TABLES = frozenset({"statements"})
STORES = ("warehouse", "failsafe", "system")


@dataclass(frozen=True)
class State:
    """Every catalog row but the statement log's, and every path of the stores."""

    catalog: dict[str, list[tuple[Any, ...]]]
    files: dict[str, tuple[int, int] | None]  # path -> (size, mtime ns); None: a directory

    def changes(self, before: State) -> dict[str, Any]:
        """What differs from ``before`` (empty when nothing does), to read in a failure.

        Rows are read in the table's own order: an untouched table reads the same, and
        rows that only moved are compared as a multiset before they count as a change.
        """
        tables = {}
        for name in set(self.catalog) | set(before.catalog):
            now, then = self.catalog.get(name, []), before.catalog.get(name, [])
            if now != then and sorted(now, key=repr) != sorted(then, key=repr):
                gone, new = [r for r in then if r not in now], [r for r in now if r not in then]
                tables[name] = {"gone": gone, "new": new}
        paths = set(self.files) | set(before.files)
        files = sorted(p for p in paths if self.files.get(p, -1) != before.files.get(p, -1))
        return {k: v for k, v in {"catalog": tables, "files": files}.items() if v}


class Observer:
    """Reads a home's catalog (read-only) and lists its stores, as an operator would.

    Plain ``sqlite3`` rather than SQLAlchemy: the fuzzers take a state before every
    statement, thousands of times.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.db = sqlite3.connect(f"file:{home / 'catalog.db'}?mode=ro", uri=True)

    def state(self) -> State:
        tables = [
            name
            for (name,) in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in LOG_TABLES
        ]
        catalog = {name: self.db.execute(f'SELECT * FROM "{name}"').fetchall() for name in tables}
        files: dict[str, tuple[int, int] | None] = {}
        for store in STORES:
            _list(self.home / store, f"{store}/", files)
        return State(catalog, files)

    def close(self) -> None:
        self.db.close()


def _list(folder: Path, prefix: str, found: dict[str, tuple[int, int] | None]) -> None:
    """Every path under ``folder`` (symlinks as themselves, not followed)."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        relative = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            found[relative] = None
            _list(Path(entry.path), relative + "/", found)
        else:
            stat = entry.stat(follow_symlinks=False)
            found[relative] = (stat.st_size, stat.st_mtime_ns)


def assert_r39(error: RewindError, code: str, *named: str) -> None:
    """SPEC R39: a stable code, one line, naming the object (``named``) and the reason."""
    assert (error.code, re.fullmatch(r"[A-Z_]+", error.code) is not None) == (code, True), error
    assert "\n" not in error.message and "Traceback" not in error.message, error.message
    for word in named:
        assert word in error.message, (word, error.message)
