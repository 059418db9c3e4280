"""A home only its owner reads (SPEC R12, R38): Rewind creates its directories 0700 and
its catalog file 0600, and tightens a home it finds looser, saying so. (The existence-leak
cases of SPEC R37 are in the hostile-input suite.)"""

from __future__ import annotations

import logging
import stat
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

CLOCK = "2026-03-0{}T{:02d}:00:00+00:00"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_is_owner_only_r38(connect: Callable[..., Any], home: Path) -> None:
    """Home, warehouse, system/, pins and the fail-safe root 0700; the catalog and its
    WAL files 0600 — after statements, a time-travel read (which pins) and a lifecycle
    run that moved files into fail-safe."""
    connect(now=CLOCK.format(1, 0)).sql(
        "CREATE DATABASE D; CREATE TABLE T (ID INT) DATA_RETENTION_TIME_IN_DAYS = 1;"
        "INSERT INTO T VALUES (1); DELETE FROM T"
    )
    connect(now=CLOCK.format(1, 1)).sql("SELECT * FROM D.PUBLIC.T AT(OFFSET => -1800)")
    connect(now=CLOCK.format(3, 0)).lifecycle()
    directories = [home, home / "warehouse", home / "system", home / "pins", home / "failsafe"]
    assert {str(p): mode(p) for p in directories} == {str(p): 0o700 for p in directories}
    assert any((home / "failsafe").rglob("*.parquet"))  # the run did move a file there
    catalog = sorted(home.glob("catalog.db*"))
    assert catalog and {p.name: mode(p) for p in catalog} == {p.name: 0o600 for p in catalog}


def test_a_home_found_readable_by_others_is_tightened_with_a_warning(
    connect: Callable[..., Any], home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A home made by an older Rewind, or by hand, with the umask's 0755 / 0644."""
    connect(now=CLOCK.format(1, 0)).sql("CREATE DATABASE D")
    for path in (home, home / "warehouse", home / "system"):
        path.chmod(0o755)
    (home / "catalog.db").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="rewind.home"):
        connect(now=CLOCK.format(1, 1)).sql("SHOW DATABASES")
    assert (mode(home), mode(home / "warehouse"), mode(home / "catalog.db")) == (
        0o700,
        0o700,
        0o600,
    )
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert f"{home} was readable by others (mode 755); tightened to 700" in warned
    assert "catalog.db was readable by others (mode 644); tightened to 600" in warned


def test_the_in_process_spark_listens_on_loopback_only_and_wants_its_secret_r38(
    spark: Any,
) -> None:
    """A local driver's RPC and block manager ports: loopback only, with Spark's own
    authentication (a secret per application), as the home's Spark Connect server's."""
    from sockets import LOOPBACK, listening

    conf = spark.sparkContext.getConf()
    assert conf.get("spark.authenticate") == "true"
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    addresses = listening(jvm)
    assert addresses and set(addresses) <= LOOPBACK, addresses


