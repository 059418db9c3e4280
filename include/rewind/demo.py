"""``make run``: a demo warehouse with a few simulated days of history.

It creates a temporary home, writes three days of changes with the clock moving,
then shows time travel (AT/BEFORE by timestamp, offset and statement), DROP /
UNDROP, SHOW TABLES HISTORY, a clone of the past and a restore in place — the same
statements an analyst would type.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rich.console import Console

import rewind
from rewind.errors import RewindError
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
