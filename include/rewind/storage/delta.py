"""One Delta table per table incarnation under ``warehouse/<table id>/`` (SPEC R4, R14).

Rewind decides every commit itself: Spark writes data files, and this module commits
explicit add/remove actions through delta-rs, stamped with the Rewind clock and the
query id, so that the removal time of each file is the clock's (SPEC R13, R15, R30).
The catalog's version timeline is the truth: a Delta version the catalog does not
know (left by a statement that crashed between the two commits) is rolled back
before the next write.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, PostCommitHookProperties
from deltalake.schema import Field
from deltalake.schema import Schema as DeltaSchema
from deltalake.transaction import AddAction, RemoveAction, create_table_with_add_actions

from rewind.clock import format_timestamp
from rewind.constants import COMMIT_QUERY_ID_KEY, COMMIT_TIME_KEY, DELTA_TABLE_CONFIG
from rewind.errors import StorageError

# Checkpoints are left to the lifecycle; expired-log cleanup would destroy history.
_HOOKS = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
STAGING = "_rewind_staging"


@dataclass(frozen=True)
class DataFile:
    """A data file of one table version (path relative to the table root)."""

    path: str
    size: int
    num_records: int


@dataclass(frozen=True)
class Snapshot:
    """What a table version holds: its schema and data files."""

    version: int
    schema: pa.Schema
    files: tuple[DataFile, ...]
    root: Path

    @property
    def uris(self) -> list[str]:
        return [str(self.root / f.path) for f in self.files]

    @property
    def rows(self) -> int:
        return sum(f.num_records for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def _props(query_id: str, commit_time: datetime) -> CommitProperties:
    return CommitProperties(
        custom_metadata={
            COMMIT_QUERY_ID_KEY: query_id,
            COMMIT_TIME_KEY: format_timestamp(commit_time),
        }
    )


def _reason(exc: Exception) -> str:
    """One line from a delta-rs error: its first line, and its innermost cause when it
    lists causes below it (``↳ Operation not permitted (os error 1)``); never the
    backtrace some errors carry."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).split("Backtrace:")[0]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    causes = [line.removeprefix("↳").strip() for line in lines if line.startswith("↳")]
    first = lines[0] if lines else type(exc).__name__
    return f"{first}: {causes[-1]}" if causes else first


def link_or_copy(source: Path, destination: Path) -> None:
    try:
        os.link(source, destination)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
            raise
        shutil.copy2(source, destination)


def _add(file: DataFile, now: datetime) -> AddAction:
    return AddAction(
        file.path, file.size, {}, _ms(now), True, json.dumps({"numRecords": file.num_records})
    )


