"""A new table's directory under the warehouse is the creating statement's alone (SPEC R3,
R4, R28): one a killed CREATE of this home left is taken back by the next CREATE; one no
statement of this home wrote (another Rewind home pointed at the same warehouse, a
catalog restored from an older copy) is never written into or removed."""

from __future__ import annotations

import json
import signal
import sqlite3
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


def test_a_warehouse_another_home_uses_is_refused_before_anything_is_written_r4_r44(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    """Two Rewind homes pointed at one warehouse (REWIND_WAREHOUSE_URI) give their tables
    the same ids and mix their system tables: the second home's CREATE TABLE found the
    first home's directory, and its undo removed it (the first home's table lost its
    storage). The first home's catalog marks the warehouse as its own at its first
    connection; the second home is refused at its first (INVALID_LOCATION naming the
    setting and the first home), writes nothing there, and works with a warehouse of its
    own; a third home with its own warehouse but the first home's system root is refused
    too. A marker that is not Rewind's is refused the same way (STORAGE_ERROR)."""
    warehouse = tmp_path / "warehouse"

    def run(home: str, text: str, where: Path = warehouse, **env: str) -> Any:
        command = ("--home", str(tmp_path / home), "sql", "--format", "json", text)
        return cli(*command, now=at(hours=1), env={"REWIND_WAREHOUSE_URI": str(where), **env})

    def refused_for_a(done: Any, setting: str, root: Path) -> None:
        assert done.returncode == 1
        (line,) = done.stderr.splitlines()
        assert line.startswith(
            f"error: INVALID_LOCATION: {setting} is set to {root}, which another Rewind "
            f"catalog uses (its home: {tmp_path / 'a'};"
        ), line

    first = run("a", "CREATE DATABASE d; CREATE TABLE d.public.t (a INT)")
    assert first.returncode == 0, first.stderr
    marker = json.loads((warehouse / "_rewind_catalog.json").read_text())
    assert marker["home"] == str(tmp_path / "a")
    kept = files_under(warehouse)
    refused_for_a(run("b", "SHOW DATABASES"), "REWIND_WAREHOUSE_URI", warehouse)
    assert files_under(warehouse) == kept
    again = run("a", "SHOW TABLES IN d.public")
    assert again.returncode == 0, again.stderr
    assert [r["name"] for r in rows(again.json[0])] == ["T"]
    own = run("b", "CREATE DATABASE e; CREATE TABLE e.public.u (a INT)", tmp_path / "b-wh")
    assert own.returncode == 0, own.stderr
    # Its own warehouse, but the first home's system tables (whose retention plans its
    # nights would read as their previous night's; the first home's default place).
    system = warehouse / "system"
    shared = run("c", "SHOW DATABASES", tmp_path / "c-wh", REWIND_SYSTEM_URI=str(system))
    refused_for_a(shared, "REWIND_SYSTEM_URI", system)
    foreign = tmp_path / "foreign"
    foreign.mkdir(mode=0o700)
    (foreign / "_rewind_catalog.json").write_text("not ours")
    odd = run("c", "SHOW DATABASES", foreign)
    assert odd.returncode == 1
    (line,) = odd.stderr.splitlines()
    assert line.startswith("error: STORAGE_ERROR: ") and "not a Rewind catalog's marker" in line


def test_a_catalog_older_than_its_warehouse_loses_no_table_r4_r28(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    """A catalog put back from a copy older than its warehouse gives again the ids of the
    tables created since (its marker is its own: the copy has its token). A CREATE then
    finds the newer table's directory: it fails with STORAGE_ERROR naming the directory and
    the cause, and writes or removes nothing there; its undo used to remove it."""
    home = tmp_path / "home"

    def run(text: str) -> Any:
        return cli("--home", str(home), "sql", "--format", "json", text, now=at(hours=1))

    assert run("CREATE DATABASE d; CREATE TABLE d.public.t (a INT)").returncode == 0
    catalog = home / "catalog.db"
    copy = catalog.read_bytes()
    assert run("CREATE TABLE d.public.newer (a INT); INSERT INTO d.public.newer VALUES (1)")
    kept = files_under(home / "warehouse")
    for side in ("-wal", "-shm"):
        catalog.with_name(catalog.name + side).unlink(missing_ok=True)
    catalog.write_bytes(copy)
    refused = run("CREATE TABLE d.public.u (a INT)")
    assert refused.returncode == 1
    (line,) = refused.stderr.splitlines()
    assert line.startswith("error: STORAGE_ERROR: Storage for table id "), line
    assert "a catalog older than its warehouse" in line, line
    assert files_under(home / "warehouse") == kept


def test_a_killed_create_whose_id_no_create_gets_again_is_removed_by_the_night_r28_r31(
    sql: Callable[..., Any], cli: Callable[..., Any], home: Path
) -> None:
    """A CREATE TABLE killed between its table's version 0 and its catalog commit, whose id
    the SQLite catalog then gives to a schema (a Postgres catalog never gives it again): no
    CREATE takes its directory back, and it stayed as garbage, uncounted, its id named in
    every night's ``leftover_tables``. The night's purge step removes it (the killed
    statement's own version 0 only) and forgets the claim."""
    sql("CREATE DATABASE d")
    killed = cli(
        "sql", "CREATE TABLE d.public.t (a INT)", now=at(hours=1), env={FAULT_ENV: "created:1"}
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (left,) = [p for p in (home / "warehouse").iterdir() if (p / "_delta_log").is_dir()]
    sql("CREATE SCHEMA d.s2", hours=2)
    with sqlite3.connect(home / "catalog.db") as db:
        (schema,) = db.execute("SELECT id FROM objects WHERE name = 'S2'").fetchone()
    assert schema == int(left.name)  # the id no table will be given again
    done = cli("lifecycle", "run", "--format", "json", now=at(days=1))
    assert done.returncode == 0, done.stderr
    assert not left.exists()
    assert list((home / "running").iterdir()) == []
    steps = {s["step"]: s for s in json.loads(done.stdout)}
    assert steps["purge_failsafe"]["killed_creates_removed"] == 1
