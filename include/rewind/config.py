"""Configuration in one dataclass, read from the environment with embedded defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rewind.constants import DEFAULT_USER
from rewind.errors import InvalidLocation, InvalidValue

if TYPE_CHECKING:
    from rewind.catalog.repository import KeptRoot
    from rewind.storage.location import Root

# The storage classes a fail-safe copy may take (SPEC R48): those read at once, as a
# recovery does within the 7 days; GLACIER and DEEP_ARCHIVE need a restore of hours first.
FAILSAFE_STORAGE_CLASSES = (
    "STANDARD",
    "STANDARD_IA",
    "ONEZONE_IA",
    "INTELLIGENT_TIERING",
    "GLACIER_IR",
)


@dataclass(frozen=True)
class Config:
    """Where Rewind keeps its state and how it reaches Spark.

    Attributes:
        home: the Rewind home (catalog file, pins, logs; by default ``warehouse/``,
            ``failsafe/`` and ``system/`` too).
        catalog_url: SQLAlchemy URL; default a SQLite file in ``home``.
        warehouse: the tables Rewind creates (``REWIND_WAREHOUSE_URI``, SPEC R44): a local
            directory or an S3 prefix; None: ``<home>/warehouse`` (:attr:`warehouse_root`).
        system: the system tables (``REWIND_SYSTEM_URI``, SPEC R44), the same kinds; None:
            under the warehouse root (:attr:`system_root`).
        failsafe_root: the fail-safe store, kept apart from the warehouse (SPEC R12, R38): a
            local directory or an S3 prefix (``REWIND_FAILSAFE_URI``, SPEC R44).
        failsafe_storage_class: the S3 storage class of every fail-safe copy
            (``REWIND_FAILSAFE_STORAGE_CLASS``, SPEC R48); None: the bucket's default.
        spark_master: the master URL for the SparkSession factory.
        spark_remote: a Spark Connect server's URL (``sc://host:port/;token=...``) every
            statement's Spark work runs on; None for the home's own server or in process.
        spark_server: ``auto`` (the default): the home's Spark Connect server when it runs
            (the CLI starts it); ``off``: Spark always runs in the calling process.
        user: the user statements run as.
        now: the clock text (ISO 8601) or None for the system clock (SPEC R15).
        query_tag: Snowflake's QUERY_TAG of every statement of the session (QUERY_HISTORY).
    """

    home: Path
    catalog_url: str
    failsafe_root: Root
    spark_master: str
    user: str
    now: str | None
    query_tag: str | None = None
    failsafe_storage_class: str | None = None
    spark_remote: str | None = None
    spark_server: str = "auto"
    warehouse: Root | None = None
    system: Root | None = None

    @property
    def warehouse_root(self) -> Root:
        """Where the tables Rewind creates live, one directory per table id (SPEC R4, R44)."""
        return self.warehouse if self.warehouse is not None else self.home / "warehouse"

    @property
    def kept_roots(self) -> tuple[KeptRoot, ...]:
        """The roots the catalog records, so that neither moves while it has something
        there (``Catalog.keep_roots``): the warehouse its tables are computed from (SPEC R4,
        R44) and the fail-safe store its manifest's files are in (SPEC R12, R44, R48)."""
        from rewind.catalog.repository import KeptRoot

        warehouse = self._kept("warehouse", self.warehouse_root)
        failsafe = self._kept("failsafe", self.failsafe_root)
        return (
            KeptRoot("warehouse", WAREHOUSE_ENV, warehouse, "tables"),
            KeptRoot("failsafe", FAILSAFE_ENV, failsafe, "fail-safe files"),
        )

    def _kept(self, own: str, root: Root) -> str:
        """A root as the catalog records it: ``<home>/<own>`` for the home's own, wherever
        the home is now (a home copied or moved keeps what is in it), else the root's one
        spelling."""
        from rewind.storage import location

        if isinstance(root, Path) and root.resolve() == (self.home / own).resolve():
            return f"<home>/{own}"
        return location.canonical(root)

    @property
    def system_root(self) -> Root:
        """Where the system tables (retention plan, storage metrics) live: under the
        warehouse root unless ``REWIND_SYSTEM_URI`` (SPEC R44; no table id is a word, so
        they share no directory). A home with the default warehouse keeps them where
        homes always had them, ``<home>/system``: moving them would hide its history."""
        if self.system is not None:
            return self.system
        return self.home / "system" if self.warehouse is None else self.warehouse / "system"

    @classmethod
    def load(
        cls,
        home: str | os.PathLike[str] | None = None,
        user: str | None = None,
        now: str | None = None,
        query_tag: str | None = None,
    ) -> Config:
        """Arguments win over ``REWIND_*`` variables, which win over defaults.

        Raises:
            InvalidLocation: ``REWIND_WAREHOUSE_URI``, ``REWIND_SYSTEM_URI`` or
                ``REWIND_FAILSAFE_URI`` is an S3 URI that is not usable (one carrying
                credentials, SPEC R45; a bad bucket name), or the warehouse or the system
                tables overlap the fail-safe store (SPEC R12, R38).
            InvalidValue: a setting out of its range.
        """
        from rewind.storage import location

        env = os.environ
        home_path = Path(home or env.get("REWIND_HOME") or ".rewind").absolute()
        catalog_url = env.get("REWIND_CATALOG_URL") or f"sqlite:///{home_path / 'catalog.db'}"
        failsafe = env.get(FAILSAFE_ENV) or str(home_path / "failsafe")
        failsafe_root = location.of(failsafe.removeprefix("file://"))
        config = cls(
            home=home_path,
            catalog_url=catalog_url,
            failsafe_root=failsafe_root,
            spark_master=env.get("REWIND_SPARK_MASTER", "local[2]"),
            user=user or env.get("REWIND_USER") or DEFAULT_USER,
            now=now or env.get("REWIND_NOW") or None,
            query_tag=query_tag or env.get("REWIND_QUERY_TAG") or None,
            spark_remote=env.get("REWIND_SPARK_REMOTE") or None,
            spark_server=_spark_server(env.get("REWIND_SPARK_SERVER") or "auto"),
            failsafe_storage_class=_storage_class(
                env.get("REWIND_FAILSAFE_STORAGE_CLASS") or None, failsafe_root
            ),
            warehouse=_root(env.get(WAREHOUSE_ENV)),
            system=_root(env.get(SYSTEM_ENV)),
        )
        _apart_from_failsafe(WAREHOUSE_ENV, config.warehouse_root, failsafe_root)
        _apart_from_failsafe(SYSTEM_ENV, config.system_root, failsafe_root)
        return config


