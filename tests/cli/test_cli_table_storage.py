"""A new table's directory under the warehouse is the creating statement's alone (SPEC R3,
R4, R28): one a killed CREATE of this home left is taken back by the next CREATE; one no
statement of this home wrote (another Rewind home pointed at the same warehouse, a
catalog restored from an older copy) is never written into or removed."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import at, rows

from rewind.faults import FAULT_ENV

pytestmark = pytest.mark.cli


@pytest.fixture
def cli_env() -> dict[str, str]:
    """No Spark: every statement here is DDL; the kill takes the command's own process."""
    return {"REWIND_SPARK_SERVER": "off"}


def first_commit(table: Path) -> dict[str, Any]:
    """The commitInfo of a table directory's version 0."""
    text = (table / "_delta_log" / f"{0:020d}.json").read_text()
    return next(a["commitInfo"] for a in map(json.loads, text.splitlines()) if "commitInfo" in a)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_create_killed_before_its_catalog_commit_is_taken_back_by_the_next_r3_r28(
    sql: Callable[..., Any], cli: Callable[..., Any], home: Path
) -> None:
    """A CREATE TABLE killed between its table's version 0 and its catalog commit (an OOM
    kill, a lost machine) leaves the directory of an id the SQLite catalog gives again. The
    next CREATE failed with STORAGE_ERROR ("already exists"), and its own undo then
    deleted the directory it had refused; now it takes the killed statement's directory
    back first and succeeds, its version 0 its own."""
    sql("CREATE DATABASE d")
    killed = cli(
        "sql", "CREATE TABLE d.public.t (a INT)", now=at(hours=1), env={FAULT_ENV: "created:1"}
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (left,) = [p for p in (home / "warehouse").iterdir() if (p / "_delta_log").is_dir()]
    out = sql("CREATE TABLE d.public.t (a INT, b STRING); SHOW TABLES IN d.public", hours=2)
    assert [r["name"] for r in rows(out[1])] == ["T"]
    assert first_commit(left)["rewind.queryId"] == out[0]["query_id"]
    assert [r["name"] for r in rows(sql("DESC TABLE d.public.t", hours=3)[0])] == [
        "A",
        "B",
    ]
    assert list((home / "running").iterdir()) == []  # the killed statement's mark is gone


def test_a_warehouse_two_homes_share_loses_neither_home_s_table_r4_r28_r44(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    """Two Rewind homes pointed at one warehouse (REWIND_WAREHOUSE_URI) give their tables
    the same ids. The second home's CREATE TABLE failed on the first home's directory and
    its undo removed it: the first home's table lost its storage. Now the CREATE fails
    with STORAGE_ERROR naming the directory and the cause, and writes or removes nothing."""
    warehouse = tmp_path / "warehouse"
    env = {"REWIND_WAREHOUSE_URI": str(warehouse)}

    def run(home: str, text: str) -> Any:
        command = ("--home", str(tmp_path / home), "sql", "--format", "json", text)
        return cli(*command, now=at(hours=1), env=env)

    first = run("a", "CREATE DATABASE d; CREATE TABLE d.public.t (a INT)")
    assert first.returncode == 0, first.stderr
    kept = files_under(warehouse)
    assert kept
    refused = run("b", "CREATE DATABASE e; CREATE TABLE e.public.u (a INT)")
    assert refused.returncode == 1
    assert files_under(warehouse) == kept
    (line,) = refused.stderr.splitlines()
    assert line.startswith("error: STORAGE_ERROR: Storage for table id "), line
    assert "a warehouse another home uses" in line, line
    again = run("a", "SHOW TABLES IN d.public")
    assert again.returncode == 0, again.stderr
    assert [r["name"] for r in rows(again.json[0])] == ["T"]
