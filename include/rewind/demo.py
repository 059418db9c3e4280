"""``make run``: a demo warehouse with three weeks of history, then one nightly run
through Airflow, then the storage metrics.

``python -m rewind.demo build`` writes the history into an empty home, the clock moving
one day at a time (daily orders, a transient staging table refreshed every other day,
a database dropped for good, a clone). Beside it, a team's own PySpark job
(``examples/orders_job.py``, plain delta-spark, no Rewind code) has written its Delta
table at ``--lake``/orders night after night, a bad DELETE included. The demo then
walks through the last day: Rewind registers the team's table where it is (SPEC R41),
the analyst finds the deleted rows with AT and puts them back; then time travel on
Rewind's own tables (AT/BEFORE by timestamp, offset and statement), DROP / UNDROP,
SHOW TABLES HISTORY, a clone of the past, a restore in place. A home that is not empty
is left as it is. ``make run`` then runs ``airflow dags test rewind_nightly`` for
``NIGHT`` (``python -m rewind.demo night`` prints it): the real DAG, its Spark jobs on
local Spark. One run decides everything three weeks of nights would have (SPEC R12, R31).
``python -m rewind.demo metrics`` prints the storage metrics a platform engineer watches,
``python -m rewind.demo next`` where to look next (the Airflow UI, the CLI on the demo's
home, the logs), each command as it runs from the checkout.

``make run-s3`` runs the same demo with Rewind's warehouse, the team's table and the
fail-safe store on S3 (SPEC R44): ``python -m rewind.demo s3 --dir D -- COMMAND`` starts a
SeaweedFS server on loopback (:mod:`rewind.seaweedfs`, data in ``D``), runs ``COMMAND``
(``make run``) with the settings of :func:`s3_settings` in its environment, and stops the
server when ``COMMAND`` ends, as it ends.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from deltalake import DeltaTable
from rich.console import Console
from sqlalchemy import select
from sqlalchemy.orm import Session

import rewind
from rewind.catalog.db import make_engine
from rewind.catalog.models import LifecycleRun
from rewind.clock import format_timestamp
from rewind.config import Config
from rewind.connection import Connection
from rewind.errors import RewindError
from rewind.result import render_table
from rewind.seaweedfs import SeaweedFS
from rewind.spark import DEFAULT_DELTA_JARS, submit_options
from rewind.spark_server import IDLE_DEFAULT_S
from rewind.storage import location, log
from rewind.storage.location import Root

START = datetime(2026, 11, 1, 9, tzinfo=UTC)
DAYS = 21
NIGHT = START.replace(hour=0) + timedelta(days=DAYS)  # the night after the last day
SETUP = (
    "CREATE DATABASE shop DATA_RETENTION_TIME_IN_DAYS = 7; "
    "CREATE TABLE orders (id INT, customer VARCHAR, amount NUMBER(10,2)); "
    "CREATE TABLE customers (id INT, name VARCHAR) DATA_RETENTION_TIME_IN_DAYS = 30; "
    "INSERT INTO customers VALUES (1, 'ada'), (2, 'bob'), (3, 'cy'); "
    "CREATE TRANSIENT TABLE staging (id INT, payload VARCHAR) DATA_RETENTION_TIME_IN_DAYS = 1; "
    "CREATE DATABASE legacy DATA_RETENTION_TIME_IN_DAYS = 1; "
    "CREATE TABLE legacy.public.old_orders (id INT); "
    "INSERT INTO legacy.public.old_orders VALUES (1)"
)
METRICS = (
    "SELECT TABLE_CATALOG, TABLE_NAME, ACTIVE_BYTES, TIME_TRAVEL_BYTES, FAILSAFE_BYTES, "
    "RETAINED_FOR_CLONE_BYTES, DELETED, TABLE_ENTERED_FAILSAFE "
    "FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS ORDER BY ID"
)


# The team's job (examples/orders_job.py) runs every night at 02:00 for the day before;
# its DELETE of the night of Nov 20 removed every EU order.
TEAM_JOB = Path(__file__).resolve().parents[2] / "examples" / "orders_job.py"
TEAM_DATES = ("2026-11-08", "2026-11-20")
BAD_DELETE_ON = "2026-11-19"
REGISTER = (
    "CREATE DATABASE lake DATA_RETENTION_TIME_IN_DAYS = 7; "
    "CREATE EXTERNAL TABLE lake.public.orders LOCATION = '{uri}' TABLE_FORMAT = DELTA "
    "COMMENT = 'written by the orders job'"
)
BY_REGION = (
    "SELECT region, count(*) AS orders FROM lake.public.orders{point} "
    "GROUP BY region ORDER BY region"
)
BEFORE_DELETE = " AT(TIMESTAMP => '2026-11-20 02:00:30')"  # the job's append, not yet its DELETE


def history() -> Iterator[tuple[datetime, str]]:
    """Three weeks of changes, one script per day at 09:00."""
    for day in range(DAYS):
        statements = [SETUP, "USE shop"] if day == 0 else ["USE shop"]
        statements.append(f"INSERT INTO orders VALUES ({day + 1}, 'ada', {10 + day}.50)")
        if day % 4 == 3:  # updates rewrite whole files (SPEC R13)
            statements.append(f"UPDATE orders SET amount = amount + 1 WHERE id = {day - 1}")
        if day % 2 == 0:
            statements.append(
                f"TRUNCATE TABLE staging; INSERT INTO staging VALUES ({day}, 'batch {day}')"
            )
        if day == 1:
            statements.append("DROP DATABASE legacy")  # in fail-safe after a day, then purged
        if day == 2:  # shares the files of orders 1-3; the update of day 3 replaces one
            statements.append("CREATE TABLE orders_backup CLONE orders")
        if day == 14:
            statements.append("DELETE FROM customers WHERE id = 3")
        yield START + timedelta(days=day), "; ".join(statements)


def build(home: Path, lake: Root, console: Console) -> None:
    """The history and the analyst's walk-through, unless ``home`` already holds a catalog."""
    if (home / "catalog.db").exists():
        console.print(f"[bold]demo warehouse already in {home}[/bold]: keeping it")
        return
    console.rule(f"Rewind demo — three weeks of history in {home}")
    for now, script in history():
        with closing(rewind.connect(home=home, now=now)) as conn:
            results = conn.sql(script)
        console.print(f"{now:%Y-%m-%d %H:%M}  {len(results)} statements")
    team_job(lake / "orders", console)
    walk_through(home, lake / "orders", console)


