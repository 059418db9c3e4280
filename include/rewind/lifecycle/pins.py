"""Pins (SPEC R19): a time-travel read holds the version it reads until it ends.

A pin is a small file under ``<home>/pins/``: the read's catalog transaction may hold
SQLite's single write lock, so a pin in the catalog could not be written (or seen by
a lifecycle run in another process) while the read runs. A pin expires on its own if
the reader dies.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from rewind.clock import format_timestamp, parse_timestamp
from rewind.home import private_dir

PIN_MINUTES = 60


@dataclass(frozen=True)
class Pin:
    table_id: int
    version: int
    expires_at: datetime


def hold(root: Path, table_id: int, version: int, query_id: str, now: datetime) -> Path:
    """Pin ``version`` of a table until ``now + PIN_MINUTES``; returns the pin's file."""
    private_dir(root)  # SPEC R38: owner-only
    path = root / f"{query_id}-{table_id}-{version}.json"
    expires = now + timedelta(minutes=PIN_MINUTES)
    partial = path.with_suffix(".tmp")
    partial.write_text(
        json.dumps(
            {"table_id": table_id, "version": version, "expires_at": format_timestamp(expires)}
        )
    )
    os.replace(partial, path)
    return path


def release(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def live_pins(root: Path, now: datetime) -> list[Pin]:
    """Pins that have not expired at ``now``."""
    found = []
    for path in root.glob("*.json") if root.exists() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # released or half-written meanwhile
        pin = Pin(int(data["table_id"]), int(data["version"]), parse_timestamp(data["expires_at"]))
        if pin.expires_at > now:
            found.append(pin)
    return found
