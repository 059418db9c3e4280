"""Configuration in one dataclass, read from the environment with embedded defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rewind.constants import DEFAULT_USER
from rewind.errors import InvalidValue

if TYPE_CHECKING:
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
        home: the Rewind home (catalog file, ``warehouse/``, ``failsafe/``, ``system/``).
        catalog_url: SQLAlchemy URL; default a SQLite file in ``home``.
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

    @property
    def warehouse_root(self) -> Path:
        return self.home / "warehouse"

    @property
    def system_root(self) -> Path:
        return self.home / "system"

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
            InvalidLocation: ``REWIND_FAILSAFE_URI`` is an S3 URI that is not usable (one
                carrying credentials, SPEC R45; a bad bucket name).
            InvalidValue: a setting out of its range.
        """
        from rewind.storage import location

        env = os.environ
        home_path = Path(home or env.get("REWIND_HOME") or ".rewind").absolute()
        catalog_url = env.get("REWIND_CATALOG_URL") or f"sqlite:///{home_path / 'catalog.db'}"
        failsafe = env.get("REWIND_FAILSAFE_URI") or str(home_path / "failsafe")
        failsafe_root = location.of(failsafe.removeprefix("file://"))
        return cls(
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
