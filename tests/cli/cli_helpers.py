"""Helpers shared by the CLI tests: the clock, JSON rows, the `sql`/`fails` runners, a
terminal to run a command on, and a call whose Spark Connect requests are counted."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
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


COUNTED_CALL = """
import collections, json, sys
import pyspark.sql.connect.proto.base_pb2_grpc as grpc_stubs

calls = collections.Counter()
plain_init = grpc_stubs.SparkConnectServiceStub.__init__

def counting_init(stub, channel):
    plain_init(stub, channel)
    for method, call in list(vars(stub).items()):
        def counted(*args, _call=call, _method=method, **kwargs):
            calls[_method] += 1
            return _call(*args, **kwargs)
        setattr(stub, method, counted)

grpc_stubs.SparkConnectServiceStub.__init__ = counting_init
from rewind.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "calls": calls}), file=sys.stderr)
"""


def counted_call(
    home: Path, remote: str | None, now: str, text: str
) -> tuple[list[Any], Counter[str]]:
    """``rewind sql --format json text`` on ``remote`` (None: the home's own server): its
    results and its Connect calls, counted by method."""
    script = home.parent / "counted_call.py"  # a file: pyspark treats `python -c` as doctests
    script.write_text(COUNTED_CALL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    command = [sys.executable, str(script), "--home", str(home), "--now", now]
    done = subprocess.run(
        [*command, "sql", "--format", "json", text],
        capture_output=True,
        text=True,
        env=env if remote is None else {**env, "REWIND_SPARK_REMOTE": remote},
        timeout=300,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return json.loads(done.stdout), Counter(report["calls"])
