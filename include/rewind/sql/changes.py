"""Snowflake's CHANGES clause (SPEC R16, R17, R40): the rows a table's DML changed
between two of its versions, told apart by Delta's row tracking (``CHANGE_TRACKING =
TRUE``, :func:`rewind.sql.tables.track_changes`).

A row keeps its stable row id through every rewrite that copies or updates it, and takes
the commit version of its last change (Delta's writer requirements, which Rewind's own
writes meet and delta-spark's do). So the net changes from version ``s`` to ``e``
(``DEFAULT``) are the two versions joined by row id: a row only in ``e`` was inserted, one
only in ``s`` deleted, one in both whose commit version moved was updated (a DELETE and
an INSERT row, ``METADATA$ISUPDATE`` TRUE), as Snowflake's change tracking answers; a row
inserted and deleted in between is in neither. ``APPEND_ONLY`` is every row appended in
between, as appended, even if since updated or deleted: the rows with ids past ``s``'s
high-water mark in the files the commits after ``s`` added, each at its first version.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from rewind.errors import ChangeTrackingUnavailable, InvalidValue, SqlSyntaxError
from rewind.spark import functions
from rewind.sql.frames import ROW_ID_COLUMN, ROW_VERSION_COLUMN, quote, version_frame
from rewind.statement import Context
from rewind.storage import log
from rewind.storage.columns import Column
from rewind.storage.snapshot import ROW_IDS_PRESERVED, ROW_TRACKING, Snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ACTION = "METADATA$ACTION"
IS_UPDATE = "METADATA$ISUPDATE"
ROW_ID = "METADATA$ROW_ID"
_KINDS = ("DEFAULT", "APPEND_ONLY")


def interval(changes: exp.Changes) -> tuple[exp.HistoricalData, exp.HistoricalData | None]:
    """The clause's start (``AT | BEFORE``) and end (``END``, read as an ``AT``: the
    changes include it; None: the present)."""
    start = changes.args.get("at_before")
    if start is None:
        raise SqlSyntaxError(
            "CHANGES needs the start of its interval: CHANGES(INFORMATION => DEFAULT) "
            "AT(TIMESTAMP => ...) | AT(OFFSET => ...) | AT(STATEMENT => ...) | "
            "BEFORE(STATEMENT => ...)."
        )
    end = changes.args.get("end")
    if end is not None:
        end = end.copy()
        end.set("this", "AT")
    return start, end


def information(changes: exp.Changes) -> str:
    """``INFORMATION => DEFAULT | APPEND_ONLY``."""
    value = changes.args.get("information")
    kind = value.name.upper() if value is not None else ""
    if kind not in _KINDS:
        raise InvalidValue(
            f"CHANGES(INFORMATION => {kind or '?'}): INFORMATION is DEFAULT or APPEND_ONLY."
        )
    return kind


def check_tracked(table: str, before: Snapshot, after: Snapshot) -> list[log.Commit]:
    """Every row of the interval from ``before`` to ``after`` kept its identity: change
    tracking on at its start and never off within it, and no commit that gave copied rows
    new ids (Delta's ``delta.rowTracking.preserved`` false). Else the changes would be
    guesses: CHANGE_TRACKING_UNAVAILABLE. Returns the interval's commits."""
    if after.version < before.version:
        raise InvalidValue(
            f"The END of the CHANGES interval on {table} (version {after.version}) is "
            f"before its start (version {before.version})."
        )
    if before.stable_row_columns is None:
        raise ChangeTrackingUnavailable(
            f"Change tracking is not enabled on table {table} at the start of the "
            f"interval (version {before.version}): ALTER TABLE {table} SET CHANGE_TRACKING "
            "= TRUE tracks its changes from then on. Two points compare without it: "
            "SELECT * FROM t EXCEPT ALL SELECT * FROM t AT(...) is the rows added since."
        )
    commits = []
    for commit in log.commits_after(before.root, before.version):
        if commit.version > after.version:
            break
        commits.append(commit)
        for action in commit.actions:
            configuration = (action.get("metaData") or {}).get("configuration")
            if configuration is not None and str(configuration.get(ROW_TRACKING)).lower() != "true":
                raise ChangeTrackingUnavailable(
                    f"Change tracking was turned off on table {table} at version "
                    f"{commit.version}, within the interval: its changes are not tracked."
                )
        if str((commit.info.get("tags") or {}).get(ROW_IDS_PRESERVED)).lower() == "false":
            raise ChangeTrackingUnavailable(
                f"Version {commit.version} of table {table} ({commit.operation}) gave the "
                "rows it copied new row ids: the changes across it cannot be told apart."
            )
    if len(commits) < after.version - before.version:
        raise ChangeTrackingUnavailable(
            f"The Delta log of version {before.version + len(commits) + 1} of table {table} "
            "was cleaned up: the changes within the interval cannot be read."
        )
    return commits


def changes_frame(
    ctx: Context,
    kind: str,
    before: tuple[Snapshot, Sequence[Column]],
    after: tuple[Snapshot, Sequence[Column]],
    commits: Sequence[log.Commit],
) -> DataFrame:
    """The change rows from version ``before`` to ``after`` (each with the columns it
    reads with; ``commits``: those between, :func:`check_tracked`'s), the table's columns
    then ``METADATA$ACTION``, ``METADATA$ISUPDATE`` and ``METADATA$ROW_ID``."""
    if kind == "APPEND_ONLY":
        return _appended(ctx, before[0], after, commits)
    F = functions(ctx.spark())
    names = [c.name for c in after[1]]
    old, new = _rows(ctx, *before, "o"), _rows(ctx, *after, "n")
    joined = old.join(new, F.col("o_id") == F.col("n_id"), "full_outer")
    moved = F.col("o_version") != F.col("n_version")
    deleted = joined.where(F.col("n_id").isNull() | moved).select(
        *[F.col(f"o{i}").alias(name) for i, name in enumerate(names)],
        F.lit("DELETE").alias(ACTION),
        F.col("n_id").isNotNull().alias(IS_UPDATE),
        F.col("o_id").cast("string").alias(ROW_ID),
    )
    inserted = joined.where(F.col("o_id").isNull() | moved).select(
        *[F.col(f"n{i}").alias(name) for i, name in enumerate(names)],
        F.lit("INSERT").alias(ACTION),
        F.col("o_id").isNotNull().alias(IS_UPDATE),
        F.col("n_id").cast("string").alias(ROW_ID),
    )
    return deleted.unionByName(inserted)


def _rows(ctx: Context, snap: Snapshot, columns: Sequence[Column], side: str) -> DataFrame:
    """Version ``snap``'s rows, each with its row id and commit version, its columns
    named by position (``o0``, ``o1``, ..., ``o_id``, ``o_version``), so that the two
    sides of the join never share a name."""
    F = functions(ctx.spark())
    frame = version_frame(ctx, snap, columns, with_file=True)
    return frame.select(
        *[F.col(quote(c.name)).alias(f"{side}{i}") for i, c in enumerate(columns)],
        F.col(ROW_ID_COLUMN).alias(f"{side}_id"),
        F.col(ROW_VERSION_COLUMN).alias(f"{side}_version"),
    )


def _appended(
    ctx: Context,
    before: Snapshot,
    after: tuple[Snapshot, Sequence[Column]],
    commits: Sequence[log.Commit],
) -> DataFrame:
    """``APPEND_ONLY``: the rows the commits after ``before`` appended, each as its first
    version had it. Read from every file those commits added, without the deletion
    vectors later commits gave some (a row a vector deletes was appended all the same),
    keeping the rows with ids past ``before``'s high-water mark."""
    from pyspark.sql import Window

    snap, columns = after
    F = functions(ctx.spark())
    added: dict[str, log.DataFile] = {}
    for commit in commits:
        for action in commit.adds():
            if action.get("dataChange", True):
                file = log.data_file(action)
                added.setdefault(file.path, dataclasses.replace(file, vector=None))
    files = dataclasses.replace(snap, files=tuple(added.values()))
    rows = version_frame(ctx, files, columns, with_file=True)
    first = Window.partitionBy(ROW_ID_COLUMN).orderBy(F.col(ROW_VERSION_COLUMN))
    return (
        rows.where(F.col(ROW_ID_COLUMN) > F.lit(before.row_id_mark))
        .withColumn("__rw_first", F.row_number().over(first))
        .where(F.col("__rw_first") == 1)
        .select(
            *[F.col(quote(c.name)) for c in columns],
            F.lit("INSERT").alias(ACTION),
            F.lit(False).alias(IS_UPDATE),
            F.col(ROW_ID_COLUMN).cast("string").alias(ROW_ID),
        )
    )
