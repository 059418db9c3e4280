"""Rewind: Time Travel and Fail-safe for Delta Lake."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["connect"]

if TYPE_CHECKING:
    from rewind.connection import Connection


def connect(*args: Any, **kwargs: Any) -> Connection:
    """``rewind.connect(home=None, user=None, now=None)``: see :func:`rewind.connection.connect`."""
    from rewind.connection import connect as _connect

    return _connect(*args, **kwargs)