def test_a_changed_warehouse_is_refused_while_its_tables_are_in_the_catalog_r4_r44(
    connect: Callable[..., Any], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R4, R44: a table's location is computed from the warehouse root, so a session or
    a lifecycle step whose ``REWIND_WAREHOUSE_URI`` names another warehouse than the one the
    catalog's tables live in is refused (INVALID_LOCATION naming both), writing nothing
    there; set back, every table is there. The home's own warehouse is recorded relative to
    the home: a home copied elsewhere keeps its tables."""
    import shutil

    import rewind
    from rewind.config import Config
    from rewind.errors import InvalidLocation
    from rewind.lifecycle.context import Run

    connect(now=CLOCK.format(1, 0)).sql(
        "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT); INSERT INTO D.PUBLIC.T VALUES (1)"
    )
    elsewhere = tmp_path / "another-warehouse"
    monkeypatch.setenv("REWIND_WAREHOUSE_URI", str(elsewhere))
    with pytest.raises(InvalidLocation) as refused:
        connect(now=CLOCK.format(2, 0))
    assert str(elsewhere) in str(refused.value) and "<home>/warehouse" in str(refused.value)
    with pytest.raises(InvalidLocation):
        Run.open(Config.load(home=home), "night", datetime.fromisoformat(CLOCK.format(2, 0)))
    assert not elsewhere.exists()

    monkeypatch.delenv("REWIND_WAREHOUSE_URI")
    moved = Path(shutil.copytree(home, tmp_path / "moved"))
    for where in (home, moved):
        conn = rewind.connect(home=where, now=CLOCK.format(3, 0))
        try:
            assert conn.sql("SELECT ID FROM D.PUBLIC.T")[-1].rows == [[1]]
        finally:
            conn.close()


def test_a_changed_failsafe_store_is_refused_while_it_holds_files_r12_r44_r48(
    connect: Callable[..., Any], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R12, R44, R48: a fail-safe file's place is computed from the fail-safe store, so
    once the catalog's manifest has files there, a session or a lifecycle step whose
    ``REWIND_FAILSAFE_URI`` names another store is refused (INVALID_LOCATION naming both),
    before that store is made; set back, the files are listed again. With nothing
    in fail-safe yet the store may change (the catalog records the new one)."""
    from rewind.config import Config
    from rewind.errors import InvalidLocation
    from rewind.lifecycle.context import Run

    connect(now=CLOCK.format(1, 0)).sql(
        "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT) DATA_RETENTION_TIME_IN_DAYS = 1;"
        "INSERT INTO D.PUBLIC.T VALUES (1); DELETE FROM D.PUBLIC.T"
    )
    vault = tmp_path / "vault"
    monkeypatch.setenv("REWIND_FAILSAFE_URI", str(vault))
    connect(now=CLOCK.format(3, 0)).lifecycle()
    assert any(vault.rglob("*.parquet"))  # the run moved the deleted file there

    monkeypatch.delenv("REWIND_FAILSAFE_URI")  # back to the home's own <home>/failsafe
    with pytest.raises(InvalidLocation) as refused:
        connect(now=CLOCK.format(3, 1))
    message = str(refused.value)
    assert "<home>/failsafe" in message and str(vault) in message
    assert "REWIND_FAILSAFE_URI" in message
    with pytest.raises(InvalidLocation):
        Run.open(Config.load(home=home), "night", datetime.fromisoformat(CLOCK.format(3, 1)))
    assert not (home / "failsafe").exists()

    monkeypatch.setenv("REWIND_FAILSAFE_URI", str(vault))
    listed = connect(now=CLOCK.format(3, 2)).failsafe_list()
    assert listed.column("table_name") == ["D.PUBLIC.T"]
    assert listed.column("files") == [len(list(vault.rglob("*.parquet")))]


def test_a_failsafe_store_another_home_uses_is_refused_before_a_file_moves_r12_r44_r48(
    connect: Callable[..., Any], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC R12, R48: two homes, each with its own warehouse, pointed at one fail-safe store
    (``REWIND_FAILSAFE_URI``) would keep their tables' fail-safe files under the same ids,
    and one's purge would delete the other's. The first home's night marks the store as its
    catalog's; the second home's night is refused before it moves a file
    (INVALID_LOCATION naming the setting and the first home), the store unchanged, its
    removed file still in its table."""
    import rewind
    from rewind.errors import InvalidLocation

    vault = tmp_path / "vault"
    monkeypatch.setenv("REWIND_FAILSAFE_URI", str(vault))
    scenario = (
        "CREATE DATABASE D; CREATE TABLE D.PUBLIC.T (ID INT) DATA_RETENTION_TIME_IN_DAYS = 1;"
        "INSERT INTO D.PUBLIC.T VALUES (1); DELETE FROM D.PUBLIC.T"
    )
    connect(now=CLOCK.format(1, 0)).sql(scenario)
    connect(now=CLOCK.format(3, 0)).lifecycle()
    stored = sorted(str(p.relative_to(vault)) for p in vault.rglob("*"))
    assert "_rewind_catalog.json" in stored and any(p.endswith(".parquet") for p in stored)

    other = tmp_path / "other"
    rewind.connect(home=other, now=CLOCK.format(1, 0)).sql(scenario)
    before = sorted(p.name for p in (other / "warehouse").rglob("*.parquet"))
    with pytest.raises(InvalidLocation) as refused:
        rewind.connect(home=other, now=CLOCK.format(3, 0)).lifecycle()
    assert refused.value.message.startswith(
        f"REWIND_FAILSAFE_URI is set to {vault}, which another Rewind catalog uses "
        f"(its home: {home};"
    ), refused.value.message
    assert sorted(str(p.relative_to(vault)) for p in vault.rglob("*")) == stored
    assert sorted(p.name for p in (other / "warehouse").rglob("*.parquet")) == before
