"""The nightly lifecycle and a restore on a Spark standalone cluster whose worker shares
nothing with the driver but S3 (SPEC R29, R31, R44, R48; issue 27).

The warehouse, the system tables and the fail-safe store are prefixes of a bucket of the
session's SeaweedFS (tests/conftest.py). The worker runs in a mount namespace of its own
(``Cluster.hide``): the machine's temporary directory, where the driver's Rewind home, its
catalog and the S3 server's own files are, is an empty tmpfs there but for the worker's
own directory (its work and temp dirs). It holds the S3 credentials in its environment, as a
cluster's machines do, and no ``REWIND_*`` setting. The catalog stays with the driver
(SQLite in the home): only the driver reads it, and the executors get their work as
DataFrames (file operations with S3 URIs, SPEC R48) and Delta reads and writes on S3.

The e2e warehouse (services.HISTORY) is written by a job on the cluster, the four lifecycle
jobs are ``spark-submit``ted to its master as Airflow submits them, a restore in place runs
on the driver's machine as the ``restore`` task runs it (no Spark: it writes the catalog
and a Delta commit on S3), and the outcome is read where it lives: the objects in the
bucket, the catalog's manifest, the restored table's rows through delta-rs.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from services import (
    APPS_TIMEOUT_S,
    JOBS,
    NOW,
    REPO,
    RESTORE_FORM,
    STEPS,
    Cluster,
    spark_submit,
)

from rewind.home import MARKER

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("spark_standalone")]

E2E = Path(__file__).resolve().parent
# The e2e history written on the cluster: the driver of this job runs Rewind's statements.
BUILD = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from services import build_warehouse
build_warehouse(Path(sys.argv[2]))
print(json.dumps({"built": sys.argv[2]}))
"""
# LONG (retention 30) lost its one row on day 2: restored in place as of day 1.
RESTORE = {**RESTORE_FORM, "requested_by": "ADMIN"}


@pytest.fixture(scope="module")
def s3_cluster(s3_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A master and a worker that sees nothing of the machine's temporary directory but its
    own root, holding the S3 server's credentials."""
    hide = Path(tempfile.gettempdir()).resolve()
    root = tmp_path_factory.mktemp("standalone-s3")
    assert root.resolve().is_relative_to(hide)  # else the driver's files would be in sight
    standalone = Cluster(root, hide=hide, worker_env=s3_server.env())
    try:
        standalone.start()
        yield standalone
    finally:
        standalone.stop()


def keys(bucket: Any, prefix: str) -> dict[str, int]:
    """The bucket's objects under ``prefix``: key below it -> size (the catalog's marker,
    rewind.home.own_root, left out)."""
    client = bucket.server.client()
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket.name, Prefix=prefix)
    return {
        item["Key"].removeprefix(prefix): item["Size"]
        for page in pages
        for item in page.get("Contents", [])
        if item["Key"] != f"{prefix}{MARKER}"
    }


def table_files(root: Path, installed: Path | None = None) -> list[Path]:
    """Data files and Delta logs under a local directory, outside ``installed`` (the
    checkout a worker sees as its installed software)."""
    return [
        p
        for p in root.rglob("*")
        if (p.suffix == ".parquet" or "_delta_log" in p.parts)
        and (installed is None or not p.is_relative_to(installed))
    ]


