"""The Rewind page as one self-contained HTML document: no script, no external asset.

The Airflow UI shows the page in a sandboxed iframe (no scripts run there) and the
network may be closed, so the stacked storage chart is inline SVG drawn here, and the
styles are inline. Every link is relative to the page (``?database=...``,
``api/summary``), so it works under whatever prefix the api-server mounts it at.

Stable hooks for tests and scrapers: ``svg#storage-chart`` holds one ``rect.segment``
per day and byte column with ``data-date``, ``data-metric`` and exact ``data-bytes``;
tables ``#totals``, ``#dropped``, ``#fail-safe`` and ``#runs`` carry exact bytes in
``data-bytes`` and instants in ``<time datetime>``; the text shows readable units.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from html import escape
from typing import Any
from urllib.parse import urlencode

from rewind.clock import format_timestamp
from rewind.constants import ACCOUNTADMIN
from rewind.dashboard_model import WINDOW_DAYS, Dashboard, Figures, Group, first_day
from rewind.lifecycle import rules
from rewind.lifecycle.metrics import BYTE_COLUMNS

LABELS = {
    rules.ACTIVE_BYTES: "Active",
    rules.TIME_TRAVEL_BYTES: "Time Travel",
    rules.FAILSAFE_BYTES: "Fail-safe",
    rules.RETAINED_FOR_CLONE_BYTES: "Retained for clone",
}
COLORS = {
    rules.ACTIVE_BYTES: "#3b82f6",
    rules.TIME_TRAVEL_BYTES: "#f59e0b",
    rules.FAILSAFE_BYTES: "#dc2626",
    rules.RETAINED_FOR_CLONE_BYTES: "#8b5cf6",
}
UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB"]
CHART_WIDTH, CHART_HEIGHT = 780, 240
LEFT, RIGHT, TOP, BOTTOM = 80, 10, 10, 30
STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1f2937}
h1{margin:0 0 .25rem}h2{margin-top:2rem;font-size:1.15rem}
table{border-collapse:collapse;margin-top:.5rem}
th,td{padding:.3rem .7rem;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}
td.bytes,th.bytes{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600;border-top:2px solid #9ca3af}
.muted{color:#6b7280}.legend span{margin-right:1rem}
.swatch{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle}
form input{width:9rem;margin-right:.5rem}ul.steps{margin:0;padding-left:1rem}
"""


def human_bytes(count: int) -> str:
    """Bytes in binary units for people: ``1536`` -> ``1.5 KiB`` (exact bytes below 1 KiB)."""
    if abs(count) < 1024:
        return f"{count} B"
    value = float(count)
    for unit in UNITS:
        value /= 1024
        if round(abs(value), 1) < 1024 or unit == UNITS[-1]:  # never "1024.0 KiB"
            break
    return f"{value:.1f} {unit}"


def _time(value: datetime | None) -> str:
    if value is None:
        return ""
    shown = value.strftime("%Y-%m-%d %H:%M UTC")
    return f'<time datetime="{escape(format_timestamp(value))}">{shown}</time>'


def _bytes_cell(count: int, metric: str = "TOTAL") -> str:
    return (
        f'<td class="bytes" data-metric="{metric}" data-bytes="{count}">{human_bytes(count)}</td>'
    )


def _link(fixed_now: str | None, names: Iterable[str | None]) -> str:
    """A relative link to this page for the scope ``names`` (database, schema, table)."""
    params = [(k, v) for k, v in zip(("database", "schema", "table"), names, strict=False) if v]
    if fixed_now:
        params.append(("now", fixed_now))
    return "?" + urlencode(params) if params else "./"


def render_page(board: Dashboard, fixed_now: str | None = None) -> str:
    """The whole page; ``fixed_now`` (the request's ``?now=``) is kept in its links."""
    sections = [_header(board, fixed_now)]
    if not board.catalog_found:
        sections.append(
            f'<p id="empty" class="muted">No Rewind catalog{_in_home(board)} yet: '
            "create a table with the rewind CLI and run the lifecycle.</p>"
        )
    sections += [
        _chart_section(board),
        _totals(board, fixed_now),
        _dropped(board),
    ]
    if board.role == ACCOUNTADMIN:  # SPEC R12, R38: fail-safe is the account's
        sections += [_failsafe(board), _runs(board)]
    else:
        sections.append(
            '<p id="admin-only" class="muted">Fail-safe contents and lifecycle runs are '
            "shown to ACCOUNTADMIN only.</p>"
        )
    body = "\n".join(sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Rewind storage</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
        "</body></html>\n"
    )