class TableStore:
    """Reads and commits the Delta tables under one warehouse root."""

    def __init__(self, warehouse: Path) -> None:
        self.warehouse = warehouse

    def path(self, table_id: int) -> Path:
        """Locations come from ids, never from names (SPEC R4)."""
        return self.warehouse / str(int(table_id))

    def table_id_in(self, text: str) -> int | None:
        """The id of the table whose directory ``text`` (an error message) names, if any."""
        found = re.search(re.escape(str(self.warehouse)) + r"/(\d+)(?:/|\b)", text)
        return int(found[1]) if found else None

    @contextlib.contextmanager
    def _writing(self, table_id: int) -> Iterator[None]:
        """delta-rs write failures as a StorageError naming the table directory (R39)."""
        try:
            yield
        except StorageError:
            raise
        except Exception as exc:  # delta-rs raises OSError and its own exception types
            raise StorageError(
                f"Cannot write the Delta log of {self.path(table_id)}: {_reason(exc)}."
            ) from None

    def staging(self, table_id: int, query_id: str) -> Path:
        return self.path(table_id) / STAGING / query_id

    def create(
        self,
        table_id: int,
        schema: pa.Schema,
        query_id: str,
        now: datetime,
        adds: Sequence[DataFile] = (),
    ) -> int:
        """Create version 0 of a new table, holding ``adds`` (already in its dir); returns 0."""
        path = self.path(table_id)
        if (path / "_delta_log").exists():
            raise StorageError(f"Storage for table id {table_id} already exists at {path}.")
        path.mkdir(parents=True, exist_ok=True)
        with self._writing(table_id):
            create_table_with_add_actions(
                str(path),
                DeltaSchema.from_arrow(schema),
                [_add(f, now) for f in adds],
                configuration=DELTA_TABLE_CONFIG,
                commit_properties=_props(query_id, now),
                post_commithook_properties=_HOOKS,
            )
        return 0

    def share_files(
        self, target_id: int, files: Sequence[DataFile], source_root: Path
    ) -> list[Path]:
        """Give ``target_id`` the data files ``files`` found under ``source_root``.

        Files are immutable, so a hard link is a zero-copy clone (SPEC R24); where the
        file system refuses links (another device, no support), the bytes are copied.
        Paths stay relative and identical, so delta-rs and delta-spark read the clone.
        """
        target = self.path(target_id)
        made: list[Path] = []
        for file in files:
            destination = target / file.path
            destination.parent.mkdir(parents=True, exist_ok=True)
            link_or_copy(source_root / file.path, destination)
            made.append(destination)
        return made

    def _table(self, table_id: int, version: int | None = None) -> DeltaTable:
        try:
            return DeltaTable(str(self.path(table_id)), version=version)
        except Exception as exc:  # delta-rs raises several types for a broken log
            raise StorageError(
                f"Cannot read the Delta log of {self.path(table_id)}: {_reason(exc)}."
            ) from None

    def snapshot(self, table_id: int, version: int) -> Snapshot:
        """The schema and files of ``version``."""
        dt = self._table(table_id, version)
        actions = pa.table(dt.get_add_actions(flatten=True)).to_pydict()
        files = tuple(
            DataFile(path, int(size), int(rows or 0))
            for path, size, rows in zip(
                actions["path"], actions["size_bytes"], actions["num_records"], strict=True
            )
        )
        return Snapshot(version, pa.schema(dt.schema().to_arrow()), files, self.path(table_id))

    def latest_version(self, table_id: int) -> int:
        return int(self._table(table_id).version())

    def commit(
        self,
        table_id: int,
        base_version: int,
        *,
        adds: Sequence[DataFile],
        removes: Sequence[DataFile],
        schema: pa.Schema,
        query_id: str,
        now: datetime,
    ) -> int:
        """Commit ``removes`` and new data files ``adds`` (already in the table dir).

        Returns:
            The new version, ``base_version + 1``.
        """
        self.rollback_to(table_id, base_version)
        actions: list[AddAction | RemoveAction] = [
            RemoveAction(f.path, True, _ms(now), f.size, {}) for f in removes
        ]
        actions.extend(_add(f, now) for f in adds)
        dt = self._table(table_id, base_version)
        with self._writing(table_id):
            dt.create_write_transaction(
                actions,
                "append",
                schema,
                commit_properties=_props(query_id, now),
                post_commithook_properties=_HOOKS,
            )
        return self._check_new_version(table_id, base_version)

    def add_columns(
        self,
        table_id: int,
        base_version: int,
        fields: list[pa.Field],
        query_id: str,
        now: datetime,
    ) -> int:
        """Add nullable columns to the Delta schema (a metadata-only version)."""
        self.rollback_to(table_id, base_version)
        dt = self._table(table_id, base_version)
        with self._writing(table_id):
            dt.alter.add_columns(
                [Field.from_arrow(f) for f in fields],
                commit_properties=_props(query_id, now),
                post_commithook_properties=_HOOKS,
            )
        return self._check_new_version(table_id, base_version)

    def _check_new_version(self, table_id: int, base_version: int) -> int:
        version = self.latest_version(table_id)
        if version != base_version + 1:
            raise StorageError(
                f"Table id {table_id} changed underneath Rewind (expected version "
                f"{base_version + 1}, found {version})."
            )
        return version

    def rollback_to(self, table_id: int, version: int) -> None:
        """Delete log entries newer than ``version`` that the catalog does not know (R28)."""
        log = self.path(table_id) / "_delta_log"
        for entry in log.glob("*.json"):
            stem = entry.name.split(".")[0]
            if stem.isdigit() and int(stem) > version:
                entry.unlink()

    def discard(self, table_id: int) -> None:
        """Remove the whole directory of a table whose creation is being undone."""
        shutil.rmtree(self.path(table_id), ignore_errors=True)

    def remove_files(self, files: list[Path]) -> None:
        for file in files:
            file.unlink(missing_ok=True)