def test_lifecycle_and_restore_on_a_cluster_that_shares_only_s3_r29_r44_r48(
    s3_cluster: Cluster, s3_bucket: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jobs succeed on the isolated worker; the night moves files into the S3 fail-safe
    store (the manifest's files are there, gone from their tables), purges the expired ones
    and the dropped table; the restore brings LONG's row back; no table file is on a local
    disk, the driver's or the worker's."""
    home = tmp_path / "driver" / "home"
    home.parent.mkdir()
    settings = {
        "REWIND_WAREHOUSE_URI": f"{s3_bucket.uri}warehouse",
        "REWIND_SYSTEM_URI": f"{s3_bucket.uri}system",
        "REWIND_FAILSAFE_URI": f"{s3_bucket.uri}failsafe",
        "REWIND_SPARK_SERVER": "off",
    }
    s3_cluster.wait_for_worker()
    build = home.parent / "build.py"
    build.write_text(BUILD)
    spark_submit(s3_cluster.url, build, [str(E2E), str(home)], home.parent, **settings)

    # The worker's view of the machine, which its executors inherit (/proc/<pid>/root): its
    # own directory, but neither the driver's home nor the S3 server's files; no Rewind
    # setting in its environment.
    seen = Path(f"/proc/{s3_cluster.worker_pid}/root")
    assert (home / "catalog.db").is_file()
    assert (seen / s3_cluster.work_dir.relative_to("/")).is_dir()
    worker_env = Path(f"/proc/{s3_cluster.worker_pid}/environ").read_bytes().split(b"\0")
    assert not [v for v in worker_env if v.startswith(b"REWIND_")]

    night = [
        spark_submit(
            s3_cluster.url,
            JOBS / f"{step}.py",
            ["--home", str(home), "--now", NOW, "--run-id", "e2e-s3-night"],
            home.parent,
            **settings,
        )
        for step in STEPS
    ]
    assert [s["step"] for s in night] == STEPS
    expire, purge = night[1], night[2]
    assert expire["files_moved"] > 0 and expire["files_deleted"] > 0
    assert purge["files_purged"] > 0 and purge["tables_purged"] == 1
    assert night[3]["retained_for_clone_bytes"] > 0  # SPEC R47: the clone's files stay

    # SPEC R12, R48: every file of the fail-safe manifest is in the S3 store, at its size,
    # and no longer in its table; nothing else is there.
    with sqlite3.connect(home / "catalog.db") as db:
        held = db.execute(
            "SELECT table_id, path, size FROM file_states WHERE state = 'FAILSAFE'"
        ).fetchall()
        tables = dict(db.execute("SELECT name, id FROM objects WHERE kind = 'TABLE'").fetchall())
    assert held
    assert keys(s3_bucket, "failsafe/") == {f"{t}/{path}": size for t, path, size in held}
    assert night[3]["failsafe_bytes"] == sum(size for _, _, size in held)  # SPEC R33
    in_tables = keys(s3_bucket, "warehouse/")
    assert not [f"{t}/{path}" for t, path, _ in held if f"{t}/{path}" in in_tables]

    # SPEC R16: LONG, emptied on day 2, restored in place as of day 1 by the restore task's
    # function, with the driver's settings (the bucket's credentials, the store's URIs).
    from deltalake import DeltaTable

    from rewind.connection import RunKey
    from rewind.operations.form import restore_request
    from rewind.operations.restore import RESTORE as ACTION
    from rewind.operations.restore import run_restore
    from rewind.storage import objectstore

    def long_rows() -> dict[str, list[Any]]:
        uri = f"{s3_bucket.uri}warehouse/{tables['LONG']}"
        options = objectstore.delta_rs_options(objectstore.settings())
        return dict(DeltaTable(uri, storage_options=options).to_pyarrow_table().to_pydict())

    assert long_rows() == {"ID": []}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    key = RunKey("rewind_restore", "e2e-s3-restore", ACTION)
    restored = run_restore(str(home), restore_request(RESTORE), NOW, key)
    assert restored["statement"].startswith("RESTORE TABLE SHOP.PUBLIC.LONG")
    assert long_rows() == {"ID": [1]}

    # Every job that used Spark (the build's statements, the night's file moves and purges;
    # the others, and the restore, work on the driver) ran its tasks on the worker's
    # executors, and nothing of a table reached a local disk: not the driver's home, not
    # the worker's directory.
    state = s3_cluster.wait_until(lambda s: not s["activeapps"], APPS_TIMEOUT_S, "no running app")
    apps = state["completedapps"]
    assert len(apps) >= 3 and {app["state"] for app in apps} == {"FINISHED"}
    for app in apps:
        logs = [
            p.read_text(errors="replace")
            for p in (s3_cluster.work_dir / app["id"]).glob("*/stderr")
        ]
        assert any("Finished task" in log for log in logs), app["id"]
    for hidden in (home, s3_bucket.server.directory):
        assert not (seen / hidden.relative_to("/")).exists(), hidden
    assert table_files(home) == []
    view = seen / s3_cluster.hide.relative_to("/")
    assert table_files(view, seen / REPO.relative_to("/")) == []
