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
from rewind.spark import DEFAULT_DELTA_JARS
from rewind.spark_server import IDLE_DEFAULT_S

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


def build(home: Path, lake: Path, console: Console) -> None:
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


def team_job(table: Path, console: Console) -> None:
    """The team's nightly job, its runs of ``TEAM_DATES`` replayed in one Spark session;
    each commit then gets the time of its night (a commit's time is its log file's
    modification time, Delta's rule for writers without in-commit timestamps)."""
    if table.exists():
        raise SystemExit(f"{table} exists: remove it, or give an empty --lake")
    console.rule(f"the team's own PySpark job writes {table} (delta-spark, no Rewind code)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_")}
    env["DELTA_JARS"] = str(os.environ.get("REWIND_DELTA_JARS") or DEFAULT_DELTA_JARS)
    first, last = TEAM_DATES
    job = [sys.executable, str(TEAM_JOB), str(table), "--from", first, "--to", last]
    subprocess.run(
        [*job, "--bad-delete-on", BAD_DELETE_ON], env=env, check=True, stderr=subprocess.DEVNULL
    )
    commits = list(_team_commits(table))
    for commit, day, step in commits:
        night = datetime.fromisoformat(day).replace(hour=2, tzinfo=UTC) + timedelta(days=1)
        when = (night + timedelta(minutes=step)).timestamp()
        os.utime(commit, (when, when))
    console.print(f"{len(commits)} commits, one run a night at 02:00 for {first} to {last}")


def _team_commits(table: Path) -> Iterator[tuple[Path, str, int]]:
    """Each commit file of the team's table, the date its run processed (the job's
    ``userMetadata``) and its rank within that run."""
    previous, step = "", 0
    for commit in sorted((table / "_delta_log").glob("*.json")):
        info = next(a["commitInfo"] for a in map(json.loads, commit.open()) if "commitInfo" in a)
        day = info["userMetadata"].removeprefix("orders_job date=")
        step = step + 1 if day == previous else 0
        previous = day
        yield commit, day, step


def walk_through(home: Path, table: Path, console: Console) -> None:
    """What an analyst types on the last day: the team's table registered and its
    deleted rows put back; then the past, DROP/UNDROP, clone, restore."""
    last_day = START + timedelta(days=DAYS - 1)
    with closing(rewind.connect(home=home, now=last_day + timedelta(hours=3))) as conn:
        _team_table(conn, table, console)
        _analyst(conn, console)


def _team_table(conn: Connection, table: Path, console: Console) -> None:
    console.rule("Rewind protects the team's table where it is (SPEC R41, R42)")
    conn.sql(REGISTER.format(uri=table.resolve().as_uri()))
    guards = DeltaTable(str(table)).metadata().configuration
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


def show_metrics(home: Path, console: Console) -> None:
    """The nightly run Airflow recorded (what the Rewind page lists, SPEC R35), then the
    storage metrics it wrote (SPEC R33), as of the demo's night."""
    engine = make_engine(Config.load(home=home).catalog_url)
    with Session(engine) as session:
        run = session.scalars(select(LifecycleRun).where(LifecycleRun.now == NIGHT)).first()
        steps = run.summary["steps"] if run is not None and run.summary else []
    engine.dispose()
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


def next_commands(home: Path) -> list[str]:
    """The CLI calls `next` prints: ``rewind`` by its path in the venv (works without
    activating it), the demo's home and clock spelled out; the last stops its server."""
    on_home = f"{_shown(Path(sys.executable).parent / 'rewind')} --home {_shown(home)}"
    at_morning = f"--now {MORNING:%Y-%m-%dT%H:%M:%SZ}"
    return [f'{on_home} {at_morning} sql "{sql}"' for sql in NEXT_SQL] + [f"{on_home} server stop"]


def next_steps(home: Path, airflow_home: Path, console: Console) -> None:
    """Where to look after ``make run``: the Airflow UI, the CLI on the demo's home, the
    logs. Printed without markup or wrapping, so every command pastes as it is."""
    say = partial(console.print, markup=False, highlight=False, soft_wrap=True)
    *queries, stop = next_commands(home)
    passwords = _shown(airflow_home / "simple_auth_manager_passwords.json.generated")
    console.rule("what next")
    say("Airflow UI: `make airflow`, then http://localhost:8080 (the Rewind page: /rewind/).")
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rewind.demo", description=__doc__)
    parser.add_argument("command", choices=["build", "night", "metrics", "next"])
    parser.add_argument("--home", help="the demo's Rewind home (default: REWIND_HOME)")
    parser.add_argument("--lake", default=".lake-demo", help="where the team's job writes")
    parser.add_argument(
        "--airflow-home", default=".airflow", help="the project-local AIRFLOW_HOME (for `next`)"
    )
    args = parser.parse_args(argv)
    home = Config.load(home=args.home).home
    if args.command == "night":
        print(NIGHT.date().isoformat())
    elif args.command == "build":
        build(home, Path(args.lake).resolve(), Console())
    elif args.command == "next":
        next_steps(home, Path(args.airflow_home), Console())
    else:
        show_metrics(home, Console())
    return 0


if __name__ == "__main__":
    sys.exit(main())
