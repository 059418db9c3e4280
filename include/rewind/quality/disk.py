"""The bytes the quality step counts independently of the catalog (SPEC R12, R29, R33).

The governed table directories are listed (:mod:`rewind.lifecycle.files`). The
fail-safe store is never opened outside the moving steps and recovery (SPEC R38), so
the fail-safe bytes come from the catalog's manifest, as do the bytes of the tables on
an object store, whose data files no lifecycle run lists (SPEC R50). Listing the directories is the
point: it is the count independent of the catalog that the storage metrics are checked
against, so this step's work grows with the number of files stored, unlike the steps
that move data (SPEC R32).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from rewind.lifecycle.files import Key, StoredFile

Found = dict[int, dict[str, Any]]  # table id -> {path: value}


def by_table(rows: Iterable[tuple[int, str, Any]]) -> Found:
    """table id -> {path: value}: a lookup by file that makes no (table id, path) tuple
    a file (the validation's peak at a million files, issue 28 item 5)."""
    found: Found = {}
    for table_id, path, value in rows:
        found.setdefault(table_id, {})[path] = value
    return found


def stored_bytes(
    files: list[StoredFile],
    present: Found,
    manifest: Mapping[Key, int],
    origin: Mapping[Key, Key],
) -> int:
    """The bytes stored for the tables: every byte once (SPEC R33).

    A clone shares its source's files through hard links (SPEC R24), so the warehouse
    counts distinct inodes. A fail-safe entry whose file another table directory still
    links (a clone's, or the source's for a clone's entry) is that same inode, so the
    manifest adds only the files no other table directory holds, each original file
    once. A file found under the fail-safe entry's own name is a second copy (moved
    back, or not yet removed), so it does not stand in for the fail-safe one.

    Args:
        files: the data files found in the table directories.
        present: the same files' paths by table (:func:`by_table`).
        manifest: the fail-safe manifest and the files of the tables on an object
            store, (table id, path) -> size.
        origin: (clone id, path) -> (source id, source path) for files clones share.
    """
    inodes = {f.inode: f.size for f in files}
    linking: dict[Key, set[Key]] = defaultdict(set)  # original file -> clones' keys found
    for key, source in origin.items():
        if key[1] in present.get(key[0], {}):
            linking[source].add(key)

    def holders(original: Key) -> set[Key]:
        """The keys found that hold ``original``: the clones' links, and the file itself
        (no per-file key is made: a million files' would be the validation's peak)."""
        held = set(linking.get(original, ()))
        if original not in origin and original[1] in present.get(original[0], {}):
            held.add(original)
        return held

    held = {
        origin.get(key, key): size
        for key, size in manifest.items()
        if not holders(origin.get(key, key)) - {key}
    }
    return sum(inodes.values()) + sum(held.values())
