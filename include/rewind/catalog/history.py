"""Where objects were at a past instant, and which files clones share (SPEC R24, R30).

Every CREATE, RENAME and SWAP appends an :class:`ObjectName` row (``Catalog.create`` /
``Catalog.move``), so container clones can take "every table that existed at the
point, with the names they had then".
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import exists, or_, select

from rewind.catalog.models import CatalogObject, CloneFile, FileState, LogCursor, ObjectName
from rewind.catalog.repository import Catalog


def members_at(catalog: Catalog, parent_id: int, kind: str, instant: datetime) -> dict[int, str]:
    """Objects of ``kind`` that lived in ``parent_id`` at ``instant``: id -> name then.

    An object exists at ``instant`` when it was created strictly before it (a point at
    the creation itself is refused, SPEC R17) and dropped after it, if at all.
    """
    rows = catalog.session.execute(
        select(ObjectName.object_id, ObjectName.parent_id, ObjectName.name)
        .join(CatalogObject, CatalogObject.id == ObjectName.object_id)
        .where(
            CatalogObject.kind == kind,
            ObjectName.valid_from <= instant,
            CatalogObject.created_on < instant,
            (CatalogObject.dropped_on.is_(None)) | (CatalogObject.dropped_on > instant),
        )
        .order_by(ObjectName.valid_from, ObjectName.id)
    ).all()
    place: dict[int, tuple[int, str]] = {}
    for object_id, parent, name in rows:  # later rows win: the place at ``instant``
        place[object_id] = (parent, name)
    return {oid: name for oid, (parent, name) in place.items() if parent == parent_id}


def record_shared_files(
    catalog: Catalog, clone_id: int, source_id: int, files: list[tuple[str, str, int]]
) -> set[int]:
    """Remember which files a clone shares, with their original owner (SPEC R30, R33).

    ``files``: (the path in the clone's log, the path in the source's, size); they differ
    where the clone references an object store's file by its URI (SPEC R47). A clone of a
    clone shares the original owner's bytes, so the owner is looked up.

    Returns:
        The ids of the files' original owners.
    """
    owners = set()
    inherited = {
        row.path: row
        for row in catalog.session.scalars(select(CloneFile).where(CloneFile.clone_id == source_id))
    }
    for path, source_path, size in files:
        origin = inherited.get(source_path)
        owner = origin.source_id if origin else source_id
        catalog.session.add(
            CloneFile(
                clone_id=clone_id,
                path=path,
                source_id=owner,
                source_path=origin.source_path if origin else source_path,
                size=size,
            )
        )
        owners.add(owner)
    return owners


def held_by_clones(catalog: Catalog, table_ids: Collection[int]) -> set[int]:
    """Those of ``table_ids`` whose objects a clone still references by URI (SPEC R24, R30,
    R47): a file of the clone's current version or time travel (its ``file_states`` row,
    as ``rewind.lifecycle.clones.used_by_clone`` asks), or any file of a clone no nightly
    run has read yet (a clone made since: all of its files are its version 0's).

    A clone of a local table is never held here: it hard-links its files under the same
    paths (``CloneFile.path == source_path``), so the link keeps the bytes whatever a VACUUM
    of the source deletes (SPEC R24, R30), and no guard is needed on local disk.
    """
    in_use = or_(
        exists().where(FileState.table_id == CloneFile.clone_id, FileState.path == CloneFile.path),
        ~exists().where(LogCursor.table_id == CloneFile.clone_id),
    )
    return set(
        catalog.session.scalars(
            select(CloneFile.source_id)
            .distinct()
            .where(
                CloneFile.source_id.in_(table_ids),
                CloneFile.path != CloneFile.source_path,
                in_use,
            )
        )
    )
