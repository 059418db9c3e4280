"""``make run-s3`` (issue 27, item 8), on the session's S3 server and a bucket of the test's
own: the demo's build with Rewind's warehouse, the team's table and the fail-safe store on
S3 (SPEC R44), with the settings ``rewind.demo s3`` gives ``make run``
(``demo.s3_settings``), then ``rewind_nightly`` through ``airflow dags test`` whose only
AWS settings are the ``aws_default`` connection (R44), then ``demo metrics`` and
``demo next``. The same commands as ``make run``'s recipe, each in a process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from airflow_env import BIN, DAG_TEST_USER, REPO, subprocess_environment

from rewind import demo
from rewind.runner import STEPS
from rewind.storage import log
from rewind.storage.objectstore import S3Location

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("s3_demo")]

ROOTS = {"warehouse", "system", "failsafe"}  # the local home's, which stay empty (SPEC R44)


def run(command: list[str], env: dict[str, str]) -> str:
    """``command`` from the checkout; its output (stdout and stderr), which the failure
    shows."""
    done = subprocess.run(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert done.returncode == 0, done.stdout[-6000:]
    return done.stdout


def airflow_env(settings: dict[str, str], airflow_home: Path, home: Path) -> dict[str, str]:
    """The environment ``make run`` gives Airflow (tests/airflow_env.py) with the S3 demo's
    settings, less every ``AWS_*`` variable: the tasks reach S3 through the connection only."""
    env = subprocess_environment(
        airflow_home,
        **{k: v for k, v in settings.items() if not k.startswith("AWS_")},
        REWIND_HOME=str(home),
        REWIND_AIRFLOW_USERS=json.dumps({DAG_TEST_USER: "ADMIN", "*": "*"}),
    )
    return {k: v for k, v in env.items() if not k.startswith("AWS_")}


def objects(server: Any, bucket: str, prefix: str) -> dict[str, int]:
    """Every object under ``prefix`` and its size."""
    pages = server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return {o["Key"]: o["Size"] for page in pages for o in page.get("Contents", [])}


def test_the_s3_demo_builds_runs_its_night_through_airflow_and_shows_metrics_r44_r45_r48(
    s3_bucket: Any, tmp_path: Path
) -> None:
    server = s3_bucket.server
    settings = demo.s3_settings(server, s3_bucket.name)
    env = {**os.environ, **settings, demo.S3_DIR_ENV: str(tmp_path / "s3-demo")}
    home = tmp_path / "home"
    python = [sys.executable, "-m", "rewind.demo"]

    built = run([*python, "build", "--home", str(home), "--lake", settings["DEMO_LAKE"]], env)
    # the team's table on S3, each commit dated at its night by its in-commit timestamp
    lake = S3Location(s3_bucket.name, "lake/orders")
    times = [commit.raw_time() for commit in log.commits_after(lake, -1)]
    assert len(times) >= 17 and times[:17] == sorted(times[:17]), built
    assert times[0].isoformat() == "2026-11-09T02:00:00+00:00"  # the night after Nov 8
    assert {time.hour for time in times[:17]} == {2}
    assert "orders_restored" in built and "as expected, an out-of-window point fails" in built
    # Rewind's tables in the bucket's warehouse, none in the local home (SPEC R44)
    assert objects(server, s3_bucket.name, "warehouse/"), built
    assert [p for root in ROOTS for p in (home / root).rglob("*") if p.is_file()] == []

    airflow_home = tmp_path / "airflow"
    airflow = airflow_env(settings, airflow_home, home)
    night = run([*python, "night"], env).strip()
    run([str(BIN / "airflow"), "db", "migrate"], airflow)
    run([str(BIN / "airflow"), "pools", "set", "rewind_lifecycle", "1", "demo"], airflow)
    nightly = run([str(BIN / "airflow"), "dags", "test", "rewind_nightly", night], airflow)
    steps = {step["step"]: step for step in demo.night_steps(home)}
    assert set(steps) == set(STEPS), nightly[-3000:]
    assert [name for name, step in steps.items() if step.get("error")] == [], steps

    # the night moved what left time travel into the S3 fail-safe store (R48)
    failsafe = objects(server, s3_bucket.name, "failsafe/")
    assert failsafe, nightly[-3000:]
    metrics = run([*python, "metrics", "--home", str(home)], env)
    assert "expire_versions" in metrics and "FAILSAFE_BYTES" in metrics, metrics
    # the secret key is in no output, no file of the home and no Airflow log (R45)
    secret = env["AWS_SECRET_ACCESS_KEY"]
    assert secret not in built + nightly + metrics
    for folder in (home, airflow_home):
        for path in folder.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path

    # what next: each CLI call runs with the demo's S3 server up
    shown = run([*python, "next", "--home", str(home)], env)
    assert shown.count("-m rewind.demo s3 --dir") == 4, shown
