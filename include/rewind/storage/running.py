"""Which Rewind statements of a home may still commit (SPEC R28, R40): a statement marks
itself under ``<home>/running/<query id>`` (its host and process, then the id of each new
table whose directory it claims) while it may commit, and removes the mark when it is
over. A mark left behind is a statement killed before it finished: the storage it wrote
and never committed to the catalog is its own to take back (a Delta commit by
:func:`rewind.storage.timeline.sync`, a new table's directory by
:meth:`rewind.storage.delta.TableStore.claim`), never anyone else's."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path


def _mark(home: Path, query_id: str) -> Path:
    return home / "running" / query_id


@contextlib.contextmanager
def running(home: Path, query_id: str) -> Iterator[None]:
    """Mark a Rewind statement as running while it may commit, so that another process
    syncing the same table waits for its catalog commit instead of undoing it."""
    marker = _mark(home, query_id)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{socket.gethostname()} {os.getpid()}")
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def is_running(home: Path, query_id: str) -> bool:
    """Whether the statement may still commit: marked, and its process alive (one of
    another machine's can only say so itself)."""
    try:
        host, pid = _mark(home, query_id).read_text().splitlines()[0].split()
    except (FileNotFoundError, IndexError, ValueError):
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


def claim(home: Path, query_id: str, table_id: int) -> None:
    """Record on the running statement's mark that it claims a new table's directory."""
    marker = _mark(home, query_id)
    if marker.is_file():
        with marker.open("a") as out:
            out.write(f"\ntable {table_id}")


def killed_claim(home: Path, table_id: int) -> str | None:
    """The killed statement of this home that claimed table ``table_id``'s directory and
    never finished (its mark left behind, its process gone), if one did."""
    return next((query for query, claimed in killed_claims(home) if claimed == table_id), None)


def killed_claims(home: Path) -> list[tuple[str, int]]:
    """(query id, table id) of every table directory a killed statement of this home
    claimed (its mark left behind, its process gone)."""
    try:
        marks = list((home / "running").iterdir())
    except FileNotFoundError:
        return []
    found = []
    for marker in marks:
        with contextlib.suppress(FileNotFoundError):
            claimed = marker.read_text().splitlines()[1:]
            if claimed and not is_running(home, marker.name):
                found += [(marker.name, int(line.split()[1])) for line in claimed]
    return found


def forget(home: Path, query_id: str, table_id: int) -> None:
    """Remove a killed statement's claim of table ``table_id`` once it is moot (what it
    left taken back, or nothing left), and its mark with its last claim: a claim left
    behind would let a later catalog that gives the id again take back a table committed
    since."""
    marker = _mark(home, query_id)
    with contextlib.suppress(FileNotFoundError):
        first, *claimed = marker.read_text().splitlines()
        rest = [line for line in claimed if line != f"table {table_id}"]
        if rest:
            marker.write_text("\n".join([first, *rest]))
        else:
            marker.unlink()
