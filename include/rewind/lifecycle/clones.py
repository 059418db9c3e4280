"""Files a clone still shares with their original owner (SPEC R24, R30, R33)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import and_, exists, select

from rewind.catalog.models import CloneFile, FileState
from rewind.catalog.repository import Catalog
from rewind.constants import PURGING


def cloned_owners(catalog: Catalog) -> frozenset[int]:
    """The tables that have, or had, a file of theirs cloned: the only ones whose files
    :func:`used_by_clone` may find used. One query for a step's many rows."""
    return frozenset(catalog.session.scalars(select(CloneFile.source_id).distinct()))


def used_by_clone(catalog: Catalog, row: FileState, owners: Collection[int]) -> bool:
    """Whether a clone still has ``row``'s file as one of its own files.

    Such a file keeps its bytes through the clone's hard link, or, on an object store,
    where its owner keeps it: the clone's log names it by its URI (``CloneFile.path``,
    the owner's own path in ``source_path``, SPEC R47), so it must stay there. The
    owner's row stays as RETAINED (RETAINED_FOR_CLONE) instead of being forgotten.

    ``owners``: :func:`cloned_owners`, read once for a step. A row of a table that no
    clone ever took a file from is not used, without a query (a night settles tens of
    thousands of rows, SPEC R32). A clone made since that read cannot hold a file the
    lifecycle is done with: no point within time travel reaches it (SPEC R38).

    A clone's row being purged (PURGING: this run deletes its fail-safe link, whatever
    order the rows settle in) holds nothing: an owner whose own purge falls in the same
    run would otherwise be kept RETAINED for a file gone from everywhere, counted as
    RETAINED_FOR_CLONE_BYTES that nothing stores (SPEC R30, R33).
    """
    if row.table_id not in owners:
        return False
    return bool(
        catalog.session.scalar(
            select(
                exists().where(
                    CloneFile.source_id == row.table_id,
                    CloneFile.source_path == row.path,
                    exists().where(
                        and_(
                            FileState.table_id == CloneFile.clone_id,
                            FileState.path == CloneFile.path,
                            FileState.state != PURGING,
                        )
                    ),
                )
            )
        )
    )


def clones_of(catalog: Catalog, owners: Collection[int]) -> set[int]:
    """The tables that have, or had, a file of one of ``owners`` as a file of their own."""
    return set(
        catalog.session.scalars(
            select(CloneFile.clone_id).where(CloneFile.source_id.in_(owners)).distinct()
        )
    )