def _in_home(board: Dashboard) -> str:
    """ " in <home>" for the home's ACCOUNTADMIN; nothing for anyone else (the path is the
    server's, not theirs to know)."""
    return f" in {escape(board.home)}" if board.home else ""


def _header(board: Dashboard, fixed_now: str | None) -> str:
    scope = board.scope
    crumbs = [f'<a href="{escape(_link(fixed_now, []))}">Account</a>']
    given = [scope.database, scope.schema, scope.table]
    for depth, name in enumerate(given):
        if name:
            href = _link(fixed_now, given[: depth + 1])
            crumbs.append(f'<a href="{escape(href)}">{escape(name)}</a>')
    hidden = f'<input type="hidden" name="now" value="{escape(fixed_now)}">' if fixed_now else ""
    inputs = "".join(
        f'<input name="{key}" placeholder="{key}" value="{escape(value or "")}">'
        for key, value in zip(("database", "schema", "table"), given, strict=True)
    )
    json_href = "api/summary" + _link(fixed_now, given).removeprefix("./")
    return (
        f'<header><h1>Rewind</h1><p class="muted">Storage{_in_home(board)} as of '
        f"{_time(board.now)}; latest lifecycle metrics {_time(board.latest_as_of) or 'none'}."
        f' Viewed as <span id="viewer">{escape(board.viewer)}</span> '
        f'(role <span id="role">{escape(board.role)}</span>).'
        f' <a id="json" href="{escape(json_href)}">JSON</a></p>'
        f'<nav id="scope">{" / ".join(crumbs)}</nav>'
        f'<form id="filter" method="get" action="">{inputs}{hidden}'
        '<button type="submit">Show</button></form></header>'
    )


# -- the stacked chart (SPEC R33, R35) ---------------------------------------------------
def _chart_section(board: Dashboard) -> str:
    legend = "".join(
        f'<span><i class="swatch" style="background:{COLORS[c]}"></i>{LABELS[c]}</span>'
        for c in BYTE_COLUMNS
    )
    if not board.days:
        chart = '<p class="muted">No storage metrics in this window yet.</p>'
    else:
        chart = _chart(board)
    return (
        f'<section id="storage"><h2>Storage, last {WINDOW_DAYS} days</h2>'
        f'<div class="legend">{legend}</div>{chart}</section>'
    )


def _chart(board: Dashboard) -> str:
    start = first_day(board.now)
    slot = (CHART_WIDTH - LEFT - RIGHT) / WINDOW_DAYS
    plot = CHART_HEIGHT - TOP - BOTTOM
    peak = max(max(sum(d.bytes.values()) for d in board.days), 1)
    parts = _axes(start, peak, slot, plot)
    for day in board.days:
        x = LEFT + (datetime.fromisoformat(day.date).date() - start).days * slot + slot * 0.15
        base = float(TOP + plot)
        bars = []
        for column in BYTE_COLUMNS:
            height = plot * day.bytes[column] / peak
            base -= height
            bars.append(
                f'<rect class="segment" data-date="{day.date}" data-metric="{column}" '
                f'data-bytes="{day.bytes[column]}" x="{x:.2f}" y="{base:.2f}" '
                f'width="{slot * 0.7:.2f}" height="{height:.2f}" fill="{COLORS[column]}">'
                f"<title>{day.date} {LABELS[column]}: {human_bytes(day.bytes[column])}</title>"
                "</rect>"
            )
        total = sum(day.bytes.values())
        parts.append(
            f'<g class="day" data-date="{day.date}" data-bytes="{total}">{"".join(bars)}</g>'
        )
    return (
        f'<svg id="storage-chart" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{CHART_WIDTH}" height="{CHART_HEIGHT}" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}">'
        f"<title>Bytes per day and kind</title>{''.join(parts)}</svg>"
    )


