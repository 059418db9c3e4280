"""The catalog's version timeline, kept as an index of the Delta log (SPEC R40).

Every commit of any writer is a version of the table. Before a statement or a lifecycle
step reads a table's versions, :func:`sync` folds the commits it does not know yet into
``table_versions``, incrementally by version number:

- Rewind's own commits carry their statement's query id and the Rewind clock; those of
  successful statements are already there (recorded in the statement's transaction).
- Another writer's commit gets the time that writer recorded (in-commit timestamp, else
  the commit file's time), made non-decreasing, and a query id derived from the commit,
  logged as a statement so that ``AT|BEFORE(STATEMENT => id)``, QUERY_HISTORY and
  ACCESS_HISTORY name it; schema changes it made (new, renamed or dropped columns)
  become the table's columns.
- A commit of a Rewind statement that failed or was killed before its catalog commit is
  taken back (SPEC R28) by :meth:`TableStore.undo_commit`, which touches nothing of
  anyone else's; one whose statement is still running elsewhere ends the sync there.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rewind.catalog.models import CatalogObject, Statement
from rewind.catalog.repository import Catalog
from rewind.constants import COMMIT_UNDO_KEY
from rewind.storage import location, log
from rewind.storage.columns import Column, table_columns
from rewind.storage.delta import TableStore
from rewind.storage.location import Root
from rewind.storage.running import is_running
from rewind.types import DECLARED_TYPE, declared_length, from_spark

FOREIGN_QUERY_TYPE = "DELTA_COMMIT"
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def sync(
    catalog: Catalog, store: TableStore, table: CatalogObject, *, upto: int | None = None
) -> int:
    """Fold the commits of ``table`` newer than its timeline into the catalog.

    Args:
        upto: stop after this version (a statement syncs up to its own commit).

    Returns:
        The newest version the timeline knows.
    """
    known = catalog.latest_version(table.id)
    after = known.version if known is not None else -1
    if known is not None:
        previous = known.commit_time
    else:  # an external table's history began before its registration (SPEC R41)
        previous = table.created_on if table.location is None else EARLIEST
    root = store.root(table.id)
    if log.read_commit(root, after + 1) is None:
        # JSON commits cleaned up by another engine after a checkpoint: the versions
        # before the oldest one left cannot be read by anyone; carry on from it.
        earliest = log.earliest_commit(root)
        if earliest is None or earliest <= after + 1:
            return after
        after = earliest - 1
    for commit in log.commits_after(root, after):
        if upto is not None and commit.version > upto:
            break
        if not _fold(catalog, store, table, root, commit, previous):
            break
        previous = max(previous, commit.raw_time())
        after = commit.version
    return after


def _fold(
    catalog: Catalog,
    store: TableStore,
    table: CatalogObject,
    root: Root,
    commit: log.Commit,
    previous: datetime,
) -> bool:
    """Fold one commit into the timeline; False where the sync must stop before it."""
    query_id = commit.rewind_query_id
    if query_id is None:  # another writer's commit
        query_id = _log_foreign(catalog, table, commit, root)
        _follow_schema(table, root, commit)
        _record(catalog, table, commit, previous, query_id, commit.operation)
        return True
    statement = catalog.statement(query_id)
    if commit.info.get(COMMIT_UNDO_KEY) or (
        statement is not None and statement.status == "SUCCESS"
    ):
        if not _has_version(catalog, table.id, commit.version):
            _record(catalog, table, commit, previous, query_id, commit.operation)
        return True
    # A commit of a Rewind statement that failed or was killed (SPEC R28).
    if is_running(store.home, query_id):
        return False
    if not _undone_later(root, commit):
        store.undo_commit(table.id, commit.version, query_id, commit.raw_time())
        if log.read_commit(root, commit.version) is None:
            return False  # it was the newest commit: gone, nothing after it
    _record(catalog, table, commit, previous, query_id, "FAILED")
    return True


def _undone_later(root: Root, commit: log.Commit) -> bool:
    return any(
        later.rewind_query_id == commit.rewind_query_id and later.info.get(COMMIT_UNDO_KEY)
        for later in log.commits_after(root, commit.version)
    )


def _has_version(catalog: Catalog, table_id: int, version: int) -> bool:
    return any(v.version == version for v in catalog.versions(table_id))


def _record(
    catalog: Catalog,
    table: CatalogObject,
    commit: log.Commit,
    previous: datetime,
    query_id: str,
    operation: str,
) -> None:
    """A version of ``table``: its time non-decreasing (SPEC R40), its statement's write."""
    when = max(commit.raw_time(), previous)
    catalog.add_version(table.id, commit.version, when, query_id, operation[:32])
    catalog.record_access(
        query_id, table.id, "WRITE", operation=operation[:16], version=commit.version
    )


