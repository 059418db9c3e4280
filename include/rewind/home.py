"""A Rewind home only its owner reads (SPEC R38): directories 0700, files 0600.

The home holds the catalog (users, grants, every query text), the warehouse and the
fail-safe store: a local account that could read them would go around access control
(R37) and around fail-safe's ACCOUNTADMIN rule (R12, R38). Rewind creates each of its
directories owner-only and tightens one it finds looser, with a warning naming it and
its old mode, so an administrator learns what was exposed. Files Spark writes below
them keep Spark's modes; the owner-only directories above make them unreachable.

Below the session and the lifecycle, above nothing but the configuration.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from sqlalchemy import make_url

from rewind.config import Config
from rewind.errors import StorageError
from rewind.storage import objectstore

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600

log = logging.getLogger("rewind.home")


def prepare_home(config: Config) -> None:
    """The home owner-only, and the SQLite catalog file created 0600 before SQLite opens
    it (its WAL and shared-memory files take the catalog's mode). A warehouse or system
    root on S3 (SPEC R44) is checked first, one LIST each, so that a bucket that is
    missing or refuses the credentials stops the session within seconds, before anything
    is written (SPEC R49). The local roots come after the catalog has said they are its
    own (:func:`prepare_roots`).

    Raises:
        InvalidLocation: an S3 root's bucket does not exist.
        ConfigurationError: no credentials for an S3 root, or rejected ones.
        StorageError: the home cannot be created or is not writable; an S3 root does not
            answer or refuses access.
    """
    roots = (config.warehouse_root, config.system_root)
    for root in dict.fromkeys(r for r in roots if not isinstance(r, Path)):
        objectstore.probe(str(root))
    try:
        private_dir(config.home)
        url = make_url(config.catalog_url)
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            catalog = Path(url.database)
            private_file(catalog)
            for side in ("-wal", "-shm"):
                private_file(catalog.with_name(catalog.name + side), create=False)
    except OSError as exc:
        raise StorageError(
            f"Cannot create the Rewind home {config.home}: {exc.strerror}."
        ) from None
    if not os.access(config.home, os.W_OK):
        raise StorageError(f"The Rewind home {config.home} is not writable.")


def prepare_roots(config: Config) -> None:
    """The local warehouse and system roots owner-only (SPEC R38), made once the catalog
    has checked that the warehouse is the one its tables live in (SPEC R4, R44).

    Raises:
        StorageError: a root cannot be created.
    """
    for root in (config.warehouse_root, config.system_root):
        if isinstance(root, Path):
            try:
                private_dir(root)
            except OSError as exc:
                raise StorageError(f"Cannot create {root}: {exc.strerror}.") from None


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) owner-only, or tighten it if it is looser."""
    if not path.is_dir():
        path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    _tighten(path, PRIVATE_DIR)
    return path


def private_file(path: Path, create: bool = True) -> None:
    """Create ``path`` empty and owner-only if missing (when ``create``), else tighten it."""
    if create and not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE))
    if path.exists():
        _tighten(path, PRIVATE_FILE)


def _tighten(path: Path, mode: int) -> None:
    current = stat.S_IMODE(path.stat().st_mode)
    if current & 0o077 == 0:
        return
    try:
        os.chmod(path, mode)
    except PermissionError:
        log.warning("%s is readable by others (mode %o) and not ours to tighten.", path, current)
        return
    log.warning("%s was readable by others (mode %o); tightened to %o.", path, current, mode)