def _axes(start: date, peak: int, slot: float, plot: float) -> list[str]:
    """Grid lines at 0, half and full scale; the window's first, middle and last dates."""
    parts = []
    for share in (0.0, 0.5, 1.0):
        y = TOP + plot * (1 - share)
        parts.append(
            f'<line x1="{LEFT}" x2="{CHART_WIDTH - RIGHT}" y1="{y:.2f}" y2="{y:.2f}" '
            f'stroke="#e5e7eb"/><text x="{LEFT - 6}" y="{y + 4:.2f}" text-anchor="end" '
            f'font-size="11">{human_bytes(round(peak * share))}</text>'
        )
    ticks = [(0, "start"), (WINDOW_DAYS // 2, "middle"), (WINDOW_DAYS - 1, "end")]
    for offset, anchor in ticks:
        x = LEFT + offset * slot + {"start": 0, "middle": slot / 2, "end": slot}[anchor]
        label = (start + timedelta(days=offset)).isoformat()
        parts.append(
            f'<text x="{x:.2f}" y="{CHART_HEIGHT - 8}" text-anchor="{anchor}" '
            f'font-size="11">{label}</text>'
        )
    return parts


# -- tables -------------------------------------------------------------------------------
def _figures_cells(figures: Figures) -> str:
    cells = [_bytes_cell(figures[c], c) for c in BYTE_COLUMNS]
    return "".join(cells) + _bytes_cell(sum(figures.values()))


def _group_name(group: Group) -> str:
    name = group.table or group.schema or group.database
    if group.table_id is not None:
        name += f" (id {group.table_id}{', dropped' if group.deleted else ''})"
    return name


def _totals(board: Dashboard, fixed_now: str | None) -> str:
    head = "".join(f'<th class="bytes">{LABELS[c]}</th>' for c in BYTE_COLUMNS)
    rows = []
    for group in board.groups:
        href = _link(fixed_now, [group.database, group.schema, group.table])
        rows.append(
            f'<tr class="group" data-kind="{group.kind}" data-name="{escape(group.database)}'
            f"{'.' + escape(group.schema) if group.schema else ''}"
            f'{"." + escape(group.table) if group.table else ""}">'
            f"<td>{group.kind}</td>"
            f'<td><a href="{escape(href)}">{escape(_group_name(group))}</a></td>'
            f"{_figures_cells(group.bytes)}</tr>"
        )
    return (
        '<section><h2>Storage by object at the latest run</h2><table id="totals">'
        f'<thead><tr><th>Kind</th><th>Name</th>{head}<th class="bytes">Total</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody>"
        f'<tfoot><tr class="total"><td></td><td>Total</td>{_figures_cells(board.totals)}</tr>'
        "</tfoot></table></section>"
    )


def _table(table_id: str, title: str, head: list[str], rows: list[str], empty: str) -> str:
    header = "".join(f"<th>{h}</th>" for h in head)
    body = "".join(rows) or f'<tr class="empty"><td colspan="{len(head)}">{empty}</td></tr>'
    return (
        f'<section><h2>{title}</h2><table id="{table_id}"><thead><tr>{header}</tr></thead>'
        f"<tbody>{body}</tbody></table></section>"
    )


def _dropped(board: Dashboard) -> str:
    rows = [
        f'<tr data-object-id="{d.object_id}"><td>{d.kind}</td><td>{escape(d.name)}</td>'
        f"<td>{_time(d.dropped_on)}</td><td>{d.retention_days}</td>"
        f'<td class="deadline">{_time(d.undrop_until)}</td>'
        f"<td>{escape(d.dropped_with or '')}</td></tr>"
        for d in board.dropped
    ]
    head = ["Kind", "Name", "Dropped on", "Retention (days)", "UNDROP until", "Dropped with"]
    return _table("dropped", "Dropped, still undroppable", head, rows, "Nothing to undrop.")


def _failsafe(board: Dashboard) -> str:
    rows = [
        f'<tr data-table-id="{b.table_id}"><td>{escape(b.table)}</td><td>{b.files}</td>'
        f"{_bytes_cell(b.bytes, rules.FAILSAFE_BYTES)}<td>{_time(b.left_time_travel_at)}</td>"
        f'<td class="purge">{_time(b.purge_at)}</td></tr>'
        for b in board.failsafe
    ]
    head = ["Table", "Files", "Bytes", "Left time travel", "Purged on"]
    return _table("fail-safe", "Fail-safe (7 days, then purged)", head, rows, "Fail-safe is empty.")


def _steps(steps: list[dict[str, Any]] | None) -> str:
    """Each step's figures; nested details (validation results) stay in the JSON."""
    if steps is None:
        return '<span class="muted">not finished</span>'
    items = []
    for step in steps:
        name = escape(str(step.get("step")))
        figures = " · ".join(
            f'<span data-key="{escape(k)}">{escape(k)} {escape(str(v))}</span>'
            for k, v in step.items()
            if k not in ("step", "run_id") and isinstance(v, int | float | str)
        )
        items.append(f'<li data-step="{name}"><b>{name}</b>: {figures}</li>')
    return f'<ul class="steps">{"".join(items)}</ul>'


def _runs(board: Dashboard) -> str:
    rows = [
        f'<tr data-run-id="{escape(r.run_id)}"><td>{_time(r.now)}</td>'
        f"<td>{escape(r.run_id)}</td><td>{_steps(r.steps)}</td></tr>"
        for r in board.runs
    ]
    head = ["Run (clock)", "Run id", "Steps"]
    return _table("runs", "Last lifecycle runs", head, rows, "No lifecycle run yet.")
