"""The ``rewind`` command (the user contract of the core issue).

    rewind [--home DIR] [--user NAME] [--now TIMESTAMP] <command>
    rewind sql [--format table|json|csv] [--dialect snowflake|bigquery] (-f FILE | STATEMENTS)
    rewind restore TABLE (--at | --before) (TIMESTAMP | OFFSET | QUERY_ID)
    rewind lifecycle run [--format table|json]
    rewind failsafe list | recover TABLE_ID --into DB.SCHEMA.NAME [--version N]
    rewind server start | stop | status    the home's Spark Connect server
    rewind spark-options     spark-submit's options for Delta Lake (jars, extension, catalog)

Statements that need Spark run on the home's Spark Connect server, started on first use
and stopped after ``REWIND_SPARK_SERVER_IDLE`` seconds idle (``REWIND_SPARK_SERVER=off``:
in this process; ``REWIND_SPARK_REMOTE=sc://...``: on that server).

Errors are one line on stderr, ``error: <CODE>: <message>``, and exit code 1 (SPEC R39).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rewind.errors import NoCurrentContainer, RewindError
from rewind.result import Result, render_table, to_csv, to_json

if TYPE_CHECKING:
    from rewind.config import Config
    from rewind.connection import Connection


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewind", description="Time Travel and Fail-safe for Delta Lake."
    )
    parser.add_argument("--home", help="Rewind home (env REWIND_HOME; default ./.rewind)")
    parser.add_argument("--user", help="user name (env REWIND_USER; default ADMIN)")
    parser.add_argument("--now", help="the clock, ISO 8601 with offset (env REWIND_NOW)")
    commands = parser.add_subparsers(dest="command", required=True)
    sql = commands.add_parser("sql", help="run ';'-separated SQL statements")
    sql.add_argument("--format", choices=["table", "json", "csv"], default="table")
    sql.add_argument("--dialect", choices=["snowflake", "bigquery"], default="snowflake")
    sql.add_argument("-f", "--file", type=Path, help="read the statements from FILE")
    sql.add_argument("statements", nargs="*", help="SQL text")
    restore = commands.add_parser(
        "restore", help="restore a table in place as of a point (a new version of the same table)"
    )
    restore.add_argument("table", help="database.schema.table")
    when = restore.add_mutually_exclusive_group(required=True)
    when.add_argument("--at", help="ISO timestamp, offset in seconds (-3600) or query id")
    when.add_argument("--before", help="ISO timestamp, offset in seconds or query id")
    restore.add_argument("--format", choices=["table", "json", "csv"], default="table")
    lifecycle = commands.add_parser("lifecycle", help="the nightly lifecycle")
    lifecycle_commands = lifecycle.add_subparsers(dest="lifecycle_command", required=True)
    run = lifecycle_commands.add_parser("run", help="retention plan, expire, purge, metrics")
    run.add_argument("--format", choices=["table", "json"], default="table")
    run.add_argument("--run-id", help="the run's id (default: a new UUID)")
    failsafe = commands.add_parser("failsafe", help="fail-safe recovery (ACCOUNTADMIN)")
    failsafe_commands = failsafe.add_subparsers(dest="failsafe_command", required=True)
    listing = failsafe_commands.add_parser("list", help="tables with data in fail-safe")
    listing.add_argument("--format", choices=["table", "json", "csv"], default="table")
    recover = failsafe_commands.add_parser("recover", help="recover a table into a new one")
    recover.add_argument("table_id", type=int)
    recover.add_argument("--into", required=True, help="DB.SCHEMA.NAME of the new table")
    recover.add_argument("--version", type=int, help="default: as dropped / the latest")
    recover.add_argument("--format", choices=["table", "json", "csv"], default="table")
    server = commands.add_parser("server", help="the home's Spark Connect server")
    server.add_argument("server_command", choices=["start", "stop", "status"])
    commands.add_parser(
        "spark-options",
        help="spark-submit's options for Delta Lake: spark-submit $(rewind spark-options) job.py",
    )
    return parser


def _spark_options(_args: argparse.Namespace) -> int:
    import shlex

    from rewind.spark import submit_options

    print(shlex.join(submit_options()))
    return 0


def _config(args: argparse.Namespace) -> Config:
    """The command's settings; ``--user`` (or REWIND_USER) names the user as a login
    does, folded unless double-quoted: ``--user ana`` is the user ``CREATE USER ana`` made."""
    from rewind.config import Config
    from rewind.identifiers import rewind_name

    user = args.user or os.environ.get("REWIND_USER")
    return Config.load(home=args.home, user=rewind_name(user) if user else None, now=args.now)


def _server(args: argparse.Namespace) -> int:
    from rewind import spark_server
    from rewind.home import prepare_home

    config = _config(args)
    if args.server_command == "start":
        prepare_home(config)
        spinner = partial(_spinner, config.home)
        endpoint: spark_server.Endpoint | None = spark_server.start(
            config.home, config.spark_master, spinner
        )
    elif args.server_command == "stop":
        stopped = spark_server.stop(config.home)
        print(f"Spark Connect server of {config.home}: {'stopped' if stopped else 'not running'}.")
        return 0
    else:
        endpoint = spark_server.running(config.home)
    if endpoint is None:
        print(f"Spark Connect server of {config.home}: not running.")
    else:
        print(
            f"Spark Connect server of {config.home}: running on 127.0.0.1:{endpoint.port} "
            f"(pid {endpoint.jvm}), stops after {endpoint.idle_s} s idle."
        )
    return 0


_SPIN = "|/-\\"


@contextlib.contextmanager
def _spinner(home: Path) -> Iterator[None]:
    """What the CLI shows while the home's Spark Connect server starts: a spinner on a
    terminal; nothing in a pipe, whose stderr carries errors only (SPEC R39)."""
    if not sys.stderr.isatty():
        yield
        return
    done = threading.Event()

    def spin() -> None:
        for turn in itertools.count():
            text = f"{_SPIN[turn % 4]} Starting Spark for {home} (once: later calls reuse it)"
            print(f"\r{text}", end="", file=sys.stderr, flush=True)
            if done.wait(0.15):
                break
        print("\r\033[K", end="", file=sys.stderr, flush=True)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _connect(
    args: argparse.Namespace, starting: Callable[[Path], AbstractContextManager[None]] = _spinner
) -> Connection:
    """The CLI's session: its Spark work on the home's Spark Connect server, started on
    first use unless REWIND_SPARK_SERVER=off (``starting``: what shows that start)."""
    from rewind.spark import heavy_imports

    with heavy_imports():
        from rewind.connection import Connection

    config = _config(args)
    return Connection(config, start_server=partial(starting, config.home))


def _emit(results: Sequence[Result], fmt: str) -> None:
    if fmt == "json":
        print(to_json(results))
    elif fmt == "csv":
        if results:
            print(to_csv(results), end="")
    elif results:
        render_table(results)


def _sql(args: argparse.Namespace) -> int:
    from rewind.spark import heavy_imports

    with heavy_imports():
        from rewind.connection import as_rewind_error

    if args.file is not None:
        try:
            text = args.file.read_text()
        except OSError as exc:
            raise RewindError(
                f"Cannot read {args.file}: {exc.strerror}.", code="INVALID_VALUE"
            ) from None
    else:
        text = " ".join(args.statements)
    if not text.strip():
        raise RewindError("No statements given.", code="INVALID_VALUE")
    results: list[Result] = []
    connection = _connect(args)
    try:
        for result in connection.execute(text, args.dialect):
            results.append(result)
    except BaseException as exc:
        _emit(results, args.format)
        raise as_rewind_error(exc) from None
    finally:
        connection.close()
    _emit(results, args.format)
    return 0


def _restore(args: argparse.Namespace) -> int:
    with _connect(args) as connection:
        try:
            result = connection.restore(args.table, at=args.at, before=args.before)
        except NoCurrentContainer:
            # A CLI call has no session before it: no USE SCHEMA can have run.
            raise NoCurrentContainer(
                f"rewind restore names the table in full, DATABASE.SCHEMA.TABLE "
                f"(got '{args.table}')."
            ) from None
    _emit([result], args.format)
    return 0


def _failsafe(args: argparse.Namespace) -> int:
    with _connect(args) as connection:
        if args.failsafe_command == "list":
            result = connection.failsafe_list()
        else:
            result = connection.failsafe_recover(args.table_id, args.into, args.version)
    _emit([result], args.format)
    return 0


def _lifecycle(args: argparse.Namespace) -> int:
    """The run's progress on stderr as it goes (rich bars on a terminal, else plain lines:
    rewind.lifecycle.progress), then what each step did and took on stdout (SPEC R29).
    Through the resident process too: its call has the caller's own descriptors."""
    from rewind.lifecycle import progress

    with (
        progress.reporting(progress.shown_on(sys.stderr)),
        _connect(args, progress.waiting_for_spark) as connection,
    ):
        steps = connection.lifecycle(args.run_id)  # ACCOUNTADMIN only (SPEC R37)
    if args.format == "json":
        print(json.dumps(steps))
        return 0
    rows = [[step["step"], *[step.get(c, "") for c in LIFECYCLE_COLUMNS]] for step in steps]
    metrics = next(s for s in steps if s["step"] == "storage_metrics")
    totals = [[c, metrics[c]] for c in metrics if c.endswith("_bytes")]
    render_table(
        [
            Result(steps[0]["run_id"], "rewind lifecycle run", ["step", *LIFECYCLE_COLUMNS], rows),
            Result(steps[0]["run_id"], "storage (all tables)", ["figure", "bytes"], totals),
        ]
    )
    return 0


LIFECYCLE_COLUMNS = [
    "objects_seen",
    "commits_read",
    "files_moved",
    "bytes_moved",
    "files_deleted",
    "bytes_deleted",
    "files_purged",
    "bytes_purged",
    "log_entries_removed",  # issue 28: Rewind's own tables' Delta log
    "audit_rows_removed",  # SPEC R36: statements older than 365 days
    "elapsed_s",
]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        handlers = {
            "sql": _sql,
            "restore": _restore,
            "lifecycle": _lifecycle,
            "failsafe": _failsafe,
            "server": _server,
            "spark-options": _spark_options,
        }
        return handlers[args.command](args)
    except RewindError as exc:
        sys.stdout.flush()
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    except BaseException as exc:  # no traceback reaches a user (SPEC R39)
        from rewind.connection import as_rewind_error

        error = as_rewind_error(exc)
        print(f"error: {error.code}: {error.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
