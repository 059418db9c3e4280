"""Helpers shared by the CLI tests: the clock, JSON rows, the `sql`/`fails` runners, and a
terminal to run a command on."""

from __future__ import annotations

import contextlib
import os
import pty
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

DAY0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(days: float = 0, hours: int = 0) -> str:
    """The ``--now`` value ``days`` and ``hours`` after DAY0, as Rewind prints timestamps."""
    return (DAY0 + timedelta(days=days, hours=hours)).isoformat()


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One statement's rows as dicts keyed by column name."""
    return [dict(zip(result["columns"], row, strict=True)) for row in result["rows"]]


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """SHOW rows keyed by name, for listings where every name is distinct."""
    listed = rows(result)
    assert len({r["name"] for r in listed}) == len(listed), listed
    return {r["name"]: r for r in listed}


@pytest.fixture
def sql(cli: Callable[..., Any]) -> Callable[..., list[dict[str, Any]]]:
    """``sql(text, days=, hours=)`` runs statements that must succeed; returns the JSON."""

    def run(text: str, days: float = 0, hours: int = 0) -> list[dict[str, Any]]:
        result = cli("sql", "--format", "json", text, now=at(days, hours))
        assert result.returncode == 0, result.stderr
        return result.json

    return run


@pytest.fixture
def fails(cli: Callable[..., Any]) -> Callable[..., tuple[str, list[dict[str, Any]]]]:
    """``fails(text, days=, hours=)``: the last statement must fail. Returns its error code
    and the results of the statements before it, which the CLI still prints (SPEC R39)."""

    def run(text: str, days: float = 0, hours: int = 0) -> tuple[str, list[dict[str, Any]]]:
        result = cli("sql", "--format", "json", text, now=at(days, hours))
        assert result.returncode == 1, result.stdout
        (line,) = result.stderr.strip().splitlines()
        return line.split(": ")[1], result.json

    return run


@contextlib.contextmanager
def terminal() -> Iterator[tuple[int, bytearray]]:
    """A pseudo-terminal: yields its command side (a file descriptor to give a command as
    its stderr) and what the terminal showed, read while the command runs (a full pty
    buffer would block the command). The command side is closed on leaving; then the
    reader finishes."""
    leader, follower = pty.openpty()
    shown = bytearray()

    def drain() -> None:
        with contextlib.suppress(OSError):  # EIO once the command's side is closed
            while chunk := os.read(leader, 4096):
                shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield follower, shown
    finally:
        os.close(follower)
        reader.join(30)
        os.close(leader)
