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

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from rewind.config import SYSTEM_ENV, WAREHOUSE_ENV, Config
from rewind.errors import InvalidLocation, StorageError
from rewind.storage import location, objectstore
from rewind.storage.location import Root

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# A storage root's mark of the catalog that uses it (:func:`own_root`).
MARKER = "_rewind_catalog.json"

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


def prepare_roots(config: Config, warehouse_token: str) -> None:
    """The local warehouse and system roots owner-only (SPEC R38), made once the catalog
    has checked that the warehouse is the one its tables live in (SPEC R4, R44), and both
    marked as this catalog's (:func:`own_root`).

    Raises:
        StorageError: a root cannot be created, or a marker not read or written.
        InvalidLocation: another catalog's marker is in the warehouse or the system root.
    """
    for root in (config.warehouse_root, config.system_root):
        if isinstance(root, Path):
            try:
                private_dir(root)
            except OSError as exc:
                raise StorageError(f"Cannot create {root}: {exc.strerror}.") from None
    own_root(config.warehouse_root, WAREHOUSE_ENV, warehouse_token, config.home)
    # The system tables are the warehouse's companions: another home's retention plans
    # would be read as this one's previous night (rewind.lifecycle.plan), its metrics
    # shown as this one's. Marked with the warehouse's token (the same file when the
    # system root is the warehouse).
    own_root(config.system_root, SYSTEM_ENV, warehouse_token, config.home)


def own_root(root: Root, setting: str, token: str, home: Path) -> None:
    """Refuse a storage root another Rewind catalog uses, else mark it as this one's.

    Two homes pointed at one warehouse (``REWIND_WAREHOUSE_URI``) give their tables the
    same ids and mix their system tables; a CREATE in one would find the other's table
    directory (``TableStore.claim`` refuses it, one table late). Two pointed at one system
    root (``REWIND_SYSTEM_URI``) would read each other's retention plans as their
    previous night's. Two pointed at one fail-safe store (``REWIND_FAILSAFE_URI``) would
    keep their tables' fail-safe files under the same ids: one's purge would delete the
    other's. The catalog's token of the root (``Catalog.keep_roots``) is written into
    ``<root>/_rewind_catalog.json`` at its first use, put-if-absent (two first uses: one
    marker wins), and checked at every one: one read (S3: one GET, beside the probe's
    LIST). A home copied with its roots keeps its catalog's tokens and so its markers.

    Raises:
        InvalidLocation: the marker is another catalog's; it names that catalog's home.
        StorageError: the marker cannot be read or written, or is not Rewind's.
    """
    marker = root / MARKER
    try:
        try:
            found = _read_marker(marker, setting)
        except FileNotFoundError:
            try:
                location.write_new(
                    marker, json.dumps({"catalog": token, "home": str(home)}).encode()
                )
                return
            except FileExistsError:  # another first use wrote one first
                found = _read_marker(marker, setting)
    except OSError as exc:
        raise StorageError(f"Cannot read or write {marker}: {exc.strerror}.") from None
    if found.get("catalog") != token:
        raise InvalidLocation(
            f"{setting} is set to {root}, which another Rewind catalog uses (its home: "
            f"{found.get('home')}; {marker} says so): give each home its own, or remove "
            "that file if that home is gone for good; nothing was written."
        )


def _read_marker(marker: Root, setting: str) -> dict[str, Any]:
    """The marker's JSON object.

    Raises:
        FileNotFoundError: no marker.
        StorageError: it is not a JSON object (not a marker Rewind wrote).
    """
    data, _ = location.read(marker)
    try:
        found = json.loads(data)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise StorageError(
            f"{marker} is not a Rewind catalog's marker: remove it, or point {setting} "
            "elsewhere; nothing was written."
        )
    return found


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
