"""What every lifecycle step needs: the catalog, storage roots, the run's clock and id."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from rewind.catalog.db import make_engine, migrate
from rewind.catalog.repository import Catalog, table_locator
from rewind.config import FAILSAFE_ENV, Config
from rewind.errors import StorageError
from rewind.home import own_root, prepare_home, prepare_roots, private_dir
from rewind.lifecycle import fileops
from rewind.storage import location, objectstore
from rewind.storage.delta import TableStore
from rewind.storage.location import Root
from rewind.storage.objectstore import S3Location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class Run:
    """One lifecycle run at one instant (SPEC R15: the Airflow run's logical end)."""

    config: Config
    engine: Engine
    run_id: str
    now: datetime
    spark_provider: Callable[[], SparkSession]
    failsafe_token: str  # the catalog's mark in the fail-safe store (rewind.home.own_root)

    @classmethod
    def open(
        cls,
        config: Config,
        run_id: str,
        now: datetime,
        spark_provider: Callable[[], SparkSession] | None = None,
    ) -> Run:
        prepare_home(config)  # SPEC R38: owner-only
        engine = make_engine(config.catalog_url)
        migrate(engine)
        with Session(engine) as session, session.begin():
            tokens = Catalog(session).keep_roots(config.kept_roots)  # SPEC R4, R44, R48
        prepare_roots(config, tokens["warehouse"])
        if spark_provider is None:
            from rewind.spark import get_spark

            def spark_provider() -> SparkSession:
                return get_spark(config.spark_master, config.home / "logs" / "spark.log")

        return cls(config, engine, run_id, now, spark_provider, tokens["failsafe"])

    @functools.cached_property
    def store(self) -> TableStore:
        return TableStore(
            self.config.warehouse_root,
            table_locator(self.engine),
            home=self.config.home,
            system=self.config.system_root,
        )

    def failsafe_path(self, table_id: int, path: str) -> Root:
        """Fail-safe copies live under their own root, never in a query path (R12, R38):
        a local directory or an S3 prefix (SPEC R44)."""
        return self.config.failsafe_root / str(int(table_id)) / path

    def open_failsafe(self) -> None:
        """Make sure the fail-safe store can take files before a step touches any: a local
        one owner-only (SPEC R38); an S3 one answers, its bucket there, within seconds
        (SPEC R49: else INVALID_LOCATION, CONFIGURATION_ERROR or STORAGE_ERROR naming the
        URI, and nothing written); and it is this catalog's, no other home's
        (:func:`rewind.home.own_root`: INVALID_LOCATION)."""
        root = self.config.failsafe_root
        if isinstance(root, Path):
            private_dir(root)
        else:
            objectstore.probe(str(root))
        own_root(root, FAILSAFE_ENV, self.failsafe_token, self.config.home)

    @functools.cached_property
    def failsafe_locked(self) -> bool:
        """Whether the fail-safe store is an S3 bucket with Object Lock enabled (SPEC R48)."""
        root = self.config.failsafe_root
        try:
            return isinstance(root, S3Location) and location.object_lock_enabled(root)
        except OSError as exc:
            raise StorageError(f"Fail-safe store {root}: {exc.strerror}.") from None

    def to_failsafe(self, table_id: int, path: str, purge_at: datetime | None) -> fileops.Task:
        """The move of a table's file into fail-safe: in a bucket with Object Lock, locked
        in COMPLIANCE mode until its purge instant, so that no credential deletes it early;
        in the configured storage class (SPEC R48)."""
        return fileops.Task(
            "move",
            str(self.table_file(table_id, path)),
            str(self.failsafe_path(table_id, path)),
            purge_at.isoformat() if purge_at and self.failsafe_locked else "",
            self.config.failsafe_storage_class or "",
        )

    def table_file(self, table_id: int, path: str) -> Root:
        """A data file where its table keeps it: the warehouse, or an external table's
        location, a local directory or an S3 prefix (SPEC R41, R44)."""
        return self.store.root(table_id) / path

    @contextmanager
    def catalog(self) -> Iterator[Catalog]:
        """One committed catalog transaction."""
        with Session(self.engine) as session, session.begin():
            yield Catalog(session)

    def run_tasks(self, tasks: Sequence[fileops.Task]) -> dict[str, str]:
        """Run file operations on the executors in parallel; source -> outcome.

        A DataFrame of tasks mapped in Arrow batches, so the same code runs in process and
        on a Spark Connect server (no SparkContext there). Spark spreads the local rows
        over the default parallelism itself; a repartition would add a shuffle (1-4 s
        for 40 deletes, against 0.2 s). No tasks, no Spark: an idle night does not start
        a JVM.

        Raises:
            StorageError: a file operation failed on an executor (a store that refuses, or
                does not answer after its retries, SPEC R49). The journal stays: the next
                run finishes it (SPEC R31).
        """
        if not tasks:  # an idle night starts no JVM
            return {}
        from pyspark.errors import PythonException  # nor pyspark's ~0.2 s of imports

        frame = self.spark_provider().createDataFrame(list(tasks), fileops.TASK_SCHEMA)
        outcomes = frame.mapInArrow(fileops.run_batches, fileops.OUTCOME_SCHEMA)
        try:
            rows = outcomes.collect()
        except PythonException as exc:
            raise StorageError(f"A lifecycle file operation failed: {_raised(exc)}") from None
        return {row["source"]: row["outcome"] for row in rows}


def _raised(exc: Exception) -> str:
    """The exception an executor's Python code raised, as the last line of its traceback
    says it (``FileExistsError: [Errno 17] File exists: '/...'``): paths and the store's
    error code, no secret (SPEC R45)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[\w.]+(Error|Exception): ", line)]
    return (raised or lines or [type(exc).__name__])[-1][:300]
