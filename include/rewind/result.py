"""Statement results and their three renderings: json, csv and a table for people."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from rewind.clock import format_timestamp


@dataclass
class Result:
    """What one statement returned (the ``rewind sql --format json`` object)."""

    query_id: str
    statement: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "statement": self.statement,
            "columns": self.columns,
            "rows": [[json_value(v) for v in row] for row in self.rows],
        }

    def outcome(self) -> dict[str, Any]:
        """What a task reports of the statement: its text, query id and Rewind's message
        (the status line of a DDL, else the row count)."""
        status = self.columns == ["status"] and self.rows
        return {
            "statement": self.statement,
            "query_id": self.query_id,
            "message": str(json_value(self.rows[0][0])) if status else f"{len(self.rows)} rows",
        }

    def column(self, name: str) -> list[Any]:
        """The values of one column, by (case-insensitive) name."""
        index = [c.upper() for c in self.columns].index(name.upper())
        return [row[index] for row in self.rows]


def json_value(value: Any) -> Any:
    """A JSON-safe value: ISO 8601 timestamps with offset (a TIMESTAMP_NTZ's wall-clock
    time without one), NULL as None (SPEC contract)."""
    if isinstance(value, datetime):
        return format_timestamp(value) if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):  # an ARRAY's elements, nested values alike
        return [json_value(v) for v in value]
    if isinstance(value, dict):  # an OBJECT (struct) or a MAP
        return {str(k): json_value(v) for k, v in value.items()}
    return value


def to_json(results: Sequence[Result]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=None, ensure_ascii=False)


def to_csv(results: Sequence[Result]) -> str:
    """One CSV block per statement that returned columns, separated by a blank line."""
    blocks = []
    for result in results:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([[_text(v) for v in row] for row in result.rows])
        blocks.append(buffer.getvalue())
    return "\n".join(blocks)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):  # a TIMESTAMP_NTZ's wall-clock time: no zone
        shown = value.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".")
        return shown + " UTC" if value.tzinfo else shown
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list | dict):  # as Snowflake shows ARRAY, OBJECT and MAP: JSON
        return json.dumps(json_value(value), ensure_ascii=False, separators=(",", ":"))
    return str(json_value(value))


def render_table(results: Sequence[Result]) -> None:
    """Aligned tables for people (rich), readable timestamps, NULL shown as NULL."""
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=False, width=None if sys.stdout.isatty() else 200)
    for result in results:
        console.print(result.statement, style="bold", highlight=False, markup=False)
        table = Table(show_lines=False)
        for column in result.columns:
            table.add_column(column, overflow="fold")
        for row in result.rows:
            table.add_row(*["NULL" if v is None else _text(v) for v in row])
        console.print(table)
        console.print(f"[dim]query id {result.query_id}[/dim]")
