"""``make run``: a demo warehouse with a few simulated days of history.

It creates a temporary home, writes three days of changes with the clock moving,
then shows time travel (AT/BEFORE by timestamp, offset and statement), DROP /
UNDROP, SHOW TABLES HISTORY, a clone of the past and a restore in place — the same
statements an analyst would type — then runs the nightly lifecycle for each night of
the month and prints the storage metrics a platform engineer watches.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

import rewind
from rewind.config import Config
from rewind.errors import RewindError
from rewind.lifecycle.runner import run_lifecycle
from rewind.result import render_table

DAYS = [
    (
        "2026-11-01T09:00:00+00:00",
        "CREATE DATABASE shop DATA_RETENTION_TIME_IN_DAYS = 7; "
        "CREATE TABLE orders (id INT, customer VARCHAR, amount NUMBER(10,2)); "
        "INSERT INTO orders VALUES (1, 'ada', 10.00), (2, 'bob', 25.50), (3, 'cy', 7.25)",
    ),
    (
        "2026-11-02T09:00:00+00:00",
        "USE shop; UPDATE orders SET amount = 30.00 WHERE id = 2; "
        "INSERT INTO orders VALUES (4, 'dee', 99.99)",
    ),
    ("2026-11-03T09:00:00+00:00", "USE shop; DELETE FROM orders WHERE customer = 'ada'"),
]


def main(home: Path | None = None) -> int:
    console = Console()
    home = home or Path(tempfile.mkdtemp(prefix="rewind-demo-"))
    console.rule(f"Rewind demo — home {home}")
    try:
        last_write = ""
        for now, script in DAYS:
            console.print(f"[bold]clock {now}[/bold]")
            results = rewind.connect(home=home, now=now).sql(script)
            last_write = results[-1].query_id
            render_table(results)
        later = rewind.connect(home=home, now="2026-11-04T09:00:00+00:00")
        render_table(
            later.sql(
                "USE shop; SELECT * FROM orders ORDER BY id; "
                "SELECT * FROM orders AT(TIMESTAMP => '2026-11-01T12:00:00Z') ORDER BY id; "
                "SELECT * FROM orders AT(OFFSET => -60*60*36) ORDER BY id; "
                f"SELECT * FROM orders BEFORE(STATEMENT => '{last_write}') ORDER BY id; "
                "DROP TABLE orders; SHOW TABLES HISTORY; UNDROP TABLE orders; "
                "SELECT count(*) AS order_count FROM orders; "
                "CREATE TABLE orders_nov1 CLONE orders AT(TIMESTAMP => '2026-11-01T12:00:00Z'); "
                "SELECT * FROM orders_nov1 ORDER BY id"
            )
        )
        render_table([later.restore("shop.public.orders", before=last_write)])
        render_table(later.sql("SELECT * FROM orders ORDER BY id"))
        render_table(later.sql("SELECT * FROM orders AT(TIMESTAMP => '2026-10-01T00:00:00Z')"))
    except RewindError as exc:
        console.print(f"[yellow]as expected, an out-of-window point fails:[/yellow] {exc}")
    nightly(console, home)
    return 0


METRICS = (
    "SELECT TABLE_CATALOG, TABLE_NAME, ACTIVE_BYTES, TIME_TRAVEL_BYTES, FAILSAFE_BYTES, "
    "RETAINED_FOR_CLONE_BYTES, DELETED FROM REWIND.ACCOUNT_USAGE.TABLE_STORAGE_METRICS ORDER BY ID"
)


def nightly(console: Console, home: Path) -> None:
    """The nightly lifecycle, one run per simulated night, with the storage metrics the
    platform team watches: time travel turns into fail-safe, then is purged (SPEC R29)."""
    config = Config.load(home=home)
    for day in range(2, 21):
        now = datetime(2026, 11, day, 2, tzinfo=UTC)
        steps = run_lifecycle(config, now)
        moved = sum(s.get("files_moved", 0) + s.get("files_deleted", 0) for s in steps)
        purged = sum(s.get("files_purged", 0) for s in steps)
        console.print(
            f"nightly run {now:%Y-%m-%d}: {moved} files left time travel, {purged} purged"
        )
        if day in (5, 12, 20):
            render_table(rewind.connect(home=home, now=now.isoformat()).sql(METRICS))


if __name__ == "__main__":
    sys.exit(main())