WAREHOUSE_ENV = "REWIND_WAREHOUSE_URI"
SYSTEM_ENV = "REWIND_SYSTEM_URI"
FAILSAFE_ENV = "REWIND_FAILSAFE_URI"


def _root(text: str | None) -> Root | None:
    """A root setting (``s3://bucket/prefix``, a path or ``file://`` path); None if unset.

    Raises:
        InvalidLocation: an S3 URI with credentials in it (SPEC R45) or a bad bucket name,
            named without its secret.
    """
    from rewind.storage import location

    if not text:
        return None
    root = location.of(text.removeprefix("file://"))
    return root.absolute() if isinstance(root, Path) else root


def _apart_from_failsafe(name: str, root: Root, failsafe: Root) -> None:
    """Refuse a root that holds the fail-safe store or lies in it: fail-safe data is read by
    no query path (SPEC R12, R38), and a table directory in it would be one."""
    from rewind.storage import location

    shown = root.resolve() if isinstance(root, Path) else root
    held = failsafe.resolve() if isinstance(failsafe, Path) else failsafe
    if location.overlaps(shown, held):
        raise InvalidLocation(
            f"{name} {shown} overlaps the fail-safe store {held}: Rewind keeps them apart "
            "(fail-safe data is never in a query path)."
        )


def _spark_server(text: str) -> str:
    if text.lower() not in ("auto", "off"):
        raise InvalidValue(f"REWIND_SPARK_SERVER must be auto or off, not {text!r}.")
    return text.lower()


def _storage_class(text: str | None, store: Root) -> str | None:
    if text is None:
        return None
    if isinstance(store, Path):
        raise InvalidValue(
            f"REWIND_FAILSAFE_STORAGE_CLASS applies to an s3:// fail-safe store, not {store}."
        )
    if text.upper() not in FAILSAFE_STORAGE_CLASSES:
        raise InvalidValue(
            f"REWIND_FAILSAFE_STORAGE_CLASS must be one of {', '.join(FAILSAFE_STORAGE_CLASSES)}, "
            f"not {text!r}: a fail-safe copy must be readable at once for a recovery."
        )
    return text.upper()