def team_job(table: Root, console: Console) -> None:
    """The team's nightly job, its runs of ``TEAM_DATES`` replayed in one Spark session
    with the project's Spark settings (``rewind spark-options``: Delta, and s3a with
    Rewind's LogStore when the AWS variables are set, SPEC R44, R46; no secret among them,
    R45); each commit then gets the time of its night (:func:`_date_commits`)."""
    if location.is_dir(table):
        raise SystemExit(f"{table} exists: remove it, or give an empty --lake")
    console.rule(f"the team's own PySpark job writes {table} (delta-spark, no Rewind code)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    env["DELTA_JARS"] = str(os.environ.get("REWIND_DELTA_JARS") or DEFAULT_DELTA_JARS)
    env["PYSPARK_SUBMIT_ARGS"] = shlex.join([*submit_options(), "pyspark-shell"])
    first, last = TEAM_DATES
    job = [sys.executable, str(TEAM_JOB), str(table), "--from", first, "--to", last]
    subprocess.run(
        [*job, "--bad-delete-on", BAD_DELETE_ON], env=env, check=True, stderr=subprocess.DEVNULL
    )
    commits = _date_commits(table)
    console.print(f"{commits} commits, one run a night at 02:00 for {first} to {last}")


def _date_commits(table: Root) -> int:
    """Date each commit of the team's table at the night its run processed: 02:00 the
    day after its date, a minute per commit of that run. The time goes into the commit's
    ``commitInfo`` as its in-commit timestamp, which Rewind takes for a commit's time before
    the file's own (``rewind.storage.log``); an object's ``LastModified``, unlike a local
    file's modification time, cannot be set. Returns the number of commits.

    This rewrites another engine's log entries, which no rule lets Rewind do (SPEC R40):
    the demo plays the team here, replaying three weeks of its nights in a minute, before
    Rewind governs the table. (The job does not write in-commit timestamps itself: Delta's
    ``delta.enableInCommitTimestamps`` would date them now, and adds a writer feature
    that delta-rs 1.6, Rewind's committer, refuses to write to.)
    """
    commits = list(log.commits_after(table, -1))
    previous, step = "", 0
    for commit in commits:
        day = str(commit.info["userMetadata"]).removeprefix("orders_job date=")
        step = step + 1 if day == previous else 0
        previous = day
        night = datetime.fromisoformat(day).replace(hour=2, tzinfo=UTC) + timedelta(days=1)
        when = int((night + timedelta(minutes=step)).timestamp() * 1000)
        path = log.commit_file(table, commit.version)
        data, _ = location.read(path)
        location.write(path, _stamped(data, when))
    return len(commits)


def _stamped(commit: bytes, in_commit_timestamp: int) -> bytes:
    """A commit file's bytes with ``inCommitTimestamp`` (ms) in its ``commitInfo``; every
    other action as it was."""
    lines = []
    for line in commit.decode().splitlines():
        action = json.loads(line)
        if "commitInfo" in action:
            action["commitInfo"]["inCommitTimestamp"] = in_commit_timestamp
            line = json.dumps(action, separators=(",", ":"))
        lines.append(line + "\n")
    return "".join(lines).encode()


def walk_through(home: Path, table: Root, console: Console) -> None:
    """What an analyst types on the last day: the team's table registered and its
    deleted rows put back; then the past, DROP/UNDROP, clone, restore."""
    last_day = START + timedelta(days=DAYS - 1)
    with closing(rewind.connect(home=home, now=last_day + timedelta(hours=3))) as conn:
        _team_table(conn, table, console)
        _analyst(conn, console)


def _team_table(conn: Connection, table: Root, console: Console) -> None:
    console.rule("Rewind protects the team's table where it is (SPEC R41, R42)")
    conn.sql(REGISTER.format(uri=table.as_uri() if isinstance(table, Path) else table.uri))
    options = location.storage_options(table)
    guards = DeltaTable(str(table), storage_options=options).metadata().configuration
    console.print(f"the team's table properties now (R42): {guards}", highlight=False)
    render_table(
        conn.sql(
            "SHOW TABLES IN lake.public; "
            + BY_REGION.format(point="")
            + "; "
            + BY_REGION.format(point=BEFORE_DELETE)
        )
    )
    conn.sql(
        "INSERT INTO lake.public.orders SELECT * FROM lake.public.orders"
        f"{BEFORE_DELETE} WHERE region = 'EU'"
    )
    render_table(conn.sql(BY_REGION.format(point="")))


def _analyst(conn: Connection, console: Console) -> None:
    delete = conn.sql("USE shop; DELETE FROM orders WHERE amount > 25")[-1].query_id
    render_table(
        conn.sql(
            "SELECT count(*) AS orders_now FROM orders; "
            f"SELECT count(*) AS orders_on_nov_17 FROM orders "
            f"AT(TIMESTAMP => '{format_timestamp(START + timedelta(days=16, hours=2))}'); "
            "SELECT count(*) AS orders_an_hour_ago FROM orders AT(OFFSET => -3600); "
            f"SELECT id, amount FROM orders BEFORE(STATEMENT => '{delete}') "
            "WHERE amount > 25 ORDER BY id; "
            "DROP TABLE customers; SHOW TABLES HISTORY; UNDROP TABLE customers; "
            "CREATE TABLE orders_before_delete CLONE orders "
            f"BEFORE(STATEMENT => '{delete}')"
        )
    )
    render_table([conn.restore("shop.public.orders", before=delete)])
    render_table(conn.sql("SELECT count(*) AS orders_restored FROM orders"))
    try:
        conn.sql("SELECT * FROM orders AT(TIMESTAMP => '2026-10-01T00:00:00Z')")
    except RewindError as exc:
        console.print(f"[yellow]as expected, an out-of-window point fails:[/yellow] {exc}")


def night_steps(home: Path) -> list[dict[str, Any]]:
    """The summaries of the steps of the nightly run for ``NIGHT`` the catalog recorded
    (what the Rewind page lists, SPEC R35); none before that run."""
    engine = make_engine(Config.load(home=home).catalog_url)
    with Session(engine) as session:
        run = session.scalars(select(LifecycleRun).where(LifecycleRun.now == NIGHT)).first()
        steps = run.summary["steps"] if run is not None and run.summary else []
    engine.dispose()
    return list(steps)


def show_metrics(home: Path, console: Console) -> None:
    """The nightly run Airflow recorded (:func:`night_steps`), then the storage metrics it
    wrote (SPEC R33), as of the demo's night."""
    steps = night_steps(home)
    console.rule(f"rewind_nightly for {NIGHT:%Y-%m-%d}, run through Airflow")
    for step in steps:
        figures = ", ".join(
            f"{k} {v}" for k, v in step.items() if isinstance(v, int) and not isinstance(v, bool)
        )
        console.print(f"[bold]{step['step']}[/bold]: {figures}", highlight=False)
    with closing(rewind.connect(home=home, now=NIGHT)) as conn:
        render_table(conn.sql(METRICS))


# The CLI calls `next` prints, on the demo's home as of the morning after the nightly run
# (a fixed clock: the real one moves past the demo's retention windows). Each is printed in
# double quotes: no $, backquote, backslash or double quote in them.
MORNING = NIGHT + timedelta(hours=9)
NEXT_SQL = (
    "SHOW TABLES HISTORY IN DATABASE shop",
    "SELECT count(*) AS orders_on_nov_17 FROM shop.public.orders "
    "AT(TIMESTAMP => '2026-11-17 12:00:00')",
)


def _shown(path: Path) -> str:
    """``path`` as typed in the current directory (relative when under it)."""
    path = path.absolute()
    with contextlib.suppress(ValueError):
        path = path.relative_to(Path.cwd())
    return shlex.quote(str(path))


def _with_s3() -> str:
    """Under ``make run-s3``, what runs a command with the demo's S3 server up
    (``python -m rewind.demo s3 --dir D -- ``); else nothing."""
    directory = os.environ.get(S3_DIR_ENV)
    if not directory:
        return ""
    return f"{_shown(Path(sys.executable))} -m rewind.demo s3 --dir {_shown(Path(directory))} -- "


def next_commands(home: Path) -> list[str]:
    """The CLI calls `next` prints: ``rewind`` by its path in the venv (works without
    activating it), the demo's home and clock spelled out; the last stops its server.
    After ``make run-s3`` each runs with the demo's S3 server up (:func:`with_s3`)."""
    on_home = f"{_with_s3()}{_shown(Path(sys.executable).parent / 'rewind')} --home {_shown(home)}"
    at_morning = f"--now {MORNING:%Y-%m-%dT%H:%M:%SZ}"
    return [f'{on_home} {at_morning} sql "{sql}"' for sql in NEXT_SQL] + [f"{on_home} server stop"]


def next_steps(home: Path, airflow_home: Path, console: Console) -> None:
    """Where to look after ``make run``: the Airflow UI, the CLI on the demo's home, the
    logs. Printed without markup or wrapping, so every command pastes as it is."""
    say = partial(console.print, markup=False, highlight=False, soft_wrap=True)
    *queries, stop = next_commands(home)
    passwords = _shown(airflow_home / "simple_auth_manager_passwords.json.generated")
    airflow = f"{_with_s3()}make airflow" + (f" DEMO_HOME={_shown(home)}" if _with_s3() else "")
    console.rule("what next")
    page = "http://localhost:8080/plugin/rewind"
    say(f"Airflow UI: `{airflow}`, then {page} (the Rewind page: Browse → Rewind).")
    say(f"  Log in as admin: `airflow standalone` prints the password and keeps it in {passwords}")
    say("The demo's home from the CLI, as of the morning after the nightly run:")
    for command in queries:
        say(f"  {command}")
    say(
        "  (`source .venv/bin/activate` puts `rewind` on the PATH.) The first call that needs "
        "Spark starts the home's Spark server (~10 s); later calls reuse it. It stops after "
        f"{IDLE_DEFAULT_S // 60} idle minutes, or at once with:"
    )
    say(f"  {stop}")
    say(
        f"Logs: the nightly run {_shown(airflow_home / 'rewind_nightly.log')}; "
        f"the home's Spark server {_shown(home / 'logs' / 'spark-server.log')}"
    )


# `make run-s3`: one bucket on the demo's own server, with Rewind's warehouse (its system
# tables under it), the team's lake and the fail-safe store as prefixes of their own.
S3_BUCKET = "rewind-demo"
S3_DIR_ENV = "DEMO_S3_DIR"  # set by `s3` for its command: `next` prints commands that use it


def s3_settings(server: SeaweedFS, bucket: str) -> dict[str, str]:
    """The S3 demo's environment on ``server``: the standard AWS variables, which Rewind's
    processes and the team's job read (SPEC R44); the same as the Airflow connection
    ``aws_default`` that the nightly's tasks read (``AIRFLOW_CONN_AWS_DEFAULT``, in the
    environment: never on a command line, R45); Rewind's warehouse and fail-safe store under
    ``s3://bucket/``; and ``DEMO_LAKE``, where the team's job writes (the Makefile's
    variable, which the environment sets)."""
    aws = server.env()
    connection = {
        "conn_type": "aws",
        "login": aws["AWS_ACCESS_KEY_ID"],
        "password": aws["AWS_SECRET_ACCESS_KEY"],
        "extra": {"endpoint_url": aws["AWS_ENDPOINT_URL"], "region_name": aws["AWS_REGION"]},
    }
    return {
        **aws,
        "AIRFLOW_CONN_AWS_DEFAULT": json.dumps(connection),
        "REWIND_WAREHOUSE_URI": f"s3://{bucket}/warehouse",
        "REWIND_FAILSAFE_URI": f"s3://{bucket}/failsafe",
        "DEMO_LAKE": f"s3://{bucket}/lake",
    }


def with_s3(directory: Path, command: Sequence[str]) -> int:
    """Run ``command`` with a SeaweedFS server up on ``directory`` (its data kept there from
    one run to the next) and :func:`s3_settings` in its environment; stop the server when
    the command ends, whatever its end. The server's one identity gets new random keys at
    every start, written to its configuration file (mode 0600) and given to ``command`` in
    its environment only (SPEC R45). Returns the command's exit status."""
    server = SeaweedFS.with_new_keys(directory / "seaweedfs", "REWIND")
    server.start()
    try:
        buckets = server.client().list_buckets().get("Buckets", [])
        if S3_BUCKET not in {bucket["Name"] for bucket in buckets}:
            server.create_bucket(S3_BUCKET)
        env = {**os.environ, **s3_settings(server, S3_BUCKET), S3_DIR_ENV: str(directory)}
        return subprocess.run(command, env=env, check=False).returncode
    finally:
        server.stop()


def _lake(text: str) -> Root:
    """``--lake``: an ``s3://`` prefix, or a local directory (resolved)."""
    lake = location.of(text)
    return lake.resolve() if isinstance(lake, Path) else lake


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rewind.demo",
        usage="%(prog)s {build,night,metrics,next} [options] | s3 [--dir DIR] -- COMMAND ...",
        description=__doc__,
    )
    parser.add_argument("command", choices=["build", "night", "metrics", "next", "s3"])
    parser.add_argument("--home", help="the demo's Rewind home (default: REWIND_HOME)")
    parser.add_argument(
        "--lake", default=".lake-demo", help="where the team's job writes (a path or s3://...)"
    )
    parser.add_argument(
        "--airflow-home", default=".airflow", help="the project-local AIRFLOW_HOME (for `next`)"
    )
    parser.add_argument("--dir", default=".s3-demo", help="s3: the S3 server's directory")
    given = list(sys.argv[1:] if argv is None else argv)
    split = given.index("--") if "--" in given else len(given)
    args, command = parser.parse_args(given[:split]), given[split + 1 :]
    if args.command == "s3":
        if not command:
            parser.error("s3: give the command to run after --")
        return with_s3(Path(args.dir).resolve(), command)
    home = Config.load(home=args.home).home
    if args.command == "night":
        print(NIGHT.date().isoformat())
    elif args.command == "build":
        build(home, _lake(args.lake), Console())
    elif args.command == "next":
        next_steps(home, Path(args.airflow_home), Console())
    else:
        show_metrics(home, Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