def _log_foreign(catalog: Catalog, table: CatalogObject, commit: log.Commit, root: Root) -> str:
    """Another writer's commit as a statement of the log (QUERY_HISTORY, SPEC R36, R40)."""
    query_id = commit.derived_query_id(location.canonical(root))
    if catalog.statement(query_id) is None:
        when = commit.raw_time()
        engine = str(commit.info.get("engineInfo") or "another Delta writer")
        catalog.session.add(
            Statement(
                query_id=query_id,
                text=(
                    f"-- Delta commit {commit.version} of {catalog.qualified_name(table)}: "
                    f"{commit.operation} by {engine}"
                ),
                user_name=str(commit.info.get("userName") or engine)[:255],
                role_name="",
                start_time=when,
                end_time=when,
                status="SUCCESS",
                query_type=FOREIGN_QUERY_TYPE,
            )
        )
        catalog.session.flush()
    return query_id


def _follow_schema(table: CatalogObject, root: Root, commit: log.Commit) -> None:
    """Columns another writer added, renamed, widened (Delta's type widening) or dropped
    become the table's (SPEC R40); a column Rewind hid (DROP COLUMN keeps it in the files)
    stays hidden."""
    metadata = commit.metadata()
    if metadata is None or commit.version == 0:
        return
    before = _fields(log.replay(root, commit.version - 1).metadata)
    after = _fields(metadata)
    now = {c.physical: c for c in columns_of(metadata, str(root))}
    columns = table_columns(table)
    names_before = {name: key for key, name in before.items()}
    kept: list[Column] = []
    for column in columns:
        key = names_before.get(column.physical)
        if key is None:
            kept.append(column)
        elif key in after:
            renamed = after[key]
            name = renamed.upper() if column.name == column.physical.upper() else column.name
            kept.append(Column(name, renamed, now[renamed].type, now[renamed].spark))
    new = {name for key, name in after.items() if key not in before}
    kept.extend(c for c in now.values() if c.physical in new)
    table.columns = [c.as_json() for c in kept]


def columns_of(metadata: dict[str, Any], table: str) -> list[Column]:
    """The columns of a Delta ``metaData`` as another engine wrote them: a Delta column
    ``amount`` is Rewind's column AMOUNT, as an unquoted Snowflake identifier resolves
    (Delta's names are case-insensitive too); column mapping's physical names are found
    through :func:`log.field_ids`; a string column's declared length (a VARCHAR(n) or
    CHAR(n) of delta-spark's) is its type's."""
    declared = {
        str(f["name"]): (f.get("metadata") or {}).get(DECLARED_TYPE)
        for f in log.delta_fields(metadata)
    }
    columns = []
    for name, kind, _ in log.column_types(metadata, table):
        length = declared.get(name)
        ctype = from_spark(length if isinstance(length, str) and declared_length(length) else kind)
        columns.append(Column(name.upper(), name, ctype.sql, ctype.spark))
    return columns


def _fields(metadata: dict[str, Any]) -> dict[str, str]:
    """Column identity (column mapping's id, else the name) -> name."""
    return {key: name for name, key in log.field_ids(metadata).items()}
