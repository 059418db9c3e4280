"""File states a page at a time, in primary-key order (issue 28 item 5: a night over
1,000,000 files within 2 GB of driver memory).

A step that reads every row of a state at once holds one ORM object per file (about
1.5 KB each); a page holds :data:`PAGE`. A page is found by its key, after the last key
of the page before (keyset pagination): a step may change or delete a page's rows, which
then stay behind the next page, and what a flushed page held is let go (the session
keeps only objects with unflushed changes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, true

from rewind.catalog.models import FileState
from rewind.catalog.repository import Catalog
from rewind.lifecycle import fileops, progress
from rewind.lifecycle.context import Run

PAGE = 20_000  # file states a page: ~30 MB of ORM objects
Key = tuple[int, str]  # (table id, path): the primary key of a file state


def after(key: Key | None) -> ColumnElement[bool]:
    """The file states whose key comes after ``key`` (all of them for None)."""
    if key is None:
        return true()
    return or_(
        FileState.table_id > key[0], and_(FileState.table_id == key[0], FileState.path > key[1])
    )


def up_to(key: Key) -> ColumnElement[bool]:
    """The file states whose key is ``key`` or comes before it."""
    return or_(
        FileState.table_id < key[0], and_(FileState.table_id == key[0], FileState.path <= key[1])
    )


def rows(catalog: Catalog, criterion: ColumnElement[bool], size: int = PAGE) -> Iterator[FileState]:
    """Every file state that matches ``criterion``, read ``size`` at a time in key order;
    a page's changes are flushed before the next page is read."""
    key: Key | None = None
    while True:
        page = list(
            catalog.session.scalars(
                select(FileState)
                .where(criterion, after(key))
                .order_by(FileState.table_id, FileState.path)
                .limit(size)
            )
        )
        if not page:
            return
        key = (page[-1].table_id, page[-1].path)
        yield from page
        catalog.session.flush()
        if len(page) < size:
            return
        del page


def columns(
    catalog: Catalog, criterion: ColumnElement[bool], key: Key | None, size: int, *wanted: Any
) -> list[Any]:
    """One page of ``wanted`` columns (plain rows, no ORM objects) of the file states
    that match ``criterion``, after ``key``, in key order; ``table_id`` and ``path``
    come first in each row."""
    return list(
        catalog.session.execute(
            select(FileState.table_id, FileState.path, *wanted)
            .where(criterion, after(key))
            .order_by(FileState.table_id, FileState.path)
            .limit(size)
        )
    )


def carry_out(
    run: Run,
    criterion: ColumnElement[bool],
    size: int,
    task_of: Callable[..., fileops.Task],
    settle: Callable[[Catalog, FileState, dict[str, str]], None],
    *wanted: Any,
) -> None:
    """The file operations of every file state that matches ``criterion``, ``size`` at a
    time: a page's tasks (``task_of(table_id, path, *wanted, size)`` of each row) run
    (``run.run_tasks``, with progress), then ``settle(catalog, row, outcomes)`` of each of
    the page's file states, committed before the next page is read (a run killed between
    two pages leaves the later ones as they were, for the next run, SPEC R31)."""
    key: Key | None = None
    while True:
        with run.catalog() as catalog:
            page = columns(catalog, criterion, key, size, *wanted, FileState.size)
        if not page:
            return
        tasks = [task_of(*row) for row in page]
        outcomes = progress.run_tasks(run.run_tasks, tasks, [row[-1] for row in page])
        last: Key = (page[-1][0], page[-1][1])
        del tasks, page
        with run.catalog() as catalog:
            rows = catalog.session.scalars(
                select(FileState).where(criterion, after(key), up_to(last))
            )
            for row in rows:
                settle(catalog, row, outcomes)
        key = last
